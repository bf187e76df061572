// Activation patching (causal tracing): run the corrupted input, paste one activation from the clean run, and see
// how much of the clean behaviour comes back. Metric: logit difference between two answer tokens at the last
// position, normalised so the clean run scores 1 and the corrupted run 0:
//     (m_patched − m_corrupt) / (m_clean − m_corrupt).
// Source: Wang et al. 2022, "Interpretability in the Wild" (IOI), §3 and App. patching; Meng et al. 2022 (ROME)
// causal tracing. TransformerLens: patching.get_act_patch_resid_pre (layer × position) and
// patching.get_act_patch_attn_head_out_all_pos (layer × head, patching hook_z at every position).
#pragma once

#include "core/interp/interp_common.h"

#include <memory>
#include <vector>

namespace ts::interp {

/// The cached clean run (one forward capturing each layer's input and every head_out) and both runs' metrics.
struct PatchingBaseline {
    std::vector<int> clean_ids, corrupt_ids;
    int answer = 0, wrong = 0;            ///< metric = logit[answer] − logit[wrong] at the last position
    ForwardOptions base;                  ///< options of every run (capture off, last-position logits only)
    std::string stack;                    ///< "dec" or "enc"
    std::shared_ptr<const Trace> clean;   ///< embed.out, <s>.<l>.resid_ffn, <s>.<l>.attn.head_out of the clean run
    std::shared_ptr<const Trace> corrupt; ///< the same points of the corrupted run (cells equal to it need no forward)
    float clean_metric = 0.0f;            ///< logit units
    float corrupt_metric = 0.0f;
};

/// Two forwards: the clean one with capture, the corrupted one for its metric. `base` supplies temperature, masks
/// and edits applied to every run (its capture and all_logits are overridden). Throws std::invalid_argument when
/// the id lists differ in length or are empty, a token is outside the vocabulary, the model is encoder-decoder, or
/// the clean and corrupted metrics are equal (the normalisation is undefined).
[[nodiscard]] PatchingBaseline prepare_patching(const Model& m, const std::vector<int>& clean_ids,
                                                const std::vector<int>& corrupt_ids, int answer, int wrong,
                                                const ForwardOptions& base = {});

struct PatchingResult {
    MatrixRM normalized;  ///< (m − m_corrupt) / (m_clean − m_corrupt) per cell; NaN where not run (cancelled)
    MatrixRM metric;      ///< the raw logit difference per cell
    bool cancelled = false;
};

/// Both sweeps skip cells whose clean values equal the corrupted run's (bitwise; their result is the corrupted
/// metric exactly: in a causal model every position before the first differing token) and run the rest on up to two
/// threads; `progress` is then called from either thread, one call at a time.
/// Residual stream: cell (l, p) patches the clean input of layer l ("resid_pre": embed.out for l = 0, else
/// <s>.<l-1>.resid_ffn) at position p into the corrupted run. (n_layers, T); n_layers · T forwards.
[[nodiscard]] PatchingResult patch_resid_pre(const Model& m, const PatchingBaseline& b, const Progress& progress = {},
                                             const std::atomic<bool>* cancel = nullptr);

/// Head outputs: cell (l, h) patches the clean <s>.<l>.attn.head_out of head h (before W_o) at every position.
/// (n_layers, n_heads); n_layers · n_heads forwards.
[[nodiscard]] PatchingResult patch_head_out(const Model& m, const PatchingBaseline& b, const Progress& progress = {},
                                            const std::atomic<bool>* cancel = nullptr);

}  // namespace ts::interp
