// Hugging Face config.json keys and tensor names -> ModelConfig and our weight names, one table per family.
// Sources: transformers' GPT2Config/GPT2Model (Conv1D layout), LlamaConfig/LlamaForCausalLM, MistralConfig,
// Qwen2Config (q/k/v biases). Only facts of the file formats are used here.
#include "core/hf_checkpoint.h"
#include "core/hf_names.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <stdexcept>

namespace ts {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& what, const std::string& msg) { throw std::runtime_error(what + ": " + msg); }

/// Key present and not null.
bool has(const json& j, const char* key) { return j.contains(key) && !j.at(key).is_null(); }

int get_int(const json& j, const char* key, const std::string& what, const std::string& type, int def = -1) {
    if (!has(j, key)) {
        if (def >= 0) return def;
        fail(what, "missing key '" + std::string(key) + "' (required for model_type " + type + ")");
    }
    const json& v = j.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > (int64_t(1) << 30))
        fail(what, "key '" + std::string(key) + "' must be a positive integer up to 2^30, found " + v.dump());
    return v.get<int>();
}

float get_float(const json& j, const char* key, const std::string& what, float def) {
    if (!has(j, key)) return def;
    const json& v = j.at(key);
    if (!v.is_number() || v.get<double>() <= 0.0) fail(what, "key '" + std::string(key) + "' must be a positive "
                                                                 "number, found " + v.dump());
    return v.get<float>();
}

bool get_bool(const json& j, const char* key, const std::string& what, bool def) {
    if (!has(j, key)) return def;
    if (!j.at(key).is_boolean()) fail(what, "key '" + std::string(key) + "' must be true or false");
    return j.at(key).get<bool>();
}

std::string get_string(const json& j, const char* key, const std::string& what, const std::string& def) {
    if (!has(j, key)) return def;
    if (!j.at(key).is_string()) fail(what, "key '" + std::string(key) + "' must be a string");
    return j.at(key).get<std::string>();
}

bool is_llama_family(const std::string& t) { return t == "llama" || t == "mistral" || t == "qwen2"; }

HfConfig gpt2_config(const json& j, const std::string& what) {
    HfConfig h;
    h.model_type = "gpt2";
    ModelConfig& c = h.config;
    c.d_model = get_int(j, "n_embd", what, "gpt2");
    c.n_layers = get_int(j, "n_layer", what, "gpt2");
    c.n_heads = c.n_kv_heads = get_int(j, "n_head", what, "gpt2");
    c.vocab_size = get_int(j, "vocab_size", what, "gpt2");
    c.max_seq_len = get_int(j, "n_positions", what, "gpt2", get_int(j, "n_ctx", what, "gpt2", 1024));
    c.d_ff = get_int(j, "n_inner", what, "gpt2", 4 * c.d_model);
    c.norm = NormKind::LayerNorm;
    c.norm_eps = get_float(j, "layer_norm_epsilon", what, 1e-5f);
    const std::string act = get_string(j, "activation_function", what, "gelu_new");
    if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast") c.activation = Activation::GELUTanh;
    else if (act == "gelu") c.activation = Activation::GELU;
    else if (act == "relu") c.activation = Activation::ReLU;
    else if (act == "silu" || act == "swish") c.activation = Activation::SiLU;
    else fail(what, "activation_function '" + act + "' is not supported (gelu_new, gelu_pytorch_tanh, gelu, relu, silu)");
    c.ffn_bias = c.attn_qkv_bias = c.attn_out_bias = c.norm_bias = true;
    c.position = PositionKind::Learned;
    c.scale_attn = get_bool(j, "scale_attn_weights", what, true);
    if (get_bool(j, "scale_attn_by_inverse_layer_idx", what, false))
        fail(what, "scale_attn_by_inverse_layer_idx = true is not supported");
    if (get_bool(j, "add_cross_attention", what, false)) fail(what, "add_cross_attention = true is not supported");
    c.tie_embeddings = get_bool(j, "tie_word_embeddings", what, true);
    return h;
}

