// SVG of Figures: true vector text and paths, heatmaps as rects or one embedded PNG, grids of figures with a
// shared colorbar (see writers.h).
#include "app/plot/writers.h"

#include "app/plot/canvas.h"

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

// --- the SVG canvas -------------------------------------------------------------------------------------------------

/// Canvas (canvas.h) writing SVG elements: vector text with its anchor, paths, rects, clip groups, gradients and
/// heatmap images as embedded PNG. `u` scales line widths (1 = 13 px text).
class SvgCanvas : public Canvas {
public:
    SvgCanvas(std::ostringstream& os, float font, float u) : m_os(os), m_font(font), m_u(u) {}
    [[nodiscard]] float text_width(std::string_view s) const override { return text_width_em(s) * m_font; }
    [[nodiscard]] float line_height() const override { return m_font * 1.25f; }
    [[nodiscard]] float unit() const override { return m_u; }

    void line(Vec2 a, Vec2 b, Rgba c, float width, bool dashed) override {
        cells(false);
        m_os << "<path d=\"M" << f2(a.x) << ' ' << f2(a.y) << 'L' << f2(b.x) << ' ' << f2(b.y) << "\""
             << paint("stroke", c) << " stroke-width=\"" << f2(width) << "\"" << dash(dashed) << "/>\n";
    }
    void polyline(std::span<const Vec2> pts, Rgba c, float width, bool dashed) override {
        cells(false);
        m_os << "<path fill=\"none\"" << paint("stroke", c) << " stroke-width=\"" << f2(width)
             << "\" stroke-linejoin=\"round\"" << dash(dashed) << " d=\"";
        for (size_t i = 0; i < pts.size(); ++i) m_os << (i ? 'L' : 'M') << f2(pts[i].x) << ' ' << f2(pts[i].y);
        m_os << "\"/>\n";
    }
    void rect_filled(const Rect& r, Rgba c, float rounding, bool seamless) override {
        // Heatmap cells overlap their neighbours by a hair, in a crisp-edged group, so no seam shows between them.
        cells(seamless);
        const float grow = seamless ? 0.3f : 0.0f;
        m_os << "<rect x=\"" << f2(r.x0) << "\" y=\"" << f2(r.y0) << "\" width=\"" << f2(std::max(0.0f, r.w()) + grow)
             << "\" height=\"" << f2(std::max(0.0f, r.h()) + grow) << "\"";
        if (rounding > 0) m_os << " rx=\"" << f2(rounding) << "\"";
        m_os << paint("fill", c) << "/>\n";
    }
    void rect_outline(const Rect& r, Rgba c, float width) override {
        cells(false);
        m_os << "<rect x=\"" << f2(r.x0) << "\" y=\"" << f2(r.y0) << "\" width=\"" << f2(r.w()) << "\" height=\""
             << f2(r.h()) << "\" fill=\"none\"" << paint("stroke", c) << " stroke-width=\"" << f2(width) << "\"/>\n";
    }
    void circle_filled(Vec2 p, float radius, Rgba c) override {
        cells(false);
        m_os << "<circle cx=\"" << f2(p.x) << "\" cy=\"" << f2(p.y) << "\" r=\"" << f2(radius) << "\""
             << paint("fill", c) << "/>\n";
    }
    void text(Vec2 p, std::string_view s, Rgba c, HAlign h, VAlign v, TextStyle style) override {
        cells(false);
        // SVG places the baseline: a line's top is 0.9 em above it, its middle 0.35 em.
        const float y = p.y + m_font * (v == VAlign::Top ? 0.9f : 0.35f);
        m_os << "<text x=\"" << f2(p.x) << "\" y=\"" << f2(y) << "\"" << anchor(h) << paint("fill", c)
             << (style == TextStyle::Title      ? " font-weight=\"bold\""
                     : style == TextStyle::Note ? " font-style=\"italic\""
                                                : "")
             << ">" << xml(std::string(s)) << "</text>\n";
    }
    void text_vertical(Vec2 center, std::string_view s, Rgba c) override {
        cells(false);
        // Turned -90° about its baseline point, which sits 0.35 em right of the text's visual centre.
        const float x = center.x + m_font * 0.35f, y = center.y;
        m_os << "<text x=\"" << f2(x) << "\" y=\"" << f2(y) << "\" text-anchor=\"middle\"" << paint("fill", c)
             << " transform=\"rotate(-90 " << f2(x) << ' ' << f2(y) << ")\">" << xml(std::string(s)) << "</text>\n";
    }
    void heatmap_image(const Rect& r, const Heatmap& h) override {
        cells(false);
        const std::vector<uint8_t> px = heatmap_rgba(h);
        const std::vector<uint8_t> png = encode_png(px.data(), h.cols, h.rows);
        m_os << "<image x=\"" << f2(r.x0) << "\" y=\"" << f2(r.y0) << "\" width=\"" << f2(r.w()) << "\" height=\""
             << f2(r.h()) << "\" preserveAspectRatio=\"none\" style=\"image-rendering:pixelated\" "
             << "href=\"data:image/png;base64," << base64(png.data(), png.size()) << "\"/>\n";
    }
    void vertical_gradient(const Rect& r, std::span<const Rgba> stops) override {
        cells(false);
        const std::string id = "grad" + std::to_string(m_ids++);
        m_os << "<linearGradient id=\"" << id << "\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
        for (size_t i = 0; i < stops.size(); ++i)
            m_os << "<stop offset=\"" << f2(stops.size() > 1 ? double(i) / double(stops.size() - 1) : 0.0)
                 << "\" stop-color=\"" << rgb(stops[i]) << "\"/>";
        m_os << "</linearGradient>\n<rect x=\"" << f2(r.x0) << "\" y=\"" << f2(r.y0) << "\" width=\"" << f2(r.w())
             << "\" height=\"" << f2(r.h()) << "\" fill=\"url(#" << id << ")\"/>\n";
    }
    void push_clip(const Rect& r) override {
        cells(false);
        const std::string id = "clip" + std::to_string(m_ids++);
        m_os << "<clipPath id=\"" << id << "\"><rect x=\"" << f2(r.x0) << "\" y=\"" << f2(r.y0) << "\" width=\""
             << f2(r.w()) << "\" height=\"" << f2(r.h()) << "\"/></clipPath>\n<g clip-path=\"url(#" << id << ")\">\n";
    }
    void pop_clip() override {
        cells(false);
        m_os << "</g>\n";
    }
    void begin_figure(const Figure& f) override {
        cells(false);
        m_os << "<g>\n<title>" << xml(f.title) << "</title>\n";
        if (!f.formula.empty()) m_os << "<desc>" << xml(f.formula) << "</desc>\n";
    }
    void end_figure() override {
        cells(false);
        m_os << "</g>\n";
    }

