// Model = ModelConfig + named weights; forward() runs encoder, decoder or encoder-decoder stacks and records a
// Trace. Weight names (torch.nn.Linear layout: (out_features, in_features)) are documented in docs/models.md.
#pragma once

#include "core/trace/intervention.h"
#include "core/model/model_config.h"
#include "core/model/tensor.h"
#include "core/trace/trace.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ts {

// --- weights -------------------------------------------------------------------------------------------------
// Names, per stack s in {enc, dec} and layer i (shapes with H = n_heads, K = n_kv_heads, D = d_head):
//   tok_emb.weight (vocab, d_model)          pos_emb.weight (max_seq_len, d_model) [Learned]
//   s.i.attn_norm.{weight,bias}              s.i.attn.{wq (H*D, d_model), wk (K*D, d_model), wv (K*D, d_model),
//                                                      wo (d_model, H*D)}, s.i.attn.{bq,bk,bv,bo} when biased,
//                                            s.i.attn.{q_norm,k_norm}.weight (D) [qk_norm]
//   dec.i.cross_norm.{weight,bias}           dec.i.cross_attn.{wq,wk,wv,wo,bq,bk,bv,bo} [EncoderDecoder]
//   s.i.ffn_norm.{weight,bias}               s.i.ffn.{w_up (d_ff, d_model), w_gate (d_ff, d_model) [gated],
//                                                     w_down (d_model, d_ff), b_up, b_down [ffn_bias]}
//   enc.final_norm.{weight,bias}  dec.final_norm.{weight,bias}  [final_norm]   lm_head.weight (vocab, d_model) [untied]
//   enc.pos_emb.weight (max_seq_len, d_model) [enc_pos_emb]   s.embed_norm.{weight,bias} [embed_norm]
//   s.relative_attention_bias (num_buckets, H) [relative_attention_bias]   final_logits_bias (vocab) [final_logits_bias]
//   tok_type_emb.weight (type_vocab_size, d_model) [type_vocab_size > 0]
//   mlm_head.dense.{weight (d_model, d_model), bias}, mlm_head.norm.{weight,bias}, mlm_head.bias (vocab) [mlm_head]
// For an EncoderOnly model the stack is "enc"; DecoderOnly uses "dec".
using WeightMap = std::map<std::string, Tensor, std::less<>>;

/// Every weight name and shape the config requires, in a stable order. Validates the config (std::invalid_argument).
[[nodiscard]] std::vector<std::pair<std::string, std::vector<int64_t>>> expected_weights(const ModelConfig& c);
/// The same walk without building the list: `visit(name, shape)` per weight, in expected_weights' order. A visitor
/// that throws ends it, so a loader comparing with a file stops at the first tensor the file lacks.
void for_each_expected_weight(
    const ModelConfig& c, const std::function<void(const std::string& name, const std::vector<int64_t>& shape)>& visit);

/// Random initialisation (normal(0, 0.02) for matrices, ones for norm weights, zeros for biases), seeded.
[[nodiscard]] WeightMap init_weights(const ModelConfig& c, uint64_t seed);

class Model {
public:
    /// Validates the config and that `weights` holds exactly the expected names with the expected shapes;
    /// throws std::invalid_argument naming the first missing, unexpected or mis-shaped tensor.
    Model(ModelConfig config, WeightMap weights);
    /// As above, keeping what the loader noticed about the weights (one line each, e.g. a tensor holding NaN;
    /// core/model/nonfinite.h) for the app and the CLI to show. The model is usable regardless.
    Model(ModelConfig config, WeightMap weights, std::vector<std::string> weight_warnings);

