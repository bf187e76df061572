// Attention on demand: what one attention block's T × S scores and probabilities are computed from (queries and keys
// after qk-norm / RoPE, the mask as a rule, the position bias, scale and temperature), kept by the forward in
// O(T · d) instead of the (H, T, S) tensors themselves. Any rows of any head are computed when asked, with the same
// float operations the forward ran, so they equal the forward's own probabilities. The trace keeps one per block
// (Trace::attention("dec.3.attn.")); its "...attn.probs" / "scores*" entries are computed from it on first read.
#pragma once

#include "core/model/model.h"
#include "core/model/tensor.h"
#include "core/trace/trace.h"

#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace ts::detail {

/// Which (query, key) pairs may attend, as a rule (never a (T, S) table, except a Custom mask's own): T query rows at
/// absolute positions q_start.., S keys at k_start... Row t allows keys s with band_begin(t) <= s < row_end(t) that
/// are neither padding nor 0 in the custom table.
struct MaskTable {
    int T = 0, S = 0;
    MaskKind kind = MaskKind::None;
    int window = 0;
    int q_start = 0, k_start = 0;
    std::shared_ptr<const std::vector<uint8_t>> custom;       ///< (T, S), Custom only
    std::shared_ptr<const std::vector<uint8_t>> key_padding;  ///< (S), 1 = padding; null: none
    /// (T) per query row, one past its last allowed key (0 when it has none); empty when nothing is masked (every
    /// row ends at S). Keys past it have probability exactly 0, so attention stops there.
    std::vector<int> row_end;

    [[nodiscard]] bool masks_anything() const { return !row_end.empty(); }
    [[nodiscard]] int end(int t) const { return row_end.empty() ? S : row_end[size_t(t)]; }
    /// First key the band lets row t see (SlidingWindow; 0 otherwise).
    [[nodiscard]] int band_begin(int t) const;
    [[nodiscard]] bool allowed(int t, int s) const;
    /// out[k] = 1 where row t may not attend key s0 + k, else 0, for k in [0, n) (s0 + n <= S): allowed() for a run
    /// of cells, a row at a time (the figures' masked cells).
    void masked_cells(int t, int s0, int n, uint8_t* out) const;
    /// row[0, n) (n <= S) <- −∞ where row t may not attend.
    void apply(int t, float* row, int n) const;
};

/// q_start / k_start: absolute positions of the first query row and first key column. O(T + S) memory for every kind
/// but Custom. Throws std::invalid_argument on a custom mask that is not (T, S), key_padding not of length S, or
/// window < 1.
[[nodiscard]] MaskTable build_mask(const MaskSpec& spec, int T, int S, int q_start, int k_start);

/// Query rows per block of the attention kernels: the forward and AttentionRows both compute probabilities in blocks
/// of this many rows starting at multiples of it (of the call's own rows), so they run the same GEMM shapes.
inline constexpr int kAttnRowBlock = 64;

/// Probabilities of the query rows [t0, t0 + n) of one head into P (n, S) row-major: raw Q K^T over the keys
/// [0, e) (e = the rows' largest mask end), then per row · scale, + bias, −∞ where masked, softmax(· / temperature)
/// (core/kernels/ops.h softmax_row_inplace); keys from e on are 0, a fully masked row is all 0. q: the head's rows (n, D);
/// k: the KV group's keys (S, D); bias: the head's (T, S) rows (row t0 first) or null. Returns e.
int attention_probs_block(const float* q, const float* k, int D, int S, int t0, int n, const MaskTable& mask,
                          float scale, const float* bias, float temperature, float* P);

}  // namespace ts::detail

namespace ts {

/// One attention block's scores and probabilities on demand. Shapes: H heads of T query rows over S keys. The
/// kinds are the trace's attn.scores (raw Q K^T), scores_scaled (· scale + position bias), scores_masked (−∞ where
/// masked) and probs (softmax(scores_masked / temperature), fully masked rows 0) — "Attention Is All You Need" eq. 1,
/// torch F.scaled_dot_product_attention's attention weights. Immutable and thread-safe once built.
class AttentionRows {
public:
    enum class Kind { Scores, ScoresScaled, ScoresMasked, Probs };

    /// One run of query rows: rows [offset, offset + n) of every head, head-major (H * ld, D) with ld >= n (head h's
    /// rows start at h * ld; a piece clipped to its first n rows keeps its matrix).
    struct QueryPiece {
        std::shared_ptr<const MatrixRM> q;
        int offset = 0, n = 0;
    };
    /// q pieces cover rows [0, T) in order; k (K * S, D) head-major; bias (H * T, S) or null. temperature > 0.
    AttentionRows(int n_heads, int n_kv_heads, int d_head, std::vector<QueryPiece> q, std::shared_ptr<const MatrixRM> k,
                  detail::MaskTable mask, std::shared_ptr<const MatrixRM> bias, float scale, float temperature);

