// Attention on demand (core/kernels/attention_rows.h): masks as rules agree with their definition; any rows of any head equal
// the whole (H, T, S) entry bit for bit and are the probabilities the forward itself used (head_out = probs V with
// the forward's own block products); the values equal a double-precision recomputation from the trace's queries and
// keys for every mask kind, cross-attention and incremental (KV-cache) traces.
#include "core/kernels/attention_rows.h"
#include "core/forward/incremental.h"
#include "core/model/model.h"

#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace ts {
namespace {

using Kind = AttentionRows::Kind;

ModelConfig small_config(bool llama) {
    ModelConfig c;
    c.name = llama ? "llama_rows" : "gpt_rows";
    c.vocab_size = 50;
    c.d_model = 32;
    c.n_heads = 4;
    c.n_kv_heads = llama ? 2 : 4;
    c.d_ff = 48;
    c.n_layers = 2;
    c.max_seq_len = 512;
    if (llama) {
        c.norm = NormKind::RMSNorm;
        c.activation = Activation::SwiGLU;
        c.position = PositionKind::RoPE;
        c.qk_norm = true;
        c.tie_embeddings = false;
    }
    return c;
}

Model random_model(const ModelConfig& c, uint64_t seed) {
    WeightMap w = init_weights(c, seed);
    for (auto& [name, t] : w)
        if (t.rank() == 2)
            for (float& v : t.data) v *= 6.0f;  // attention far from uniform
    return Model(c, std::move(w));
}

std::vector<int> ids_of(int T, int vocab) {
    std::vector<int> ids;
    for (int t = 0; t < T; ++t) ids.push_back((t * 11 + 5) % vocab);
    return ids;
}

ForwardOptions capture_all() {
    ForwardOptions o;
    o.capture = CaptureFilter::all();
    return o;
}

// Every kind of block `b`: rows of a few heads and ranges (crossing the 64-row blocks) equal the whole entry.
void expect_rows_equal_entries(const Trace& tr, const std::string& b) {
    const auto rows = tr.attention(b);
    ASSERT_NE(rows, nullptr) << b;
    const int H = rows->n_heads(), T = rows->n_queries(), S = rows->n_keys();
    std::vector<float> got;
    for (const auto& [suffix, kind] : {std::pair{"scores", Kind::Scores}, std::pair{"scores_scaled", Kind::ScoresScaled},
                                       std::pair{"scores_masked", Kind::ScoresMasked}, std::pair{"probs", Kind::Probs}}) {
        const Tensor& whole = tr.at(b + suffix);
        ASSERT_EQ(whole.shape, (std::vector<int64_t>{H, T, S})) << b << suffix;
        for (const auto& [h, r0, r1] : {std::tuple{0, 0, T}, std::tuple{H - 1, T / 3, T / 3 + 1},
                                         std::tuple{H / 2, std::max(0, T - 70), T}, std::tuple{1 % H, 5 % T, T / 2 + 1}}) {
            rows->rows(kind, h, r0, r1, got);
            ASSERT_EQ(got.size(), size_t(r1 - r0) * S);
            const float* want = whole.data.data() + (size_t(h) * T + r0) * S;
            for (size_t i = 0; i < got.size(); ++i)
                if (!(got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i])))) {
                    ADD_FAILURE() << b << suffix << " head " << h << " rows [" << r0 << ", " << r1 << ") element " << i
                                  << ": " << got[i] << " vs the entry's " << want[i];
                    break;
                }
        }
    }
}

// The trace's probs are the forward's: head_out equals probs V computed with the forward's block products.
void expect_head_out_is_probs_times_v(const Trace& tr, const std::string& b, int n_kv_heads) {
    const Tensor& probs = tr.at(b + "probs");
    const Tensor& head_out = tr.at(b + "head_out");
    const Tensor& v = tr.at(b + "v");
    const int H = int(probs.dim(0)), T = int(probs.dim(1)), S = int(probs.dim(2)), D = int(head_out.dim(2));
    ASSERT_EQ(v.dim(1), S) << b;
    const auto rows = tr.attention(b);
    ASSERT_NE(rows, nullptr);
    float worst = 0;
    for (int h = 0; h < H; ++h) {
        const ConstMapRM V(v.data.data() + size_t(h / (H / n_kv_heads)) * S * D, S, D);
        for (int r0 = 0; r0 < T; r0 += detail::kAttnRowBlock) {
            const int n = std::min(detail::kAttnRowBlock, T - r0);
            int e = 0;
            for (int t = r0; t < r0 + n; ++t) e = std::max(e, rows->mask().end(t));
            MatrixRM out = MatrixRM::Zero(n, D);
            if (e > 0)
                out.noalias() = ConstMapRM(probs.data.data() + (size_t(h) * T + r0) * S, n, S).leftCols(e) *
                                V.topRows(e);
            const ConstMapRM got(head_out.data.data() + (size_t(h) * T + r0) * D, n, D);
            worst = std::max(worst, (out - got).cwiseAbs().maxCoeff());
        }
    }
    EXPECT_EQ(worst, 0.0f) << b << ": head_out differs from probs V";
}

