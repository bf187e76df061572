// ModelConfig validation, parameter count and JSON mapping.
#include "core/model/model_config.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ts {

float ModelConfig::embedding_scale() const { return scale_embeddings ? std::sqrt(float(d_model)) : 1.0f; }

bool is_gated(Activation a) {
    return a == Activation::GLU || a == Activation::SwiGLU || a == Activation::GeGLU || a == Activation::GeGLUTanh;
}

namespace {
template <typename E>
struct EnumNames;
template <>
struct EnumNames<Arch> {
    static constexpr std::pair<Arch, const char*> v[] = {
        {Arch::EncoderOnly, "encoder"}, {Arch::DecoderOnly, "decoder"}, {Arch::EncoderDecoder, "encoder_decoder"}};
};
template <>
struct EnumNames<NormKind> {
    static constexpr std::pair<NormKind, const char*> v[] = {{NormKind::LayerNorm, "layernorm"},
                                                             {NormKind::RMSNorm, "rmsnorm"}};
};
template <>
struct EnumNames<NormPlacement> {
    static constexpr std::pair<NormPlacement, const char*> v[] = {{NormPlacement::Pre, "pre"},
                                                                  {NormPlacement::Post, "post"}};
};
template <>
struct EnumNames<Activation> {
    static constexpr std::pair<Activation, const char*> v[] = {
        {Activation::ReLU, "relu"}, {Activation::GELU, "gelu"},  {Activation::GELUTanh, "gelu_tanh"},
        {Activation::SiLU, "silu"}, {Activation::GLU, "glu"},    {Activation::SwiGLU, "swiglu"},
        {Activation::GeGLU, "geglu"}, {Activation::GeGLUTanh, "geglu_tanh"}};
};
template <>
struct EnumNames<PositionKind> {
    static constexpr std::pair<PositionKind, const char*> v[] = {{PositionKind::None, "none"},
                                                                 {PositionKind::Sinusoidal, "sinusoidal"},
                                                                 {PositionKind::Learned, "learned"},
                                                                 {PositionKind::RoPE, "rope"}};
};
template <>
struct EnumNames<RopeLayout> {
    static constexpr std::pair<RopeLayout, const char*> v[] = {{RopeLayout::Interleaved, "interleaved"},
                                                               {RopeLayout::HalfSplit, "half_split"}};
};
template <>
struct EnumNames<SinusoidalLayout> {
    static constexpr std::pair<SinusoidalLayout, const char*> v[] = {{SinusoidalLayout::Interleaved, "interleaved"},
                                                                     {SinusoidalLayout::HalfSplit, "half_split"}};
};

template <typename E>
const char* name_of(E e) {
    for (const auto& [k, n] : EnumNames<E>::v)
        if (k == e) return n;
    return "?";
}

template <typename E>
E parse_enum(const nlohmann::json& j, const char* field) {
    if (!j.is_string()) throw std::invalid_argument(std::string("config field '") + field + "' must be a string");
    const auto s = j.get<std::string>();
    std::string allowed;
    for (const auto& [k, n] : EnumNames<E>::v) {
        if (s == n) return k;
        allowed += (allowed.empty() ? "" : ", ") + std::string(n);
    }
    throw std::invalid_argument(std::string("config field '") + field + "' has unknown value '" + s +
                                "' (expected one of: " + allowed + ")");
}

template <typename T>
void read_field(const nlohmann::json& j, const char* field, T& out) {
    if (!j.contains(field)) return;
    const auto& v = j.at(field);
    if constexpr (std::is_same_v<T, bool>) {
        if (!v.is_boolean()) throw std::invalid_argument(std::string("config field '") + field + "' must be a boolean");
        out = v.get<bool>();
    } else if constexpr (std::is_integral_v<T>) {
        static_assert(std::is_same_v<T, int>);
        if (!v.is_number_integer())
            throw std::invalid_argument(std::string("config field '") + field + "' must be an integer");
        // get<int>() would silently truncate 2^40 to 0; say what was found instead.
        const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= uint64_t(INT_MAX)
                                                 : v.get<int64_t>() >= INT_MIN && v.get<int64_t>() <= INT_MAX;
        if (!fits)
            throw std::invalid_argument(std::string("config field '") + field +
                                        "' must be an integer that fits 32 bits, found " + v.dump());
        out = v.get<T>();
    } else if constexpr (std::is_floating_point_v<T>) {
        if (!v.is_number()) throw std::invalid_argument(std::string("config field '") + field + "' must be a number");
        out = v.get<T>();
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (!v.is_string()) throw std::invalid_argument(std::string("config field '") + field + "' must be a string");
        out = v.get<std::string>();
    } else {
        out = parse_enum<T>(v, field);
    }
}

void require(bool ok, const std::string& msg) {
    if (!ok) throw std::invalid_argument(msg);
}
std::string num(int v) { return std::to_string(v); }

void require_at_most(int v, int limit, const char* field) {
    require(v <= limit, std::string(field) + " (" + num(v) + ") exceeds the limit " + num(limit));
}

void require_finite_above(float v, float floor, const char* field) {
    require(std::isfinite(v) && v > floor, std::string(field) + " must be a finite number > " +
                                               (floor == 0.0f ? "0" : "1") + ", found " + std::to_string(v));
}

/// int64 arithmetic that saturates at INT64_MAX instead of overflowing (operands are >= 0 here).
struct Count {
    int64_t v = 0;
    static constexpr int64_t kMax = INT64_MAX;
    friend Count operator+(Count a, Count b) {
        int64_t r;
        return {__builtin_add_overflow(a.v, b.v, &r) ? kMax : r};
    }
    friend Count operator*(Count a, Count b) {
        int64_t r;
        return {__builtin_mul_overflow(a.v, b.v, &r) ? kMax : r};
    }
};
}  // namespace

