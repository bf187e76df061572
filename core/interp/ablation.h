// Head ablation: run a forward with chosen attention heads knocked out (their output before W_o := 0, or := its mean
// over positions), and sweep every head to see which ones a prediction depends on. TransformerLens equivalent: a
// hook on blocks.{l}.attn.hook_z that zeroes (or mean-replaces) head h; Wang et al. 2022 (IOI) §3 use mean ablation.
#pragma once

#include "core/interp/interp_common.h"

#include <vector>

namespace ts::interp {

enum class AblationKind { Zero, Mean };

/// The activation edits that ablate `heads` of the analysed stack: "<s>.<layer>.attn.head_out" head h := 0 (Zero)
/// or := its mean over the call's positions (Mean). Throws std::invalid_argument for a head or layer out of range.
[[nodiscard]] std::vector<ActivationEdit> head_ablation_edits(const ModelConfig& c, const std::vector<HeadRef>& heads,
                                                              AblationKind kind);

/// forward(m, ids, opt) with `heads` ablated on top of opt.edits. Errors as forward() and head_ablation_edits().
[[nodiscard]] ForwardResult run_with_ablated_heads(const Model& m, const std::vector<int>& ids,
                                                   const std::vector<HeadRef>& heads, AblationKind kind,
                                                   ForwardOptions opt = {});

/// A scored prediction: log p(token) at query position `position` (-1 = the last one).
struct TokenTarget {
    int position = -1;
    int token = 0;
};

/// Targets predicting ids[t + 1] at positions t = begin .. end - 1 (next-token loss over a span). Throws
/// std::invalid_argument unless 0 <= begin <= end < ids.size().
[[nodiscard]] std::vector<TokenTarget> next_token_targets(const std::vector<int>& ids, int begin, int end);

/// Mean over targets of log softmax(logits[position])[token], nats (the negative of the mean next-token loss when
/// the targets come from next_token_targets). logits: (T, vocab). Throws std::invalid_argument for an empty target
/// list, a position outside [0, T) or a token outside the vocabulary.
[[nodiscard]] float mean_log_prob(const MatrixRM& logits, const std::vector<TokenTarget>& targets);

struct AblationSweepOptions {
    AblationKind kind = AblationKind::Zero;
    /// Scored predictions; the metric is their mean log-probability (one target: a token at a position; many: e.g.
    /// the loss on a span).
    std::vector<TokenTarget> targets;
    ForwardOptions base;    ///< temperature, masks and extra edits applied in every run (capture is ignored)
    Progress progress;      ///< optional, after each ablated run
    const std::atomic<bool>* cancel = nullptr;  ///< optional; checked before each run
};

struct AblationSweep {
    /// (n_layers, n_heads), nats: mean log p(target | head ablated) − mean log p(target | clean). Negative = the
    /// head helps the prediction. NaN for cells not run when cancelled.
    MatrixRM delta_log_prob;
    float clean_log_prob = 0.0f;  ///< mean over the targets, nats
    bool cancelled = false;
};

/// One clean forward plus one forward per head (n_layers · n_heads runs, each without capture; only the last row of
/// logits when the single target is the last position). Throws std::invalid_argument for an encoder-decoder model,
/// no targets, a position outside [0, T) or a token outside the vocabulary.
[[nodiscard]] AblationSweep head_ablation_sweep(const Model& m, const std::vector<int>& ids,
                                                const AblationSweepOptions& opt);

}  // namespace ts::interp
