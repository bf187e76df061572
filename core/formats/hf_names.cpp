// Hugging Face config.json keys and tensor names -> ModelConfig and our weight names, one table per family.
// Sources: transformers' GPT2Config/GPT2Model (Conv1D layout), LlamaConfig/LlamaForCausalLM, MistralConfig,
// Qwen2Config (q/k/v biases), BertConfig/BertForMaskedLM, GPTNeoXConfig/GPTNeoXForCausalLM, GemmaConfig/
// GemmaForCausalLM. Only facts of the file formats are used here.
#include "core/formats/hf_checkpoint.h"
#include "core/formats/hf_names.h"
#include "core/util/json.h"

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
    if (type == "mistral" || (type == "qwen2" && get_bool(j, "use_sliding_window", what, false))) {
        h.sliding_window = has(j, "sliding_window") ? get_int(j, "sliding_window", what, type) : 0;
        c.sliding_window = h.sliding_window;
        // Qwen2: layers from max_window_layers on slide (transformers' layer_types); Mistral: every layer.
        if (type == "qwen2" && has(j, "max_window_layers"))
            c.sliding_window_from_layer = std::min(get_int(j, "max_window_layers", what, type), c.n_layers);
    }
    return h;
}

Activation gelu_family(const std::string& act, const std::string& key, const std::string& what) {
    if (act == "gelu") return Activation::GELU;
    if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast") return Activation::GELUTanh;
    if (act == "relu") return Activation::ReLU;
    if (act == "silu" || act == "swish") return Activation::SiLU;
    fail(what, key + " '" + act + "' is not supported (gelu, gelu_new, gelu_pytorch_tanh, relu, silu)");
}

// BertForMaskedLM / BertModel: encoder-only, post-LayerNorm, learned positions + token types, embedding LayerNorm.
HfConfig bert_config(const json& j, const std::string& what) {
    const std::string type = "bert";
    HfConfig h;
    h.model_type = type;
    ModelConfig& c = h.config;
    c.arch = Arch::EncoderOnly;
    c.d_model = get_int(j, "hidden_size", what, type);
    c.n_layers = get_int(j, "num_hidden_layers", what, type);
    c.n_heads = c.n_kv_heads = get_int(j, "num_attention_heads", what, type);
    c.d_ff = get_int(j, "intermediate_size", what, type);
    c.vocab_size = get_int(j, "vocab_size", what, type);
    c.max_seq_len = get_int(j, "max_position_embeddings", what, type, 512);
    c.type_vocab_size = get_int(j, "type_vocab_size", what, type, 2);
    const std::string pos = get_string(j, "position_embedding_type", what, "absolute");
    if (pos != "absolute")
        fail(what, "position_embedding_type '" + pos + "' is not supported (only absolute)");
    if (get_bool(j, "is_decoder", what, false)) fail(what, "is_decoder = true is not supported (BERT as an encoder)");
    if (get_bool(j, "add_cross_attention", what, false)) fail(what, "add_cross_attention = true is not supported");
    if (!get_bool(j, "tie_word_embeddings", what, true))
        fail(what, "tie_word_embeddings = false is not supported (the masked-LM decoder must be the embeddings)");
    c.norm = NormKind::LayerNorm;
    c.norm_placement = NormPlacement::Post;
    c.final_norm = false;
    c.norm_eps = get_float(j, "layer_norm_eps", what, 1e-12f);
    c.activation = gelu_family(get_string(j, "hidden_act", what, "gelu"), "hidden_act", what);
    c.ffn_bias = c.attn_qkv_bias = c.attn_out_bias = c.norm_bias = true;
    c.position = PositionKind::Learned;
    c.embed_norm = true;
    c.mlm_head = true;
    c.tie_embeddings = true;
    return h;
}

