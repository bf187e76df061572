// Hugging Face encoder–decoder families (t5, marian, bart): config.json keys -> ModelConfig and tensor names -> our
// weight names (core/model/model.h). Facts of the formats come from transformers' T5Config / T5ForConditionalGeneration,
// MarianConfig / MarianMTModel and BartConfig / BartForConditionalGeneration; only names, shapes and semantics.
#include "core/formats/hf_checkpoint.h"
#include "core/formats/hf_names.h"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string_view>
#include <tuple>
#include <utility>

namespace ts::detail {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& what, const std::string& msg) { throw std::runtime_error(what + ": " + msg); }

/// Typed reads of one config.json with messages that name the key and the family.
struct Keys {
    const json& j;
    const std::string& what;
    const std::string& type;

    [[nodiscard]] bool has(const char* key) const { return j.contains(key) && !j.at(key).is_null(); }
    [[nodiscard]] int integer(const char* key, int def = -1) const {
        if (!has(key)) {
            if (def >= 0) return def;
            fail(what, "missing key '" + std::string(key) + "' (required for model_type " + type + ")");
        }
        const json& v = j.at(key);
        if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > (int64_t(1) << 30))
            fail(what, "key '" + std::string(key) + "' must be a positive integer up to 2^30, found " + v.dump());
        return v.get<int>();
    }
    [[nodiscard]] float number(const char* key, float def) const {
        if (!has(key)) return def;
        const json& v = j.at(key);
        if (!v.is_number() || v.get<double>() <= 0.0)
            fail(what, "key '" + std::string(key) + "' must be a positive number, found " + v.dump());
        return v.get<float>();
    }
    [[nodiscard]] bool boolean(const char* key, bool def) const {
        if (!has(key)) return def;
        if (!j.at(key).is_boolean()) fail(what, "key '" + std::string(key) + "' must be true or false");
        return j.at(key).get<bool>();
    }
    [[nodiscard]] std::string string(const char* key, const std::string& def) const {
        if (!has(key)) return def;
        if (!j.at(key).is_string()) fail(what, "key '" + std::string(key) + "' must be a string");
        return j.at(key).get<std::string>();
    }
    /// Keys that must not be true: the feature they switch on is not implemented.
    void refuse_true(const char* key, const char* why) const {
        if (boolean(key, false)) fail(what, std::string(key) + " = true is not supported (" + why + ")");
    }
    /// Two keys that must agree (encoder and decoder sizes: ModelConfig has one of each).
    [[nodiscard]] int same(const char* a, const char* b, int def = -1) const {
        const int va = integer(a, def), vb = integer(b, va);
        if (va != vb)
            fail(what, std::string(a) + " (" + std::to_string(va) + ") differs from " + b + " (" + std::to_string(vb) +
                           "): encoder and decoder of different widths are not supported");
        return va;
    }
};

