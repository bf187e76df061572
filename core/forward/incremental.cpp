// forward_incremental: reuse the previous call's prefix (KV cache + trace rows) and run only the changed tail of a
// causal decoder-only model, then splice the trace so it reads exactly like a full forward's.
#include "core/forward/incremental.h"
#include "core/kernels/quant_gemm.h"

#include "core/kernels/attention.h"

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
    // The spliced score views use one mask for every layer; a window differs per layer (Qwen2), so recompute.
    if (c.sliding_window > 0) return "sliding-window attention";
    if (opt.self_mask.kind != MaskKind::Causal) return "the mask is not causal";
    if (!opt.self_mask.key_padding.empty()) return "key padding";
    if (!opt.edits.empty()) return "activation edits";
    // All-but-some (the long-text capture) splices like all: both traces lack the same names.
    if (opt.capture.captures_anything() && !opt.capture.captures_all() && !opt.capture.captures_all_but_some())
        return "a partial capture filter";
    return "";
}

// Every position's logits: then the next call splices its tail's rows onto these. Last-row or no logits (the app
// switching tabs) splice the same, so they share one key and switching keeps the prefix.
bool all_rows(const ForwardOptions& opt) { return opt.all_logits && opt.compute_logits; }

std::string knobs_of(const ForwardOptions& opt) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "t=%a all_logits=%d int8=%d capture=", double(opt.temperature),
                  all_rows(opt) ? 1 : 0, quant_activations() == QuantActivations::Int8 ? 1 : 0);
    return buf + opt.capture.key();
}

// Rows [0, P) of a (rows, cols) matrix followed by all rows of `tail`.
MatrixRM concat_rows(const MatrixRM& prev, int P, const MatrixRM& tail) {
    MatrixRM out(P + tail.rows(), tail.cols());
    if (P > 0) out.topRows(P) = prev.topRows(P);
    out.bottomRows(tail.rows()) = tail;
    return out;
}

void append(std::vector<float>& out, const float* p, size_t n) { out.insert(out.end(), p, p + n); }

// What the next call splices onto: hidden states always (T x d_model), logits only when every row is kept (the
// last-row-only logits of the next call come from its own tail).
void keep_outputs(IncrementalState& st, const ForwardResult& r, bool all_logits) {
    st.hidden = r.hidden;
    st.logits = all_logits ? r.logits : MatrixRM();
}

// Positions [lo, hi) of a composed entry come from tensor `t`, whose position 0 is `offset`.
struct Span {
    const Tensor* t;
    int offset, lo, hi;
};

// The spans of `name` in position order: each piece covers from its offset up to the next later piece's offset.
std::vector<Span> spans_of(const TraceSplice& sp, const std::string& name, int T) {
    std::vector<Span> out;
    int hi = T;
    for (auto it = sp.pieces.rbegin(); it != sp.pieces.rend() && hi > 0; ++it) {
        if (it->offset >= hi) continue;
        out.push_back({&it->src->at(name), it->offset, it->offset, hi});
        hi = it->offset;
    }
    std::reverse(out.begin(), out.end());
    return out;
}

// (T, X) entries (rows are positions) and (n, T, X) ones (axis 1 is positions), T = `T`.
void compose_rows(const TraceSplice& sp, const std::string& name, int T, std::vector<float>& v) {
    const std::vector<Span> spans = spans_of(sp, name, T);
    const Tensor& first = *spans.front().t;
    if (first.rank() == 2) {
        const size_t X = size_t(first.dim(1));
        for (const Span& s : spans)
            append(v, s.t->data.data() + size_t(s.lo - s.offset) * X, size_t(s.hi - s.lo) * X);
        return;
    }
    const int64_t n = first.dim(0), X = first.dim(2);
    for (int64_t g = 0; g < n; ++g)
        for (const Span& s : spans)
            append(v, s.t->data.data() + size_t((g * s.t->dim(1) + s.lo - s.offset) * X), size_t((s.hi - s.lo) * X));
}