// probs and scores_masked against double precision from the trace's queries/keys and the mask's definition.
void expect_matches_double_reference(const Trace& tr, const std::string& b, const std::string& q_name,
                                     const std::string& k_name, float temperature,
                                     const std::function<bool(int, int)>& allowed) {
    const Tensor& q = tr.at(b + q_name);
    const Tensor& k = tr.at(b + k_name);
    const Tensor& probs = tr.at(b + "probs");
    const Tensor& masked = tr.at(b + "scores_masked");
    const int H = int(q.dim(0)), T = int(q.dim(1)), D = int(q.dim(2)), K = int(k.dim(0)), S = int(k.dim(1));
    const double scale = 1.0 / std::sqrt(double(D));
    double worst = 0;
    for (int h = 0; h < H; ++h)
        for (int t = 0; t < T; ++t) {
            std::vector<double> z(size_t(S), -INFINITY);
            double mx = -INFINITY;
            for (int s = 0; s < S; ++s) {
                if (!allowed(t, s)) continue;
                double dot = 0;
                for (int d = 0; d < D; ++d)
                    dot += double(q.data[(size_t(h) * T + t) * D + d]) *
                           double(k.data[(size_t(h / (H / K)) * S + s) * D + d]);
                z[size_t(s)] = dot * scale;
                mx = std::max(mx, z[size_t(s)]);
            }
            double sum = 0;
            for (int s = 0; s < S; ++s)
                if (std::isfinite(z[size_t(s)])) sum += std::exp((z[size_t(s)] - mx) / temperature);
            for (int s = 0; s < S; ++s) {
                const size_t i = (size_t(h) * T + t) * S + s;
                const double p = std::isfinite(z[size_t(s)]) ? std::exp((z[size_t(s)] - mx) / temperature) / sum : 0;
                worst = std::max(worst, std::abs(p - double(probs.data[i])));
                if (!allowed(t, s))
                    ASSERT_TRUE(std::isinf(masked.data[i]) && masked.data[i] < 0) << b << " (" << t << ", " << s << ")";
                else
                    worst = std::max(worst, std::abs(z[size_t(s)] - masked.data[i]) / std::max(1.0, std::abs(z[size_t(s)])));
            }
        }
    EXPECT_LT(worst, 2e-5) << b;
}

TEST(MaskRule, AgreesWithItsDefinitionAtAnyOffsetWithPadding) {
    std::mt19937 rng(3);
    for (const MaskKind kind : {MaskKind::None, MaskKind::Causal, MaskKind::SlidingWindow, MaskKind::Custom})
        for (const auto& [T, S, q_start, k_start] :
             {std::tuple{5, 9, 4, 0}, std::tuple{7, 7, 0, 0}, std::tuple{3, 12, 20, 11}, std::tuple{6, 4, 0, 0}}) {
            MaskSpec spec;
            spec.kind = kind;
            spec.window = 3;
            spec.key_padding.assign(size_t(S), 0);
            spec.key_padding[size_t(S) / 2] = 1;
            if (kind == MaskKind::Custom)
                for (int i = 0; i < T * S; ++i) spec.custom.push_back(uint8_t(rng() % 3 != 0));
            const detail::MaskTable m = detail::build_mask(spec, T, S, q_start, k_start);
            for (int t = 0; t < T; ++t) {
                int last = -1;
                std::vector<float> row(size_t(S), 1.0f);
                m.apply(t, row.data(), S);
                std::vector<uint8_t> masked(size_t(S), 7), tail(size_t(S), 7);
                m.masked_cells(t, 0, S, masked.data());
                m.masked_cells(t, S / 3, S - S / 3, tail.data());  // a run that starts inside the row
                for (int s = 0; s < S; ++s) {
                    EXPECT_EQ(masked[size_t(s)], m.allowed(t, s) ? 0 : 1) << int(kind) << " t " << t << " s " << s;
                    if (s >= S / 3) EXPECT_EQ(tail[size_t(s - S / 3)], masked[size_t(s)]) << int(kind) << " s " << s;
                    const int qpos = q_start + t, kpos = k_start + s;
                    bool ok = !spec.key_padding[size_t(s)];
                    if (kind == MaskKind::Causal) ok = ok && kpos <= qpos;
                    if (kind == MaskKind::SlidingWindow) ok = ok && kpos <= qpos && kpos > qpos - spec.window;
                    if (kind == MaskKind::Custom) ok = ok && spec.custom[size_t(t) * S + s];
                    EXPECT_EQ(m.allowed(t, s), ok) << int(kind) << " t " << t << " s " << s;
                    EXPECT_EQ(row[size_t(s)] == 1.0f, ok) << int(kind) << " t " << t << " s " << s;
                    if (ok) last = s;
                }
                EXPECT_EQ(m.end(t), last + 1) << int(kind) << " t " << t;
            }
        }
}

