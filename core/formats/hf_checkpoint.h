// Opening Hugging Face checkpoints (GPT-2; Llama, Mistral, Qwen2 / SmolLM / TinyLlama; BERT; GPT-NeoX / Pythia;
// Gemma) as a ts::Model: maps the
// family's config.json keys onto ModelConfig and its tensor names onto ours (core/model/model.h) with explicit tables
// (core/formats/hf_names.cpp). Folders: config.json + model.safetensors, or shards + model.safetensors.index.json.
#pragma once

#include "core/forward/decode.h"
#include "core/model/model.h"
#include "core/model/model_config.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ts {

/// What an HF config.json says, mapped onto our ModelConfig, plus the facts ModelConfig has no field for.
struct HfConfig {
    ModelConfig config;
    std::string model_type;  ///< "gpt2", "llama", "mistral", "qwen2", "bert", "gpt_neox", "gemma"
    /// Mistral/Qwen2 sliding-window attention width (0 = none), also in config.sliding_window (and, for Qwen2,
    /// config.sliding_window_from_layer = max_window_layers), which forward() applies.
    int sliding_window = 0;
    /// Special token ids from config.json (-1 when absent or null). Encoder–decoders start the decoder with
    /// decoder_start_token_id (T5, Marian: pad; BART: eos) and end both sequences with eos.
    int bos_token_id = -1, eos_token_id = -1, pad_token_id = -1, decoder_start_token_id = -1;
    /// What was accepted but ignored (e.g. a special token id outside the vocabulary), one line each; the loaded
    /// model carries them in weight_warnings().
    std::vector<std::string> warnings;
};

/// Model types load_hf_model understands: gpt2, llama, mistral, qwen2 (decoders); t5, marian, bart (encoder–decoders).
[[nodiscard]] std::vector<std::string> hf_supported_model_types();

/// Parses the text of an HF config.json. GPT-2 keys: n_embd, n_layer, n_head, n_positions, vocab_size,
/// layer_norm_epsilon, activation_function (gelu_new -> GELUTanh), n_inner (null = 4 n_embd). Llama family:
/// hidden_size, intermediate_size, num_hidden_layers, num_attention_heads, num_key_value_heads (default = heads),
/// rms_norm_eps, rope_theta (default 10000), max_position_embeddings, vocab_size, tie_word_embeddings (default
/// false), hidden_act silu -> SwiGLU. t5: d_model, d_kv (-> head_dim when != d_model / num_heads), d_ff, num_layers,
/// num_decoder_layers, num_heads, relative_attention_num_buckets / _max_distance, layer_norm_epsilon,
/// feed_forward_proj (relu, gated-gelu -> GeGLUTanh), tie_word_embeddings (-> scale_lm_head). marian / bart: d_model,
/// encoder_/decoder_layers, _attention_heads, _ffn_dim (equal for both stacks), max_position_embeddings,
/// activation_function, scale_embedding; marian: share_encoder_decoder_embeddings (must be true).
/// BERT: hidden_size, num_hidden_layers, num_attention_heads, intermediate_size,
/// max_position_embeddings, type_vocab_size, layer_norm_eps, hidden_act, position_embedding_type (absolute only).
/// GPT-NeoX: the Llama size keys plus rotary_pct, rotary_emb_base (or rope_parameters of rope_type default),
/// use_parallel_residual, attention_bias, layer_norm_eps, hidden_act. Gemma: the Llama keys plus head_dim (default
/// 256) and hidden_activation (default gelu_pytorch_tanh -> GeGLUTanh). Throws std::runtime_error prefixed with `what` for an unknown model_type
/// (listing the supported ones), a missing or mistyped key, or an unsupported feature (rope_scaling, head_dim !=
/// hidden_size / heads, quantization_config, cross-attention, ...).
[[nodiscard]] HfConfig parse_hf_config(std::string_view json_text, const std::string& what = "config.json");

struct HfLoadOptions {
    /// Called as shards are decoded with (bytes_done, bytes_total) over the checkpoint's safetensors files;
    /// the last call has bytes_done == bytes_total. Runs on the loading thread.
    std::function<void(uint64_t bytes_done, uint64_t bytes_total)> progress;
    /// Keep F16/BF16 matrices (2-D tensors) as stored instead of widening them to float32, so the model costs
    /// about the checkpoint's size; the products widen them block by block (core/model/half.h). Vectors are widened.
    bool keep_half = true;
};

/// True when `dir` (after resolve_model_dir) holds a config.json with a "model_type" key (ours have none).
/// Never throws.
[[nodiscard]] bool is_hf_model_dir(const std::filesystem::path& dir);

/// The folder that holds config.json: `path` itself when it has one; for a hub cache entry
/// (.../models--org--name) the snapshot named by refs/main, else the only (or newest) snapshots/<hash>/.
/// Throws std::runtime_error naming the path when none qualifies.
[[nodiscard]] std::filesystem::path resolve_model_dir(const std::filesystem::path& path);

/// Loads an HF checkpoint folder (resolved with resolve_model_dir) into a Model. Weights stored as F32, F16 or
/// BF16 are widened to float32 at load: the core computes in fp32 throughout; the widening is exact, and memory
/// is 2x a half-precision checkpoint. Shards are decoded one at a time and tensors are moved, not copied; GPT-2's
/// Conv1D weights (in, out) are transposed to our (out, in) and its fused c_attn split into wq, wk, wv.
/// Every shard's header is read and compared with the tensors config.json implies before any tensor is decoded,
/// so sizes the file does not back (an absurd config.json) are refused without allocating for them.
/// Throws std::runtime_error naming the problem: unknown model_type, missing config.json / weights file, an
/// index pointing at a missing shard (names the shard), a missing or unexpected tensor (names it), a wrong shape
/// (names the tensor, expected and found shapes), a tied lm_head.weight that differs from the embeddings, a
/// safetensors header rule broken (core/formats/safetensors.h). Tensors holding NaN/±Inf do not fail the load:
/// Model::weight_warnings() names them (file names, as in the checkpoint).
[[nodiscard]] std::shared_ptr<const Model> load_hf_model(const std::filesystem::path& dir,
                                                         const HfLoadOptions& options = {});

/// What the app's source/target path needs from an encoder–decoder HF folder (t5, marian, bart), which has no
/// translation.json: direction "model", decoder start = decoder_start_token_id (T5, Marian: pad; BART: eos),
/// source end = target end = eos_token_id, pad = pad_token_id, source start = bos_token_id for BART (its tokenizer
/// wraps the source in <s> ... </s>). generation_config.json, when present, overrides config.json as HF generate
/// does. Throws std::runtime_error naming the folder and the missing key, or when the folder is not an
/// encoder–decoder checkpoint.
[[nodiscard]] TranslationSpec hf_translation_spec(const std::filesystem::path& dir);

}  // namespace ts
