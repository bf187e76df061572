// Training panel figures and the lesson measures built on them (#35): the warm-up schedule of Vaswani et al. 2017
// (eq. 3), label-smoothed cross-entropy against PyTorch's (tests/golden/ops_losses.safetensors, made by
// tests/reference/make_op_fixtures.py), inverted dropout's expectation, weight decay's closed forms, and the
// Normalization panel's shifted row that shows BatchNorm's batch dependence.
#include "app/figures/figures.h"
#include "app/figures/views.h"
#include "app/lessons/lesson_check.h"
#include "core/kernels/ops.h"
#include "core/formats/safetensors.h"
#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

using namespace ts;
using namespace ts::figures;
using namespace ts::lessons;
using namespace ts::studio;

TEST(TrainingFigures, WarmupScheduleRisesLinearlyThenDecaysAsInverseSqrt) {
    const double d = 512, w = 4000;
    // The peak, at step = warmup: 512^-0.5 · 4000^-0.5 = 6.98771e-4 (the paper's base model).
    EXPECT_NEAR(noam_lr(w, d, w), 6.98771e-4, 1e-8);
    EXPECT_NEAR(noam_lr(w / 2, d, w), noam_lr(w, d, w) / 2, 1e-12);            // linear ramp
    EXPECT_NEAR(noam_lr(4 * w, d, w), noam_lr(w, d, w) / 2, 1e-12);            // step^-0.5 after the peak
    EXPECT_NEAR(noam_lr(1, d, 0), 1 / std::sqrt(d), 1e-12);                     // no warm-up: full size at step 1
    EXPECT_NEAR(noam_lr(1, d, 0) / noam_lr(1, d, w), std::pow(w, 1.5), 1e-3);   // what warm-up spares step 1
    EXPECT_THROW((void)noam_lr(0, d, w), std::invalid_argument);
    UiState st;
    const plot::Figure f = lr_schedule_figure(st);
    ASSERT_EQ(f.series.size(), 2u);
    EXPECT_TRUE(f.x.log && f.y.log);
    ASSERT_EQ(f.ref_lines.size(), 1u);
    EXPECT_DOUBLE_EQ(f.ref_lines[0].pos, 4000);
    st.train_warmup = 0;  // no warm-up: one curve, not two on top of each other
    EXPECT_EQ(lr_schedule_figure(st).series.size(), 1u);
    st.train_warmup = 4000;
    // The measure a lesson reads is the same schedule at the panel's knobs.
    EXPECT_NEAR(evaluate_named_measure("lr_schedule", {{"step", 4000}}, st, nullptr, nullptr), 6.98771e-4, 1e-8);
}

TEST(TrainingFigures, SmoothedCrossEntropyMatchesTorch) {
    WeightMap tensors;
    std::map<std::string, std::string> meta;
    tensors = load_safetensors(test::golden_path("ops_losses.safetensors"), &meta);
    const MatrixRM logits = tensors.at("logits").mat();
    const std::vector<float>& targets = tensors.at("targets").data;
    const double eps = std::stod(meta.at("label_smoothing"));
    double smooth = 0, plain = 0;
    int n = 0;
    for (Eigen::Index r = 0; r < logits.rows(); ++r) {
        if (targets[size_t(r)] < 0) continue;  // ignore_index
        const std::span<const float> row(logits.row(r).data(), size_t(logits.cols()));
        smooth += smoothed_cross_entropy(row, int(targets[size_t(r)]), eps);
        plain += smoothed_cross_entropy(row, int(targets[size_t(r)]), 0);
        ++n;
    }
    ASSERT_GE(n, 4);
    EXPECT_NEAR(smooth / n, tensors.at("ce.smooth").data[0], 1e-5);
    EXPECT_NEAR(plain / n, tensors.at("ce.plain").data[0], 1e-5);
    const float one[3] = {0, 0, 0};
    EXPECT_THROW((void)smoothed_cross_entropy(one, 3, 0.1), std::invalid_argument);
    EXPECT_THROW((void)smoothed_cross_entropy(one, 0, 1.5), std::invalid_argument);
}

