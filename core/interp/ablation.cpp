// Head ablation as activation edits on <stack>.<layer>.attn.head_out, and the per-head sweep of a token's
// log-probability.
#include "core/interp/ablation.h"

#include <limits>
#include <stdexcept>

namespace ts::interp {

std::vector<ActivationEdit> head_ablation_edits(const ModelConfig& c, const std::vector<HeadRef>& heads,
                                                AblationKind kind) {
    const std::string stack = analysis_stack(c, "head_ablation_edits");
    std::vector<ActivationEdit> edits;
    edits.reserve(heads.size());
    for (const HeadRef& h : heads) {
        if (h.layer < 0 || h.layer >= c.n_layers || h.head < 0 || h.head >= c.n_heads)
            throw std::invalid_argument("head_ablation_edits: head L" + std::to_string(h.layer) + "H" +
                                        std::to_string(h.head) + " outside n_layers = " + std::to_string(c.n_layers) +
                                        ", n_heads = " + std::to_string(c.n_heads));
        const std::string point = stack + "." + std::to_string(h.layer) + ".attn.head_out";
        edits.push_back(kind == AblationKind::Zero ? ActivationEdit::zero(point, h.head)
                                                   : ActivationEdit::mean(point, h.head));
    }
    return edits;
}

ForwardResult run_with_ablated_heads(const Model& m, const std::vector<int>& ids, const std::vector<HeadRef>& heads,
                                     AblationKind kind, ForwardOptions opt) {
    for (ActivationEdit& e : head_ablation_edits(m.config(), heads, kind)) opt.edits.push_back(std::move(e));
    return forward(m, ids, opt);
}

AblationSweep head_ablation_sweep(const Model& m, const std::vector<int>& ids, const AblationSweepOptions& opt) {
    const ModelConfig& c = m.config();
    (void)analysis_stack(c, "head_ablation_sweep");
    const int T = static_cast<int>(ids.size());
    const int pos = opt.position < 0 ? T - 1 : opt.position;
    if (pos < 0 || pos >= T)
        throw std::invalid_argument("head_ablation_sweep: position " + std::to_string(opt.position) +
                                    " outside [0, T = " + std::to_string(T) + ")");
    check_token(c, opt.token, "head_ablation_sweep", "token");

    ForwardOptions run = opt.base;
    run.capture = CaptureFilter::none();
    run.all_logits = pos != T - 1;  // the last row alone when that is the one scored
    const auto score = [&](const ForwardResult& r) {
        return log_prob(r.logits.row(run.all_logits ? pos : 0), opt.token);
    };

    AblationSweep out;
    out.position = pos;
    out.delta_log_prob = MatrixRM::Constant(c.n_layers, c.n_heads, std::numeric_limits<float>::quiet_NaN());
    out.clean_log_prob = score(forward(m, ids, run));
    const int total = c.n_layers * c.n_heads;
    int done = 0;
    for (int l = 0; l < c.n_layers; ++l)
        for (int h = 0; h < c.n_heads; ++h) {
            if (cancelled(opt.cancel)) {
                out.cancelled = true;
                return out;
            }
            const ForwardResult r = run_with_ablated_heads(m, ids, {{l, h}}, opt.kind, run);
            out.delta_log_prob(l, h) = score(r) - out.clean_log_prob;
            if (opt.progress) opt.progress(++done, total);
        }
    return out;
}

}  // namespace ts::interp
