// Figure: a complete, GL-free description of one plot (title, formula, axes with labels and units, line /
// scatter / bar series, an optional heatmap with its colorbar, annotations). Panels build Figures from a
// Snapshot; one painter draws them on screen (app/gfx/painter.h) and the writers turn them into SVG / CSV.
#pragma once

#include "app/plot/colormap.h"

#include <cmath>
#include <functional>
#include <optional>
#include <span>
#include <cstdint>
#include <string>
#include <vector>

namespace ts::plot {

enum class SeriesKind { Line, Scatter, Bars };

struct Series {
    SeriesKind kind = SeriesKind::Line;
    std::string name;                    ///< legend entry ("" = not in the legend)
    std::vector<double> x, y;            ///< same length; NaN y breaks a line
    Rgba color{0.2f, 0.4f, 0.8f, 1.0f};
    float width = 2.0f;                  ///< line width in pixels (Line)
    float marker = 4.0f;                 ///< marker radius in pixels (Scatter)
    double bar_width = 0.8;              ///< bar width in x data units (Bars)
    double bar_base = 0.0;               ///< bars grow from this y
    bool dashed = false;
    std::vector<std::string> point_labels;  ///< optional hover label per point (e.g. a token's text)
};

struct Axis {
    std::string label;                   ///< "key token", "x", "probability"
    std::string unit;                    ///< "nats", "rad", "" (dimensionless shown as no unit)
    double min = NAN, max = NAN;         ///< NaN = automatic from the data
    bool log = false;                    ///< log10 scale (data must be > 0)
    std::vector<std::string> categories; ///< labels at integer positions 0..n-1 (heatmap rows/cols, bar names)
    bool show_labels = true;             ///< false: no ticks, tick labels or title (a figure beside one that has the
                                         ///< same axis); categories still name a hovered cell
    [[nodiscard]] std::string title() const { return unit.empty() ? label : label + " [" + unit + "]"; }
    /// title() when the labels are shown, else "".
    [[nodiscard]] std::string shown_title() const;
};

/// rows × cols values, row-major. Row 0 is drawn at the top. NaN or -inf cells are "masked" (drawn gray,
/// read out as "masked").
struct Heatmap {
    int rows = 0, cols = 0;
    std::vector<float> values;
    float vmin = 0, vmax = 1;
    Colormap cmap = Colormap::Viridis;
    std::string value_label = "value";   ///< colorbar title and readout name
    std::string value_unit;
    /// "value_label [value_unit]" (the colorbar title), or the label alone without a unit.
    [[nodiscard]] std::string value_title() const;
    std::string row_name = "row", col_name = "column";  ///< readout: "query 'cat' (3)"
    bool annotate = false;               ///< print values in cells (when cells are large enough)
    std::vector<std::string> cell_text;  ///< optional rows*cols labels printed in cells / shown on hover (logit lens)
    /// Optional rows*cols flags, 1 = a mask removed the cell (an attention weight the causal / padding / window
    /// mask forced to 0). Such a cell keeps its value (0: readouts and CSV say what the model computed) but is
    /// drawn gray like a -inf cell, so "masked" and "learned to ignore" look different.
    std::vector<uint8_t> masked;
    /// A pooled overview: each cell summarises row_step x col_step cells of the full matrix (1 x 1: full resolution).
    int row_step = 1, col_step = 1;
    /// A full-resolution window of a longer matrix: cell (0, 0) is its row row0, column col0.
    int row0 = 0, col0 = 0;
    [[nodiscard]] float at(int r, int c) const { return values[size_t(r) * size_t(cols) + size_t(c)]; }
    [[nodiscard]] bool is_masked(int r, int c) const {
        return !masked.empty() && masked[size_t(r) * size_t(cols) + size_t(c)] != 0;
    }
    /// Where cell (r, c) falls on the colormap, in [0, 1]; NaN for a masked or non-finite cell (drawn gray).
    [[nodiscard]] float shade(int r, int c) const;
};

struct Annotation {
    double x = 0, y = 0;                 ///< data coordinates
    std::string text;
    Rgba color{0, 0, 0, 0};              ///< alpha 0 = theme text color
};

struct RefLine {
    bool vertical = true;
    double pos = 0;
    std::string label;
    Rgba color{0.5f, 0.5f, 0.5f, 1.0f};
};

/// Corner of the plot area the legend box sits in; ImPlot's ImPlotLocation_NorthEast etc. Best (the default) is
/// matplotlib's loc="best": the corner where the box covers the least data (best_legend_location).
enum class LegendLocation { Best, NorthEast, NorthWest, SouthEast, SouthWest };

struct Figure {
    std::string title;
    std::string formula;                 ///< the formula the plot shows (tooltip on the title, SVG <desc>)
    Axis x, y;
    std::vector<Series> series;
    std::optional<Heatmap> heatmap;      ///< drawn under the series; axes then span [0, cols] × [0, rows]
    bool colorbar = true;                ///< shown when a heatmap is present
    bool square_cells = false;           ///< heatmap cells drawn square (plot shrunk to fit), e.g. attention grids
    bool legend = true;
    LegendLocation legend_location = LegendLocation::Best;  ///< Best: the corner covering the least data
    std::vector<Annotation> annotations;
    std::vector<RefLine> ref_lines;
    std::string note;                    ///< one line under the plot (e.g. "random weights"); exports print it
    std::string view;                    ///< the named view that built it ("attention"; app/figures/views.h)
};

/// Calls fn(text) on every string of `f` a reader sees: title, formula, note, axis labels, units and categories,
/// series names, annotations, reference-line labels, and the heatmap's value label, unit, row/column names and
/// cell text. Fig is Figure or const Figure (fn then gets std::string& or const std::string&).
template <typename Fig, typename Fn>
void for_each_text(Fig& f, Fn&& fn) {
    fn(f.title);
    fn(f.formula);
    fn(f.note);
    for (auto* a : {&f.x, &f.y}) {
        fn(a->label);
        fn(a->unit);
        for (auto& c : a->categories) fn(c);
    }
    for (auto& se : f.series) fn(se.name);
    for (auto& an : f.annotations) fn(an.text);
    for (auto& r : f.ref_lines) fn(r.label);
    if (f.heatmap) {
        fn(f.heatmap->value_label);
        fn(f.heatmap->value_unit);
        fn(f.heatmap->row_name);
        fn(f.heatmap->col_name);
        for (auto& t : f.heatmap->cell_text) fn(t);
    }
}

// --- building helpers -----------------------------------------------------------------------------------------

/// Bars of a histogram of `values` (non-finite values skipped) over [lo, hi] (NaN = data range) in `bins` bins.
/// density=true scales bar heights so the bars integrate to 1 (units 1/x); else heights are counts.
[[nodiscard]] Series histogram_series(std::span<const float> values, int bins, double lo = NAN, double hi = NAN,
                                      bool density = false);

/// Text printed in an annotated heatmap cell: "%.2f" below 10 in magnitude, "%.0f" above, "-inf" when masked,
/// "NaN" for a value that is not a number (a broken weight upstream), "inf" for +inf.
[[nodiscard]] std::string heatmap_cell_label(float v);
/// True when value v colours its cell dark enough that white text reads best (shared by every painter).
[[nodiscard]] bool heatmap_cell_is_dark(const Heatmap& h, float v);
/// A heatmap from row-major data; vmin/vmax from the finite data (symmetric around 0 for Diverging).
[[nodiscard]] Heatmap make_heatmap(int rows, int cols, std::span<const float> values, Colormap cmap,
                                   std::string value_label, std::string value_unit = "");

/// Data bounds of the figure along each axis after applying Axis::min/max overrides and 5% padding (none for
/// heatmaps, which span whole cells). Returns {xmin, xmax, ymin, ymax}; never degenerate.
struct Bounds {
    double xmin = 0, xmax = 1, ymin = 0, ymax = 1;
};
[[nodiscard]] Bounds figure_bounds(const Figure& f);

// --- layout shared by painters ----------------------------------------------------------------------------------
struct Rect {
    float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    [[nodiscard]] float w() const { return x1 - x0; }
    [[nodiscard]] float h() const { return y1 - y0; }
    [[nodiscard]] bool contains(float px, float py) const { return px >= x0 && px < x1 && py >= y0 && py < y1; }
};
struct FigureLayout {
    Rect outer, title, plot, colorbar, x_label, y_label;
    Rect note;                           ///< the note lines under the x-axis title (export only; empty otherwise)
    int category_stride_x = 1, category_stride_y = 1;  ///< draw every n-th category label so they do not overlap
    bool rotate_x_categories = false;
    /// Non-empty when every corner of the plot would put the legend over data: the legend then sits here, under
    /// the x-axis title, its entries flowing left to right (legend_flow); otherwise it is drawn inside the plot.
    Rect legend_below;
};

/// One legend entry placed by legend_flow: the series it names and the top-left corner of its swatch.
struct LegendEntry {
    size_t series = 0;
    float x = 0, y = 0;
};
/// Lays the named series out left to right in `area` (rows of `line_h`), wrapping at its width. Entry width:
/// swatch (1.2 line_h) + gap + text + one line_h of spacing. Used by layout_figure to size the area and by the
/// painters to draw it, so they agree.
[[nodiscard]] std::vector<LegendEntry> legend_flow(const Figure& f, const Rect& area,
                                                   const std::function<float(const std::string&)>& text_width,
                                                   float line_h);
/// Where the parts go in an outer rectangle of width×height pixels. `text_width` measures a string in pixels,
/// `line_h` is the font's line height. `show_note` reserves lines at the bottom for Figure::note (exports print
/// the note; the screen shows it in the title tooltip).
[[nodiscard]] FigureLayout layout_figure(const Figure& f, float width, float height,
                                         const std::function<float(const std::string&)>& text_width, float line_h,
                                         bool compact = false, bool show_note = false);

/// Width in pixels a colorbar for h takes beside its plot: gap, bar, tick labels (the ticks the painters draw) and
/// the rotated title.
[[nodiscard]] float colorbar_width(const Heatmap& h, const std::function<float(const std::string&)>& text_width, float line_h);

/// The legend box of box_w × box_h pixels in the `plot` corner `loc`, `margin` pixels inside the frame (Best is
/// taken as NorthEast here; resolve it first with best_legend_location).
[[nodiscard]] Rect legend_box(LegendLocation loc, const Rect& plot, float box_w, float box_h, float margin);

/// Number of lines of a note ('\n'-separated; 0 for an empty note).
[[nodiscard]] int note_lines(const std::string& note);

/// Maps data coordinates to pixels inside layout.plot (y grows downwards on screen; heatmap row 0 at top).
struct Transform {
    Rect plot;
    Bounds b;
    bool xlog = false, ylog = false, y_down = false;
    [[nodiscard]] float px(double x) const;
    [[nodiscard]] float py(double y) const;
    [[nodiscard]] double data_x(float px) const;
    [[nodiscard]] double data_y(float py) const;
};
[[nodiscard]] Transform make_transform(const Figure& f, const Rect& plot);

/// How much of the figure's data a box covers, in "samples": line series sampled every 2 pixels along each
/// segment, scatter markers, bar rectangles by area (one sample per 4 px²), annotation anchors weighted ×20.
[[nodiscard]] double legend_overlap(const Figure& f, const Transform& t, const Rect& box);
/// The legend corner that covers the least data, NorthEast, NorthWest, SouthEast, SouthWest first on ties (as
/// matplotlib's "best"); f.legend_location itself when it is not Best. Every painter calls this, so the window,
/// PNG and SVG put the legend in the same place.
[[nodiscard]] LegendLocation best_legend_location(const Figure& f, const Transform& t, float box_w, float box_h,
                                                  float margin);

/// Tick values along one axis and their spacing, chosen from the plot size so that labels do not crowd; every
/// painter (screen, PNG, SVG) calls this so all outputs show the same ticks. Empty for category axes.
struct AxisTicks {
    std::vector<double> values;
    double step = 1.0;
};
[[nodiscard]] AxisTicks axis_ticks(const Figure& f, const Transform& t, float line_h, bool x_axis);
/// Ticks of a heatmap's colorbar `bar_height` pixels tall.
[[nodiscard]] AxisTicks colorbar_ticks(const Heatmap& h, float bar_height, float line_h);

// --- themes -------------------------------------------------------------------------------------------------------
/// Colors an exported figure is drawn with (the screen uses the ImGui style; exports use these presets so a
/// light figure for print looks the same in PNG and SVG).
struct Theme {
    bool dark = false;
    Rgba background;                     ///< outside the plot area (alpha 0 = transparent export)
    Rgba plot_background;
    Rgba text, text_dim, grid, frame, legend_background;
};
/// light = white paper for print and slides; dark = the app's dark theme. transparent clears the background.
[[nodiscard]] Theme export_theme(bool dark, bool transparent = false);

}  // namespace ts::plot
