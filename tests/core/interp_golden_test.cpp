// The analyses of core/interp against PyTorch (tests/reference/make_interp_fixtures.py, float64) on the GPT-2- and
// Llama-shaped golden models: ablated logits and ablation sweeps, activation patching heatmaps, direct logit
// attribution (components and their sum = the logit), attention rollout and attention flow; the head detectors
// (tests/reference/make_head_detector_fixtures.py).
#include "core/interp/ablation.h"
#include "core/interp/attention_flow.h"
#include "core/interp/head_detectors.h"
#include "core/interp/logit_attribution.h"
#include "core/interp/patching.h"
#include "tests/core/golden_model.h"
#include "tests/test_util.h"

#include <nlohmann/json.hpp>

namespace ts {
namespace {

using namespace ts::interp;

struct InterpFixture {
    test::GoldenModel g;       // the model fixture (weights)
    WeightMap t;               // the interp fixture's tensors
    std::vector<std::string> dla_names;

    const Tensor& at(const std::string& name) const { return t.at(name); }
    MatrixRM mat(const std::string& name) const { return at(name).mat(); }
    int scalar(const std::string& name) const { return static_cast<int>(at(name).data.at(0)); }
    std::vector<int> ids(const std::string& name) const {
        std::vector<int> r;
        for (float v : at(name).data) r.push_back(static_cast<int>(v));
        return r;
    }
};

InterpFixture load(const std::string& file) {
    std::map<std::string, std::string> meta;
    InterpFixture f;
    f.t = load_safetensors(test::golden_path(file), &meta);
    f.g = test::load_golden_model(meta.at("model"));
    f.dla_names = nlohmann::json::parse(meta.at("dla_names")).get<std::vector<std::string>>();
    return f;
}

class InterpGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(InterpGolden, AblatedLogitsMatchTorch) {
    const InterpFixture f = load(GetParam());
    std::vector<HeadRef> heads;
    const Tensor& h = f.at("in.ablated_heads");
    for (int64_t i = 0; i < h.shape[0]; ++i) heads.push_back({int(h.data[2 * i]), int(h.data[2 * i + 1])});
    const ForwardResult zero = run_with_ablated_heads(*f.g.model, f.ids("in.ids"), heads, AblationKind::Zero);
    EXPECT_ALLCLOSE(zero.logits, f.mat("out.ablated_logits_zero"), 1e-5f, 0.0f);
    const ForwardResult mean = run_with_ablated_heads(*f.g.model, f.ids("in.ids"), heads, AblationKind::Mean);
    EXPECT_ALLCLOSE(mean.logits, f.mat("out.ablated_logits_mean"), 1e-5f, 0.0f);
    // The ablation matters (the comparison above is not between two clean runs).
    const ForwardResult clean = forward(*f.g.model, f.ids("in.ids"), ForwardOptions{});
    EXPECT_GT((clean.logits - zero.logits).cwiseAbs().maxCoeff(), 1e-2f);
}

TEST_P(InterpGolden, AblationSweepMatchesTorch) {
    const InterpFixture f = load(GetParam());
    AblationSweepOptions opt;
    opt.targets = {{-1, f.scalar("in.target")}};
    int calls = 0;
    opt.progress = [&](int done, int total) {
        ++calls;
        EXPECT_EQ(done, calls);
        EXPECT_EQ(total, f.g.model->config().n_layers * f.g.model->config().n_heads);
    };
    const AblationSweep zero = head_ablation_sweep(*f.g.model, f.ids("in.ids"), opt);
    EXPECT_NEAR(zero.clean_log_prob, f.at("out.clean_log_prob").data[0], 1e-5);
    EXPECT_ALLCLOSE(zero.delta_log_prob, f.mat("out.sweep_zero"), 1e-5f, 0.0f);
    EXPECT_EQ(calls, f.g.model->config().n_layers * f.g.model->config().n_heads);
    opt.kind = AblationKind::Mean;
    opt.progress = {};
    EXPECT_ALLCLOSE(head_ablation_sweep(*f.g.model, f.ids("in.ids"), opt).delta_log_prob, f.mat("out.sweep_mean"),
                    1e-5f, 0.0f);
}

TEST_P(InterpGolden, PatchingHeatmapsMatchTorch) {
    const InterpFixture f = load(GetParam());
    const PatchingBaseline b = prepare_patching(*f.g.model, f.ids("in.ids"), f.ids("in.corrupt_ids"),
                                                f.scalar("in.answer"), f.scalar("in.wrong"));
    EXPECT_NEAR(b.clean_metric, f.at("out.clean_metric").data[0], 1e-5);
    EXPECT_NEAR(b.corrupt_metric, f.at("out.corrupt_metric").data[0], 1e-5);
    const PatchingResult resid = patch_resid_pre(*f.g.model, b);
    EXPECT_ALLCLOSE(resid.normalized, f.mat("out.patch_resid_pre"), 1e-5f, 0.0f);
    const PatchingResult heads = patch_head_out(*f.g.model, b);
    EXPECT_ALLCLOSE(heads.normalized, f.mat("out.patch_head_out"), 1e-5f, 0.0f);
    // Layer 0's input differs only where the tokens differ: patching an unchanged position changes nothing.
    const std::vector<int> clean = f.ids("in.ids"), corrupt = f.ids("in.corrupt_ids");
    int unchanged = 0;
    for (size_t p = 0; p < clean.size(); ++p)
        if (clean[p] == corrupt[p]) {
            EXPECT_NEAR(resid.normalized(0, p), 0.0f, 1e-6f) << "position " << p;
            ++unchanged;
        }
    EXPECT_GT(unchanged, 0);
    EXPECT_FALSE(resid.cancelled);
}

TEST_P(InterpGolden, DirectLogitAttributionMatchesTorchAndSumsToTheLogit) {
    const InterpFixture f = load(GetParam());
    const std::vector<int> ids = f.ids("in.ids");
    const LogitAttribution a = direct_logit_attribution(*f.g.model, ids, -1, f.scalar("in.target"));
    ASSERT_TRUE(a.error.empty()) << a.error;
    EXPECT_EQ(a.names, f.dla_names);
    const Tensor& want = f.at("out.dla_values");
    ASSERT_EQ(a.values.size(), size_t(want.numel()));
    EXPECT_TRUE(test::allclose(a.values.data(), want.data.data(), want.numel(), 1e-5f, 0.0f));
    EXPECT_NEAR(a.total, a.logit, 1e-4);
    EXPECT_NEAR(a.logit, f.at("out.dla_logit").data[0], 1e-5);

    const LogitAttribution d = direct_logit_attribution(*f.g.model, ids, f.scalar("in.dla_diff_position"),
                                                        f.scalar("in.answer"), f.scalar("in.wrong"));
    ASSERT_TRUE(d.error.empty()) << d.error;
    const Tensor& want_d = f.at("out.dla_diff_values");
    ASSERT_EQ(d.values.size(), size_t(want_d.numel()));
    EXPECT_TRUE(test::allclose(d.values.data(), want_d.data.data(), want_d.numel(), 1e-5f, 0.0f));
    EXPECT_NEAR(d.total, d.logit, 1e-4);
    EXPECT_NEAR(d.logit, f.at("out.dla_diff_logit").data[0], 1e-5);
}

TEST_P(InterpGolden, RolloutAndFlowMatchTorch) {
    const InterpFixture f = load(GetParam());
    ForwardOptions opt;
    opt.capture = CaptureFilter::all();
    const ForwardResult r = forward(*f.g.model, f.ids("in.ids"), opt);
    const std::vector<MatrixRM> attn = head_mean_attention(*r.trace, "dec", f.g.model->config().n_layers);
    const MatrixRM roll = attention_rollout(attn);
    EXPECT_ALLCLOSE(roll, f.mat("out.rollout"), 1e-6f, 0.0f);
    EXPECT_ALLCLOSE(MatrixRM(roll.rowwise().sum()), MatrixRM(MatrixRM::Ones(roll.rows(), 1)), 1e-6f, 0.0f);
    const AttentionFlow flow = attention_flow(attn);
    EXPECT_ALLCLOSE(flow.flow, f.mat("out.flow"), 1e-6f, 0.0f);
    EXPECT_ALLCLOSE(flow.normalized, f.mat("out.flow_normalized"), 1e-6f, 0.0f);
    // Causal: nothing flows from later tokens.
    for (int i = 0; i < flow.flow.rows(); ++i)
        for (int j = i + 1; j < flow.flow.cols(); ++j) EXPECT_EQ(flow.flow(i, j), 0.0f);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, InterpGolden,
                         ::testing::Values("interp_gpt2.safetensors", "interp_llama.safetensors"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                             std::string s = info.param;
                             return s.substr(7, s.find('.') - 7);  // "interp_gpt2.safetensors" -> "gpt2"
                         });

// Head detectors: every head's score for every kind, with and without the exclusions, and the detection patterns,
// on the model's ids said twice (so duplicate and induction patterns have ones).
class HeadDetectorGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(HeadDetectorGolden, ScoresMatchTorch) {
    std::map<std::string, std::string> meta;
    const WeightMap t = load_safetensors(test::golden_path(GetParam()), &meta);
    const test::GoldenModel g = test::load_golden_model(meta.at("model"));
    std::vector<int> ids;
    for (float v : t.at("in.ids").data) ids.push_back(int(v));
    ForwardOptions opt;
    opt.capture = CaptureFilter::prefixes({"dec."});
    const ForwardResult r = forward(*g.model, ids, opt);
    const std::pair<HeadKind, const char*> kinds[] = {{HeadKind::PreviousToken, "previous_token"},
                                                      {HeadKind::DuplicateToken, "duplicate_token"},
                                                      {HeadKind::Induction, "induction"},
                                                      {HeadKind::FirstToken, "first_token"}};
    for (const auto& [kind, name] : kinds) {
        SCOPED_TRACE(name);
        const MatrixRM p = detection_pattern(kind, ids);
        EXPECT_ALLCLOSE(p, t.at(std::string("out.pattern_") + name).mat(), 0.0f, 0.0f);
        EXPECT_GT(p.sum(), 0.0f);  // the repeated ids give every kind something to find
        const MatrixRM plain = detect_heads(*r.trace, "dec", g.model->config().n_layers, ids, kind);
        EXPECT_ALLCLOSE(plain, t.at(std::string("out.") + name).mat(), 1e-5f, 0.0f);
        const MatrixRM excluded = detect_heads(*r.trace, "dec", g.model->config().n_layers, ids, kind, {true, true});
        EXPECT_ALLCLOSE(excluded, t.at(std::string("out.") + name + "_excluded").mat(), 1e-5f, 0.0f);
        if (kind != HeadKind::FirstToken) EXPECT_GT((plain - excluded).cwiseAbs().maxCoeff(), 1e-4f);
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HeadDetectorGolden,
                         ::testing::Values("heads_gpt2.safetensors", "heads_llama.safetensors"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                             std::string s = info.param;
                             return s.substr(6, s.find('.') - 6);  // "heads_gpt2.safetensors" -> "gpt2"
                         });

}  // namespace
}  // namespace ts