TEST(AttentionRows, AnyRowsEqualTheEntryTheForwardUsedAndDoublePrecisionForEveryMask) {
    for (const bool llama : {false, true}) {
        const ModelConfig c = small_config(llama);
        const Model m = random_model(c, 21);
        const int T = 150;  // three row blocks, the last one partial
        std::mt19937 rng(5);
        MaskSpec custom;
        custom.kind = MaskKind::Custom;
        for (int i = 0; i < T * T; ++i) custom.custom.push_back(uint8_t(rng() % 4 != 0));
        MaskSpec window{MaskKind::SlidingWindow, 9, {}, {}};
        MaskSpec padded{MaskKind::None, 0, {}, std::vector<uint8_t>(size_t(T), 0)};
        for (int s = 100; s < T; ++s) padded.key_padding[size_t(s)] = 1;
        for (const MaskSpec& spec : {MaskSpec{}, window, padded, custom}) {
            ForwardOptions o = capture_all();
            o.self_mask = spec;
            o.temperature = 0.8f;
            const ForwardResult r = forward(m, ids_of(T, c.vocab_size), o);
            const detail::MaskTable mt = detail::build_mask(spec, T, T, 0, 0);
            for (int l = 0; l < c.n_layers; ++l) {
                const std::string b = "dec." + std::to_string(l) + ".attn.";
                SCOPED_TRACE(c.name + " mask kind " + std::to_string(int(spec.kind)) + " " + b);
                expect_rows_equal_entries(*r.trace, b);
                expect_head_out_is_probs_times_v(*r.trace, b, c.n_kv_heads);
                expect_matches_double_reference(*r.trace, b, llama ? "q_rot" : "q", llama ? "k_rot" : "k", 0.8f,
                                                [&](int t, int s) { return mt.allowed(t, s); });
            }
        }
    }
}

TEST(AttentionRows, CrossAttentionWithPaddedSourceKeys) {
    ModelConfig c = small_config(false);
    c.arch = Arch::EncoderDecoder;
    c.n_enc_layers = 2;
    const Model m = random_model(c, 8);
    const int Ts = 80, Tt = 70;
    ForwardOptions o = capture_all();
    o.enc_mask.key_padding.assign(size_t(Ts), 0);
    for (int s = 70; s < Ts; ++s) o.enc_mask.key_padding[size_t(s)] = 1;
    const ForwardResult r = forward_seq2seq(m, ids_of(Ts, c.vocab_size), ids_of(Tt, c.vocab_size), o);
    for (const std::string b : {"dec.1.cross_attn.", "enc.0.attn.", "dec.0.attn."}) {
        SCOPED_TRACE(b);
        expect_rows_equal_entries(*r.trace, b);
        expect_head_out_is_probs_times_v(*r.trace, b, c.n_kv_heads);
    }
    expect_matches_double_reference(*r.trace, "dec.1.cross_attn.", "q", "k", 1.0f,
                                    [&](int, int s) { return s < 70; });
    expect_matches_double_reference(*r.trace, "dec.0.attn.", "q", "k", 1.0f, [](int t, int s) { return s <= t; });
}

