// AdamW update, gradient clipping and the learning-rate schedule.
#include "core/train/adamw.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ts::train {

namespace {
bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
}  // namespace

bool is_decayed(std::string_view name, bool decay_embeddings) {
    if (name == "tok_emb.weight" || name == "pos_emb.weight") return decay_embeddings;
    if (name == "lm_head.weight") return true;
    for (const char* s : {".attn.wq", ".attn.wk", ".attn.wv", ".attn.wo", ".ffn.w_up", ".ffn.w_gate", ".ffn.w_down"})
        if (ends_with(name, s)) return true;
    return false;
}

AdamW::AdamW(const WeightMap& params, AdamWOptions opt) : m_opt(opt) {
    for (const auto& [name, t] : params) {
        m_m.emplace(name, Tensor(t.shape));
        m_v.emplace(name, Tensor(t.shape));
    }
}

void AdamW::step(WeightMap& params, const WeightMap& grads, float lr) {
    if (params.size() != m_m.size() || grads.size() != m_m.size())
        throw std::invalid_argument("AdamW::step: optimizer holds " + std::to_string(m_m.size()) +
                                    " tensors, got " + std::to_string(params.size()) + " params and " +
                                    std::to_string(grads.size()) + " grads");
    ++m_t;
    const double bc1 = 1.0 - std::pow(double(m_opt.beta1), double(m_t));
    const double bc2 = 1.0 - std::pow(double(m_opt.beta2), double(m_t));
    const float step_size = float(lr / bc1);
    const float inv_bc2_sqrt = float(1.0 / std::sqrt(bc2));
    const float b1 = m_opt.beta1, b2 = m_opt.beta2, eps = m_opt.eps;
    auto pit = params.begin();
    auto git = grads.begin();
    auto mit = m_m.begin();
    auto vit = m_v.begin();
    for (; mit != m_m.end(); ++pit, ++git, ++mit, ++vit) {
        if (pit->first != mit->first || git->first != mit->first || pit->second.numel() != mit->second.numel() ||
            git->second.numel() != mit->second.numel())
            throw std::invalid_argument("AdamW::step: tensor '" + pit->first + "' / '" + git->first +
                                        "' does not match optimizer state '" + mit->first + "'");
        float* p = pit->second.data.data();
        const float* g = git->second.data.data();
        float* m = mit->second.data.data();
        float* v = vit->second.data.data();
        const int64_t n = mit->second.numel();
        const float decay = is_decayed(mit->first, m_opt.decay_embeddings) ? 1.0f - lr * m_opt.weight_decay : 1.0f;
        for (int64_t i = 0; i < n; ++i) {
            m[i] = b1 * m[i] + (1.0f - b1) * g[i];
            v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
            p[i] = p[i] * decay - step_size * m[i] / (std::sqrt(v[i]) * inv_bc2_sqrt + eps);
        }
    }
}

double global_grad_norm(const WeightMap& grads) {
    double s = 0;
    for (const auto& [name, t] : grads)
        for (float v : t.data) s += double(v) * double(v);
    return std::sqrt(s);
}

double clip_grad_norm(WeightMap& grads, double max_norm) {
    const double norm = global_grad_norm(grads);
    if (max_norm > 0) {
        const double coef = max_norm / (norm + 1e-6);
        if (coef < 1.0)
            for (auto& [name, t] : grads)
                for (float& v : t.data) v = float(v * coef);
    }
    return norm;
}

const char* to_string(LrScheduleKind k) { return k == LrScheduleKind::Cosine ? "cosine" : "inverse_sqrt"; }

LrScheduleKind lr_schedule_from_string(std::string_view s) {
    if (s == "cosine") return LrScheduleKind::Cosine;
    if (s == "inverse_sqrt" || s == "inverse-sqrt" || s == "noam") return LrScheduleKind::InverseSqrt;
    throw std::invalid_argument("unknown learning-rate schedule '" + std::string(s) +
                                "' (expected cosine or inverse_sqrt)");
}

float LrSchedule::at(int64_t step) const {
    if (kind == LrScheduleKind::InverseSqrt) {
        if (warmup < 1 || d_model < 1)
            throw std::invalid_argument("inverse_sqrt schedule needs warmup >= 1 and d_model >= 1, got warmup " +
                                        std::to_string(warmup) + ", d_model " + std::to_string(d_model));
        const double s = double(step + 1);
        return float(double(factor) / std::sqrt(double(d_model)) *
                     std::min(1.0 / std::sqrt(s), s * std::pow(double(warmup), -1.5)));
    }
    if (step < warmup) return lr_max * float(step + 1) / float(warmup);
    const int64_t span = std::max<int64_t>(1, int64_t(total) - warmup);
    const double progress = std::min(1.0, double(step - warmup) / double(span));
    return float(min_lr + 0.5 * (double(lr_max) - min_lr) * (1.0 + std::cos(M_PI * progress)));
}

}  // namespace ts::train