    /// Closes an open group of heatmap cells.
    void finish() { cells(false); }

private:
    void cells(bool on) {
        if (on == m_in_cells) return;
        m_os << (on ? "<g shape-rendering=\"crispEdges\">\n" : "</g>\n");
        m_in_cells = on;
    }
    std::string dash(bool dashed) const {
        return dashed ? " stroke-dasharray=\"" + f2(6 * m_u) + ' ' + f2(4 * m_u) + "\"" : std::string();
    }
    static const char* anchor(HAlign h) {
        return h == HAlign::Left ? "" : h == HAlign::Center ? " text-anchor=\"middle\"" : " text-anchor=\"end\"";
    }
    std::ostringstream& m_os;
    float m_font, m_u;
    int m_ids = 0;
    bool m_in_cells = false;
};

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
    SvgCanvas c(os, font, opt.scale);
    const GridLayout g = layout_grid(
        figs, opt, [&](const std::string& s) { return c.text_width(s); }, c.line_height());
    PaintStyle style;
    style.theme = theme;
    style.show_note = true;
    style.image_cells = opt.svg_image_cells;
    for (size_t i = 0; i < figs.size(); ++i) paint_figure(c, g.figure(figs, i), g.cells[i], style);
    if (g.colorbar) paint_colorbar(c, *figs.front().heatmap, *g.colorbar, theme);
    c.finish();
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
