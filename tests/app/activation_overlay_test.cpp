// The Activations panel's overlay: the real FFN pre-activation histogram drawn behind the curves is the first
// series, spans the curve plot's x range, is scaled into the curves' y range with the tallest bar at 90% of it, and
// keeps the true densities in its hover labels; without a recorded layer the figure is unchanged.
#include "app/figures/figures.h"
#include "app/figures/views.h"
#include "app/session/worker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace {

using namespace ts;
using namespace ts::figures;
using namespace ts::studio;

TEST(ActivationOverlay, HistogramBehindTheCurvesScaledToTheirRange) {
    const LoadedModel lm = make_demo_model();
    UiState st;
    st.text = "The cat sat on the mat.";
    const auto snap = run_forward_now(st, lm);
    ASSERT_TRUE(snap->error.empty()) << snap->error;
    const plot::Figure plain = activation_curves(st, false);
    plot::Figure f = plain;
    ASSERT_TRUE(overlay_ffn_pre_activations(f, *snap, 1));
    ASSERT_EQ(f.series.size(), plain.series.size() + 1);
    const plot::Series& h = f.series.front();
    EXPECT_EQ(h.kind, plot::SeriesKind::Bars);
    EXPECT_EQ(h.name, "real pre-activations (layer 1, density scaled)");
    double ylo = INFINITY, yhi = -INFINITY;
    for (const auto& c : plain.series)
        for (double y : c.y) { ylo = std::min(ylo, y); yhi = std::max(yhi, y); }
    EXPECT_DOUBLE_EQ(h.bar_base, ylo);
    const double top = *std::max_element(h.y.begin(), h.y.end());
    EXPECT_NEAR(top, ylo + 0.9 * (yhi - ylo), 1e-9);
    EXPECT_GE(h.x.front(), -st.act_range);
    EXPECT_LE(h.x.back(), st.act_range);
    // Bar heights are the density histogram of the trace's pre-activations, scaled by one factor.
    const Tensor* pre = snap->find("dec.1.ffn.pre_act");
    ASSERT_NE(pre, nullptr);
    const plot::Series ref = plot::histogram_series(pre->data, 60, -st.act_range, st.act_range, true);
    ASSERT_EQ(ref.y.size(), h.y.size());
    const double dmax = *std::max_element(ref.y.begin(), ref.y.end());
    ASSERT_GT(dmax, 0.0);
    for (size_t i = 0; i < h.y.size(); ++i)
        EXPECT_NEAR(h.y[i], ylo + ref.y[i] / dmax * 0.9 * (yhi - ylo), 1e-9) << "bin " << i;
    ASSERT_EQ(h.point_labels.size(), h.y.size());
    EXPECT_NE(h.point_labels[0].find("density"), std::string::npos);
    EXPECT_NE(f.note.find("layer 1"), std::string::npos);

    plot::Figure g = plain;
    EXPECT_FALSE(overlay_ffn_pre_activations(g, *snap, 99));
    EXPECT_EQ(g.series.size(), plain.series.size());
}

}  // namespace
