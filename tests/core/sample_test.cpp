// Next-token sampling and generation (core/forward/sample.h): the filtered distribution, draws that follow it and repeat
// for a seed, and generation on the KV cache that gives the tokens of a full forward per step, also once the
// context slides past max_seq_len.
#include "core/forward/sample.h"
#include "core/util/random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace ts {
namespace {

TEST(Sampling, TemperatureTopKTopP) {
    const std::vector<float> logits = {2.0f, 1.0f, 0.0f, -1.0f};
    const auto p = sampling_distribution(logits, {});
    EXPECT_NEAR(std::accumulate(p.begin(), p.end(), 0.0), 1.0, 1e-6);
    EXPECT_NEAR(p[0] / p[1], std::exp(1.0), 1e-4);
    const auto k2 = sampling_distribution(logits, {1.0f, 2, 1.0f});
    EXPECT_EQ(k2[2], 0.0f);
    EXPECT_EQ(k2[3], 0.0f);
    EXPECT_NEAR(k2[0] + k2[1], 1.0, 1e-6);
    const auto nucleus = sampling_distribution(logits, {1.0f, 0, 0.5f});
    EXPECT_FLOAT_EQ(nucleus[0], 1.0f);  // the top token alone already holds >= 50%
    const auto cold = sampling_distribution(logits, {0.05f, 0, 1.0f});
    EXPECT_GT(cold[0], 0.999f);
    const auto hot = sampling_distribution(logits, {2.0f, 0, 1.0f});
    EXPECT_NEAR(hot[0] / hot[1], std::exp(0.5), 1e-4);  // logits / T
    EXPECT_THROW((void)sampling_distribution(logits, {0.0f, 0, 1.0f}), std::invalid_argument);
    EXPECT_THROW((void)sampling_distribution(logits, {1.0f, 0, 0.0f}), std::invalid_argument);
    const std::vector<float> none = {-INFINITY, NAN};
    EXPECT_EQ(sampling_distribution(none, {}), (std::vector<float>{0.0f, 0.0f}));
}

TEST(Sampling, DrawsFollowTheWeightsAndRepeatForASeed) {
    const std::vector<float> p = {0.1f, 0.0f, 0.6f, 0.3f};
    uint64_t state = 42;
    std::vector<int> count(4, 0);
    const int n = 40000;
    for (int i = 0; i < n; ++i) ++count[size_t(sample_index(p, state))];
    EXPECT_EQ(count[1], 0);  // weight 0: never
    EXPECT_NEAR(count[0] / double(n), 0.1, 0.01);
    EXPECT_NEAR(count[2] / double(n), 0.6, 0.01);
    EXPECT_NEAR(count[3] / double(n), 0.3, 0.01);
    uint64_t a = 7, b = 7;
    for (int i = 0; i < 100; ++i) EXPECT_EQ(sample_index(p, a), sample_index(p, b));
    // splitmix64's published first outputs for seed 0 (Vigna's reference implementation): the generator is the
    // same on every platform, so a seed samples the same text everywhere.
    uint64_t s0 = 0;
    EXPECT_EQ(splitmix64(s0), 0xE220A8397B1DCDAFull);
    EXPECT_EQ(splitmix64(s0), 0x6E789E6AA1B965F4ull);
    EXPECT_THROW((void)sample_index(std::vector<float>{0.0f, -1.0f}, state), std::invalid_argument);
}

ModelConfig tiny_config(int max_seq_len) {
    ModelConfig c;
    c.name = "tiny";
    c.vocab_size = 40;
    c.d_model = 32;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.d_ff = 64;
    c.n_layers = 2;
    c.max_seq_len = max_seq_len;
    return c;
}

Model peaked_model(const ModelConfig& c) {  // weights ×5: distributions far from uniform
    WeightMap w = init_weights(c, 11);
    for (auto& [name, t] : w)
        if (t.rank() == 2)
            for (float& v : t.data) v *= 5.0f;
    return Model(c, std::move(w));
}

// What generate() must equal: a full forward of the (last max_seq_len) context for every token.
std::vector<int> reference_generation(const Model& m, std::vector<int> ids, int n, const SamplingOptions& so, uint64_t seed) {
    std::vector<int> out;
    for (int i = 0; i < n; ++i) {
        std::vector<int> ctx = ids;
        const int L = m.config().max_seq_len;
        if (int(ctx.size()) > L) ctx.erase(ctx.begin(), ctx.end() - L);
        ForwardOptions fo;
        fo.all_logits = false;
        const ForwardResult r = forward(m, ctx, fo);
        const auto row = r.logits.row(r.logits.rows() - 1);
        const std::vector<float> p = sampling_distribution(std::span<const float>(row.data(), size_t(row.size())), so);
        const int next = sample_index(p, seed);
        ids.push_back(next);
        out.push_back(next);
    }
    return out;
}

TEST(Generate, KvCacheGivesTheTokensOfAFullForwardPerStepAlsoWhenTheContextSlides) {
    const Model m = peaked_model(tiny_config(12));
    const std::vector<int> prompt = {3, 14, 15, 9, 2};
    GenerateOptions g;
    g.max_new_tokens = 14;  // the context reaches 12 after 7 tokens, then slides
    g.sampling = {0.9f, 0, 0.95f};
    g.seed = 1234;
    const Generation out = generate(m, prompt, g);
    EXPECT_EQ(out.ids, reference_generation(m, prompt, 14, g.sampling, g.seed));
    ASSERT_EQ(out.probs.size(), 14u);
    for (float p : out.probs) EXPECT_GT(p, 0.0f);
    EXPECT_EQ(out.full_forwards, 1 + 6);  // the prompt, then the 6 steps whose context (13+ tokens) slides
    // A different seed gives different text (40-token vocabulary, 14 draws).
    g.seed = 99;
    EXPECT_NE(generate(m, prompt, g).ids, out.ids);
    // An intervention makes every step a full forward (the cache cannot replay it); the tokens still match.
    g.seed = 1234;
    g.forward.self_mask = MaskSpec{MaskKind::SlidingWindow, 3, {}, {}};
    const Generation windowed = generate(m, prompt, g);
    EXPECT_EQ(windowed.full_forwards, 14);
}

TEST(Generate, RefusesWhatItCannotSampleFrom) {
    const Model m = peaked_model(tiny_config(16));
    GenerateOptions g;
    EXPECT_THROW((void)generate(m, {}, g), std::invalid_argument);
    g.sampling.temperature = 0.0f;
    EXPECT_THROW((void)generate(m, {1, 2}, g), std::invalid_argument);
    ModelConfig e = tiny_config(16);
    e.arch = Arch::EncoderOnly;
    e.tie_embeddings = false;
    WeightMap w = init_weights(e, 3);
    w.erase("lm_head.weight");
    const Model enc(e, std::move(w));
    if (!has_lm_head(enc)) EXPECT_THROW((void)generate(enc, {1, 2}, GenerateOptions{}), std::invalid_argument);
}

}  // namespace
}  // namespace ts
