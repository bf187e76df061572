// SVG of Figures: true vector text and paths, heatmaps as rects or one embedded PNG, grids of figures with a
// shared colorbar (see writers.h).
#include "app/plot/writers.h"

#include "app/plot/ticks.h"
#include "core/util/utf8.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace ts::plot {

namespace {

// --- text helpers ---------------------------------------------------------------------------------------------------
std::string xml(const std::string& s) {
    std::string out;
    for (char c : s) {
        const unsigned char u = static_cast<unsigned char>(c);
        switch (c) {
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '&': out += "&amp;"; break;
            case '"': out += "&quot;"; break;
            default:
                if (u < 0x20 && c != '\t' && c != '\n') out += "?";
                else out.push_back(c);
        }
    }
    return out;
}

std::string f2(double v) {
    if (!std::isfinite(v)) v = 0;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    std::string s = buf;
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    if (s == "-0") s = "0";
    return s;
}

std::string rgb(const Rgba& c) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", int(std::lround(std::clamp(c.r, 0.f, 1.f) * 255)),
                  int(std::lround(std::clamp(c.g, 0.f, 1.f) * 255)), int(std::lround(std::clamp(c.b, 0.f, 1.f) * 255)));
    return buf;
}

std::string paint(const char* attr, const Rgba& c) {
    std::string s = std::string(" ") + attr + "=\"" + rgb(c) + "\"";
    if (c.a < 0.999f) s += std::string(" ") + attr + "-opacity=\"" + f2(c.a) + "\"";
    return s;
}

float text_width_em(const std::string& s) {
    float w = 0;
    for (size_t i = 0; i < s.size();) {
        const Utf8Char ch = utf8_char_at(s, i);  // core/util/utf8.h
        const char32_t cp = ch.cp;
        i += ch.len;
        w += (cp >= 0x2E80 && cp < 0xA000) || (cp >= 0xAC00 && cp < 0xD7A4) || (cp >= 0xFF00 && cp < 0xFF61) ? 1.0f : 0.6f;
    }
    return w;
}

std::vector<std::string> split_lines(const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (c == '\n') { out.push_back(cur); cur.clear(); }
        else cur.push_back(c);
    }
    out.push_back(cur);
    return out;
}

// --- SVG of one figure ---------------------------------------------------------------------------------------------

struct SvgCtx {
    std::ostringstream& os;
    const Theme& theme;
    float font, line_h, u;               ///< font size, line height, scale (1 = 13 px text)
    size_t image_cells;
    int clip_id;
};

void text(SvgCtx& c, float x, float y, const std::string& s, const char* anchor, const Rgba& col,
          const std::string& extra = "") {
    c.os << "<text x=\"" << f2(x) << "\" y=\"" << f2(y) << "\"";
    if (std::strcmp(anchor, "start") != 0) c.os << " text-anchor=\"" << anchor << "\"";
    c.os << paint("fill", col) << extra << ">" << xml(s) << "</text>\n";
}
void line(SvgCtx& c, float x0, float y0, float x1, float y1, const Rgba& col, float w, bool dashed = false) {
    c.os << "<path d=\"M" << f2(x0) << ' ' << f2(y0) << 'L' << f2(x1) << ' ' << f2(y1) << "\"" << paint("stroke", col)
         << " stroke-width=\"" << f2(w) << "\"" << (dashed ? " stroke-dasharray=\"" + f2(6 * c.u) + ' ' + f2(4 * c.u) + "\"" : "")
         << "/>\n";
}
void rect(SvgCtx& c, float x0, float y0, float w, float h, const Rgba& fill) {
    c.os << "<rect x=\"" << f2(x0) << "\" y=\"" << f2(y0) << "\" width=\"" << f2(std::max(0.0f, w)) << "\" height=\""
         << f2(std::max(0.0f, h)) << "\"" << paint("fill", fill) << "/>\n";
}
/// Baseline y that centres a line of text vertically on `y`.
float mid(const SvgCtx& c, float y) { return y + c.font * 0.35f; }

