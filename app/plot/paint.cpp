// paint_figure: the one painter of Figures on any Canvas (see canvas.h), and the recording canvas.
#include "app/plot/canvas.h"

#include "app/plot/ticks.h"
#include "core/util/utf8.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ts::plot {

float text_width_em(std::string_view s) {
    float w = 0;
    for (size_t i = 0; i < s.size();) {
        const Utf8Char ch = utf8_char_at(s, i);  // core/util/utf8.h
        const char32_t cp = ch.cp;
        i += ch.len;
        w += (cp >= 0x2E80 && cp < 0xA000) || (cp >= 0xAC00 && cp < 0xD7A4) || (cp >= 0xFF00 && cp < 0xFF61) ? 1.0f
                                                                                                             : 0.6f;
    }
    return w;
}

namespace {

Rgba or_text(const Rgba& c, const Theme& th) { return c.a == 0 ? th.text : c; }
Rgba with_alpha(Rgba c, float a) {
    c.a = a;
    return c;
}

// Text on a heatmap cell: white on dark cells (and on masked or non-finite ones, drawn grey), black on light ones;
// a diverging map is dark at both ends.
bool cell_is_dark(const Heatmap& h, int r, int col) {
    const float t = h.shade(r, col);
    if (std::isnan(t)) return true;
    return h.cmap == Colormap::Diverging ? std::abs(t - 0.5f) > 0.3f : t < 0.6f;
}

// `s` cut at a character boundary with "…" so that it is at most `room` wide.
std::string elide(const Canvas& c, const std::string& s, float room) {
    const float dots = c.text_width("…");
    size_t cut = s.size();
    while (cut > 0 && c.text_width(std::string_view(s).substr(0, cut)) + dots > room) {
        --cut;
        while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    }
    return s.substr(0, cut) + "…";
}

// `s` itself when it is at most `room` wide, else elide()'s cut.
std::string fit(const Canvas& c, const std::string& s, float room) {
    return c.text_width(s) <= room ? s : elide(c, s, room);
}

std::vector<std::string> split_lines(const std::string& s) {
    std::vector<std::string> out(1);
    for (char ch : s) {
        if (ch == '\n') out.emplace_back();
        else out.back().push_back(ch);
    }
    return out;
}

}  // namespace

void Canvas::heatmap_cells(const Rect& P, const Heatmap& h) {
    const float cw = P.w() / float(h.cols), ch = P.h() / float(h.rows);
    for (int r = 0; r < h.rows; ++r)
        for (int col = 0; col < h.cols; ++col)
            rect_filled({P.x0 + col * cw, P.y0 + r * ch, P.x0 + (col + 1) * cw, P.y0 + (r + 1) * ch},
                        colormap_sample(h.cmap, h.shade(r, col)), 0, true);
}

void paint_colorbar(Canvas& c, const Heatmap& h, const Rect& C, const Theme& th) {
    const float line_h = c.line_height(), u = c.unit();
    constexpr int kStops = 33;
    std::vector<Rgba> stops(kStops);
    for (int i = 0; i < kStops; ++i) stops[size_t(i)] = colormap_sample(h.cmap, float(i) / float(kStops - 1));
    c.vertical_gradient(C, stops);
    c.rect_outline(C, th.frame, u);
    const AxisTicks ticks = colorbar_ticks(h, C.h(), line_h);
    float tw = 0;
    for (double v : ticks.values) {
        const float y = C.y1 - float((v - h.vmin) / (h.vmax - h.vmin)) * C.h();
        c.line({C.x1, y}, {C.x1 + 3 * u, y}, th.frame, u);
        const std::string s = format_tick(v, ticks.step);
        tw = std::max(tw, c.text_width(s));
        c.text({C.x1 + 5 * u, y}, s, th.text, HAlign::Left, VAlign::Middle);
    }
    c.text_vertical({C.x1 + 5 * u + tw + line_h * 0.7f, (C.y0 + C.y1) / 2}, h.value_title(), th.text);
}