TEST(AttentionRows, IncrementalTracesComposeTheirQueriesAndEqualAFullForward) {
    const ModelConfig c = small_config(true);
    const Model m = random_model(c, 9);
    IncrementalState st;
    std::vector<int> ids = ids_of(90, c.vocab_size);
    ForwardResult r = forward_incremental(m, ids, capture_all(), st);
    for (int step = 0; step < 20; ++step) {  // more keystrokes than kMaxSplicePieces: the pieces get compacted
        ids.push_back((step * 5 + 1) % c.vocab_size);
        if (step % 4 == 3) ids.erase(ids.end() - 3, ids.end() - 1);
        IncrementalStats stats;
        r = forward_incremental(m, ids, capture_all(), st, &stats);
        ASSERT_GT(stats.reused, 0);
    }
    const ForwardResult full = forward(m, ids, capture_all());
    const int T = int(ids.size());
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string b = "dec." + std::to_string(l) + ".attn.";
        const auto inc = r.trace->attention(b), ref = full.trace->attention(b);
        ASSERT_NE(inc, nullptr);
        ASSERT_LE(inc->query_pieces().size(), kMaxSplicePieces);
        EXPECT_EQ(inc->n_queries(), T);
        std::vector<float> a, e;
        for (const Kind kind : {Kind::Probs, Kind::ScoresMasked})
            for (int h = 0; h < c.n_heads; ++h) {
                inc->rows(kind, h, 0, T, a);
                ref->rows(kind, h, 0, T, e);
                ASSERT_EQ(a.size(), e.size());
                for (size_t i = 0; i < a.size(); ++i)
                    if (!(std::abs(a[i] - e[i]) <= 1e-5f * std::max(1.0f, std::abs(e[i])) || a[i] == e[i])) {
                        ADD_FAILURE() << b << " head " << h << " element " << i << ": " << a[i] << " vs " << e[i];
                        break;
                    }
            }
        expect_rows_equal_entries(*r.trace, b);
    }
}

TEST(AttentionRows, PooledOverviewsEqualPoolingTheFullMatrix) {
    const ModelConfig c = small_config(true);
    const Model m = random_model(c, 4);
    const int T = 203;
    ForwardOptions o = capture_all();
    o.self_mask = MaskSpec{MaskKind::SlidingWindow, 40, {}, {}};
    const ForwardResult r = forward(m, ids_of(T, c.vocab_size), o);
    const auto rows = r.trace->attention("dec.1.attn.");
    ASSERT_NE(rows, nullptr);
    for (const Kind kind : {Kind::Probs, Kind::ScoresMasked})
        for (const auto pool : {AttentionRows::Pool::Max, AttentionRows::Pool::Mean})
            for (const auto& [want_r, want_c] : {std::pair{16, 16}, std::pair{50, 7}, std::pair{500, 500}}) {
                const int h = 3;
                std::vector<float> full;
                rows->rows(kind, h, 0, T, full);
                const AttentionRows::Pooled p = rows->pooled(kind, h, want_r, want_c, pool);
                const auto kept = rows->pooled_cached(kind, h, want_r, want_c, pool);
                EXPECT_EQ(kept, rows->pooled_cached(kind, h, want_r, want_c, pool));  // the same object again
                EXPECT_EQ(kept->values.size(), p.values.size());
                for (size_t i = 0; i < p.values.size(); ++i)
                    ASSERT_TRUE(kept->values[i] == p.values[i] || (std::isinf(kept->values[i]) && std::isinf(p.values[i])));
                ASSERT_EQ(p.rows, (T + p.row_step - 1) / p.row_step);
                ASSERT_LE(p.rows, std::min(want_r, T));
                ASSERT_LE(p.cols, std::min(want_c, T));
                ASSERT_EQ(p.values.size(), size_t(p.rows) * p.cols);
                for (int br = 0; br < p.rows; ++br)
                    for (int bc = 0; bc < p.cols; ++bc) {
                        double sum = 0, best = -INFINITY;
                        int cells = 0, ok = 0;
                        for (int t = br * p.row_step; t < std::min(T, (br + 1) * p.row_step); ++t)
                            for (int s = bc * p.col_step; s < std::min(T, (bc + 1) * p.col_step); ++s) {
                                ++cells;
                                const float v = full[size_t(t) * T + s];
                                if (kind == Kind::ScoresMasked && std::isinf(v)) continue;
                                if (kind == Kind::Probs && !rows->allowed(t, s)) continue;
                                ++ok;
                                sum += v;
                                best = std::max(best, double(v));
                            }
                        const size_t i = size_t(br) * p.cols + bc;
                        EXPECT_EQ(p.masked[i], ok == 0 ? 1 : 0);
                        double want = 0;
                        if (ok == 0) want = kind == Kind::Probs ? 0.0 : -INFINITY;
                        else if (pool == AttentionRows::Pool::Max) want = best;
                        else want = sum / (kind == Kind::Probs ? cells : ok);
                        if (std::isinf(want)) EXPECT_TRUE(std::isinf(p.values[i]));
                        else EXPECT_NEAR(p.values[i], want, 1e-6 * std::max(1.0, std::abs(want))) << br << "," << bc;
                    }
            }
}

