// GGUF -> Model (see core/formats/gguf_model.h). Sources: llama.cpp's convert_hf_to_gguf.py and conversion/*.py (which
// keys and tensors each family writes, LlamaModel.permute, Gemma's norm + 1), gguf-py constants.py (tensor names).
#include "core/formats/gguf_model.h"

#include "core/model/half.h"
#include "core/model/nonfinite.h"
#include "core/util/utf8.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>
#include <type_traits>

namespace ts {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

[[noreturn]] void fail(const std::string& what, const std::string& msg) { throw std::runtime_error(what + ": " + msg); }

const GgufValue& need(const GgufHeader& h, const std::string& key, const std::string& what) {
    const GgufValue* v = h.find(key);
    if (!v) fail(what, "no metadata key '" + key + "'");
    return *v;
}

int64_t need_int(const GgufHeader& h, const std::string& key, const std::string& what) {
    const GgufValue& v = need(h, key, what);
    if (!v.is_integer()) fail(what, "metadata '" + key + "' must be an integer, found " + v.describe());
    return v.integer;
}

std::optional<double> opt_number(const GgufHeader& h, const std::string& key, const std::string& what) {
    const GgufValue* v = h.find(key);
    if (!v) return std::nullopt;
    if (!v->is_number()) fail(what, "metadata '" + key + "' must be a number, found " + v->describe());
    return v->as_double();
}

enum class Transform {
    Move,
    Unpermute,   ///< llama Q/K rows: ggml's interleaved RoPE pairs back to HF's halves (heads in `heads`)
    SplitRows3,  ///< gpt2 / gptneox attn_qkv (3 D, ...) -> q, k, v rows
    Drop         ///< read and checked, not used (t5's cross-attention bias table, which HF ignores too)
};

struct Rule {
    std::vector<int64_t> shape;  ///< torch order
    Transform transform = Transform::Move;
    std::vector<std::string> ours;
    int heads = 0;
    bool optional = false;
    bool matrix = false;  ///< read by the products / the embedding lookup only: may stay quantized (Storage::Ggml)
};

using Table = std::map<std::string, Rule, std::less<>>;

Table tensor_table(const std::string& arch, const ModelConfig& c) {
    Table t;
    const int64_t D = c.d_model, F = c.d_ff, V = c.vocab_size;
    const int64_t dh = c.head_dim ? c.head_dim : c.d_model / c.n_heads;
    const int64_t Q = c.n_heads * dh, K = c.n_kv_heads * dh;
    const auto add = [&](const std::string& name, std::vector<int64_t> shape, std::vector<std::string> ours,
                         Transform tr = Transform::Move, int heads = 0) {
        // "attn.w" also finds cross_attn.w*; a fused qkv matrix (three names) is a matrix when it has two dims.
        const bool matrix = ours.size() == 1
            ? (ours[0] == "tok_emb.weight" || ours[0] == "lm_head.weight" ||
               ours[0].find("attn.w") != std::string::npos || ours[0].find(".ffn.w_") != std::string::npos)
            : shape.size() == 2;
        t[name] = Rule{std::move(shape), tr, std::move(ours), heads, false, matrix};
    };
    // A linear layer's weight and bias, a LayerNorm's weight and bias (the post-LN and GPT-style families).
    const auto linear = [&](const std::string& g, int64_t out, int64_t in, const std::string& w, const std::string& b) {
        add(g + ".weight", {out, in}, {w});
        add(g + ".bias", {out}, {b});
    };
    const auto layer_norm = [&](const std::string& g, const std::string& ours) {
        add(g + ".weight", {D}, {ours + ".weight"});
        add(g + ".bias", {D}, {ours + ".bias"});
    };
    add("token_embd.weight", {V, D}, {"tok_emb.weight"});
    if (arch == "t5") {
        // T5Model (convert_hf_to_gguf.py): enc.blk.N / dec.blk.N, one relative-position table per stack in block 0.
        for (const std::string stack : {"enc", "dec"}) {
            const bool dec = stack == "dec";
            const std::string g = stack + ".blk.";
            add(g + "0.attn_rel_b.weight", {c.relative_attention_num_buckets, c.n_heads},
                {stack + ".relative_attention_bias"});
            if (dec) {
                add(g + "0.cross_attn_rel_b.weight", {c.relative_attention_num_buckets, c.n_heads}, {},
                    Transform::Drop);
                t.at(g + "0.cross_attn_rel_b.weight").optional = true;
            }
            for (int i = 0, n = dec ? c.n_layers : c.n_enc_layers; i < n; ++i) {
                const std::string b = g + std::to_string(i) + ".", o = stack + "." + std::to_string(i) + ".";
                const std::vector<std::string> parts =
                    dec ? std::vector<std::string>{"attn", "cross_attn"} : std::vector<std::string>{"attn"};
                for (const std::string& part : parts) {
                    add(b + part + "_q.weight", {Q, D}, {o + part + ".wq"});
                    add(b + part + "_k.weight", {Q, D}, {o + part + ".wk"});
                    add(b + part + "_v.weight", {Q, D}, {o + part + ".wv"});
                    add(b + part + "_o.weight", {D, Q}, {o + part + ".wo"});
                    add(b + part + "_norm.weight", {D},
                        {o + (part == "attn" ? "attn_norm.weight" : "cross_norm.weight")});
                }
                add(b + "ffn_norm.weight", {D}, {o + "ffn_norm.weight"});
                if (is_gated(c.activation)) add(b + "ffn_gate.weight", {F, D}, {o + "ffn.w_gate"});
                add(b + "ffn_up.weight", {F, D}, {o + "ffn.w_up"});
                add(b + "ffn_down.weight", {D, F}, {o + "ffn.w_down"});
            }
            add(stack + ".output_norm.weight", {D}, {stack + ".final_norm.weight"});
        }
    } else if (arch == "bert") {
        // BertModel (convert_hf_to_gguf.py): post-LayerNorm encoder; the masked-LM head and the pooler are dropped.
        add("position_embd.weight", {c.max_seq_len, D}, {"pos_emb.weight"});
        if (c.type_vocab_size > 0) add("token_types.weight", {c.type_vocab_size, D}, {"tok_type_emb.weight"});
        layer_norm("token_embd_norm", "enc.embed_norm");
        for (int i = 0; i < c.n_layers; ++i) {
            const std::string b = "blk." + std::to_string(i) + ".", o = "enc." + std::to_string(i) + ".";
            for (const std::string x : {"q", "k", "v"})
                linear(b + "attn_" + x, D, D, o + "attn.w" + x, o + "attn.b" + x);
            linear(b + "attn_output", D, D, o + "attn.wo", o + "attn.bo");
            layer_norm(b + "attn_output_norm", o + "attn_norm");
            linear(b + "ffn_up", F, D, o + "ffn.w_up", o + "ffn.b_up");
            linear(b + "ffn_down", D, F, o + "ffn.w_down", o + "ffn.b_down");
            layer_norm(b + "layer_output_norm", o + "ffn_norm");
        }
    } else if (arch == "gpt2" || arch == "gptneox") {
        // gptneox: GPTNeoXModel regroups HF's per-head [q k v] rows into [all q; all k; all v], as gpt2 stores them.
        if (arch == "gpt2") add("position_embd.weight", {c.max_seq_len, D}, {"pos_emb.weight"});
        for (int i = 0; i < c.n_layers; ++i) {
            const std::string b = "blk." + std::to_string(i) + ".", o = "dec." + std::to_string(i) + ".";
            layer_norm(b + "attn_norm", o + "attn_norm");
            add(b + "attn_qkv.weight", {3 * D, D}, {o + "attn.wq", o + "attn.wk", o + "attn.wv"}, Transform::SplitRows3);
            add(b + "attn_qkv.bias", {3 * D}, {o + "attn.bq", o + "attn.bk", o + "attn.bv"}, Transform::SplitRows3);
            linear(b + "attn_output", D, D, o + "attn.wo", o + "attn.bo");
            layer_norm(b + "ffn_norm", o + "ffn_norm");
            linear(b + "ffn_up", F, D, o + "ffn.w_up", o + "ffn.b_up");
            linear(b + "ffn_down", D, F, o + "ffn.w_down", o + "ffn.b_down");
        }
        layer_norm("output_norm", "dec.final_norm");
    } else {
        // Only llama's converter permutes Q and K (qwen2 and gemma keep HF's half-split rows: ggml's NEOX RoPE).
        const Transform qk = arch == "llama" ? Transform::Unpermute : Transform::Move;
        for (int i = 0; i < c.n_layers; ++i) {
            const std::string b = "blk." + std::to_string(i) + ".", o = "dec." + std::to_string(i) + ".";
            // Gemma: llama.cpp's converter stores norm weights as 1 + w, which is what our forward multiplies by
            // (the HF loader adds the 1 itself): moved as they are.
            add(b + "attn_norm.weight", {D}, {o + "attn_norm.weight"});
            add(b + "attn_q.weight", {Q, D}, {o + "attn.wq"}, qk, c.n_heads);
            add(b + "attn_k.weight", {K, D}, {o + "attn.wk"}, qk, c.n_kv_heads);
            add(b + "attn_v.weight", {K, D}, {o + "attn.wv"});
            if (c.attn_qkv_bias) {
                add(b + "attn_q.bias", {Q}, {o + "attn.bq"}, qk, c.n_heads);
                add(b + "attn_k.bias", {K}, {o + "attn.bk"}, qk, c.n_kv_heads);
                add(b + "attn_v.bias", {K}, {o + "attn.bv"});
            }
            add(b + "attn_output.weight", {D, Q}, {o + "attn.wo"});
            if (c.attn_out_bias) add(b + "attn_output.bias", {D}, {o + "attn.bo"});
            add(b + "ffn_norm.weight", {D}, {o + "ffn_norm.weight"});
            add(b + "ffn_gate.weight", {F, D}, {o + "ffn.w_gate"});
            add(b + "ffn_up.weight", {F, D}, {o + "ffn.w_up"});
            add(b + "ffn_down.weight", {D, F}, {o + "ffn.w_down"});
        }
        add("output_norm.weight", {D}, {"dec.final_norm.weight"});
    }
    if (!c.tie_embeddings && arch != "bert") add("output.weight", {V, D}, {"lm_head.weight"});
    return t;
}

/// The storage of t viewed as rows: a pointer to its vector of elements and how many elements one row takes
/// (float32 values, half bits, or quantized bytes).
template <class F>
void with_rows(Tensor& t, F&& f) {
    const int64_t rows = t.shape.at(0), cols = rows ? Tensor::count(t.shape) / rows : 0;
    if (t.is_ggml()) {
        if (t.mapped_blocks) {  // rows are about to be rearranged: own a copy first
            const int64_t bytes = ggml_row_bytes(t.ggml_type, cols) * rows;
            t.blocks.assign(t.mapped_blocks, t.mapped_blocks + bytes);
            t.mapped_blocks = nullptr;
            t.mapping.reset();
        }
        f(t.blocks, ggml_row_bytes(t.ggml_type, cols));
    }
    else if (t.is_half()) f(t.half, cols);
    else f(t.data, cols);
}

/// Rows [r0, r0 + n) of a row-major tensor (float32, half bits or ggml blocks) as a tensor of its own.
Tensor row_slice(Tensor& t, int64_t r0, int64_t n) {
    Tensor out;
    out.shape = t.shape;
    out.shape[0] = n;
    out.storage = t.storage;
    out.ggml_type = t.ggml_type;
    with_rows(t, [&](auto& v, int64_t per_row) {
        auto& dst = [&]() -> auto& {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::vector<uint8_t>>) return out.blocks;
            else if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::vector<uint16_t>>) return out.half;
            else return out.data;
        }();
        dst.assign(v.begin() + r0 * per_row, v.begin() + (r0 + n) * per_row);
    });
    return out;
}

