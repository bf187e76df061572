// Internal to core/formats/hf_checkpoint.cpp: the per-family tables that map Hugging Face tensor names and shapes onto
// our weight names (core/model/model.h), and how each tensor is rearranged on the way.
#pragma once

#include "core/formats/hf_checkpoint.h"
#include "core/model/model_config.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ts::detail {

enum class HfTransform {
    Move,        ///< same layout: ours = hf
    Transpose,   ///< GPT-2 Conv1D weight (in, out) -> torch Linear (out, in)
    SplitQkvW,   ///< GPT-2 c_attn.weight (d_model, 3 d_model) -> wq, wk, wv each (d_model, d_model), transposed
    SplitQkvB,   ///< GPT-2 c_attn.bias (3 d_model) -> bq, bk, bv
    TiedHead,    ///< a tied copy (lm_head.weight, BERT's cls.predictions.decoder.{weight,bias}): optional, must
                 ///< equal ours[0] (tok_emb.weight, mlm_head.bias); then dropped
    SharedEmbedding,  ///< one of several copies of the shared vocabulary (T5/BART/Marian shared.weight,
                      ///< encoder/decoder.embed_tokens.weight): the first read becomes ours[0], the others must equal it
    SliceOffset2,     ///< BART learned positions (max_pos + 2, d): rows 2.. (BartLearnedPositionalEmbedding offset 2)
    FlattenRow,       ///< (1, n) -> (n): final_logits_bias
    SinusoidalCheck,  ///< Marian embed_positions.weight (ours[0] = "encoder" | "decoder"): must equal the table the
                      ///< config implies (the forward computes it); then dropped
    SplitQkvPerHeadW,  ///< GPT-NeoX query_key_value.weight (H * 3 * Dh, d_model), rows per head [q_h; k_h; v_h]
                       ///< -> wq, wk, wv each (H * Dh, d_model)
    SplitQkvPerHeadB,  ///< GPT-NeoX query_key_value.bias (H * 3 * Dh) -> bq, bk, bv
    AddOne,      ///< Gemma RMSNorm weight w, applied as x_hat * (1 + w): stored here as 1 + w (see hf_names.cpp)
};

struct HfTensorRule {
    std::vector<int64_t> shape;      ///< shape as stored in the HF file
    HfTransform transform = HfTransform::Move;
    std::vector<std::string> ours;   ///< target names (3 for the splits)
    bool optional = false;
    int64_t heads = 0;               ///< n_heads, for the per-head splits
    bool outside_prefix = false;     ///< named without the model-class prefix in the file (heads: lm_head, cls.*)
};

/// HF name without the model-class prefix ("transformer." for GPT-2, "model." for the Llama family and Gemma,
/// "bert." for BERT, "gpt_neox." for GPT-NeoX) -> rule.
using HfTable = std::map<std::string, HfTensorRule, std::less<>>;

[[nodiscard]] HfTable hf_tensor_table(const std::string& model_type, const ModelConfig& c);

/// Strips the family's model-class prefix: "transformer.h.0.ln_1.weight" -> "h.0.ln_1.weight",
/// "model.layers.0.mlp.up_proj.weight" -> "layers.0.mlp.up_proj.weight". BERT's TensorFlow-era LayerNorm names
/// "...LayerNorm.gamma" / ".beta" become ".weight" / ".bias" (as transformers renames them). Other names are
/// returned unchanged.
[[nodiscard]] std::string hf_canonical_name(const std::string& model_type, std::string_view name);

/// The family's model-class prefix: "transformer.", "model.", "bert.", "gpt_neox.".
[[nodiscard]] std::string_view hf_model_prefix(const std::string& model_type);

/// Non-persistent buffers some exports still carry, which are skipped without reading (their dtype may be BOOL,
/// U8, ...): GPT-2 h.i.attn.bias / h.i.attn.masked_bias, Llama layers.i.self_attn.rotary_emb.inv_freq, GPT-NeoX
/// layers.i.attention.{bias,masked_bias,rotary_emb.inv_freq}, BERT embeddings.position_ids; BERT's parts the
/// fill-mask forward never uses (pooler.*, the next-sentence head cls.seq_relationship.*); and the unused
/// decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight of old T5 exports.
[[nodiscard]] bool hf_is_ignored_buffer(const std::string& model_type, std::string_view canonical_name);

/// The encoder–decoder families of core/formats/hf_names_seq2seq.cpp: t5, marian, bart.
[[nodiscard]] bool hf_is_seq2seq_type(const std::string& model_type);
/// config.json of a t5 / marian / bart checkpoint -> HfConfig (arch EncoderDecoder, norms, positions, switches).
/// Throws std::runtime_error prefixed with `what` naming a missing, mistyped or unsupported key.
[[nodiscard]] HfConfig hf_seq2seq_config(const nlohmann::json& j, const std::string& what, const std::string& type);
/// Tensor table of a t5 / marian / bart checkpoint (names without the "model." prefix of Marian/BART).
[[nodiscard]] HfTable hf_seq2seq_tensor_table(const std::string& model_type, const ModelConfig& c);

/// Parses JSON text (config.json, index.json) rejecting nesting deeper than 64 levels. Throws std::runtime_error
/// prefixed with `what`.
[[nodiscard]] nlohmann::json hf_parse_json(std::string_view text, const std::string& what);

}  // namespace ts::detail
