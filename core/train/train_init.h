// Initial weights for training the original encoder–decoder Transformer: what torch.nn.Transformer and fairseq do,
// because init_weights' normal(0, 0.02) leaves √d_model-scaled token embeddings far smaller than the sinusoidal
// positions added to them (std 0.02·√d vs ~0.7), so the first steps see mostly positions.
#pragma once

#include "core/model/model.h"

#include <cstdint>

namespace ts::train {

/// Every weight of expected_weights(c), seeded:
///   projection matrices (attention wq/wk/wv/wo, cross-attention, FFN, untied lm_head): Xavier/Glorot uniform
///     U(-a, a), a = sqrt(6 / (fan_in + fan_out)) per tensor (torch.nn.Transformer._reset_parameters applies
///     xavier_uniform_ to every matrix; it sees q/k/v as one fused (3·d, d) in_proj, we see three (d, d));
///   tok_emb.weight and pos_emb.weight: normal(0, d_model^-0.5) when scale_embeddings, so the scaled embedding has
///     unit variance per component (fairseq's transformer Embedding), else normal(0, 0.02);
///   norm weights 1, biases 0 (and q/k norms 1).
/// Throws std::invalid_argument on an invalid config (ModelConfig::validate).
[[nodiscard]] WeightMap init_transformer_weights(const ModelConfig& c, uint64_t seed);

}  // namespace ts::train