HfConfig t5_config(const Keys& k) {
    HfConfig h;
    h.model_type = "t5";
    ModelConfig& c = h.config;
    c.arch = Arch::EncoderDecoder;
    c.d_model = k.integer("d_model");
    c.n_heads = c.n_kv_heads = k.integer("num_heads");
    c.d_ff = k.integer("d_ff");
    c.n_enc_layers = k.integer("num_layers");
    c.n_layers = k.integer("num_decoder_layers", c.n_enc_layers);
    c.vocab_size = k.integer("vocab_size");
    const int d_kv = k.integer("d_kv", 64);  // T5Config default
    // T5 v1.1 / Flan-T5 small: d_model 512, 6 heads of d_kv 64 (inner width 384 != d_model). q/k/v then map
    // d_model -> num_heads * d_kv and o maps back (T5Attention.inner_dim); head_dim carries d_kv.
    if (c.d_model % c.n_heads != 0 || d_kv != c.d_model / c.n_heads) c.head_dim = d_kv;
    // Relative positions have no length limit; n_positions (512 in T5Config) bounds what the app feeds.
    c.max_seq_len = k.integer("n_positions", 512);
    c.norm = NormKind::RMSNorm;  // T5LayerNorm: x * rsqrt(mean(x^2) + eps) * weight, no mean, no bias
    c.norm_bias = false;
    c.norm_eps = k.number("layer_norm_epsilon", 1e-6f);
    c.norm_placement = NormPlacement::Pre;
    c.final_norm = true;  // encoder.final_layer_norm, decoder.final_layer_norm
    const std::string ffp = k.string("feed_forward_proj", "relu");
    if (ffp == "relu") c.activation = Activation::ReLU;
    else if (ffp == "gated-gelu") c.activation = Activation::GeGLUTanh;  // T5Config maps it to gelu_new
    else if (ffp == "gelu") c.activation = Activation::GELU;
    else if (ffp == "gated-silu") c.activation = Activation::SwiGLU;
    else fail(k.what, "feed_forward_proj '" + ffp + "' is not supported (relu, gated-gelu, gelu, gated-silu)");
    c.ffn_bias = c.attn_qkv_bias = c.attn_out_bias = false;
    c.position = PositionKind::None;
    c.relative_attention_bias = true;
    c.relative_attention_num_buckets = k.integer("relative_attention_num_buckets", 32);
    c.relative_attention_max_distance = k.integer("relative_attention_max_distance", 128);
    c.scale_attn = false;  // Mesh TensorFlow folds 1/sqrt(d_kv) into the query initialisation
    c.scale_embeddings = false;
    c.tie_embeddings = k.boolean("tie_word_embeddings", true);
    c.scale_lm_head = c.tie_embeddings;  // sequence_output * d_model**-0.5 before a tied lm_head
    return h;
}

/// Marian and BART share BartConfig's key names.
HfConfig bart_like_config(const Keys& k) {
    HfConfig h;
    h.model_type = k.type;
    ModelConfig& c = h.config;
    const bool bart = k.type == "bart";
    c.arch = Arch::EncoderDecoder;
    c.d_model = k.integer("d_model");
    c.vocab_size = k.integer("vocab_size");
    c.n_enc_layers = k.integer("encoder_layers");
    c.n_layers = k.integer("decoder_layers");
    c.n_heads = c.n_kv_heads = k.same("encoder_attention_heads", "decoder_attention_heads");
    c.d_ff = k.same("encoder_ffn_dim", "decoder_ffn_dim");
    // Defaults of MarianConfig / BartConfig in transformers 4.40-4.42 (both 1024 positions, gelu) for keys a
    // config.json leaves out.
    c.max_seq_len = k.integer("max_position_embeddings", 1024);
    c.norm = NormKind::LayerNorm;  // nn.LayerNorm(d_model), eps 1e-5
    c.norm_eps = 1e-5f;
    c.norm_placement = NormPlacement::Post;
    c.final_norm = false;  // no stack-final LayerNorm (mBART has one: a different model_type)
    // Keys of older exports (BartConfig before mBART split off): true would mean a pre-norm mBART-style model.
    k.refuse_true("normalize_before", "pre-norm layers: that is mBART, not this family");
    k.refuse_true("add_final_layer_norm", "a stack-final LayerNorm: that is mBART, not this family");
    const std::string act = k.string("activation_function", "gelu");
    if (act == "gelu") c.activation = Activation::GELU;
    else if (act == "swish" || act == "silu") c.activation = Activation::SiLU;
    else if (act == "relu") c.activation = Activation::ReLU;
    else if (act == "gelu_new" || act == "gelu_pytorch_tanh") c.activation = Activation::GELUTanh;
    else fail(k.what, "activation_function '" + act + "' is not supported (gelu, swish, silu, relu, gelu_new)");
    c.ffn_bias = c.attn_qkv_bias = c.attn_out_bias = c.norm_bias = true;
    c.scale_attn = true;
    c.scale_embeddings = k.boolean("scale_embedding", false);  // embed_scale = sqrt(d_model)
    c.tie_embeddings = k.boolean("tie_word_embeddings", true);
    c.final_logits_bias = true;  // a buffer of MarianMTModel / BartForConditionalGeneration (zeros when absent)
    if (bart) {
        c.position = PositionKind::Learned;  // BartLearnedPositionalEmbedding, offset 2 (sliced at load)
        c.enc_pos_emb = true;                // the encoder and the decoder each have their own table
        c.embed_norm = true;                 // layernorm_embedding after token + position embeddings
        if (k.has("normalize_embedding") && !k.boolean("normalize_embedding", true))
            fail(k.what, "normalize_embedding = false is not supported (BART always has layernorm_embedding)");
    } else {
        if (!k.boolean("share_encoder_decoder_embeddings", true))
            fail(k.what, "share_encoder_decoder_embeddings = false is not supported (one vocabulary for source and "
                         "target)");
        if (k.has("decoder_vocab_size") && k.integer("decoder_vocab_size") != c.vocab_size)
            fail(k.what, "decoder_vocab_size " + std::to_string(k.integer("decoder_vocab_size")) +
                             " differs from vocab_size " + std::to_string(c.vocab_size) + ": not supported");
        c.position = PositionKind::Sinusoidal;  // MarianSinusoidalPositionalEmbedding: sines, then cosines
        c.sinusoidal_layout = SinusoidalLayout::HalfSplit;
        c.sinusoidal_base = 10000.0f;
    }
    return h;
}

}  // namespace

