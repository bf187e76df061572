// The performance paths give the values of the plain ones: trace buffers from a TensorPool, derived score entries
// (scores_scaled, scores_masked computed on first read), several compute threads, and the incremental forward that
// reuses a shared prefix (issue #14).
#include "core/kernels/attention_rows.h"
#include "core/forward/incremental.h"
#include "core/model/model.h"
#include "core/kernels/threads.h"

#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace ts {
namespace {

ModelConfig gpt_config() {
    ModelConfig c;
    c.name = "gpt_small";
    c.vocab_size = 60;
    c.d_model = 32;
    c.n_heads = 4;
    c.n_kv_heads = 4;
    c.d_ff = 64;
    c.n_layers = 2;
    c.max_seq_len = 64;
    c.activation = Activation::GELUTanh;
    return c;
}

ModelConfig llama_config() {
    ModelConfig c = gpt_config();
    c.name = "llama_small";
    c.n_heads = 8;
    c.n_kv_heads = 2;
    c.norm = NormKind::RMSNorm;
    c.activation = Activation::SwiGLU;
    c.position = PositionKind::RoPE;
    c.qk_norm = true;
    c.ffn_bias = c.attn_qkv_bias = c.attn_out_bias = false;
    c.tie_embeddings = false;
    return c;
}

Model random_model(const ModelConfig& c, uint64_t seed, float scale = 10.0f) {
    WeightMap w = init_weights(c, seed);
    for (auto& [name, t] : w)
        if (t.rank() == 2)
            for (float& v : t.data) v *= scale;  // ×10: attention far from uniform
    return Model(c, std::move(w));
}

std::vector<int> ids_of(int T, int vocab, int seed) {
    std::vector<int> ids;
    for (int t = 0; t < T; ++t) ids.push_back((t * 7 + seed * 13 + 3) % vocab);
    return ids;
}

ForwardOptions capture_all() {
    ForwardOptions o;
    o.capture = CaptureFilter::all();
    return o;
}

// Full capture with buffers from a fresh TensorPool, as the app's worker runs.
ForwardOptions pooled_capture_all() {
    ForwardOptions o = capture_all();
    o.pool = std::make_shared<TensorPool>();
    return o;
}

// Equal values (−∞ of masked scores included) or |a − e| ≤ atol + rtol·|e|; reports the first bad index.
::testing::AssertionResult close_values(const Tensor& a, const Tensor& e, float atol, float rtol) {
    if (a.shape != e.shape) return ::testing::AssertionFailure() << a.shape_str() << " vs " << e.shape_str();
    for (int64_t i = 0; i < e.numel(); ++i) {
        const float x = a.data[size_t(i)], y = e.data[size_t(i)];
        if (x == y) continue;
        if (!(std::abs(double(x) - double(y)) <= atol + rtol * std::abs(double(y))))
            return ::testing::AssertionFailure() << "index " << i << ": " << x << " vs " << y;
    }
    return ::testing::AssertionSuccess();
}

// Every name of `expected` is in `actual` (same order), same shape, values within atol + rtol.
void expect_same_trace(const Trace& actual, const Trace& expected, float atol, float rtol, const std::string& what) {
    ASSERT_EQ(actual.names(), expected.names()) << what;
    for (const std::string& n : expected.names())
        EXPECT_TRUE(close_values(actual.at(n), expected.at(n), atol, rtol)) << what << ": " << n;
}

// Float rounding, measured on the tensor's own scale: max |a − e| ≤ tol · max(1, max |e|) (finite entries; equal
// infinities agree). The tail of an incremental forward runs (1, d) products where the full forward runs (T, d)
// ones, so single elements differ in their last bits (about 2e-6 relative with these ×10 weights).
::testing::AssertionResult equal_to_rounding(const Tensor& a, const Tensor& e, double tol) {
    if (a.shape != e.shape) return ::testing::AssertionFailure() << a.shape_str() << " vs " << e.shape_str();
    double scale = 1.0, max_err = 0.0;
    int64_t worst = -1;
    for (float y : e.data) if (std::isfinite(y)) scale = std::max(scale, double(std::abs(y)));
    for (int64_t i = 0; i < e.numel(); ++i) {
        const float x = a.data[size_t(i)], y = e.data[size_t(i)];
        if (x == y) continue;
        const double err = std::isfinite(x) && std::isfinite(y) ? std::abs(double(x) - double(y)) : INFINITY;
        if (err > max_err) max_err = err, worst = i;
    }
    if (max_err <= tol * scale) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "max |err| " << max_err << " at " << worst << " > " << tol << " x scale "
                                         << scale;
}

void expect_trace_equal_to_rounding(const Trace& actual, const Trace& expected, double tol, const std::string& what) {
    ASSERT_EQ(actual.names(), expected.names()) << what;
    for (const std::string& n : expected.names())
        EXPECT_TRUE(equal_to_rounding(actual.at(n), expected.at(n), tol)) << what << ": " << n;
}

// --- pool and derived entries -----------------------------------------------------------------------------------

TEST(TensorPool, ReusesGivenBuffersBestFitAndRespectsTheLimit) {
    TensorPool pool(1 << 20);
    std::vector<float> a = pool.take(1000);
    EXPECT_EQ(a.size(), 0u);
    EXPECT_GE(a.capacity(), 1000u);
    const float* pa = a.data();
    pool.give(std::move(a));
    EXPECT_GE(pool.bytes_held(), 4000u);
    std::vector<float> b = pool.take(900);  // fits in the given buffer: no new allocation
    EXPECT_EQ(b.data(), pa);
    EXPECT_EQ(pool.bytes_held(), 0u);
    std::vector<float> big;
    big.reserve(1 << 20);  // 4 MB > limit: freed, not kept
    pool.give(std::move(big));
    EXPECT_EQ(pool.bytes_held(), 0u);
}

TEST(TensorPool, TracesHandTheirBuffersBackAndTheNextForwardReusesThem) {
    const Model m = random_model(gpt_config(), 3);
    ForwardOptions opt = pooled_capture_all();
    const std::vector<int> ids = ids_of(12, m.config().vocab_size, 1);
    const ForwardResult plain = forward(m, ids, capture_all());
    {
        const ForwardResult r = forward(m, ids, opt);
        EXPECT_EQ(opt.pool->bytes_held(), 0u);
    }
    const size_t held = opt.pool->bytes_held();
    EXPECT_GT(held, 0u);
    const ForwardResult again = forward(m, ids, opt);
    EXPECT_LT(opt.pool->bytes_held(), held);  // taken from the pool
    expect_same_trace(*again.trace, *plain.trace, 0.0f, 0.0f, "pooled");
}

TEST(Trace, ScaledAndMaskedScoresAreDerivedOnFirstReadWithTheValuesOfTheOperations) {
    for (const ModelConfig& c : {gpt_config(), llama_config()}) {
        const Model m = random_model(c, 5);
        ForwardOptions opt = capture_all();
        opt.temperature = 0.7f;
        const std::vector<int> ids = ids_of(9, c.vocab_size, 2);
        const ForwardResult r = forward(m, ids, opt);
        const std::string b = "dec.1.attn.";
        EXPECT_TRUE(r.trace->is_pending(b + "scores_scaled")) << c.name;
        EXPECT_TRUE(r.trace->is_pending(b + "scores")) << c.name;  // attention on demand: nothing (H, T, S) is stored
        EXPECT_TRUE(r.trace->is_pending(b + "probs")) << c.name;
        ASSERT_NE(r.trace->attention(b), nullptr) << c.name;
        const Tensor& sc = r.trace->at(b + "scores");
        const Tensor& scaled = r.trace->at(b + "scores_scaled");
        const Tensor& masked = r.trace->at(b + "scores_masked");
        const Tensor& probs = r.trace->at(b + "probs");
        EXPECT_FALSE(r.trace->is_pending(b + "scores_scaled"));
        const int H = c.n_heads, T = int(ids.size());
        const float inv = 1.0f / std::sqrt(float(c.d_head()));
        for (int h = 0; h < H; ++h)
            for (int t = 0; t < T; ++t) {
                double z = 0;
                for (int s = 0; s <= t; ++s) z += std::exp(double(masked.data[(h * T + t) * T + s]) / 0.7);
                for (int s = 0; s < T; ++s) {
                    const size_t i = size_t((h * T + t) * T + s);
                    EXPECT_EQ(scaled.data[i], sc.data[i] * inv);
                    if (s > t) {
                        EXPECT_EQ(masked.data[i], -INFINITY);
                        EXPECT_EQ(probs.data[i], 0.0f);
                    } else {
                        EXPECT_EQ(masked.data[i], scaled.data[i]);
                        EXPECT_NEAR(probs.data[i], std::exp(double(masked.data[i]) / 0.7) / z, 1e-6);
                    }
                }
            }
    }
}

TEST(Trace, AFilterWithoutRawScoresStillRecordsScaledAndMaskedScores) {
    const Model m = random_model(gpt_config(), 6);
    const std::vector<int> ids = ids_of(7, m.config().vocab_size, 3);
    const ForwardResult all = forward(m, ids, capture_all());
    ForwardOptions opt;
    opt.capture = CaptureFilter::prefixes({"dec.0.attn.scores_"});
    const ForwardResult some = forward(m, ids, opt);
    ASSERT_EQ(some.trace->names(), (std::vector<std::string>{"dec.0.attn.scores_scaled", "dec.0.attn.scores_masked"}));
    for (const std::string& n : some.trace->names())
        EXPECT_TRUE(close_values(some.trace->at(n), all.trace->at(n), 0.0f, 0.0f)) << n;
}

// Keys after a query row's last allowed one have probability exactly 0, so the softmax and probs V stop at that key
// (and Q K^T too when raw scores are not recorded), in blocks of 64 rows. T = 150 spans three blocks; every mask kind
// that leaves a masked tail: causal, sliding window, key padding on the last keys, a custom band, a fully masked row.
TEST(Trace, RowsStopAtTheirLastAllowedKeyWithTheValuesOfWholeRows) {
    ModelConfig c = gpt_config();
    c.max_seq_len = 160;
    const Model m = random_model(c, 8);
    const int T = 150, H = c.n_heads;
    const std::vector<int> ids = ids_of(T, c.vocab_size, 5);
    std::vector<MaskSpec> masks(4);
    masks[1].kind = MaskKind::SlidingWindow;
    masks[1].window = 5;
    masks[2].kind = MaskKind::None;
    masks[2].key_padding.assign(T, 0);
    for (int s = T - 20; s < T; ++s) masks[2].key_padding[size_t(s)] = 1;
    masks[3].kind = MaskKind::Custom;
    masks[3].custom.assign(size_t(T) * T, 0);
    for (int t = 1; t < T; ++t)  // row 0 allows nothing; row t: keys t/2 .. min(T - 1, t + 3)
        for (int s = t / 2; s <= std::min(T - 1, t + 3); ++s) masks[3].custom[size_t(t) * T + size_t(s)] = 1;
    for (size_t k = 0; k < masks.size(); ++k) {
        ForwardOptions opt = capture_all();
        opt.temperature = 0.8f;
        opt.self_mask = masks[k];
        const ForwardResult full = forward(m, ids, opt);
        for (int l = 0; l < c.n_layers; ++l) {
            const std::string b = "dec." + std::to_string(l) + ".attn.";
            const Tensor& masked = full.trace->at(b + "scores_masked");
            const Tensor& probs = full.trace->at(b + "probs");
            double worst = 0;
            for (int h = 0; h < H; ++h)
                for (int t = 0; t < T; ++t) {
                    const float* sm = masked.data.data() + (size_t(h) * T + size_t(t)) * T;
                    const float* pr = probs.data.data() + (size_t(h) * T + size_t(t)) * T;
                    double mx = -INFINITY, z = 0;
                    for (int s = 0; s < T; ++s) mx = std::max(mx, double(sm[s]) / 0.8);
                    for (int s = 0; s < T; ++s) z += std::isinf(mx) ? 0.0 : std::exp(double(sm[s]) / 0.8 - mx);
                    for (int s = 0; s < T; ++s) {
                        const double want = z > 0 ? std::exp(double(sm[s]) / 0.8 - mx) / z : 0.0;
                        if (std::isinf(sm[s])) {
                            ASSERT_EQ(pr[s], 0.0f) << k << " " << b << " h" << h << " t" << t;
                        }
                        worst = std::max(worst, std::abs(double(pr[s]) - want));
                    }
                }
            EXPECT_LT(worst, 1e-6) << "mask " << k << " " << b;
        }
        if (k == 3) {  // the fully masked row 0 attends to nothing: zeros, not NaN
            const Tensor& ho = full.trace->at("dec.0.attn.head_out");
            for (int h = 0; h < H; ++h)
                for (int d = 0; d < c.d_head(); ++d) EXPECT_EQ(ho.data[size_t(h) * T * c.d_head() + size_t(d)], 0.0f);
        }
        // Without raw scores recorded, Q K^T also stops at each block's last allowed key: same probs and logits.
        ForwardOptions some = opt;
        some.capture = CaptureFilter::prefixes({"dec.1.attn.probs"});
        const ForwardResult part = forward(m, ids, some);
        EXPECT_TRUE(equal_to_rounding(part.trace->at("dec.1.attn.probs"), full.trace->at("dec.1.attn.probs"), 1e-6))
            << "mask " << k;
        some.capture = CaptureFilter::none();
        const MatrixRM logits = forward(m, ids, some).logits;
        EXPECT_LE((logits - full.logits).cwiseAbs().maxCoeff(),
                  1e-6f * std::max(1.0f, full.logits.cwiseAbs().maxCoeff()))
            << "mask " << k;
    }
}

// --- threads ----------------------------------------------------------------------------------------------------

TEST(Threads, TwoThreadsGiveTheSingleThreadedTraceWithinTheFamilyTolerance) {
    if (set_compute_threads(2) != 2) GTEST_SKIP() << "built without OpenMP";
    for (const ModelConfig& c : {gpt_config(), llama_config()}) {
        const Model m = random_model(c, 7);
        const std::vector<int> ids = ids_of(40, c.vocab_size, 4);
        set_compute_threads(2);
        const ForwardResult two = forward(m, ids, capture_all());
        set_compute_threads(1);
        const ForwardResult one = forward(m, ids, capture_all());
        expect_same_trace(*two.trace, *one.trace, 1e-5f, 1e-5f, c.name + " 2 threads");
    }
    set_compute_threads(1);
}

TEST(Threads, ParseThreadCountRejectsNonsenseWithOneLine) {
    EXPECT_EQ(parse_thread_count("3"), 3);
    for (const char* bad : {"0", "-1", "x", "2.5", "", "1000"})
        EXPECT_THROW((void)parse_thread_count(bad), std::invalid_argument) << bad;
    EXPECT_GE(default_worker_threads(), 1);
}

// Weights ×3 of init_weights' (std 0.06): attention already far from uniform. With ×10 the largest difference between
// an incremental and a full forward is 1.7e-6 of a tensor's scale (llama_small, layer 1's scores after qk-norm).
constexpr float kIncrementalWeightScale = 3.0f;

// --- incremental forward ----------------------------------------------------------------------------------------

TEST(Incremental, EveryEditThatKeepsAPrefixEqualsAFullRecompute) {
    for (const ModelConfig& c : {gpt_config(), llama_config()}) {
        const Model m = random_model(c, 11, kIncrementalWeightScale);
        ForwardOptions opt = pooled_capture_all();
        IncrementalState st;
        IncrementalStats stats;
        const std::vector<int> base = ids_of(20, c.vocab_size, 5);
        std::vector<std::vector<int>> edits = {base};
        std::vector<int> e = base;
        e.push_back(7);
        edits.push_back(e);                                  // append one token
        e.back() = 9;
        edits.push_back(e);                                  // replace the last token
        e.erase(e.begin() + 15, e.end());
        edits.push_back(e);                                  // delete a tail
        e.insert(e.begin() + 10, {1, 2, 3});
        edits.push_back(e);                                  // insert in the middle
        edits.push_back(e);                                  // unchanged
        e[0] = (e[0] + 1) % c.vocab_size;
        edits.push_back(e);                                  // first token changed: full
        const std::vector<int> expect_reused = {0, 20, 20, 14, 10, 17, 0};
        for (size_t k = 0; k < edits.size(); ++k) {
            const ForwardResult inc = forward_incremental(m, edits[k], opt, st, &stats);
            const ForwardResult full = forward(m, edits[k], capture_all());
            const std::string what = c.name + " edit " + std::to_string(k);
            EXPECT_EQ(stats.reused, expect_reused[k]) << what;
            EXPECT_EQ(stats.reused + stats.computed, int(edits[k].size())) << what;
            // 2e-6: the sanitizer build (-O1) rounds the products that are not panel products (Eigen's, blocked by
            // row count) apart by up to 1.1e-6 of the scale here since the AVX2 panel kernel (FMA) took over.
            expect_trace_equal_to_rounding(*inc.trace, *full.trace, 2e-6, what);
            EXPECT_TRUE(
                equal_to_rounding(Tensor({inc.logits.rows(), inc.logits.cols()},
                                         std::vector<float>(inc.logits.data(), inc.logits.data() + inc.logits.size())),
                                  full.trace->at("logits"), 2e-6))
                << what;
        }
    }
}

// The long-text capture (every name but the FFN intermediates) stays incremental, and records exactly the full
// forward's names minus those.
TEST(Incremental, TheLongTextCaptureSplicesLikeTheWholeTrace) {
    const std::vector<std::string> dropped{".ffn.pre_act", ".ffn.up", ".ffn.post_act"};
    const CaptureFilter lean = CaptureFilter::all_except(dropped);
    EXPECT_FALSE(lean.wants("dec.0.ffn.pre_act"));
    EXPECT_FALSE(lean.wants("enc.3.ffn.post_act"));
    EXPECT_TRUE(lean.wants("dec.0.ffn.out"));
    EXPECT_TRUE(lean.wants("dec.0.attn.probs"));
    EXPECT_FALSE(lean.captures_all());
    EXPECT_NE(lean.key(), CaptureFilter::all().key());
    EXPECT_EQ(lean.key(), CaptureFilter::all_except(dropped).key());
    for (const ModelConfig& c : {gpt_config(), llama_config()}) {
        const Model m = random_model(c, 11, kIncrementalWeightScale);
        ForwardOptions opt = pooled_capture_all();
        opt.capture = lean;
        IncrementalState st;
        IncrementalStats stats;
        std::vector<int> ids = ids_of(20, c.vocab_size, 5);
        (void)forward_incremental(m, ids, opt, st, &stats);
        ids.push_back(7);
        const ForwardResult inc = forward_incremental(m, ids, opt, st, &stats);
        EXPECT_EQ(stats.reused, 20) << c.name;
        ForwardOptions whole_lean;
        whole_lean.capture = lean;
        const ForwardResult full = forward(m, ids, whole_lean), all = forward(m, ids, capture_all());
        expect_trace_equal_to_rounding(*inc.trace, *full.trace, 2e-6, c.name);
        size_t kept = 0;
        for (const std::string& name : all.trace->names()) {
            const bool ffn = name.find(".ffn.pre_act") != std::string::npos ||
                name.find(".ffn.up") != std::string::npos || name.find(".ffn.post_act") != std::string::npos;
            EXPECT_EQ(full.trace->contains(name), !ffn) << c.name << " " << name;
            kept += !ffn;
        }
        EXPECT_EQ(full.trace->names().size(), kept) << c.name;
    }
}

// An edit far from the end of a long text runs a long tail: with on_layer_min_tail at most its length, each finished
// layer is shown as the whole sequence's attention (the earlier rows composed with the tail's), the very
// AttentionRows the spliced trace then keeps; a shorter tail shows nothing until it is spliced.
TEST(Incremental, ALongTailShowsEachFinishedLayerAsTheWholeSequence) {
    const ModelConfig c = llama_config();
    const Model m = random_model(c, 11, kIncrementalWeightScale);
    ForwardOptions opt = pooled_capture_all();
    std::vector<std::vector<std::shared_ptr<const AttentionRows>>> seen;
    opt.on_layer_min_tail = 10;
    opt.on_layer = [&](const std::string& stack, int layer, const Trace& tr) {
        EXPECT_EQ(stack, "dec");
        std::vector<std::shared_ptr<const AttentionRows>> rows;
        for (int l = 0; l <= layer; ++l) rows.push_back(tr.attention("dec." + std::to_string(l) + ".attn."));
        seen.push_back(std::move(rows));
    };
    IncrementalState st;
    IncrementalStats stats;
    std::vector<int> ids = ids_of(24, c.vocab_size, 5);
    (void)forward_incremental(m, ids, opt, st, &stats);  // full: called once per layer
    ASSERT_EQ(int(seen.size()), c.n_layers);
    seen.clear();
    ids[6] = (ids[6] + 1) % c.vocab_size;  // a tail of 18 positions
    const ForwardResult inc = forward_incremental(m, ids, opt, st, &stats);
    EXPECT_EQ(stats.reused, 6);
    ASSERT_EQ(int(seen.size()), c.n_layers);
    const ForwardResult full = forward(m, ids, capture_all());
    for (int layer = 0; layer < c.n_layers; ++layer)
        for (int l = 0; l <= layer; ++l) {
            const std::string block = "dec." + std::to_string(l) + ".attn.";
            const auto& rows = seen[size_t(layer)][size_t(l)];
            ASSERT_NE(rows, nullptr) << layer << " " << l;
            EXPECT_EQ(rows->n_queries(), 24);
            EXPECT_EQ(rows, inc.trace->attention(block)) << "the spliced trace keeps what was shown";
            std::vector<float> shown, whole;
            rows->all(AttentionRows::Kind::Probs, shown);
            full.trace->attention(block)->all(AttentionRows::Kind::Probs, whole);
            ASSERT_EQ(shown.size(), whole.size());
            for (size_t i = 0; i < shown.size(); ++i) ASSERT_NEAR(shown[i], whole[i], 2e-6) << block << " " << i;
        }
    // A tail shorter than on_layer_min_tail: not called.
    seen.clear();
    ids[20] = (ids[20] + 1) % c.vocab_size;  // a tail of 4
    (void)forward_incremental(m, ids, opt, st, &stats);
    EXPECT_EQ(stats.reused, 20);
    EXPECT_TRUE(seen.empty());
}

// A long sequence whose FFN intermediates are not recorded runs its FFN in row blocks: every recorded entry and the
// logits equal the whole-sequence forward's bit for bit (the blocks run the same kernels on the same rows).
TEST(Forward, TheFfnInRowBlocksEqualsTheWholeSequence) {
    for (ModelConfig c : {gpt_config(), llama_config()}) {
        c.max_seq_len = 2048;
        const Model m = random_model(c, 21, kIncrementalWeightScale);
        const std::vector<int> ids = ids_of(1100, c.vocab_size, 9);
        ForwardOptions lean;
        lean.capture = CaptureFilter::all_except({".ffn.pre_act", ".ffn.up", ".ffn.post_act"});
        lean.all_logits = true;
        ForwardOptions all = capture_all();
        all.all_logits = true;
        const ForwardResult blocks = forward(m, ids, lean), whole = forward(m, ids, all);
        for (const std::string& name : blocks.trace->names()) {
            if (name.find("attn.") != std::string::npos && name.find("attn.out") == std::string::npos) continue;
            EXPECT_EQ(blocks.trace->at(name).data, whole.trace->at(name).data) << c.name << " " << name;
        }
        EXPECT_NE(blocks.trace->find("dec.0.ffn.out"), nullptr);
        EXPECT_EQ(blocks.trace->find("dec.0.ffn.post_act"), nullptr);
        EXPECT_TRUE(blocks.logits == whole.logits) << c.name;
    }
}

// A custom filter (the trace command's globs) records exactly the names it accepts, with the whole forward's values,
// and is not spliced incrementally (it may keep different names at different lengths).
TEST(Incremental, ACustomCaptureRecordsWhatItAcceptsAndRunsWhole) {
    const CaptureFilter some = CaptureFilter::custom(
        [](std::string_view n) { return n.ends_with(".attn.q") || n.ends_with(".attn.q_rot") || n == "logits"; },
        "q and logits");
    EXPECT_TRUE(some.wants("dec.3.attn.q_rot"));
    EXPECT_FALSE(some.wants("dec.3.attn.k_rot"));
    EXPECT_FALSE(some.captures_all());
    EXPECT_FALSE(some.captures_all_but_some());
    EXPECT_EQ(some.key(), "custom:q and logits,");
    for (const ModelConfig& c : {gpt_config(), llama_config()}) {
        const Model m = random_model(c, 12, kIncrementalWeightScale);
        const std::vector<int> ids = ids_of(12, c.vocab_size, 3);
        ForwardOptions opt;
        opt.capture = some;
        const ForwardResult part = forward(m, ids, opt), all = forward(m, ids, capture_all());
        size_t kept = 0;
        for (const std::string& name : all.trace->names()) {
            EXPECT_EQ(part.trace->contains(name), some.wants(name)) << c.name << " " << name;
            if (!some.wants(name)) continue;
            ++kept;
            EXPECT_EQ(part.trace->at(name).data, all.trace->at(name).data) << c.name << " " << name;
        }
        EXPECT_GE(kept, size_t(c.n_layers + 1)) << c.name;
        EXPECT_EQ(part.trace->names().size(), kept) << c.name;
        IncrementalState st;
        IncrementalStats stats;
        (void)forward_incremental(m, ids, opt, st, &stats);
        std::vector<int> longer = ids;
        longer.push_back(5);
        const ForwardResult inc = forward_incremental(m, longer, opt, st, &stats);
        EXPECT_EQ(stats.reused, 0) << c.name;
        EXPECT_EQ(inc.trace->names().size(), kept) << c.name;
    }
}

// The app reads a few entries of each snapshot and leaves the rest unread: unread entries are composed from a chain
// of tails. After typing, deleting and inserting with only layer 0's probabilities read in between (and more calls
// than kMaxSplicePieces, so composition also runs from a new base), every entry equals a full forward.
TEST(Incremental, EntriesLeftUnreadAcrossManyEditsEqualAFullRecompute) {
    for (const ModelConfig& c : {gpt_config(), llama_config()}) {
        const Model m = random_model(c, 13, kIncrementalWeightScale);
        ForwardOptions opt = pooled_capture_all();
        IncrementalState st;
        IncrementalStats stats;
        std::vector<int> ids = ids_of(12, c.vocab_size, 7);
        std::vector<std::shared_ptr<const Trace>> kept;  // as the UI holding an older snapshot
        ForwardResult inc = forward_incremental(m, ids, opt, st, &stats);
        size_t most_pieces = 0;
        for (int k = 0; k < 2 * int(kMaxSplicePieces) + 3; ++k) {
            if (k % 7 == 3) ids.erase(ids.end() - 2, ids.end());                 // delete two
            else if (k % 7 == 5) ids.insert(ids.begin() + 6, {k % c.vocab_size});  // insert in the middle
            else ids.push_back((5 * k + 1) % c.vocab_size);                        // type one
            inc = forward_incremental(m, ids, opt, st, &stats);
            ASSERT_GT(stats.reused, 0) << k;
            (void)inc.trace->at("dec.0.attn.probs");
            if (k % 5 == 0) kept.push_back(inc.trace);
            for (const auto& [name, sp] : st.splices) most_pieces = std::max(most_pieces, sp->pieces.size());
            EXPECT_TRUE(inc.trace->is_pending("dec.1.ffn.pre_act")) << k;
        }
        EXPECT_LE(most_pieces, kMaxSplicePieces);
        EXPECT_GE(most_pieces, 3u);  // unread entries really did chain tails
        const ForwardResult full = forward(m, ids, capture_all());
        expect_trace_equal_to_rounding(*inc.trace, *full.trace, 1e-6, c.name + " after many edits");
        kept.clear();  // the older snapshots go; the newest still reads right
        expect_trace_equal_to_rounding(*inc.trace, *full.trace, 1e-6, c.name + " older snapshots released");
    }
}

TEST(Incremental, WithoutCaptureOnlyLogitsAndLastPositionLogitsAlsoMatch) {
    const Model m = random_model(llama_config(), 12);
    ForwardOptions opt;
    opt.all_logits = false;
    IncrementalState st;
    IncrementalStats stats;
    std::vector<int> ids = ids_of(16, m.config().vocab_size, 6);
    (void)forward_incremental(m, ids, opt, st, &stats);
    ids.push_back(4);
    const ForwardResult inc = forward_incremental(m, ids, opt, st, &stats);
    EXPECT_EQ(stats.computed, 1);
    const MatrixRM full = forward(m, ids, opt).logits;
    EXPECT_LE((inc.logits - full).cwiseAbs().maxCoeff(), 1e-6f * std::max(1.0f, full.cwiseAbs().maxCoeff()));
}

// compute_logits = false skips the LM head (the app's Attention tab): no logits, the same hidden states and trace,
// and the head applied later to any hidden row gives the forward's logits. Switching between no logits and the last
// row (the app changing tabs) keeps the incremental prefix.
TEST(Incremental, ForwardsWithoutLogitsKeepThePrefixAndTheHeadLaterGivesTheSameLogits) {
    const Model m = random_model(gpt_config(), 14);
    ForwardOptions none = capture_all();
    none.compute_logits = false;
    ForwardOptions last = capture_all();
    last.all_logits = false;
    std::vector<int> ids = ids_of(12, m.config().vocab_size, 8);
    const ForwardResult full = forward(m, ids, capture_all());
    const ForwardResult bare = forward(m, ids, none);
    EXPECT_EQ(bare.logits.size(), 0);
    EXPECT_FALSE(bare.trace->contains("logits"));
    EXPECT_TRUE(has_lm_head(m));
    EXPECT_LE((bare.hidden - full.hidden).cwiseAbs().maxCoeff(), 0.0f);
    const MatrixRM later = lm_head_logits(m, bare.hidden);
    EXPECT_LE((later - full.logits).cwiseAbs().maxCoeff(), 1e-6f * std::max(1.0f, full.logits.cwiseAbs().maxCoeff()));

    IncrementalState st;
    IncrementalStats stats;
    (void)forward_incremental(m, ids, none, st, &stats);
    ids.push_back(5);
    const ForwardResult with_last = forward_incremental(m, ids, last, st, &stats);
    EXPECT_EQ(stats.computed, 1);  // the prefix kept across the switch
    ids.push_back(6);
    const ForwardResult without = forward_incremental(m, ids, none, st, &stats);
    EXPECT_EQ(stats.computed, 1);
    EXPECT_EQ(without.logits.size(), 0);
    const ForwardResult ref = forward(m, ids, none);
    ASSERT_EQ(with_last.logits.rows(), 1);
    const MatrixRM ref_prev = forward(m, std::vector<int>(ids.begin(), ids.end() - 1), capture_all()).logits;
    EXPECT_LE((with_last.logits.row(0) - ref_prev.bottomRows(1)).cwiseAbs().maxCoeff(),
              1e-6f * std::max(1.0f, ref_prev.cwiseAbs().maxCoeff()));
    expect_trace_equal_to_rounding(*without.trace, *ref.trace, 1e-6, "no-logits incremental");
}

TEST(Incremental, EncodersNonCausalMasksEditsAndNewSettingsRecomputeEverything) {
    const Model dec = random_model(gpt_config(), 13);
    ModelConfig ec = gpt_config();
    ec.arch = Arch::EncoderOnly;
    const Model enc = random_model(ec, 13);
    const std::vector<int> ids = ids_of(10, 60, 7);
    std::vector<int> longer = ids;
    longer.push_back(5);
    IncrementalStats stats;

    IncrementalState st;
    (void)forward_incremental(enc, ids, capture_all(), st, &stats);
    const ForwardResult e = forward_incremental(enc, longer, capture_all(), st, &stats);
    EXPECT_EQ(stats.reused, 0);
    EXPECT_NE(stats.full_reason.find("encoder"), std::string::npos);
    expect_same_trace(*e.trace, *forward(enc, longer, capture_all()).trace, 0.0f, 0.0f, "encoder");

    ForwardOptions window = capture_all();
    window.self_mask = MaskSpec{MaskKind::SlidingWindow, 3, {}, {}};
    (void)forward_incremental(dec, ids, window, st, &stats);
    (void)forward_incremental(dec, longer, window, st, &stats);
    EXPECT_EQ(stats.reused, 0);
    EXPECT_EQ(stats.full_reason, "the mask is not causal");

    (void)forward_incremental(dec, ids, capture_all(), st, &stats);
    ForwardOptions hotter = capture_all();
    hotter.temperature = 2.0f;
    const ForwardResult h = forward_incremental(dec, longer, hotter, st, &stats);
    EXPECT_EQ(stats.reused, 0);
    expect_same_trace(*h.trace, *forward(dec, longer, hotter).trace, 0.0f, 0.0f, "temperature changed");
    const ForwardResult again = forward_incremental(dec, longer, hotter, st, &stats);  // now reusable
    EXPECT_EQ(stats.reused, int(longer.size()) - 1);
    expect_trace_equal_to_rounding(*again.trace, *h.trace, 1e-6, "same settings");

    ForwardOptions edited = capture_all();
    edited.edits.push_back(ActivationEdit{"dec.0.attn.head_out", 1, -1, EditKind::Zero, {}});
    (void)forward_incremental(dec, longer, edited, st, &stats);
    EXPECT_EQ(stats.full_reason, "activation edits");
}

TEST(Incremental, AnErrorLeavesTheStateEmptyAndTheNextCallCorrect) {
    const Model m = random_model(gpt_config(), 14);
    IncrementalState st;
    std::vector<int> ids = ids_of(8, 60, 8);
    (void)forward_incremental(m, ids, capture_all(), st, nullptr);
    std::vector<int> bad = ids;
    bad.push_back(999);  // outside the vocabulary
    EXPECT_THROW((void)forward_incremental(m, bad, capture_all(), st, nullptr), std::invalid_argument);
    EXPECT_EQ(st.model, nullptr);
    ids.push_back(2);
    const ForwardResult r = forward_incremental(m, ids, capture_all(), st, nullptr);
    expect_same_trace(*r.trace, *forward(m, ids, capture_all()).trace, 0.0f, 0.0f, "after error");
}

}  // namespace
}  // namespace ts