/// A vertical colorbar for h in the bar rectangle C, ticks and the rotated title to its right.
void svg_colorbar(SvgCtx& c, const Heatmap& h, const Rect& C) {
    const Theme& th = c.theme;
    const float font = c.font, line_h = c.line_h, u = c.u;
    auto measure = [&](const std::string& s) { return text_width_em(s) * font; };
    std::ostringstream& os = c.os;
    const std::string grad = "cbar" + std::to_string(c.clip_id++);
    os << "<linearGradient id=\"" << grad << "\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
    for (int i = 0; i <= 16; ++i)
        os << "<stop offset=\"" << f2(i / 16.0) << "\" stop-color=\"" << rgb(colormap_sample(h.cmap, float(i) / 16.0f)) << "\"/>";
    os << "</linearGradient>\n";
    os << "<rect x=\"" << f2(C.x0) << "\" y=\"" << f2(C.y0) << "\" width=\"" << f2(C.w()) << "\" height=\"" << f2(C.h())
       << "\" fill=\"url(#" << grad << ")\"" << paint("stroke", th.frame) << " stroke-width=\"" << f2(u) << "\"/>\n";
    const AxisTicks ct = colorbar_ticks(h, C.h(), line_h);
    float tw = 0;
    for (double v : ct.values) {
        const float y = C.y1 - float((v - h.vmin) / (h.vmax - h.vmin)) * C.h();
        line(c, C.x1, y, C.x1 + 3 * u, y, th.frame, u);
        const std::string s = format_tick(v, ct.step);
        tw = std::max(tw, measure(s));
        text(c, C.x1 + 5 * u, mid(c, y), s, "start", th.text);
    }
    const std::string title = h.value_title();
    const float x = C.x1 + 5 * u + tw + line_h * 0.7f + font * 0.35f, y = (C.y0 + C.y1) / 2;
    text(c, x, y, title, "middle", th.text, " transform=\"rotate(-90 " + f2(x) + ' ' + f2(y) + ")\"");
}

