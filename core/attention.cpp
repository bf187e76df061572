// Multi-head attention sub-layer used by every stack: projections as whole-sequence GEMMs, head-major copies so
// each KV group is one GEMM (grouped-query attention), masking with -inf, temperature softmax, output projection;
// and the KV cache's storage (reserve_cache).
#include "core/attention.h"

#include "core/ops.h"
#include "core/threads.h"

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
    if (spec.kind == MaskKind::None && spec.key_padding.empty()) return mt;
    auto allowed = std::make_shared<std::vector<uint8_t>>(size_t(T) * S, uint8_t{1});
    for (int t = 0; t < T; ++t) {
        const int qpos = q_start + t;
        uint8_t* row = allowed->data() + size_t(t) * S;
        for (int s = 0; s < S; ++s) {
            const int kpos = k_start + s;
            bool ok = true;
            switch (spec.kind) {
                case MaskKind::None: break;
                case MaskKind::Causal: ok = kpos <= qpos; break;
                case MaskKind::SlidingWindow: ok = kpos <= qpos && kpos > qpos - spec.window; break;
                case MaskKind::Custom: ok = spec.custom[size_t(t) * S + s] != 0; break;
            }
            if (!spec.key_padding.empty() && spec.key_padding[s]) ok = false;
            row[s] = ok ? 1 : 0;
        }
        int end = S;
        while (end > 0 && !row[end - 1]) --end;
        mt.row_end.push_back(end);
    }
    mt.allowed = std::move(allowed);
    return mt;
}

}  // namespace ts::detail

namespace ts {
std::vector<uint8_t> mask_table(const MaskSpec& spec, int T, int S) {
    const detail::MaskTable mt = detail::build_mask(spec, std::max(0, T), std::max(0, S), 0, 0);
    if (!mt.allowed) return std::vector<uint8_t>(size_t(std::max(0, T)) * size_t(std::max(0, S)), 1);
    return *mt.allowed;
}
}  // namespace ts

namespace ts::detail {

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

// scores (H, T, S): -inf where allowed (T, S) is 0.
void mask_scores(float* scores, const uint8_t* allowed, int H, int T, int S) {
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    for (int h = 0; h < H; ++h)
        for (int t = 0; t < T; ++t) {
            float* row = scores + (size_t(h) * T + t) * S;
            const uint8_t* ok = allowed + size_t(t) * S;
            for (int s = 0; s < S; ++s)
                if (!ok[s]) row[s] = kNegInf;
        }
}

// One query row of a head, in place and in one pass while the row is in cache: raw scores -> · scale, + bias, -inf
// where the mask forbids, softmax(· / temperature) (divide, not multiply by 1/T, to round like torch). Only the first
// `end` keys are read; the rest of the row (keys after the row's last allowed one, whose probability is exactly 0) is
// set to 0. A fully masked row becomes zeros. The scaling, bias and mask are record_score_views' operations and the
// softmax is softmax_rows' own kernel (core/ops.h), so scores_masked and probs agree with them. temperature already
// checked.
void probs_row_inplace(float* row, int S, int end, float scale, const float* bias, const uint8_t* ok,
                       float temperature) {
    Eigen::Map<RowVectorF> r(row, end);
    if (scale != 1.0f) r *= scale;
    if (bias) r += Eigen::Map<const RowVectorF>(bias, end);
    if (ok) mask_scores(row, ok, 1, 1, end);
    std::fill(row + end, row + S, 0.0f);
    softmax_row_inplace(row, end, temperature);  // core/ops.h: the one softmax kernel
}

}  // namespace

