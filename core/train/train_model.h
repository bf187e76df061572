// TrainModel: a decoder-only or encoder–decoder ModelConfig's parameters and gradients (WeightMap-shaped, our weight
// names) plus a batched training forward over (rows, d) blocks that keeps what the backward pass needs (as llm.c
// does), and the backward pass itself. Every ModelConfig variant of those two architectures: norms, placements, FFN
// kinds, positions, head groupings, biases, tied embeddings, qk-norm, dropout on attention probabilities and residual
// branches; for the encoder–decoder, bidirectional encoder self-attention and cross-attention with key padding, a
// causal decoder with target padding, and gradients into the encoder through every cross-attention.
#pragma once

#include "core/model/model.h"
#include "core/model/model_config.h"
#include "core/model/tensor.h"
#include "core/train/train_kernels.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ts::train {

/// Per-step knobs of the training forward.
struct StepOptions {
    float label_smoothing = 0.0f;   ///< F.cross_entropy(label_smoothing=...)
    float z_loss = 0.0f;            ///< coefficient of mean(logsumexp(logits)^2) (PaLM §5)
    float attn_dropout = 0.0f;      ///< dropout on attention probabilities (after softmax), self and cross
    /// Dropout on each residual branch output (attention, cross-attention, FFN); for the encoder–decoder also on the
    /// sums of embeddings and positions ("Attention Is All You Need" §5.4).
    float resid_dropout = 0.0f;
    uint64_t seed = 0;              ///< dropout masks are a function of (seed, step)
    uint64_t step = 0;
    /// Logits only for the rows whose target is not -1, in row order: logits() is then (n_targets, V). The LM head
    /// is the largest product of a step for a big vocabulary; attribution scores a single row of each sequence.
    bool target_rows_only = false;
};

/// What backward() computes. Params: the gradient of every parameter (training). InputsOnly: the gradients with
/// respect to the inputs (input_grad()) and of the 1-D tensors (norms, biases) only; the weight matrices get no
/// gradient buffers and their gradient products are skipped (attribution, core/interp/input_attribution.h).
enum class GradMode { Params, InputsOnly };

/// Result of a training forward.
struct StepLoss {
    float loss = 0;   ///< optimized loss: mean smoothed CE + z-loss term
    float ce = 0;     ///< mean smoothed CE
    float nll = 0;    ///< mean plain NLL (what the held-out loss reports)
    int64_t count = 0;
};

/// A batch of B (source, target) pairs for an encoder–decoder, padded to S source and T target positions.
/// Padding may sit anywhere (PairDataset pads on the right); it is never attended to, and its targets are -1.
struct PairBatch {
    int B = 0, S = 0, T = 0;
    std::vector<int> src;           ///< (B, S) source ids (padding positions hold any valid id)
    std::vector<int> tgt;           ///< (B, T) decoder inputs: the target shifted right (start token first)
    std::vector<int> targets;       ///< (B, T) next-token labels; -1 = ignored (padding)
    std::vector<uint8_t> src_pad;   ///< (B, S) 1 = padding key of encoder self- and cross-attention; empty = none
    std::vector<uint8_t> tgt_pad;   ///< (B, T) 1 = padding key of decoder self-attention; empty = none
};

class TrainModel {
public:
    /// Validates the config (DecoderOnly or EncoderDecoder; else std::invalid_argument) and that `params` holds
    /// exactly expected_weights(config) (std::invalid_argument naming the first missing/extra/mis-shaped tensor).
    TrainModel(ModelConfig config, WeightMap params, GradMode mode = GradMode::Params);
    /// Why a config has no backward pass here ("" when it has): encoder-only models and the Hugging Face families'
    /// switches parallel_residual, partial rotary, embed_norm, relative_attention_bias, final_logits_bias,
    /// scale_lm_head, enc_pos_emb, half-split sinusoids, mlm_head, token types, head_dim · n_heads ≠ d_model.
    /// (A sliding window is not modelled either: attention sees every earlier key.)
    [[nodiscard]] static std::string unsupported(const ModelConfig& c);

    /// Decoder-only. inputs, targets: (B, T) row-major token ids; targets may be -1 (ignored). T <= max_seq_len for
    /// learned and sinusoidal positions and RoPE. Stores activations for backward(); returns the mean loss.
    /// Throws std::invalid_argument on ids outside [0, vocab), bad sizes, or an encoder–decoder config.
    StepLoss forward(std::span<const int> inputs, std::span<const int> targets, int B, int T,
                     const StepOptions& opt = {});
    /// Encoder–decoder: src through the encoder (bidirectional, src_pad keys masked), tgt through the decoder
    /// (causal, tgt_pad keys masked, cross-attention to the encoder output with src_pad keys masked), logits of
    /// every decoder row through the LM head, loss over rows whose target is not -1. torch.nn.Transformer with
    /// src/tgt/memory_key_padding_mask and a causal tgt_mask, plus shared embeddings (×√d_model when
    /// scale_embeddings) and positions. Throws std::invalid_argument on bad sizes, ids, S or T > max_seq_len, or a
    /// decoder-only config.
    StepLoss forward(const PairBatch& batch, const StepOptions& opt = {});
    /// Gradients of the last forward()'s loss into grads() (overwritten, not accumulated). std::logic_error
    /// without a preceding forward.
    void backward();
    /// The same pass from a given gradient of the loss with respect to logits() (same shape) instead of the
    /// cross-entropy's: the gradients of sum(dlogits ∘ logits). std::logic_error without a preceding forward,
    /// std::invalid_argument on a shape other than logits()'.
    void backward(const MatrixRM& dlogits);