    [[nodiscard]] const ModelConfig& config() const { return m_config; }
    /// Every weight as row-major float32. When some are kept otherwise (half precision from an F16/BF16 checkpoint,
    /// or float32 panels), the first call builds a row-major copy of all of them (for writers and trainers).
    [[nodiscard]] const WeightMap& weights() const;
    /// The weights as stored: float32 rows; half precision (Tensor::is_half) for matrices kept as the checkpoint
    /// stores them (core/model/half.h widens them block by block inside the products); float32 panels (Storage::F32Panels,
    /// core/kernels/gemm.h) for the attention and FFN matrices of a float32 model, packed when the model is built. The
    /// forward reads these; weight() / weights() give every one as row-major float32.
    [[nodiscard]] const WeightMap& stored_weights() const { return m_weights; }
    [[nodiscard]] const Tensor& stored_weight(std::string_view name) const;
    [[nodiscard]] const Tensor* find_stored_weight(std::string_view name) const;
    [[nodiscard]] bool has_half_weights() const { return m_has_half; }
    /// Set by load_model_dir / load_hf_model; empty for models built in memory.
    [[nodiscard]] const std::vector<std::string>& weight_warnings() const { return m_weight_warnings; }
    /// A weight as row-major float32. Throws std::out_of_range naming the weight when absent. A half-precision or
    /// panel-ordered weight is converted on first use and the copy kept (thread-safe); hot paths use stored_weight.
    [[nodiscard]] const Tensor& weight(std::string_view name) const;
    [[nodiscard]] const Tensor* find_weight(std::string_view name) const;

private:
    struct Widened;  // float32 copies of half-precision weights, made on demand
    ModelConfig m_config;
    WeightMap m_weights;
    std::vector<std::string> m_weight_warnings;
    bool m_has_half = false;
    bool m_all_f32_rows = true;  ///< no half-precision or panel-ordered weight: weights() is m_weights
    std::shared_ptr<Widened> m_widened;
};

// --- masks and knobs ------------------------------------------------------------------------------------------
enum class MaskKind { None, Causal, SlidingWindow, Custom };

/// Which keys a query may attend to. Padding is separate (key_padding) and combines with any kind.
struct MaskSpec {
    MaskKind kind = MaskKind::Causal;
    int window = 0;                     ///< SlidingWindow: query t sees keys t-window+1 .. t (causal band of width w)
    std::vector<uint8_t> custom;        ///< Custom: (T, S) row-major, 1 = may attend
    std::vector<uint8_t> key_padding;   ///< optional, length S: 1 = padding (never attended)
};

/// Which (query, key) pairs `spec` lets attend, for T queries at positions 0..T-1 and S keys at 0..S-1: (T, S)
/// row-major, 1 = may attend — the table every forward builds from it (padding keys included). Throws
/// std::invalid_argument as the forward does (a custom mask not (T, S), key_padding not of length S, window < 1).
[[nodiscard]] std::vector<uint8_t> mask_table(const MaskSpec& spec, int T, int S);

struct ForwardOptions {
    float temperature = 1.0f;           ///< attention softmax temperature: softmax(scores / temperature)
    MaskSpec self_mask;                 ///< decoder self-attention (default causal); encoder uses `enc_mask`
    MaskSpec enc_mask{MaskKind::None, 0, {}, {}};
    CaptureFilter capture = CaptureFilter::none();
    bool all_logits = true;             ///< false: logits only for the last position (shape (1, vocab))
    /// false: no LM head product at all (ForwardResult::logits empty, overriding all_logits); `hidden` is as usual,
    /// so lm_head_logits(m, hidden.middleRows(q, 1)) gives any position's logits later. For callers that show no
    /// logits (the app's Attention tab): for GPT-2 small the head is 154 MB of the 498 MB of weights a forward reads.
    bool compute_logits = true;
    /// Applied in order at their trace points inside the forward, whether or not capture is on; the trace records
    /// the edited values. See ActivationEdit (core/trace/intervention.h) for the points and the errors.
    std::vector<ActivationEdit> edits;
    /// Where the trace's buffers come from and go back to when it is released (core/trace/trace.h). Null: plain
    /// allocations. The app's compute worker owns one pool for all its forwards.
    std::shared_ptr<TensorPool> pool;
    /// >= 0: the forward ends once layer `stop_at_ffn_act` of the first stack it runs (the encoder of an encoder-only
    /// or encoder–decoder model, else the decoder) has recorded its ffn.post_act (T, d_ff): that layer's W_down, the
    /// later layers, the final norm, an encoder–decoder's decoder and the logits are skipped, and ForwardResult::
    /// hidden and logits stay empty. For readers of FFN activations alone (the neuron index). -1: the whole forward.
    /// Throws std::invalid_argument for a layer outside the stack, a model without FFN (d_ff = 0) or with a KV cache.
    int stop_at_ffn_act = -1;
    /// Called on the forward's own thread after each layer of a stack has recorded everything, with the stack's
    /// name ("dec", "enc"), the layer and the trace so far (read it there: the forward goes on writing to it once the
    /// call returns; the blocks' AttentionRows of finished layers are not changed again and may be kept). For a
    /// progressive display of a long forward (the app's worker). Unset: not called.
    std::function<void(const std::string& stack, int layer, const Trace& trace)> on_layer;
    /// forward_incremental (core/forward/incremental.h) calls on_layer for the tail it computes only when the tail
    /// has at least this many positions; its `trace` then holds, for each finished layer, the attention of every
    /// position (the earlier call's query rows composed with the tail's), the same AttentionRows the returned trace
    /// keeps. 0: never for a tail (a full forward always calls it).
    int on_layer_min_tail = 0;
};

