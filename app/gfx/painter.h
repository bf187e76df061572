// Draws a plot::Figure into the current ImGui window: the figure itself through plot::paint_figure on an ImDrawList
// canvas (the painter SVG exports use too; heatmaps beyond 64×64 cells as one GPU texture), plus what only a
// window has: the formula and note behind "(?)", the Export button and menu, selection marks and the hover readout
// with exact values.
#pragma once

#include "app/plot/figure.h"

#include <imgui.h>

#include <string>
#include <string_view>

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
    const plot::Theme* theme = nullptr;  ///< figure colours (exports); null: from the current ImGui style
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
void add_text_vertical(ImDrawList* dl, ImVec2 center, ImU32 col, std::string_view text);
/// A vertical colorbar for h in the bar rectangle C (screen pixels), ticks and rotated title to its right
/// (plot::paint_colorbar), in `theme`'s colours or the current ImGui style's (grid exports draw one shared bar).
void draw_colorbar(ImDrawList* dl, const plot::Heatmap& h, const plot::Rect& C, const plot::Theme* theme = nullptr);

/// ImU32 from a plot color; alpha 0 means the theme's text color.
[[nodiscard]] ImU32 to_u32(const plot::Rgba& c);

/// Series colors that read on light and dark backgrounds (Okabe-Ito palette; same as plot::palette).
[[nodiscard]] plot::Rgba palette(int i);

}  // namespace ts::gfx
