// AdamW with decoupled weight decay (Loshchilov & Hutter 2019; torch.optim.AdamW; weight_decay 0 is plain Adam),
// global-norm gradient clipping (torch.nn.utils.clip_grad_norm_), and the learning-rate schedules: warm-up + cosine,
// and the inverse square root of "Attention Is All You Need" eq. 3.
#pragma once

#include "core/model/model.h"

#include <cstdint>
#include <string_view>

namespace ts::train {

struct AdamWOptions {
    float beta1 = 0.9f;
    float beta2 = 0.95f;
    float eps = 1e-8f;
    float weight_decay = 0.1f;
    bool decay_embeddings = false;  ///< also decay tok_emb/pos_emb (and a tied LM head through tok_emb)
};

/// Whether weight decay applies to a parameter: projection matrices (attn.wq/wk/wv/wo, ffn.w_up/w_gate/w_down) and
/// an untied lm_head.weight; never norms or biases; embeddings only with decay_embeddings.
[[nodiscard]] bool is_decayed(std::string_view name, bool decay_embeddings);

/// Optimizer state: first and second moments with the parameters' names and shapes, and the step count t.
class AdamW {
public:
    AdamW(const WeightMap& params, AdamWOptions opt);
    /// One update at learning rate lr (t += 1 first):
    ///   p -= lr * wd * p (decayed params only); m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
    ///   p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
    /// `params` and `grads` must hold the names given at construction (std::invalid_argument otherwise).
    void step(WeightMap& params, const WeightMap& grads, float lr);

    [[nodiscard]] const AdamWOptions& options() const { return m_opt; }
    [[nodiscard]] int64_t t() const { return m_t; }
    void set_t(int64_t t) { m_t = t; }
    WeightMap& exp_avg() { return m_m; }
    WeightMap& exp_avg_sq() { return m_v; }
    [[nodiscard]] const WeightMap& exp_avg() const { return m_m; }
    [[nodiscard]] const WeightMap& exp_avg_sq() const { return m_v; }

private:
    AdamWOptions m_opt;
    int64_t m_t = 0;
    WeightMap m_m, m_v;
};

/// L2 norm of all gradients together (accumulated in double).
[[nodiscard]] double global_grad_norm(const WeightMap& grads);
/// Scales all gradients by min(1, max_norm / (norm + 1e-6)) as torch.nn.utils.clip_grad_norm_; max_norm <= 0
/// disables clipping. Returns the norm before clipping.
double clip_grad_norm(WeightMap& grads, double max_norm);

enum class LrScheduleKind {
    Cosine,       ///< linear warm-up, then cosine decay to min_lr (the decoder-only default)
    InverseSqrt,  ///< "Attention Is All You Need" eq. 3: linear warm-up, then decay with 1/sqrt(step)
};
[[nodiscard]] const char* to_string(LrScheduleKind k);          // "cosine" | "inverse_sqrt"
/// Throws std::invalid_argument naming the accepted values ("inverse-sqrt" and "noam" are accepted too).
[[nodiscard]] LrScheduleKind lr_schedule_from_string(std::string_view s);

/// Learning rate at 0-based optimizer step `step`.
///   Cosine: linear warm-up lr_max * (step + 1) / warmup for step < warmup, then cosine decay from lr_max to min_lr
///     over the remaining total - warmup steps (constant min_lr after).
///   InverseSqrt: with s = step + 1 (the paper counts from 1),
///     lr = factor * d_model^-0.5 * min(s^-0.5, s * warmup^-1.5)
///     ("Attention Is All You Need" eq. 3; factor 1 is the paper's): rises linearly for warmup steps to
///     factor * (d_model * warmup)^-0.5, then falls as 1/sqrt(s). lr_max, min_lr and total are unused.
/// at() throws std::invalid_argument for InverseSqrt with warmup < 1 or d_model < 1.
struct LrSchedule {
    float lr_max = 3e-4f;
    float min_lr = 3e-5f;
    int warmup = 0;
    int total = 1;
    LrScheduleKind kind = LrScheduleKind::Cosine;
    int d_model = 0;       ///< InverseSqrt only
    float factor = 1.0f;   ///< InverseSqrt only
    [[nodiscard]] float at(int64_t step) const;
};

}  // namespace ts::train