    /// Token-embedding rows to use in the following forwards instead of the lookup tok_emb[id] (× √d_model when
    /// scale_embeddings): `dec` for the decoder (decoder-only: the only) stack, (B*T, d_model); `enc` for the
    /// encoder of an encoder–decoder, (B*S, d_model); nullptr = the lookup. Positions are added on top as usual.
    /// The ids are still passed to forward() (their shape and the padding). The matrices must outlive the forward
    /// and backward; a forward throws std::invalid_argument when their shape does not match its batch.
    void set_input_embeddings(const MatrixRM* dec, const MatrixRM* enc = nullptr);
    /// After backward(): dLoss/d(token-embedding rows) of the decoder stack (encoder = false) or of the encoder,
    /// (B*T, d_model) / (B*S, d_model). Positions are added to these rows, so it is also the gradient with respect
    /// to the sum (the first layer's input before embedding dropout; Captum's LayerIntegratedGradients on the
    /// embedding layer).
    [[nodiscard]] const MatrixRM& input_grad(bool encoder = false) const { return encoder ? m_enc.dx : m_dec.dx; }

    [[nodiscard]] const ModelConfig& config() const { return m_config; }
    [[nodiscard]] WeightMap& params() { return m_params; }
    [[nodiscard]] const WeightMap& params() const { return m_params; }
    [[nodiscard]] const WeightMap& grads() const { return m_grads; }
    [[nodiscard]] WeightMap& grads() { return m_grads; }
    /// Logits of the last forward (B*T, V) when it ran without backward pending; after backward they hold
    /// dLoss/dlogits.
    [[nodiscard]] const MatrixRM& logits() const { return m_logits; }

private:
    // --- weights: pointers into a WeightMap (params or grads); nullptr where the config has no such tensor ---
    struct NormRefs {
        Tensor *w = nullptr, *b = nullptr;
    };
    struct AttnRefs {
        Tensor *wq = nullptr, *wk = nullptr, *wv = nullptr, *wo = nullptr, *bq = nullptr, *bk = nullptr,
               *bv = nullptr, *bo = nullptr, *q_norm = nullptr, *k_norm = nullptr;
    };
    struct FfnRefs {
        Tensor *w_up = nullptr, *w_gate = nullptr, *w_down = nullptr, *b_up = nullptr, *b_down = nullptr;
    };
    struct Layer {
        NormRefs attn_norm, cross_norm, ffn_norm;
        AttnRefs attn, cross;   // cross: encoder–decoder decoder layers only
        FfnRefs ffn;
    };
    struct StackRefs {
        std::vector<Layer> layers;
        NormRefs final_norm;
    };
    struct Refs {
        Tensor *tok_emb = nullptr, *pos_emb = nullptr, *lm_head = nullptr;
        StackRefs enc, dec;
    };

    // --- saved activations and scratch ---
    /// Geometry of one attention call: B sequences of Tq query rows attending to Tk key rows.
    struct AttnGeom {
        int B = 0, Tq = 0, Tk = 0;
        bool causal = false;              // key j visible to query i only when j <= i (needs Tq == Tk)
        const uint8_t* key_pad = nullptr; // (B, Tk), 1 = never attended; nullptr = no padding
        bool rope = false;                // rotate q and k (self-attention with RoPE positions)
        uint64_t site = 0;                // dropout site of the attention probabilities
    };
    struct AttnActs {
        MatrixRM q, k, v;                 // (B*Tq, H*D), (B*Tk, K*D), (B*Tk, K*D) after qk-norm and RoPE
        MatrixRM q_hat, k_hat;            // qk_norm: normalized rows (B*Tq*H, D), (B*Tk*K, D)
        Eigen::VectorXf q_rstd, k_rstd;
        MatrixRM probs;                   // (B*H*Tq, Tk) softmax(scores); masked entries exactly 0
        MatrixRM drop_mask;               // (B*H*Tq, Tk) dropout multipliers, empty without attention dropout
        MatrixRM att;                     // (B*Tq, H*D) heads concatenated
    };
    struct AttnScratch {                  // backward scratch of one attention kind
        MatrixRM dq, dk, dv, datt;        // (B*Tq, H*D), (B*Tk, K*D), (B*Tk, K*D), (B*Tq, H*D)
    };
    /// One residual sub-layer: pre-norm x += drop(f(norm(x))); post-norm x = norm(x + drop(f(x))).
    struct SubActs {
        MatrixRM in;                      // (N, d) the branch's input: norm(x) (pre) or x (post)
        MatrixRM xhat;                    // (N, d) the norm's normalized rows
        Eigen::VectorXf rstd;
        MatrixRM resid_mask;              // (N, d) residual dropout multipliers, empty without
    };
    struct LayerActs {
        SubActs self_sub, cross_sub, ffn_sub;
        AttnActs self, cross;
        MatrixRM up, gate, act;           // (N, d_ff): up projection, gate pre-activation (gated), FFN hidden
    };
    /// One stack (encoder or decoder) for the current batch shape: its embeddings, saved activations, output and
    /// backward scratch. N = B*T rows.
    struct Stack {
        int B = 0, T = 0, S = 0;          // S: encoder length of the cross-attention (0 without)
        uint64_t site_base = 0;           // dropout sites: site_base + layer * site_stride + kind (Site)
        uint64_t site_stride = 4;
        std::vector<int> ids;             // (B, T) token ids
        std::vector<uint8_t> key_pad;     // (B, T) padding of this stack's keys; empty = none
        MatrixRM emb_mask;                // (N, d) embedding dropout multipliers, empty without
        std::vector<LayerActs> acts;
        MatrixRM x;                       // (N, d) the residual stream (embeddings in, last layer's output out)
        MatrixRM fn_xhat, out;            // (N, d) final norm: normalized rows, stack output
        Eigen::VectorXf fn_rstd;
        AttnGeom self_geom, cross_geom;
        // Backward scratch.
        MatrixRM y, dx, dy, dh;           // (N, d)
        MatrixRM dup, dgate, dact;        // (N, d_ff)
        AttnScratch self_scr, cross_scr;
    };