TEST(TrainingFigures, LabelSmoothingLossIsSmallestBelowCertainty) {
    UiState st;
    st.train_label_smoothing = 0.1f;
    const std::vector<plot::Figure> f = label_smoothing_figures(st);
    ASSERT_EQ(f.size(), 2u);
    // The target: 1 − ε + ε/V for the correct token, ε/V for the others, summing to 1.
    const plot::Series& soft = f[0].series[1];
    double sum = 0;
    for (double y : soft.y) sum += y;
    EXPECT_NEAR(sum, 1.0, 1e-9);
    EXPECT_NEAR(soft.y[3], 0.91, 1e-6);
    // The smoothed loss has its minimum at p_y = 1 − ε + ε/V = 0.91, the plain one keeps falling to p_y → 1.
    const plot::Series& ls = f[1].series[1];
    size_t best = 0;
    for (size_t i = 1; i < ls.y.size(); ++i)
        if (ls.y[i] < ls.y[best]) best = i;
    EXPECT_NEAR(ls.x[best], 0.91, 0.005);
    const plot::Series& ce = f[1].series[0];
    EXPECT_LT(ce.y.back(), ce.y[ce.y.size() / 2]);
}

TEST(TrainingFigures, WeightDecayShrinksAnIgnoredWeightAndBoundsAPushedOne) {
    EXPECT_NEAR(weight_after_decay(1.0, 0.01, 0.1, 0.0, 1000), std::pow(0.999, 1000), 1e-12);
    EXPECT_NEAR(weight_after_decay(1.0, 0.01, 0.1, -0.5, 100000), 5.0, 1e-6);  // settles at −g/λ
    EXPECT_NEAR(weight_after_decay(1.0, 0.01, 0.0, -0.5, 1000), 6.0, 1e-9);     // no decay: grows without bound
    UiState st;
    st.train_grad = -0.5f;
    const plot::Figure f = weight_decay_figure(st);
    ASSERT_EQ(f.series.size(), 3u);
    EXPECT_NEAR(f.series[1].y.back(), std::pow(0.999, f.series[1].x.back()), 1e-9);
    EXPECT_NEAR(f.series[2].y.back(), 5.0, 0.05);
    // The smallest η and λ the state allows: the figure stays a bounded computation (1/(ηλ) would be 1e15 steps).
    st.train_lr = 1e-6f;
    st.train_weight_decay = 1e-9f;
    const plot::Figure tiny = weight_decay_figure(st);
    EXPECT_LE(tiny.series[1].x.back(), 100000);
    EXPECT_NE(tiny.note.find("0.36"), std::string::npos) << tiny.note;  // (1 − r)^(1/r) → 1/e
}

