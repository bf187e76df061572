// Two models on the same tokens (see core/interp/model_diff.h).
#include "core/interp/model_diff.h"

#include "core/kernels/attention_rows.h"
#include "core/interp/interp_common.h"

#include <cmath>
#include <stdexcept>

namespace ts::interp {
namespace {

Eigen::RowVectorXd log_softmax(const Eigen::Ref<const RowVectorF>& row) {
    const Eigen::RowVectorXd x = row.cast<double>();
    const double m = x.maxCoeff();
    return x.array() - (m + std::log((x.array() - m).exp().sum()));
}

double rel_error(const Tensor& a, const Tensor& ref, int64_t row0, int64_t rows) {
    const int64_t cols = ref.cols();
    double num = 0.0, den = 0.0;
    for (int64_t i = row0 * cols; i < (row0 + rows) * cols; ++i) {
        const double d = double(a.data[size_t(i)]) - double(ref.data[size_t(i)]);
        num += d * d;
        den += double(ref.data[size_t(i)]) * double(ref.data[size_t(i)]);
    }
    return den > 0.0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace

ModelDiff diff_models(const Model& model, const Model& reference, const std::vector<int>& ids) {
    const ModelConfig &a = model.config(), &b = reference.config();
    const std::string stack = analysis_stack(a, "diff_models");
    (void)analysis_stack(b, "diff_models");
    const auto same = [&](const char* what, int x, int y) {
        if (x != y)
            throw std::invalid_argument("diff_models: " + std::string(what) + " differs (" + std::to_string(x) + " in '" +
                                        a.name + "', " + std::to_string(y) + " in '" + b.name + "')");
    };
    same("d_model", a.d_model, b.d_model);
    same("n_layers", a.n_layers, b.n_layers);
    same("n_heads", a.n_heads, b.n_heads);
    same("vocab_size", a.vocab_size, b.vocab_size);
    if (a.arch != b.arch) throw std::invalid_argument("diff_models: the architectures differ");

    // Decoder-only models record their embeddings unprefixed; an encoder-only model's stack is "enc".
    const std::string embed = (stack == "enc" ? "enc." : "") + std::string("embed.out");
    std::vector<std::string> names{embed, "logits"};
    for (int l = 0; l < a.n_layers; ++l) {
        names.push_back(stack + "." + std::to_string(l) + ".resid_ffn");
        names.push_back(stack + "." + std::to_string(l) + ".attn.probs");
    }
    ForwardOptions opt;
    opt.capture = CaptureFilter::prefixes(names);
    const ForwardResult rm = forward(model, ids, opt), rr = forward(reference, ids, opt);

    ModelDiff d;
    d.T = int(ids.size());
    d.model_trace = rm.trace;
    d.reference_trace = rr.trace;
    if (rm.logits.rows() == d.T && rr.logits.rows() == d.T) {
        for (int t = 0; t < d.T; ++t) {
            const Eigen::RowVectorXd lp = log_softmax(rm.logits.row(t)), lq = log_softmax(rr.logits.row(t));
            double kl = (lq.array().exp() * (lq - lp).array()).sum();
            d.kl.push_back(std::max(0.0, kl));  // rounding can leave -1e-17 for equal rows
            Eigen::Index im, ir;
            rm.logits.row(t).maxCoeff(&im);
            rr.logits.row(t).maxCoeff(&ir);
            d.top1_agree.push_back(im == ir ? 1 : 0);
            d.top1_agreements += im == ir;
            d.mean_kl += d.kl.back() / d.T;
        }
    }
    const auto resid = [&](const Trace& tr, int l) -> const Tensor& {
        return tr.at(l < 0 ? embed : stack + "." + std::to_string(l) + ".resid_ffn");
    };
    for (int l = -1; l < a.n_layers; ++l)
        d.resid_rel_error.push_back(rel_error(resid(*rm.trace, l), resid(*rr.trace, l), 0, d.T));
    for (int t = 0; t < d.T; ++t)
        d.last_resid_rel_error.push_back(rel_error(resid(*rm.trace, a.n_layers - 1), resid(*rr.trace, a.n_layers - 1), t, 1));
    d.attn_mean_abs_diff = MatrixRM::Zero(a.n_layers, a.n_heads);
    for (int l = 0; l < a.n_layers; ++l) {
        const std::string name = stack + "." + std::to_string(l) + ".attn.probs";
        for (int h = 0; h < a.n_heads; ++h) {
            int r1 = 0, c1 = 0, r2 = 0, c2 = 0;
            const std::vector<float> p = trace_head_rows(*rm.trace, name, h, &r1, &c1);
            const std::vector<float> q = trace_head_rows(*rr.trace, name, h, &r2, &c2);
            if (p.empty() || p.size() != q.size()) continue;
            // Mean over the cells a query may attend to: masked cells are 0 in both and would dilute the mean.
            double sum = 0.0;
            int64_t cells = 0;
            for (size_t i = 0; i < p.size(); ++i) {
                if (p[i] == 0.0f && q[i] == 0.0f) continue;
                sum += std::abs(double(p[i]) - double(q[i]));
                ++cells;
            }
            d.attn_mean_abs_diff(l, h) = cells ? float(sum / double(cells)) : 0.0f;
        }
    }
    return d;
}

}  // namespace ts::interp
