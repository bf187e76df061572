// Masks as rules, the blockwise attention-probability kernel the forward and AttentionRows share, and AttentionRows:
// any rows of any head of an attention block, recomputed from its queries and keys when asked.
#include "core/kernels/attention_rows.h"

#include "core/kernels/ops.h"
#include "core/kernels/threads.h"

#include <algorithm>
#include <limits>
#include <list>
#include <mutex>
#include <tuple>
#include <stdexcept>
#include <string>

namespace ts::detail {

namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Keys [lo, hi) the kind's band lets row t see (before padding and the custom table).
std::pair<int, int> band(const MaskTable& m, int t) {
    const int qpos = m.q_start + t;
    const auto clamp = [&](int v) { return std::clamp(v, 0, m.S); };
    switch (m.kind) {
        case MaskKind::Causal: return {0, clamp(qpos - m.k_start + 1)};
        case MaskKind::SlidingWindow: return {clamp(qpos - m.window + 1 - m.k_start), clamp(qpos - m.k_start + 1)};
        case MaskKind::None:
        case MaskKind::Custom: break;
    }
    return {0, m.S};
}
}  // namespace

int MaskTable::band_begin(int t) const { return band(*this, t).first; }

bool MaskTable::allowed(int t, int s) const {
    const auto [lo, hi] = band(*this, t);
    if (s < lo || s >= hi) return false;
    if (key_padding && (*key_padding)[size_t(s)]) return false;
    if (custom && !(*custom)[size_t(t) * S + s]) return false;
    return true;
}

void MaskTable::masked_cells(int t, int s0, int n, uint8_t* out) const {
    const auto [lo, hi] = band(*this, t);
    for (int k = 0; k < n; ++k) out[k] = uint8_t(s0 + k < lo || s0 + k >= hi);
    if (key_padding)
        for (int k = 0; k < n; ++k) out[k] |= (*key_padding)[size_t(s0 + k)] ? 1 : 0;
    if (custom) {
        const uint8_t* ok = custom->data() + size_t(t) * S + size_t(s0);
        for (int k = 0; k < n; ++k) out[k] |= ok[k] ? 0 : 1;
    }
}

void MaskTable::apply(int t, float* row, int n) const {
    const auto [lo, hi] = band(*this, t);
    std::fill(row, row + std::min(lo, n), kNegInf);
    if (hi < n) std::fill(row + hi, row + n, kNegInf);
    const int a = std::min(lo, n), b = std::min(hi, n);
    if (key_padding)
        for (int s = a; s < b; ++s)
            if ((*key_padding)[size_t(s)]) row[s] = kNegInf;
    if (custom) {
        const uint8_t* ok = custom->data() + size_t(t) * S;
        for (int s = a; s < b; ++s)
            if (!ok[s]) row[s] = kNegInf;
    }
}

MaskTable build_mask(const MaskSpec& spec, int T, int S, int q_start, int k_start) {
    MaskTable mt;
    mt.T = T;
    mt.S = S;
    if (!spec.key_padding.empty() && static_cast<int>(spec.key_padding.size()) != S)
        throw std::invalid_argument("key_padding has length " + std::to_string(spec.key_padding.size()) +
                                    ", expected one entry per key (" + std::to_string(S) + ")");
    if (spec.kind == MaskKind::Custom && static_cast<int64_t>(spec.custom.size()) != int64_t(T) * S)
        throw std::invalid_argument("custom mask has " + std::to_string(spec.custom.size()) +
                                    " entries, expected (T, S) = (" + std::to_string(T) + ", " + std::to_string(S) +
                                    ") = " + std::to_string(int64_t(T) * S));
    if (spec.kind == MaskKind::SlidingWindow && spec.window < 1)
        throw std::invalid_argument("sliding-window mask needs window >= 1, got " + std::to_string(spec.window));
    mt.kind = spec.kind;
    mt.window = spec.window;
    mt.q_start = q_start;
    mt.k_start = k_start;
    if (spec.kind == MaskKind::None && spec.key_padding.empty()) return mt;
    if (!spec.key_padding.empty()) mt.key_padding = std::make_shared<const std::vector<uint8_t>>(spec.key_padding);
    if (spec.kind == MaskKind::Custom) mt.custom = std::make_shared<const std::vector<uint8_t>>(spec.custom);
    mt.row_end.resize(size_t(T));
    for (int t = 0; t < T; ++t) {
        const auto [lo, hi] = band(mt, t);
        int e = hi;
        while (e > lo && !mt.allowed(t, e - 1)) --e;
        mt.row_end[size_t(t)] = e == lo ? 0 : e;
    }
    return mt;
}