// GPTNeoXForCausalLM (Pythia): pre-LayerNorm, parallel residual, partial rotary, fused per-head q/k/v, untied head.
HfConfig gpt_neox_config(const json& j, const std::string& what) {
    const std::string type = "gpt_neox";
    HfConfig h;
    h.model_type = type;
    ModelConfig& c = h.config;
    c.d_model = get_int(j, "hidden_size", what, type);
    c.n_layers = get_int(j, "num_hidden_layers", what, type);
    c.n_heads = c.n_kv_heads = get_int(j, "num_attention_heads", what, type);
    c.d_ff = get_int(j, "intermediate_size", what, type);
    c.vocab_size = get_int(j, "vocab_size", what, type);
    c.max_seq_len = get_int(j, "max_position_embeddings", what, type, 2048);
    if (has(j, "rope_scaling"))
        fail(what, "rope_scaling " + j.at("rope_scaling").dump() + " is not supported (only plain RoPE)");
    float rotary_pct = get_float(j, "rotary_pct", what, 0.25f);
    c.rope_theta = get_float(j, "rotary_emb_base", what, get_float(j, "rope_theta", what, 10000.0f));
    if (has(j, "rope_parameters")) {  // newer exports: {"rope_type": "default", "rope_theta", "partial_rotary_factor"}
        const json& rp = j.at("rope_parameters");
        if (!rp.is_object()) fail(what, "key 'rope_parameters' must be an object");
        const std::string kind = get_string(rp, "rope_type", what, "default");
        if (kind != "default")
            fail(what, "rope_parameters.rope_type '" + kind + "' is not supported (only default RoPE)");
        for (const auto& [k, v] : rp.items())
            if (k != "rope_type" && k != "rope_theta" && k != "partial_rotary_factor")
                fail(what, "rope_parameters." + k + " is not supported");
        c.rope_theta = get_float(rp, "rope_theta", what, c.rope_theta);
        rotary_pct = get_float(rp, "partial_rotary_factor", what, rotary_pct);
    }
    if (c.d_model % c.n_heads != 0)
        fail(what, "hidden_size " + std::to_string(c.d_model) + " is not divisible by num_attention_heads " +
                       std::to_string(c.n_heads));
    const int d_head = c.d_model / c.n_heads;
    // HF: rotary_ndims = int(head_size * rotary_pct) (truncation).
    const int rotary = static_cast<int>(static_cast<double>(d_head) * static_cast<double>(rotary_pct));
    if (rotary_pct > 1.0f || rotary < 2 || rotary % 2 != 0)
        fail(what, "rotary_pct " + std::to_string(rotary_pct) + " gives " + std::to_string(rotary) +
                       " rotary features of d_head " + std::to_string(d_head) + ": need an even number in [2, d_head]");
    c.position = PositionKind::RoPE;
    c.rope_layout = RopeLayout::HalfSplit;
    c.rotary_dim = rotary == d_head ? 0 : rotary;
    c.parallel_residual = get_bool(j, "use_parallel_residual", what, true);
    c.norm = NormKind::LayerNorm;
    c.norm_eps = get_float(j, "layer_norm_eps", what, 1e-5f);
    c.norm_bias = true;
    c.activation = gelu_family(get_string(j, "hidden_act", what, "gelu"), "hidden_act", what);
    c.ffn_bias = true;
    c.attn_qkv_bias = c.attn_out_bias = get_bool(j, "attention_bias", what, true);
    c.tie_embeddings = get_bool(j, "tie_word_embeddings", what, false);
    return h;
}

// GemmaForCausalLM: Llama-like with RMSNorm (1 + w), GeGLU (tanh), embeddings x sqrt(d_model), explicit head_dim.
HfConfig gemma_config(const json& j, const std::string& what) {
    const std::string type = "gemma";
    HfConfig h;
    h.model_type = type;
    ModelConfig& c = h.config;
    c.d_model = get_int(j, "hidden_size", what, type);
    c.d_ff = get_int(j, "intermediate_size", what, type);
    c.n_layers = get_int(j, "num_hidden_layers", what, type);
    c.n_heads = get_int(j, "num_attention_heads", what, type);
    c.n_kv_heads = get_int(j, "num_key_value_heads", what, type, c.n_heads);
    c.head_dim = get_int(j, "head_dim", what, type, 256);  // GemmaConfig's default
    c.vocab_size = get_int(j, "vocab_size", what, type);
    c.max_seq_len = get_int(j, "max_position_embeddings", what, type, 8192);
    if (has(j, "rope_scaling"))
        fail(what, "rope_scaling " + j.at("rope_scaling").dump() + " is not supported (only plain RoPE)");
    c.norm = NormKind::RMSNorm;
    c.norm_bias = false;
    c.norm_eps = get_float(j, "rms_norm_eps", what, 1e-6f);
    // GemmaMLP uses hidden_activation; when it is absent transformers ignores hidden_act and uses
    // gelu_pytorch_tanh (the legacy "gelu" in early Gemma configs meant the tanh form).
    const std::string act = get_string(j, "hidden_activation", what, "gelu_pytorch_tanh");
    if (act == "gelu_pytorch_tanh" || act == "gelu_new" || act == "gelu_fast") c.activation = Activation::GeGLUTanh;
    else if (act == "gelu") c.activation = Activation::GeGLU;
    else fail(what, "hidden_activation '" + act + "' is not supported (gelu_pytorch_tanh, gelu)");
    c.ffn_bias = false;
    c.attn_qkv_bias = c.attn_out_bias = get_bool(j, "attention_bias", what, false);
    c.position = PositionKind::RoPE;
    c.rope_layout = RopeLayout::HalfSplit;
    c.rope_theta = get_float(j, "rope_theta", what, 10000.0f);
    // GemmaModel multiplies the embeddings by torch.tensor(hidden_size ** 0.5, dtype=the model dtype). In F32 that
    // is sqrt(d_model) rounded once to float, the same number as our sqrtf(d_model); a BF16 model would use the
    // BF16-rounded normalizer (45.25 for 2048, not 45.2548), which we do not imitate since we compute in F32.
    c.scale_embeddings = true;
    c.tie_embeddings = get_bool(j, "tie_word_embeddings", what, true);
    return h;
}

}  // namespace

