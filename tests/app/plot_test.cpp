// Plotting layer without GL: nice ticks, tick labels, colormaps, histograms, heatmap ranges, layout and the
// CSV / SVG writers.
#include "app/plot/colormap.h"
#include "app/plot/figure.h"
#include "app/plot/ticks.h"
#include "app/plot/writers.h"

#include <gtest/gtest.h>

#include <random>

#include <cmath>
#include <numeric>

using namespace ts::plot;

TEST(Ticks, NiceStepIsOneTwoOrFiveTimesPowerOfTen) {
    EXPECT_DOUBLE_EQ(nice_step(10.0, 5), 2.0);
    EXPECT_DOUBLE_EQ(nice_step(1.0, 4), 0.2);
    EXPECT_DOUBLE_EQ(nice_step(100.0, 2), 50.0);
    EXPECT_DOUBLE_EQ(nice_step(7.0, 7), 1.0);
}

TEST(Ticks, NiceTicksCoverRangeAtRoundValues) {
    const auto t = nice_ticks(-0.37, 1.62, 6);
    ASSERT_GE(t.size(), 3u);
    EXPECT_LE(t.size(), 6u);
    for (double v : t) {
        EXPECT_GE(v, -0.37 - 1e-12);
        EXPECT_LE(v, 1.62 + 1e-12);
    }
    const double step = t[1] - t[0];
    for (size_t i = 1; i < t.size(); ++i) EXPECT_NEAR(t[i] - t[i - 1], step, 1e-12);
    // 0 is exactly zero, not -1e-17.
    bool has_zero = false;
    for (double v : t) has_zero |= (v == 0.0);
    EXPECT_TRUE(has_zero);
}

TEST(Ticks, DegenerateAndNonFiniteRanges) {
    EXPECT_EQ(nice_ticks(3.0, 3.0).size(), 1u);
    EXPECT_TRUE(nice_ticks(NAN, 1.0).empty());
    EXPECT_TRUE(nice_ticks(0.0, INFINITY).empty());
    const auto r = nice_ticks(5.0, 1.0, 5);  // reversed input is accepted
    ASSERT_FALSE(r.empty());
    EXPECT_GE(r.front(), 1.0);
    EXPECT_LE(r.back(), 5.0);
}

