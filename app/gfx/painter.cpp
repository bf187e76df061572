// The ImDrawList painter for Figures (see painter.h).
#include "app/i18n/tr.h"
#include "app/gfx/painter.h"

#include "app/gfx/heatmap_colors.h"
#include "app/gfx/heatmap_texture.h"
#include "app/plot/canvas.h"
#include "app/plot/ticks.h"
#include "app/plot/writers.h"
#include "app/gfx/astral.h"
#include "app/gfx/fonts.h"   // glyph requests
#include "core/util/utf8.h"  // is_cjk_breakable

#include <imgui_internal.h>  // ImTextCharFromUtf8

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace ts::gfx {

using plot::Figure;
using plot::Rgba;

ImU32 to_u32(const Rgba& c) {
    if (c.a == 0) return ImGui::GetColorU32(ImGuiCol_Text);
    return ImGui::ColorConvertFloat4ToU32(ImVec4(c.r, c.g, c.b, c.a));
}

Rgba palette(int i) { return plot::palette(i); }

namespace {
// `text` laid out horizontally where it fits inside the clip rect (ImGui culls glyphs outside it before we could
// rotate them), then turned 90° about its own centre and moved so that centre lands on `center`: counter-clockwise
// (reads bottom to top) or clockwise (top to bottom, a Latin run inside vertical CJK text).
void add_text_turned(ImDrawList* dl, ImVec2 center, ImU32 col, std::string_view text, bool clockwise) {
    const char* b = text.data();
    const char* e = b + text.size();
    const ImVec2 sz = ImGui::CalcTextSize(b, e);
    const ImVec4 clip = dl->GetClipRectMin().x <= dl->GetClipRectMax().x
                            ? ImVec4(dl->GetClipRectMin().x, dl->GetClipRectMin().y, dl->GetClipRectMax().x, dl->GetClipRectMax().y)
                            : ImVec4(center.x, center.y, center.x, center.y);
    const float x0 = std::max(clip.x, std::min(center.x - sz.x * 0.5f, clip.z - sz.x));
    const float y0 = std::max(clip.y, std::min(center.y - sz.y * 0.5f, clip.w - sz.y));
    const ImVec2 c(x0 + sz.x * 0.5f, y0 + sz.y * 0.5f);
    const int start = dl->VtxBuffer.Size;
    dl->AddText(ImVec2(x0, y0), col, b, e);
    for (int i = start; i < dl->VtxBuffer.Size; ++i) {
        ImDrawVert& v = dl->VtxBuffer[i];
        const float dx = v.pos.x - c.x, dy = v.pos.y - c.y;
        v.pos = clockwise ? ImVec2(center.x - dy, center.y + dx) : ImVec2(center.x + dy, center.y - dx);
    }
}

}  // namespace

void add_text_vertical(ImDrawList* dl, ImVec2 center, ImU32 col, std::string_view text) {
    // Runs of upright CJK characters and of other text (turned clockwise, read top to bottom like the CJK).
    struct Run {
        std::string_view text;
        bool upright;
        float length;  // along the vertical
    };
    std::vector<Run> runs;
    const char* p = text.data();
    const char* end = p + text.size();
    bool any_upright = false;
    while (p < end) {
        unsigned c = 0;
        const int n = ImTextCharFromUtf8(&c, p, end);
        if (n <= 0) break;
        const bool up = is_cjk_breakable(char32_t(c));  // CJK stands upright in vertical text
        any_upright = any_upright || up;
        if (up || runs.empty() || runs.back().upright)
            runs.push_back({std::string_view(p, size_t(n)), up, 0.0f});
        else
            runs.back().text = std::string_view(runs.back().text.data(), runs.back().text.size() + size_t(n));
        p += n;
    }
    if (!any_upright) return add_text_turned(dl, center, col, text, false);  // Latin: bottom to top, as matplotlib
    float total = 0;
    for (Run& r : runs) {
        r.length = ImGui::CalcTextSize(r.text.data(), r.text.data() + r.text.size()).x;
        total += r.length;
    }
    const float line_h = ImGui::GetTextLineHeight();
    float y = center.y - total * 0.5f;
    for (const Run& r : runs) {
        if (r.upright) dl->AddText(ImVec2(center.x - r.length * 0.5f, y + (r.length - line_h) * 0.5f), col, r.text.data(),
                                   r.text.data() + r.text.size());
        else add_text_turned(dl, ImVec2(center.x, y + r.length * 0.5f), col, r.text, true);
        y += r.length;
    }
}

namespace {

std::string category(const plot::Axis& a, int i) {
    return i >= 0 && i < int(a.categories.size()) ? a.categories[size_t(i)] : std::to_string(i);
}

ExportMenuFn g_export_menu = nullptr;

void export_popup(const Figure& f) {
    if (ImGui::BeginPopup("export")) {
        if (g_export_menu) {
            g_export_menu(f);
        } else {
            ImGui::TextDisabled(tr("Export \"%s\""), f.title.c_str());
            if (ImGui::Selectable(tr("Copy values as CSV"))) ImGui::SetClipboardText(plot::figure_to_csv(f).c_str());
            if (ImGui::Selectable(tr("Copy as SVG"))) ImGui::SetClipboardText(plot::figure_to_svg(f).c_str());
        }
        ImGui::EndPopup();
    }
}

}  // namespace

void set_export_menu(ExportMenuFn fn) { g_export_menu = fn; }

namespace {

plot::Rgba rgba_of(ImU32 c) {
    const ImVec4 v = ImGui::ColorConvertU32ToFloat4(c);
    return {v.x, v.y, v.z, v.w};
}

// The figure colours of the current ImGui style (the window's theme, or the export theme raster.cpp installs).
plot::Theme screen_theme() {
    plot::Theme th;
    th.text = rgba_of(ImGui::GetColorU32(ImGuiCol_Text));
    th.text_dim = rgba_of(ImGui::GetColorU32(ImGuiCol_TextDisabled));
    th.grid = {th.text.r, th.text.g, th.text.b, th.text.a * 0.12f};
    th.frame = {th.text.r, th.text.g, th.text.b, th.text.a * 0.55f};
    th.plot_background = rgba_of(ImGui::GetColorU32(ImGuiCol_FrameBg));
    const plot::Rgba popup = rgba_of(ImGui::GetColorU32(ImGuiCol_PopupBg));
    th.legend_background = {popup.r, popup.g, popup.b, popup.a * 0.85f};
    return th;
}

ImVec2 im(plot::Vec2 p) { return ImVec2(p.x, p.y); }

// Walks a path of points laying dashes of `on` pixels with gaps of `off` (the SVG writer's dash pattern).
void dashed_path(ImDrawList* dl, std::span<const plot::Vec2> pts, ImU32 col, float w, float on, float off) {
    float phase = 0;  // distance into the current on+off period
    for (size_t i = 0; i + 1 < pts.size(); ++i) {
        const plot::Vec2 a = pts[i], b = pts[i + 1];
        const float len = std::hypot(b.x - a.x, b.y - a.y);
        if (len <= 0) continue;
        const float dx = (b.x - a.x) / len, dy = (b.y - a.y) / len;
        float t = 0;
        while (t < len) {
            const bool drawing = phase < on;
            const float step = std::min(len - t, drawing ? on - phase : on + off - phase);
            if (drawing)
                dl->AddLine(ImVec2(a.x + dx * t, a.y + dy * t), ImVec2(a.x + dx * (t + step), a.y + dy * (t + step)),
                            col, w);
            t += step;
            phase += step;
            if (phase >= on + off) phase = 0;
        }
    }
}

/// The window's canvas (plot/canvas.h): ImDrawList primitives in the current ImGui window with its font, heatmap
/// images as GL textures (heatmap_texture).
class ImDrawCanvas : public plot::Canvas {
public:
    explicit ImDrawCanvas(ImDrawList* dl) : m_dl(dl) {}
    [[nodiscard]] float text_width(std::string_view s) const override {
        return ImGui::CalcTextSize(s.data(), s.data() + s.size()).x;
    }
    [[nodiscard]] float line_height() const override { return ImGui::GetTextLineHeight(); }
    [[nodiscard]] float unit() const override { return ImGui::GetFontSize() / 16.0f; }
    void line(plot::Vec2 a, plot::Vec2 b, Rgba c, float width, bool dashed) override {
        const plot::Vec2 pts[2] = {a, b};
        polyline(pts, c, width, dashed);
    }
    void polyline(std::span<const plot::Vec2> pts, Rgba c, float width, bool dashed) override {
        if (pts.size() < 2) return;
        if (dashed) return dashed_path(m_dl, pts, to_u32(c), width, 6 * unit(), 4 * unit());
        if (pts.size() == 2) return m_dl->AddLine(im(pts[0]), im(pts[1]), to_u32(c), width);
        m_points.resize(pts.size());  // kept across calls: a figure's curves allocate once per canvas
        for (size_t i = 0; i < pts.size(); ++i) m_points[i] = im(pts[i]);
        m_dl->AddPolyline(m_points.data(), int(m_points.size()), to_u32(c), 0, width);
    }
    void rect_filled(const plot::Rect& r, Rgba c, float rounding, bool) override {
        m_dl->AddRectFilled(ImVec2(r.x0, r.y0), ImVec2(r.x1, r.y1), to_u32(c), rounding);
    }
    void rect_outline(const plot::Rect& r, Rgba c, float width) override {
        m_dl->AddRect(ImVec2(r.x0, r.y0), ImVec2(r.x1, r.y1), to_u32(c), 0, 0, width);
    }
    void circle_filled(plot::Vec2 p, float radius, Rgba c) override { m_dl->AddCircleFilled(im(p), radius, to_u32(c)); }
    void text(plot::Vec2 p, std::string_view s, Rgba c, plot::HAlign h, plot::VAlign v, plot::TextStyle) override {
        const float w = text_width(s);
        const float x = p.x - (h == plot::HAlign::Left ? 0.0f : h == plot::HAlign::Center ? w / 2 : w);
        const float y = p.y - (v == plot::VAlign::Top ? 0.0f : line_height() / 2);
        m_dl->AddText(ImVec2(x, y), to_u32(c), s.data(), s.data() + s.size());
    }
    void text_vertical(plot::Vec2 center, std::string_view s, Rgba c) override {
        add_text_vertical(m_dl, im(center), to_u32(c), s);
    }
    void heatmap_image(const plot::Rect& r, const plot::Heatmap& h) override {
        if (ImTextureID tex = heatmap_texture(ImGui::GetID("##heat"), h))
            m_dl->AddImage(tex, ImVec2(r.x0, r.y0), ImVec2(r.x1, r.y1), ImVec2(0, 0), ImVec2(1, 1));
    }
    // The same rectangles as Canvas::heatmap_cells, with colours kept per heatmap between frames and the vertices
    // written a row at a time (AddRectFilled's own two primitives per cell, without its per-call checks).
    void heatmap_cells(const plot::Rect& r, const plot::Heatmap& h) override {
        const std::vector<ImU32>& colors = heatmap_cell_colors(ImGui::GetID("##cells"), h);
        const float cw = r.w() / float(h.cols), ch = r.h() / float(h.rows);
        for (int row = 0; row < h.rows; ++row) {
            m_dl->PrimReserve(6 * h.cols, 4 * h.cols);
            const float y0 = r.y0 + float(row) * ch, y1 = r.y0 + float(row + 1) * ch;
            for (int col = 0; col < h.cols; ++col)
                m_dl->PrimRect(ImVec2(r.x0 + float(col) * cw, y0), ImVec2(r.x0 + float(col + 1) * cw, y1),
                               colors[size_t(row) * size_t(h.cols) + size_t(col)]);
        }
    }
    void vertical_gradient(const plot::Rect& r, std::span<const Rgba> stops) override {
        if (stops.empty()) return;
        const size_t n = stops.size();
        if (n == 1) return rect_filled(r, stops[0], 0, false);
        for (size_t i = 0; i + 1 < n; ++i) {  // stops[0] at the bottom
            const float y_lo = r.y1 - r.h() * float(i) / float(n - 1),
                        y_hi = r.y1 - r.h() * float(i + 1) / float(n - 1);
            const ImU32 top = to_u32(stops[i + 1]), bottom = to_u32(stops[i]);
            m_dl->AddRectFilledMultiColor(ImVec2(r.x0, y_hi), ImVec2(r.x1, y_lo + (i == 0 ? 0.0f : 0.5f)), top, top,
                                          bottom, bottom);
        }
    }
    void push_clip(const plot::Rect& r) override { m_dl->PushClipRect(ImVec2(r.x0, r.y0), ImVec2(r.x1, r.y1), true); }
    void pop_clip() override { m_dl->PopClipRect(); }

private:
    ImDrawList* m_dl;
    std::vector<ImVec2> m_points;
};

}  // namespace

void draw_colorbar(ImDrawList* dl, const plot::Heatmap& h, const plot::Rect& C, const plot::Theme* theme) {
    ImDrawCanvas c(dl);
    plot::paint_colorbar(c, h, C, theme ? *theme : screen_theme());
}

namespace {
PlotInteraction draw_figure_as(const Figure& f, const Figure& exported, ImVec2 size, const PaintOptions& opt,
                               const char* id);
}  // namespace

PlotInteraction draw_figure(const Figure& f, ImVec2 size, const PaintOptions& opt, const char* id) {
    const std::string text = plot::figure_text(f);
    request_glyphs(text);  // token labels of model output may hold characters the atlas lacks
    if (shown(text) == text) return draw_figure_as(f, f, size, opt, id);
    // Emoji in a label: ImGui draws their stand-ins (app/gfx/astral.h); exports get the real text.
    Figure g = f;
    plot::for_each_text(g, [](std::string& t) { t = shown(t); });
    return draw_figure_as(g, f, size, opt, id ? id : f.title.c_str());
}

namespace {
// f as drawn, `exported` as the export menu writes it (the same figure with its real text).
PlotInteraction draw_figure_as(const Figure& f, const Figure& exported, ImVec2 size, const PaintOptions& opt,
                               const char* id) {
    PlotInteraction out;
    ImGui::PushID(id ? id : f.title.c_str());
    const float avail = ImGui::GetContentRegionAvail().x;
    if (size.x <= 0) size.x = std::max(50.0f, avail + size.x);
    if (size.y <= 0) size.y = std::max(50.0f, size.x * 0.6f);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImGui::Dummy(size);
    const ImVec2 after = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float line_h = ImGui::GetTextLineHeight();
    const ImU32 dim_col = ImGui::GetColorU32(ImGuiCol_TextDisabled);

    // The figure itself: the one painter (plot/canvas.h) that SVG exports use too.
    const bool button = !opt.compact && opt.export_button && opt.title_button && !f.title.empty();
    plot::PaintStyle style;
    style.theme = opt.theme ? *opt.theme : screen_theme();
    style.compact = opt.compact;
    style.show_note = opt.show_note;
    style.title_reserve = (button ? ImGui::CalcTextSize(ts::tr("Export")).x + line_h : 0.0f) +
        (f.formula.empty() || !opt.export_button ? 0.0f : ImGui::CalcTextSize("(?)").x + line_h * 0.4f);
    // Rectangles up to 64×64 cells; beyond that one texture. Thumbnails use a texture from 16×16 cells on: the
    // attention grid draws L × H of them (GPT-2 small at 32 tokens: 144 × 1024 rectangles, ~600k vertices a frame,
    // ~100 ms per frame with Mesa's software renderer; as textures ~40k vertices).
    style.image_cells = opt.compact ? 16u * 16u : 64u * 64u;
    ImDrawCanvas canvas(dl);
    const plot::PaintedFigure painted =
        plot::paint_figure(canvas, f, plot::Rect{origin.x, origin.y, origin.x + size.x, origin.y + size.y}, style);
    const plot::Rect& P = painted.plot;
    const plot::Transform& T = painted.transform;

    // Interaction over the plot area only (title row and export button stay clickable).
    ImGui::SetCursorScreenPos(ImVec2(P.x0, P.y0));
    ImGui::InvisibleButton("##area", ImVec2(std::max(1.0f, P.w()), std::max(1.0f, P.h())));
    out.hovered = ImGui::IsItemHovered();
    out.clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
    if (!opt.compact && opt.export_button && ImGui::IsItemClicked(ImGuiMouseButton_Right)) ImGui::OpenPopup("export");
    const ImVec2 mouse = ImGui::GetIO().MousePos;

    // The title's hover help: the whole title when it was cut, the formula and note behind "(?)"; the Export button.
    if (!opt.compact && !f.title.empty()) {
        const plot::Rect& tt = painted.title_text;
        if (painted.title_elided && ImGui::IsMouseHoveringRect(ImVec2(tt.x0, tt.y0), ImVec2(tt.x1, tt.y1)) &&
            ImGui::IsWindowHovered())
            ImGui::SetTooltip("%s", f.title.c_str());
        if (!f.formula.empty() && opt.export_button) {
            const char* mark = "(?)";
            const ImVec2 ms = ImGui::CalcTextSize(mark);
            const ImVec2 mp(tt.x1 + line_h * 0.4f, tt.y0 + (tt.h() - ms.y) * 0.5f);
            dl->AddText(mp, dim_col, mark);
            if (ImGui::IsMouseHoveringRect(ImVec2(tt.x0, tt.y0), ImVec2(mp.x + ms.x, tt.y1)) &&
                ImGui::IsWindowHovered()) {
                ImGui::BeginTooltip();
                ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40.0f);
                ImGui::TextUnformatted(f.formula.c_str());
                if (!f.note.empty()) {
                    ImGui::Separator();
                    ImGui::TextUnformatted(f.note.c_str());
                }
                ImGui::PopTextWrapPos();
                ImGui::EndTooltip();
            }
        }
        if (button) {
            const plot::Rect tr = painted.layout.title;
            const ImVec2 bs = ImGui::CalcTextSize(ts::tr("Export"));
            ImGui::SetCursorScreenPos(
                ImVec2(origin.x + tr.x1 - bs.x - ImGui::GetStyle().FramePadding.x * 2, origin.y + tr.y0));
            if (ImGui::SmallButton(ts::tr("Export"))) ImGui::OpenPopup("export");
        }
    }
    if (!opt.compact && opt.export_button) export_popup(exported);

    // Selection marks over the figure.
    if (f.heatmap && f.heatmap->rows > 0 && opt.highlight_row >= 0 && opt.highlight_row < f.heatmap->rows) {
        const float ch = P.h() / float(f.heatmap->rows);
        dl->AddRect(ImVec2(P.x0, P.y0 + opt.highlight_row * ch), ImVec2(P.x1, P.y0 + (opt.highlight_row + 1) * ch),
                    IM_COL32(255, 80, 80, 255), 0, 0, 2.0f);
    }
    if (opt.selected)
        dl->AddRect(ImVec2(P.x0 - 2, P.y0 - 2), ImVec2(P.x1 + 2, P.y1 + 2), IM_COL32(255, 80, 80, 255), 0, 0, 3.0f);

    // Hover readout with exact values.
    if (out.hovered) {
        out.x = T.data_x(mouse.x);
        out.y = T.data_y(mouse.y);
        if (f.heatmap && f.heatmap->rows > 0 && f.heatmap->cols > 0) {
            const plot::Heatmap& h = *f.heatmap;
            const int c = std::clamp(int(std::floor(out.x)), 0, h.cols - 1);
            const int r = std::clamp(int(std::floor(out.y)), 0, h.rows - 1);
            out.row = r;
            out.col = c;
            const float cw = P.w() / float(h.cols), ch = P.h() / float(h.rows);
            dl->AddRect(ImVec2(P.x0 + c * cw, P.y0 + r * ch), ImVec2(P.x0 + (c + 1) * cw, P.y0 + (r + 1) * ch),
                        IM_COL32(255, 255, 255, 255), 0, 0, 2.0f);
            const float v = h.at(r, c);
            ImGui::BeginTooltip();
            // Positions in the whole matrix: a zoom window's cells start at row0/col0, an overview's span a block.
            const auto position = [](int i, int step, int first) {
                return step > 1 ? std::to_string(i * step) + "–" + std::to_string(i * step + step - 1)
                                : std::to_string(first + i);
            };
            ImGui::Text("%s %s (%s)", h.row_name.c_str(), category(f.y, r).c_str(), position(r, h.row_step, h.row0).c_str());
            ImGui::Text("%s %s (%s)", h.col_name.c_str(), category(f.x, c).c_str(), position(c, h.col_step, h.col0).c_str());
            if (h.cell_text.size() == size_t(h.rows) * size_t(h.cols))
                ImGui::Text("%s", h.cell_text[size_t(r) * size_t(h.cols) + size_t(c)].c_str());
            if (h.is_masked(r, c)) ImGui::Text(tr("%s = %s (masked: the mask hides this key from this query)"), h.value_label.c_str(), plot::format_value(v).c_str());
            else if (std::isfinite(v)) ImGui::Text("%s = %s %s", h.value_label.c_str(), plot::format_value(v).c_str(), h.value_unit.c_str());
            else if (std::isnan(v)) ImGui::Text(tr("%s = NaN (not a number: a NaN/Inf weight or input upstream)"), h.value_label.c_str());
            else ImGui::Text(tr("%s = %s (masked)"), h.value_label.c_str(), plot::format_value(v).c_str());
            ImGui::EndTooltip();
        } else {
            float best = line_h * 1.5f;
            for (size_t si = 0; si < f.series.size(); ++si) {
                const auto& s = f.series[si];
                for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
                    if (!std::isfinite(s.y[i])) continue;
                    float d;
                    if (s.kind == plot::SeriesKind::Bars) {
                        const float x0 = T.px(s.x[i] - s.bar_width / 2), x1 = T.px(s.x[i] + s.bar_width / 2);
                        d = (mouse.x >= x0 && mouse.x <= x1) ? 0.5f : 1e9f;
                    } else {
                        d = std::hypot(T.px(s.x[i]) - mouse.x, T.py(s.y[i]) - mouse.y);
                    }
                    if (d < best) { best = d; out.series = int(si); out.index = int(i); }
                }
            }
            ImGui::BeginTooltip();
            if (out.series >= 0) {
                const auto& s = f.series[size_t(out.series)];
                const size_t i = size_t(out.index);
                if (s.kind != plot::SeriesKind::Bars)
                    dl->AddCircle(ImVec2(T.px(s.x[i]), T.py(s.y[i])), 5.0f, IM_COL32(255, 255, 255, 255), 12, 2.0f);
                if (!s.name.empty()) ImGui::TextUnformatted(s.name.c_str());
                if (i < s.point_labels.size()) ImGui::Text("%s", s.point_labels[i].c_str());
                ImGui::Text("%s = %s", f.x.label.empty() ? "x" : f.x.label.c_str(),
                            f.x.categories.empty() ? plot::format_value(s.x[i]).c_str()
                                                   : category(f.x, int(std::lround(s.x[i]))).c_str());
                ImGui::Text("%s = %s %s", f.y.label.empty() ? "y" : f.y.label.c_str(), plot::format_value(s.y[i]).c_str(),
                            f.y.unit.c_str());
            } else if (!f.x.categories.empty()) {
                // A category axis: name the category under the mouse and each series' value there, never a
                // continuous coordinate between two categories.
                const int c = std::clamp(int(std::lround(out.x)), 0, int(f.x.categories.size()) - 1);
                ImGui::Text("%s = %s (%d)", f.x.label.empty() ? "x" : f.x.label.c_str(), category(f.x, c).c_str(), c);
                for (const auto& s : f.series)
                    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
                        if (std::lround(s.x[i]) == c && std::isfinite(s.y[i])) {
                            ImGui::Text("%s%s%s = %s %s", s.name.c_str(), s.name.empty() ? "" : ": ",
                                        f.y.label.empty() ? "y" : f.y.label.c_str(), plot::format_value(s.y[i]).c_str(),
                                        f.y.unit.c_str());
                            if (i < s.point_labels.size()) ImGui::TextUnformatted(s.point_labels[i].c_str());
                        }
            } else {
                ImGui::Text("%s = %s, %s = %s", f.x.label.empty() ? "x" : f.x.label.c_str(), plot::format_value(out.x).c_str(),
                            f.y.label.empty() ? "y" : f.y.label.c_str(), plot::format_value(out.y).c_str());
            }
            ImGui::EndTooltip();
        }
    }

    ImGui::SetCursorScreenPos(after);
    ImGui::PopID();
    return out;
}
}  // namespace

}  // namespace ts::gfx