const char* to_string(Arch v) { return name_of(v); }
const char* to_string(NormKind v) { return name_of(v); }
const char* to_string(NormPlacement v) { return name_of(v); }
const char* to_string(Activation v) { return name_of(v); }
const char* to_string(PositionKind v) { return name_of(v); }
const char* to_string(RopeLayout v) { return name_of(v); }
const char* to_string(SinusoidalLayout v) { return name_of(v); }

void ModelConfig::validate() const {
    require(vocab_size > 0, "vocab_size (" + num(vocab_size) + ") must be positive");
    require_at_most(vocab_size, kMaxVocabSize, "vocab_size");
    require(d_model > 0, "d_model (" + num(d_model) + ") must be positive");
    require_at_most(d_model, kMaxWidth, "d_model");
    require(n_heads > 0, "n_heads (" + num(n_heads) + ") must be positive");
    require(head_dim >= 0, "head_dim (" + num(head_dim) + ") must not be negative (0 = d_model / n_heads)");
    require_at_most(head_dim, kMaxWidth, "head_dim");
    require(head_dim > 0 || d_model % n_heads == 0,
            "d_model (" + num(d_model) + ") must be divisible by n_heads (" + num(n_heads) + ")");
    require_at_most(int(std::min<int64_t>(int64_t(n_heads) * d_head(), INT_MAX)), kMaxWidth, "n_heads * head_dim");
    require(n_kv_heads > 0, "n_kv_heads (" + num(n_kv_heads) + ") must be positive");
    require(n_kv_heads <= n_heads && n_heads % n_kv_heads == 0,
            "n_heads (" + num(n_heads) + ") must be divisible by n_kv_heads (" + num(n_kv_heads) + ")");
    require(d_ff >= 0, "d_ff (" + num(d_ff) + ") must be positive, or 0 for an attention-only model");
    require(d_ff > 0 || !parallel_residual, "an attention-only model (d_ff 0) has no parallel residual");
    require_at_most(d_ff, kMaxWidth, "d_ff");
    require(n_layers >= 0, "n_layers (" + num(n_layers) + ") must not be negative");
    require_at_most(n_layers, kMaxLayers, "n_layers");
    require(n_enc_layers >= 0, "n_enc_layers (" + num(n_enc_layers) + ") must not be negative");
    require_at_most(n_enc_layers, kMaxLayers, "n_enc_layers");
    require(max_seq_len > 0, "max_seq_len (" + num(max_seq_len) + ") must be positive");
    require_at_most(max_seq_len, kMaxSeqLen, "max_seq_len");
    require_finite_above(norm_eps, 0.0f, "norm_eps");
    if (arch == Arch::EncoderDecoder)
        require(n_enc_layers > 0 && n_layers > 0,
                "encoder_decoder needs n_enc_layers (" + num(n_enc_layers) + ") and n_layers (" + num(n_layers) +
                    ") both positive");
    else
        require(n_layers > 0, "n_layers (" + num(n_layers) + ") must be positive");
    if (position == PositionKind::RoPE) {
        require(d_head() % 2 == 0, "RoPE needs an even d_head, got d_head = " + num(d_head()));
        require_finite_above(rope_theta, 1.0f, "rope_theta");
    }
    require(rotary_dim >= 0 && rotary_dim <= d_head() && rotary_dim % 2 == 0,
            "rotary_dim (" + num(rotary_dim) + ") must be even and in [0, d_head = " + num(d_head()) + "]");
    require(sliding_window >= 0 && sliding_window <= (1 << 24),
            "sliding_window (" + num(sliding_window) + ") must be in [0, 16777216] (0 = none)");
    require(sliding_window_from_layer >= 0 && sliding_window_from_layer <= n_layers,
            "sliding_window_from_layer (" + num(sliding_window_from_layer) + ") must be in [0, n_layers = " +
                num(n_layers) + "]");
    require(rotary_dim == 0 || position == PositionKind::RoPE,
            "rotary_dim (" + num(rotary_dim) + ") needs position = rope, found " + to_string(position));
    require(!parallel_residual || (norm_placement == NormPlacement::Pre && arch != Arch::EncoderDecoder),
            "parallel_residual needs norm_placement = pre and a single stack (decoder or encoder), found " +
                std::string(to_string(norm_placement)) + ", " + to_string(arch));
    require(type_vocab_size >= 0, "type_vocab_size (" + num(type_vocab_size) + ") must not be negative");
    require_at_most(type_vocab_size, kMaxVocabSize, "type_vocab_size");
    require(!mlm_head || arch == Arch::EncoderOnly,
            std::string("mlm_head needs arch = encoder, found ") + to_string(arch));
    if (position == PositionKind::Sinusoidal)
        require(d_model % 2 == 0, "sinusoidal positions need an even d_model, got " + num(d_model));
    require_finite_above(sinusoidal_base, 1.0f, "sinusoidal_base");
    if (enc_pos_emb)
        require(arch == Arch::EncoderDecoder && position == PositionKind::Learned,
                "enc_pos_emb (a separate encoder position table) needs arch encoder_decoder and learned positions");
    if (relative_attention_bias) {
        require(relative_attention_num_buckets >= 2 && relative_attention_num_buckets <= 1 << 16,
                "relative_attention_num_buckets (" + num(relative_attention_num_buckets) + ") must be in [2, 65536]");
        // T5 halves the buckets per direction in the encoder and needs max_exact = buckets/4 >= 1 there.
        require(relative_attention_num_buckets >= 4 || arch == Arch::DecoderOnly,
                "relative_attention_num_buckets (" + num(relative_attention_num_buckets) +
                    ") must be at least 4 for a bidirectional (encoder) stack");
        require(relative_attention_max_distance > relative_attention_num_buckets / 2 &&
                    relative_attention_max_distance <= kMaxSeqLen,
                "relative_attention_max_distance (" + num(relative_attention_max_distance) +
                    ") must exceed relative_attention_num_buckets / 2 (" + num(relative_attention_num_buckets / 2) +
                    ") and be at most " + num(kMaxSeqLen));
    }
    require(!scale_lm_head || tie_embeddings, "scale_lm_head (T5's d_model^-0.5 before a tied LM head) needs "
                                              "tie_embeddings");
    const int64_t params = parameter_count();
    require(params <= kMaxParameters,
            "the config implies " + (params == INT64_MAX ? std::string("more than 2^63") : std::to_string(params)) +
                " parameters (vocab_size " + num(vocab_size) + ", d_model " + num(d_model) + ", d_ff " + num(d_ff) +
                ", n_layers " + num(n_layers) + (arch == Arch::EncoderDecoder ? ", n_enc_layers " + num(n_enc_layers) : "") +
                (position == PositionKind::Learned ? ", max_seq_len " + num(max_seq_len) : "") +
                "), more than the limit " + std::to_string(kMaxParameters));
}