/// Per-layer cached keys/values for incremental decoding. k[i], v[i]: (n_kv_heads, n_past, d_head) flattened as
/// a (n_kv_heads * capacity, d_head) buffer; `n_past` positions are valid.
/// Cross-attention keys/values of one encoder memory, per decoder layer: k[i], v[i] (n_kv_heads * S, d_head),
/// head g in rows [g*S, (g+1)*S).
struct CrossKV {
    std::vector<MatrixRM> k, v;
    int S = 0;
};

struct KVCache {
    std::vector<MatrixRM> k, v;
    int n_past = 0;
    int capacity = 0;
    /// Encoder-decoder only: the memory's cross-attention keys/values, projected by the first decoder call with this
    /// cache and reused by later calls (copies of the cache share them). A cache belongs to one memory: reset() it
    /// before decoding another source (a memory of another length throws).
    std::shared_ptr<CrossKV> cross;
    void reset() { k.clear(); v.clear(); n_past = 0; capacity = 0; cross.reset(); }
};

struct ForwardResult {
    MatrixRM logits;        ///< (T, vocab) or (1, vocab) when !all_logits; empty for EncoderOnly without head
    MatrixRM hidden;        ///< final hidden states after the final norm (T, d_model)
    std::shared_ptr<Trace> trace;
};

/// out (N, out_features) = x (N, in_features) W^T for a weight in torch.nn.Linear layout (out, in), float32 or half
/// precision as stored (widened 128 rows at a time into a per-thread buffer, on compute_threads() threads), or a
/// GGUF file's blocks (dequantized 32 rows at a time into panels: equal to the dequantized weight's product bit for
/// bit; or, with QuantActivations::Int8, llama.cpp's 8-bit arithmetic, core/kernels/quant_gemm.h). `out` must not
/// alias x. torch.nn.functional.linear without bias.
void matmul_weight_t(const MatrixRM& x, const Tensor& w, MatrixRM& out);

/// hidden (N, d_model) after the final norm -> logits (N, vocab) through the model's output head: lm_head.weight or
/// the tied embeddings, or the masked-LM head (mlm_head: dense, activation, norm, tied decoder + bias, as
/// BertForMaskedLM's cls.predictions). Empty when the model has no head. Used by the logit lens.
[[nodiscard]] MatrixRM lm_head_logits(const Model& m, const MatrixRM& hidden);
/// Whether lm_head_logits gives logits for this model (an lm_head.weight, tied embeddings, or a masked-LM head).
[[nodiscard]] bool has_lm_head(const Model& m);

// --- forward ---------------------------------------------------------------------------------------------------
/// Decoder-only (or encoder-only) forward over token ids. With `cache`, ids are appended after cache->n_past
/// positions (positions and causal masking offset accordingly). Throws std::invalid_argument on empty ids, ids out
/// of [0, vocab), or length beyond max_seq_len (learned positions).
[[nodiscard]] ForwardResult forward(const Model& m, const std::vector<int>& ids, const ForwardOptions& opt,
                                    KVCache* cache = nullptr);

/// Encoder-decoder forward: src ids through the encoder, tgt ids through the decoder with cross-attention.
/// Trace holds enc.* and dec.* names; "enc.out" is the encoder memory (S, d_model).
[[nodiscard]] ForwardResult forward_seq2seq(const Model& m, const std::vector<int>& src_ids,
                                            const std::vector<int>& tgt_ids, const ForwardOptions& opt);

/// Stack-level entry points on embeddings (no token embedding, no positions added, no LM head), used to compare
/// with torch.nn.Transformer, which takes embeddings. x: (T, d_model) -> (T, d_model) after the stack's final norm.
[[nodiscard]] MatrixRM encoder_stack_forward(const Model& m, const MatrixRM& x, const ForwardOptions& opt, Trace& trace);
[[nodiscard]] MatrixRM decoder_stack_forward(const Model& m, const MatrixRM& x, const MatrixRM* memory,
                                             const ForwardOptions& opt, Trace& trace, KVCache* cache = nullptr,
                                             int start_pos = 0);

}  // namespace ts