std::vector<std::string> hf_supported_model_types() {
    return {"gpt2", "llama", "mistral", "qwen2", "bert", "gpt_neox", "gemma", "t5", "marian", "bart"};
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
    } else if (type == "bert") {
        h = bert_config(j, what);
    } else if (type == "gpt_neox") {
        h = gpt_neox_config(j, what);
    } else if (type == "gemma") {
        h = gemma_config(j, what);
    } else {
        std::string list;
        for (const auto& t : hf_supported_model_types()) list += (list.empty() ? "" : ", ") + t;
        fail(what, "model_type '" + type + "' is not supported (supported: " + list + ")");
    }
    if (!detail::hf_is_seq2seq_type(type) && type != "bert") {
        h.config.arch = Arch::DecoderOnly;
        h.config.norm_placement = NormPlacement::Pre;
        h.config.final_norm = true;
    }
    h.config.name = get_string(j, "_name_or_path", what, type);
    // Special token ids (null or absent: -1; a list, as Llama 3's eos: its first entry).
    const auto token_id = [&](const char* key) -> int {
        if (!has(j, key)) return -1;
        const json& v = j.at(key).is_array() && !j.at(key).empty() ? j.at(key).at(0) : j.at(key);
        if (!v.is_number_integer()) fail(what, "key '" + std::string(key) + "' must be a token id, found " + json_excerpt(v));
        if (v.get<int64_t>() < 0 || v.get<int64_t>() >= h.config.vocab_size) {
            // transformers loads such a config (the id only matters when generation uses it): warn, ignore the id.
            h.warnings.push_back(what + ": " + key + " " + json_excerpt(v) + " is outside the vocabulary (" +
                                 std::to_string(h.config.vocab_size) + " tokens); ignored");
            return -1;
        }
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

json hf_parse_json(std::string_view text, const std::string& what) { return parse_json(text, what); }

HfTable hf_tensor_table(const std::string& model_type, const ModelConfig& c) {
    const int64_t D = c.d_model, F = c.d_ff, V = c.vocab_size, Dh = c.d_head();
    const int64_t Q = c.n_heads * Dh, K = c.n_kv_heads * Dh;
    HfTable t;
    auto add = [&](const std::string& hf, std::vector<int64_t> shape, HfTransform tr, std::vector<std::string> ours,
                   bool optional = false) {
        t[hf] = HfTensorRule{std::move(shape), tr, std::move(ours), optional, c.n_heads, false};
    };
    using enum HfTransform;
    if (hf_is_seq2seq_type(model_type)) return hf_seq2seq_tensor_table(model_type, c);
    if (model_type == "bert") {
        // BertForMaskedLM (prefix "bert."): post-LN layers; cls.predictions is the masked-LM head.
        add("embeddings.word_embeddings.weight", {V, D}, Move, {"tok_emb.weight"});
        add("embeddings.position_embeddings.weight", {c.max_seq_len, D}, Move, {"pos_emb.weight"});
        add("embeddings.token_type_embeddings.weight", {c.type_vocab_size, D}, Move, {"tok_type_emb.weight"});
        add("embeddings.LayerNorm.weight", {D}, Move, {"enc.embed_norm.weight"});
        add("embeddings.LayerNorm.bias", {D}, Move, {"enc.embed_norm.bias"});
        for (int i = 0; i < c.n_layers; ++i) {
            const std::string h = "encoder.layer." + std::to_string(i) + ".", o = "enc." + std::to_string(i) + ".";
            for (const auto& [hf, ours] : {std::pair{"query", "q"}, std::pair{"key", "k"}, std::pair{"value", "v"}}) {
                add(h + "attention.self." + hf + ".weight", {D, D}, Move, {o + "attn.w" + ours});
                add(h + "attention.self." + hf + ".bias", {D}, Move, {o + "attn.b" + ours});
            }
            add(h + "attention.output.dense.weight", {D, D}, Move, {o + "attn.wo"});
            add(h + "attention.output.dense.bias", {D}, Move, {o + "attn.bo"});
            add(h + "attention.output.LayerNorm.weight", {D}, Move, {o + "attn_norm.weight"});
            add(h + "attention.output.LayerNorm.bias", {D}, Move, {o + "attn_norm.bias"});
            add(h + "intermediate.dense.weight", {F, D}, Move, {o + "ffn.w_up"});
            add(h + "intermediate.dense.bias", {F}, Move, {o + "ffn.b_up"});
            add(h + "output.dense.weight", {D, F}, Move, {o + "ffn.w_down"});
            add(h + "output.dense.bias", {D}, Move, {o + "ffn.b_down"});
            add(h + "output.LayerNorm.weight", {D}, Move, {o + "ffn_norm.weight"});
            add(h + "output.LayerNorm.bias", {D}, Move, {o + "ffn_norm.bias"});
        }
        if (!c.mlm_head) return t;  // BertModel without the masked-LM head (see load_hf_model)
        add("cls.predictions.transform.dense.weight", {D, D}, Move, {"mlm_head.dense.weight"});
        add("cls.predictions.transform.dense.bias", {D}, Move, {"mlm_head.dense.bias"});
        add("cls.predictions.transform.LayerNorm.weight", {D}, Move, {"mlm_head.norm.weight"});
        add("cls.predictions.transform.LayerNorm.bias", {D}, Move, {"mlm_head.norm.bias"});
        add("cls.predictions.bias", {V}, Move, {"mlm_head.bias"});
        add("cls.predictions.decoder.weight", {V, D}, TiedHead, {"tok_emb.weight"}, true);
        add("cls.predictions.decoder.bias", {V}, TiedHead, {"mlm_head.bias"}, true);
        for (auto& [name, rule] : t) rule.outside_prefix = name.rfind("cls.", 0) == 0;
        return t;
    }
    if (model_type == "gpt_neox") {
        // GPTNeoXForCausalLM (prefix "gpt_neox."): fused per-head q/k/v, two LayerNorms per layer, embed_out head.
        add("embed_in.weight", {V, D}, Move, {"tok_emb.weight"});
        for (int i = 0; i < c.n_layers; ++i) {
            const std::string h = "layers." + std::to_string(i) + ".", o = "dec." + std::to_string(i) + ".";
            add(h + "input_layernorm.weight", {D}, Move, {o + "attn_norm.weight"});
            add(h + "input_layernorm.bias", {D}, Move, {o + "attn_norm.bias"});
            add(h + "post_attention_layernorm.weight", {D}, Move, {o + "ffn_norm.weight"});
            add(h + "post_attention_layernorm.bias", {D}, Move, {o + "ffn_norm.bias"});
            add(h + "attention.query_key_value.weight", {3 * Q, D}, SplitQkvPerHeadW,
                {o + "attn.wq", o + "attn.wk", o + "attn.wv"});
            add(h + "attention.dense.weight", {D, Q}, Move, {o + "attn.wo"});
            if (c.attn_qkv_bias) {
                add(h + "attention.query_key_value.bias", {3 * Q}, SplitQkvPerHeadB,
                    {o + "attn.bq", o + "attn.bk", o + "attn.bv"});
                add(h + "attention.dense.bias", {D}, Move, {o + "attn.bo"});
            }
            add(h + "mlp.dense_h_to_4h.weight", {F, D}, Move, {o + "ffn.w_up"});
            add(h + "mlp.dense_h_to_4h.bias", {F}, Move, {o + "ffn.b_up"});
            add(h + "mlp.dense_4h_to_h.weight", {D, F}, Move, {o + "ffn.w_down"});
            add(h + "mlp.dense_4h_to_h.bias", {D}, Move, {o + "ffn.b_down"});
        }
        add("final_layer_norm.weight", {D}, Move, {"dec.final_norm.weight"});
        add("final_layer_norm.bias", {D}, Move, {"dec.final_norm.bias"});
        if (c.tie_embeddings) add("embed_out.weight", {V, D}, TiedHead, {"tok_emb.weight"}, true);
        else add("embed_out.weight", {V, D}, Move, {"lm_head.weight"});
        t["embed_out.weight"].outside_prefix = true;
        return t;
    }
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
        // Gemma's RMSNorm computes x_hat * (1 + w) (in float32): the +1 is folded into the weights here, once at
        // load, so the forward's plain RMSNorm (x_hat * w) gives the same numbers. The Model panel and any export
        // therefore show 1 + w, not the file's w.
        const HfTransform nt = model_type == "gemma" ? AddOne : Move;
        add("embed_tokens.weight", {V, D}, Move, {"tok_emb.weight"});
        for (int i = 0; i < c.n_layers; ++i) {
            const std::string h = "layers." + std::to_string(i) + ".", o = "dec." + std::to_string(i) + ".";
            add(h + "input_layernorm.weight", {D}, nt, {o + "attn_norm.weight"});
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
            add(h + "post_attention_layernorm.weight", {D}, nt, {o + "ffn_norm.weight"});
            add(h + "mlp.gate_proj.weight", {F, D}, Move, {o + "ffn.w_gate"});
            add(h + "mlp.up_proj.weight", {F, D}, Move, {o + "ffn.w_up"});
            add(h + "mlp.down_proj.weight", {D, F}, Move, {o + "ffn.w_down"});
        }
        add("norm.weight", {D}, nt, {"dec.final_norm.weight"});
    }
    if (c.tie_embeddings) add("lm_head.weight", {V, D}, TiedHead, {"tok_emb.weight"}, true);
    else add("lm_head.weight", {V, D}, Move, {"lm_head.weight"});
    t["lm_head.weight"].outside_prefix = true;
    return t;
}