    Refs bind(WeightMap& w);
    void check_ids(std::span<const int> ids, const char* what) const;
    void ensure_stack(Stack& s, int n_layers, int B, int T, int S);
    // Embeddings + positions of s.ids into s.x (dropout p with key); backward adds s.dx into the embeddings' grads.
    void embed_forward(Stack& s, float p, uint64_t key);
    void embed_backward(Stack& s);
    // Runs the layers and the final norm over s.x -> s.out. memory: the encoder stack (cross-attention) or nullptr.
    void stack_forward(const StackRefs& p, Stack& s, const Stack* memory);
    // dout (N, d) = dLoss/ds.out -> s.dx = dLoss/d(embeddings); parameter grads accumulate into g; the memory's
    // gradient accumulates into dmemory (B*S, d) when there is cross-attention.
    void stack_backward(const StackRefs& p, const StackRefs& g, Stack& s, const MatrixRM& dout, const Stack* memory,
                        MatrixRM* dmemory);
    // Attention: xq (B*Tq, d) queries' input, xkv (B*Tk, d) keys'/values' input -> out (B*Tq, d).
    void attention_forward(const AttnRefs& p, AttnActs& a, const AttnGeom& geo, AttnScratch& scr, const MatrixRM& xq,
                           const MatrixRM& xkv, MatrixRM& out);
    // dout (B*Tq, d) -> dxq (overwritten); dxkv == nullptr: self-attention, key/value gradients also go to dxq;
    // else they accumulate into *dxkv (B*Tk, d). Parameter grads accumulate into g.
    void attention_backward(const AttnRefs& p, const AttnRefs& g, const AttnActs& a, const AttnGeom& geo,
                            AttnScratch& scr, const MatrixRM& xq, const MatrixRM& xkv, const MatrixRM& dout,
                            MatrixRM& dxq, MatrixRM* dxkv);
    // FFN: in (N, d) -> out (N, d); backward dout -> din (overwritten), scratch from s.
    void ffn_forward(const FfnRefs& p, LayerActs& a, const MatrixRM& in, MatrixRM& out);
    void ffn_backward(const FfnRefs& p, const FfnRefs& g, const LayerActs& a, Stack& s, const MatrixRM& in,
                      const MatrixRM& dout, MatrixRM& din);
    StepLoss finish_forward(const StepOptions& opt);  // LM head + loss over m_dec.out
    void backward_from_logits();  // m_logits holds dLoss/dlogits; zeroes the grads, ends the forward

    ModelConfig m_config;
    WeightMap m_params, m_grads;
    bool m_param_grads = true;                            // GradMode::Params
    const MatrixRM* m_input_emb[2] = {nullptr, nullptr};  // [decoder, encoder] overrides of the lookup
    std::vector<int64_t> m_target_rows;                   // target_rows_only: the rows of m_dec.out that have logits
    MatrixRM m_target_out;                                // (n_targets, d) those rows
    std::vector<int> m_target_labels;                     // (n_targets) their targets
    Refs m_p, m_g;
    MatrixRM m_sin_table;   // (max_seq_len, d_model) sinusoidal positions
    RopeTables m_rope;

    // Saved state of the last forward.
    bool m_have_forward = false;
    bool m_seq2seq = false;      // the last forward was forward(PairBatch)
    StepOptions m_opt;
    std::vector<int> m_targets;
    Stack m_enc, m_dec;
    MatrixRM m_logits;           // (B*T, V), dlogits after backward
    MatrixRM m_dout, m_dmem;     // (B*T, d) gradient into the decoder output; (B*S, d) into the encoder output
};

}  // namespace ts::train
