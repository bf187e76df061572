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
    Unpermute,  ///< llama Q/K rows: ggml's interleaved RoPE pairs back to HF's halves (heads in `heads`)
    SplitRows3  ///< gpt2 attn_qkv (3 D, ...) -> q, k, v rows
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
        const bool matrix = ours.size() == 1 ? (ours[0] == "tok_emb.weight" || ours[0] == "lm_head.weight" ||
                                                 ours[0].find(".attn.w") != std::string::npos ||
                                                 ours[0].find(".ffn.w_") != std::string::npos)
                                              : shape.size() == 2;  // gpt2's fused qkv matrix
        t[name] = Rule{std::move(shape), tr, std::move(ours), heads, false, matrix};
    };
    add("token_embd.weight", {V, D}, {"tok_emb.weight"});
    if (arch == "gpt2") {
        add("position_embd.weight", {c.max_seq_len, D}, {"pos_emb.weight"});
        for (int i = 0; i < c.n_layers; ++i) {
            const std::string b = "blk." + std::to_string(i) + ".", o = "dec." + std::to_string(i) + ".";
            add(b + "attn_norm.weight", {D}, {o + "attn_norm.weight"});
            add(b + "attn_norm.bias", {D}, {o + "attn_norm.bias"});
            add(b + "attn_qkv.weight", {3 * D, D}, {o + "attn.wq", o + "attn.wk", o + "attn.wv"}, Transform::SplitRows3);
            add(b + "attn_qkv.bias", {3 * D}, {o + "attn.bq", o + "attn.bk", o + "attn.bv"}, Transform::SplitRows3);
            add(b + "attn_output.weight", {D, D}, {o + "attn.wo"});
            add(b + "attn_output.bias", {D}, {o + "attn.bo"});
            add(b + "ffn_norm.weight", {D}, {o + "ffn_norm.weight"});
            add(b + "ffn_norm.bias", {D}, {o + "ffn_norm.bias"});
            add(b + "ffn_up.weight", {F, D}, {o + "ffn.w_up"});
            add(b + "ffn_up.bias", {F}, {o + "ffn.b_up"});
            add(b + "ffn_down.weight", {D, F}, {o + "ffn.w_down"});
            add(b + "ffn_down.bias", {D}, {o + "ffn.b_down"});
        }
        add("output_norm.weight", {D}, {"dec.final_norm.weight"});
        add("output_norm.bias", {D}, {"dec.final_norm.bias"});
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
    if (!c.tie_embeddings) add("output.weight", {V, D}, {"lm_head.weight"});
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

std::vector<std::string> gguf_supported_architectures() { return {"llama", "qwen2", "gemma", "gpt2"}; }

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
    j["model_type"] = arch;
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
    if (arch == "gpt2") {
        j["n_embd"] = d;
        j["n_layer"] = need_int(h, p + "block_count", what);
        j["n_head"] = heads;
        j["n_positions"] = need_int(h, p + "context_length", what);
        j["n_inner"] = need_int(h, p + "feed_forward_length", what);
        j["layer_norm_epsilon"] = opt_number(h, p + "attention.layer_norm_epsilon", what).value_or(1e-5);
        j["activation_function"] = "gelu_new";  // llama.cpp's gpt2 graph: ggml_gelu (the tanh approximation)
        j["vocab_size"] = vocab;
    } else {
        j["hidden_size"] = d;
        j["intermediate_size"] = need_int(h, p + "feed_forward_length", what);
        j["num_hidden_layers"] = need_int(h, p + "block_count", what);
        j["num_attention_heads"] = heads;
        j["num_key_value_heads"] = h.find(p + "attention.head_count_kv") ? need_int(h, p + "attention.head_count_kv", what) : heads;
        j["max_position_embeddings"] = need_int(h, p + "context_length", what);
        j["rms_norm_eps"] = opt_number(h, p + "attention.layer_norm_rms_epsilon", what).value_or(1e-6);
        j["rope_theta"] = opt_number(h, p + "rope.freq_base", what).value_or(10000.0);
        j["vocab_size"] = vocab;
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
    return hf;
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
    if (hf.config.name.empty() || hf.config.name == hf.model_type) hf.config.name = stem_name(path);
    const std::string arch = hf.model_type;
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
