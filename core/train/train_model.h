// TrainModel: a decoder-only ModelConfig's parameters and gradients (WeightMap-shaped, our weight names) plus a
// batched training forward over (B*T, d) blocks that keeps what the backward pass needs (as llm.c does), and the
// backward pass itself. Every decoder-only variant of ModelConfig: norms, placements, FFN kinds, positions, head
// groupings, biases, tied embeddings, qk-norm, dropout on attention probabilities and residual branches.
#pragma once

#include "core/model.h"
#include "core/model_config.h"
#include "core/tensor.h"
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
    float attn_dropout = 0.0f;      ///< dropout on attention probabilities (after softmax)
    float resid_dropout = 0.0f;     ///< dropout on each residual branch output (attention out, FFN out)
    uint64_t seed = 0;              ///< dropout masks are a function of (seed, step)
    uint64_t step = 0;
};

/// Result of a training forward.
struct StepLoss {
    float loss = 0;   ///< optimized loss: mean smoothed CE + z-loss term
    float ce = 0;     ///< mean smoothed CE
    float nll = 0;    ///< mean plain NLL (what the held-out loss reports)
    int64_t count = 0;
};

class TrainModel {
public:
    /// Validates the config (DecoderOnly only; else std::invalid_argument) and that `params` holds exactly
    /// expected_weights(config) (std::invalid_argument naming the first missing/extra/mis-shaped tensor).
    TrainModel(ModelConfig config, WeightMap params);

    /// inputs, targets: (B, T) row-major token ids; targets may be -1 (ignored). T <= max_seq_len for learned
    /// and sinusoidal positions and RoPE. Stores activations for backward(); returns the mean loss.
    /// Throws std::invalid_argument on ids outside [0, vocab) or bad sizes.
    StepLoss forward(std::span<const int> inputs, std::span<const int> targets, int B, int T,
                     const StepOptions& opt = {});
    /// Gradients of the last forward()'s loss into grads() (overwritten, not accumulated).
    void backward();

    [[nodiscard]] const ModelConfig& config() const { return m_config; }
    [[nodiscard]] WeightMap& params() { return m_params; }
    [[nodiscard]] const WeightMap& params() const { return m_params; }
    [[nodiscard]] const WeightMap& grads() const { return m_grads; }
    [[nodiscard]] WeightMap& grads() { return m_grads; }
    /// Logits of the last forward (B*T, V) when it ran without backward pending; after backward they hold
    /// dLoss/dlogits.
    [[nodiscard]] const MatrixRM& logits() const { return m_logits; }

private:
    struct Layer {  // pointers into a WeightMap (params or grads); nullptr where the config has no such tensor
        Tensor *attn_norm_w = nullptr, *attn_norm_b = nullptr, *wq = nullptr, *wk = nullptr, *wv = nullptr,
               *wo = nullptr, *bq = nullptr, *bk = nullptr, *bv = nullptr, *bo = nullptr, *q_norm = nullptr,
               *k_norm = nullptr, *ffn_norm_w = nullptr, *ffn_norm_b = nullptr, *w_up = nullptr, *w_gate = nullptr,
               *w_down = nullptr, *b_up = nullptr, *b_down = nullptr;
    };
    struct Refs {
        Tensor *tok_emb = nullptr, *pos_emb = nullptr, *final_norm_w = nullptr, *final_norm_b = nullptr,
               *lm_head = nullptr;
        std::vector<Layer> layers;
    };
    struct LayerActs {  // saved activations of one layer, rows = B*T
        MatrixRM x_in;                 // (N, d) layer input
        MatrixRM n1_xhat, n1_out;      // norm 1: pre-norm of x_in, post-norm of x_in + attn
        Eigen::VectorXf n1_rstd;
        MatrixRM q, k, v;              // (N, H*D), (N, K*D), (N, K*D) after qk-norm and RoPE
        MatrixRM q_hat, k_hat;         // qk_norm: normalized rows (N*H, D), (N*K, D)
        Eigen::VectorXf q_rstd, k_rstd;
        MatrixRM probs;                // (B*H*T, T) softmax(scores), causal
        MatrixRM attn_mask;            // (B*H*T, T) dropout multipliers, empty without attention dropout
        MatrixRM att;                  // (N, H*D) heads concatenated
        MatrixRM resid_mask1, resid_mask2;  // (N, d) residual dropout multipliers, empty without
        MatrixRM x_mid;                // (N, d) stream after the attention sub-layer (post-norm: before norm 1)
        MatrixRM n2_xhat, n2_out;
        Eigen::VectorXf n2_rstd;
        MatrixRM up, gate, act;        // (N, d_ff): up projection, gate pre-activation (gated), FFN hidden
    };

    Refs bind(WeightMap& w);
    void ensure_buffers(int B, int T);
    // Sub-layer forwards: in (N, d) -> out (N, d), saving what backward needs into `a`.
    void attention_forward(const Layer& p, LayerActs& a, const MatrixRM& in, MatrixRM& out, int layer);
    void ffn_forward(const Layer& p, LayerActs& a, const MatrixRM& in, MatrixRM& out);
    // Backward of the sub-layers: dout (N, d) -> din (N, d) (overwritten); parameter grads accumulate into g.
    void attention_backward(const Layer& p, const Layer& g, const LayerActs& a, const MatrixRM& in,
                            const MatrixRM& dout, MatrixRM& din);
    void ffn_backward(const Layer& p, const Layer& g, const LayerActs& a, const MatrixRM& in, const MatrixRM& dout,
                      MatrixRM& din);

    ModelConfig m_config;
    WeightMap m_params, m_grads;
    Refs m_p, m_g;
    MatrixRM m_sin_table;   // (max_seq_len, d_model) sinusoidal positions
    RopeTables m_rope;

    // Shapes and saved state of the last forward.
    int m_B = 0, m_T = 0;
    bool m_have_forward = false;
    StepOptions m_opt;
    std::vector<int> m_inputs, m_targets;
    std::vector<LayerActs> m_acts;
    MatrixRM m_x0;               // (N, d) embeddings (input of layer 0)
    MatrixRM m_xf, m_fn_xhat, m_hf;  // last layer output, final-norm xhat, final hidden (N, d)
    Eigen::VectorXf m_fn_rstd;
    MatrixRM m_logits;           // (N, V), dlogits after backward

    // Scratch (reused every step; no allocation after the first step).
    MatrixRM m_tmp_d, m_tmp_d2, m_dx, m_dh;   // (N, d)
    MatrixRM m_dq, m_dk, m_dv, m_datt;         // (N, H*D) / (N, K*D)
    MatrixRM m_dup, m_dgate, m_dact;           // (N, d_ff)
    MatrixRM m_scr_tt, m_scr_tt2;              // (T, T)
    MatrixRM m_ffn_out;                        // (N, d)
};

}  // namespace ts::train