/// Undoes LlamaModel.permute on the rows of t: within each head of d rows, GGUF row 2 i + s is HF row s d / 2 + i.
/// Rows move whole, so quantized rows are permuted without decoding them.
void unpermute_rows(Tensor& t, int heads, const std::string& what, const std::string& name) {
    const int64_t rows = t.shape.at(0);
    if (heads <= 0 || rows % heads || (rows / heads) % 2)
        fail(what, "tensor '" + name + "' has " + std::to_string(rows) + " rows, not " + std::to_string(heads) +
                       " heads of an even size");
    const int64_t d = rows / heads;
    with_rows(t, [&](auto& v, int64_t per_row) {
        const auto src = v;
        for (int64_t h = 0; h < heads; ++h)
            for (int64_t i = 0; i < d / 2; ++i)
                for (int64_t s = 0; s < 2; ++s)
                    std::copy_n(src.begin() + (h * d + 2 * i + s) * per_row, per_row,
                                v.begin() + (h * d + s * d / 2 + i) * per_row);
    });
}

std::string stem_name(const fs::path& p) { return p.stem().string(); }

}  // namespace

std::vector<std::string> gguf_supported_architectures() {
    return {"llama", "qwen2", "gemma", "gpt2", "gptneox", "bert", "t5"};
}

