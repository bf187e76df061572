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

struct AblationSweepOptions {
    AblationKind kind = AblationKind::Zero;
    int position = -1;      ///< query position whose prediction is scored; -1 = the last one
    int token = 0;          ///< target token whose log-probability is measured
    ForwardOptions base;    ///< temperature, masks and extra edits applied in every run (capture is ignored)
    Progress progress;      ///< optional, after each ablated run
    const std::atomic<bool>* cancel = nullptr;  ///< optional; checked before each run
};

struct AblationSweep {
    /// (n_layers, n_heads), nats: log p(token | ablated) − log p(token | clean) at `position`. Negative = the head
    /// helps the prediction. NaN for cells not run when cancelled.
    MatrixRM delta_log_prob;
    float clean_log_prob = 0.0f;  ///< nats
    int position = 0;             ///< resolved query position
    bool cancelled = false;
};

/// One clean forward plus one forward per head (n_layers · n_heads runs, each without capture). Throws
/// std::invalid_argument for an encoder-decoder model, a position outside [0, T) or a token outside the vocabulary.
[[nodiscard]] AblationSweep head_ablation_sweep(const Model& m, const std::vector<int>& ids,
                                                const AblationSweepOptions& opt);

}  // namespace ts::interp
