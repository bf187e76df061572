// ModelConfig: one description for every architecture the course covers (encoder, decoder, encoder-decoder;
// norms, activations, positions, head groupings). Read/written as our config.json (see docs/models.md, "Model folders").
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>

namespace ts {

enum class Arch { EncoderOnly, DecoderOnly, EncoderDecoder };
enum class NormKind { LayerNorm, RMSNorm };
enum class NormPlacement { Pre, Post };
/// FFN kind. Plain MLPs apply act(x W_up^T + b_up) W_down^T + b_down; the gated ones (GLU family, Shazeer 2020)
/// apply (act(x W_gate^T) * (x W_up^T)) W_down^T with act = sigmoid (GLU), SiLU (SwiGLU), GELU-erf (GeGLU),
/// GELU-tanh (GeGLUTanh: Gemma's gelu_pytorch_tanh gate; T5 v1.1 / flan-t5 "gated-gelu", HF's gelu_new).
enum class Activation { ReLU, GELU, GELUTanh, SiLU, GLU, SwiGLU, GeGLU, GeGLUTanh };
enum class PositionKind { None, Sinusoidal, Learned, RoPE };
/// RoPE pair layout: Interleaved rotates (2i, 2i+1) (RoFormer eq. 34); HalfSplit rotates (i, i + d/2)
/// ("rotate_half", HF Llama).
enum class RopeLayout { Interleaved, HalfSplit };
/// Sinusoidal table layout: Interleaved puts sin(p w_i) at column 2i and cos(p w_i) at 2i+1 (Vaswani et al. §3.5);
/// HalfSplit puts the sines in columns [0, d/2) and the cosines in [d/2, d) (HF MarianSinusoidalPositionalEmbedding).
/// w_i = base^(-2i/d) in both.
enum class SinusoidalLayout { Interleaved, HalfSplit };

[[nodiscard]] bool is_gated(Activation a);

// Upper bounds ModelConfig::validate() enforces: far beyond any published model (widest d_ff ~74k, largest vocab
// ~256k, deepest ~130 layers, longest context ~10M), low enough that every size a config implies fits 64-bit
// arithmetic and a loader refuses an absurd config.json before it allocates anything.
inline constexpr int kMaxVocabSize = 1 << 24;                    ///< vocab_size
inline constexpr int kMaxWidth = 1 << 20;                        ///< d_model, d_ff
inline constexpr int kMaxLayers = 1 << 14;                       ///< n_layers, n_enc_layers
inline constexpr int kMaxSeqLen = 1 << 24;                       ///< max_seq_len
inline constexpr int64_t kMaxParameters = 1'000'000'000'000;    ///< parameter_count(): 1e12 floats = 4 TB

struct ModelConfig {
    std::string name = "model";
    Arch arch = Arch::DecoderOnly;
    int vocab_size = 256;
    int d_model = 64;
    int n_heads = 4;
    int n_kv_heads = 4;        ///< = n_heads: MHA; 1: MQA; in between: GQA. Must divide n_heads.
    int d_ff = 256;            ///< FFN width; 0 = attention-only (no FFN sub-layer, no ffn_norm; Elhage et al. 2021)
    int n_layers = 2;          ///< decoder layers (encoder layers for EncoderOnly)
    int n_enc_layers = 0;      ///< encoder layers for EncoderDecoder
    int max_seq_len = 128;

    NormKind norm = NormKind::LayerNorm;
    NormPlacement norm_placement = NormPlacement::Pre;
    float norm_eps = 1e-5f;
    bool final_norm = true;    ///< a norm after the last layer of each stack (pre-norm models; nn.Transformer has it too)

    Activation activation = Activation::GELU;
    bool ffn_bias = true;
    bool attn_qkv_bias = true; ///< biases on q/k/v projections (GPT-2, Qwen2: yes; Llama: no)
    bool attn_out_bias = true; ///< bias on the output projection (GPT-2: yes; Qwen2, Llama: no)
    bool norm_bias = true;     ///< LayerNorm β (RMSNorm never has one)

    PositionKind position = PositionKind::Learned;
    float sinusoidal_base = 10000.0f;
    float rope_theta = 10000.0f;
    RopeLayout rope_layout = RopeLayout::HalfSplit;
    SinusoidalLayout sinusoidal_layout = SinusoidalLayout::Interleaved;
    /// Encoder-decoder with learned positions: the encoder has its own table enc.pos_emb.weight (BART); the decoder
    /// keeps pos_emb.weight.
    bool enc_pos_emb = false;

    /// T5's bucketed relative position bias (Raffel et al. 2020 §2.1; HF T5Attention.compute_bias): a learned scalar
    /// per (bucket, head) added to the self-attention scores of every layer of a stack; the tables
    /// enc.relative_attention_bias / dec.relative_attention_bias (num_buckets, n_heads) are shared by the stack's
    /// layers. Buckets are bidirectional in the encoder, causal in the decoder; cross-attention has none.
    bool relative_attention_bias = false;
    int relative_attention_num_buckets = 32;
    int relative_attention_max_distance = 128;  ///< tokens; distances beyond share the last bucket

