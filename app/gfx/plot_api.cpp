// The ImPlot-like immediate API (BeginPlot / SetupAxes / PlotLine ... / EndPlot) on top of draw_figure: it collects
// a Figure between BeginPlot and EndPlot and paints it (see painter.h).
#include "app/gfx/painter.h"

#include <optional>
#include <span>

namespace ts::gfx {

using plot::Figure;

// --- ImPlot-like API ------------------------------------------------------------------------------------------------

namespace {
struct Current {
    std::optional<Figure> fig;
    ImVec2 size;
};
Current g_cur;
}  // namespace

bool BeginPlot(const char* title, ImVec2 size) {
    IM_ASSERT(!g_cur.fig && "BeginPlot without EndPlot");
    g_cur.fig.emplace();
    g_cur.fig->title = title;
    g_cur.size = size;
    return true;
}
void SetupAxes(const char* xl, const char* yl, const char* xu, const char* yu) {
    g_cur.fig->x.label = xl;
    g_cur.fig->y.label = yl;
    g_cur.fig->x.unit = xu;
    g_cur.fig->y.unit = yu;
}
void SetupFormula(const char* formula) { g_cur.fig->formula = formula; }
void SetupAxisLimits(double xmin, double xmax, double ymin, double ymax) {
    g_cur.fig->x.min = xmin;
    g_cur.fig->x.max = xmax;
    g_cur.fig->y.min = ymin;
    g_cur.fig->y.max = ymax;
}
static plot::Series make_series(plot::SeriesKind k, const char* label, const double* xs, const double* ys, int n) {
    plot::Series s;
    s.kind = k;
    s.name = label;
    s.x.assign(xs, xs + n);
    s.y.assign(ys, ys + n);
    s.color = palette(int(g_cur.fig->series.size()));
    return s;
}
void PlotLine(const char* label, const double* xs, const double* ys, int n) {
    g_cur.fig->series.push_back(make_series(plot::SeriesKind::Line, label, xs, ys, n));
}
void PlotScatter(const char* label, const double* xs, const double* ys, int n) {
    g_cur.fig->series.push_back(make_series(plot::SeriesKind::Scatter, label, xs, ys, n));
}
void PlotBars(const char* label, const double* xs, const double* ys, int n, double bw) {
    auto s = make_series(plot::SeriesKind::Bars, label, xs, ys, n);
    s.bar_width = bw;
    g_cur.fig->series.push_back(std::move(s));
}
void PlotHistogram(const char* label, const float* values, int n, int bins) {
    auto s = plot::histogram_series(std::span<const float>(values, size_t(std::max(0, n))), bins);
    s.name = label;
    s.color = palette(int(g_cur.fig->series.size()));
    g_cur.fig->series.push_back(std::move(s));
}
void PlotHeatmap(const char* label, const float* values, int rows, int cols, plot::Colormap cmap) {
    g_cur.fig->heatmap = plot::make_heatmap(rows, cols, std::span<const float>(values, size_t(rows) * size_t(cols)), cmap, label);
}
PlotInteraction EndPlot() {
    IM_ASSERT(g_cur.fig && "EndPlot without BeginPlot");
    const PlotInteraction r = draw_figure(*g_cur.fig, g_cur.size);
    g_cur.fig.reset();
    return r;
}

}  // namespace ts::gfx