TEST(AttentionRows, TraceHeadRowsComputesOneHeadWithoutBuildingTheEntry) {
    const ModelConfig c = small_config(true);
    const Model m = random_model(c, 6);
    const int T = 70;
    const ForwardResult r = forward(m, ids_of(T, c.vocab_size), capture_all());
    const ForwardResult ref = forward(m, ids_of(T, c.vocab_size), capture_all());
    int rows = 0, cols = 0;
    const std::vector<float> got = trace_head_rows(*r.trace, "dec.1.attn.probs", 2, &rows, &cols, 60, 70);
    EXPECT_TRUE(r.trace->is_pending("dec.1.attn.probs"));  // only the head's rows were computed
    ASSERT_EQ(rows, 10);
    ASSERT_EQ(cols, T);
    const Tensor& whole = ref.trace->at("dec.1.attn.probs");
    for (int i = 0; i < 10 * T; ++i) ASSERT_EQ(got[size_t(i)], whole.data[size_t((2 * T + 60) * T + i)]) << i;
    const std::vector<float> ho = trace_head_rows(*r.trace, "dec.0.attn.head_out", 1, &rows, &cols);  // sliced
    ASSERT_EQ(rows, T);
    ASSERT_EQ(cols, c.d_head());
    EXPECT_EQ(ho[0], r.trace->at("dec.0.attn.head_out").data[size_t(T) * c.d_head()]);
    for (const auto& [name, h, r0, r1] : {std::tuple{"dec.1.attn.probs", 4, 0, -1}, std::tuple{"dec.1.attn.probs", 0, 5, 71},
                                          std::tuple{"dec.9.attn.probs", 0, 0, -1}, std::tuple{"dec.0.attn.out", 0, 0, -1}}) {
        EXPECT_TRUE(trace_head_rows(*r.trace, name, h, &rows, &cols, r0, r1).empty()) << name << " " << h;
        EXPECT_EQ(rows, 0);
    }
}

TEST(AttentionRows, RejectsRowsOutsideTheBlockAndNothingIsKeptWithoutCapture) {
    const ModelConfig c = small_config(false);
    const Model m = random_model(c, 2);
    const ForwardResult r = forward(m, ids_of(10, c.vocab_size), capture_all());
    const auto rows = r.trace->attention("dec.0.attn.");
    ASSERT_NE(rows, nullptr);
    std::vector<float> out;
    EXPECT_THROW(rows->rows(Kind::Probs, c.n_heads, 0, 1, out), std::out_of_range);
    EXPECT_THROW(rows->rows(Kind::Probs, 0, 3, 11, out), std::out_of_range);
    EXPECT_THROW(rows->rows(Kind::Probs, 0, 4, 3, out), std::out_of_range);
    rows->rows(Kind::Probs, 0, 4, 4, out);
    EXPECT_TRUE(out.empty());
    // The trace holds no (H, T, S) tensor until one is read.
    EXPECT_TRUE(r.trace->is_pending("dec.0.attn.probs"));
    const size_t before = r.trace->bytes();
    (void)r.trace->at("dec.0.attn.probs");
    EXPECT_EQ(r.trace->bytes(), before + rows->full_bytes());

    ForwardOptions none;
    const ForwardResult plain = forward(m, ids_of(10, c.vocab_size), none);
    EXPECT_EQ(plain.trace->attention("dec.0.attn."), nullptr);
    ForwardOptions some;
    some.capture = CaptureFilter::prefixes({"dec.1.attn.probs"});
    const ForwardResult part = forward(m, ids_of(10, c.vocab_size), some);
    EXPECT_EQ(part.trace->attention("dec.0.attn."), nullptr);
    EXPECT_NE(part.trace->attention("dec.1.attn."), nullptr);
}

}  // namespace
}  // namespace ts
