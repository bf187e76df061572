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

std::vector<TokenTarget> next_token_targets(const std::vector<int>& ids, int begin, int end) {
    if (begin < 0 || begin > end || end >= static_cast<int>(ids.size()))
        throw std::invalid_argument("next_token_targets: span [" + std::to_string(begin) + ", " + std::to_string(end) +
                                    ") needs 0 <= begin <= end < T = " + std::to_string(ids.size()));
    std::vector<TokenTarget> t;
    for (int p = begin; p < end; ++p) t.push_back({p, ids[size_t(p) + 1]});
    return t;
}

float mean_log_prob(const MatrixRM& logits, const std::vector<TokenTarget>& targets) {
    if (targets.empty()) throw std::invalid_argument("mean_log_prob: no targets");
    double sum = 0.0;
    for (const TokenTarget& t : targets) {
        const int p = t.position < 0 ? static_cast<int>(logits.rows()) - 1 : t.position;
        if (p < 0 || p >= logits.rows())
            throw std::invalid_argument("mean_log_prob: position " + std::to_string(t.position) + " outside [0, " +
                                        std::to_string(logits.rows()) + ")");
        sum += log_prob(logits.row(p), t.token);
    }
    return static_cast<float>(sum / double(targets.size()));
}

AblationSweep head_ablation_sweep(const Model& m, const std::vector<int>& ids, const AblationSweepOptions& opt) {
    const ModelConfig& c = m.config();
    (void)analysis_stack(c, "head_ablation_sweep");
    const int T = static_cast<int>(ids.size());
    if (opt.targets.empty()) throw std::invalid_argument("head_ablation_sweep: no targets to score");
    std::vector<TokenTarget> targets = opt.targets;
    for (TokenTarget& t : targets) {
        if (t.position < 0) t.position = T - 1;
        if (t.position >= T)
            throw std::invalid_argument("head_ablation_sweep: position " + std::to_string(t.position) +
                                        " outside [0, T = " + std::to_string(T) + ")");
        check_token(c, t.token, "head_ablation_sweep", "token");
    }

    ForwardOptions run = opt.base;
    run.capture = CaptureFilter::none();
    // The last row alone when that is all that is scored; mean_log_prob then reads row 0 as "the last".
    run.all_logits = !(targets.size() == 1 && targets[0].position == T - 1);
    if (!run.all_logits) targets[0].position = -1;
    const auto score = [&](const ForwardResult& r) { return mean_log_prob(r.logits, targets); };

    AblationSweep out;
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