std::string_view hf_model_prefix(const std::string& model_type) {
    if (model_type == "t5") return "";  // T5ForConditionalGeneration: shared., encoder., decoder. at the top
    if (model_type == "gpt2") return "transformer.";
    if (model_type == "bert") return "bert.";
    if (model_type == "gpt_neox") return "gpt_neox.";
    return "model.";
}

std::string hf_canonical_name(const std::string& model_type, std::string_view name) {
    const std::string_view prefix = hf_model_prefix(model_type);  // "" for t5: shared., encoder., decoder.
    if (!prefix.empty() && name.substr(0, prefix.size()) == prefix) name.remove_prefix(prefix.size());
    std::string out(name);
    if (model_type == "bert") {
        // Checkpoints converted from the original TensorFlow BERT (bert-base-uncased, bert-base-chinese, ...) name
        // LayerNorm parameters gamma / beta; transformers renames them to weight / bias on load, and so do we.
        for (const auto& [old_leaf, new_leaf] : {std::pair{"LayerNorm.gamma", "LayerNorm.weight"},
                                                 std::pair{"LayerNorm.beta", "LayerNorm.bias"}}) {
            const std::string_view o = old_leaf;
            if (out.size() >= o.size() && out.compare(out.size() - o.size(), o.size(), o) == 0)
                out = out.substr(0, out.size() - o.size()) + new_leaf;
        }
    }
    return out;
}

bool hf_is_ignored_buffer(const std::string& model_type, std::string_view n) {
    // T5 exports made before transformers 4 carry a cross-attention bias table the model never used (HF ignores it
    // on load: _keys_to_ignore_on_load_unexpected).
    if (model_type == "t5") return n == "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight";
    if (model_type == "bert")
        return n == "embeddings.position_ids" || n.substr(0, 7) == "pooler." ||
               n.substr(0, 21) == "cls.seq_relationship.";
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
    if (model_type == "gpt_neox")
        return n == ".attention.bias" || n == ".attention.masked_bias" || n == ".attention.rotary_emb.inv_freq";
    return n == ".self_attn.rotary_emb.inv_freq";
}

}  // namespace detail
}  // namespace ts
