// forward_incremental: reuse the previous call's prefix (KV cache + trace rows) and run only the changed tail of a
// causal decoder-only model, then splice the trace so it reads exactly like a full forward's.
#include "core/incremental.h"

#include "core/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>

namespace ts {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// "" when a prefix can be reused under these options, else why not.
std::string why_not_incremental(const ModelConfig& c, const ForwardOptions& opt) {
    if (c.arch != Arch::DecoderOnly)
        return c.arch == Arch::EncoderOnly ? "encoder: every position attends to every other"
                                           : "encoder-decoder: the decoder attends to the whole source";
    if (c.relative_attention_bias) return "relative position bias";
    if (opt.self_mask.kind != MaskKind::Causal) return "the mask is not causal";
    if (!opt.self_mask.key_padding.empty()) return "key padding";
    if (!opt.edits.empty()) return "activation edits";
    if (opt.capture.captures_anything() && !opt.capture.captures_all()) return "a partial capture filter";
    return "";
}

std::string knobs_of(const ForwardOptions& opt) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "t=%a capture=%d all_logits=%d", double(opt.temperature),
                  opt.capture.captures_all() ? 2 : opt.capture.captures_anything() ? 1 : 0, opt.all_logits ? 1 : 0);
    return buf;
}

// Rows [0, P) of a (rows, cols) matrix followed by all rows of `tail`.
MatrixRM concat_rows(const Eigen::Ref<const MatrixRM>& prev, int P, const MatrixRM& tail) {
    MatrixRM out(P + tail.rows(), tail.cols());
    if (P > 0) out.topRows(P) = prev.topRows(P);
    out.bottomRows(tail.rows()) = tail;
    return out;
}

void append(std::vector<float>& out, const float* p, size_t n) { out.insert(out.end(), p, p + n); }

// The state keeps its own copy of hidden states and logits only when the trace does not hold them (capture off).
void keep_outputs(IncrementalState& st, const ForwardResult& r) {
    const bool in_trace = r.trace && r.trace->find("final_norm.out") && r.trace->find("logits");
    st.hidden = in_trace ? MatrixRM() : r.hidden;
    st.logits = in_trace ? MatrixRM() : r.logits;
}

}  // namespace