// The composed trace's attention of one block: the earlier call's query rows before P (their pieces, clipped),
// the tail's from P, and the tail's keys (the cache holds every position). Pieces beyond kMaxSplicePieces are copied
// into one matrix, so the chain a keystroke keeps alive stays short.
std::shared_ptr<const AttentionRows> compose_attention(const AttentionRows& prev, const AttentionRows& tail, int P,
                                                       const MaskSpec& self_mask) {
    const int H = tail.n_heads(), D = tail.d_head(), T = P + tail.n_queries();
    std::vector<AttentionRows::QueryPiece> q;
    for (const AttentionRows::QueryPiece& piece : prev.query_pieces())
        if (piece.offset < P) q.push_back({piece.q, piece.offset, std::min(piece.n, P - piece.offset)});
    q.push_back({tail.query_pieces().front().q, P, tail.n_queries()});
    if (q.size() > kMaxSplicePieces) {
        auto one = std::make_shared<MatrixRM>(int64_t(H) * T, D);
        for (const AttentionRows::QueryPiece& piece : q) {
            const int64_t ld = piece.q->rows() / H;
            for (int h = 0; h < H; ++h)
                one->middleRows(int64_t(h) * T + piece.offset, piece.n) = piece.q->middleRows(h * ld, piece.n);
        }
        q = {{std::move(one), 0, T}};
    }
    return std::make_shared<const AttentionRows>(H, tail.n_kv_heads(), D, std::move(q), tail.keys(),
                                                 detail::build_mask(self_mask, T, T, 0, 0), nullptr, tail.scale(),
                                                 tail.temperature());
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
            keep_outputs(st, r, all_rows(opt));
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
    // Each block's attention of the whole sequence (the earlier call's query rows, then the tail's): made once, for a
    // long tail's progressive display while it runs, or in the splice below.
    std::map<std::string, std::shared_ptr<const AttentionRows>, std::less<>> composed;
    const std::shared_ptr<const Trace> prev = st.trace;
    const auto composed_attention = [&](const std::string& block, const Trace& tail_trace) {
        auto it = composed.find(block);
        if (it != composed.end()) return it->second;
        const auto before = prev->attention(block), now = tail_trace.attention(block);
        if (!before || !now) throw std::logic_error("forward_incremental: no attention rows for '" + block + "'");
        return composed.emplace(block, compose_attention(*before, *now, Pi, opt.self_mask)).first->second;
    };
    try {
        ForwardOptions tail_opt = opt;
        // A tail's own layers are not the sequence's: a long tail shows each finished layer's attention composed with
        // the earlier rows; a short one shows nothing until it is spliced.
        tail_opt.on_layer = nullptr;
        if (opt.on_layer && opt.on_layer_min_tail > 0 && Tt >= opt.on_layer_min_tail)
            tail_opt.on_layer = [&](const std::string& stack, int layer, const Trace& tail_trace) {
                Trace view(CaptureFilter::all());
                for (int l = 0; l <= layer; ++l) {
                    const std::string block = stack + "." + std::to_string(l) + ".attn.";
                    if (tail_trace.attention(block))
                        detail::record_attention(detail::TraceSink{&view, true, block},
                                                 composed_attention(block, tail_trace));
                }
                opt.on_layer(stack, layer, view);
            };
        tail = forward(m, tail_ids, tail_opt, &st.cache);
    } catch (...) {
        st.reset();
        throw;
    }
    s.reused = Pi;
    s.computed = Tt;

    ForwardResult r;
    r.hidden = concat_rows(st.hidden, Pi, tail.hidden);
    if (all_rows(opt) && tail.logits.size())
        r.logits = concat_rows(st.logits, Pi, tail.logits);
    else
        r.logits = std::move(tail.logits);
    r.trace = std::make_shared<Trace>(opt.capture, opt.pool);

    // --- splice: every name in the order the full forward records them, each composed on first read -----------------
    const std::shared_ptr<const Trace> tail_trace = tail.trace;
    const Trace& tt = *tail_trace;
    Trace& out = *r.trace;
    std::map<std::string, std::shared_ptr<const TraceSplice>, std::less<>> splices;
    for (const std::string& name : tt.names()) {
        if (std::string block; attention_entry_kind(name, &block)) {  // block: "dec.i.attn."
            if (out.attention(block)) continue;  // registered with the block's first attention entry
            detail::record_attention(detail::TraceSink{&out, true, block}, composed_attention(block, tt));
            continue;
        }
        const Tensor& tail_t = tt.at(name);
        if (ends_with(name, ".attn.k_rot") || (name == "logits" && !all_rows(opt))) {  // already complete
            out.record(name, tail_t.shape, tail_t.data.data());
            continue;
        }
        if (!prev->contains(name)) throw std::logic_error("forward_incremental: earlier trace lacks '" + name + "'");
        auto sp = std::make_shared<TraceSplice>();
        const auto it = st.splices.find(name);
        if (it != st.splices.end() && it->second->pieces.size() < kMaxSplicePieces && prev->is_pending(name)) {
            // Still unread in the previous trace: extend its recipe (pieces the new tail covers are dropped).
            for (const TraceSplice::Piece& piece : it->second->pieces)
                if (piece.offset == 0 || piece.offset < Pi) sp->pieces.push_back(piece);
        } else {
            (void)prev->at(name);  // read (or composed now, once every kMaxSplicePieces calls): the base
            sp->pieces.push_back({prev, 0});
        }
        sp->pieces.push_back({tail_trace, Pi});
        std::vector<int64_t> shape = tail_t.shape;
        if (tail_t.rank() == 2) shape[0] = T;
        else shape[1] = T;
        out.record_derived(name, std::move(shape),
                           [sp, name, T](const Trace&, std::vector<float>& v) { compose_rows(*sp, name, T, v); });
        splices.emplace(name, std::move(sp));
    }
    st.splices = std::move(splices);
    st.ids = ids;
    st.trace = r.trace;
    keep_outputs(st, r, all_rows(opt));
    return r;
}

}  // namespace ts
