// Multi-head attention sub-layer used by every stack: projections as whole-sequence GEMMs, head-major copies so
// each KV group is one GEMM (grouped-query attention), masking with -inf, temperature softmax, output projection;
// and the KV cache's storage (reserve_cache).
#include "core/kernels/attention.h"

#include "core/kernels/ops.h"
#include "core/kernels/threads.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>

namespace ts::detail {

void TraceSink::rec(const char* suffix, std::vector<int64_t> shape, const float* data) const {
    if (!on) return;
    const std::string name = prefix + suffix;
    if (trace->wants(name)) trace->record(name, std::move(shape), data);
}

bool TraceSink::wants(const char* suffix) const { return on && trace->wants(prefix + suffix); }

void TraceSink::rec_derived(const char* suffix, std::vector<int64_t> shape, Trace::DeriveFn make) const {
    if (!on) return;
    const std::string name = prefix + suffix;
    if (trace->wants(name)) trace->record_derived(name, std::move(shape), std::move(make));
}

AttnWeights attn_weights(const Model& m, const std::string& prefix) {
    AttnWeights w;
    w.wq = &m.stored_weight(prefix + ".wq");  // matrices as stored (maybe half precision): only linear() reads them
    w.wk = &m.stored_weight(prefix + ".wk");
    w.wv = &m.stored_weight(prefix + ".wv");
    w.wo = &m.stored_weight(prefix + ".wo");
    w.bq = m.find_weight(prefix + ".bq");
    w.bk = m.find_weight(prefix + ".bk");
    w.bv = m.find_weight(prefix + ".bv");
    w.bo = m.find_weight(prefix + ".bo");
    w.q_norm = m.find_weight(prefix + ".q_norm.weight");
    w.k_norm = m.find_weight(prefix + ".k_norm.weight");
    return w;
}

// Makes room for `needed` positions in every layer (n_kv_heads * capacity rows per layer), keeping the cached rows.
void reserve_cache(KVCache& c, int n_layers, int K, int D, int needed) {
    if (static_cast<int>(c.k.size()) != n_layers || static_cast<int>(c.v.size()) != n_layers) {
        if (c.n_past != 0 || !c.k.empty() || !c.v.empty())
            throw std::invalid_argument("KV cache holds " + std::to_string(c.k.size()) + " layers, the model has " +
                                        std::to_string(n_layers) + " (reset() the cache for a new model)");
        c.k.assign(n_layers, MatrixRM());
        c.v.assign(n_layers, MatrixRM());
        c.capacity = 0;
    }
    if (c.n_past < 0 || c.n_past > c.capacity)
        throw std::invalid_argument("KV cache n_past (" + std::to_string(c.n_past) + ") outside [0, capacity = " +
                                    std::to_string(c.capacity) + "]");
    for (int i = 0; i < n_layers; ++i)
        if (c.capacity > 0 && (c.k[i].rows() != int64_t(K) * c.capacity || c.k[i].cols() != D ||
                               c.v[i].rows() != c.k[i].rows() || c.v[i].cols() != D))
            throw std::invalid_argument("KV cache layer " + std::to_string(i) + " is (" +
                                        std::to_string(c.k[i].rows()) + ", " + std::to_string(c.k[i].cols()) +
                                        "), expected (n_kv_heads * capacity, d_head) = (" +
                                        std::to_string(int64_t(K) * c.capacity) + ", " + std::to_string(D) + ")");
    if (needed <= c.capacity) return;
    const int new_cap = std::max({needed, 2 * c.capacity, 64});
    for (int i = 0; i < n_layers; ++i)
        for (MatrixRM* buf : {&c.k[i], &c.v[i]}) {
            MatrixRM grown(int64_t(K) * new_cap, D);
            for (int g = 0; g < K; ++g)
                if (c.n_past > 0) grown.middleRows(g * new_cap, c.n_past) = buf->middleRows(g * c.capacity, c.n_past);
            buf->swap(grown);
        }
    c.capacity = new_cap;
}

void linear(const MatrixRM& x, const Tensor& w, const Tensor* b, MatrixRM& out) {
    matmul_weight_t(x, w, out);
    if (b) out.rowwise() += Eigen::Map<const RowVectorF>(b->data.data(), b->numel());
}

namespace {

// (N, n*D) with head h in columns [h*D, (h+1)*D) -> head-major (n*N, D).
void to_head_major(const MatrixRM& x, int n, int D, MatrixRM& out) {
    const Eigen::Index N = x.rows();
    out.resize(n * N, D);
    for (int h = 0; h < n; ++h) out.middleRows(h * N, N) = x.middleCols(h * D, D);
}

// Copies rows [0, S) of each head's block (stride rows apart) into one contiguous (n, S, D) buffer for the trace.
void record_heads(const TraceSink& sink, const char* suffix, const float* base, int n, int S, int stride, int D,
                  std::vector<float>& gather) {
    if (!sink.wants(suffix)) return;
    if (stride == S) {
        sink.rec(suffix, {n, S, D}, base);
        return;
    }
    gather.resize(size_t(n) * S * D);
    for (int g = 0; g < n; ++g)
        std::copy_n(base + size_t(g) * stride * D, size_t(S) * D, gather.data() + size_t(g) * S * D);
    sink.rec(suffix, {n, S, D}, gather.data());
}

}  // namespace

bool wants_attention(const TraceSink& sink) {
    for (const auto& [suffix, kind] : kAttentionEntries)
        if (sink.wants(suffix)) return true;
    return false;
}

void record_attention(const TraceSink& sink, std::shared_ptr<const AttentionRows> rows) {
    const std::vector<int64_t> shape{rows->n_heads(), rows->n_queries(), rows->n_keys()};
    for (const auto& entry : kAttentionEntries) {
        const AttentionRows::Kind kind = entry.second;  // clang 14 cannot capture a structured binding
        sink.rec_derived(entry.first, shape, [rows, kind](const Trace&, std::vector<float>& out) { rows->all(kind, out); });
    }
    sink.trace->set_attention(sink.prefix, std::move(rows));
}

void attention_forward(const AttnWeights& w, const AttnParams& p, const MatrixRM& xq, const MatrixRM& xkv,
                       const MaskTable& mask, const CacheSlot* cache, AttnWorkspace& ws, const TraceSink& sink,
                       const AttnEdits& edits) {
    const int H = p.n_heads, K = p.n_kv_heads, D = p.d_head, rep = H / K;
    const int T = static_cast<int>(xq.rows());
    const int Sn = static_cast<int>(xkv.rows());
    const int n_past = cache ? cache->n_past : 0;
    const int S = n_past + Sn;
    const int k_start = p.q_start;  // RoPE only runs in self-attention, where new keys sit at the queries' positions

    // --- projections over the whole sequence, then head-major copies -------------------------------------------
    linear(xq, *w.wq, w.bq, ws.q);
    linear(xkv, *w.wk, w.bk, ws.k);
    linear(xkv, *w.wv, w.bv, ws.v);
    to_head_major(ws.q, H, D, ws.qh);
    to_head_major(ws.k, K, D, ws.kh);
    to_head_major(ws.v, K, D, ws.vh);
    sink.rec("q", {H, T, D}, ws.qh.data());
    sink.rec("k", {K, Sn, D}, ws.kh.data());
    sink.rec("v", {K, Sn, D}, ws.vh.data());

    if (w.q_norm) {  // qk-norm: RMSNorm over d_head per head and position (before RoPE)
        ws.qh = rms_norm(ws.qh, std::span<const float>(w.q_norm->data), p.norm_eps);
        ws.kh = rms_norm(ws.kh, std::span<const float>(w.k_norm->data), p.norm_eps);
        sink.rec("q_normed", {H, T, D}, ws.qh.data());
        sink.rec("k_normed", {K, Sn, D}, ws.kh.data());
    }
    if (p.rope) {
        const int R = p.rotary_dim > 0 ? p.rotary_dim : D;
        for (int h = 0; h < H; ++h)
            apply_rope_rows(ws.qh.data() + size_t(h) * T * D, T, D, p.q_start, p.rope_theta, p.rope_layout, R);
        for (int g = 0; g < K; ++g)
            apply_rope_rows(ws.kh.data() + size_t(g) * Sn * D, Sn, D, k_start, p.rope_theta, p.rope_layout, R);
        sink.rec("q_rot", {H, T, D}, ws.qh.data());
    }

    // --- key/value storage: this call's rows, or the cache with them appended ------------------------------------
    const float* kbase = ws.kh.data();
    const float* vbase = ws.vh.data();
    int stride = Sn;
    if (cache) {
        const int cap = cache->capacity;
        for (int g = 0; g < K; ++g) {
            cache->k->middleRows(g * cap + n_past, Sn) = ws.kh.middleRows(g * Sn, Sn);
            cache->v->middleRows(g * cap + n_past, Sn) = ws.vh.middleRows(g * Sn, Sn);
        }
        kbase = cache->k->data();
        vbase = cache->v->data();
        stride = cap;
    }
    if (p.rope) record_heads(sink, "k_rot", kbase, K, S, stride, D, ws.gather);

    // --- per head h (KV group g = h / rep), on compute_threads() threads, kAttnRowBlock query rows at a time:
    // probs = softmax(mask(Q_h K_g^T · scale + bias) / temperature) into a per-thread (block, S) buffer, head_out =
    // probs V_g. No (T, S) matrix is held; a trace that wants scores or probabilities gets an AttentionRows that
    // recomputes any of them with this same kernel when read.
    if (!(p.temperature > 0.0f) || !std::isfinite(p.temperature))  // checked here: nothing may throw inside omp
        throw std::invalid_argument("softmax_rows: temperature must be a finite number > 0, found " +
                                    std::to_string(p.temperature));
    const float scale = p.scale ? 1.0f / std::sqrt(static_cast<float>(D)) : 1.0f;
    ws.head_out.resize(H * T, D);
    const MatrixRM* bias = p.position_bias.get();
    if (bias && (bias->rows() != int64_t(H) * T || bias->cols() != S))
        throw std::invalid_argument("attention: position bias is (" + std::to_string(bias->rows()) + ", " +
                                    std::to_string(bias->cols()) + "), expected (H*T, S) = (" +
                                    std::to_string(int64_t(H) * T) + ", " + std::to_string(S) + ")");
    if (bias) sink.rec("position_bias", {H, T, S}, bias->data());
    const int n_threads = compute_threads();
    if (static_cast<int>(ws.probs.size()) < n_threads) ws.probs.resize(size_t(n_threads));
    for (int i = 0; i < n_threads; ++i) ws.probs[size_t(i)].resize(kAttnRowBlock, S);
#pragma omp parallel for num_threads(n_threads) if (n_threads > 1 && H > 1) schedule(static)
    for (int h = 0; h < H; ++h) {
        const int g = h / rep;
        MatrixRM& P = ws.probs[size_t(compute_thread_index())];
        const float* kg = kbase + size_t(g) * stride * D;
        const ConstMapRM Vg(vbase + size_t(g) * stride * D, S, D);
        for (int r0 = 0; r0 < T; r0 += kAttnRowBlock) {
            const int n = std::min(kAttnRowBlock, T - r0);
            const int e = attention_probs_block(ws.qh.data() + (size_t(h) * T + r0) * D, kg, D, S, r0, n, mask,
                                                scale, bias ? bias->data() + (size_t(h) * T + r0) * S : nullptr,
                                                p.temperature, P.data());
            auto out = ws.head_out.middleRows(int64_t(h) * T + r0, n);
            if (e == 0)
                out.setZero();
            else
                out.noalias() = P.topLeftCorner(n, e) * Vg.topRows(e);
        }
    }
    if (wants_attention(sink)) {
        auto keys = std::make_shared<MatrixRM>(int64_t(K) * S, D);
        for (int g = 0; g < K; ++g)
            keys->middleRows(int64_t(g) * S, S) = ConstMapRM(kbase + size_t(g) * stride * D, S, D);
        std::vector<AttentionRows::QueryPiece> q{{std::make_shared<const MatrixRM>(ws.qh), 0, T}};
        record_attention(sink, std::make_shared<const AttentionRows>(H, K, D, std::move(q), std::move(keys), mask,
                                                                     p.position_bias, scale, p.temperature));
    }

    if (!edits.head_out.empty()) apply_head_edits(edits.head_out, edits.start_pos, H, T, ws.head_out);
    sink.rec("head_out", {H, T, D}, ws.head_out.data());
    ws.concat.resize(T, H * D);
    for (int h = 0; h < H; ++h) ws.concat.middleCols(h * D, D) = ws.head_out.middleRows(h * T, T);
    linear(ws.concat, *w.wo, w.bo, ws.out);
    if (!edits.out.empty()) apply_row_edits(edits.out, edits.start_pos, ws.out);
    sink.rec("out", ws.out);
}

}  // namespace ts::detail
