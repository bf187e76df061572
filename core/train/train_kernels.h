// Building blocks of the training forward/backward on whole (N, d) blocks (N = batch * T rows): norms with their
// backward, activations over arrays, RoPE tables with forward and transposed rotation, counter-based dropout
// masks, and the softmax cross-entropy (+ label smoothing, z-loss) with its gradient.
#pragma once

#include "core/model/model_config.h"
#include "core/model/tensor.h"
#include "core/util/random.h"

#include <cstdint>
#include <span>

namespace ts::train {

// --- counter-based random numbers ------------------------------------------------------------------------------
/// Every random draw of a training step is a pure function of (seed, step, site, index) through core's mix64
/// (core/util/random.h, used as a counter-based generator): resuming needs no generator state.
using ts::mix64;
/// Key for one use of randomness: seed, step and a site number (layer/position in the network).
[[nodiscard]] inline uint64_t rng_key(uint64_t seed, uint64_t step, uint64_t site) {
    return mix64(mix64(seed ^ 0x5DEECE66Dull) ^ mix64(step * 0x2545F4914F6CDD1Dull + site));
}

/// Inverted dropout multipliers: mask[i] = 0 with probability p, else 1 / (1 - p). p in [0, 1).
void dropout_mask(float* mask, int64_t n, float p, uint64_t key);

// --- normalization ----------------------------------------------------------------------------------------------
/// Row-wise LayerNorm / RMSNorm forward over x (N, d) with gamma (d) and optional beta (d or nullptr).
/// Stores xhat (N, d) = normalized rows before the affine, rstd (N) = 1 / sqrt(var + eps) (LayerNorm) or
/// 1 / sqrt(mean(x^2) + eps) (RMSNorm); out may alias x. torch.nn.LayerNorm / HF LlamaRMSNorm.
void norm_forward(NormKind kind, const float* x, float* xhat, float* rstd, float* out, const float* gamma,
                  const float* beta, int64_t N, int d, float eps);
/// Backward of norm_forward: dout (N, d) -> dx (N, d) (may alias dout); accumulates dgamma (d) and dbeta (d, may
/// be nullptr). LayerNorm: dx = rstd (g - mean(g) - xhat mean(g xhat)), g = dout * gamma; RMSNorm drops mean(g).
void norm_backward(NormKind kind, const float* dout, const float* xhat, const float* rstd, const float* gamma,
                   float* dx, float* dgamma, float* dbeta, int64_t N, int d);

// --- activations ------------------------------------------------------------------------------------------------
/// y[i] = act(x[i]) for the FFN kind's non-linearity (the gate's for gated kinds), vectorized where Eigen allows
/// (ReLU, GELU-tanh, SiLU, sigmoid) and through ts::apply_activation otherwise.
void activation_forward(Activation a, const float* x, float* y, int64_t n);
/// dx[i] = dy[i] * act'(x[i]). dx may alias dy.
void activation_backward(Activation a, const float* x, const float* dy, float* dx, int64_t n);

// --- rotary positions -------------------------------------------------------------------------------------------
/// cos/sin tables for RoPE: (n_pos, d_head / 2) each, angle(p, i) = p * rope_theta^(-2i / d_head) radians
/// (RoFormer eq. 34; same angles as ts::apply_rope_rows).
struct RopeTables {
    MatrixRM cos, sin;
    int d_head = 0;
    RopeLayout layout = RopeLayout::HalfSplit;
};
[[nodiscard]] RopeTables make_rope_tables(int n_pos, int d_head, float rope_theta, RopeLayout layout);
/// Rotates each head of T rows in place: x rows t = 0..T-1 at position t, row stride `stride` floats, `n_heads`
/// consecutive heads of d_head per row. inverse = true applies the transposed rotation (the backward pass).
void rope_rotate(const RopeTables& tab, float* x, int T, int n_heads, int64_t stride, bool inverse);

// --- loss -------------------------------------------------------------------------------------------------------
struct LossParts {
    double ce = 0;      ///< mean (label-smoothed) cross-entropy, nats
    double z = 0;       ///< mean z-loss term (coef * lse^2)
    double nll = 0;     ///< mean plain negative log-likelihood (no smoothing), nats
    int64_t count = 0;  ///< rows with a target (not -1)
};
/// logits (N, V) -> in place dLoss/dlogits of the mean loss (when `grad`), loss = CE_smoothed + z_coef * lse^2
/// averaged over rows whose target is not -1 (F.cross_entropy(label_smoothing=eps, ignore_index=-1) + PaLM z-loss).
/// grad = false leaves logits untouched. Throws std::invalid_argument on a target outside [-1, V).
LossParts softmax_cross_entropy(MatrixRM& logits, std::span<const int> targets, float label_smoothing, float z_coef,
                                bool grad);

}  // namespace ts::train