void svg_figure(SvgCtx& c, const Figure& f, const Rect& cell) {
    const Theme& th = c.theme;
    const float font = c.font, line_h = c.line_h, u = c.u;
    auto measure = [&](const std::string& s) { return text_width_em(s) * font; };
    FigureLayout L = layout_figure(f, cell.w(), cell.h(), measure, line_h, false, true);
    auto off = [&](Rect r) { return Rect{r.x0 + cell.x0, r.y0 + cell.y0, r.x1 + cell.x0, r.y1 + cell.y0}; };
    const Rect P = off(L.plot);
    const Transform T = make_transform(f, P);
    std::ostringstream& os = c.os;
    os << "<g>\n<title>" << xml(f.title) << "</title>\n";
    if (!f.formula.empty()) os << "<desc>" << xml(f.formula) << "</desc>\n";

    // Title.
    if (!f.title.empty()) {
        const Rect tr = off(L.title);
        text(c, (tr.x0 + tr.x1) / 2, mid(c, (tr.y0 + tr.y1) / 2), f.title, "middle", th.text, " font-weight=\"bold\"");
    }
    rect(c, P.x0, P.y0, P.w(), P.h(), th.plot_background);

    // Heatmap: cells as rectangles, or one embedded PNG scaled without smoothing when there are many.
    if (f.heatmap && f.heatmap->rows > 0 && f.heatmap->cols > 0) {
        const Heatmap& h = *f.heatmap;
        const float cw = P.w() / float(h.cols), ch = P.h() / float(h.rows);
        if (size_t(h.rows) * size_t(h.cols) > c.image_cells) {
            const std::vector<uint8_t> px = heatmap_rgba(h);
            const std::vector<uint8_t> png = encode_png(px.data(), h.cols, h.rows);
            os << "<image x=\"" << f2(P.x0) << "\" y=\"" << f2(P.y0) << "\" width=\"" << f2(P.w()) << "\" height=\""
               << f2(P.h()) << "\" preserveAspectRatio=\"none\" style=\"image-rendering:pixelated\" "
               << "href=\"data:image/png;base64," << base64(png.data(), png.size()) << "\"/>\n";
        } else {
            os << "<g shape-rendering=\"crispEdges\">\n";
            for (int r = 0; r < h.rows; ++r)
                for (int col = 0; col < h.cols; ++col) {
                    const Rgba cc = colormap_sample(h.cmap, h.shade(r, col));
                    // Overlap neighbours by a hair so anti-aliasing leaves no seams.
                    os << "<rect x=\"" << f2(P.x0 + col * cw) << "\" y=\"" << f2(P.y0 + r * ch) << "\" width=\""
                       << f2(cw + 0.3f) << "\" height=\"" << f2(ch + 0.3f) << "\" fill=\"" << rgb(cc) << "\"/>\n";
                }
            os << "</g>\n";
        }
        const bool has_text = h.cell_text.size() == size_t(h.rows) * size_t(h.cols);
        const Rgba white{1, 1, 1, 0.92f}, black{0, 0, 0, 0.92f};
        if (has_text && ch > line_h) {
            for (int r = 0; r < h.rows; ++r)
                for (int col = 0; col < h.cols; ++col) {
                    const std::string& t = h.cell_text[size_t(r) * size_t(h.cols) + size_t(col)];
                    if (measure(t) > cw - 2) continue;
                    const float tv = h.shade(r, col);
                    text(c, P.x0 + (col + 0.5f) * cw, mid(c, P.y0 + (r + 0.5f) * ch), t, "middle",
                         std::isnan(tv) || tv < 0.6f ? white : black);
                }
        } else if (h.annotate && cw > measure("0.00") + 4 && ch > line_h) {
            for (int r = 0; r < h.rows; ++r)
                for (int col = 0; col < h.cols; ++col) {
                    const float v = h.at(r, col);
                    text(c, P.x0 + (col + 0.5f) * cw, mid(c, P.y0 + (r + 0.5f) * ch), heatmap_cell_label(v), "middle",
                         heatmap_cell_is_dark(h, v) ? white : black);
                }
        }
    }

    // Grid lines (not over heatmaps).
    const AxisTicks xt = axis_ticks(f, T, line_h, true), yt = axis_ticks(f, T, line_h, false);
    if (!f.heatmap) {
        for (double v : xt.values) line(c, T.px(v), P.y0, T.px(v), P.y1, th.grid, u);
        for (double v : yt.values) line(c, P.x0, T.py(v), P.x1, T.py(v), th.grid, u);
        const Rgba zero{th.text.r, th.text.g, th.text.b, 0.35f};
        if (!f.y.log && T.b.ymin < 0 && T.b.ymax > 0) line(c, P.x0, T.py(0), P.x1, T.py(0), zero, u);
        if (!f.x.log && f.x.categories.empty() && T.b.xmin < 0 && T.b.xmax > 0) line(c, T.px(0), P.y0, T.px(0), P.y1, zero, u);
    }

    // Reference lines, series and annotations, clipped to the plot area.
    const std::string clip = "clip" + std::to_string(c.clip_id++);
    os << "<clipPath id=\"" << clip << "\"><rect x=\"" << f2(P.x0) << "\" y=\"" << f2(P.y0) << "\" width=\"" << f2(P.w())
       << "\" height=\"" << f2(P.h()) << "\"/></clipPath>\n<g clip-path=\"url(#" << clip << ")\">\n";
    for (const auto& rl : f.ref_lines) {
        if (rl.vertical) line(c, T.px(rl.pos), P.y0, T.px(rl.pos), P.y1, rl.color, 1.5f * u, true);
        else line(c, P.x0, T.py(rl.pos), P.x1, T.py(rl.pos), rl.color, 1.5f * u, true);
        if (!rl.label.empty()) {
            if (rl.vertical) text(c, T.px(rl.pos) + 3 * u, P.y0 + font, rl.label, "start", rl.color);
            else text(c, P.x0 + 3 * u, T.py(rl.pos) - 4 * u, rl.label, "start", rl.color);
        }
    }
    for (const auto& s : f.series) {
        const size_t n = std::min(s.x.size(), s.y.size());
        if (s.kind == SeriesKind::Line) {
            std::string d;
            bool pen_down = false;
            for (size_t i = 0; i < n; ++i) {
                if (!std::isfinite(s.y[i]) || (f.y.log && s.y[i] <= 0) || (f.x.log && s.x[i] <= 0)) { pen_down = false; continue; }
                d += (pen_down ? 'L' : 'M') + f2(T.px(s.x[i])) + ' ' + f2(T.py(s.y[i]));
                pen_down = true;
            }
            if (d.empty()) continue;
            os << "<path fill=\"none\"" << paint("stroke", s.color) << " stroke-width=\"" << f2(s.width * u)
               << "\" stroke-linejoin=\"round\"" << (s.dashed ? " stroke-dasharray=\"" + f2(6 * u) + ' ' + f2(4 * u) + "\"" : "")
               << " d=\"" << d << "\"/>\n";
        } else if (s.kind == SeriesKind::Scatter) {
            for (size_t i = 0; i < n; ++i)
                if (std::isfinite(s.y[i]))
                    os << "<circle cx=\"" << f2(T.px(s.x[i])) << "\" cy=\"" << f2(T.py(s.y[i])) << "\" r=\"" << f2(s.marker * u)
                       << "\"" << paint("fill", s.color) << "/>\n";
        } else {
            for (size_t i = 0; i < n; ++i) {
                if (!std::isfinite(s.y[i])) continue;
                const float x0 = T.px(s.x[i] - s.bar_width / 2), x1 = T.px(s.x[i] + s.bar_width / 2);
                const double base = f.y.log ? std::max(T.b.ymin, s.bar_base) : s.bar_base;
                const float ya = T.py(std::max(s.y[i], base)), yb = T.py(std::min(s.y[i], base));
                rect(c, x0, ya, std::max(1.0f, x1 - x0 - 0.5f), yb - ya, s.color);
            }
        }
    }
    for (const auto& a : f.annotations)
        text(c, T.px(a.x) + 4 * u, T.py(a.y) - 2 * u - line_h * 0.25f, a.text, "start", a.color.a == 0 ? th.text : a.color);
    os << "</g>\n";
    os << "<rect x=\"" << f2(P.x0) << "\" y=\"" << f2(P.y0) << "\" width=\"" << f2(P.w()) << "\" height=\"" << f2(P.h())
       << "\" fill=\"none\"" << paint("stroke", th.frame) << " stroke-width=\"" << f2(u) << "\"/>\n";

    // Ticks and tick labels.
    for (double v : xt.values) {
        const float x = T.px(v);
        line(c, x, P.y1, x, P.y1 + 4 * u, th.frame, u);
        text(c, x, P.y1 + 5 * u + font * 0.9f, format_tick(v, xt.step), "middle", th.text);
    }
    for (double v : yt.values) {
        const float y = T.py(v);
        line(c, P.x0 - 4 * u, y, P.x0, y, th.frame, u);
        text(c, P.x0 - 6 * u, mid(c, y), format_tick(v, yt.step), "end", th.text);
    }
    const double half = f.heatmap ? 0.5 : 0.0;
    for (size_t i = 0; f.x.show_labels && i < f.x.categories.size(); i += size_t(L.category_stride_x)) {
        const float x = T.px(double(i) + half);
        if (L.rotate_x_categories) {
            const float y = P.y1 + 5 * u;
            text(c, x + font * 0.35f, y, f.x.categories[i], "end", th.text,
                 " transform=\"rotate(-90 " + f2(x + font * 0.35f) + ' ' + f2(y) + ")\"");
        } else {
            text(c, x, P.y1 + 4 * u + font * 0.9f, f.x.categories[i], "middle", th.text);
        }
    }
    for (size_t i = 0; f.y.show_labels && i < f.y.categories.size(); i += size_t(L.category_stride_y))
        text(c, P.x0 - 5 * u, mid(c, T.py(double(i) + half)), f.y.categories[i], "end", th.text);
    const std::string xtitle = f.x.shown_title(), ytitle = f.y.shown_title();
    if (!xtitle.empty()) {
        const Rect xr = off(L.x_label);
        text(c, (xr.x0 + xr.x1) / 2, xr.y0 + 2 * u + font * 0.9f, xtitle, "middle", th.text);
    }
    if (!ytitle.empty()) {
        const Rect yr = off(L.y_label);
        const float x = (yr.x0 + yr.x1) / 2 + font * 0.35f, y = (yr.y0 + yr.y1) / 2;
        text(c, x, y, ytitle, "middle", th.text, " transform=\"rotate(-90 " + f2(x) + ' ' + f2(y) + ")\"");
    }

    // Colorbar.
    if (f.heatmap && f.colorbar) svg_colorbar(c, *f.heatmap, off(L.colorbar));

    // Legend: inside the plot in the emptiest corner, or under the x-axis title (as the screen painter).
    if (f.legend) {
        const float sw = line_h * 1.2f;
        std::vector<std::pair<size_t, std::pair<float, float>>> entries;  // series, top-left of its row
        if (L.legend_below.w() > 0) {
            for (const auto& e : legend_flow(f, off(L.legend_below), measure, line_h)) entries.push_back({e.series, {e.x, e.y}});
        } else {
            float w = 0;
            int count = 0;
            for (const auto& s : f.series)
                if (!s.name.empty()) { w = std::max(w, measure(s.name)); ++count; }
            if (count > 0) {
                const float bw = w + sw + line_h - 4 * u, bh = count * line_h + 6 * u;
                const Rect box = legend_box(best_legend_location(f, T, bw, bh, 4 * u), P, bw, bh, 4 * u);
                os << "<rect x=\"" << f2(box.x0) << "\" y=\"" << f2(box.y0) << "\" width=\"" << f2(box.w()) << "\" height=\""
                   << f2(box.h()) << "\" rx=\"" << f2(3 * u) << "\"" << paint("fill", th.legend_background) << "/>\n";
                int k = 0;
                for (size_t si = 0; si < f.series.size(); ++si)
                    if (!f.series[si].name.empty())
                        entries.push_back({si, {box.x0 + 4 * u, box.y0 + 3 * u + float(k++) * line_h}});
            }
        }
        for (const auto& [si, pos] : entries) {
            const Series& s = f.series[si];
            const float x0 = pos.first, y = pos.second;
            if (s.kind == SeriesKind::Line) line(c, x0, y + line_h / 2, x0 + sw, y + line_h / 2, s.color, s.width * u, s.dashed);
            else if (s.kind == SeriesKind::Scatter)
                os << "<circle cx=\"" << f2(x0 + sw / 2) << "\" cy=\"" << f2(y + line_h / 2) << "\" r=\""
                   << f2(std::min(s.marker * u, line_h * 0.3f)) << "\"" << paint("fill", s.color) << "/>\n";
            else rect(c, x0, y + 3 * u, sw, line_h - 6 * u, s.color);
            text(c, x0 + 4 * u + sw, mid(c, y + line_h / 2), s.name, "start", th.text);
        }
    }

    // Note lines under the x-axis title.
    if (L.note.h() > 0) {
        const Rect nr = off(L.note);
        const auto lines = split_lines(f.note);
        for (size_t i = 0; i < lines.size(); ++i)
            text(c, nr.x0, nr.y0 + line_h * 1.1f * float(i) + font, lines[i], "start", th.text_dim, " font-style=\"italic\"");
    }
    os << "</g>\n";
}

}  // namespace