    bool scale_attn = true;    ///< divide scores by sqrt(d_head) ("Attention Is All You Need" eq. 1)
    bool qk_norm = false;      ///< RMSNorm over d_head on q and k before RoPE (weights attn.q_norm / attn.k_norm)
    bool scale_embeddings = false; ///< multiply token embeddings by sqrt(d_model) (Vaswani et al. §3.4)
    bool tie_embeddings = true;    ///< LM head reuses tok_emb
    /// Each stack's embeddings go through a norm (weights <stack>.embed_norm) after positions are added (BART
    /// layernorm_embedding, BERT embeddings.LayerNorm).
    bool embed_norm = false;
    /// A bias added to the logits, weight final_logits_bias (vocab) (BART, Marian: HF's final_logits_bias buffer).
    bool final_logits_bias = false;
    /// Multiply the final hidden states by d_model^-0.5 before the LM head (T5 with tied embeddings).
    bool scale_lm_head = false;

    // --- switches of the Hugging Face families (BERT, GPT-NeoX / Pythia, Gemma) ---
    int head_dim = 0;          ///< explicit d_head (Gemma: 256 with d_model 3072, 16 heads); 0 = d_model / n_heads
    int rotary_dim = 0;        ///< RoPE on the first rotary_dim features of each head only (GPT-NeoX rotary_pct =
                               ///< rotary_dim / d_head); 0 = the whole head. Frequencies use rotary_dim.
    bool parallel_residual = false; ///< x + attn(attn_norm(x)) + ffn(ffn_norm(x)) (GPT-J / GPT-NeoX
                                    ///< use_parallel_residual); pre-norm, decoder-only or encoder-only
    /// Sliding-window self-attention of the decoder stack (Mistral; Qwen2 with use_sliding_window): a query attends
    /// to its `sliding_window` most recent keys, itself included (transformers >= 4.42; earlier releases let it see
    /// w + 1). 0 = plain causal attention. Applied when the forward's self mask is the model's own (causal).
    int sliding_window = 0;
    /// The first layer that uses the window: layers [sliding_window_from_layer, n_layers) slide, earlier ones attend
    /// to every earlier key (Qwen2's max_window_layers); 0 = all layers (Mistral).
    int sliding_window_from_layer = 0;
    int type_vocab_size = 0;   ///< BERT token-type (segment) embeddings tok_type_emb.weight (type_vocab_size,
                               ///< d_model); forward adds row 0 (all token_type_ids 0, HF's default)
    bool mlm_head = false;     ///< BERT masked-LM head: logits = norm(act(h W_dense^T + b_dense)) tok_emb^T + bias
                               ///< (BertForMaskedLM); encoder-only, decoder tied to tok_emb

    [[nodiscard]] int d_head() const { return head_dim > 0 ? head_dim : d_model / n_heads; }
    /// The factor on token embeddings: √d_model when scale_embeddings (Vaswani et al. §3.4), else 1.
    [[nodiscard]] float embedding_scale() const;
    /// Features of each head RoPE rotates (rotary_dim, or d_head when 0).
    [[nodiscard]] int rope_dim() const { return rotary_dim > 0 ? rotary_dim : d_head(); }
    [[nodiscard]] bool has_encoder() const { return arch != Arch::DecoderOnly; }
    [[nodiscard]] bool has_decoder() const { return arch != Arch::EncoderOnly; }

    /// Throws std::invalid_argument naming the first offending field, e.g.
    /// "d_model (100) must be divisible by n_heads (3)", "d_model (1000000000) exceeds the limit 1048576", or
    /// the fields behind a parameter count above kMaxParameters.
    void validate() const;

    /// Total parameters implied by the config (what weights a model folder must hold). Overflow-safe: saturates at
    /// INT64_MAX when the sizes do not fit 64 bits (validate() rejects such configs); 0 when n_heads <= 0.
    [[nodiscard]] int64_t parameter_count() const;
};

// JSON (our config.json). Unknown keys are ignored; wrong types, enum names or integers beyond 32 bits throw
// std::invalid_argument naming the field.
void to_json(nlohmann::json& j, const ModelConfig& c);
void from_json(const nlohmann::json& j, ModelConfig& c);

[[nodiscard]] const char* to_string(Arch v);
[[nodiscard]] const char* to_string(NormKind v);
[[nodiscard]] const char* to_string(NormPlacement v);
[[nodiscard]] const char* to_string(Activation v);
[[nodiscard]] const char* to_string(PositionKind v);
[[nodiscard]] const char* to_string(RopeLayout v);
[[nodiscard]] const char* to_string(SinusoidalLayout v);

}  // namespace ts
