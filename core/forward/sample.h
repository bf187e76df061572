// Sampling the next token and generating text from a language model: temperature, top-k and nucleus (top-p)
// filtering, a draw from the resulting distribution with the project's own generator (core/util/random.h, the same
// tokens for a seed on every platform), and generation with the KV cache. One implementation for the window's
// Generate, the Predictions panel's distribution and `eval`'s samples.
#pragma once

#include "core/model/model.h"

#include <cstdint>
#include <span>
#include <vector>

namespace ts {

/// Next-token sampling knobs. Hugging Face generate's do_sample=True with temperature, top_k and top_p.
struct SamplingOptions {
    float temperature = 1.0f;  ///< > 0; logits are divided by it
    int top_k = 0;             ///< keep the k most probable tokens; 0 = all
    float top_p = 1.0f;        ///< keep the smallest set of most probable tokens whose mass reaches top_p, in (0, 1]
};

/// logits (vocab) -> probabilities after temperature, then top-k, then top-p filtering (renormalised after each, as
/// transformers' TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper; the token that crosses top_p is
/// kept). Filtered ids get exactly 0; non-finite logits count as -inf. Ties at the top-k boundary keep the lower
/// ids. All zeros when no logit is finite. Throws std::invalid_argument for temperature <= 0 (or NaN).
[[nodiscard]] std::vector<float> sampling_distribution(std::span<const float> logits, const SamplingOptions& opt);

/// An index drawn from `probs` (non-negative weights, not necessarily normalised) by inverting the cumulative sum at
/// a uniform number from splitmix64(state); advances state. Zero-weight entries are never drawn. Throws
/// std::invalid_argument when no weight is positive.
[[nodiscard]] int sample_index(std::span<const float> probs, uint64_t& state);

struct GenerateOptions {
    int max_new_tokens = 16;
    SamplingOptions sampling;
    uint64_t seed = 1;             ///< the first splitmix64 state
    ForwardOptions forward;        ///< masks, temperature of attention, interventions; logits options are set here
    std::vector<int> source_ids;   ///< encoder–decoder models: the encoder input (the prompt continues the target)
};

struct Generation {
    std::vector<int> ids;          ///< the new tokens, in order
    std::vector<float> probs;      ///< probability each had when drawn (after filtering)
    int full_forwards = 0;         ///< forwards over a whole context (the rest appended one token to the KV cache)
};

/// Samples up to max_new_tokens tokens after `prompt` (non-empty ids). Decoder-only models run the prompt once and
/// then one token per step on the KV cache; when the context reaches max_seq_len the oldest tokens are dropped and
/// the last max_seq_len are run afresh (positions restart, as a full forward of that window would). Forward
/// options the cache cannot reproduce (interventions, a mask other than the model's own causal one) and
/// encoder–decoder models run the whole context every step. The tokens equal those of a full forward per step.
/// Throws std::invalid_argument for a model without an LM head, an empty prompt, or bad sampling options.
[[nodiscard]] Generation generate(const Model& m, const std::vector<int>& prompt, const GenerateOptions& opt);

}  // namespace ts