// --- SVG ------------------------------------------------------------------------------------------------------------

int grid_columns(int n, int columns, int width, int height) {
    if (n <= 1) return 1;
    if (columns > 0) return std::min(columns, n);
    // About square cells: the column count whose cells come closest to the image's aspect ratio.
    int best = 1;
    double best_err = 1e30;
    for (int c = 1; c <= n; ++c) {
        const int rows = (n + c - 1) / c;
        const double aspect = (double(width) / c) / (double(height) / rows);
        const double err = std::abs(std::log(aspect / 1.4));
        if (err < best_err) { best_err = err; best = c; }
    }
    return best;
}

std::vector<Rect> grid_cells(int n, int columns, int width, int height) {
    std::vector<Rect> out;
    if (n <= 0) return out;
    const int cols = grid_columns(n, columns, width, height);
    const int rows = (n + cols - 1) / cols;
    const float cw = float(width) / float(cols), ch = float(height) / float(rows);
    for (int i = 0; i < n; ++i) {
        const int r = i / cols, c = i % cols;
        out.push_back({c * cw, r * ch, (c + 1) * cw, (r + 1) * ch});
    }
    return out;
}

bool shares_colorbar(const std::vector<Figure>& figs) {
    if (figs.size() < 2) return false;
    for (const auto& f : figs) {
        if (!f.heatmap || !f.colorbar) return false;
        const Heatmap &a = *f.heatmap, &b = *figs.front().heatmap;
        if (a.cmap != b.cmap || a.vmin != b.vmin || a.vmax != b.vmax || a.value_label != b.value_label ||
            a.value_unit != b.value_unit)
            return false;
    }
    return true;
}

