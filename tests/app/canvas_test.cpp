// One figure painter (#29): every target draws what paint_figure asks (plot/canvas.h). The SVG writer puts each call
// of the painter into the file exactly once, for every view; the drifts the two old painters had are gone.
#include "app/figures/views.h"
#include "app/plot/canvas.h"
#include "app/plot/writers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>

using namespace ts;
using namespace ts::figures;
using namespace ts::studio;

namespace {

size_t count(const std::string& s, const std::string& what) {
    size_t n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
}

std::map<std::string, size_t> kinds(const plot::RecordingCanvas& rec) {
    std::map<std::string, size_t> k;
    for (const std::string& call : rec.calls()) ++k[call.substr(0, call.find(' '))];
    return k;
}

plot::PaintStyle svg_style(const plot::ExportOptions& o) {
    plot::PaintStyle st;
    st.theme = plot::export_theme(o.dark, o.transparent);
    st.show_note = true;
    st.image_cells = o.svg_image_cells;
    return st;
}

// The elements the SVG holds for one figure are the painter's calls: a <text> per text, a <path> per line or
// polyline, a <circle> per circle, a <rect> per rectangle, frame and gradient (plus the clip's and the page's), an
// <image> per heatmap image.
void expect_svg_has_every_call(const plot::Figure& f, const std::string& what) {
    plot::ExportOptions o;
    o.width = 800;
    o.height = 500;
    plot::RecordingCanvas rec(13.0f * o.scale, o.scale);
    plot::paint_figure(rec, f, plot::Rect{0, 0, float(o.width), float(o.height)}, svg_style(o));
    const std::string svg = plot::figures_to_svg({f}, o);
    auto k = kinds(rec);
    EXPECT_EQ(count(svg, "<text "), k["text"] + k["vtext"]) << what;
    EXPECT_EQ(count(svg, "<path "), k["line"] + k["polyline"]) << what;
    EXPECT_EQ(count(svg, "<circle "), k["circle"]) << what;
    EXPECT_EQ(count(svg, "<image "), k["image"]) << what;
    EXPECT_EQ(count(svg, "<rect "), k["rect"] + k["frame"] + k["gradient"] + k["clip"] + 1) << what;  // + the page
    EXPECT_EQ(count(svg, "<clipPath "), k["clip"]) << what;
    EXPECT_GT(k["text"], 0u) << what;  // a figure without a word is not a figure
}

}  // namespace

// One table of views (#29): each row names its builder; no view is built by a chain of name comparisons.
TEST(OneViewTable, EveryViewHasItsBuilderAndATab) {
    std::set<std::string> names;
    for (const ViewInfo& v : all_views()) {
        EXPECT_NE(v.build, nullptr) << v.name;
        EXPECT_NE(default_view_for_panel(v.panel), "") << v.name << ": its tab has no main view";
        EXPECT_TRUE(names.insert(v.name).second) << v.name << " twice";
    }
    EXPECT_GT(names.size(), 40u);
}

TEST(OnePainter, SvgHoldsEveryCallOfThePainterForEveryView) {
    const LoadedModel lm = make_demo_model();
    UiState st;
    st.text = "the cat sat";
    const auto snap = run_forward_now(st, lm);
    ASSERT_TRUE(snap->error.empty()) << snap->error;
    int n = 0;
    for (const ViewInfo& v : all_views()) {
        ViewFigures vf;
        try {
            vf = build_view(v.name, st, v.needs_forward ? snap.get() : nullptr, &lm);
        } catch (const std::exception&) {
            continue;  // views that need what the demo model lacks (a translation, an analysis run)
        }
        for (const plot::Figure& f : vf.figures) {
            expect_svg_has_every_call(f, v.name + ": " + f.title);
            ++n;
        }
    }
    EXPECT_GT(n, 30);
}

// The drifts the window's painter and the SVG writer had, each now one rule.
TEST(OnePainter, FormerDriftsAreOneRule) {
    plot::Figure f;
    f.title = "t";
    f.x.log = true;
    plot::Series line;
    line.name = "line";
    line.x = {-1, 1, 2, 0, 3, 4};  // a log-x axis breaks the line at x <= 0: [1, 2] and [3, 4]
    line.y = {1, 2, 3, 4, 5, 6};
    line.dashed = true;
    plot::Series dots;
    dots.kind = plot::SeriesKind::Scatter;
    dots.name = "dots";
    dots.x = {1, 2};
    dots.y = {1, 2};
    f.series = {line, dots};
    plot::RecordingCanvas rec;
    plot::PaintStyle st;
    st.theme = plot::export_theme(false);
    plot::paint_figure(rec, f, plot::Rect{0, 0, 600, 400}, st);
    const auto k = kinds(rec);
    EXPECT_EQ(k.at("polyline"), 2u);  // broken at x <= 0 (only the SVG writer did before)
    size_t dashed = 0;
    for (const auto& c : rec.calls()) dashed += c.rfind("polyline", 0) == 0 && c.find(" dashed") != std::string::npos;
    EXPECT_EQ(dashed, 2u);
    // Scatter's legend swatch is a dot (the window drew a rectangle): two plot points + one swatch.
    EXPECT_EQ(k.at("circle"), 3u);
    // One colorbar: the same 33-stop ramp for a figure's own bar and a grid's shared one.
    plot::Figure h;
    h.title = "heat";
    std::vector<float> v{-1, 0, 0.5f, 1};
    h.heatmap = plot::make_heatmap(2, 2, v, plot::Colormap::Diverging, "value", "");
    h.heatmap->vmin = -1;
    h.heatmap->vmax = 1;
    h.heatmap->annotate = true;
    plot::RecordingCanvas hr;
    plot::paint_figure(hr, h, plot::Rect{0, 0, 600, 400}, st);
    size_t stops = 0;
    for (const auto& c : hr.calls())
        if (c.rfind("gradient", 0) == 0) stops = count(c, "rgba(");
    EXPECT_EQ(stops, 33u);
    // Cell values: white on the dark ends of a diverging map, black in its light middle.
    std::map<std::string, std::string> colour;  // label -> colour
    for (const auto& c : hr.calls())
        if (c.rfind("text", 0) == 0 && c.find(" center middle ") != std::string::npos) {
            const size_t q = c.find('\'');
            colour[c.substr(q)] = c.find("rgba(1.000,1.000,1.000") != std::string::npos ? "white" : "black";
        }
    EXPECT_EQ(colour["'-1.00'"], "white");
    EXPECT_EQ(colour["'0.00'"], "black");
    EXPECT_EQ(colour["'1.00'"], "white");
}

// A title wider than its room is cut with "…" and reported, so the window can show the whole title on hover.
TEST(OnePainter, LongTitlesAreElidedWithinTheReservedRoom) {
    plot::Figure f;
    f.title = std::string(200, 'x');
    f.series.push_back({});
    plot::RecordingCanvas rec;
    plot::PaintStyle st;
    st.theme = plot::export_theme(false);
    st.title_reserve = 60;
    const plot::PaintedFigure p = plot::paint_figure(rec, f, plot::Rect{0, 0, 400, 300}, st);
    EXPECT_TRUE(p.title_elided);
    EXPECT_LE(p.title_text.x1, 400 - 60 + 0.01f);
    bool found = false;
    for (const auto& c : rec.calls()) found = found || (c.rfind("text", 0) == 0 && c.find("…'") != std::string::npos);
    EXPECT_TRUE(found);
}
