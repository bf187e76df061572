// Internal to core: one multi-head attention sub-layer (self or cross, MHA/GQA/MQA, optional qk-norm and RoPE,
// masks, temperature, KV cache) over preallocated workspaces, plus the small trace helper the forward pass uses.
// Public entry points are in core/model/model.h; this header is shared by core/forward/forward.cpp, core/kernels/attention.cpp and
// core/kernels/embedding.cpp only.
#pragma once

#include "core/kernels/attention_rows.h"
#include "core/trace/edit_plan.h"
#include "core/model/model.h"

#include <string>
#include <vector>

namespace ts::detail {

/// Records tensors under "<prefix><suffix>" when the trace wants them; builds no string when capture is off.
struct TraceSink {
    Trace* trace = nullptr;
    bool on = false;     ///< trace->filter().captures_anything()
    std::string prefix;  ///< e.g. "dec.3." (built only when on)

    void rec(const char* suffix, std::vector<int64_t> shape, const float* data) const;
    void rec(const char* suffix, const MatrixRM& m) const { rec(suffix, {m.rows(), m.cols()}, m.data()); }
    [[nodiscard]] bool wants(const char* suffix) const;
    /// Registers "<prefix><suffix>" as derived (Trace::record_derived) when the trace wants it.
    void rec_derived(const char* suffix, std::vector<int64_t> shape, Trace::DeriveFn make) const;
};

// --- the ends of the forward and the KV cache (core/kernels/embedding.cpp, core/kernels/attention.cpp) --------------------------
/// ids -> (T, d_model): tok_emb[id] (x sqrt(d_model) when scale_embeddings) + additive positions of start_pos..
/// start_pos+T-1, then the edits of "<prefix>embed.out"; records <prefix>tok_emb.out, pos.out, embed.out. Throws
/// std::invalid_argument on empty ids, ids outside [0, vocab) or positions beyond max_seq_len (learned positions).
[[nodiscard]] MatrixRM embed(const Model& m, const std::vector<int>& ids, int start_pos, Trace& trace,
                             const std::string& prefix, const StackEdits& ed);
/// hidden (T, d_model) -> logits (T, vocab) (or the last row only); empty when the model has no LM head.
[[nodiscard]] MatrixRM lm_head(const Model& m, const MatrixRM& hidden, bool all_logits);
/// Makes room for `needed` positions in every layer of `c` (n_kv_heads * capacity rows per layer), keeping the
/// cached rows. Throws std::invalid_argument when the cache was built for another model shape.
void reserve_cache(KVCache& c, int n_layers, int K, int D, int needed);

/// out (N, out_features) = x (N, in_features) W^T + b, W in torch.nn.Linear layout (out, in); b may be null.
/// `out` must not alias x. torch.nn.functional.linear.
void linear(const MatrixRM& x, const Tensor& w, const Tensor* b, MatrixRM& out);

/// Pointers into a Model's WeightMap for one attention block (biases / q-k norms null when absent).
struct AttnWeights {
    const Tensor *wq = nullptr, *wk = nullptr, *wv = nullptr, *wo = nullptr;
    const Tensor *bq = nullptr, *bk = nullptr, *bv = nullptr, *bo = nullptr;
    const Tensor *q_norm = nullptr, *k_norm = nullptr;
};
[[nodiscard]] AttnWeights attn_weights(const Model& m, const std::string& prefix);  // prefix "dec.0.attn"

/// Per-forward scratch for one attention kind (self or cross); sized on first use, reused by every layer.
struct AttnWorkspace {
    MatrixRM q, k, v;          ///< projections (T, H*D), (Sn, K*D), (Sn, K*D)
    MatrixRM qh, kh, vh;       ///< head-major (H*T, D), (K*Sn, D), (K*Sn, D)
    std::vector<MatrixRM> probs;  ///< per compute thread, (kAttnRowBlock, S): one block of query rows at a time
    MatrixRM head_out;         ///< (H*T, D)
    MatrixRM concat;           ///< (T, H*D)
    MatrixRM out;              ///< (T, d_model)
    std::vector<float> gather; ///< only used when capturing cached keys/values
};

struct AttnParams {
    int n_heads = 1, n_kv_heads = 1, d_head = 1;
    bool scale = true;
    float temperature = 1.0f;
    bool rope = false;
    float rope_theta = 10000.0f;
    RopeLayout rope_layout = RopeLayout::HalfSplit;
    int rotary_dim = 0;         ///< features of each head RoPE rotates (0 = d_head; GPT-NeoX partial rotary)
    float norm_eps = 1e-5f;     ///< qk-norm epsilon
    int q_start = 0;            ///< absolute position of the first query (RoPE)
    /// T5's relative position bias of this stack (H*T, S), added to the scaled scores before the mask; null: none.
    /// Recorded as attn.position_bias (H, T, S).
    std::shared_ptr<const MatrixRM> position_bias;
};

/// Key/value storage of one layer in a KVCache: new keys are written at rows g*capacity + n_past + s.
struct CacheSlot {
    MatrixRM* k = nullptr;
    MatrixRM* v = nullptr;
    int n_past = 0;
    int capacity = 0;
};

/// Activation edits of one attention block: on the head outputs (before W_o) and on its output (after W_o).
struct AttnEdits {
    EditList head_out, out;
    int start_pos = 0;  ///< absolute position of the first query row
};

/// True when the trace wants any of the block's kAttentionEntries (then the forward keeps an AttentionRows).
[[nodiscard]] bool wants_attention(const TraceSink& sink);
/// Registers <prefix>scores, scores_scaled, scores_masked and probs (H, T, S), whichever the trace wants, as
/// computed on first read from `rows` (AttentionRows::all), and keeps `rows` as the trace's attention(prefix).
/// Call only when wants_attention(sink).
void record_attention(const TraceSink& sink, std::shared_ptr<const AttentionRows> rows);

/// xq: (T, d_model) queries' input; xkv: (Sn, d_model) keys'/values' input (= xq for self-attention).
/// Result in ws.out (T, d_model). `edits` are applied in place before the trace records head_out / out. With `cache`, keys/values of xkv are appended after cache->n_past and attention
/// covers S = n_past + Sn keys. `mask` is (T, S) or empty. Records attn.* under sink (prefix includes the block).
/// Source: "Attention Is All You Need" eq. 1 and §3.2.2; GQA (Ainslie et al. 2023); torch F.scaled_dot_product_attention.
void attention_forward(const AttnWeights& w, const AttnParams& p, const MatrixRM& xq, const MatrixRM& xkv,
                       const MaskTable& mask, const CacheSlot* cache, AttnWorkspace& ws, const TraceSink& sink,
                       const AttnEdits& edits = {});

}  // namespace ts::detail