int64_t ModelConfig::parameter_count() const {
    if (n_heads <= 0) return 0;
    const Count D{d_model}, F{d_ff}, H{n_heads}, K{n_kv_heads}, Dh{d_head()}, V{vocab_size}, zero{0};
    const bool ln = norm == NormKind::LayerNorm;
    const Count norm_p = D * Count{(ln && norm_bias) ? 2 : 1};
    const Count attn = D * H * Dh + Count{2} * D * K * Dh + H * Dh * D +
                       (attn_qkv_bias ? (H + Count{2} * K) * Dh : zero) + (attn_out_bias ? D : zero) +
                       (qk_norm ? Count{2} * Dh : zero);
    // d_ff 0: attention-only, no FFN sub-layer and no ffn_norm.
    const Count ffn = d_ff > 0 ? Count{is_gated(activation) ? 3 : 2} * D * F + (ffn_bias ? F + D : zero) : zero;
    const Count enc_layer = norm_p * Count{d_ff > 0 ? 2 : 1} + attn + ffn;
    const Count rel_bias = relative_attention_bias ? Count{relative_attention_num_buckets} * H : zero;
    const Count dec_layer = enc_layer + (arch == Arch::EncoderDecoder ? norm_p + attn : zero);
    Count total = V * D;
    if (position == PositionKind::Learned) total = total + Count{max_seq_len} * D;
    total = total + Count{type_vocab_size} * D;
    if (mlm_head) total = total + D * D + D + norm_p + V;
    if (arch == Arch::EncoderDecoder) {
        total = total + Count{n_enc_layers} * enc_layer + Count{n_layers} * dec_layer +
                (final_norm ? Count{2} * norm_p : zero) + Count{2} * rel_bias + (embed_norm ? Count{2} * norm_p : zero);
        if (enc_pos_emb && position == PositionKind::Learned) total = total + Count{max_seq_len} * D;
    } else {
        total = total + Count{n_layers} * enc_layer + (final_norm ? norm_p : zero) + rel_bias +
                (embed_norm ? norm_p : zero);
    }
    if (final_logits_bias && arch != Arch::EncoderOnly) total = total + V;
    if (!tie_embeddings && arch != Arch::EncoderOnly) total = total + V * D;
    return total.v;
}

