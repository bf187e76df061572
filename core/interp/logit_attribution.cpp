// Direct logit attribution: decompose the final residual stream of a pre-norm model into its components and push
// each through the final norm (linearised with the run's scale) and the unembedding.
#include "core/interp/logit_attribution.h"

#include <cmath>
#include <stdexcept>

namespace ts::interp {

namespace {

using VecD = Eigen::Matrix<double, 1, Eigen::Dynamic, Eigen::RowMajor>;

bool ends_with(const std::string& s, const char* suffix) {
    const std::string_view v(suffix);
    return s.size() >= v.size() && s.compare(s.size() - v.size(), v.size(), v) == 0;
}

}  // namespace

LogitAttribution direct_logit_attribution(const Model& m, const std::vector<int>& ids, int position, int token,
                                          int minus_token, const ForwardOptions& base) {
    const ModelConfig& c = m.config();
    const std::string stack = analysis_stack(c, "direct_logit_attribution");
    const int T = static_cast<int>(ids.size());
    LogitAttribution out;
    out.position = position < 0 ? T - 1 : position;
    if (out.position < 0 || out.position >= T)
        throw std::invalid_argument("direct_logit_attribution: position " + std::to_string(position) +
                                    " outside [0, T = " + std::to_string(T) + ")");
    check_token(c, token, "direct_logit_attribution", "token");
    if (minus_token >= 0) check_token(c, minus_token, "direct_logit_attribution", "minus_token");
    const Tensor* unembed = m.find_weight(c.tie_embeddings ? "tok_emb.weight" : "lm_head.weight");
    if (!unembed)
        throw std::invalid_argument("direct_logit_attribution: model '" + c.name + "' has no LM head");
    if (c.norm_placement != NormPlacement::Pre) {
        out.error = "direct logit attribution is defined for pre-norm residual streams; model '" + c.name +
                    "' is post-norm (every sub-layer's sum is renormalised, so the final residual is not a sum of "
                    "component outputs)";
        return out;
    }
    for (const ActivationEdit& e : base.edits)
        if (!ends_with(e.point, ".attn.head_out") && !ends_with(e.point, ".ffn.out") &&
            !ends_with(e.point, ".ffn.post_act")) {
            out.error = "direct logit attribution needs the residual stream to be the sum of its components; the edit '" +
                        describe(e) + "' replaces a residual-stream value";
            return out;
        }

    // --- one forward capturing the components ---
    const int L = c.n_layers, H = c.n_heads, D = c.d_head(), p = out.position;
    const std::string last_resid = stack + "." + std::to_string(L - 1) + ".resid_ffn";
    std::vector<std::string> points{"tok_emb.out", "pos.out", last_resid};
    for (int l = 0; l < L; ++l) {
        points.push_back(stack + "." + std::to_string(l) + ".attn.head_out");
        points.push_back(stack + "." + std::to_string(l) + ".ffn.out");
    }
    ForwardOptions opt = base;
    opt.capture = CaptureFilter::prefixes(points);
    opt.all_logits = true;
    const ForwardResult r = forward(m, ids, opt);
    out.logit = r.logits(p, token) - (minus_token >= 0 ? r.logits(p, minus_token) : 0.0f);

    std::vector<VecD> comps;
    const auto add = [&](std::string name, VecD v) {
        out.names.push_back(std::move(name));
        comps.push_back(std::move(v));
    };
    const auto row = [&](const std::string& name) { return VecD(r.trace->at(name).mat().row(p).cast<double>()); };
    add("tok_emb.out", row("tok_emb.out"));
    if (r.trace->find("pos.out")) add("pos.out", row("pos.out"));
    for (int l = 0; l < L; ++l) {
        const std::string lp = stack + "." + std::to_string(l);
        const Tensor& z = r.trace->at(lp + ".attn.head_out");  // (H, T, D)
        const ConstMapRM wo = m.weight(lp + ".attn.wo").mat();  // (d_model, H*D)
        for (int h = 0; h < H; ++h) {
            const Eigen::Map<const RowVectorF> zh(z.data.data() + (size_t(h) * T + p) * D, D);
            add(lp + ".attn.head" + std::to_string(h), VecD((zh * wo.middleCols(h * D, D).transpose()).cast<double>()));
        }
        if (const Tensor* bo = m.find_weight(lp + ".attn.bo")) add(lp + ".attn.bo", VecD(bo->mat().cast<double>()));
        if (c.d_ff > 0) add(lp + ".ffn.out", row(lp + ".ffn.out"));  // attention-only models have no FFN
    }

    // --- final norm, linearised with the run's statistics, then the unembedding direction ---
    VecD u = unembed->mat().row(token).cast<double>();
    if (minus_token >= 0) u -= unembed->mat().row(minus_token).cast<double>();
    double bias_value = 0.0;
    bool has_bias = false;
    if (c.final_norm) {
        const VecD x = row(last_resid);
        const int d = c.d_model;
        const Tensor& w = m.weight(stack + ".final_norm.weight");
        double scale = 0.0;
        if (c.norm == NormKind::LayerNorm) {
            const double mu = x.mean();
            scale = std::sqrt((x.array() - mu).square().sum() / d + double(c.norm_eps));
            for (VecD& v : comps) v.array() -= v.mean();
            if (const Tensor* b = m.find_weight(stack + ".final_norm.bias")) {
                has_bias = true;
                bias_value = b->mat().cast<double>().row(0).dot(u);
            }
        } else {
            scale = std::sqrt(x.squaredNorm() / d + double(c.norm_eps));
        }
        u = u.cwiseProduct(VecD(w.mat().cast<double>())) / scale;
    }
    double total = 0.0;
    for (const VecD& v : comps) {
        const double val = v.dot(u);
        out.values.push_back(static_cast<float>(val));
        total += val;
    }
    if (has_bias) {
        out.names.push_back(stack + ".final_norm.bias");
        out.values.push_back(static_cast<float>(bias_value));
        total += bias_value;
    }
    out.total = static_cast<float>(total);
    return out;
}

}  // namespace ts::interp
