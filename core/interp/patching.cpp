// Activation patching over (layer, position) of the residual stream and over (layer, head) of the head outputs,
// each cell one forward of the corrupted input with one Set edit taken from the cached clean run.
#include "core/interp/patching.h"

#include <limits>
#include <stdexcept>

namespace ts::interp {

namespace {

float logit_diff(const ForwardResult& r, int answer, int wrong) {
    const Eigen::Index last = r.logits.rows() - 1;
    return r.logits(last, answer) - r.logits(last, wrong);
}

// Runs `cells` corrupted forwards, cell i patched by edit_of(i), into a (rows, cols) result.
template <class EditOf>
PatchingResult sweep(const Model& m, const PatchingBaseline& b, int rows, int cols, const EditOf& edit_of,
                     const Progress& progress, const std::atomic<bool>* cancel) {
    PatchingResult out;
    out.normalized = MatrixRM::Constant(rows, cols, std::numeric_limits<float>::quiet_NaN());
    out.metric = out.normalized;
    const float denom = b.clean_metric - b.corrupt_metric;
    ForwardOptions opt = b.base;
    opt.edits.push_back({});
    const int total = rows * cols;
    for (int i = 0; i < total; ++i) {
        if (cancelled(cancel)) {
            out.cancelled = true;
            return out;
        }
        opt.edits.back() = edit_of(i / cols, i % cols);
        const float mval = logit_diff(forward(m, b.corrupt_ids, opt), b.answer, b.wrong);
        out.metric(i / cols, i % cols) = mval;
        out.normalized(i / cols, i % cols) = (mval - b.corrupt_metric) / denom;
        if (progress) progress(i + 1, total);
    }
    return out;
}

}  // namespace

PatchingBaseline prepare_patching(const Model& m, const std::vector<int>& clean_ids,
                                  const std::vector<int>& corrupt_ids, int answer, int wrong,
                                  const ForwardOptions& base) {
    const ModelConfig& c = m.config();
    PatchingBaseline b;
    b.stack = analysis_stack(c, "prepare_patching");
    if (clean_ids.empty() || clean_ids.size() != corrupt_ids.size())
        throw std::invalid_argument("prepare_patching: clean and corrupted inputs must have the same, non-zero "
                                    "length; got " + std::to_string(clean_ids.size()) + " and " +
                                    std::to_string(corrupt_ids.size()) + " tokens");
    check_token(c, answer, "prepare_patching", "answer token");
    check_token(c, wrong, "prepare_patching", "wrong-answer token");
    b.clean_ids = clean_ids;
    b.corrupt_ids = corrupt_ids;
    b.answer = answer;
    b.wrong = wrong;
    b.base = base;
    b.base.capture = CaptureFilter::none();
    b.base.all_logits = false;

    std::vector<std::string> points{"embed.out"};
    for (int l = 0; l < c.n_layers; ++l) {
        points.push_back(b.stack + "." + std::to_string(l) + ".resid_ffn");
        points.push_back(b.stack + "." + std::to_string(l) + ".attn.head_out");
    }
    ForwardOptions clean_opt = b.base;
    clean_opt.capture = CaptureFilter::prefixes(points);
    const ForwardResult clean = forward(m, clean_ids, clean_opt);
    b.clean = clean.trace;
    b.clean_metric = logit_diff(clean, answer, wrong);
    b.corrupt_metric = logit_diff(forward(m, corrupt_ids, b.base), answer, wrong);
    if (b.clean_metric == b.corrupt_metric)
        throw std::invalid_argument("prepare_patching: clean and corrupted runs give the same logit difference (" +
                                    std::to_string(b.clean_metric) + "); the normalised metric is undefined");
    return b;
}

PatchingResult patch_resid_pre(const Model& m, const PatchingBaseline& b, const Progress& progress,
                               const std::atomic<bool>* cancel) {
    const int L = m.config().n_layers, T = static_cast<int>(b.corrupt_ids.size()), d = m.config().d_model;
    std::vector<std::string> points;
    for (int l = 0; l < L; ++l) points.push_back(resid_pre_point(b.stack, l));
    const auto edit_of = [&](int l, int p) {
        const Tensor& src = b.clean->at(points[l]);
        return ActivationEdit::set(points[l], {src.data.begin() + size_t(p) * d, src.data.begin() + size_t(p + 1) * d},
                                   -1, p);
    };
    return sweep(m, b, L, T, edit_of, progress, cancel);
}

PatchingResult patch_head_out(const Model& m, const PatchingBaseline& b, const Progress& progress,
                              const std::atomic<bool>* cancel) {
    const ModelConfig& c = m.config();
    const int T = static_cast<int>(b.corrupt_ids.size());
    const size_t block = size_t(T) * c.d_head();
    const auto edit_of = [&](int l, int h) {
        const std::string point = b.stack + "." + std::to_string(l) + ".attn.head_out";
        const Tensor& src = b.clean->at(point);  // (H, T, D)
        return ActivationEdit::set(point, {src.data.begin() + h * block, src.data.begin() + (h + 1) * block}, h);
    };
    return sweep(m, b, c.n_layers, c.n_heads, edit_of, progress, cancel);
}

}  // namespace ts::interp
