// The Causal panel's plumbing: ablated heads reach every forward the app runs, the analysis views show exactly
// what core/interp computes (itself checked against PyTorch in tests/core), and analyses run in the background.
#include "app/figures/figures.h"
#include "app/figures/views.h"
#include "app/session/interp_jobs.h"
#include "core/forward/decode.h"
#include "core/interp/ablation.h"
#include "core/interp/input_attribution.h"
#include "core/interp/logit_attribution.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <thread>

namespace ts::figures {
namespace {

UiState demo_state() {
    UiState st;
    st.text = "The cat sat on the mat.";
    return st;
}

TEST(Causal, AblatedHeadsReachTheAppForwardAndMatchCore) {
    const LoadedModel m = make_demo_model();
    UiState st = demo_state();
    const auto clean = run_forward_now(st, m);
    st.ablated_heads = {{1, 2}, {3, 0}};
    const auto ablated = run_forward_now(st, m);
    ASSERT_TRUE(ablated->error.empty()) << ablated->error;
    const ForwardResult ref = interp::run_with_ablated_heads(*m.model, ablated->tokens->ids, {{1, 2}, {3, 0}},
                                                             interp::AblationKind::Zero);
    ASSERT_EQ(ref.logits.rows(), ablated->logits.rows());
    EXPECT_LE((ref.logits - ablated->logits).cwiseAbs().maxCoeff(), 1e-6f);
    EXPECT_GT((clean->logits - ablated->logits).cwiseAbs().maxCoeff(), 1e-4f);  // the ablation did something
    // The trace records the edited head output: zeros for head 2 of layer 1.
    const Tensor* z = ablated->find("dec.1.attn.head_out");
    ASSERT_NE(z, nullptr);
    const int64_t per_head = z->dim(1) * z->dim(2);
    for (int64_t i = 0; i < per_head; ++i) ASSERT_EQ(z->data[size_t(2 * per_head + i)], 0.0f);
    // Heads the model does not have are ignored, not an error (a state from a bigger model).
    st.ablated_heads = {{40, 1}};
    EXPECT_TRUE(ablation_edits_for(st, m.model->config()).empty());
}

TEST(Causal, AblateOptionParsesLayerDotHead) {
    UiState st;
    apply_view_option(st, "attention", "ablate", "1.2, 3.0");
    ASSERT_EQ(st.ablated_heads.size(), 2u);
    EXPECT_EQ(st.ablated_heads[1], (std::array<int, 2>{3, 0}));
    EXPECT_THROW(apply_view_option(st, "attention", "ablate", "1.x"), std::invalid_argument);
    EXPECT_THROW(apply_view_option(st, "attention", "ablate-mode", "half"), std::invalid_argument);
    apply_view_option(st, "logit-attribution", "ablate-mode", "mean");
    EXPECT_EQ(st.ablate_mode, interp::AblationKind::Mean);
}

TEST(Causal, SweepViewShowsCoreNumbers) {
    const LoadedModel m = make_demo_model();
    UiState st = demo_state();
    st.interp_target = "a";
    const auto snap = run_forward_now(st, m);
    const ViewFigures vf = build_view("ablation-sweep", st, snap.get(), &m);
    ASSERT_EQ(vf.figures.size(), 1u);
    const plot::Heatmap& h = *vf.figures[0].heatmap;
    interp::AblationSweepOptions o;
    o.targets = {{-1, int('a')}};  // the demo model's codec: one token per byte
    const interp::AblationSweep ref = interp::head_ablation_sweep(*m.model, snap->tokens->ids, o);
    ASSERT_EQ(h.rows, ref.delta_log_prob.rows());
    ASSERT_EQ(h.cols, ref.delta_log_prob.cols());
    for (int l = 0; l < h.rows; ++l)
        for (int k = 0; k < h.cols; ++k) EXPECT_NEAR(h.at(l, k), ref.delta_log_prob(l, k), 1e-6f);
}

TEST(Causal, AttributionBarsSumToTheLogit) {
    const LoadedModel m = make_demo_model();
    UiState st = demo_state();
    st.interp_target = "e";
    st.interp_minus = "a";
    const auto snap = run_forward_now(st, m);
    const InterpResult r = run_interp(InterpResult::Kind::Attribution, st, m, -1);
    ASSERT_TRUE(r.error.empty()) << r.error;
    ASSERT_TRUE(r.attribution && r.attribution->error.empty());
    const auto figs = logit_attribution_figures(r, m.model->config().n_layers);
    const auto& y = figs[0].series[0].y;
    const double sum = std::accumulate(y.begin(), y.end(), 0.0);
    const auto& last = snap->logits.row(snap->logits.rows() - 1);
    EXPECT_NEAR(sum, double(last('e')) - double(last('a')), 1e-4);
    EXPECT_NEAR(sum, r.attribution->logit, 1e-4);
}

// Input attribution explains the prediction after the selected token (the query knob): scores for tokens 0..query,
// the default target the top prediction there, and the same numbers as attributing the prefix alone at its end.
TEST(Causal, InputAttributionExplainsThePredictionAfterTheQueryToken) {
    const LoadedModel m = make_demo_model();
    UiState st = demo_state();
    st.attr_method = "grad-x-input";
    st.query = 4;
    const InterpResult r = run_interp(InterpResult::Kind::Inputs, st, m, -1);
    ASSERT_TRUE(r.error.empty()) << r.error;
    ASSERT_TRUE(r.inputs);
    EXPECT_EQ(r.inputs->target.position, 4);
    ASSERT_EQ(r.inputs->scores.size(), 5u);
    UiState prefix = st;
    prefix.text = st.text.substr(0, 5);  // the demo model's tokens are bytes: "The c"
    prefix.query = -1;
    const auto snap = run_forward_now(prefix, m);
    const auto& row = snap->logits.row(snap->logits.rows() - 1);
    Eigen::Index top = 0;
    row.maxCoeff(&top);
    EXPECT_EQ(r.in.target, int(top));
    const InterpResult whole = run_interp(InterpResult::Kind::Inputs, prefix, m, -1);
    ASSERT_TRUE(whole.error.empty()) << whole.error;
    for (size_t i = 0; i < 5; ++i) EXPECT_NEAR(r.inputs->scores[i], whole.inputs->scores[i], 1e-5) << i;
    EXPECT_NE(input_attribution_figure(r).title.find("after token 4"), std::string::npos);
}

TEST(Causal, PatchingNeedsPromptsOfOneLength) {
    const LoadedModel m = make_demo_model();
    UiState st = demo_state();
    st.interp_corrupt = "The dog";
    const InterpResult r = run_interp(InterpResult::Kind::Patching, st, m, -1);
    EXPECT_NE(r.error.find("same token length"), std::string::npos) << r.error;
}

TEST(Causal, JobsRunInTheBackgroundAndReportProgress) {
    const LoadedModel m = make_demo_model();
    UiState st = demo_state();
    st.interp_corrupt = "The bat sat on the mat.";  // one byte (= one demo token) differs: position 4
    st.interp_answer = "a";
    st.interp_wrong = "e";
    InterpJobs jobs;
    bool done_called = false;
    ASSERT_TRUE(jobs.start(InterpResult::Kind::Patching, st, m, -1, [&] { done_called = true; }));
    EXPECT_FALSE(jobs.start(InterpResult::Kind::Sweep, st, m, -1));  // one at a time
    for (int i = 0; i < 600 && !jobs.poll(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_TRUE(done_called);
    const auto r = jobs.latest(InterpResult::Kind::Patching);
    ASSERT_NE(r, nullptr);
    ASSERT_TRUE(r->error.empty()) << r->error;
    ASSERT_TRUE(r->patch_resid && r->patch_heads);
    EXPECT_EQ(r->patch_resid->normalized.rows(), m.model->config().n_layers);
    EXPECT_EQ(r->patch_resid->normalized.cols(), 23);
    // Patching layer 0's input at the one corrupted position restores the clean run; elsewhere nothing changes.
    EXPECT_NEAR(r->patch_resid->normalized(0, 4), 1.0f, 1e-4f);
    EXPECT_NEAR(r->patch_resid->normalized(0, 10), 0.0f, 1e-4f);
    EXPECT_FALSE(jobs.busy());
}

}  // namespace
}  // namespace ts::figures

namespace ts::figures {
namespace {

// Integrated gradients on the bundled translation model (issue #32's completeness target). Along the straight path
// from the mean embedding, log p of the generated tokens is rough: it changes by nats within thousandths of the
// path, here and there (the model's sharp heads; torch in float64 agrees, docs/models.md). The midpoint rule leaves
// a fifth of f's change unexplained at 50 points and still over a tenth at 800; the adaptive rule, which halves
// where the scores miss f's change, closes the gap to 1 % within 400 points and is several times closer at 50.
TEST(Causal, AdaptiveIntegratedGradientsCloseTheGapOnTheTranslationModel) {
    std::string dir;
    for (const auto& d : studio::list_bundled_model_dirs(""))
        if (std::filesystem::path(d).filename() == "zh-en-transformer") dir = d;
    ASSERT_FALSE(dir.empty()) << "the bundled translation model is missing";
    const studio::LoadedModel lm = studio::load_model_folder(dir);
    const Model& m = *lm.model;
    // "<2zh>Delete all selected items<|endoftext|>" → 删除所有 选中的 项目 <|endoftext|>, as lesson 01 step 5.
    const std::vector<int> src = {8191, 1690, 692, 637, 2162, 8188}, dec_in = {8188, 7659, 1420, 1170},
                           out = {7659, 1420, 1170, 8188};
    interp::GradientModel grad(m);
    interp::AttributionOptions o;
    o.method = interp::AttributionMethod::IntegratedGradients;
    o.baseline = interp::AttributionBaseline::MeanEmbedding;
    o.batch = 32;
    const auto run = [&](interp::IgRule rule, int steps) {
        o.rule = rule;
        o.steps = steps;
        return interp::attribute_translation(m, &grad, src, dec_in, out, o);
    };
    const auto ada50 = run(interp::IgRule::Adaptive, 50);
    float worst_ada50 = 0;
    for (size_t t = 0; t < out.size(); ++t) {
        const float change = std::abs(ada50.value[t] - ada50.baseline_value[t]);
        ASSERT_GT(change, 1.0f);
        worst_ada50 = std::max(worst_ada50, std::abs(ada50.completeness_gap[t]) / change);
    }
    EXPECT_LT(worst_ada50, 0.05f);
#if defined(__SANITIZE_ADDRESS__)
    // Under the sanitizers (about 35× slower here) the 50 adaptive points check the rule's bookkeeping; the
    // comparison with the midpoint rule and the 400-point run are the release build's.
    GTEST_SKIP() << "the 400-point comparison runs in the release build";
#endif
    const auto mid50 = run(interp::IgRule::Midpoint, 50), ada400 = run(interp::IgRule::Adaptive, 400);
    float worst_mid50 = 0;
    for (size_t t = 0; t < out.size(); ++t) {
        const float change = std::abs(ada400.value[t] - ada400.baseline_value[t]);
        worst_mid50 = std::max(worst_mid50, std::abs(mid50.completeness_gap[t]) / change);
        EXPECT_LE(std::abs(ada400.completeness_gap[t]), 0.01f * change) << "row " << t;
    }
    EXPECT_GT(worst_mid50, 0.15f);
    EXPECT_LT(worst_ada50, worst_mid50 / 2);
}

}  // namespace
}  // namespace ts::figures

namespace ts::figures {
namespace {

// The adaptive rule over eight everyday sentences of both directions (every generated token's row, the end token
// included): at 50 points the gaps are a fraction of the midpoint rule's; at 200 every row is within 2.5 %.
// Measured when written (this machine): mean relative gap 0.014 adaptive vs 0.199 midpoint at 50 points, worst row
// 0.082 vs 1.62; at 200 points worst 0.017.
TEST(Causal, AdaptiveIntegratedGradientsOnEverydaySentences) {
    std::string dir;
    for (const auto& d : studio::list_bundled_model_dirs(""))
        if (std::filesystem::path(d).filename() == "zh-en-transformer") dir = d;
    ASSERT_FALSE(dir.empty()) << "the bundled translation model is missing";
    const studio::LoadedModel lm = studio::load_model_folder(dir);
    ASSERT_TRUE(lm.codec && lm.translation);
    const Model& m = *lm.model;
    interp::GradientModel grad(m);
    std::vector<std::pair<std::string, std::string>> texts = {{"Delete all selected items", "zh"},
                                                              {"The weather is nice today.", "zh"},
                                                              {"I like reading books.", "zh"},
                                                              {"Open the file and save it.", "zh"},
                                                              {"我们明天去学校。", "en"},
                                                              {"这是一个简单的例子。", "en"},
                                                              {"Click the button to continue.", "zh"},
                                                              {"他喜欢喝茶。", "en"}};
#if defined(__SANITIZE_ADDRESS__)
    texts.resize(2);  // about 35x slower here: two sentences check the rule's bookkeeping (eight took 122 s)
#endif
    struct Gaps {
        double worst = 0, mean = 0;
    };
    const auto gaps = [&](interp::IgRule rule, int steps) {
        Gaps g;
        int rows = 0;
        for (const auto& [text, to] : texts) {
            std::vector<int> ids;
            std::vector<std::pair<size_t, size_t>> spans;
            lm.codec->encode(text, ids, spans, false);
            const std::vector<int> src = make_source_ids(*lm.translation, ids, to);
            DecodeOptions dopt;
            dopt.max_len = 24;
            const DecodeResult dr = translate_ids(m, *lm.translation, src, dopt);
            std::vector<int> dec_in = {lm.translation->decoder_start_id}, out = dr.ids;
            dec_in.insert(dec_in.end(), dr.ids.begin(), dr.ids.end());
            out.push_back(lm.translation->target_end_id);
            interp::AttributionOptions o;
            o.method = interp::AttributionMethod::IntegratedGradients;
            o.baseline = interp::AttributionBaseline::MeanEmbedding;
            o.batch = 32;
            o.steps = steps;
            o.rule = rule;
            const auto a = interp::attribute_translation(m, &grad, src, dec_in, out, o);
            for (size_t t = 0; t < out.size(); ++t) {
                const double change = std::abs(double(a.value[t]) - double(a.baseline_value[t]));
                EXPECT_GT(change, 0.1) << text << " row " << t;
                const double rel = std::abs(double(a.completeness_gap[t])) / change;
                g.worst = std::max(g.worst, rel);
                g.mean += rel;
                ++rows;
            }
        }
        g.mean /= rows;
        return g;
    };
    const Gaps ada50 = gaps(interp::IgRule::Adaptive, 50);
    EXPECT_LT(ada50.mean, 0.025);
    EXPECT_LT(ada50.worst, 0.15);
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "the midpoint comparison and the 200-point run are the release build's";
#endif
    const Gaps mid50 = gaps(interp::IgRule::Midpoint, 50), ada200 = gaps(interp::IgRule::Adaptive, 200);
    EXPECT_GT(mid50.mean, 4 * ada50.mean);
    EXPECT_GT(mid50.worst, 4 * ada50.worst);
    EXPECT_LT(ada200.worst, 0.025);
}

}  // namespace
}  // namespace ts::figures
