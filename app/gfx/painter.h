// Draws a plot::Figure into the current ImGui window (ImDrawList): title with the formula as tooltip, axes with
// nice ticks and unit labels, series, heatmaps (rectangles, or a GPU texture beyond 64×64 cells), colorbar,
// legend, hover readout with exact values, and an Export button. Also an ImPlot-like immediate API on top.
#pragma once

#include "app/plot/figure.h"

#include <imgui.h>

#include <string>

namespace ts::gfx {

struct PlotInteraction {
    bool hovered = false, clicked = false;
    int row = -1, col = -1;          ///< hovered heatmap cell
    double x = NAN, y = NAN;         ///< mouse in data coordinates
    int series = -1, index = -1;     ///< nearest hovered point
};

struct PaintOptions {
    bool compact = false;            ///< thumbnail: no title, axes, colorbar or export (hover/click still work)
    bool export_button = true;
    /// The Export button in the title row (false: narrow figures such as the step view keep the room for their
    /// title; a right-click on the plot still opens the export menu).
    bool title_button = true;
    int highlight_row = -1, highlight_col = -1;  ///< outline one heatmap row / column (e.g. the selected query)
    bool selected = false;           ///< thick frame (thumbnail grid selection)
    bool show_note = false;          ///< print Figure::note under the plot (exports; the screen shows it on hover)
};

/// The body of the Export popup every plot opens (its Export button or a right-click on the plot). The app installs
/// its export menu (app/ui/export_menu.h); without one the popup offers copying CSV / SVG to the clipboard.
using ExportMenuFn = void (*)(const plot::Figure& f);
void set_export_menu(ExportMenuFn fn);

/// Draws `f` in a size.x × size.y box at the cursor (size.x <= 0: available width). `id` must be unique in the
/// window (defaults to the title).
PlotInteraction draw_figure(const plot::Figure& f, ImVec2 size, const PaintOptions& opt = {}, const char* id = nullptr);

/// Vertical text centred at `center`: rotated 90° counter-clockwise (reads bottom to top), except that Chinese,
/// Japanese and Korean characters stand upright one under another, with any other runs among them turned clockwise.
void add_text_vertical(ImDrawList* dl, ImVec2 center, ImU32 col, const char* text);
/// A vertical colorbar for h in the bar rectangle C (screen pixels), ticks and rotated title to its right, in the
/// current ImGui style's text color (figures draw theirs with it; grid exports draw one shared bar).
void draw_colorbar(ImDrawList* dl, const plot::Heatmap& h, const plot::Rect& C);

/// ImU32 from a plot color; alpha 0 means the theme's text color.
[[nodiscard]] ImU32 to_u32(const plot::Rgba& c);

/// Series colors that read on light and dark backgrounds (Okabe-Ito palette; same as plot::palette).
[[nodiscard]] plot::Rgba palette(int i);

// --- ImPlot-like immediate API (builds a Figure, draws it at EndPlot) ---------------------------------------------
bool BeginPlot(const char* title, ImVec2 size = ImVec2(-1, 0));
void SetupAxes(const char* x_label, const char* y_label, const char* x_unit = "", const char* y_unit = "");
void SetupFormula(const char* formula);
void SetupAxisLimits(double xmin, double xmax, double ymin, double ymax);
void PlotLine(const char* label, const double* xs, const double* ys, int n);
void PlotScatter(const char* label, const double* xs, const double* ys, int n);
void PlotBars(const char* label, const double* xs, const double* ys, int n, double bar_width = 0.8);
void PlotHistogram(const char* label, const float* values, int n, int bins = 40);
void PlotHeatmap(const char* label, const float* values, int rows, int cols, plot::Colormap cmap = plot::Colormap::Viridis);
PlotInteraction EndPlot();

}  // namespace ts::gfx