void to_json(nlohmann::json& j, const ModelConfig& c) {
    j = nlohmann::json{{"name", c.name},
                       {"arch", to_string(c.arch)},
                       {"vocab_size", c.vocab_size},
                       {"d_model", c.d_model},
                       {"n_heads", c.n_heads},
                       {"n_kv_heads", c.n_kv_heads},
                       {"d_ff", c.d_ff},
                       {"n_layers", c.n_layers},
                       {"n_enc_layers", c.n_enc_layers},
                       {"max_seq_len", c.max_seq_len},
                       {"norm", to_string(c.norm)},
                       {"norm_placement", to_string(c.norm_placement)},
                       {"norm_eps", c.norm_eps},
                       {"final_norm", c.final_norm},
                       {"activation", to_string(c.activation)},
                       {"ffn_bias", c.ffn_bias},
                       {"attn_qkv_bias", c.attn_qkv_bias},
                       {"attn_out_bias", c.attn_out_bias},
                       {"norm_bias", c.norm_bias},
                       {"position", to_string(c.position)},
                       {"sinusoidal_base", c.sinusoidal_base},
                       {"rope_theta", c.rope_theta},
                       {"rope_layout", to_string(c.rope_layout)},
                       {"scale_attn", c.scale_attn},
                       {"qk_norm", c.qk_norm},
                       {"scale_embeddings", c.scale_embeddings},
                       {"tie_embeddings", c.tie_embeddings}};
    // Switches of the Hugging Face families beyond GPT-2/Llama: written only when on, so the folders of models that
    // do not use them keep their config.json byte for byte.
    if (c.sinusoidal_layout != SinusoidalLayout::Interleaved) j["sinusoidal_layout"] = to_string(c.sinusoidal_layout);
    if (c.enc_pos_emb) j["enc_pos_emb"] = true;
    if (c.relative_attention_bias) {
        j["relative_attention_bias"] = true;
        j["relative_attention_num_buckets"] = c.relative_attention_num_buckets;
        j["relative_attention_max_distance"] = c.relative_attention_max_distance;
    }
    if (c.embed_norm) j["embed_norm"] = true;
    if (c.final_logits_bias) j["final_logits_bias"] = true;
    if (c.scale_lm_head) j["scale_lm_head"] = true;
    if (c.head_dim > 0) j["head_dim"] = c.head_dim;
    if (c.rotary_dim > 0) j["rotary_dim"] = c.rotary_dim;
    if (c.sliding_window > 0) {
        j["sliding_window"] = c.sliding_window;
        if (c.sliding_window_from_layer > 0) j["sliding_window_from_layer"] = c.sliding_window_from_layer;
    }
    if (c.parallel_residual) j["parallel_residual"] = true;
    if (c.type_vocab_size > 0) j["type_vocab_size"] = c.type_vocab_size;
    if (c.mlm_head) j["mlm_head"] = true;
}