int attention_probs_block(const float* q, const float* k, int D, int S, int t0, int n, const MaskTable& mask,
                          float scale, const float* bias, float temperature, float* P) {
    int e = 0;
    for (int t = t0; t < t0 + n; ++t) e = std::max(e, mask.end(t));
    MapRM Pm(P, n, S);
    if (e > 0) Pm.leftCols(e).noalias() = ConstMapRM(q, n, D) * ConstMapRM(k, S, D).topRows(e).transpose();
    for (int i = 0; i < n; ++i) {
        float* row = P + size_t(i) * S;
        const int t = t0 + i, end = mask.end(t);
        Eigen::Map<RowVectorF> r(row, end);
        if (scale != 1.0f) r *= scale;
        if (bias) r += Eigen::Map<const RowVectorF>(bias + size_t(i) * S, end);
        if (mask.masks_anything()) mask.apply(t, row, end);
        std::fill(row + end, row + S, 0.0f);
        softmax_row_inplace(row, end, temperature);  // core/kernels/ops.h: the one softmax kernel
    }
    return e;
}

}  // namespace ts::detail

namespace ts {

std::vector<uint8_t> mask_table(const MaskSpec& spec, int T, int S) {
    T = std::max(0, T);
    S = std::max(0, S);
    const detail::MaskTable mt = detail::build_mask(spec, T, S, 0, 0);
    std::vector<uint8_t> out(size_t(T) * size_t(S), 1);
    if (mt.masks_anything())
        for (int t = 0; t < T; ++t)
            for (int s = 0; s < S; ++s) out[size_t(t) * S + s] = mt.allowed(t, s) ? 1 : 0;
    return out;
}

struct AttentionRows::PooledCache {
    using Key = std::tuple<int, int, int, int, int>;  // kind, head, rows, cols, pool
    std::mutex mutex;
    std::list<std::pair<Key, std::shared_ptr<const Pooled>>> lru;  // most recent first
    size_t bytes = 0;
};

std::shared_ptr<const AttentionRows::Pooled> AttentionRows::pooled_cached(Kind kind, int h, int out_rows, int out_cols,
                                                                          Pool pool) const {
    const PooledCache::Key key{int(kind), h, out_rows, out_cols, int(pool)};
    {
        std::lock_guard lk(m_cache->mutex);
        for (auto it = m_cache->lru.begin(); it != m_cache->lru.end(); ++it)
            if (it->first == key) {
                m_cache->lru.splice(m_cache->lru.begin(), m_cache->lru, it);
                return it->second;
            }
    }
    auto result = std::make_shared<const Pooled>(pooled(kind, h, out_rows, out_cols, pool));
    const size_t size = result->values.size() * sizeof(float) + result->masked.size();
    std::lock_guard lk(m_cache->mutex);
    m_cache->lru.emplace_front(key, result);
    m_cache->bytes += size;
    while (m_cache->bytes > kPooledCacheBytes && m_cache->lru.size() > 1) {
        const auto& last = m_cache->lru.back().second;
        m_cache->bytes -= last->values.size() * sizeof(float) + last->masked.size();
        m_cache->lru.pop_back();
    }
    return result;
}

AttentionRows::AttentionRows(int n_heads, int n_kv_heads, int d_head, std::vector<QueryPiece> q,
                             std::shared_ptr<const MatrixRM> k, detail::MaskTable mask,
                             std::shared_ptr<const MatrixRM> bias, float scale, float temperature)
    : m_H(n_heads), m_K(n_kv_heads), m_D(d_head), m_q(std::move(q)), m_k(std::move(k)), m_mask(std::move(mask)),
      m_bias(std::move(bias)), m_scale(scale), m_temperature(temperature), m_cache(std::make_shared<PooledCache>()) {
    int next = 0;
    for (const QueryPiece& p : m_q) {
        if (p.offset != next || p.n < 0 || !p.q || p.q->rows() % m_H != 0 || p.q->rows() / m_H < p.n ||
            p.q->cols() != m_D)
            throw std::invalid_argument("AttentionRows: query pieces must cover rows 0..T-1 in order, each (H * ld, D)"
                                        " with ld >= n");
        next += p.n;
    }
    if (next != m_mask.T) throw std::invalid_argument("AttentionRows: query pieces cover " + std::to_string(next) +
                                                      " rows, the mask " + std::to_string(m_mask.T));
    if (!m_k || m_k->rows() != int64_t(m_K) * m_mask.S || m_k->cols() != m_D)
        throw std::invalid_argument("AttentionRows: keys must be (n_kv_heads * S, d_head)");
    if (m_K < 1 || m_H % m_K != 0) throw std::invalid_argument("AttentionRows: n_heads must be a multiple of n_kv_heads");
}

size_t AttentionRows::bytes_held() const {
    size_t b = size_t(m_k->size()) * 4 + m_mask.row_end.size() * 4;
    for (const QueryPiece& p : m_q) b += size_t(p.q->size()) * 4;
    if (m_mask.custom) b += m_mask.custom->size();
    if (m_bias) b += size_t(m_bias->size()) * 4;
    return b;
}

void AttentionRows::block(Kind kind, int h, int b0, int n, float* out) const {
    const int T = m_mask.T, S = m_mask.S, D = m_D;
    auto piece = std::upper_bound(m_q.begin(), m_q.end(), b0,
                                  [](int r, const QueryPiece& p) { return r < p.offset; }) - 1;
    const size_t ld = size_t(piece->q->rows() / m_H);
    const float* q = piece->q->data() + (size_t(h) * ld + size_t(b0 - piece->offset)) * D;
    const float* k = m_k->data() + size_t(h / (m_H / m_K)) * S * D;
    const float* bias = m_bias ? m_bias->data() + (size_t(h) * T + b0) * S : nullptr;
    if (kind == Kind::Probs) {
        (void)detail::attention_probs_block(q, k, D, S, b0, n, m_mask, m_scale, bias, m_temperature, out);
        return;
    }
    MapRM O(out, n, S);
    O.noalias() = ConstMapRM(q, n, D) * ConstMapRM(k, S, D).transpose();
    if (kind == Kind::Scores) return;
    for (int i = 0; i < n; ++i) {  // the forward's order: · scale, + bias, then the mask
        Eigen::Map<RowVectorF> r(out + size_t(i) * S, S);
        r *= m_scale;
        if (bias) r += Eigen::Map<const RowVectorF>(bias + size_t(i) * S, S);
        if (kind == Kind::ScoresMasked && m_mask.masks_anything()) m_mask.apply(b0 + i, r.data(), S);
    }
}

namespace {
// Calls f(b0, n) for the aligned blocks (kAttnRowBlock rows from each piece's start, clipped to it) meeting [r0, r1).
template <class F>
void for_blocks(const std::vector<AttentionRows::QueryPiece>& pieces, int r0, int r1, F&& f) {
    for (const auto& p : pieces) {
        const int lo = std::max(r0, p.offset), hi = std::min(r1, p.offset + p.n);
        if (lo >= hi) continue;
        for (int b0 = p.offset + (lo - p.offset) / detail::kAttnRowBlock * detail::kAttnRowBlock; b0 < hi;
             b0 += detail::kAttnRowBlock)
            f(b0, std::min(detail::kAttnRowBlock, p.offset + p.n - b0));
    }
}
}  // namespace

// Blocks are computed in an Eigen-aligned (kAttnRowBlock, S) buffer like the forward's: Eigen's vectorised row
// operations (exp, the softmax sum) treat the elements before the first aligned address one by one, so the same row
// at another address can round differently in its last bit.
void AttentionRows::rows(Kind kind, int h, int r0, int r1, std::vector<float>& out) const {
    const int T = m_mask.T, S = m_mask.S;
    if (h < 0 || h >= m_H) throw std::out_of_range("attention head " + std::to_string(h) + " outside [0, " +
                                                   std::to_string(m_H) + ")");
    if (r0 < 0 || r1 > T || r0 > r1)
        throw std::out_of_range("attention rows [" + std::to_string(r0) + ", " + std::to_string(r1) +
                                ") outside [0, " + std::to_string(T) + ")");
    out.resize(size_t(r1 - r0) * S);
    MatrixRM tmp(detail::kAttnRowBlock, S);
    for_blocks(m_q, r0, r1, [&](int b0, int n) {
        block(kind, h, b0, n, tmp.data());
        const int lo = std::max(r0, b0), hi = std::min(r1, b0 + n);
        std::copy_n(tmp.data() + size_t(lo - b0) * S, size_t(hi - lo) * S, out.data() + size_t(lo - r0) * S);
    });
}

void AttentionRows::all(Kind kind, std::vector<float>& out) const {
    const int T = m_mask.T, S = m_mask.S;
    out.resize(size_t(m_H) * T * S);
    const int n_threads = compute_threads();
#pragma omp parallel for num_threads(n_threads) if (n_threads > 1 && m_H > 1) schedule(static)
    for (int h = 0; h < m_H; ++h) {
        MatrixRM tmp(detail::kAttnRowBlock, S);  // see rows(): the forward's buffer layout, hence its rounding
        for_blocks(m_q, 0, T, [&](int b0, int n) {
            block(kind, h, b0, n, tmp.data());
            std::copy_n(tmp.data(), size_t(n) * S, out.data() + (size_t(h) * T + b0) * S);
        });
    }
}

AttentionRows::Pooled AttentionRows::pooled(Kind kind, int h, int out_rows, int out_cols, Pool pool) const {
    const int T = m_mask.T, S = m_mask.S;
    Pooled p;
    if (T == 0 || S == 0) return p;
    p.row_step = (T + std::clamp(out_rows, 1, T) - 1) / std::clamp(out_rows, 1, T);
    p.col_step = (S + std::clamp(out_cols, 1, S) - 1) / std::clamp(out_cols, 1, S);
    p.rows = (T + p.row_step - 1) / p.row_step;
    p.cols = (S + p.col_step - 1) / p.col_step;
    const size_t n = size_t(p.rows) * p.cols;
    std::vector<double> sum(n, 0.0);
    std::vector<float> best(n, -std::numeric_limits<float>::infinity());
    std::vector<int> allowed(n, 0);
    std::vector<float> buf;
    constexpr int kChunk = 4 * detail::kAttnRowBlock;
    for (int r0 = 0; r0 < T; r0 += kChunk) {
        const int r1 = std::min(T, r0 + kChunk);
        rows(kind, h, r0, r1, buf);
        for (int t = r0; t < r1; ++t) {
            const float* row = buf.data() + size_t(t - r0) * S;
            const size_t base = size_t(t / p.row_step) * p.cols;
            for (int s = 0; s < S; ++s) {
                if (!m_mask.allowed(t, s)) continue;
                const size_t i = base + size_t(s / p.col_step);
                sum[i] += row[s];
                best[i] = std::max(best[i], row[s]);
                ++allowed[i];
            }
        }
    }
    p.values.resize(n);
    p.masked.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
        const int br = int(i) / p.cols, bc = int(i) % p.cols;
        const int cells = (std::min(T, (br + 1) * p.row_step) - br * p.row_step) *
                          (std::min(S, (bc + 1) * p.col_step) - bc * p.col_step);
        if (allowed[i] == 0) {
            p.masked[i] = 1;
            p.values[i] = kind == Kind::Probs ? 0.0f : -std::numeric_limits<float>::infinity();
        } else if (pool == Pool::Max) {
            p.values[i] = kind == Kind::Probs ? std::max(best[i], 0.0f) : best[i];
        } else {  // probs: masked cells are weight 0 and count; scores: the mean of the allowed ones
            p.values[i] = float(sum[i] / double(kind == Kind::Probs ? cells : allowed[i]));
        }
    }
    return p;
}