void record_score_views(const TraceSink& sink, int H, int T, int S, float scale,
                        std::shared_ptr<const std::vector<uint8_t>> allowed, std::shared_ptr<const MatrixRM> bias) {
    const std::string src = sink.prefix + "scores";
    sink.rec_derived("scores_scaled", {H, T, S}, [src, scale, bias](const Trace& tr, std::vector<float>& out) {
        const std::vector<float>& in = tr.at(src).data;
        out.assign(in.begin(), in.end());
        for (float& v : out) v *= scale;
        if (bias)
            for (size_t k = 0; k < out.size(); ++k) out[k] += bias->data()[k];
    });
    sink.rec_derived("scores_masked", {H, T, S},
                     [src, scale, bias, keep = std::move(allowed), H, T, S](const Trace& tr, std::vector<float>& out) {
                         const std::vector<float>& in = tr.at(src).data;
                         out.assign(in.begin(), in.end());
                         for (float& v : out) v *= scale;
                         if (bias)
                             for (size_t k = 0; k < out.size(); ++k) out[k] += bias->data()[k];
                         if (keep) mask_scores(out.data(), keep->data(), H, T, S);
                     });
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

    // --- per head h (KV group g = h / rep), on compute_threads() threads: scores = Q_h K_g^T, probs =
    // softmax(mask(scores · scale) / temperature), head_out = probs V_g. Raw scores get a buffer of their own only
    // when the trace wants them; otherwise probs are computed in place.
    if (!(p.temperature > 0.0f) || !std::isfinite(p.temperature))  // checked here: nothing may throw inside omp
        throw std::invalid_argument("softmax_rows: temperature must be a finite number > 0, found " +
                                    std::to_string(p.temperature));
    const float scale = p.scale ? 1.0f / std::sqrt(static_cast<float>(D)) : 1.0f;
    const bool keep_scores = sink.wants("scores") || sink.wants("scores_scaled") || sink.wants("scores_masked");
    if (keep_scores) ws.scores.resize(H * T, S);
    ws.probs.resize(H * T, S);
    ws.head_out.resize(H * T, D);
    const uint8_t* allowed = mask.allowed ? mask.allowed->data() : nullptr;
    const MatrixRM* bias = p.position_bias.get();
    if (bias && (bias->rows() != int64_t(H) * T || bias->cols() != S))
        throw std::invalid_argument("attention: position bias is (" + std::to_string(bias->rows()) + ", " +
                                    std::to_string(bias->cols()) + "), expected (H*T, S) = (" +
                                    std::to_string(int64_t(H) * T) + ", " + std::to_string(S) + ")");
    if (bias) sink.rec("position_bias", {H, T, S}, bias->data());
    // Keys past a row's last allowed one (mask.row_end) have probability exactly 0: the softmax and probs V stop
    // there (a causal mask halves both), and without recorded raw scores Q K^T too.
    const auto row_end = [&](int t) { return mask.row_end.empty() ? S : mask.row_end[size_t(t)]; };
    constexpr int kRowBlock = 64;  // rows of a block that shares one key extent (its last row's, for a causal mask)
    const auto block_end = [&](int r0, int n) {
        int e = 0;
        for (int t = r0; t < r0 + n; ++t) e = std::max(e, row_end(t));
        return e;
    };
    const int n_threads = compute_threads();
#pragma omp parallel for num_threads(n_threads) if (n_threads > 1 && H > 1) schedule(static)
    for (int h = 0; h < H; ++h) {
        const int g = h / rep;
        const ConstMapRM Kg(kbase + size_t(g) * stride * D, S, D);
        const ConstMapRM Vg(vbase + size_t(g) * stride * D, S, D);
        const ConstMapRM Qh(ws.qh.data() + size_t(h) * T * D, T, D);
        MapRM Ph(ws.probs.data() + size_t(h) * T * S, T, S);
        if (keep_scores) {  // the trace shows every raw score, masked ones included
            MapRM Sh(ws.scores.data() + size_t(h) * T * S, T, S);
            Sh.noalias() = Qh * Kg.transpose();
            Ph = Sh;
        } else {
            for (int r0 = 0; r0 < T; r0 += kRowBlock) {
                const int n = std::min(kRowBlock, T - r0), e = block_end(r0, n);
                if (e > 0) Ph.block(r0, 0, n, e).noalias() = Qh.middleRows(r0, n) * Kg.topRows(e).transpose();
            }
        }
        for (int t = 0; t < T; ++t)
            probs_row_inplace(Ph.data() + size_t(t) * S, S, row_end(t), scale,
                              bias ? bias->data() + (size_t(h) * T + size_t(t)) * S : nullptr,
                              allowed ? allowed + size_t(t) * S : nullptr, p.temperature);
        for (int r0 = 0; r0 < T; r0 += kRowBlock) {
            const int n = std::min(kRowBlock, T - r0), e = block_end(r0, n);
            auto out = ws.head_out.middleRows(int64_t(h) * T + r0, n);
            if (e == 0)
                out.setZero();
            else
                out.noalias() = Ph.block(r0, 0, n, e) * Vg.topRows(e);
        }
    }
    if (keep_scores) {
        sink.rec("scores", {H, T, S}, ws.scores.data());
        if (sink.wants("scores")) {
            // scores is kept, so ÷√D and the mask are recomputed from it when first asked instead of stored: two
            // fewer (H, T, S) tensors per layer. The same float operations as above, so the values are identical.
            record_score_views(sink, H, T, S, scale, mask.allowed, p.position_bias);
        } else {  // a filter that wants the scaled or masked scores without the raw ones (rare): store them
            MatrixRM tmp = ws.scores * scale;
            if (bias) tmp += *bias;
            sink.rec("scores_scaled", {H, T, S}, tmp.data());
            if (allowed) mask_scores(tmp.data(), allowed, H, T, S);
            sink.rec("scores_masked", {H, T, S}, tmp.data());
        }
    }
    sink.rec("probs", {H, T, S}, ws.probs.data());

    if (!edits.head_out.empty()) apply_head_edits(edits.head_out, edits.start_pos, H, T, ws.head_out);
    sink.rec("head_out", {H, T, D}, ws.head_out.data());
    ws.concat.resize(T, H * D);
    for (int h = 0; h < H; ++h) ws.concat.middleCols(h * D, D) = ws.head_out.middleRows(h * T, T);
    linear(ws.concat, *w.wo, w.bo, ws.out);
    if (!edits.out.empty()) apply_row_edits(edits.out, edits.start_pos, ws.out);
    sink.rec("out", ws.out);
}

}  // namespace ts::detail
