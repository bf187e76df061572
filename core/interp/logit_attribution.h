// Direct logit attribution (DLA): the final residual stream of a pre-norm model is a sum of components — token
// embedding, positions, each head's output through its slice of W_o, each attention output bias, each FFN output —
// so a logit is a sum of per-component contributions once the final norm is linearised with the run's own scale.
// Source: Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits"; TransformerLens
// ActivationCache.decompose_resid / stack_head_results + apply_ln_to_stack + residual_stack_to_logit_diff.
#pragma once

#include "core/interp/interp_common.h"

#include <string>
#include <vector>

namespace ts::interp {

struct LogitAttribution {
    /// Component names in residual order: "tok_emb.out", "pos.out" (additive positions only), then per layer
    /// "<s>.<l>.attn.head<h>" for each head, "<s>.<l>.attn.bo" (output bias, when the model has one),
    /// "<s>.<l>.ffn.out" (including b_down), and last "<s>.final_norm.bias" (LayerNorm with a bias).
    std::vector<std::string> names;
    std::vector<float> values;  ///< logit units, one per name
    float total = 0.0f;         ///< Σ values (computed in double)
    float logit = 0.0f;         ///< the run's logit[token] (minus logit[minus_token]) at the position
    int position = 0;           ///< resolved position
    /// Non-empty when the attribution is not defined (post-norm models, residual edits); names/values then empty.
    std::string error;
};

/// Attribution of logit[token] (or logit[token] − logit[minus_token] when minus_token >= 0) at `position`
/// (-1 = last) to the components of the final residual stream. The final norm is applied per component with the
/// run's statistics: LayerNorm: (c − mean_d(c)) / σ_run ⊙ w (centering is linear; the bias is its own component);
/// RMSNorm: c / rms_run ⊙ w; no final norm: c. Each component is then projected on the unembedding row of token
/// (minus that of minus_token). Σ values = logit up to float rounding. `base` supplies temperature, masks and edits;
/// edits of head_out / ffn points keep the decomposition, edits of residual points or attn.out return an error.
/// Post-norm models return an error message (the residual stream is renormalised after every sub-layer). Throws
/// std::invalid_argument for encoder-decoder models, a position outside [0, T) or tokens outside the vocabulary.
[[nodiscard]] LogitAttribution direct_logit_attribution(const Model& m, const std::vector<int>& ids, int position,
                                                        int token, int minus_token = -1,
                                                        const ForwardOptions& base = {});

}  // namespace ts::interp