std::optional<AttentionRows::Kind> attention_entry_kind(std::string_view name, std::string* block) {
    const size_t dot = name.rfind('.');
    if (dot == std::string_view::npos) return std::nullopt;
    for (const auto& [suffix, kind] : kAttentionEntries)
        if (name.substr(dot + 1) == suffix) {
            if (block) *block = std::string(name.substr(0, dot + 1));
            return kind;
        }
    return std::nullopt;
}

std::vector<float> trace_head_rows(const Trace& trace, const std::string& name, int head, int* rows, int* cols, int row0,
                                   int row1) {
    *rows = *cols = 0;
    if (!trace.contains(name)) return {};
    std::string block;
    const std::optional<AttentionRows::Kind> kind = attention_entry_kind(name, &block);
    if (const auto src = kind && trace.is_pending(name) ? trace.attention(block) : nullptr) {
        const int T = src->n_queries();
        if (row1 < 0) row1 = T;
        if (head < 0 || head >= src->n_heads() || row0 < 0 || row1 > T || row0 > row1) return {};
        std::vector<float> out;
        src->rows(*kind, head, row0, row1, out);
        *rows = row1 - row0;
        *cols = src->n_keys();
        return out;
    }
    const Tensor* t = trace.find(name);
    if (!t || t->rank() != 3 || head < 0 || head >= t->dim(0)) return {};
    const int T = int(t->dim(1)), C = int(t->dim(2));
    if (row1 < 0) row1 = T;
    if (row0 < 0 || row1 > T || row0 > row1) return {};
    const size_t base = (size_t(head) * T + size_t(row0)) * C;
    *rows = row1 - row0;
    *cols = C;
    return std::vector<float>(t->data.begin() + ptrdiff_t(base), t->data.begin() + ptrdiff_t(base + size_t(*rows) * C));
}

}  // namespace ts