HfConfig llama_config(const json& j, const std::string& what, const std::string& type) {
    HfConfig h;
    h.model_type = type;
    ModelConfig& c = h.config;
    c.d_model = get_int(j, "hidden_size", what, type);
    c.d_ff = get_int(j, "intermediate_size", what, type);
    c.n_layers = get_int(j, "num_hidden_layers", what, type);
    c.n_heads = get_int(j, "num_attention_heads", what, type);
    c.n_kv_heads = get_int(j, "num_key_value_heads", what, type, c.n_heads);
    c.vocab_size = get_int(j, "vocab_size", what, type);
    c.max_seq_len = get_int(j, "max_position_embeddings", what, type, 2048);
    if (has(j, "head_dim") && (c.d_model % c.n_heads || get_int(j, "head_dim", what, type) != c.d_model / c.n_heads))
        fail(what, "head_dim " + j.at("head_dim").dump() + " differs from hidden_size / num_attention_heads = " +
                       std::to_string(c.d_model) + " / " + std::to_string(c.n_heads) + ": not supported");
    if (has(j, "rope_scaling"))
        fail(what, "rope_scaling " + j.at("rope_scaling").dump() + " is not supported (only plain RoPE)");
    c.norm = NormKind::RMSNorm;
    c.norm_bias = false;
    c.norm_eps = get_float(j, "rms_norm_eps", what, 1e-6f);
    const std::string act = get_string(j, "hidden_act", what, "silu");
    if (act == "silu") c.activation = Activation::SwiGLU;
    else if (act == "gelu") c.activation = Activation::GeGLU;
    else fail(what, "hidden_act '" + act + "' is not supported (silu, gelu)");
    if (get_bool(j, "mlp_bias", what, false)) fail(what, "mlp_bias = true is not supported");
    c.ffn_bias = false;
    c.attn_qkv_bias = type == "qwen2" || get_bool(j, "attention_bias", what, false);
    c.attn_out_bias = type != "qwen2" && get_bool(j, "attention_bias", what, false);
    c.position = PositionKind::RoPE;
    c.rope_layout = RopeLayout::HalfSplit;
    c.rope_theta = get_float(j, "rope_theta", what, 10000.0f);
    c.tie_embeddings = get_bool(j, "tie_word_embeddings", what, false);
    if (type == "mistral" || (type == "qwen2" && get_bool(j, "use_sliding_window", what, false)))
        h.sliding_window = has(j, "sliding_window") ? get_int(j, "sliding_window", what, type) : 0;
    return h;
}

}  // namespace

std::vector<std::string> hf_supported_model_types() {
    return {"gpt2", "llama", "mistral", "qwen2", "t5", "marian", "bart"};
}

HfConfig parse_hf_config(std::string_view json_text, const std::string& what) {
    const json j = detail::hf_parse_json(json_text, what);
    if (!j.is_object()) fail(what, "not a JSON object");
    if (!j.contains("model_type") || !j["model_type"].is_string())
        fail(what, "no string \"model_type\" key: not a Hugging Face config.json");
    const std::string type = j["model_type"].get<std::string>();
    if (has(j, "quantization_config")) fail(what, "quantized checkpoints (quantization_config) are not supported");
    HfConfig h;
    if (type == "gpt2") {
        h = gpt2_config(j, what);
    } else if (is_llama_family(type)) {
        h = llama_config(j, what, type);
    } else if (detail::hf_is_seq2seq_type(type)) {
        h = detail::hf_seq2seq_config(j, what, type);
    } else {
        std::string list;
        for (const auto& t : hf_supported_model_types()) list += (list.empty() ? "" : ", ") + t;
        fail(what, "model_type '" + type + "' is not supported (supported: " + list + ")");
    }
    if (!detail::hf_is_seq2seq_type(type)) {
        h.config.arch = Arch::DecoderOnly;
        h.config.norm_placement = NormPlacement::Pre;
        h.config.final_norm = true;
    }
    h.config.name = get_string(j, "_name_or_path", what, type);
    // Special token ids (null or absent: -1; a list, as Llama 3's eos: its first entry).
    const auto token_id = [&](const char* key) -> int {
        if (!has(j, key)) return -1;
        const json& v = j.at(key).is_array() && !j.at(key).empty() ? j.at(key).at(0) : j.at(key);
        if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= h.config.vocab_size)
            fail(what, "key '" + std::string(key) + "' must be a token id in [0, vocab_size), found " + v.dump());
        return v.get<int>();
    };
    h.bos_token_id = token_id("bos_token_id");
    h.eos_token_id = token_id("eos_token_id");
    h.pad_token_id = token_id("pad_token_id");
    h.decoder_start_token_id = token_id("decoder_start_token_id");
    try {
        h.config.validate();
    } catch (const std::invalid_argument& e) {
        fail(what, e.what());
    }
    return h;
}