GridLayout layout_grid(const std::vector<Figure>& figs, const ExportOptions& opt,
                       const std::function<float(const std::string&)>& text_width, float line_h) {
    GridLayout g;
    if (!shares_colorbar(figs)) {
        g.cells = grid_cells(int(figs.size()), opt.columns, opt.width, opt.height);
        return g;
    }
    // Strip: the parts a figure's own colorbar takes, plus the right margin.
    const float strip = colorbar_width(*figs.front().heatmap, text_width, line_h) + line_h * 0.5f;
    const int grid_w = std::max(16, int(std::floor(float(opt.width) - strip)));
    g.cells = grid_cells(int(figs.size()), opt.columns, grid_w, opt.height);
    // The bar spans the plots, from the top of the highest to the bottom of the lowest (square cells may leave
    // room below them).
    g.without_bars = figs;
    for (auto& f : g.without_bars) f.colorbar = false;
    float top = float(opt.height), bottom = 0.0f;
    for (size_t i = 0; i < figs.size(); ++i) {
        const Rect& c = g.cells[i];
        const FigureLayout L = layout_figure(g.without_bars[i], c.w(), c.h(), text_width, line_h, false, true);
        top = std::min(top, c.y0 + L.plot.y0);
        bottom = std::max(bottom, c.y0 + L.plot.y1);
    }
    const float x0 = float(grid_w) + line_h * 0.6f;
    g.colorbar = Rect{x0, top, x0 + line_h * 0.8f, std::max(top + line_h, bottom)};
    return g;
}

