// Model weights: the list of names/shapes a config implies (expected_weights), seeded random initialisation,
// and the Model constructor that checks a WeightMap against that list.
#include "core/model/model.h"

#include "core/kernels/gemm.h"
#include "core/model/half.h"

#include <algorithm>
#include <memory>
#include <mutex>

#include <functional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>

namespace ts {

namespace {

using Visit = std::function<void(const std::string& name, const std::vector<int64_t>& shape)>;

void add_norm(const Visit& out, const ModelConfig& c, const std::string& name) {
    out(name + ".weight", {c.d_model});
    if (c.norm == NormKind::LayerNorm && c.norm_bias) out(name + ".bias", {c.d_model});
}

void add_attention(const Visit& out, const ModelConfig& c, const std::string& p) {
    const int64_t D = c.d_model, H = c.n_heads, K = c.n_kv_heads, Dh = c.d_head();
    out(p + ".wq", {H * Dh, D});
    out(p + ".wk", {K * Dh, D});
    out(p + ".wv", {K * Dh, D});
    out(p + ".wo", {D, H * Dh});
    if (c.attn_qkv_bias) {
        out(p + ".bq", {H * Dh});
        out(p + ".bk", {K * Dh});
        out(p + ".bv", {K * Dh});
    }
    if (c.attn_out_bias) out(p + ".bo", {D});
    // ModelConfig::parameter_count counts q/k norms for every attention block, cross attention included.
    if (c.qk_norm) {
        out(p + ".q_norm.weight", {Dh});
        out(p + ".k_norm.weight", {Dh});
    }
}

void add_ffn(const Visit& out, const ModelConfig& c, const std::string& p) {
    const int64_t D = c.d_model, F = c.d_ff;
    out(p + ".w_up", {F, D});
    if (is_gated(c.activation)) out(p + ".w_gate", {F, D});
    out(p + ".w_down", {D, F});
    if (c.ffn_bias) {
        out(p + ".b_up", {F});
        out(p + ".b_down", {D});
    }
}

void add_layer(const Visit& out, const ModelConfig& c, const std::string& stack, int i, bool cross) {
    const std::string p = stack + "." + std::to_string(i);
    add_norm(out, c, p + ".attn_norm");
    add_attention(out, c, p + ".attn");
    if (cross) {
        add_norm(out, c, p + ".cross_norm");
        add_attention(out, c, p + ".cross_attn");
    }
    if (c.d_ff == 0) return;  // attention-only
    add_norm(out, c, p + ".ffn_norm");
    add_ffn(out, c, p + ".ffn");
}

bool ends_with(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

void for_each_expected_weight(const ModelConfig& c, const Visit& out) {
    c.validate();
    out("tok_emb.weight", {c.vocab_size, c.d_model});
    if (c.position == PositionKind::Learned) out("pos_emb.weight", {c.max_seq_len, c.d_model});
    if (c.enc_pos_emb) out("enc.pos_emb.weight", {c.max_seq_len, c.d_model});
    // Per stack: the embedding norm and T5's relative position bias table come before its layers.
    const auto stack_head = [&](const std::string& stack) {
        if (c.embed_norm) add_norm(out, c, stack + ".embed_norm");
        if (c.relative_attention_bias)
            out(stack + ".relative_attention_bias", {c.relative_attention_num_buckets, c.n_heads});
    };
    if (c.type_vocab_size > 0) out("tok_type_emb.weight", {c.type_vocab_size, c.d_model});
    if (c.arch == Arch::EncoderDecoder) {
        stack_head("enc");
        for (int i = 0; i < c.n_enc_layers; ++i) add_layer(out, c, "enc", i, false);
        if (c.final_norm) add_norm(out, c, "enc.final_norm");
        stack_head("dec");
        for (int i = 0; i < c.n_layers; ++i) add_layer(out, c, "dec", i, true);
        if (c.final_norm) add_norm(out, c, "dec.final_norm");
    } else {
        const std::string stack = c.arch == Arch::EncoderOnly ? "enc" : "dec";
        stack_head(stack);
        for (int i = 0; i < c.n_layers; ++i) add_layer(out, c, stack, i, false);
        if (c.final_norm) add_norm(out, c, stack + ".final_norm");
    }
    if (!c.tie_embeddings && c.arch != Arch::EncoderOnly) out("lm_head.weight", {c.vocab_size, c.d_model});
    if (c.final_logits_bias && c.arch != Arch::EncoderOnly) out("final_logits_bias", {c.vocab_size});
    if (c.mlm_head) {
        out("mlm_head.dense.weight", {c.d_model, c.d_model});
        out("mlm_head.dense.bias", {c.d_model});
        add_norm(out, c, "mlm_head.norm");
        out("mlm_head.bias", {c.vocab_size});
    }
}

std::vector<std::pair<std::string, std::vector<int64_t>>> expected_weights(const ModelConfig& c) {
    std::vector<std::pair<std::string, std::vector<int64_t>>> list;
    for_each_expected_weight(c, [&](const std::string& name, const std::vector<int64_t>& shape) {
        list.emplace_back(name, shape);
    });
    return list;
}

WeightMap init_weights(const ModelConfig& c, uint64_t seed) {
    WeightMap w;
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    for (auto& [name, shape] : expected_weights(c)) {
        Tensor t(shape);
        const bool is_norm_weight = ends_with(name, "norm.weight");
        const bool is_bias = ends_with(name, ".bias") || ends_with(name, ".bq") || ends_with(name, ".bk") ||
                             ends_with(name, ".bv") || ends_with(name, ".bo") || ends_with(name, ".b_up") ||
                             ends_with(name, ".b_down") || name == "final_logits_bias";
        if (is_norm_weight)
            std::fill(t.data.begin(), t.data.end(), 1.0f);
        else if (!is_bias)
            for (float& v : t.data) v = normal(rng);
        w.emplace(name, std::move(t));
    }
    return w;
}

namespace {

// The matrices linear() reads inside the forward: attention projections (self and cross) and the FFN's.
bool is_linear_weight(std::string_view name) {
    for (const char* s : {".wq", ".wk", ".wv", ".wo", ".ffn.w_up", ".ffn.w_gate", ".ffn.w_down"})
        if (name.ends_with(s)) return true;
    return false;
}

}  // namespace

Model::Model(ModelConfig config, WeightMap weights) : m_config(std::move(config)), m_weights(std::move(weights)) {
    const auto expected = expected_weights(m_config);  // validates the config
    std::set<std::string, std::less<>> names;
    for (const auto& [name, shape] : expected) {
        names.insert(name);
        auto it = m_weights.find(name);
        if (it == m_weights.end())
            throw std::invalid_argument("model '" + m_config.name + "': missing weight '" + name +
                                        "' (expected shape " + shape_str(shape) + ")");
        const Tensor& t = it->second;
        if (t.shape != shape)
            throw std::invalid_argument("model '" + m_config.name + "': weight '" + name + "' has shape " +
                                        t.shape_str() + ", expected " + shape_str(shape));
        if (t.numel() != Tensor::count(shape))
            throw std::invalid_argument("model '" + m_config.name + "': weight '" + name + "' holds " +
                                        std::to_string(t.numel()) + " values, shape " + shape_str(shape) +
                                        " needs " + std::to_string(Tensor::count(shape)));
    }
    for (const auto& [name, t] : m_weights) {
        if (!names.count(name))
            throw std::invalid_argument("model '" + m_config.name + "': unexpected weight '" + name + "' " +
                                        t.shape_str() + " (not used by this config)");
        m_has_half = m_has_half || t.is_half();
    }
    // The forward's linear-layer matrices and the LM head, float32 or half precision, go into the order the product
    // reads them (core/kernels/gemm.h): same memory, no per-call gather or widening buffer. Tied embeddings are the head too:
    // their lookups read a row across the panels (detail::embed). weight() and weights() give them back row-major.
    const bool tied_head = m_config.tie_embeddings || m_config.mlm_head;
    for (auto& [name, t] : m_weights)
        if (!t.in_panels() && !t.is_ggml() && t.rank() == 2 &&
            (is_linear_weight(name) || name == "lm_head.weight" || (tied_head && name == "tok_emb.weight")))
            t = pack_panels(std::move(t));
    m_all_f32_rows = std::all_of(m_weights.begin(), m_weights.end(), [](const auto& kv) { return kv.second.is_f32_rows(); });
    m_widened = std::make_shared<Widened>();
}

Model::Model(ModelConfig config, WeightMap weights, std::vector<std::string> weight_warnings)
    : Model(std::move(config), std::move(weights)) {
    m_weight_warnings = std::move(weight_warnings);
}

struct Model::Widened {
    std::mutex mutex;
    WeightMap one;                   ///< single weights widened by weight()/find_weight()
    std::unique_ptr<WeightMap> all;  ///< weights(), every tensor as float32
};

const Tensor& Model::weight(std::string_view name) const {
    if (const Tensor* t = find_weight(name)) return *t;
    throw std::out_of_range("model '" + m_config.name + "' has no weight named '" + std::string(name) + "'");
}

const Tensor* Model::find_weight(std::string_view name) const {
    const Tensor* t = find_stored_weight(name);
    if (!t || t->is_f32_rows()) return t;
    std::lock_guard lk(m_widened->mutex);
    auto it = m_widened->one.find(name);
    if (it == m_widened->one.end()) it = m_widened->one.emplace(std::string(name), to_f32(*t)).first;
    return &it->second;
}

const Tensor& Model::stored_weight(std::string_view name) const {
    if (const Tensor* t = find_stored_weight(name)) return *t;
    throw std::out_of_range("model '" + m_config.name + "' has no weight named '" + std::string(name) + "'");
}

const Tensor* Model::find_stored_weight(std::string_view name) const {
    auto it = m_weights.find(name);
    return it == m_weights.end() ? nullptr : &it->second;
}

const WeightMap& Model::weights() const {
    if (m_all_f32_rows) return m_weights;
    std::lock_guard lk(m_widened->mutex);
    if (!m_widened->all) {
        auto all = std::make_unique<WeightMap>();
        for (const auto& [name, t] : m_weights) all->emplace(name, to_f32(t));
        m_widened->all = std::move(all);
    }
    return *m_widened->all;
}

}  // namespace ts
