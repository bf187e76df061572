// Model and forward-pass properties: weight checks, GQA = MHA with duplicated KV heads, causality, KV-cache
// incremental decoding, masks, temperature, trace contents, and a config grid (parameter count + finite logits).
#include "core/model/model.h"
#include "core/kernels/ops.h"
#include "tests/test_util.h"

#include <cmath>
#include <limits>
#include <string>
#include <tuple>

namespace ts {
namespace {

ModelConfig small_config() {
    ModelConfig c;
    c.name = "small";
    c.vocab_size = 50;
    c.d_model = 32;
    c.n_heads = 4;
    c.n_kv_heads = 4;
    c.d_ff = 64;
    c.n_layers = 2;
    c.max_seq_len = 128;
    return c;
}

ModelConfig llama_config() {
    ModelConfig c = small_config();
    c.name = "llama_small";
    c.n_heads = 8;
    c.n_kv_heads = 2;
    c.norm = NormKind::RMSNorm;
    c.activation = Activation::SwiGLU;
    c.position = PositionKind::RoPE;
    c.ffn_bias = c.attn_qkv_bias = c.attn_out_bias = false;
    c.tie_embeddings = false;
    return c;
}

// Larger random weights than init_weights' 0.02 so attention is far from uniform.
Model random_model(const ModelConfig& c, uint64_t seed, float scale = 10.0f) {
    WeightMap w = init_weights(c, seed);
    for (auto& [name, t] : w)
        if (t.rank() == 2)
            for (float& v : t.data) v *= scale;
    return Model(c, std::move(w));
}

std::vector<int> some_ids(int T, int vocab, int seed = 0) {
    std::vector<int> ids;
    for (int t = 0; t < T; ++t) ids.push_back((t * 7 + seed * 13 + 3) % vocab);
    return ids;
}

ForwardOptions capture_all() {
    ForwardOptions o;
    o.capture = CaptureFilter::all();
    return o;
}

bool all_finite(const MatrixRM& m) { return m.allFinite(); }

// --- weights --------------------------------------------------------------------------------------------------------
TEST(Model, RejectsMissingExtraAndMisshapedWeightsByName) {
    const ModelConfig c = small_config();
    {
        WeightMap w = init_weights(c, 1);
        w.erase("dec.1.attn.wk");
        try {
            Model m(c, std::move(w));
            FAIL() << "missing weight accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("missing weight 'dec.1.attn.wk'"), std::string::npos) << e.what();
        }
    }
    {
        WeightMap w = init_weights(c, 1);
        w.emplace("dec.0.attn.extra", Tensor({3}));
        try {
            Model m(c, std::move(w));
            FAIL() << "extra weight accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("unexpected weight 'dec.0.attn.extra'"), std::string::npos)
                << e.what();
        }
    }
    {
        WeightMap w = init_weights(c, 1);
        w["dec.0.ffn.w_up"] = Tensor({32, 64});  // transposed
        try {
            Model m(c, std::move(w));
            FAIL() << "mis-shaped weight accepted";
        } catch (const std::invalid_argument& e) {
            const std::string msg = e.what();
            EXPECT_NE(msg.find("'dec.0.ffn.w_up' has shape (32, 64), expected (64, 32)"), std::string::npos) << msg;
        }
    }
    EXPECT_NO_THROW(Model(c, init_weights(c, 1)));
}

TEST(Model, InitWeightsIsSeededAndNormsAreOnes) {
    const ModelConfig c = small_config();
    const WeightMap a = init_weights(c, 5), b = init_weights(c, 5), d = init_weights(c, 6);
    EXPECT_EQ(a.at("dec.0.attn.wq").data, b.at("dec.0.attn.wq").data);
    EXPECT_NE(a.at("dec.0.attn.wq").data, d.at("dec.0.attn.wq").data);
    for (float v : a.at("dec.0.attn_norm.weight").data) EXPECT_EQ(v, 1.0f);
    for (float v : a.at("dec.0.attn.bq").data) EXPECT_EQ(v, 0.0f);
}

TEST(Model, WeightLookupNamesTheMissingTensor) {
    const Model m(small_config(), init_weights(small_config(), 1));
    EXPECT_EQ(m.find_weight("nope"), nullptr);
    EXPECT_EQ(m.weight("tok_emb.weight").shape, (std::vector<int64_t>{50, 32}));
    try {
        (void)m.weight("nope");
        FAIL();
    } catch (const std::out_of_range& e) {
        EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos);
    }
}

// --- forward properties -----------------------------------------------------------------------------------------
TEST(Forward, GqaEqualsMhaWithDuplicatedKvHeads) {
    ModelConfig gqa = llama_config();  // 8 query heads, 2 KV heads: heads 0-3 use KV head 0, 4-7 use KV head 1
    const Model mg = random_model(gqa, 3);
    ModelConfig mha = gqa;
    mha.n_kv_heads = gqa.n_heads;
    WeightMap w = mg.weights();
    const int D = gqa.d_head(), rep = gqa.n_heads / gqa.n_kv_heads;
    for (int i = 0; i < gqa.n_layers; ++i)
        for (const char* kv : {".attn.wk", ".attn.wv"}) {
            const std::string name = "dec." + std::to_string(i) + kv;
            const Tensor& src = mg.weight(name);
            Tensor dup({int64_t(mha.n_heads) * D, mha.d_model});
            for (int h = 0; h < mha.n_heads; ++h)
                dup.mat().middleRows(h * D, D) = src.mat().middleRows((h / rep) * D, D);
            w[name] = dup;
        }
    const Model mm(mha, std::move(w));
    const auto ids = some_ids(9, gqa.vocab_size);
    const ForwardResult a = forward(mg, ids, capture_all());
    const ForwardResult b = forward(mm, ids, capture_all());
    EXPECT_ALLCLOSE(a.logits, b.logits, 1e-5f, 1e-5f);
    EXPECT_ALLCLOSE(a.trace->at("dec.1.attn.probs"), b.trace->at("dec.1.attn.probs"), 1e-6f, 0.0f);
    EXPECT_EQ(a.trace->at("dec.0.attn.k").shape, (std::vector<int64_t>{2, 9, D}));
    EXPECT_EQ(b.trace->at("dec.0.attn.k").shape, (std::vector<int64_t>{8, 9, D}));
}

TEST(Forward, CausalMaskKeepsEarlierOutputsWhenALaterTokenChanges) {
    for (const ModelConfig& c : {small_config(), llama_config()}) {
        const Model m = random_model(c, 4);
        auto ids = some_ids(8, c.vocab_size);
        const ForwardResult a = forward(m, ids, {});
        ids[5] = (ids[5] + 1) % c.vocab_size;
        const ForwardResult b = forward(m, ids, {});
        EXPECT_ALLCLOSE(MatrixRM(a.logits.topRows(5)), MatrixRM(b.logits.topRows(5)), 0.0f, 0.0f);
        EXPECT_GT((a.logits.row(5) - b.logits.row(5)).cwiseAbs().maxCoeff(), 1e-4f);
        EXPECT_GT((a.logits.row(7) - b.logits.row(7)).cwiseAbs().maxCoeff(), 1e-4f);
    }
}

class KvCacheTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(KvCacheTest, IncrementalDecodingEqualsFullForward) {
    const auto [which, chunk] = GetParam();
    const ModelConfig c = which == 0 ? small_config() : llama_config();
    const Model m = random_model(c, 5);
    const int T = 70;  // crosses the cache's first capacity (64) so growth is exercised
    const auto ids = some_ids(T, c.vocab_size, 2);
    const ForwardResult full = forward(m, ids, capture_all());
    KVCache cache;
    MatrixRM logits(T, c.vocab_size);
    int pos = 0;
    while (pos < T) {
        const int n = std::min(chunk, T - pos);
        const std::vector<int> part(ids.begin() + pos, ids.begin() + pos + n);
        ForwardOptions opt = capture_all();
        const ForwardResult r = forward(m, part, opt, &cache);
        ASSERT_EQ(r.logits.rows(), n);
        logits.middleRows(pos, n) = r.logits;
        // Attention rows of this chunk equal the matching rows of the full forward (keys 0 .. pos+n-1).
        const Tensor& p = r.trace->at("dec.1.attn.probs");
        ASSERT_EQ(p.shape, (std::vector<int64_t>{c.n_heads, n, pos + n}));
        const Tensor& pf = full.trace->at("dec.1.attn.probs");
        for (int h = 0; h < c.n_heads; ++h)
            for (int t = 0; t < n; ++t)
                EXPECT_TRUE(test::allclose(p.data.data() + (size_t(h) * n + t) * (pos + n),
                                           pf.data.data() + (size_t(h) * T + pos + t) * T, pos + n, 1e-5f, 0.0f));
        pos += n;
        EXPECT_EQ(cache.n_past, pos);
    }
    EXPECT_GE(cache.capacity, T);
    EXPECT_ALLCLOSE(logits, full.logits, 2e-5f, 1e-5f);
}

INSTANTIATE_TEST_SUITE_P(TokenByTokenAndChunks, KvCacheTest,
                         ::testing::Combine(::testing::Values(0, 1), ::testing::Values(1, 3, 17)));

TEST(Forward, KvCacheRejectsMismatchedStartAndEncoderOnly) {
    const ModelConfig c = small_config();
    const Model m = random_model(c, 6);
    KVCache cache;
    (void)forward(m, {1, 2, 3}, {}, &cache);
    Trace tr;
    const MatrixRM x = MatrixRM::Zero(2, c.d_model);
    EXPECT_THROW((void)decoder_stack_forward(m, x, nullptr, {}, tr, &cache, 0), std::invalid_argument);
    ModelConfig e = c;
    e.arch = Arch::EncoderOnly;
    const Model me = random_model(e, 6);
    KVCache c2;
    EXPECT_THROW((void)forward(me, {1, 2}, {}, &c2), std::invalid_argument);
}

TEST(Forward, FullyMaskedRowsGiveZeroProbabilities) {
    const ModelConfig c = small_config();
    const Model m = random_model(c, 7);
    const int T = 5;
    ForwardOptions opt = capture_all();
    opt.self_mask.kind = MaskKind::Custom;
    opt.self_mask.custom.assign(T * T, 1);
    for (int s = 0; s < T; ++s) opt.self_mask.custom[2 * T + s] = 0;  // query 2 sees nothing
    const ForwardResult r = forward(m, some_ids(T, c.vocab_size), opt);
    EXPECT_TRUE(all_finite(r.logits));
    const Tensor& p = r.trace->at("dec.0.attn.probs");
    const Tensor& sm = r.trace->at("dec.0.attn.scores_masked");
    for (int h = 0; h < c.n_heads; ++h)
        for (int t = 0; t < T; ++t) {
            float sum = 0.0f;
            for (int s = 0; s < T; ++s) sum += p.data[(size_t(h) * T + t) * T + s];
            EXPECT_NEAR(sum, t == 2 ? 0.0f : 1.0f, 1e-5f) << "head " << h << " query " << t;
        }
    EXPECT_EQ(sm.data[2 * T + 0], -std::numeric_limits<float>::infinity());
    const Tensor& ho = r.trace->at("dec.0.attn.head_out");
    for (int d = 0; d < c.d_head(); ++d) EXPECT_EQ(ho.data[size_t(2) * c.d_head() + d], 0.0f);
}

TEST(Forward, SlidingWindowSeesExactlyTheLastWKeys) {
    const ModelConfig c = llama_config();
    const Model m = random_model(c, 8);
    const int T = 9, w = 3;
    ForwardOptions opt = capture_all();
    opt.self_mask.kind = MaskKind::SlidingWindow;
    opt.self_mask.window = w;
    const ForwardResult r = forward(m, some_ids(T, c.vocab_size), opt);
    const Tensor& p = r.trace->at("dec.1.attn.probs");
    for (int h = 0; h < c.n_heads; ++h)
        for (int t = 0; t < T; ++t)
            for (int s = 0; s < T; ++s) {
                const float v = p.data[(size_t(h) * T + t) * T + s];
                if (s <= t && s > t - w)
                    EXPECT_GT(v, 0.0f) << h << "," << t << "," << s;
                else
                    EXPECT_EQ(v, 0.0f) << h << "," << t << "," << s;
            }
    opt.self_mask.window = 0;
    EXPECT_THROW((void)forward(m, some_ids(T, c.vocab_size), opt), std::invalid_argument);
}

TEST(Forward, KeyPaddingIsNeverAttended) {
    const ModelConfig c = small_config();
    const Model m = random_model(c, 9);
    ForwardOptions opt = capture_all();
    opt.self_mask.key_padding = {0, 1, 0, 0};
    const ForwardResult r = forward(m, some_ids(4, c.vocab_size), opt);
    const Tensor& p = r.trace->at("dec.0.attn.probs");
    for (int h = 0; h < c.n_heads; ++h)
        for (int t = 0; t < 4; ++t) EXPECT_EQ(p.data[(size_t(h) * 4 + t) * 4 + 1], 0.0f);
    opt.self_mask.key_padding = {0, 1};
    EXPECT_THROW((void)forward(m, some_ids(4, c.vocab_size), opt), std::invalid_argument);
}

float mean_row_entropy(const Tensor& p, int rows, int S) {
    float e = 0.0f;
    for (int r = 0; r < rows; ++r) e += entropy_nats(std::span<const float>(p.data.data() + size_t(r) * S, S));
    return e / rows;
}

TEST(Forward, TemperatureFlattensOrSharpensAttention) {
    const ModelConfig c = small_config();
    const Model m = random_model(c, 10);
    const int T = 6;
    ForwardOptions opt = capture_all();
    opt.self_mask.kind = MaskKind::None;
    std::vector<float> entropy;
    for (float temp : {1e-3f, 0.5f, 1.0f, 2.0f, 1e4f}) {
        opt.temperature = temp;
        const ForwardResult r = forward(m, some_ids(T, c.vocab_size), opt);
        const Tensor& p = r.trace->at("dec.0.attn.probs");
        entropy.push_back(mean_row_entropy(p, c.n_heads * T, T));
        if (temp > 1e3f) {  // -> uniform over the T keys
            for (float v : p.data) EXPECT_NEAR(v, 1.0f / T, 1e-3f);
        }
        if (temp < 1e-2f) {  // -> one-hot on the arg max
            for (int row = 0; row < c.n_heads * T; ++row)
                EXPECT_GT(*std::max_element(p.data.begin() + row * T, p.data.begin() + (row + 1) * T), 0.99f);
        }
    }
    for (size_t i = 1; i < entropy.size(); ++i) EXPECT_LT(entropy[i - 1], entropy[i]) << "temperature index " << i;
    EXPECT_NEAR(entropy.back(), std::log(float(T)), 1e-3f);
}

TEST(Forward, TraceHoldsDocumentedNamesAndShapesOnlyWhenCaptured) {
    ModelConfig c = llama_config();
    c.qk_norm = true;
    const Model m = random_model(c, 11);
    const int T = 5, H = c.n_heads, K = c.n_kv_heads, D = c.d_head();
    const ForwardResult none = forward(m, some_ids(T, c.vocab_size), {});
    EXPECT_EQ(none.trace->size(), 0u);
    const ForwardResult r = forward(m, some_ids(T, c.vocab_size), capture_all());
    const std::vector<std::pair<std::string, std::vector<int64_t>>> want = {
        {"tok_emb.out", {T, c.d_model}},           {"embed.out", {T, c.d_model}},
        {"dec.0.attn_norm.out", {T, c.d_model}},   {"dec.0.attn.q", {H, T, D}},
        {"dec.0.attn.k", {K, T, D}},               {"dec.0.attn.v", {K, T, D}},
        {"dec.0.attn.q_normed", {H, T, D}},        {"dec.0.attn.k_normed", {K, T, D}},
        {"dec.0.attn.q_rot", {H, T, D}},           {"dec.0.attn.k_rot", {K, T, D}},
        {"dec.0.attn.scores", {H, T, T}},          {"dec.0.attn.scores_scaled", {H, T, T}},
        {"dec.0.attn.scores_masked", {H, T, T}},   {"dec.0.attn.probs", {H, T, T}},
        {"dec.0.attn.head_out", {H, T, D}},        {"dec.0.attn.out", {T, c.d_model}},
        {"dec.0.resid_attn", {T, c.d_model}},      {"dec.0.ffn_norm.out", {T, c.d_model}},
        {"dec.0.ffn.pre_act", {T, c.d_ff}},        {"dec.0.ffn.up", {T, c.d_ff}},
        {"dec.0.ffn.post_act", {T, c.d_ff}},       {"dec.0.ffn.out", {T, c.d_model}},
        {"dec.1.resid_ffn", {T, c.d_model}},       {"final_norm.out", {T, c.d_model}},
        {"logits", {T, c.vocab_size}}};
    for (const auto& [name, shape] : want) {
        const Tensor* t = r.trace->find(name);
        ASSERT_NE(t, nullptr) << name;
        EXPECT_EQ(t->shape, shape) << name;
    }
    EXPECT_EQ(r.trace->find("pos.out"), nullptr);  // RoPE is not additive
    // Gated FFN: post_act = silu(pre_act) * up.
    const Tensor& pre = r.trace->at("dec.0.ffn.pre_act");
    const Tensor& up = r.trace->at("dec.0.ffn.up");
    const Tensor& post = r.trace->at("dec.0.ffn.post_act");
    for (size_t i = 0; i < pre.data.size(); i += 37) EXPECT_NEAR(post.data[i], swish(pre.data[i]) * up.data[i], 1e-5f);
    // Residual stream: resid_attn = embed + attn.out for pre-norm.
    const MatrixRM sum = r.trace->at("embed.out").mat() + r.trace->at("dec.0.attn.out").mat();
    EXPECT_ALLCLOSE(MatrixRM(r.trace->at("dec.0.resid_attn").mat()), sum, 1e-5f, 0.0f);
    EXPECT_ALLCLOSE(r.trace->at("logits"), Tensor({T, c.vocab_size}, std::vector<float>(r.logits.data(),
                                                  r.logits.data() + r.logits.size())), 0.0f, 0.0f);
    // A prefix filter keeps only matching names.
    ForwardOptions opt;
    opt.capture = CaptureFilter::prefixes({"dec.1.attn.probs"});
    const ForwardResult f = forward(m, some_ids(T, c.vocab_size), opt);
    ASSERT_EQ(f.trace->size(), 1u);
    EXPECT_EQ(f.trace->names()[0], "dec.1.attn.probs");
}

TEST(Forward, RejectsBadInputs) {
    ModelConfig c = small_config();
    c.max_seq_len = 8;
    const Model m = random_model(c, 12);
    EXPECT_THROW((void)forward(m, {}, {}), std::invalid_argument);
    EXPECT_THROW((void)forward(m, {1, 50}, {}), std::invalid_argument);
    EXPECT_THROW((void)forward(m, {1, -1}, {}), std::invalid_argument);
    EXPECT_THROW((void)forward(m, some_ids(9, c.vocab_size), {}), std::invalid_argument);
    EXPECT_NO_THROW((void)forward(m, some_ids(8, c.vocab_size), {}));
    EXPECT_THROW((void)forward_seq2seq(m, {1}, {2}, {}), std::invalid_argument);
}

// --- config grid ----------------------------------------------------------------------------------------------------
using GridParam = std::tuple<NormKind, NormPlacement, Activation, PositionKind, int>;
class ConfigGrid : public ::testing::TestWithParam<GridParam> {};

TEST_P(ConfigGrid, WeightCountMatchesParameterCountAndCachedForwardEqualsFull) {
    const auto [norm, placement, act, pos, kv] = GetParam();
    const ModelConfig c = test::config_grid_cell(small_config(), norm, placement, act, pos, kv);
    int64_t n = 0;
    for (const auto& [name, shape] : expected_weights(c)) n += Tensor::count(shape);
    EXPECT_EQ(n, c.parameter_count());
    const Model m = random_model(c, 13, 5.0f);
    const ForwardResult r = forward(m, some_ids(6, c.vocab_size), capture_all());
    ASSERT_EQ(r.logits.rows(), 6);
    EXPECT_TRUE(all_finite(r.logits));
    EXPECT_EQ(r.trace->find("pos.out") != nullptr,
              pos == PositionKind::Learned || pos == PositionKind::Sinusoidal);
    // The KV-cache forward equals the full forward: four tokens, then one at a time through the same cache.
    ForwardOptions all;
    all.all_logits = true;
    const std::vector<int> ids = some_ids(6, c.vocab_size);
    const ForwardResult full = forward(m, ids, all);
    KVCache cache;
    const ForwardResult head = forward(m, std::vector<int>(ids.begin(), ids.begin() + 4), all, &cache);
    ASSERT_EQ(head.logits.rows(), 4);
    EXPECT_ALLCLOSE(head.logits, MatrixRM(full.logits.topRows(4)), 1e-4f, 1e-4f);
    for (int t = 4; t < 6; ++t) {
        const ForwardResult step = forward(m, {ids[size_t(t)]}, all, &cache);
        ASSERT_EQ(step.logits.rows(), 1);
        EXPECT_ALLCLOSE(step.logits, MatrixRM(full.logits.row(t)), 1e-4f, 1e-4f) << "position " << t;
    }
    EXPECT_EQ(cache.n_past, 6);
    // The logits are not all alike (a grid of constant outputs would pass any comparison).
    EXPECT_GT((full.logits.row(5) - full.logits.row(0)).cwiseAbs().maxCoeff(), 1e-3f);
}

INSTANTIATE_TEST_SUITE_P(
    NormsPlacementsActivationsPositionsHeads, ConfigGrid,
    ::testing::Combine(::testing::Values(NormKind::LayerNorm, NormKind::RMSNorm),
                       ::testing::Values(NormPlacement::Pre, NormPlacement::Post),
                       ::testing::Values(Activation::ReLU, Activation::GELU, Activation::GELUTanh, Activation::SiLU,
                                         Activation::GLU, Activation::SwiGLU, Activation::GeGLU),
                       ::testing::Values(PositionKind::None, PositionKind::Sinusoidal, PositionKind::Learned,
                                         PositionKind::RoPE),
                       ::testing::Values(4, 2, 1)));

using ArchParam = std::tuple<Arch, NormKind, PositionKind, bool>;
class ArchGrid : public ::testing::TestWithParam<ArchParam> {};

TEST_P(ArchGrid, EncoderAndEncoderDecoderCountsAndForward) {
    const auto [arch, norm, pos, qk_norm] = GetParam();
    ModelConfig c = small_config();
    c.arch = arch;
    c.norm = norm;
    c.position = pos;
    c.qk_norm = qk_norm;
    c.n_enc_layers = arch == Arch::EncoderDecoder ? 3 : 0;
    c.tie_embeddings = !qk_norm;
    int64_t n = 0;
    for (const auto& [name, shape] : expected_weights(c)) n += Tensor::count(shape);
    EXPECT_EQ(n, c.parameter_count());
    const Model m = random_model(c, 14, 5.0f);
    if (arch == Arch::EncoderDecoder) {
        const ForwardResult r = forward_seq2seq(m, some_ids(7, c.vocab_size), some_ids(4, c.vocab_size, 1),
                                                capture_all());
        ASSERT_EQ(r.logits.rows(), 4);
        EXPECT_TRUE(all_finite(r.logits));
        EXPECT_EQ(r.trace->at("enc.out").shape, (std::vector<int64_t>{7, c.d_model}));
        EXPECT_EQ(r.trace->at("dec.0.cross_attn.probs").shape, (std::vector<int64_t>{c.n_heads, 4, 7}));
        EXPECT_EQ(r.trace->at("dec.1.resid_cross").shape, (std::vector<int64_t>{4, c.d_model}));
        EXPECT_EQ(r.trace->at("enc.2.resid_ffn").shape, (std::vector<int64_t>{7, c.d_model}));  // 3 encoder layers
    } else {
        const ForwardResult r = forward(m, some_ids(7, c.vocab_size), capture_all());
        EXPECT_TRUE(all_finite(r.hidden));
        EXPECT_EQ(r.logits.rows(), c.tie_embeddings ? 7 : 0);  // encoder-only: head only when tied
        EXPECT_NE(r.trace->find("enc.1.attn.probs"), nullptr);
    }
}

INSTANTIATE_TEST_SUITE_P(EncoderKinds, ArchGrid,
                         ::testing::Combine(::testing::Values(Arch::EncoderOnly, Arch::EncoderDecoder),
                                            ::testing::Values(NormKind::LayerNorm, NormKind::RMSNorm),
                                            ::testing::Values(PositionKind::None, PositionKind::Sinusoidal,
                                                              PositionKind::Learned, PositionKind::RoPE),
                                            ::testing::Bool()));

}  // namespace
}  // namespace ts