ForwardResult forward_incremental(const Model& m, const std::vector<int>& ids, const ForwardOptions& opt,
                                  IncrementalState& st, IncrementalStats* stats) {
    const ModelConfig& c = m.config();
    IncrementalStats local;
    IncrementalStats& s = stats ? *stats : local;
    s = IncrementalStats{};
    const std::string why_not = why_not_incremental(c, opt);
    if (!why_not.empty()) {
        st.reset();
        s.computed = static_cast<int>(ids.size());
        s.full_reason = why_not;
        return forward(m, ids, opt);
    }
    const std::string knobs = knobs_of(opt);
    size_t P = 0;
    if (st.model == &m && st.knobs == knobs && st.trace && st.cache.n_past == static_cast<int>(st.ids.size()))
        while (P < ids.size() && P < st.ids.size() && ids[P] == st.ids[P]) ++P;
    if (P == ids.size() && P > 0) --P;  // unchanged or shortened: recompute the last token (the tail is never empty)
    if (P == 0) {  // full forward through a fresh cache, kept for the next call
        s.full_reason = st.model != &m || st.knobs != knobs ? "no earlier call with this model and settings"
                                                             : "the first token changed";
        st.reset();
        try {
            ForwardResult r = forward(m, ids, opt, &st.cache);
            st.model = &m;
            st.ids = ids;
            st.trace = r.trace;
            keep_outputs(st, r);
            st.knobs = knobs;
            s.computed = static_cast<int>(ids.size());
            return r;
        } catch (...) {
            st.reset();
            throw;
        }
    }

    // --- the tail through the model, keys/values of the prefix from the cache ---------------------------------------
    const int Pi = static_cast<int>(P), T = static_cast<int>(ids.size()), Tt = T - Pi;
    const std::vector<int> tail_ids(ids.begin() + Pi, ids.end());
    st.cache.n_past = Pi;
    ForwardResult tail;
    try {
        tail = forward(m, tail_ids, opt, &st.cache);
    } catch (...) {
        st.reset();
        throw;
    }
    s.reused = Pi;
    s.computed = Tt;

    ForwardResult r;
    // The previous hidden states and logits: its trace's copies when it has them, else the state's own.
    const Tensor* prev_hidden = st.trace->find("final_norm.out");
    const Tensor* prev_logits = st.trace->find("logits");
    r.hidden = concat_rows(prev_hidden ? prev_hidden->mat() : ConstMapRM(st.hidden.data(), st.hidden.rows(), st.hidden.cols()),
                           Pi, tail.hidden);
    if (opt.all_logits && tail.logits.size())
        r.logits = concat_rows(prev_logits ? prev_logits->mat() : ConstMapRM(st.logits.data(), st.logits.rows(), st.logits.cols()),
                               Pi, tail.logits);
    else
        r.logits = std::move(tail.logits);
    r.trace = std::make_shared<Trace>(opt.capture, opt.pool);

    // --- splice: every name in the order the full forward records them ---------------------------------------------
    const Trace& pt = *st.trace;
    const Trace& tt = *tail.trace;
    Trace& out = *r.trace;
    const int H = c.n_heads, K = c.n_kv_heads, D = c.d_head(), rep = H / K;
    const float scale = c.scale_attn ? 1.0f / std::sqrt(static_cast<float>(D)) : 1.0f;
    const detail::MaskTable full_mask = detail::build_mask(opt.self_mask, T, T, 0, 0);
    const char* q_name = c.position == PositionKind::RoPE ? "q_rot" : c.qk_norm ? "q_normed" : "q";
    const char* k_name = c.position == PositionKind::RoPE ? "k_rot" : c.qk_norm ? "k_normed" : "k";
    for (const std::string& name : tt.names()) {
        if (ends_with(name, ".attn.scores_scaled") || ends_with(name, ".attn.scores_masked")) {
            if (ends_with(name, "scores_scaled")) {
                const detail::TraceSink sink{&out, true, name.substr(0, name.size() - std::strlen("scores_scaled"))};
                detail::record_score_views(sink, H, T, T, scale, full_mask.allowed);
            }
            continue;
        }
        const Tensor& tail_t = tt.at(name);
        if (ends_with(name, ".attn.k_rot") || (name == "logits" && !opt.all_logits)) {  // already complete
            out.record(name, tail_t.shape, tail_t.data.data());
            continue;
        }
        const Tensor* prev_t = pt.find(name);
        if (!prev_t || prev_t->rank() != tail_t.rank()) {
            throw std::logic_error("forward_incremental: earlier trace lacks '" + name + "'");
        }
        const bool scores = ends_with(name, ".attn.scores");
        if (scores || ends_with(name, ".attn.probs")) {
            // (H, T, T): prefix rows keep their first P columns; the new keys' columns are q_t · k_s for the raw
            // scores (computed here: P x Tt per head) and 0 for the probabilities (causally masked).
            const int Tp = static_cast<int>(prev_t->dim(1));
            MatrixRM extra;
            const std::string block = name.substr(0, name.rfind('.') + 1);  // "dec.i.attn."
            const float* qp = nullptr;
            const float* kt = nullptr;
            int k_stride = Tt, k_off = 0;
            if (scores) {
                qp = pt.at(block + q_name).data.data();                     // (H, Tp, D)
                const Tensor& kk = tt.at(block + k_name);                     // (K, T, D) for k_rot, else (K, Tt, D)
                kt = kk.data.data();
                k_stride = static_cast<int>(kk.dim(1));
                k_off = k_stride - Tt;
                extra.resize(Pi, Tt);
            }
            out.record_with(name, {H, T, T}, [&](const Trace&, std::vector<float>& v) {
                for (int h = 0; h < H; ++h) {
                    if (scores) {
                        const ConstMapRM Qp(qp + size_t(h) * Tp * D, Pi, D);
                        const ConstMapRM Kt(kt + (size_t(h / rep) * k_stride + k_off) * D, Tt, D);
                        extra.noalias() = Qp * Kt.transpose();
                    }
                    for (int t = 0; t < Pi; ++t) {
                        append(v, prev_t->data.data() + (size_t(h) * Tp + t) * Tp, P);
                        if (scores) append(v, extra.data() + size_t(t) * Tt, size_t(Tt));
                        else v.insert(v.end(), size_t(Tt), 0.0f);
                    }
                    append(v, tail_t.data.data() + size_t(h) * Tt * T, size_t(Tt) * T);
                }
            });
            continue;
        }
        if (tail_t.rank() == 2) {  // (T, X): rows are positions
            const size_t X = size_t(tail_t.dim(1));
            out.record_with(name, {T, int64_t(X)}, [&](const Trace&, std::vector<float>& v) {
                append(v, prev_t->data.data(), P * X);
                append(v, tail_t.data.data(), tail_t.data.size());
            });
        } else {  // (n, T, X): per head or KV group, axis 1 is positions
            const int64_t n = tail_t.dim(0), X = tail_t.dim(2), Tp = prev_t->dim(1);
            out.record_with(name, {n, T, X}, [&](const Trace&, std::vector<float>& v) {
                for (int64_t g = 0; g < n; ++g) {
                    append(v, prev_t->data.data() + size_t(g * Tp * X), P * size_t(X));
                    append(v, tail_t.data.data() + size_t(g * Tt * X), size_t(Tt * X));
                }
            });
        }
    }
    st.ids = ids;
    st.trace = r.trace;
    keep_outputs(st, r);
    return r;
}

}  // namespace ts