bool hf_is_seq2seq_type(const std::string& model_type) {
    return model_type == "t5" || model_type == "marian" || model_type == "bart";
}

HfConfig hf_seq2seq_config(const nlohmann::json& j, const std::string& what, const std::string& type) {
    const Keys k{j, what, type};
    if (k.has("is_encoder_decoder") && !k.boolean("is_encoder_decoder", true))
        fail(what, "is_encoder_decoder = false is not supported for model_type " + type);
    return type == "t5" ? t5_config(k) : bart_like_config(k);
}

HfTable hf_seq2seq_tensor_table(const std::string& type, const ModelConfig& c) {
    const int64_t D = c.d_model, F = c.d_ff, V = c.vocab_size, H = c.n_heads;
    const int64_t A = H * c.d_head();  // attention inner width (T5: num_heads * d_kv, may differ from d_model)
    HfTable t;
    auto add = [&](const std::string& hf, std::vector<int64_t> shape, HfTransform tr, std::vector<std::string> ours,
                   bool optional = false) { t[hf] = HfTensorRule{std::move(shape), tr, std::move(ours), optional}; };
    using enum HfTransform;
    // One shared vocabulary: each copy the file holds must equal the others; at least one must be there (checked by
    // the loader, which names shared.weight when none is).
    for (const char* name : {"shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight"})
        add(name, {V, D}, SharedEmbedding, {"tok_emb.weight"}, true);
    if (c.tie_embeddings) add("lm_head.weight", {V, D}, TiedHead, {"tok_emb.weight"}, true);
    else add("lm_head.weight", {V, D}, Move, {"lm_head.weight"});

    if (type == "t5") {
        for (const std::string stack : {"encoder", "decoder"}) {
            const bool dec = stack == "decoder";
            const std::string os = dec ? "dec" : "enc";
            add(stack + ".block.0.layer.0.SelfAttention.relative_attention_bias.weight",
                {c.relative_attention_num_buckets, H}, Move, {os + ".relative_attention_bias"});
            for (int i = 0, n = dec ? c.n_layers : c.n_enc_layers; i < n; ++i) {
                const std::string h = stack + ".block." + std::to_string(i) + ".layer.",
                                  o = os + "." + std::to_string(i) + ".";
                for (const auto& [hn, on] : {std::pair{"q", "wq"}, {"k", "wk"}, {"v", "wv"}, {"o", "wo"}}) {
                    const std::vector<int64_t> shape = std::string_view(on) == "wo" ? std::vector<int64_t>{D, A}
                                                                             : std::vector<int64_t>{A, D};
                    add(h + "0.SelfAttention." + hn + ".weight", shape, Move, {o + "attn." + on});
                    if (dec) add(h + "1.EncDecAttention." + hn + ".weight", shape, Move, {o + "cross_attn." + on});
                }
                add(h + "0.layer_norm.weight", {D}, Move, {o + "attn_norm.weight"});
                if (dec) add(h + "1.layer_norm.weight", {D}, Move, {o + "cross_norm.weight"});
                const std::string ff = h + (dec ? "2" : "1") + ".";
                if (is_gated(c.activation)) {  // act(wi_0 x) * (wi_1 x): wi_0 is the gate
                    add(ff + "DenseReluDense.wi_0.weight", {F, D}, Move, {o + "ffn.w_gate"});
                    add(ff + "DenseReluDense.wi_1.weight", {F, D}, Move, {o + "ffn.w_up"});
                } else {
                    add(ff + "DenseReluDense.wi.weight", {F, D}, Move, {o + "ffn.w_up"});
                }
                add(ff + "DenseReluDense.wo.weight", {D, F}, Move, {o + "ffn.w_down"});
                add(ff + "layer_norm.weight", {D}, Move, {o + "ffn_norm.weight"});
            }
            add(stack + ".final_layer_norm.weight", {D}, Move, {os + ".final_norm.weight"});
        }
        return t;
    }

    // marian, bart
    const bool bart = type == "bart";
    add("final_logits_bias", {1, V}, FlattenRow, {"final_logits_bias"}, true);  // zeros when absent (as HF)
    for (const std::string stack : {"encoder", "decoder"}) {
        const bool dec = stack == "decoder";
        const std::string os = dec ? "dec" : "enc";
        if (bart) {
            add(stack + ".embed_positions.weight", {c.max_seq_len + 2, D}, SliceOffset2,
                {dec ? "pos_emb.weight" : "enc.pos_emb.weight"});
            add(stack + ".layernorm_embedding.weight", {D}, Move, {os + ".embed_norm.weight"});
            add(stack + ".layernorm_embedding.bias", {D}, Move, {os + ".embed_norm.bias"});
        } else {  // recomputed, not read; older exports still carry it: must match the table we compute
            add(stack + ".embed_positions.weight", {c.max_seq_len, D}, SinusoidalCheck, {stack}, true);
        }
        for (int i = 0, n = dec ? c.n_layers : c.n_enc_layers; i < n; ++i) {
            const std::string h = stack + ".layers." + std::to_string(i) + ".", o = os + "." + std::to_string(i) + ".";
            const auto attention = [&](const std::string& hf, const std::string& ours) {
                for (const auto& [hn, on, bn] : {std::tuple{"q_proj", "wq", "bq"}, std::tuple{"k_proj", "wk", "bk"},
                                                 std::tuple{"v_proj", "wv", "bv"}, std::tuple{"out_proj", "wo", "bo"}}) {
                    add(h + hf + "." + hn + ".weight", {D, D}, Move, {o + ours + "." + on});
                    add(h + hf + "." + hn + ".bias", {D}, Move, {o + ours + "." + bn});
                }
            };
            const auto norm = [&](const std::string& hf, const std::string& ours) {
                add(h + hf + ".weight", {D}, Move, {o + ours + ".weight"});
                add(h + hf + ".bias", {D}, Move, {o + ours + ".bias"});
            };
            attention("self_attn", "attn");
            norm("self_attn_layer_norm", "attn_norm");
            if (dec) {
                attention("encoder_attn", "cross_attn");
                norm("encoder_attn_layer_norm", "cross_norm");
            }
            add(h + "fc1.weight", {F, D}, Move, {o + "ffn.w_up"});
            add(h + "fc1.bias", {F}, Move, {o + "ffn.b_up"});
            add(h + "fc2.weight", {D, F}, Move, {o + "ffn.w_down"});
            add(h + "fc2.bias", {D}, Move, {o + "ffn.b_down"});
            norm("final_layer_norm", "ffn_norm");
        }
    }
    return t;
}

}  // namespace ts::detail