namespace detail {

json hf_parse_json(std::string_view text, const std::string& what) {
    try {
        return json::parse(text.begin(), text.end(), [&](int depth, json::parse_event_t, json&) {
            if (depth > 64) fail(what, "JSON nested deeper than 64 levels");
            return true;
        });
    } catch (const json::exception& e) {
        fail(what, std::string("invalid JSON: ") + e.what());
    }
}

HfTable hf_tensor_table(const std::string& model_type, const ModelConfig& c) {
    const int64_t D = c.d_model, F = c.d_ff, V = c.vocab_size, Dh = c.d_head();
    const int64_t Q = c.n_heads * Dh, K = c.n_kv_heads * Dh;
    HfTable t;
    auto add = [&](const std::string& hf, std::vector<int64_t> shape, HfTransform tr, std::vector<std::string> ours,
                   bool optional = false) { t[hf] = HfTensorRule{std::move(shape), tr, std::move(ours), optional}; };
    using enum HfTransform;
    if (hf_is_seq2seq_type(model_type)) return hf_seq2seq_tensor_table(model_type, c);
    if (model_type == "gpt2") {
        add("wte.weight", {V, D}, Move, {"tok_emb.weight"});
        add("wpe.weight", {c.max_seq_len, D}, Move, {"pos_emb.weight"});
        for (int i = 0; i < c.n_layers; ++i) {
            const std::string h = "h." + std::to_string(i) + ".", o = "dec." + std::to_string(i) + ".";
            add(h + "ln_1.weight", {D}, Move, {o + "attn_norm.weight"});
            add(h + "ln_1.bias", {D}, Move, {o + "attn_norm.bias"});
            add(h + "attn.c_attn.weight", {D, 3 * D}, SplitQkvW, {o + "attn.wq", o + "attn.wk", o + "attn.wv"});
            add(h + "attn.c_attn.bias", {3 * D}, SplitQkvB, {o + "attn.bq", o + "attn.bk", o + "attn.bv"});
            add(h + "attn.c_proj.weight", {D, D}, Transpose, {o + "attn.wo"});
            add(h + "attn.c_proj.bias", {D}, Move, {o + "attn.bo"});
            add(h + "ln_2.weight", {D}, Move, {o + "ffn_norm.weight"});
            add(h + "ln_2.bias", {D}, Move, {o + "ffn_norm.bias"});
            add(h + "mlp.c_fc.weight", {D, F}, Transpose, {o + "ffn.w_up"});
            add(h + "mlp.c_fc.bias", {F}, Move, {o + "ffn.b_up"});
            add(h + "mlp.c_proj.weight", {F, D}, Transpose, {o + "ffn.w_down"});
            add(h + "mlp.c_proj.bias", {D}, Move, {o + "ffn.b_down"});
        }
        add("ln_f.weight", {D}, Move, {"dec.final_norm.weight"});
        add("ln_f.bias", {D}, Move, {"dec.final_norm.bias"});
    } else {
        add("embed_tokens.weight", {V, D}, Move, {"tok_emb.weight"});
        for (int i = 0; i < c.n_layers; ++i) {
            const std::string h = "layers." + std::to_string(i) + ".", o = "dec." + std::to_string(i) + ".";
            add(h + "input_layernorm.weight", {D}, Move, {o + "attn_norm.weight"});
            add(h + "self_attn.q_proj.weight", {Q, D}, Move, {o + "attn.wq"});
            add(h + "self_attn.k_proj.weight", {K, D}, Move, {o + "attn.wk"});
            add(h + "self_attn.v_proj.weight", {K, D}, Move, {o + "attn.wv"});
            add(h + "self_attn.o_proj.weight", {D, Q}, Move, {o + "attn.wo"});
            if (c.attn_qkv_bias) {
                add(h + "self_attn.q_proj.bias", {Q}, Move, {o + "attn.bq"});
                add(h + "self_attn.k_proj.bias", {K}, Move, {o + "attn.bk"});
                add(h + "self_attn.v_proj.bias", {K}, Move, {o + "attn.bv"});
            }
            if (c.attn_out_bias) add(h + "self_attn.o_proj.bias", {D}, Move, {o + "attn.bo"});
            add(h + "post_attention_layernorm.weight", {D}, Move, {o + "ffn_norm.weight"});
            add(h + "mlp.gate_proj.weight", {F, D}, Move, {o + "ffn.w_gate"});
            add(h + "mlp.up_proj.weight", {F, D}, Move, {o + "ffn.w_up"});
            add(h + "mlp.down_proj.weight", {D, F}, Move, {o + "ffn.w_down"});
        }
        add("norm.weight", {D}, Move, {"dec.final_norm.weight"});
    }
    if (c.tie_embeddings) add("lm_head.weight", {V, D}, TiedHead, {"tok_emb.weight"}, true);
    else add("lm_head.weight", {V, D}, Move, {"lm_head.weight"});
    return t;
}

std::string hf_canonical_name(const std::string& model_type, std::string_view name) {
    if (model_type == "t5") return std::string(name);  // T5ForConditionalGeneration: shared., encoder., decoder.
    const std::string_view prefix = model_type == "gpt2" ? "transformer." : "model.";
    if (name.substr(0, prefix.size()) == prefix) name.remove_prefix(prefix.size());
    return std::string(name);
}

bool hf_is_ignored_buffer(const std::string& model_type, std::string_view n) {
    // T5 exports made before transformers 4 carry a cross-attention bias table the model never used (HF ignores it
    // on load: _keys_to_ignore_on_load_unexpected).
    if (model_type == "t5") return n == "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight";
    // "<stack>.<digits>.<suffix>" with the family's stack and buffer suffixes.
    const bool gpt2 = model_type == "gpt2";
    const std::string_view stack = gpt2 ? "h." : "layers.";
    if (n.substr(0, stack.size()) != stack) return false;
    n.remove_prefix(stack.size());
    size_t k = 0;
    while (k < n.size() && std::isdigit(static_cast<unsigned char>(n[k]))) ++k;
    if (k == 0) return false;
    n.remove_prefix(k);
    if (gpt2) return n == ".attn.bias" || n == ".attn.masked_bias";
    return n == ".self_attn.rotary_emb.inv_freq";
}

}  // namespace detail
}  // namespace ts