void from_json(const nlohmann::json& j, ModelConfig& c) {
    if (!j.is_object()) throw std::invalid_argument("config must be a JSON object");
    c = ModelConfig{};
    read_field(j, "name", c.name);
    read_field(j, "arch", c.arch);
    read_field(j, "vocab_size", c.vocab_size);
    read_field(j, "d_model", c.d_model);
    read_field(j, "n_heads", c.n_heads);
    c.n_kv_heads = c.n_heads;
    read_field(j, "n_kv_heads", c.n_kv_heads);
    read_field(j, "d_ff", c.d_ff);
    read_field(j, "n_layers", c.n_layers);
    read_field(j, "n_enc_layers", c.n_enc_layers);
    read_field(j, "max_seq_len", c.max_seq_len);
    read_field(j, "norm", c.norm);
    read_field(j, "norm_placement", c.norm_placement);
    read_field(j, "norm_eps", c.norm_eps);
    read_field(j, "final_norm", c.final_norm);
    read_field(j, "activation", c.activation);
    read_field(j, "ffn_bias", c.ffn_bias);
    read_field(j, "attn_qkv_bias", c.attn_qkv_bias);
    read_field(j, "attn_out_bias", c.attn_out_bias);
    read_field(j, "norm_bias", c.norm_bias);
    read_field(j, "position", c.position);
    read_field(j, "sinusoidal_base", c.sinusoidal_base);
    read_field(j, "rope_theta", c.rope_theta);
    read_field(j, "rope_layout", c.rope_layout);
    read_field(j, "scale_attn", c.scale_attn);
    read_field(j, "qk_norm", c.qk_norm);
    read_field(j, "scale_embeddings", c.scale_embeddings);
    read_field(j, "tie_embeddings", c.tie_embeddings);
    read_field(j, "sinusoidal_layout", c.sinusoidal_layout);
    read_field(j, "enc_pos_emb", c.enc_pos_emb);
    read_field(j, "relative_attention_bias", c.relative_attention_bias);
    read_field(j, "relative_attention_num_buckets", c.relative_attention_num_buckets);
    read_field(j, "relative_attention_max_distance", c.relative_attention_max_distance);
    read_field(j, "embed_norm", c.embed_norm);
    read_field(j, "final_logits_bias", c.final_logits_bias);
    read_field(j, "scale_lm_head", c.scale_lm_head);
    read_field(j, "head_dim", c.head_dim);
    read_field(j, "rotary_dim", c.rotary_dim);
    read_field(j, "sliding_window", c.sliding_window);
    read_field(j, "sliding_window_from_layer", c.sliding_window_from_layer);
    read_field(j, "parallel_residual", c.parallel_residual);
    read_field(j, "type_vocab_size", c.type_vocab_size);
    read_field(j, "mlm_head", c.mlm_head);
}

}  // namespace ts