PaintedFigure paint_figure(Canvas& c, const Figure& f, const Rect& cell, const PaintStyle& st) {
    const Theme& th = st.theme;
    const float line_h = c.line_height(), u = c.unit();
    const auto measure = [&](const std::string& s) { return c.text_width(s); };
    PaintedFigure out;
    out.layout = layout_figure(f, cell.w(), cell.h(), measure, line_h, st.compact, st.show_note);
    const FigureLayout& L = out.layout;
    const auto off = [&](Rect r) { return Rect{r.x0 + cell.x0, r.y0 + cell.y0, r.x1 + cell.x0, r.y1 + cell.y0}; };
    const Rect P = off(L.plot);
    out.plot = P;
    out.transform = make_transform(f, P);
    const Transform& T = out.transform;
    c.begin_figure(f);

    // Title, centred, cut with "…" when it does not fit left of the reserved room.
    if (!st.compact && !f.title.empty()) {
        const Rect tr = off(L.title);
        const float room = std::max(line_h, tr.w() - st.title_reserve);
        std::string title = f.title;
        if (measure(title) > room) {
            title = elide(c, title, room);
            out.title_elided = true;
        }
        const float tw = measure(title), mid = (tr.x0 + tr.x1) / 2;
        const float tx = std::max(tr.x0, std::min(mid - tw / 2, tr.x1 - st.title_reserve - tw));
        // Centred when it fits there (anchored at the middle, so a target whose font is wider or narrower than
        // measured still centres it), else pushed left of the reserved room.
        if (tx == mid - tw / 2)
            c.text({mid, (tr.y0 + tr.y1) / 2}, title, th.text, HAlign::Center, VAlign::Middle, TextStyle::Title);
        else c.text({tx, (tr.y0 + tr.y1) / 2}, title, th.text, HAlign::Left, VAlign::Middle, TextStyle::Title);
        out.title_text = Rect{tx, tr.y0, tx + tw, tr.y1};
    }
    c.rect_filled(P, th.plot_background);

    // Heatmap: a rectangle per cell, or one image when there are many; values (or the figure's cell text) printed
    // in the cells when they fit.
    if (f.heatmap && f.heatmap->rows > 0 && f.heatmap->cols > 0) {
        const Heatmap& h = *f.heatmap;
        const float cw = P.w() / float(h.cols), ch = P.h() / float(h.rows);
        if (size_t(h.rows) * size_t(h.cols) > st.image_cells) {
            c.heatmap_image(P, h);
        } else {
            c.heatmap_cells(P, h);
        }
        const Rgba white{1, 1, 1, 0.92f}, black{0, 0, 0, 0.92f};
        const bool has_text = h.cell_text.size() == size_t(h.rows) * size_t(h.cols);
        const bool values = h.annotate && cw > measure("0.00") + 4 * u;
        if (!st.compact && ch > line_h && (has_text || values)) {
            for (int r = 0; r < h.rows; ++r)
                for (int col = 0; col < h.cols; ++col) {
                    const std::string t = has_text ? h.cell_text[size_t(r) * size_t(h.cols) + size_t(col)]
                                                   : heatmap_cell_label(h.at(r, col));
                    if (has_text && measure(t) > cw - 2 * u) continue;
                    c.text({P.x0 + (col + 0.5f) * cw, P.y0 + (r + 0.5f) * ch}, t,
                           cell_is_dark(h, r, col) ? white : black, HAlign::Center, VAlign::Middle);
                }
        }
    }

    // Grid lines (not over heatmaps) and the zero lines.
    AxisTicks xt, yt;
    if (!st.compact) {
        xt = axis_ticks(f, T, line_h, true);
        yt = axis_ticks(f, T, line_h, false);
        if (!f.heatmap) {
            for (double v : xt.values) c.line({T.px(v), P.y0}, {T.px(v), P.y1}, th.grid, u);
            for (double v : yt.values) c.line({P.x0, T.py(v)}, {P.x1, T.py(v)}, th.grid, u);
            const Rgba zero = with_alpha(th.text, 0.35f);
            if (!f.y.log && T.b.ymin < 0 && T.b.ymax > 0) c.line({P.x0, T.py(0)}, {P.x1, T.py(0)}, zero, u);
            if (!f.x.log && f.x.categories.empty() && T.b.xmin < 0 && T.b.xmax > 0)
                c.line({T.px(0), P.y0}, {T.px(0), P.y1}, zero, u);
        }
    }

    // Reference lines, series and annotations, clipped to the plot area.
    c.push_clip(P);
    for (const auto& rl : f.ref_lines) {
        const Rgba col = or_text(rl.color, th);
        if (rl.vertical) c.line({T.px(rl.pos), P.y0}, {T.px(rl.pos), P.y1}, col, 1.5f * u, true);
        else c.line({P.x0, T.py(rl.pos)}, {P.x1, T.py(rl.pos)}, col, 1.5f * u, true);
        if (rl.label.empty()) continue;
        if (rl.vertical) c.text({T.px(rl.pos) + 3 * u, P.y0 + 2 * u}, rl.label, col, HAlign::Left, VAlign::Top);
        else c.text({P.x0 + 3 * u, T.py(rl.pos) - line_h}, rl.label, col, HAlign::Left, VAlign::Top);
    }
    for (const auto& s : f.series) {
        const Rgba col = or_text(s.color, th);
        const size_t n = std::min(s.x.size(), s.y.size());
        if (s.kind == SeriesKind::Line) {
            // A gap where y is not finite or a log axis meets a value <= 0.
            std::vector<Vec2> pts;
            const auto flush = [&] {
                if (pts.size() >= 2) c.polyline(pts, col, s.width * u, s.dashed);
                pts.clear();
            };
            for (size_t i = 0; i < n; ++i) {
                if (!std::isfinite(s.y[i]) || (f.y.log && s.y[i] <= 0) || (f.x.log && s.x[i] <= 0)) {
                    flush();
                    continue;
                }
                pts.push_back({T.px(s.x[i]), T.py(s.y[i])});
            }
            flush();
        } else if (s.kind == SeriesKind::Scatter) {
            for (size_t i = 0; i < n; ++i)
                if (std::isfinite(s.y[i])) c.circle_filled({T.px(s.x[i]), T.py(s.y[i])}, s.marker * u, col);
        } else {
            for (size_t i = 0; i < n; ++i) {
                if (!std::isfinite(s.y[i])) continue;
                const float x0 = T.px(s.x[i] - s.bar_width / 2), x1 = T.px(s.x[i] + s.bar_width / 2);
                const double base = f.y.log ? std::max(T.b.ymin, s.bar_base) : s.bar_base;
                const float ya = T.py(std::max(s.y[i], base)), yb = T.py(std::min(s.y[i], base));
                c.rect_filled({x0, ya, std::max(x0 + 1.0f, x1 - 0.5f), yb}, col);
            }
        }
    }
    for (const auto& a : f.annotations)
        c.text({T.px(a.x) + 4 * u, T.py(a.y) - line_h - 2 * u}, a.text, or_text(a.color, th), HAlign::Left,
               VAlign::Top);
    c.pop_clip();
    if (st.compact) {
        c.end_figure();
        return out;
    }
    c.rect_outline(P, th.frame, u);

    // Ticks, tick labels, category labels and axis titles.
    for (double v : xt.values) {
        const float x = T.px(v);
        c.line({x, P.y1}, {x, P.y1 + 4 * u}, th.frame, u);
        c.text({x, P.y1 + 5 * u}, format_tick(v, xt.step), th.text, HAlign::Center, VAlign::Top);
    }
    for (double v : yt.values) {
        const float y = T.py(v);
        c.line({P.x0 - 4 * u, y}, {P.x0, y}, th.frame, u);
        c.text({P.x0 - 6 * u, y}, format_tick(v, yt.step), th.text, HAlign::Right, VAlign::Middle);
    }
    const double half = f.heatmap ? 0.5 : 0.0;
    for (size_t i = 0; f.x.show_labels && i < f.x.categories.size(); i += size_t(L.category_stride_x)) {
        const float x = T.px(double(i) + half);
        const std::string& s = f.x.categories[i];
        if (L.rotate_x_categories) {
            // The layout caps the room under the plot: a longer label is cut with "…", not clipped mid-glyph.
            const std::string shown = fit(c, s, std::max(0.0f, L.x_label.y0 - L.plot.y1 - 5 * u));
            c.text_vertical({x, P.y1 + 5 * u + measure(shown) / 2}, shown, th.text);
        } else c.text({x, P.y1 + 4 * u}, s, th.text, HAlign::Center, VAlign::Top);
    }
    for (size_t i = 0; f.y.show_labels && i < f.y.categories.size(); i += size_t(L.category_stride_y))
        c.text({P.x0 - 5 * u, T.py(double(i) + half)},
               fit(c, f.y.categories[i], std::max(0.0f, P.x0 - 5 * u - off(L.y_label).x1)), th.text, HAlign::Right,
               VAlign::Middle);
    const std::string xtitle = f.x.shown_title(), ytitle = f.y.shown_title();
    if (!xtitle.empty()) {
        const Rect xr = off(L.x_label);
        c.text({(xr.x0 + xr.x1) / 2, xr.y0 + 2 * u}, xtitle, th.text, HAlign::Center, VAlign::Top);
    }
    if (!ytitle.empty()) {
        const Rect yr = off(L.y_label);
        c.text_vertical({(yr.x0 + yr.x1) / 2, (yr.y0 + yr.y1) / 2}, ytitle, th.text);
    }

    if (f.heatmap && f.colorbar) paint_colorbar(c, *f.heatmap, off(L.colorbar), th);

    // Note lines under the x-axis title (exports).
    if (L.note.h() > 0) {
        const Rect nr = off(L.note);
        const auto lines = split_lines(f.note);
        for (size_t i = 0; i < lines.size(); ++i)
            c.text({nr.x0, nr.y0 + line_h * 1.1f * float(i)}, lines[i], th.text_dim, HAlign::Left, VAlign::Top,
                   TextStyle::Note);
    }

    // Legend: inside the plot in the emptiest corner, or under the x-axis title when the layout put it there.
    if (f.legend) {
        const float sw = line_h * 1.2f;
        std::vector<std::pair<size_t, Vec2>> entries;  // series, top-left of its row
        if (L.legend_below.w() > 0) {
            for (const auto& e : legend_flow(f, off(L.legend_below), measure, line_h))
                entries.push_back({e.series, {e.x, e.y}});
        } else {
            float w = 0;
            int count = 0;
            for (const auto& s : f.series)
                if (!s.name.empty()) {
                    w = std::max(w, measure(s.name));
                    ++count;
                }
            if (count > 0) {
                const float bw = w + sw + line_h - 4 * u, bh = float(count) * line_h + 6 * u;
                const Rect box = legend_box(best_legend_location(f, T, bw, bh, 4 * u), P, bw, bh, 4 * u);
                c.rect_filled(box, th.legend_background, 3 * u);
                int k = 0;
                for (size_t si = 0; si < f.series.size(); ++si)
                    if (!f.series[si].name.empty())
                        entries.push_back({si, {box.x0 + 4 * u, box.y0 + 3 * u + float(k++) * line_h}});
            }
        }
        for (const auto& [si, p] : entries) {
            const Series& s = f.series[si];
            const Rgba col = or_text(s.color, th);
            const float ym = p.y + line_h / 2;
            if (s.kind == SeriesKind::Line) c.line({p.x, ym}, {p.x + sw, ym}, col, s.width * u, s.dashed);
            else if (s.kind == SeriesKind::Scatter)
                c.circle_filled({p.x + sw / 2, ym}, std::min(s.marker * u, line_h * 0.3f), col);
            else c.rect_filled({p.x, p.y + 3 * u, p.x + sw, p.y + line_h - 3 * u}, col);
            c.text({p.x + 4 * u + sw, ym}, s.name, th.text, HAlign::Left, VAlign::Middle);
        }
    }
    c.end_figure();
    return out;
}