std::string figures_to_svg(const std::vector<Figure>& figs, const ExportOptions& opt) {
    if (opt.width < 16 || opt.height < 16 || opt.width > 32768 || opt.height > 32768)
        throw std::invalid_argument("image size must be 16..32768 pixels per side, got " + std::to_string(opt.width) + "x" +
                                    std::to_string(opt.height));
    if (!(opt.scale >= 0.25f && opt.scale <= 8.0f))
        throw std::invalid_argument("scale must be in [0.25, 8], got " + std::to_string(opt.scale));
    const Theme theme = export_theme(opt.dark, opt.transparent);
    std::ostringstream os;
    const float font = 13.0f * opt.scale;
    os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    os << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << opt.width << "\" height=\"" << opt.height
       << "\" viewBox=\"0 0 " << opt.width << ' ' << opt.height
       << "\" font-family=\"DejaVu Sans, Verdana, WenQuanYi Micro Hei, Noto Sans CJK SC, sans-serif\" font-size=\"" << f2(font)
       << "\">\n";
    if (figs.size() == 1) os << "<title>" << xml(figs.front().title) << "</title>\n";
    if (theme.background.a > 0) os << "<rect width=\"100%\" height=\"100%\"" << paint("fill", theme.background) << "/>\n";
    SvgCtx c{os, theme, font, font * 1.25f, opt.scale, opt.svg_image_cells, 0};
    const GridLayout g = layout_grid(figs, opt, [&](const std::string& s) { return text_width_em(s) * font; }, c.line_h);
    for (size_t i = 0; i < figs.size(); ++i) svg_figure(c, g.figure(figs, i), g.cells[i]);
    if (g.colorbar) svg_colorbar(c, *figs.front().heatmap, *g.colorbar);
    os << "</svg>\n";
    return os.str();
}

std::string figure_to_svg(const Figure& f, int width, int height) {
    ExportOptions o;
    o.width = width;
    o.height = height;
    return figures_to_svg({f}, o);
}

std::string figure_text(const std::vector<Figure>& figs) {
    std::string s;
    for (const auto& f : figs) s += figure_text(f);
    return s;
}

std::string figure_text(const Figure& f) {
    std::string s;
    for_each_text(f, [&](const std::string& t) { s += t; });
    return s;
}

}  // namespace ts::plot