TEST(TrainingFigures, DropoutKeepsTheExpectedValue) {
    const std::vector<uint8_t> m = dropout_mask(200000, 0.1, 7);
    double kept = 0;
    for (uint8_t k : m) kept += k;
    EXPECT_NEAR(kept / double(m.size()), 0.9, 0.003);
    EXPECT_EQ(dropout_mask(100, 0.3, 5), dropout_mask(100, 0.3, 5));
    EXPECT_NE(dropout_mask(100, 0.3, 5), dropout_mask(100, 0.3, 6));

    const LoadedModel lm = load_model_folder(find_default_model_dir(""));
    UiState st;
    st.text = "The cat sat on the mat.";
    st.layer = 1;
    st.train_dropout = 0.3f;
    const auto snap = run_forward_now(st, lm);
    const std::vector<plot::Figure> f = dropout_figures(st, *snap);
    ASSERT_EQ(f.size(), 2u);
    // Left: every bar after dropout is 0 or x / (1 − p).
    const plot::Series& x = f[0].series[0];
    const plot::Series& y = f[0].series[1];
    ASSERT_EQ(x.y.size(), y.y.size());
    int dropped = 0;
    for (size_t k = 0; k < x.y.size(); ++k) {
        if (y.y[k] == 0 && x.y[k] != 0) ++dropped;
        else EXPECT_NEAR(y.y[k], x.y[k] / 0.7, 1e-4 * (1 + std::fabs(x.y[k])));
    }
    EXPECT_GT(dropped, 0);
    // Right: the mean over 1000 masks is close to x for every feature (standard error ~ |x| · √(p/(1−p)/1000)).
    const plot::Series& pts = f[1].series[1];
    for (size_t k = 0; k < pts.x.size(); ++k)
        EXPECT_NEAR(pts.y[k], pts.x[k], 0.15 * std::fabs(pts.x[k]) + 1e-3) << "feature " << k;
    // Through the view registry, as `render --view dropout` builds it.
    EXPECT_EQ(build_view("dropout", st, snap.get(), &lm).figures.size(), 2u);
}

TEST(NormalizationFigures, AShiftedRowMovesBatchNormOutputForTheOthersOnly) {
    UiState st;
    auto others = [&](const char* norm, const char* stat) {
        return evaluate_named_measure("norm_output", {{"norm", norm}, {"stat", stat}, {"rows", "others"}}, st, nullptr, nullptr);
    };
    const double ln0 = others("layernorm", "std"), bn0 = others("batchnorm", "std"), bn0_mean = others("batchnorm", "mean");
    st.norm_outlier = 20;
    EXPECT_NEAR(others("layernorm", "std"), ln0, 1e-6);  // LayerNorm: each row alone
    // BatchNorm: each feature's variance grows by about 20² · 63/64² ≈ 6.2, so the others' std falls to ≈ 2 / √10.2.
    EXPECT_NEAR(others("batchnorm", "std"), 2.0 / std::sqrt(4.0 + 400.0 * 63.0 / 4096.0), 0.03);
    EXPECT_LT(others("batchnorm", "mean"), bn0_mean - 0.05);
    EXPECT_NEAR(bn0, 1.0, 0.03);
    const std::vector<plot::Figure> f = normalization_synthetic_figures(st);
    EXPECT_NE(f[2].note.find("63"), std::string::npos) << f[2].note;
}

TEST(LessonMeasures, TargetLossIsLinearInTheSmoothing) {
    const LoadedModel lm = load_model_folder(find_default_model_dir(""));
    UiState st;
    st.text = "The cat sat on the mat.";
    const auto snap = run_forward_now(st, lm);
    auto loss = [&](double eps) {
        return evaluate_named_measure("target_loss", {{"eps", eps}}, st, snap.get(), lm.model.get());
    };
    const double l0 = loss(0), l1 = loss(1), l01 = loss(0.1);
    EXPECT_GT(l0, 0);
    EXPECT_GT(l1, l0);  // the uniform part: −log p averaged over the whole vocabulary is large
    EXPECT_NEAR(l01, 0.9 * l0 + 0.1 * l1, 1e-4 * l1);
    // The plain loss by hand from the logits: −log softmax of each next token.
    double by_hand = 0;
    const auto& ids = snap->tokens->ids;
    for (size_t t = 0; t + 1 < ids.size(); ++t) {
        const std::span<const float> row = snap->logits_row(int(t));
        double mx = -INFINITY, s = 0;
        for (float z : row) mx = std::max(mx, double(z));
        for (float z : row) s += std::exp(double(z) - mx);
        by_hand += mx + std::log(s) - row[size_t(ids[t + 1])];
    }
    EXPECT_NEAR(l0, by_hand / double(ids.size() - 1), 1e-4);
    EXPECT_EQ(evaluate_named_measure("token_count", {}, st, snap.get(), lm.model.get()), double(ids.size()));
}