// --- RecordingCanvas -------------------------------------------------------------------------------------------------

namespace {
std::string num(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", v);
    return b;
}
std::string pt(Vec2 p) { return num(p.x) + " " + num(p.y); }
std::string box(const Rect& r) { return num(r.x0) + " " + num(r.y0) + " " + num(r.x1) + " " + num(r.y1); }
std::string color(const Rgba& c) {
    char b[48];
    std::snprintf(b, sizeof b, "rgba(%.3f,%.3f,%.3f,%.3f)", c.r, c.g, c.b, c.a);
    return b;
}
const char* name(HAlign h) { return h == HAlign::Left ? "left" : h == HAlign::Center ? "center" : "right"; }
const char* name(VAlign v) { return v == VAlign::Top ? "top" : "middle"; }
const char* name(TextStyle s) { return s == TextStyle::Title ? "title" : s == TextStyle::Note ? "note" : "normal"; }
}  // namespace

float RecordingCanvas::text_width(std::string_view s) const { return text_width_em(s) * m_font; }
void RecordingCanvas::line(Vec2 a, Vec2 b, Rgba c, float width, bool dashed) {
    m_calls.push_back("line " + pt(a) + " " + pt(b) + " " + color(c) + " " + num(width) + (dashed ? " dashed" : ""));
}
void RecordingCanvas::polyline(std::span<const Vec2> pts, Rgba c, float width, bool dashed) {
    std::string s = "polyline " + color(c) + " " + num(width) + (dashed ? " dashed" : "");
    for (const Vec2& p : pts) s += " " + pt(p);
    m_calls.push_back(std::move(s));
}
void RecordingCanvas::rect_filled(const Rect& r, Rgba c, float rounding, bool seamless) {
    m_calls.push_back("rect " + box(r) + " " + color(c) + " " + num(rounding) + (seamless ? " cell" : ""));
}
void RecordingCanvas::rect_outline(const Rect& r, Rgba c, float width) {
    m_calls.push_back("frame " + box(r) + " " + color(c) + " " + num(width));
}
void RecordingCanvas::circle_filled(Vec2 center, float radius, Rgba c) {
    m_calls.push_back("circle " + pt(center) + " " + num(radius) + " " + color(c));
}
void RecordingCanvas::text(Vec2 p, std::string_view s, Rgba c, HAlign h, VAlign v, TextStyle style) {
    m_calls.push_back("text " + pt(p) + " " + name(h) + " " + name(v) + " " + name(style) + " " + color(c) + " '" +
                      std::string(s) + "'");
}
void RecordingCanvas::text_vertical(Vec2 center, std::string_view s, Rgba c) {
    m_calls.push_back("vtext " + pt(center) + " " + color(c) + " '" + std::string(s) + "'");
}
void RecordingCanvas::heatmap_image(const Rect& r, const Heatmap& h) {
    m_calls.push_back("image " + box(r) + " " + std::to_string(h.rows) + "x" + std::to_string(h.cols));
}
void RecordingCanvas::vertical_gradient(const Rect& r, std::span<const Rgba> stops) {
    std::string s = "gradient " + box(r);
    for (const Rgba& c : stops) s += " " + color(c);
    m_calls.push_back(std::move(s));
}
void RecordingCanvas::push_clip(const Rect& r) { m_calls.push_back("clip " + box(r)); }
void RecordingCanvas::pop_clip() { m_calls.push_back("unclip"); }
void RecordingCanvas::begin_figure(const Figure& f) { m_calls.push_back("figure '" + f.title + "'"); }
void RecordingCanvas::end_figure() { m_calls.push_back("end figure"); }

}  // namespace ts::plot
