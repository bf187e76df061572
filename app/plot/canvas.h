// One figure painter for every target (#29). A Canvas is a surface that draws a few primitives — lines, polylines,
// rectangles, circles, text (also vertical), heatmap images, colour gradients, clipping — and measures text.
// paint_figure draws a plot::Figure on any Canvas: the window's ImDrawList (app/gfx/painter.h, also the PNG
// exporter), SVG (plot/writers.h) and RecordingCanvas, which writes each call down as one line so tests can compare
// what two targets were asked to draw. Everything a figure shows is decided here once; the targets differ only in
// how they put a primitive on their surface. GL-free.
#pragma once

#include "app/plot/figure.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ts::plot {

struct Vec2 {
    float x = 0, y = 0;
};

/// Where a text's anchor point sits on the text: horizontally its left end, centre or right end; vertically its
/// top or its middle.
enum class HAlign { Left, Center, Right };
enum class VAlign { Top, Middle };
enum class TextStyle { Normal, Title, Note };  ///< Title: bold where the target can; Note: italic where it can

class Canvas {
public:
    virtual ~Canvas() = default;
    /// Text metrics in the canvas's pixels: the width of `s` on one line, the line height, and the unit that line
    /// widths and small offsets scale with (1 at the base font size).
    [[nodiscard]] virtual float text_width(std::string_view s) const = 0;
    [[nodiscard]] virtual float line_height() const = 0;
    [[nodiscard]] virtual float unit() const = 0;

    /// A straight line; dashed: dashes of 6 units with gaps of 4.
    virtual void line(Vec2 a, Vec2 b, Rgba c, float width, bool dashed = false) = 0;
    /// Connected segments through `pts` (at least two).
    virtual void polyline(std::span<const Vec2> pts, Rgba c, float width, bool dashed) = 0;
    /// A filled rectangle; `rounding` rounds its corners; `seamless`: a heatmap cell, drawn so that neighbours
    /// leave no hairline between them.
    virtual void rect_filled(const Rect& r, Rgba c, float rounding = 0, bool seamless = false) = 0;
    virtual void rect_outline(const Rect& r, Rgba c, float width) = 0;
    virtual void circle_filled(Vec2 center, float radius, Rgba c) = 0;
    /// One line of text whose anchor (h, v) is at `p`.
    virtual void text(Vec2 p, std::string_view s, Rgba c, HAlign h, VAlign v, TextStyle style = TextStyle::Normal) = 0;
    /// Text read from bottom to top (Chinese, Japanese and Korean characters upright, where the target can),
    /// centred on `center`.
    virtual void text_vertical(Vec2 center, std::string_view s, Rgba c) = 0;
    /// The heatmap's cells as one image stretched over `r` (nearest-neighbour, no smoothing).
    virtual void heatmap_image(const Rect& r, const Heatmap& h) = 0;
    /// The heatmap's cells as one seamless rectangle each over `r`, row 0 at the top, coloured
    /// colormap_sample(h.cmap, h.shade(row, col)). This default calls rect_filled per cell; the screen overrides it
    /// to keep a heatmap's colours between frames (app/gfx/painter.cpp), drawing the same rectangles.
    virtual void heatmap_cells(const Rect& r, const Heatmap& h);
    /// A vertical colour ramp: stops[0] at the bottom of `r`, stops.back() at the top, evenly spaced.
    virtual void vertical_gradient(const Rect& r, std::span<const Rgba> stops) = 0;
    /// Drawing between push_clip and pop_clip is clipped to `r`.
    virtual void push_clip(const Rect& r) = 0;
    virtual void pop_clip() = 0;
    /// A figure's group (SVG: <g> with its title and description); screens ignore it.
    virtual void begin_figure(const Figure&) {}
    virtual void end_figure() {}
};

/// What differs between drawing a figure on screen and exporting it.
struct PaintStyle {
    Theme theme;
    bool compact = false;     ///< thumbnail: no title, axes, ticks, colorbar, legend or cell text
    bool show_note = false;   ///< print Figure::note under the plot (exports; the screen shows it on hover)
    float title_reserve = 0;  ///< pixels kept free right of the title (the window's Export button)
    /// Heatmaps with more cells than this are one image instead of a rectangle per cell.
    size_t image_cells = 64 * 64;
};

/// What paint_figure laid out, for the window's interaction (hover, tooltips, buttons) on top.
struct PaintedFigure {
    FigureLayout layout;        ///< relative to the cell's top-left corner
    Rect plot;                  ///< the plot area in canvas coordinates
    Transform transform;        ///< data -> canvas coordinates of the plot area
    Rect title_text;            ///< where the title's text went (empty without a title)
    bool title_elided = false;  ///< the title was cut with "…" to fit
};

/// Draws `f` in `cell` (canvas coordinates): title, plot background, heatmap (cells and their text), grid, reference
/// lines, series, annotations, frame, ticks and labels, axis titles, colorbar, note and legend.
PaintedFigure paint_figure(Canvas& c, const Figure& f, const Rect& cell, const PaintStyle& style);
/// A vertical colorbar for `h` in the bar rectangle `bar`: the ramp, its frame, ticks and labels, and the value's
/// title turned to read upwards, to its right (a figure's own, or one shared by a grid of heatmaps).
void paint_colorbar(Canvas& c, const Heatmap& h, const Rect& bar, const Theme& theme);

/// Writes every call down as one line of text ("text 12.5 30 center top normal #1a1a1a 'key'", coordinates rounded
/// to 0.01 pixel), measuring text as SVG does (0.6 em per Latin character, 1 em per CJK one) at `font` pixels.
class RecordingCanvas : public Canvas {
public:
    explicit RecordingCanvas(float font = 13.0f, float unit = 1.0f) : m_font(font), m_unit(unit) {}
    [[nodiscard]] float text_width(std::string_view s) const override;
    [[nodiscard]] float line_height() const override { return m_font * 1.25f; }
    [[nodiscard]] float unit() const override { return m_unit; }
    void line(Vec2 a, Vec2 b, Rgba c, float width, bool dashed) override;
    void polyline(std::span<const Vec2> pts, Rgba c, float width, bool dashed) override;
    void rect_filled(const Rect& r, Rgba c, float rounding, bool seamless) override;
    void rect_outline(const Rect& r, Rgba c, float width) override;
    void circle_filled(Vec2 center, float radius, Rgba c) override;
    void text(Vec2 p, std::string_view s, Rgba c, HAlign h, VAlign v, TextStyle style) override;
    void text_vertical(Vec2 center, std::string_view s, Rgba c) override;
    void heatmap_image(const Rect& r, const Heatmap& h) override;
    void vertical_gradient(const Rect& r, std::span<const Rgba> stops) override;
    void push_clip(const Rect& r) override;
    void pop_clip() override;
    void begin_figure(const Figure& f) override;
    void end_figure() override;

    [[nodiscard]] const std::vector<std::string>& calls() const { return m_calls; }

private:
    float m_font, m_unit;
    std::vector<std::string> m_calls;
};

/// SVG's text measure: 0.6 em per character, 1 em for CJK and full-width ones (the writers lay text out with it).
[[nodiscard]] float text_width_em(std::string_view s);

}  // namespace ts::plot
