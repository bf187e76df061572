// The ImDrawList painter for Figures (see painter.h).
#include "app/i18n/tr.h"
#include "app/gfx/painter.h"

#include "app/gfx/heatmap_texture.h"
#include "app/plot/ticks.h"
#include "app/plot/writers.h"
#include "app/ui/astral.h"
#include "app/ui/soft_wrap.h"  // is_cjk_breakable: the CJK ranges
#include "app/ui/fonts.h"  // glyph requests; moves to gfx with the canvas of the architecture issue (#29)

#include <imgui_internal.h>  // ImTextCharFromUtf8

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
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

void add_text_vertical(ImDrawList* dl, ImVec2 center, ImU32 col, const char* text) {
    // Runs of upright CJK characters and of other text (turned clockwise, read top to bottom like the CJK).
    struct Run {
        std::string_view text;
        bool upright;
        float length;  // along the vertical
    };
    std::vector<Run> runs;
    const char* p = text;
    const char* end = text + std::strlen(text);
    bool any_upright = false;
    while (p < end) {
        unsigned c = 0;
        const int n = ImTextCharFromUtf8(&c, p, end);
        if (n <= 0) break;
        const bool up = ui::is_cjk_breakable(char32_t(c));  // CJK stands upright in vertical text (soft_wrap.h)
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

ImU32 with_alpha(ImU32 c, float a) {
    ImVec4 v = ImGui::ColorConvertU32ToFloat4(c);
    v.w *= a;
    return ImGui::ColorConvertFloat4ToU32(v);
}

std::string category(const plot::Axis& a, int i) {
    return i >= 0 && i < int(a.categories.size()) ? a.categories[size_t(i)] : std::to_string(i);
}

void dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 col, float w, float dash = 6.0f) {
    const float len = std::hypot(b.x - a.x, b.y - a.y);
    if (len <= 0) return;
    const ImVec2 d((b.x - a.x) / len, (b.y - a.y) / len);
    for (float t = 0; t < len; t += dash * 1.7f) {
        const float t1 = std::min(len, t + dash);
        dl->AddLine(ImVec2(a.x + d.x * t, a.y + d.y * t), ImVec2(a.x + d.x * t1, a.y + d.y * t1), col, w);
    }
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

void draw_colorbar(ImDrawList* dl, const plot::Heatmap& h, const plot::Rect& C) {
    const float line_h = ImGui::GetTextLineHeight();
    const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text), frame_col = with_alpha(text_col, 0.55f);
    const int n = 48;
    for (int i = 0; i < n; ++i) {
        const float t0 = float(i) / n, t1 = float(i + 1) / n;
        const ImU32 c = to_u32(plot::colormap_sample(h.cmap, 1.0f - (t0 + t1) / 2));
        dl->AddRectFilled(ImVec2(C.x0, C.y0 + C.h() * t0), ImVec2(C.x1, C.y0 + C.h() * t1 + 1), c);
    }
    dl->AddRect(ImVec2(C.x0, C.y0), ImVec2(C.x1, C.y1), frame_col);
    const plot::AxisTicks cbt = plot::colorbar_ticks(h, C.h(), line_h);
    float tw = 0;
    for (double v : cbt.values) {
        const float y = C.y1 - float((v - h.vmin) / (h.vmax - h.vmin)) * C.h();
        const std::string s = plot::format_tick(v, cbt.step);
        dl->AddLine(ImVec2(C.x1, y), ImVec2(C.x1 + 3, y), frame_col);
        dl->AddText(ImVec2(C.x1 + 5, y - line_h / 2), text_col, s.c_str());
        tw = std::max(tw, ImGui::CalcTextSize(s.c_str()).x);
    }
    const std::string ct = h.value_title();
    add_text_vertical(dl, ImVec2(C.x1 + 5 + tw + line_h * 0.7f, (C.y0 + C.y1) / 2), text_col, ct.c_str());
}

namespace {
PlotInteraction draw_figure_as(const Figure& f, const Figure& exported, ImVec2 size, const PaintOptions& opt,
                               const char* id);
}  // namespace

PlotInteraction draw_figure(const Figure& f, ImVec2 size, const PaintOptions& opt, const char* id) {
    const std::string text = plot::figure_text(f);
    ui::request_glyphs(text);  // token labels of model output may hold characters the atlas lacks
    if (ui::shown(text) == text) return draw_figure_as(f, f, size, opt, id);
    // Emoji in a label: ImGui draws their stand-ins (app/ui/astral.h); exports get the real text.
    Figure g = f;
    plot::for_each_text(g, [](std::string& t) { t = ui::shown(t); });
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
    auto measure = [](const std::string& s) { return ImGui::CalcTextSize(s.c_str()).x; };
    plot::FigureLayout L = plot::layout_figure(f, size.x, size.y, measure, line_h, opt.compact, opt.show_note);
    const float u = ImGui::GetFontSize() / 16.0f;  // line widths and offsets grow with the font (HiDPI, export scale)
    auto off = [&](plot::Rect r) { return plot::Rect{r.x0 + origin.x, r.y0 + origin.y, r.x1 + origin.x, r.y1 + origin.y}; };
    const plot::Rect P = off(L.plot);
    const plot::Transform T = plot::make_transform(f, P);
    const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
    const ImU32 dim_col = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    const ImU32 grid_col = with_alpha(text_col, 0.12f);
    const ImU32 frame_col = with_alpha(text_col, 0.55f);

    // Interaction over the plot area only (title row and export button stay clickable).
    ImGui::SetCursorScreenPos(ImVec2(P.x0, P.y0));
    ImGui::InvisibleButton("##area", ImVec2(std::max(1.0f, P.w()), std::max(1.0f, P.h())));
    out.hovered = ImGui::IsItemHovered();
    out.clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
    if (!opt.compact && opt.export_button && ImGui::IsItemClicked(ImGuiMouseButton_Right)) ImGui::OpenPopup("export");
    const ImVec2 mouse = ImGui::GetIO().MousePos;

    // Title, formula tooltip, export button.
    if (!opt.compact && !f.title.empty()) {
        const plot::Rect tr = off(L.title);
        const bool button = opt.export_button && opt.title_button;
        const float reserve = (button ? ImGui::CalcTextSize(ts::tr("Export")).x + line_h : 0.0f) +
                              (f.formula.empty() || !opt.export_button ? 0.0f : ImGui::CalcTextSize("(?)").x + line_h * 0.4f);
        // A title wider than the room left of the Export button is cut with "…" (whole UTF-8 characters) instead of
        // running under the button; the whole title is in the hover tooltip.
        std::string title = f.title;
        const float room = std::max(line_h, tr.w() - reserve);
        const bool elided = ImGui::CalcTextSize(title.c_str()).x > room;
        if (elided) {
            const float dots = ImGui::CalcTextSize("…").x;
            size_t cut = title.size();
            while (cut > 0 && ImGui::CalcTextSize(title.c_str(), title.c_str() + cut).x + dots > room) {
                --cut;
                while (cut > 0 && (static_cast<unsigned char>(title[cut]) & 0xC0) == 0x80) --cut;
            }
            title = title.substr(0, cut) + "…";
        }
        const ImVec2 ts = ImGui::CalcTextSize(title.c_str());
        const float tx = std::max(tr.x0, std::min((tr.x0 + tr.x1) * 0.5f - ts.x * 0.5f, tr.x1 - reserve - ts.x));
        dl->AddText(ImVec2(tx, tr.y0 + (tr.h() - ts.y) * 0.5f), text_col, title.c_str());
        if (elided && ImGui::IsMouseHoveringRect(ImVec2(tx, tr.y0), ImVec2(tx + ts.x, tr.y1)) && ImGui::IsWindowHovered())
            ImGui::SetTooltip("%s", f.title.c_str());
        if (!f.formula.empty() && opt.export_button) {  // the hover hint only on screen
            const char* mark = "(?)";
            const ImVec2 ms = ImGui::CalcTextSize(mark);
            const ImVec2 mp(tx + ts.x + line_h * 0.4f, tr.y0 + (tr.h() - ms.y) * 0.5f);
            dl->AddText(mp, dim_col, mark);
            const ImVec2 tmin(tx, tr.y0), tmax(mp.x + ms.x, tr.y1);
            if (ImGui::IsMouseHoveringRect(tmin, tmax) && ImGui::IsWindowHovered()) {
                ImGui::BeginTooltip();
                ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40.0f);
                ImGui::TextUnformatted(f.formula.c_str());
                if (!f.note.empty()) { ImGui::Separator(); ImGui::TextUnformatted(f.note.c_str()); }
                ImGui::PopTextWrapPos();
                ImGui::EndTooltip();
            }
        }
        if (button) {
            const ImVec2 bs = ImGui::CalcTextSize(ts::tr("Export"));
            ImGui::SetCursorScreenPos(ImVec2(tr.x1 - bs.x - ImGui::GetStyle().FramePadding.x * 2, tr.y0));
            if (ImGui::SmallButton(ts::tr("Export"))) ImGui::OpenPopup("export");
        }
    }
    if (!opt.compact && opt.export_button) export_popup(exported);

    // Plot background.
    dl->AddRectFilled(ImVec2(P.x0, P.y0), ImVec2(P.x1, P.y1), ImGui::GetColorU32(ImGuiCol_FrameBg));

    // Heatmap cells.
    if (f.heatmap && f.heatmap->rows > 0 && f.heatmap->cols > 0) {
        const plot::Heatmap& h = *f.heatmap;
        const float cw = P.w() / float(h.cols), ch = P.h() / float(h.rows);
        ImTextureID tex = nullptr;
        // Rectangles up to 64×64 cells; beyond that one texture. Thumbnails use a texture from 16×16 cells on: the
        // attention grid draws L × H of them (GPT-2 small at 32 tokens: 144 × 1024 rectangles, ~600k vertices a
        // frame, ~100 ms per frame with Mesa's software renderer; as textures ~40k vertices).
        const size_t n_cells = size_t(h.rows) * size_t(h.cols);
        if (n_cells > 64u * 64u || (opt.compact && n_cells > 16u * 16u)) tex = heatmap_texture(ImGui::GetID("##heat"), h);
        if (tex) {
            dl->AddImage(tex, ImVec2(P.x0, P.y0), ImVec2(P.x1, P.y1), ImVec2(0, 0), ImVec2(1, 1));
        } else {
            for (int r = 0; r < h.rows; ++r)
                for (int c = 0; c < h.cols; ++c) {
                    const Rgba col = plot::colormap_sample(h.cmap, h.shade(r, c));
                    const ImVec2 a(P.x0 + c * cw, P.y0 + r * ch), b(P.x0 + (c + 1) * cw, P.y0 + (r + 1) * ch);
                    dl->AddRectFilled(a, b, to_u32(col));
                }
        }
        const bool has_text = h.cell_text.size() == size_t(h.rows) * size_t(h.cols);
        if (has_text && !opt.compact && ch > line_h) {
            for (int r = 0; r < h.rows; ++r)
                for (int c = 0; c < h.cols; ++c) {
                    const std::string& t = h.cell_text[size_t(r) * size_t(h.cols) + size_t(c)];
                    const ImVec2 bs = ImGui::CalcTextSize(t.c_str());
                    if (bs.x > cw - 2) continue;
                    const float tv = h.shade(r, c);
                    const bool dark_cell = std::isnan(tv) || tv < 0.6f;
                    dl->AddText(ImVec2(P.x0 + (c + 0.5f) * cw - bs.x / 2, P.y0 + (r + 0.5f) * ch - bs.y / 2),
                                dark_cell ? IM_COL32(255, 255, 255, 235) : IM_COL32(0, 0, 0, 235), t.c_str());
                }
        } else if (h.annotate && !opt.compact && cw > measure("0.00") + 4 && ch > line_h) {
            for (int r = 0; r < h.rows; ++r)
                for (int c = 0; c < h.cols; ++c) {
                    const float v = h.at(r, c);
                    const std::string label = plot::heatmap_cell_label(v);
                    const char* buf = label.c_str();
                    const bool dark_cell = plot::heatmap_cell_is_dark(h, v);
                    const ImVec2 bs = ImGui::CalcTextSize(buf);
                    dl->AddText(ImVec2(P.x0 + (c + 0.5f) * cw - bs.x / 2, P.y0 + (r + 0.5f) * ch - bs.y / 2),
                                dark_cell ? IM_COL32(255, 255, 255, 230) : IM_COL32(0, 0, 0, 230), buf);
                }
        }
        if (opt.highlight_row >= 0 && opt.highlight_row < h.rows)
            dl->AddRect(ImVec2(P.x0, P.y0 + opt.highlight_row * ch), ImVec2(P.x1, P.y0 + (opt.highlight_row + 1) * ch),
                        IM_COL32(255, 80, 80, 255), 0, 0, 2.0f);
    }

    // Grid and ticks.
    std::vector<double> xt, yt;
    double xstep = 1, ystep = 1;
    if (!opt.compact) {
        const plot::AxisTicks ax = plot::axis_ticks(f, T, line_h, true), ay = plot::axis_ticks(f, T, line_h, false);
        xt = ax.values;
        xstep = ax.step;
        yt = ay.values;
        ystep = ay.step;
        if (!f.heatmap) {
            for (double v : xt) dl->AddLine(ImVec2(T.px(v), P.y0), ImVec2(T.px(v), P.y1), grid_col);
            for (double v : yt) dl->AddLine(ImVec2(P.x0, T.py(v)), ImVec2(P.x1, T.py(v)), grid_col);
            if (!f.y.log && T.b.ymin < 0 && T.b.ymax > 0)
                dl->AddLine(ImVec2(P.x0, T.py(0)), ImVec2(P.x1, T.py(0)), with_alpha(text_col, 0.35f));
            if (!f.x.log && f.x.categories.empty() && T.b.xmin < 0 && T.b.xmax > 0)
                dl->AddLine(ImVec2(T.px(0), P.y0), ImVec2(T.px(0), P.y1), with_alpha(text_col, 0.35f));
        }
    }

    // Series, reference lines, annotations (clipped to the plot).
    dl->PushClipRect(ImVec2(P.x0, P.y0), ImVec2(P.x1, P.y1), true);
    for (const auto& rl : f.ref_lines) {
        const ImU32 c = to_u32(rl.color);
        if (rl.vertical) dashed_line(dl, ImVec2(T.px(rl.pos), P.y0), ImVec2(T.px(rl.pos), P.y1), c, 1.5f * u, 6.0f * u);
        else dashed_line(dl, ImVec2(P.x0, T.py(rl.pos)), ImVec2(P.x1, T.py(rl.pos)), c, 1.5f * u, 6.0f * u);
        if (!rl.label.empty()) {
            const ImVec2 p = rl.vertical ? ImVec2(T.px(rl.pos) + 3, P.y0 + 2) : ImVec2(P.x0 + 3, T.py(rl.pos) - line_h);
            dl->AddText(p, c, rl.label.c_str());
        }
    }
    for (const auto& s : f.series) {
        const ImU32 c = to_u32(s.color);
        const size_t n = std::min(s.x.size(), s.y.size());
        if (s.kind == plot::SeriesKind::Line) {
            std::vector<ImVec2> pts;
            auto flush = [&]() {
                if (pts.size() >= 2) {
                    if (s.dashed)
                        for (size_t i = 0; i + 1 < pts.size(); i += 2) dl->AddLine(pts[i], pts[i + 1], c, s.width * u);
                    else dl->AddPolyline(pts.data(), int(pts.size()), c, 0, s.width * u);
                }
                pts.clear();
            };
            for (size_t i = 0; i < n; ++i) {
                if (!std::isfinite(s.y[i]) || (f.y.log && s.y[i] <= 0)) { flush(); continue; }
                pts.emplace_back(T.px(s.x[i]), T.py(s.y[i]));
            }
            flush();
        } else if (s.kind == plot::SeriesKind::Scatter) {
            for (size_t i = 0; i < n; ++i)
                if (std::isfinite(s.y[i])) dl->AddCircleFilled(ImVec2(T.px(s.x[i]), T.py(s.y[i])), s.marker * u, c);
        } else {
            for (size_t i = 0; i < n; ++i) {
                if (!std::isfinite(s.y[i])) continue;
                const float x0 = T.px(s.x[i] - s.bar_width / 2), x1 = T.px(s.x[i] + s.bar_width / 2);
                const double base = f.y.log ? std::max(T.b.ymin, s.bar_base) : s.bar_base;
                const float ya = T.py(std::max(s.y[i], base)), yb = T.py(std::min(s.y[i], base));
                dl->AddRectFilled(ImVec2(x0, ya), ImVec2(std::max(x0 + 1.0f, x1 - 0.5f), yb), c);
            }
        }
    }
    for (const auto& a : f.annotations)
        dl->AddText(ImVec2(T.px(a.x) + 4, T.py(a.y) - line_h - 2), to_u32(a.color), a.text.c_str());
    dl->PopClipRect();

    if (opt.selected) dl->AddRect(ImVec2(P.x0 - 2, P.y0 - 2), ImVec2(P.x1 + 2, P.y1 + 2), IM_COL32(255, 80, 80, 255), 0, 0, 3.0f);
    if (!opt.compact) dl->AddRect(ImVec2(P.x0, P.y0), ImVec2(P.x1, P.y1), frame_col, 0, 0, u);

    // Axis ticks, labels and titles.
    if (!opt.compact) {
        for (double v : xt) {
            const float x = T.px(v);
            dl->AddLine(ImVec2(x, P.y1), ImVec2(x, P.y1 + 4 * u), frame_col, u);
            const std::string s = plot::format_tick(v, xstep);
            const float w = measure(s);
            dl->AddText(ImVec2(x - w / 2, P.y1 + 5 * u), text_col, s.c_str());
        }
        for (double v : yt) {
            const float y = T.py(v);
            dl->AddLine(ImVec2(P.x0 - 4 * u, y), ImVec2(P.x0, y), frame_col, u);
            const std::string s = plot::format_tick(v, ystep);
            dl->AddText(ImVec2(P.x0 - 6 * u - measure(s), y - line_h / 2), text_col, s.c_str());
        }
        const bool cells = f.heatmap.has_value();
        const double half = cells ? 0.5 : 0.0;
        for (size_t i = 0; f.x.show_labels && i < f.x.categories.size(); i += size_t(L.category_stride_x)) {
            const float x = T.px(double(i) + half);
            const std::string& s = f.x.categories[i];
            const float w = measure(s);
            if (L.rotate_x_categories) {
                add_text_vertical(dl, ImVec2(x, P.y1 + 5 + std::min(w, L.x_label.y0 - L.plot.y1) / 2), text_col, s.c_str());
            } else {
                dl->AddText(ImVec2(x - w / 2, P.y1 + 4), text_col, s.c_str());
            }
        }
        for (size_t i = 0; f.y.show_labels && i < f.y.categories.size(); i += size_t(L.category_stride_y)) {
            const float y = T.py(double(i) + half);
            const std::string& s = f.y.categories[i];
            dl->AddText(ImVec2(P.x0 - 5 - measure(s), y - line_h / 2), text_col, s.c_str());
        }
        const std::string xtitle = f.x.shown_title(), ytitle = f.y.shown_title();
        if (!xtitle.empty()) {
            const plot::Rect xr = off(L.x_label);
            dl->AddText(ImVec2((xr.x0 + xr.x1) / 2 - measure(xtitle) / 2, xr.y0 + 2), text_col, xtitle.c_str());
        }
        if (!ytitle.empty()) {
            const plot::Rect yr = off(L.y_label);
            add_text_vertical(dl, ImVec2((yr.x0 + yr.x1) / 2, (yr.y0 + yr.y1) / 2), text_col, ytitle.c_str());
        }
    }

    // Colorbar.
    if (!opt.compact && f.heatmap && f.colorbar) draw_colorbar(dl, *f.heatmap, off(L.colorbar));

    // Note lines (exports).
    if (!opt.compact && opt.show_note && L.note.h() > 0) {
        const plot::Rect nr = off(L.note);
        float y = nr.y0;
        size_t a = 0;
        while (a <= f.note.size()) {
            size_t b = f.note.find('\n', a);
            if (b == std::string::npos) b = f.note.size();
            const std::string ln = f.note.substr(a, b - a);
            dl->AddText(ImVec2(nr.x0, y), dim_col, ln.c_str());
            y += line_h * 1.1f;
            a = b + 1;
        }
    }

    // Legend: inside the plot in the emptiest corner, or under the x-axis title when the layout put it there.
    if (!opt.compact && f.legend) {
        const float sw = line_h * 1.2f;
        std::vector<std::pair<size_t, ImVec2>> entries;  // series, top-left of its row (swatch starts here)
        if (L.legend_below.w() > 0) {
            for (const auto& e : plot::legend_flow(f, off(L.legend_below), measure, line_h)) entries.push_back({e.series, ImVec2(e.x, e.y)});
        } else {
            float w = 0;
            int count = 0;
            for (const auto& s : f.series)
                if (!s.name.empty()) { w = std::max(w, measure(s.name)); ++count; }
            if (count > 0) {
                const float bw = w + sw + line_h - 4, bh = count * line_h + 6;
                const plot::Rect box = plot::legend_box(plot::best_legend_location(f, T, bw, bh, 4), P, bw, bh, 4);
                dl->AddRectFilled(ImVec2(box.x0, box.y0), ImVec2(box.x1, box.y1),
                                  with_alpha(ImGui::GetColorU32(ImGuiCol_PopupBg), 0.85f), 3.0f);
                int k = 0;
                for (size_t si = 0; si < f.series.size(); ++si)
                    if (!f.series[si].name.empty()) entries.push_back({si, ImVec2(box.x0 + 4, box.y0 + 3 + float(k++) * line_h)});
            }
        }
        for (const auto& [si, p0] : entries) {
            const plot::Series& s = f.series[si];
            const ImU32 c = to_u32(s.color);
            const float y = p0.y;
            if (s.kind == plot::SeriesKind::Line) {
                if (s.dashed) dashed_line(dl, ImVec2(p0.x, y + line_h / 2), ImVec2(p0.x + sw, y + line_h / 2), c, s.width * u, 4.0f * u);
                else dl->AddLine(ImVec2(p0.x, y + line_h / 2), ImVec2(p0.x + sw, y + line_h / 2), c, s.width * u);
            } else {
                dl->AddRectFilled(ImVec2(p0.x, y + 3), ImVec2(p0.x + sw, y + line_h - 3), c);
            }
            dl->AddText(ImVec2(p0.x + 4 + sw, y), text_col, s.name.c_str());
        }
    }

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
