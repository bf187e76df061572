// AdamW + gradient clipping against torch.optim.AdamW / clip_grad_norm_ (tests/golden/adamw_step.safetensors from
// tests/reference/make_grad_fixtures.py), the decay groups, and the warm-up + cosine schedule.
#include "core/formats/safetensors.h"
#include "core/train/adamw.h"
#include "tests/test_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace {

using ts::train::AdamW;
using ts::train::AdamWOptions;
using ts::train::LrSchedule;

ts::WeightMap with_prefix(const ts::WeightMap& all, const std::string& prefix) {
    ts::WeightMap out;
    for (const auto& [k, t] : all)
        if (k.rfind(prefix, 0) == 0) out.emplace(k.substr(prefix.size()), t);
    return out;
}

TEST(AdamW, ThreeClippedStepsMatchTorch) {
    std::map<std::string, std::string> meta;
    const ts::WeightMap all = ts::load_safetensors(ts::test::golden_path("adamw_step.safetensors"), &meta);
    const auto lrs = nlohmann::json::parse(meta.at("lrs")).get<std::vector<float>>();
    AdamWOptions opt;
    opt.beta1 = std::stof(meta.at("beta1"));
    opt.beta2 = std::stof(meta.at("beta2"));
    opt.eps = std::stof(meta.at("eps"));
    opt.weight_decay = std::stof(meta.at("weight_decay"));
    const double max_norm = std::stod(meta.at("max_norm"));
    for (const auto& name : nlohmann::json::parse(meta.at("decay")).get<std::vector<std::string>>())
        EXPECT_TRUE(ts::train::is_decayed(name, false)) << name;

    ts::WeightMap params = with_prefix(all, "param0.");
    ASSERT_EQ(params.size(), 4u);
    AdamW adam(params, opt);
    for (size_t s = 0; s < lrs.size(); ++s) {
        ts::WeightMap grads = with_prefix(all, "grad" + std::to_string(s) + ".");
        const double norm = ts::train::clip_grad_norm(grads, max_norm);
        if (s == 0) {
            EXPECT_GT(norm, max_norm);  // the fixture's first step is clipped
        }
        adam.step(params, grads, lrs[s]);
    }
    EXPECT_EQ(adam.t(), 3);
    const ts::WeightMap expected = with_prefix(all, "param3.");
    const ts::WeightMap m = with_prefix(all, "exp_avg.");
    const ts::WeightMap v = with_prefix(all, "exp_avg_sq.");
    for (const auto& [name, e] : expected) {
        EXPECT_ALLCLOSE(params.at(name), e, 1e-6f, 1e-5f) << name;
        EXPECT_ALLCLOSE(adam.exp_avg().at(name), m.at(name), 1e-7f, 1e-5f) << name;
        EXPECT_ALLCLOSE(adam.exp_avg_sq().at(name), v.at(name), 1e-8f, 1e-5f) << name;
    }
}

TEST(AdamW, DecayGroups) {
    EXPECT_TRUE(ts::train::is_decayed("dec.3.attn.wo", false));
    EXPECT_TRUE(ts::train::is_decayed("dec.0.ffn.w_gate", false));
    EXPECT_TRUE(ts::train::is_decayed("lm_head.weight", false));
    EXPECT_FALSE(ts::train::is_decayed("dec.0.attn.bq", false));
    EXPECT_FALSE(ts::train::is_decayed("dec.0.ffn_norm.weight", false));
    EXPECT_FALSE(ts::train::is_decayed("dec.0.attn.q_norm.weight", false));
    EXPECT_FALSE(ts::train::is_decayed("tok_emb.weight", false));
    EXPECT_TRUE(ts::train::is_decayed("tok_emb.weight", true));
    EXPECT_TRUE(ts::train::is_decayed("pos_emb.weight", true));
}