HfConfig gguf_hf_config(const GgufHeader& h, const std::string& what, std::string* config_json) {
    const GgufValue& arch_v = need(h, "general.architecture", what);
    if (arch_v.type != GgufValueType::String) fail(what, "general.architecture must be a string");
    const std::string arch = arch_v.text;
    const auto supported = gguf_supported_architectures();
    if (std::find(supported.begin(), supported.end(), arch) == supported.end()) {
        std::string list;
        for (const std::string& a : supported) list += (list.empty() ? "" : ", ") + a;
        fail(what, "architecture '" + arch + "' is not supported (" + list + " are)");
    }
    const std::string p = arch + ".";
    json j;
    j["model_type"] = arch == "gptneox" ? "gpt_neox" : arch;  // HF's name of the family
    if (const GgufValue* s = h.find(p + "rope.scaling.type"); s && !(s->type == GgufValueType::String && s->text == "none"))
        fail(what, "RoPE scaling (" + p + "rope.scaling.type = " + s->describe() + ") is not supported (only plain RoPE)");
    if (h.find_tensor("rope_freqs.weight"))
        fail(what, "rope_freqs.weight (Llama 3.1's RoPE frequency factors) is not supported (only plain RoPE)");
    int64_t vocab = 0;
    if (h.find(p + "vocab_size")) vocab = need_int(h, p + "vocab_size", what);
    else if (const GgufValue* tok = h.find("tokenizer.ggml.tokens")) vocab = int64_t(tok->array_size);
    else if (const GgufTensorInfo* e = h.find_tensor("token_embd.weight"); e && e->ne.size() == 2) vocab = e->ne[1];
    else fail(what, "no vocabulary size (" + p + "vocab_size, tokenizer.ggml.tokens or token_embd.weight)");
    const int64_t heads = need_int(h, p + "attention.head_count", what);
    const int64_t d = need_int(h, p + "embedding_length", what);
    int64_t rotary = 0;  // gptneox: RoPE on the first rope.dimension_count features of each head
    // The sizes in the key names the llama-style HF configs (gptneox, bert, llama, qwen2, gemma) share.
    const auto hf_sizes = [&] {
        j["hidden_size"] = d;
        j["num_hidden_layers"] = need_int(h, p + "block_count", what);
        j["num_attention_heads"] = heads;
        j["intermediate_size"] = need_int(h, p + "feed_forward_length", what);
        j["max_position_embeddings"] = need_int(h, p + "context_length", what);
        j["vocab_size"] = vocab;
    };
    if (arch == "gptneox") {
        hf_sizes();
        j["layer_norm_eps"] = opt_number(h, p + "attention.layer_norm_epsilon", what).value_or(1e-5);
        j["rotary_emb_base"] = opt_number(h, p + "rope.freq_base", what).value_or(10000.0);
        const int64_t d_head = heads > 0 && d % heads == 0 ? d / heads : 0;
        rotary = h.find(p + "rope.dimension_count") ? need_int(h, p + "rope.dimension_count", what) : d_head;
        if (d_head > 0 && (rotary < 2 || rotary > d_head || rotary % 2))
            fail(what,
                 p + "rope.dimension_count " + std::to_string(rotary) + " must be even and in [2, " +
                     std::to_string(d_head) + "] (the head size)");
        j["rotary_pct"] = d_head > 0 ? double(rotary) / double(d_head) : 1.0;
        const GgufValue* par = h.find(p + "use_parallel_residual");
        if (par && par->type != GgufValueType::Bool)
            fail(what, "metadata '" + p + "use_parallel_residual' must be a bool, found " + par->describe());
        j["use_parallel_residual"] = par ? par->integer != 0 : true;
        // HF's GPTNeoX (Pythia) uses the exact GELU; llama.cpp's graph the tanh form (ggml_gelu). We compute the
        // model's own.
        j["hidden_act"] = "gelu";
        j["attention_bias"] = true;
        j["tie_word_embeddings"] = false;
    } else if (arch == "bert") {
        if (const GgufValue* causal = h.find(p + "attention.causal");
            causal && causal->type == GgufValueType::Bool && causal->integer != 0)
            fail(what, p + "attention.causal = true is not supported (BERT as a bidirectional encoder)");
        hf_sizes();
        j["layer_norm_eps"] = opt_number(h, p + "attention.layer_norm_epsilon", what).value_or(1e-12);
        j["hidden_act"] = "gelu";  // HF's BERT: exact GELU (llama.cpp's graph: the tanh form)
    } else if (arch == "t5") {
        j["d_model"] = d;
        j["num_heads"] = heads;
        j["d_ff"] = need_int(h, p + "feed_forward_length", what);
        j["num_layers"] = need_int(h, p + "block_count", what);
        j["num_decoder_layers"] = h.find(p + "decoder_block_count") ? need_int(h, p + "decoder_block_count", what)
                                                                    : j["num_layers"].get<int64_t>();
        j["vocab_size"] = vocab;
        if (h.find(p + "attention.key_length")) {
            const int64_t dk = need_int(h, p + "attention.key_length", what);
            if (h.find(p + "attention.value_length") && need_int(h, p + "attention.value_length", what) != dk)
                fail(what, "attention.key_length and attention.value_length differ: not supported");
            j["d_kv"] = dk;
        } else if (heads > 0) {
            j["d_kv"] = d / heads;
        }
        j["n_positions"] = need_int(h, p + "context_length", what);
        j["layer_norm_epsilon"] = opt_number(h, p + "attention.layer_norm_rms_epsilon", what)
                                      .value_or(opt_number(h, p + "attention.layer_norm_epsilon", what).value_or(1e-6));
        // llama.cpp's t5 graph: GELU-gated FFN when the file has ffn_gate, else ReLU; the tanh GELU both use
        // is what T5 v1.1's gated-gelu means (gelu_new).
        j["feed_forward_proj"] = h.find_tensor("enc.blk.0.ffn_gate.weight") ? "gated-gelu" : "relu";
        j["relative_attention_num_buckets"] = h.find(p + "attention.relative_buckets_count")
            ? need_int(h, p + "attention.relative_buckets_count", what)
            : 32;
        // Not in GGUF: llama.cpp assumes 128 (llama_relative_position_bucket), T5Config's default.
        j["relative_attention_max_distance"] = 128;
        // Tied: HF's T5 scales the decoder output by d_model^-0.5 before the tied head (llama.cpp does not).
        j["tie_word_embeddings"] = h.find_tensor("output.weight") == nullptr;
        for (const std::string layer_bias : {"enc.blk.1.attn_rel_b.weight", "dec.blk.1.attn_rel_b.weight"})
            if (h.find_tensor(layer_bias))
                fail(what,
                     "a relative-position table in every layer (" + layer_bias +
                         ", UMT5) is not supported (only T5's, shared from block 0)");
    } else if (arch == "gpt2") {
        j["n_embd"] = d;
        j["n_layer"] = need_int(h, p + "block_count", what);
        j["n_head"] = heads;
        j["n_positions"] = need_int(h, p + "context_length", what);
        j["n_inner"] = need_int(h, p + "feed_forward_length", what);
        j["layer_norm_epsilon"] = opt_number(h, p + "attention.layer_norm_epsilon", what).value_or(1e-5);
        j["activation_function"] = "gelu_new";  // llama.cpp's gpt2 graph: ggml_gelu (the tanh approximation)
        j["vocab_size"] = vocab;
    } else {
        hf_sizes();
        j["num_key_value_heads"] =
            h.find(p + "attention.head_count_kv") ? need_int(h, p + "attention.head_count_kv", what) : heads;
        j["rms_norm_eps"] = opt_number(h, p + "attention.layer_norm_rms_epsilon", what).value_or(1e-6);
        j["rope_theta"] = opt_number(h, p + "rope.freq_base", what).value_or(10000.0);
        int64_t head_dim = heads > 0 ? d / heads : 0;
        if (h.find(p + "attention.key_length")) {
            head_dim = need_int(h, p + "attention.key_length", what);
            if (h.find(p + "attention.value_length") && need_int(h, p + "attention.value_length", what) != head_dim)
                fail(what, "attention.key_length and attention.value_length differ: not supported");
            j["head_dim"] = head_dim;
        }
        if (h.find(p + "rope.dimension_count") && need_int(h, p + "rope.dimension_count", what) != head_dim)
            fail(what, "RoPE on " + std::to_string(need_int(h, p + "rope.dimension_count", what)) + " of " +
                           std::to_string(head_dim) + " head features (" + p + "rope.dimension_count) is not supported");
        if (arch == "llama" && h.find_tensor("blk.0.attn_q.bias")) j["attention_bias"] = true;
        if (arch == "gemma") j["hidden_activation"] = "gelu_pytorch_tanh";
        if (const GgufValue* w = h.find(p + "attention.sliding_window"); w && w->is_integer() && w->integer > 0) {
            j["sliding_window"] = w->integer;
            if (arch == "qwen2") j["use_sliding_window"] = true;
        }
        j["tie_word_embeddings"] = h.find_tensor("output.weight") == nullptr;
    }
    if (config_json) *config_json = j.dump(2);
    HfConfig hf = parse_hf_config(j.dump(), what);
    if (arch == "gpt2") hf.config.tie_embeddings = h.find_tensor("output.weight") == nullptr;
    if (arch == "gptneox") {  // exactly the file's count (rotary_pct is only how HF spells it)
        const int d_head = hf.config.d_head();
        hf.config.rotary_dim = rotary == d_head ? 0 : int(rotary);
    }
    if (arch == "bert") {  // BertModel: no masked-LM head in the file (the converter drops cls.*)
        hf.config.mlm_head = hf.config.tie_embeddings = false;
        const GgufValue* types = h.find("tokenizer.ggml.token_type_count");
        hf.config.type_vocab_size =
            types && types->is_integer() && types->integer > 0 && h.find_tensor("token_types.weight")
            ? int(std::min<int64_t>(types->integer, int64_t(1) << 20))
            : 0;
    }
    if (const GgufValue* n = h.find("general.name");
        n && n->type == GgufValueType::String && !n->text.empty() && is_valid_utf8(n->text))
        hf.config.name = n->text;
    const auto id = [&](const char* key, int& out) {
        const GgufValue* v = h.find(key);
        if (v && v->is_integer() && v->integer >= 0 && v->integer < vocab) out = int(v->integer);
    };
    id("tokenizer.ggml.bos_token_id", hf.bos_token_id);
    id("tokenizer.ggml.eos_token_id", hf.eos_token_id);
    id("tokenizer.ggml.padding_token_id", hf.pad_token_id);
    if (arch == "t5") id((p + "decoder_start_token_id").c_str(), hf.decoder_start_token_id);
    return hf;
}