    [[nodiscard]] int n_heads() const { return m_H; }
    [[nodiscard]] int n_kv_heads() const { return m_K; }
    [[nodiscard]] int d_head() const { return m_D; }
    [[nodiscard]] int n_queries() const { return m_mask.T; }  ///< T
    [[nodiscard]] int n_keys() const { return m_mask.S; }     ///< S
    [[nodiscard]] float scale() const { return m_scale; }
    [[nodiscard]] float temperature() const { return m_temperature; }
    [[nodiscard]] const detail::MaskTable& mask() const { return m_mask; }
    [[nodiscard]] const std::vector<QueryPiece>& query_pieces() const { return m_q; }
    [[nodiscard]] const std::shared_ptr<const MatrixRM>& keys() const { return m_k; }
    /// True when query t may attend key s.
    [[nodiscard]] bool allowed(int t, int s) const { return m_mask.allowed(t, s); }

    /// Rows [r0, r1) of head h as (r1 - r0, S) row-major in out (resized). Throws std::out_of_range on a head or row
    /// range outside the block. Probabilities are computed over the aligned kAttnRowBlock blocks that hold the rows,
    /// like the forward, so they equal its values bit for bit (for a forward of the same rows).
    void rows(Kind kind, int h, int r0, int r1, std::vector<float>& out) const;
    /// Every head, (H, T, S), as the trace entry of that kind (heads in parallel on compute_threads()).
    void all(Kind kind, std::vector<float>& out) const;

    /// How pooled() reduces a block of cells: the largest value, or the mean (masked cells count as 0 in Probs).
    enum class Pool { Max, Mean };
    /// An overview of head h: T × S cut into out_rows × out_cols blocks of ceil(T / out_rows) × ceil(S / out_cols)
    /// cells (the last ones smaller), each block reduced by `pool`; computed kAttnRowBlock rows at a time, so no
    /// (T, S) matrix exists. out_rows / out_cols are clamped to [1, T] / [1, S]; the result is (rows, cols) with
    /// rows = ceil(T / row_step), row_step and col_step the block sizes. Masked cells (−∞ in the score kinds) are
    /// skipped; a block with nothing allowed is −∞ (scores) or 0 (probs), and `masked` (same shape) flags it.
    struct Pooled {
        std::vector<float> values;
        std::vector<uint8_t> masked;
        int rows = 0, cols = 0, row_step = 1, col_step = 1;
    };
    [[nodiscard]] Pooled pooled(Kind kind, int h, int out_rows, int out_cols, Pool pool) const;
    /// pooled(), remembered: the same request again returns the kept result (a window redraws its overviews every
    /// frame). Results are kept up to kPooledCacheBytes, least recently used dropped first. Thread-safe.
    [[nodiscard]] std::shared_ptr<const Pooled> pooled_cached(Kind kind, int h, int out_rows, int out_cols,
                                                              Pool pool) const;
    static constexpr size_t kPooledCacheBytes = size_t(64) << 20;

    /// Bytes of one (H, T, S) tensor of floats: what materialising a kind costs.
    [[nodiscard]] size_t full_bytes() const { return size_t(m_H) * size_t(m_mask.T) * size_t(m_mask.S) * 4; }
    /// Bytes this object keeps (queries, keys, mask, bias).
    [[nodiscard]] size_t bytes_held() const;

private:
    const float* query_row(int h, int t) const;  // needs t's piece
    void block(Kind kind, int h, int b0, int n, float* out) const;  // n rows from b0 (one piece), (n, S)

    int m_H, m_K, m_D;
    std::vector<QueryPiece> m_q;
    std::shared_ptr<const MatrixRM> m_k;
    detail::MaskTable m_mask;
    std::shared_ptr<const MatrixRM> m_bias;
    float m_scale, m_temperature;

    struct PooledCache;  // LRU of pooled_cached results
    std::shared_ptr<PooledCache> m_cache;
};

/// The trace entries an AttentionRows computes, by the suffix after the block ("dec.3.attn." + "probs").
inline constexpr std::pair<const char*, AttentionRows::Kind> kAttentionEntries[] = {
    {"scores", AttentionRows::Kind::Scores},
    {"scores_scaled", AttentionRows::Kind::ScoresScaled},
    {"scores_masked", AttentionRows::Kind::ScoresMasked},
    {"probs", AttentionRows::Kind::Probs}};
/// The kind of an attention entry ("dec.3.attn.probs" -> Probs) and its block ("dec.3.attn."); nullopt for any
/// other name.
[[nodiscard]] std::optional<AttentionRows::Kind> attention_entry_kind(std::string_view name,
                                                                     std::string* block = nullptr);

/// Rows [row0, row1) (row1 < 0: to the end) of head `head` of the trace entry `name` (H, T, S or D), row-major in the
/// result with *rows = row1 − row0 and *cols its width. An attention entry (…attn.scores, scores_scaled,
/// scores_masked, probs) of a block with an AttentionRows is computed for this head and these rows only, so the
/// (H, T, S) tensor is never built; any other rank-3 entry is sliced. Empty (*rows = *cols = 0) when the entry is
/// absent, not rank 3, or the head / rows are out of range.
[[nodiscard]] std::vector<float> trace_head_rows(const Trace& trace, const std::string& name, int head, int* rows,
                                                 int* cols, int row0 = 0, int row1 = -1);

}  // namespace ts
