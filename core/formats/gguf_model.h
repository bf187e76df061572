// GGUF files (core/formats/gguf.h) as a ts::Model: llama (Llama 1-3, Mistral, TinyLlama, SmolLM), qwen2, gemma, gpt2,
// gptneox (Pythia), bert (BertModel: no masked-LM head) and t5 (encoder–decoder), the families the Hugging Face loader
// also opens. The file's `ARCH.*` keys become the HF config.json they stand
// for and go through parse_hf_config (core/formats/hf_checkpoint.h), so both paths accept and refuse the same things.
// Tensor names follow llama.cpp's (gguf-py constants.py: token_embd, blk.N.attn_q, ...).
#pragma once

#include "core/formats/gguf.h"
#include "core/formats/hf_checkpoint.h"
#include "core/model/model.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ts {

/// Architectures load_gguf_model opens (general.architecture): llama, qwen2, gemma, gpt2, gptneox, bert, t5.
[[nodiscard]] std::vector<std::string> gguf_supported_architectures();

/// The HF config.json (as text) a GGUF header stands for, and what parse_hf_config makes of it. Keys read:
/// general.architecture; ARCH.context_length, .embedding_length, .block_count, .feed_forward_length,
/// .attention.head_count, .attention.head_count_kv (default head_count), .attention.layer_norm_rms_epsilon (llama,
/// qwen2, gemma) or .attention.layer_norm_epsilon (gpt2), .rope.freq_base (default 10000), .rope.dimension_count
/// (must be the head size), .rope.scaling.type (only "none"), .attention.key_length (gemma's head_dim),
/// .attention.sliding_window, .vocab_size (else the token list's length, else token_embd's rows). gptneox:
/// .rope.dimension_count (partial rotary), .use_parallel_residual, .attention.layer_norm_epsilon. bert:
/// .attention.layer_norm_epsilon, .attention.causal (must be false), tokenizer.ggml.token_type_count. t5:
/// .decoder_block_count, .attention.key_length (d_kv), .attention.relative_buckets_count (max distance 128, which
/// llama.cpp assumes), .decoder_start_token_id; gated GELU when enc.blk.0.ffn_gate exists. Ties the LM head
/// to the embeddings when the file has no output.weight (as llama.cpp does). The activation is the HF family's
/// (gptneox and bert: the exact GELU, where llama.cpp's graphs use the tanh form). Throws std::runtime_error "<what>:
/// <problem>" naming the missing or unsupported key.
[[nodiscard]] HfConfig gguf_hf_config(const GgufHeader& header, const std::string& what, std::string* config_json = nullptr);

struct GgufLoadOptions {
    /// Called as tensors are decoded with (bytes_done, bytes_total) over the file's tensor data.
    std::function<void(uint64_t bytes_done, uint64_t bytes_total)> progress;
    /// Keep F16 / BF16 matrices as stored (the products widen them block by block); false widens them.
    bool keep_half = true;
    /// Keep quantized matrices (the linear layers, token embeddings, output) as the file stores them
    /// (Storage::Ggml: the products dequantize 32 rows at a time into panels), so the model takes about the file's size; false
    /// dequantizes them to float32 at load. Quantized vectors are always dequantized.
    bool keep_quantized = true;
};

/// Loads a GGUF file into a Model. Quantized matrices (Q4_0 ... Q6_K) stay quantized (keep_quantized) and are
/// dequantized exactly as ggml does (ggml_dequantize) a few rows at a time inside the products; F16 / BF16 matrices
/// stay half precision. llama-architecture Q and K weights are
/// stored permuted by llama.cpp's converter (pairs interleaved for ggml's RoPE, convert_hf_to_gguf.py
/// LlamaModel.permute); the permutation is undone, so the weights, q and k equal Hugging Face's. Every tensor the
/// config implies is checked against the header (name, shape) before any is decoded. Throws std::runtime_error
/// "<path>: <problem>": not GGUF, an unsupported architecture or key, a missing / unexpected / misshapen tensor
/// (GGUF names), a tensor type not decoded.
[[nodiscard]] std::shared_ptr<const Model> load_gguf_model(const std::filesystem::path& path,
                                                           const GgufLoadOptions& options = {});
/// The same for a file already open (its header parsed once for the model, the tokenizer and the summary).
[[nodiscard]] std::shared_ptr<const Model> load_gguf_model(const GgufFile& file, const GgufLoadOptions& options = {});

/// How an encoder–decoder GGUF file (t5) starts and ends its sequences: ARCH.decoder_start_token_id,
/// tokenizer.ggml.eos_token_id (source and target end), tokenizer.ggml.padding_token_id. The counterpart of
/// hf_translation_spec. Throws std::runtime_error "<what>: <problem>" for a decoder-only file or a missing id.
[[nodiscard]] TranslationSpec gguf_translation_spec(const GgufHeader& header, const std::string& what);

/// What a GGUF file is, beyond the model it holds: for the model panel and the CLI.
struct GgufSummary {
    uint32_t version = 0;
    uint64_t file_bytes = 0;
    std::string name;                                   ///< general.name ("" when absent)
    std::vector<std::pair<std::string, int>> types;     ///< tensor type -> how many tensors, most tensors first
    double bits_per_weight = 0.0;                       ///< tensor data bits / values
    std::string tokenizer;                              ///< "gpt2 (pre: llama-bpe), 128256 tokens", "" when none
    std::string chat_template;                          ///< tokenizer.chat_template ("" when absent)
};

/// The summary of a parsed file. Never throws.
[[nodiscard]] GgufSummary gguf_summary(const GgufHeader& header, uint64_t file_bytes);

}  // namespace ts