TEST(Ticks, LogTicksArePowersOfTen) {
    const auto t = log_ticks(0.05, 10.0);
    ASSERT_FALSE(t.empty());
    EXPECT_NEAR(t.front(), 0.05, 1e-12);
    EXPECT_NEAR(t.back(), 10.0, 1e-12);
    EXPECT_TRUE(log_ticks(0.0, 10.0).empty());
    const auto wide = log_ticks(1e-3, 1e3);
    EXPECT_EQ(wide.size(), 7u);  // decades only when the range is wide
    // Twelve decades (a gradient that dies): every second one, so the labels do not overlap.
    const auto dying = log_ticks(1e-11, 1.0);
    const std::vector<double> want = {1e-10, 1e-8, 1e-6, 1e-4, 1e-2, 1.0};
    ASSERT_EQ(dying.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(dying[i] / want[i], 1.0, 1e-12) << i;
}

TEST(Ticks, FormatUsesStepPrecision) {
    EXPECT_EQ(format_tick(0.2, 0.2), "0.2");
    EXPECT_EQ(format_tick(0.30000000000000004, 0.1), "0.3");
    EXPECT_EQ(format_tick(15, 5), "15");
    EXPECT_EQ(format_tick(0.0, 0.5), "0");
    EXPECT_EQ(format_tick(-1.25, 0.25), "-1.25");
    EXPECT_EQ(format_value(-INFINITY), "-inf");
    EXPECT_EQ(heatmap_cell_label(-INFINITY), "-inf");  // a masked cell
    EXPECT_EQ(heatmap_cell_label(NAN), "NaN");         // not "masked": a NaN weight upstream
    EXPECT_EQ(heatmap_cell_label(0.125f), "0.12");
    EXPECT_EQ(format_value(NAN), "NaN");
    EXPECT_EQ(format_value(0.123456), "0.1235");
}

TEST(Colormap, EndpointsMatchReferenceColors) {
    const Rgba v0 = colormap_sample(Colormap::Viridis, 0.0f), v1 = colormap_sample(Colormap::Viridis, 1.0f);
    EXPECT_NEAR(v0.r, 68 / 255.0f, 1e-6);
    EXPECT_NEAR(v0.b, 84 / 255.0f, 1e-6);
    EXPECT_NEAR(v1.r, 253 / 255.0f, 1e-6);
    EXPECT_NEAR(v1.g, 231 / 255.0f, 1e-6);
    // The diverging map is near white at its centre and blue / red at the ends.
    const Rgba mid = colormap_sample(Colormap::Diverging, 0.5f);
    EXPECT_GT(mid.r, 0.9f);
    EXPECT_GT(mid.g, 0.9f);
    EXPECT_GT(mid.b, 0.9f);
    EXPECT_GT(colormap_sample(Colormap::Diverging, 0.0f).b, colormap_sample(Colormap::Diverging, 0.0f).r);
    EXPECT_GT(colormap_sample(Colormap::Diverging, 1.0f).r, colormap_sample(Colormap::Diverging, 1.0f).b);
    EXPECT_EQ(colormap_sample(Colormap::Magma, NAN), masked_color());
    EXPECT_EQ(colormap_sample(Colormap::Magma, 7.0f), colormap_sample(Colormap::Magma, 1.0f));  // clamped
}

TEST(Colormap, ViridisLuminanceIncreases) {
    float prev = -1;
    for (int i = 0; i <= 20; ++i) {
        const Rgba c = colormap_sample(Colormap::Viridis, i / 20.0f);
        const float lum = 0.2126f * c.r + 0.7152f * c.g + 0.0722f * c.b;
        EXPECT_GT(lum, prev) << "at t=" << i / 20.0;
        prev = lum;
    }
}

TEST(Colormap, LutAndNames) {
    const auto lut = colormap_lut(Colormap::Magma, 256);
    ASSERT_EQ(lut.size(), 1024u);
    EXPECT_EQ(lut[3], 255);
    EXPECT_EQ(colormap_from_string("diverging"), Colormap::Diverging);
    EXPECT_THROW((void)colormap_from_string("jet"), std::invalid_argument);
    EXPECT_THROW((void)colormap_lut(Colormap::Gray, 1), std::invalid_argument);
    EXPECT_TRUE(std::isnan(normalize_value(-INFINITY, 0, 1)));
    EXPECT_FLOAT_EQ(normalize_value(0.5f, 0, 2), 0.25f);
}

TEST(Figure, HistogramCountsAndDensity) {
    const std::vector<float> v = {0.0f, 0.1f, 0.2f, 0.9f, 1.0f, NAN, INFINITY};
    const Series s = histogram_series(v, 2, 0.0, 1.0);
    ASSERT_EQ(s.y.size(), 2u);
    EXPECT_DOUBLE_EQ(s.y[0], 3.0);
    EXPECT_DOUBLE_EQ(s.y[1], 2.0);  // the right edge belongs to the last bin; non-finite values are skipped
    EXPECT_DOUBLE_EQ(s.bar_width, 0.5);
    const Series d = histogram_series(v, 4, 0.0, 1.0, true);
    double integral = 0;
    for (double y : d.y) integral += y * d.bar_width;
    EXPECT_NEAR(integral, 1.0, 1e-12);
    EXPECT_THROW((void)histogram_series(v, 0), std::invalid_argument);
    const Series empty = histogram_series({}, 3);  // no data: still 3 empty bins
    EXPECT_EQ(empty.y.size(), 3u);
}

TEST(Figure, HeatmapRangeIsSymmetricForDiverging) {
    const std::vector<float> v = {-1.0f, 3.0f, -INFINITY, 0.5f};
    const Heatmap h = make_heatmap(2, 2, v, Colormap::Diverging, "score");
    EXPECT_FLOAT_EQ(h.vmin, -3.0f);
    EXPECT_FLOAT_EQ(h.vmax, 3.0f);
    const Heatmap p = make_heatmap(2, 2, v, Colormap::Viridis, "score");
    EXPECT_FLOAT_EQ(p.vmin, -1.0f);
    EXPECT_FLOAT_EQ(p.vmax, 3.0f);
    EXPECT_THROW((void)make_heatmap(3, 2, v, Colormap::Viridis, "x"), std::invalid_argument);
    const std::vector<float> masked(4, -INFINITY);
    const Heatmap m = make_heatmap(2, 2, masked, Colormap::Viridis, "x");
    EXPECT_LT(m.vmin, m.vmax);  // all masked: a valid default range
    // A constant field against zero: one attention weight of 1 is 0 .. 1 (it was 0.5 .. 1.5).
    const std::vector<float> one{1.0f}, neg{-2.0f, -2.0f}, zero{0.0f};
    EXPECT_EQ(make_heatmap(1, 1, one, Colormap::Viridis, "w").vmin, 0.0f);
    EXPECT_EQ(make_heatmap(1, 1, one, Colormap::Viridis, "w").vmax, 1.0f);
    EXPECT_EQ(make_heatmap(1, 2, neg, Colormap::Viridis, "w").vmin, -2.0f);
    EXPECT_EQ(make_heatmap(1, 2, neg, Colormap::Viridis, "w").vmax, 0.0f);
    EXPECT_LT(make_heatmap(1, 1, zero, Colormap::Viridis, "w").vmin, 0.0f);
    EXPECT_GT(make_heatmap(1, 1, zero, Colormap::Viridis, "w").vmax, 0.0f);
}

// The range is taken eight cells at a time plus a tail: any length, the extremes anywhere, NaN and ±inf ignored.
TEST(Figure, HeatmapRangeOfAnyLengthIgnoresNonFiniteCells) {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    for (int n : {1, 7, 8, 9, 16, 23, 64, 1000})
        for (int trial = 0; trial < 20; ++trial) {
            std::vector<float> v(static_cast<size_t>(n));
            for (float& x : v) x = u(rng);
            const float weird[] = {NAN, INFINITY, -INFINITY};
            for (int k = 0; k < n / 4; ++k) v[rng() % size_t(n)] = weird[rng() % 3];
            float lo = INFINITY, hi = -INFINITY;
            for (float x : v)
                if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
            const Heatmap h = make_heatmap(1, n, v, Colormap::Viridis, "v");
            if (!std::isfinite(lo)) {
                EXPECT_EQ(h.vmin, 0.0f);
                EXPECT_EQ(h.vmax, 1.0f);
            } else if (hi > lo) {
                EXPECT_EQ(h.vmin, lo) << n;
                EXPECT_EQ(h.vmax, hi) << n;
            }
        }
}

TEST(Figure, BoundsAndTransform) {
    Figure f;
    Series s;
    s.x = {0, 1, 2};
    s.y = {-1, 0, 4};
    f.series.push_back(s);
    const Bounds b = figure_bounds(f);
    EXPECT_LT(b.xmin, 0.0);
    EXPECT_GT(b.xmax, 2.0);
    EXPECT_LT(b.ymin, -1.0);
    EXPECT_GT(b.ymax, 4.0);
    f.y.min = -2;
    f.y.max = 6;
    const Transform t = make_transform(f, Rect{10, 20, 110, 220});
    EXPECT_FLOAT_EQ(t.py(-2), 220.0f);
    EXPECT_FLOAT_EQ(t.py(6), 20.0f);
    EXPECT_NEAR(t.data_y(t.py(1.5)), 1.5, 1e-5);
    EXPECT_NEAR(t.data_x(t.px(1.25)), 1.25, 1e-5);
    // Heatmaps: row 0 at the top, whole cells.
    Figure h;
    h.heatmap = make_heatmap(2, 3, std::vector<float>(6, 0.0f), Colormap::Viridis, "v");
    const Transform th = make_transform(h, Rect{0, 0, 300, 200});
    EXPECT_FLOAT_EQ(th.py(0), 0.0f);
    EXPECT_FLOAT_EQ(th.py(2), 200.0f);
    EXPECT_FLOAT_EQ(th.px(3), 300.0f);
}

TEST(Figure, LayoutLeavesRoomForLabelsAndColorbar) {
    Figure f;
    f.title = "Attention";
    f.x.label = "key token";
    f.y.label = "query token";
    f.heatmap = make_heatmap(4, 4, std::vector<float>(16, 0.25f), Colormap::Viridis, "attention weight");
    f.x.categories = {"a", "bb", "ccc", "dddd"};
    f.y.categories = f.x.categories;
    auto measure = [](const std::string& s) { return 7.0f * float(s.size()); };
    const FigureLayout L = layout_figure(f, 600, 400, measure, 16);
    EXPECT_GT(L.plot.x0, 7.0f * 4);            // y categories fit left of the plot
    EXPECT_GT(L.plot.y0, L.title.y1 - 1e-3f);  // below the title
    EXPECT_GT(L.colorbar.w(), 0.0f);
    EXPECT_GT(L.colorbar.x0, L.plot.x1);
    EXPECT_LT(L.colorbar.x1, 600.0f);
    EXPECT_LT(L.plot.y1, 400.0f - 16.0f);     // x title below
    // Many long categories in a narrow plot: rotated and thinned out.
    Figure g = f;
    g.heatmap = make_heatmap(1, 100, std::vector<float>(100, 0.0f), Colormap::Viridis, "v");
    g.x.categories.assign(100, "longlabel");
    const FigureLayout G = layout_figure(g, 400, 300, measure, 16);
    EXPECT_TRUE(G.rotate_x_categories);
    EXPECT_GT(G.category_stride_x, 1);
}

TEST(Writers, CsvHoldsHeatmapWithLabelsAndSeries) {
    Figure f;
    f.heatmap = make_heatmap(2, 2, std::vector<float>{1.0f, -INFINITY, 0.25f, 0.75f}, Colormap::Viridis, "w");
    f.heatmap->row_name = "query";
    f.heatmap->col_name = "key";
    f.x.categories = {"a,b", "c"};
    f.y.categories = {"x", "y\"q"};
    Series s;
    s.name = "line";
    s.x = {0, 1};
    s.y = {2, 3};
    f.series.push_back(s);
    const std::string csv = figure_to_csv(f);
    EXPECT_NE(csv.find("query\\key,\"a,b\",c\n"), std::string::npos) << csv;
    EXPECT_NE(csv.find("x,1,-inf\n"), std::string::npos) << csv;
    EXPECT_NE(csv.find("\"y\"\"q\",0.25,0.75\n"), std::string::npos) << csv;
    // Series: one tidy table with a header row; the category name of each x is its own column.
    EXPECT_NE(csv.find("series,x,x name,y\nline,0,\"a,b\",2\nline,1,c,3\n"), std::string::npos) << csv;
}

TEST(Writers, SvgIsStandaloneAndEscaped) {
    Figure f;
    f.title = "softmax <T>";
    f.formula = "p = exp(z/T) / sum exp(z/T)";
    f.x.label = "logit";
    f.y.label = "probability";
    Series s;
    s.x = {0, 1, 2};
    s.y = {0.1, 0.2, 0.7};
    f.series.push_back(s);
    f.heatmap = make_heatmap(1, 2, std::vector<float>{0.0f, 1.0f}, Colormap::Magma, "v");
    const std::string svg = figure_to_svg(f, 400, 300);
    EXPECT_NE(svg.find("<svg"), std::string::npos);
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
    EXPECT_NE(svg.find("softmax &lt;T&gt;"), std::string::npos);
    EXPECT_EQ(svg.find("softmax <T>"), std::string::npos);
    EXPECT_NE(svg.find("<desc>p = exp"), std::string::npos);
    EXPECT_NE(svg.find("<path fill=\"none\""), std::string::npos);  // the line series as a path
}

TEST(Figure, LegendBoxSitsInTheRequestedCorner) {
    const Rect plot{100, 50, 500, 350};
    const Rect ne = legend_box(LegendLocation::NorthEast, plot, 80, 40, 4);
    EXPECT_FLOAT_EQ(ne.x1, 496);
    EXPECT_FLOAT_EQ(ne.y0, 54);
    EXPECT_FLOAT_EQ(ne.w(), 80);
    EXPECT_FLOAT_EQ(ne.h(), 40);
    const Rect sw = legend_box(LegendLocation::SouthWest, plot, 80, 40, 4);
    EXPECT_FLOAT_EQ(sw.x0, 104);
    EXPECT_FLOAT_EQ(sw.y1, 346);
    const Rect nw = legend_box(LegendLocation::NorthWest, plot, 80, 40, 4);
    EXPECT_FLOAT_EQ(nw.x0, 104);
    EXPECT_FLOAT_EQ(nw.y0, 54);
    const Rect se = legend_box(LegendLocation::SouthEast, plot, 80, 40, 4);
    EXPECT_FLOAT_EQ(se.x1, 496);
    EXPECT_FLOAT_EQ(se.y1, 346);
}

TEST(Writers, SvgLegendFollowsLegendLocation) {
    Figure f;
    Series s;
    s.name = "train loss";
    s.x = {0, 1};
    s.y = {0, 1};
    f.series.push_back(s);
    auto legend_rect_y = [](const std::string& svg) {
        // The legend's background is the only rounded rect in this figure.
        const auto at = svg.find("rx=\"");
        EXPECT_NE(at, std::string::npos) << svg;
        const auto rect = svg.rfind("<rect", at);
        const auto y = svg.find(" y=\"", rect);
        return std::stod(svg.substr(y + 4));
    };
    const double north = legend_rect_y(figure_to_svg(f, 400, 300));
    f.legend_location = LegendLocation::SouthWest;
    const double south = legend_rect_y(figure_to_svg(f, 400, 300));
    EXPECT_GT(south, north + 100);
}

// Activation-curve shapes: ReLU and the identity rise to the top right; the top left stays empty.
Figure rising_curves() {
    Figure f;
    Series relu, id;
    relu.name = "ReLU";
    id.name = "identity";
    for (int i = 0; i <= 80; ++i) {
        const double x = -4 + 0.1 * i;
        relu.x.push_back(x);
        relu.y.push_back(std::max(0.0, x));
        id.x.push_back(x);
        id.y.push_back(x);
    }
    f.series = {relu, id};
    return f;
}

// The step view's "5. · V" is ~20 pixels wide: its x ticks 0 and 50 were drawn into one another as "050". Ticks
// whose labels would touch are dropped (from the right); a wide plot keeps its ticks.
TEST(Figure, NarrowPlotsKeepOnlyTicksWhoseLabelsFit) {
    Figure f;
    Series s;
    s.x = {0, 64};
    s.y = {0, 1};
    f.series = {s};
    f.x.min = 0;
    f.x.max = 64;
    const float line_h = 16;
    const AxisTicks narrow = axis_ticks(f, make_transform(f, Rect{0, 0, 20, 100}), line_h, true);
    ASSERT_EQ(narrow.values.size(), 1u);
    EXPECT_EQ(narrow.values[0], 0.0);
    const Transform wide_t = make_transform(f, Rect{0, 0, 400, 100});
    const AxisTicks wide = axis_ticks(f, wide_t, line_h, true);
    ASSERT_GE(wide.values.size(), 4u);
    for (size_t i = 1; i < wide.values.size(); ++i)  // neighbours at least one estimated label apart
        EXPECT_GT(wide_t.px(wide.values[i]) - wide_t.px(wide.values[i - 1]), 2 * line_h);
}

TEST(Figure, BestLegendCornerCoversNoCurve) {
    Figure f = rising_curves();
    const Transform t = make_transform(f, Rect{0, 0, 400, 300});
    EXPECT_EQ(best_legend_location(f, t, 90, 40, 4), LegendLocation::NorthWest);
    EXPECT_GT(legend_overlap(f, t, legend_box(LegendLocation::NorthEast, t.plot, 90, 40, 4)), 10.0);
    EXPECT_EQ(legend_overlap(f, t, legend_box(LegendLocation::NorthWest, t.plot, 90, 40, 4)), 0.0);
    // A line along the top covers both north corners: the legend moves to the empty lower right.
    Series top;
    top.x = {-4, 4};
    top.y = {4, 4};
    f.series.push_back(top);
    const Transform t2 = make_transform(f, Rect{0, 0, 400, 300});
    EXPECT_EQ(best_legend_location(f, t2, 90, 40, 4), LegendLocation::SouthEast);
    // A location chosen by the figure is kept.
    f.legend_location = LegendLocation::SouthWest;
    EXPECT_EQ(best_legend_location(f, t2, 90, 40, 4), LegendLocation::SouthWest);
}

TEST(Writers, SvgPutsTheLegendWhereItCoversNoData) {
    const std::string svg = figure_to_svg(rising_curves(), 400, 300);
    const auto at = svg.find("rx=\"");
    ASSERT_NE(at, std::string::npos);
    const auto rect = svg.rfind("<rect", at);
    const double x = std::stod(svg.substr(svg.find(" x=\"", rect) + 4));
    EXPECT_LT(x, 200.0);  // the left half: the top right holds the curves
}

TEST(Figure, LegendGoesUnderTheAxisWhenEveryCornerHoldsData) {
    Figure f;
    f.x.label = "x";
    for (int k = 0; k < 5; ++k) {  // horizontal lines from bottom to top: no empty corner anywhere
        Series s;
        s.name = "line " + std::to_string(k);
        s.x = {0, 1};
        s.y = {double(k), double(k)};
        f.series.push_back(s);
    }
    auto width = [](const std::string& s) { return 7.0f * float(s.size()); };
    const FigureLayout L = layout_figure(f, 400, 300, width, 16);
    ASSERT_GT(L.legend_below.w(), 0.0f);
    EXPECT_GE(L.legend_below.y0, L.x_label.y1);   // under the x-axis title
    EXPECT_LE(L.legend_below.y1, 300.0f);
    const auto entries = legend_flow(f, L.legend_below, width, 16);
    ASSERT_EQ(entries.size(), 5u);
    for (const auto& e : entries) EXPECT_FALSE(L.plot.contains(e.x, e.y));
    // The figure with an empty corner keeps its legend inside.
    EXPECT_EQ(layout_figure(rising_curves(), 400, 300, width, 16).legend_below.w(), 0.0f);
    // SVG: no legend box inside the plot, the names under it.
    const std::string svg = figure_to_svg(f, 400, 300);
    EXPECT_EQ(svg.find("rx=\""), std::string::npos);
    EXPECT_NE(svg.find(">line 4<"), std::string::npos);
}

TEST(Figure, SquareCellsShrinkThePlotToTheHeatmapAspect) {
    Figure f;
    f.heatmap = make_heatmap(4, 8, std::vector<float>(32, 0.5f), Colormap::Viridis, "w");
    auto width = [](const std::string& s) { return 7.0f * float(s.size()); };
    const FigureLayout loose = layout_figure(f, 400, 400, width, 16);
    f.square_cells = true;
    const FigureLayout sq = layout_figure(f, 400, 400, width, 16);
    EXPECT_NEAR(sq.plot.w() / 8.0f, sq.plot.h() / 4.0f, 1e-3f);
    EXPECT_FLOAT_EQ(sq.plot.w(), loose.plot.w());  // width-limited here: only the height shrinks
    EXPECT_LT(sq.plot.h(), loose.plot.h());
    EXPECT_FLOAT_EQ(sq.colorbar.y1, sq.plot.y1);  // the colorbar follows the plot
}

TEST(Writers, GridOfHeatmapsOnOneScaleSharesOneColorbar) {
    Figure a;
    a.heatmap = make_heatmap(2, 2, std::vector<float>{0, 1, 0.5f, 0.25f}, Colormap::Viridis, "attention weight");
    a.heatmap->vmin = 0;
    a.heatmap->vmax = 1;
    Figure b = a;
    EXPECT_TRUE(shares_colorbar({a, b}));
    EXPECT_FALSE(shares_colorbar({a}));
    Figure other = b;
    other.heatmap->vmax = 2;
    EXPECT_FALSE(shares_colorbar({a, other}));
    Figure line;
    line.series.push_back(Series{});
    EXPECT_FALSE(shares_colorbar({a, line}));

    ExportOptions opt;
    opt.width = 800;
    opt.height = 400;
    const GridLayout g = layout_grid({a, b}, opt, [](const std::string& s) { return 7.0f * float(s.size()); }, 16);
    ASSERT_TRUE(g.colorbar.has_value());
    ASSERT_EQ(g.cells.size(), 2u);
    for (const auto& c : g.cells) EXPECT_LE(c.x1, g.colorbar->x0);
    EXPECT_LT(g.colorbar->x1, 800.0f);
    // The bar spans the plots (not the whole image): with square cells the 2x2 maps end well above the bottom.
    auto tw = [](const std::string& s) { return 7.0f * float(s.size()); };
    Figure a_bare = a;
    a_bare.colorbar = false;
    const FigureLayout L0 = layout_figure(a_bare, g.cells[0].w(), g.cells[0].h(), tw, 16, false, true);
    EXPECT_FLOAT_EQ(g.colorbar->y0, g.cells[0].y0 + L0.plot.y0);
    EXPECT_FLOAT_EQ(g.colorbar->y1, g.cells[0].y0 + L0.plot.y1);
    Figure sq_a = a, sq_b = b;
    sq_a.square_cells = sq_b.square_cells = true;
    const GridLayout sq = layout_grid({sq_a, sq_b}, opt, tw, 16);
    ASSERT_TRUE(sq.colorbar.has_value());
    EXPECT_LT(sq.colorbar->h(), g.colorbar->h());

    // The SVG draws one gradient (the shared bar) instead of one per figure; different scales keep their own.
    auto gradients = [](const std::string& svg) {
        size_t n = 0;
        for (size_t at = svg.find("<linearGradient"); at != std::string::npos; at = svg.find("<linearGradient", at + 1)) ++n;
        return n;
    };
    EXPECT_EQ(gradients(figures_to_svg({a, b}, opt)), 1u);
    EXPECT_EQ(gradients(figures_to_svg({a, other}, opt)), 2u);
}

TEST(Figure, HiddenAxisLabelsGiveTheirRoomToThePlot) {
    Figure f;
    f.heatmap = make_heatmap(2, 2, std::vector<float>{0, 1, 0.5f, 0.25f}, Colormap::Viridis, "w");
    f.y.label = "query token";
    f.y.categories = {"·Elizabeth", "·Darcy"};
    auto width = [](const std::string& s) { return 7.0f * float(s.size()); };
    const FigureLayout shown = layout_figure(f, 300, 200, width, 16);
    f.y.show_labels = false;
    const FigureLayout hidden = layout_figure(f, 300, 200, width, 16);
    EXPECT_LT(hidden.plot.x0, shown.plot.x0 - 60);
    const std::string svg = figure_to_svg(f, 300, 200);
    EXPECT_EQ(svg.find("·Elizabeth"), std::string::npos);
    EXPECT_EQ(svg.find("query token"), std::string::npos);
    f.y.show_labels = true;
    EXPECT_NE(figure_to_svg(f, 300, 200).find("·Elizabeth"), std::string::npos);
}