TEST(AdamW, ClipLeavesSmallGradientsAlone) {
    ts::WeightMap g;
    g.emplace("a", ts::Tensor({2}, {0.3f, 0.4f}));
    EXPECT_NEAR(ts::train::clip_grad_norm(g, 1.0), 0.5, 1e-7);
    EXPECT_FLOAT_EQ(g.at("a").data[0], 0.3f);
    EXPECT_NEAR(ts::train::clip_grad_norm(g, 0.25), 0.5, 1e-7);
    EXPECT_NEAR(ts::train::global_grad_norm(g), 0.25, 1e-6);
}

TEST(LrSchedule, WarmupThenCosineToMin) {
    const LrSchedule s{1e-3f, 1e-4f, 10, 110};
    EXPECT_FLOAT_EQ(s.at(0), 1e-4f);        // (0 + 1) / 10 of the peak
    EXPECT_FLOAT_EQ(s.at(4), 5e-4f);
    EXPECT_FLOAT_EQ(s.at(9), 1e-3f);        // end of warm-up = peak
    EXPECT_FLOAT_EQ(s.at(10), 1e-3f);       // cosine starts at the peak
    EXPECT_NEAR(s.at(60), 5.5e-4f, 1e-9f);  // halfway: (max + min) / 2
    EXPECT_NEAR(s.at(35), 1e-4f + 0.5f * 9e-4f * (1.0f + std::cos(M_PI * 0.25)), 1e-9f);
    EXPECT_FLOAT_EQ(s.at(110), 1e-4f);      // the end and beyond: min_lr
    EXPECT_FLOAT_EQ(s.at(500), 1e-4f);
    for (int i = 10; i < 110; ++i) EXPECT_LE(s.at(i + 1), s.at(i)) << i;
    const LrSchedule no_warmup{2e-3f, 0.0f, 0, 100};
    EXPECT_FLOAT_EQ(no_warmup.at(0), 2e-3f);
}

TEST(LrSchedule, InverseSqrtIsEquation3OfTheTransformerPaper) {
    // The paper's base model: d_model 512, warmup 4000, steps counted from 1 (our 0-based step + 1).
    LrSchedule s;
    s.kind = ts::train::LrScheduleKind::InverseSqrt;
    s.d_model = 512;
    s.warmup = 4000;
    const double a = 1.0 / std::sqrt(512.0);
    EXPECT_NEAR(s.at(0), a * std::pow(4000.0, -1.5), 1e-12);          // step 1: 1.747e-7
    EXPECT_NEAR(s.at(1999), a * 2000.0 * std::pow(4000.0, -1.5), 1e-10);  // halfway up: half the peak
    EXPECT_NEAR(s.at(3999), 6.98771e-4, 1e-9);                        // peak at step = warmup: (512 * 4000)^-0.5
    EXPECT_NEAR(s.at(15999), 3.49386e-4, 1e-9);                       // 4x warmup: half the peak (1/sqrt)
    EXPECT_NEAR(s.at(99999), a / std::sqrt(100000.0), 1e-10);
    for (int i = 0; i < 3999; i += 37) EXPECT_LT(s.at(i), s.at(i + 1)) << i;
    for (int i = 4000; i < 20000; i += 37) EXPECT_LT(s.at(i + 1), s.at(i)) << i;
    s.factor = 2.0f;  // a factor scales every value
    EXPECT_NEAR(s.at(3999), 2 * 6.98771e-4, 2e-9);
    s.warmup = 0;
    EXPECT_THROW((void)s.at(0), std::invalid_argument);
    EXPECT_EQ(ts::train::lr_schedule_from_string("inverse-sqrt"), ts::train::LrScheduleKind::InverseSqrt);
    EXPECT_EQ(ts::train::lr_schedule_from_string("cosine"), ts::train::LrScheduleKind::Cosine);
    EXPECT_THROW((void)ts::train::lr_schedule_from_string("linear"), std::invalid_argument);
}

}  // namespace
