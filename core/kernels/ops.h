// Transformer ops as documented free functions: activations (+ derivatives), norms, positions, softmax family,
// losses, dropout. Shapes use T = sequence length, N = batch rows, d = feature size. Row-major throughout.
#pragma once

#include "core/model/model_config.h"
#include "core/model/tensor.h"

#include <cstdint>
#include <span>

namespace ts {

// --- scalar activations (x in any units; each has its derivative d/dx) -----------------------------------------
[[nodiscard]] float tanh_act(float x);            // torch.tanh
[[nodiscard]] float tanh_grad(float x);
[[nodiscard]] float sigmoid(float x);             // torch.sigmoid, 1/(1+e^-x), stable for large |x|
[[nodiscard]] float sigmoid_grad(float x);
[[nodiscard]] float relu(float x);                // F.relu
[[nodiscard]] float relu_grad(float x);           // 0 at x <= 0 (PyTorch's subgradient convention)
[[nodiscard]] float leaky_relu(float x, float alpha = 0.01f);   // F.leaky_relu(negative_slope=alpha)
[[nodiscard]] float leaky_relu_grad(float x, float alpha = 0.01f);
[[nodiscard]] float gelu(float x);                // F.gelu: x * Phi(x), Phi = standard normal CDF (erf form)
[[nodiscard]] float gelu_grad(float x);
[[nodiscard]] float gelu_tanh(float x);           // F.gelu(approximate='tanh'), Hendrycks & Gimpel eq. (tanh approx.)
[[nodiscard]] float gelu_tanh_grad(float x);
[[nodiscard]] float swish(float x, float beta = 1.0f);          // x * sigmoid(beta x); beta = 1 is F.silu
[[nodiscard]] float swish_grad(float x, float beta = 1.0f);

/// The non-linearity an FFN kind applies (the gate's activation for gated kinds: GLU->sigmoid, SwiGLU->SiLU,
/// GeGLU->GELU erf).
[[nodiscard]] float apply_activation(Activation a, float x);
[[nodiscard]] float activation_grad(Activation a, float x);
/// In place over a matrix.
void apply_activation_inplace(Activation a, MatrixRM& x);

// --- normalization -----------------------------------------------------------------------------------------------
/// x: (N, d) -> (N, d); y = (x - mean) / sqrt(var + eps) * gamma + beta, biased variance per row.
/// gamma/beta: (d) or empty (= 1 / 0). torch.nn.LayerNorm. Throws std::invalid_argument on size mismatch.
[[nodiscard]] MatrixRM layer_norm(const MatrixRM& x, std::span<const float> gamma, std::span<const float> beta,
                                  float eps);
/// x: (N, d) -> (N, d); y = x / sqrt(mean(x^2) + eps) * gamma (Zhang & Sennrich 2019; HF LlamaRMSNorm).
[[nodiscard]] MatrixRM rms_norm(const MatrixRM& x, std::span<const float> gamma, float eps);
/// Dispatch on kind (beta ignored for RMSNorm).
[[nodiscard]] MatrixRM apply_norm(NormKind kind, const MatrixRM& x, std::span<const float> gamma,
                                  std::span<const float> beta, float eps);

struct BatchNormState {
    RowVectorF running_mean, running_var;  ///< (d); running_var uses the unbiased batch variance (as torch)
    float momentum = 0.1f;
};
/// x: (N, d) -> (N, d), normalizing each column over the batch. training=true uses batch statistics (biased var)
/// and updates `state` (torch.nn.BatchNorm1d train mode); training=false uses the running statistics (eval mode).
[[nodiscard]] MatrixRM batch_norm(const MatrixRM& x, std::span<const float> gamma, std::span<const float> beta,
                                  float eps, BatchNormState& state, bool training);

// --- positions ---------------------------------------------------------------------------------------------------
/// (n_pos, d_model) table: PE[p, 2i] = sin(p / base^(2i/d_model)), PE[p, 2i+1] = cos(...) (Vaswani et al. §3.5);
/// HalfSplit: PE[p, i] = sin(...), PE[p, d_model/2 + i] = cos(...) (HF MarianSinusoidalPositionalEmbedding).
[[nodiscard]] MatrixRM sinusoidal_table(int n_pos, int d_model, float base = 10000.0f,
                                        SinusoidalLayout layout = SinusoidalLayout::Interleaved);
/// T5's bucket of a relative position r = key position - query position (tokens), HF
/// T5Attention._relative_position_bucket: bidirectional stacks give half the buckets to r > 0; within a direction
/// the first half of the buckets are exact distances 0..max_exact-1 (max_exact = buckets/2 of the direction) and the
/// rest grow logarithmically up to max_distance, beyond which all share the last one. Causal (bidirectional =
/// false): r > 0 maps to bucket 0. The logarithm is evaluated in float32 as torch does, so boundaries match.
[[nodiscard]] int relative_position_bucket(int relative_position, bool bidirectional, int num_buckets,
                                           int max_distance);
/// The bias T5 adds to attention scores: out (H, T, S) flattened as (H*T, S), out[h][t][s] =
/// table[bucket(s - (q_start + t))][h], table (num_buckets, H) row-major as HF's relative_attention_bias.weight.
void relative_position_bias(const float* table, int num_buckets, int H, int T, int S, int q_start,
                            bool bidirectional, int max_distance, MatrixRM& out);
/// Rotates x: (T, d_head) rows at positions start_pos.. in place; theta_i = rope_theta^(-2i/d_head) radians per
/// position. Interleaved pairs (2i, 2i+1) (RoFormer eq. 34) or half-split (i, i+d/2) (HF rotate_half).
/// Throws std::invalid_argument on odd d_head.
void apply_rope(MatrixRM& x, int start_pos, float rope_theta, RopeLayout layout);
/// Same on a raw block of T rows of d_head floats (one head), used inside attention without copies.
void apply_rope_rows(float* x, int T, int d_head, int start_pos, float rope_theta, RopeLayout layout);
/// Partial rotary (GPT-NeoX rotary_pct): rows of d_head floats, only features [0, rotary_dim) rotated, with
/// theta_i = rope_theta^(-2i/rotary_dim) and the layout's pairs taken within those rotary_dim features (HF
/// GPTNeoXAttention: rotate_half over query[..., :rotary_ndims]); the rest pass through. Throws
/// std::invalid_argument unless 0 < rotary_dim <= d_head and rotary_dim is even.
void apply_rope_rows(float* x, int T, int d_head, int start_pos, float rope_theta, RopeLayout layout, int rotary_dim);

// --- softmax family ----------------------------------------------------------------------------------------------
/// Row-wise stable softmax (subtract row max). -inf entries give 0; a row of all -inf gives all zeros (not NaN).
/// scores: (N, d) -> (N, d). torch.softmax(x / temperature, -1); temperature > 0 else std::invalid_argument.
[[nodiscard]] MatrixRM softmax_rows(const MatrixRM& scores, float temperature = 1.0f);
void softmax_rows_inplace(MatrixRM& x, float temperature = 1.0f);
/// The one softmax kernel: row[0, n) <- softmax(row / temperature) in place, with softmax_rows' rules (divide by
/// temperature rather than multiply by its inverse, to round like torch; a row of all -inf gives zeros). Used by
/// softmax_rows and by attention's fused row pass. temperature is not checked here.
void softmax_row_inplace(float* row, int n, float temperature);
/// Row-wise log-softmax (torch.log_softmax). A row of all -inf gives all -inf.
[[nodiscard]] MatrixRM log_softmax_rows(const MatrixRM& x);
/// log Z = logsumexp per row (N) (torch.logsumexp(x, -1)).
[[nodiscard]] Eigen::VectorXf logsumexp_rows(const MatrixRM& x);
/// Softmax without max subtraction (the naive formula) to demonstrate overflow; may return inf/NaN by design.
[[nodiscard]] MatrixRM naive_softmax_rows(const MatrixRM& x);
/// Shannon entropy of a probability row in nats.
[[nodiscard]] float entropy_nats(std::span<const float> probs);

// --- losses ------------------------------------------------------------------------------------------------------
/// Mean label-smoothed cross-entropy in nats: logits (N, V), targets (N) in [0, V) or -1 = ignore.
/// torch.nn.functional.cross_entropy(logits, targets, label_smoothing=eps, ignore_index=-1).
[[nodiscard]] float cross_entropy(const MatrixRM& logits, std::span<const int> targets, float label_smoothing = 0.0f);
/// Mean z-loss: coef * mean(logsumexp(logits)^2) over non-ignored rows (PaLM §5).
[[nodiscard]] float z_loss(const MatrixRM& logits, std::span<const int> targets, float coef);

// --- dropout -----------------------------------------------------------------------------------------------------
/// Inverted dropout in place: each element zeroed with probability p, survivors scaled by 1/(1-p). Deterministic
/// for a seed. p in [0, 1) else std::invalid_argument. Returns the keep mask (1 = kept) if `mask` not null.
void dropout_inplace(MatrixRM& x, float p, uint64_t seed, std::vector<uint8_t>* mask = nullptr);

}  // namespace ts
