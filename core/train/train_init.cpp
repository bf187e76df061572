// Xavier-uniform / embedding-scaled initialisation for encoder–decoder training (see train_init.h).
#include "core/train/train_init.h"

#include <cmath>
#include <random>
#include <string_view>

namespace ts::train {

WeightMap init_transformer_weights(const ModelConfig& c, uint64_t seed) {
    const auto ends_with = [](std::string_view s, std::string_view suffix) {
        return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
    };
    std::mt19937_64 rng(seed);
    const float emb_std = c.scale_embeddings ? 1.0f / std::sqrt(float(c.d_model)) : 0.02f;
    WeightMap w;
    for (const auto& [name, shape] : expected_weights(c)) {
        Tensor t(shape);
        if (ends_with(name, "norm.weight")) {
            std::fill(t.data.begin(), t.data.end(), 1.0f);
        } else if (name == "tok_emb.weight" || name == "pos_emb.weight") {
            std::normal_distribution<float> normal(0.0f, emb_std);
            for (float& v : t.data) v = normal(rng);
        } else if (shape.size() == 2) {
            const float a = std::sqrt(6.0f / float(shape[0] + shape[1]));
            std::uniform_real_distribution<float> uniform(-a, a);
            for (float& v : t.data) v = uniform(rng);
        }  // biases stay 0
        w.emplace(name, std::move(t));
    }
    return w;
}

}  // namespace ts::train