TranslationSpec gguf_translation_spec(const GgufHeader& h, const std::string& what) {
    const HfConfig hf = gguf_hf_config(h, what);
    if (hf.config.arch != Arch::EncoderDecoder)
        fail(what, "architecture '" + hf.model_type + "' is not an encoder-decoder: no source/target path");
    if (hf.decoder_start_token_id < 0)
        fail(what, "no " + hf.model_type + ".decoder_start_token_id: the decoder's first token is unknown");
    if (hf.eos_token_id < 0) fail(what, "no tokenizer.ggml.eos_token_id: the end token is unknown");
    TranslationSpec spec;
    spec.direction = "model";
    spec.decoder_start_id = hf.decoder_start_token_id;
    spec.source_end_id = spec.target_end_id = hf.eos_token_id;
    spec.pad_id = hf.pad_token_id;
    return spec;
}

GgufSummary gguf_summary(const GgufHeader& h, uint64_t file_bytes) {
    GgufSummary s;
    s.version = h.version;
    s.file_bytes = file_bytes;
    const auto text = [&](const char* key) {
        const GgufValue* v = h.find(key);
        return v && v->type == GgufValueType::String ? v->text : std::string();
    };
    s.name = text("general.name");
    s.chat_template = text("tokenizer.chat_template");
    std::map<std::string, int> count;
    double bits = 0.0, values = 0.0;
    for (const GgufTensorInfo& t : h.tensors) {
        const auto type = ggml_type_info(t.type);
        ++count[type ? std::string(type->name) : "type " + std::to_string(t.type)];
        bits += 8.0 * double(t.bytes);
        values += double(t.numel());
    }
    s.types.assign(count.begin(), count.end());
    std::stable_sort(s.types.begin(), s.types.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    s.bits_per_weight = values > 0 ? bits / values : 0.0;
    if (const std::string model = text("tokenizer.ggml.model"); !model.empty()) {
        s.tokenizer = model;
        if (const std::string pre = text("tokenizer.ggml.pre"); !pre.empty()) s.tokenizer += " (pre: " + pre + ")";
        if (const GgufValue* tok = h.find("tokenizer.ggml.tokens"))
            s.tokenizer += ", " + std::to_string(tok->array_size) + " tokens";
    }
    return s;
}

std::shared_ptr<const Model> load_gguf_model(const fs::path& path, const GgufLoadOptions& options) {
    return load_gguf_model(GgufFile(path), options);
}

std::shared_ptr<const Model> load_gguf_model(const GgufFile& file, const GgufLoadOptions& options) {
    const fs::path& path = file.path();
    const std::string what = path.string();
    const GgufHeader& h = file.header();
    HfConfig hf = gguf_hf_config(h, what);
    const std::string arch = need(h, "general.architecture", what).text;  // checked by gguf_hf_config
    if (hf.config.name.empty() || hf.config.name == hf.model_type || hf.config.name == arch)
        hf.config.name = stem_name(path);
    const Table table = tensor_table(arch, hf.config);

    // Every tensor against the table before anything is decoded.
    uint64_t total = 0;
    for (const GgufTensorInfo& t : h.tensors) {
        const auto rule = table.find(t.name);
        if (rule == table.end())
            fail(what, "unexpected tensor '" + t.name + "' " + shape_str(t.shape()) + ": not part of a " + arch +
                           " model with this file's metadata");
        if (t.shape() != rule->second.shape)
            fail(what, "tensor '" + t.name + "' has shape " + shape_str(t.shape()) + ", expected " +
                           shape_str(rule->second.shape) + " from the metadata");
        const auto type = ggml_type_info(t.type);
        if (!type || !type->decodable)
            fail(what, "tensor '" + t.name + "' is stored as " + (type ? std::string(type->name) : "type " + std::to_string(t.type)) +
                           ", which is not supported yet (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, "
                           "Q4_K, Q5_K, Q6_K are)");
        total += t.bytes;
    }
    for (const auto& [name, rule] : table)
        if (!rule.optional && !h.find_tensor(name))
            fail(what, "missing tensor '" + name + "' " + shape_str(rule.shape) + " required by the metadata (" + arch + ")");

    WeightMap ours;
    std::vector<std::string> warnings = hf.warnings;
    uint64_t done = 0;
    if (options.progress) options.progress(0, total);
    for (const GgufTensorInfo& info : h.tensors) {
        const Rule& rule = table.at(info.name);
        const auto type = ggml_type_info(info.type);
        const bool quantized = type->block_size > 1;
        Tensor t;
        NonfiniteTensor nf{info.name, info.shape(), {}};
        if (quantized && options.keep_quantized && rule.matrix) {
            // Kept where the file has it: the model points into the mapping (which it keeps alive), so opening
            // copies nothing and the blocks are paged in from the file as the products first read them.
            t.shape = info.shape();
            t.storage = Storage::Ggml;
            t.ggml_type = info.type;
            t.mapped_blocks = file.data(info);
            t.mapping = file.mapping();
            ggml_count_nonfinite(GgmlType(info.type), t.mapped_blocks, t.numel(), 0, nf.count);
        } else {
            t = file.read(info, options.keep_half && info.ne.size() == 2);
            if (t.is_f32_rows()) nf.count.scan(t.data.data(), t.numel());
            else nf.count.scan(to_f32(t).data.data(), t.numel());
        }
        if (nf.count.total()) warnings.push_back(what + ": " + describe(nf));
        switch (rule.transform) {
            case Transform::Move:
                ours[rule.ours[0]] = std::move(t);
                break;
            case Transform::Unpermute:
                unpermute_rows(t, rule.heads, what, info.name);
                ours[rule.ours[0]] = std::move(t);
                break;
            case Transform::SplitRows3: {
                const int64_t n = t.shape[0] / 3;
                for (int k = 0; k < 3; ++k) ours[rule.ours[size_t(k)]] = row_slice(t, k * n, n);
                break;
            }
            case Transform::Drop: break;
        }
        if (!t.mapped_blocks) file.release(info);  // copied: the mapping's pages of this tensor need not stay resident
        done += info.bytes;
        if (options.progress) options.progress(done, total);
    }
    try {
        return std::make_shared<const Model>(std::move(hf.config), std::move(ours), std::move(warnings));
    } catch (const std::invalid_argument& e) {
        fail(what, e.what());
    }
}

}  // namespace ts
