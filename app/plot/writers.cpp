// CSV and SVG writers for Figures.
#include "app/plot/writers.h"

#include "app/plot/ticks.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace ts::plot {

namespace {
std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += "\"\"";
        else out.push_back(c);
    }
    return out + "\"";
}
std::string num(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}
std::string xml(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '&': out += "&amp;"; break;
            case '"': out += "&quot;"; break;
            default: out.push_back(c);
        }
    }
    return out;
}
std::string rgb(const Rgba& c) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", int(std::lround(c.r * 255)), int(std::lround(c.g * 255)),
                  int(std::lround(c.b * 255)));
    return buf;
}
}  // namespace

std::string figure_to_csv(const Figure& f) {
    std::ostringstream os;
    if (f.heatmap) {
        const Heatmap& h = *f.heatmap;
        os << csv_field(h.row_name + "\\" + h.col_name);
        for (int c = 0; c < h.cols; ++c)
            os << ',' << csv_field(c < int(f.x.categories.size()) ? f.x.categories[size_t(c)] : std::to_string(c));
        os << '\n';
        for (int r = 0; r < h.rows; ++r) {
            os << csv_field(r < int(f.y.categories.size()) ? f.y.categories[size_t(r)] : std::to_string(r));
            for (int c = 0; c < h.cols; ++c) {
                const float v = h.at(r, c);
                os << ',' << (std::isnan(v) ? "-inf" : num(v));
            }
            os << '\n';
        }
    }
    for (const auto& s : f.series) {
        os << "series," << csv_field(s.name) << '\n';
        os << csv_field(f.x.title().empty() ? "x" : f.x.title()) << ','
           << csv_field(f.y.title().empty() ? "y" : f.y.title());
        if (!s.point_labels.empty()) os << ",label";
        os << '\n';
        for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
            os << num(s.x[i]) << ',' << num(s.y[i]);
            if (!s.point_labels.empty()) os << ',' << csv_field(i < s.point_labels.size() ? s.point_labels[i] : "");
            os << '\n';
        }
    }
    return os.str();
}

std::string figure_to_svg(const Figure& f, int width, int height) {
    const float font = 13.0f, line_h = 16.0f;
    auto measure = [&](const std::string& s) { return float(s.size()) * font * 0.55f; };
    const FigureLayout L = layout_figure(f, float(width), float(height), measure, line_h);
    const Transform T = make_transform(f, L.plot);
    std::ostringstream os;
    os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
       << "\" viewBox=\"0 0 " << width << ' ' << height << "\" font-family=\"DejaVu Sans, sans-serif\" font-size=\""
       << font << "\">\n";
    os << "<title>" << xml(f.title) << "</title>\n";
    if (!f.formula.empty()) os << "<desc>" << xml(f.formula) << "</desc>\n";
    os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    os << "<text x=\"" << width / 2 << "\" y=\"" << L.title.y1 - 4 << "\" text-anchor=\"middle\" font-weight=\"bold\">"
       << xml(f.title) << "</text>\n";
    const Rect& P = L.plot;
    if (f.heatmap) {
        const Heatmap& h = *f.heatmap;
        const float cw = P.w() / float(std::max(1, h.cols)), ch = P.h() / float(std::max(1, h.rows));
        for (int r = 0; r < h.rows; ++r)
            for (int c = 0; c < h.cols; ++c) {
                const Rgba col = colormap_sample(h.cmap, normalize_value(h.at(r, c), h.vmin, h.vmax));
                os << "<rect x=\"" << P.x0 + c * cw << "\" y=\"" << P.y0 + r * ch << "\" width=\"" << cw + 0.3f
                   << "\" height=\"" << ch + 0.3f << "\" fill=\"" << rgb(col) << "\"/>\n";
            }
    }
    os << "<rect x=\"" << P.x0 << "\" y=\"" << P.y0 << "\" width=\"" << P.w() << "\" height=\"" << P.h()
       << "\" fill=\"none\" stroke=\"#444\"/>\n";
    // Ticks.
    auto tick_x = [&](double v, const std::string& label) {
        const float x = T.px(v);
        os << "<line x1=\"" << x << "\" y1=\"" << P.y1 << "\" x2=\"" << x << "\" y2=\"" << P.y1 + 4
           << "\" stroke=\"#444\"/><text x=\"" << x << "\" y=\"" << P.y1 + 4 + font << "\" text-anchor=\"middle\">"
           << xml(label) << "</text>\n";
    };
    auto tick_y = [&](double v, const std::string& label) {
        const float y = T.py(v);
        os << "<line x1=\"" << P.x0 - 4 << "\" y1=\"" << y << "\" x2=\"" << P.x0 << "\" y2=\"" << y
           << "\" stroke=\"#444\"/><text x=\"" << P.x0 - 6 << "\" y=\"" << y + font * 0.35f
           << "\" text-anchor=\"end\">" << xml(label) << "</text>\n";
    };
    const Bounds& b = T.b;
    if (!f.x.categories.empty()) {
        for (size_t i = 0; i < f.x.categories.size(); i += size_t(L.category_stride_x))
            tick_x(f.heatmap ? double(i) + 0.5 : double(i), f.x.categories[i]);
    } else {
        const auto ticks = f.x.log ? log_ticks(b.xmin, b.xmax) : nice_ticks(b.xmin, b.xmax, 7);
        const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1.0;
        for (double v : ticks) tick_x(v, format_tick(v, step));
    }
    if (!f.y.categories.empty()) {
        for (size_t i = 0; i < f.y.categories.size(); i += size_t(L.category_stride_y))
            tick_y(f.heatmap ? double(i) + 0.5 : double(i), f.y.categories[i]);
    } else {
        const auto ticks = f.y.log ? log_ticks(b.ymin, b.ymax) : nice_ticks(b.ymin, b.ymax, 6);
        const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1.0;
        for (double v : ticks) tick_y(v, format_tick(v, step));
    }
    os << "<text x=\"" << (P.x0 + P.x1) / 2 << "\" y=\"" << L.x_label.y1 - 3 << "\" text-anchor=\"middle\">"
       << xml(f.x.title()) << "</text>\n";
    const float yx = (L.y_label.x0 + L.y_label.x1) / 2 + font * 0.35f, yy = (P.y0 + P.y1) / 2;
    os << "<text x=\"" << yx << "\" y=\"" << yy << "\" text-anchor=\"middle\" transform=\"rotate(-90 " << yx << ' '
       << yy << ")\">" << xml(f.y.title()) << "</text>\n";
    // Series.
    os << "<g clip-path=\"none\">\n";
    for (const auto& s : f.series) {
        if (s.kind == SeriesKind::Line) {
            os << "<polyline fill=\"none\" stroke=\"" << rgb(s.color) << "\" stroke-width=\"" << s.width << '"'
               << (s.dashed ? " stroke-dasharray=\"6 4\"" : "") << " points=\"";
            for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
                if (std::isfinite(s.y[i])) os << T.px(s.x[i]) << ',' << T.py(s.y[i]) << ' ';
            os << "\"/>\n";
        } else if (s.kind == SeriesKind::Scatter) {
            for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
                if (std::isfinite(s.y[i]))
                    os << "<circle cx=\"" << T.px(s.x[i]) << "\" cy=\"" << T.py(s.y[i]) << "\" r=\"" << s.marker
                       << "\" fill=\"" << rgb(s.color) << "\"/>\n";
        } else {
            for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
                if (!std::isfinite(s.y[i])) continue;
                const float x0 = T.px(s.x[i] - s.bar_width / 2), x1 = T.px(s.x[i] + s.bar_width / 2);
                const float y0 = T.py(std::max(s.y[i], s.bar_base)), y1 = T.py(std::min(s.y[i], s.bar_base));
                os << "<rect x=\"" << x0 << "\" y=\"" << y0 << "\" width=\"" << std::max(0.5f, x1 - x0)
                   << "\" height=\"" << std::max(0.0f, y1 - y0) << "\" fill=\"" << rgb(s.color)
                   << "\" fill-opacity=\"" << s.color.a << "\"/>\n";
            }
        }
    }
    os << "</g>\n";
    // Colorbar.
    if (f.heatmap && f.colorbar) {
        const Heatmap& h = *f.heatmap;
        const Rect& C = L.colorbar;
        const int n = 64;
        for (int i = 0; i < n; ++i) {
            const Rgba col = colormap_sample(h.cmap, 1.0f - (i + 0.5f) / n);
            os << "<rect x=\"" << C.x0 << "\" y=\"" << C.y0 + C.h() * i / n << "\" width=\"" << C.w()
               << "\" height=\"" << C.h() / n + 0.5f << "\" fill=\"" << rgb(col) << "\"/>\n";
        }
        const auto ticks = nice_ticks(h.vmin, h.vmax, 6);
        const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1.0;
        for (double v : ticks) {
            const float y = C.y1 - float((v - h.vmin) / (h.vmax - h.vmin)) * C.h();
            os << "<text x=\"" << C.x1 + 4 << "\" y=\"" << y + font * 0.35f << "\">" << xml(format_tick(v, step))
               << "</text>\n";
        }
        os << "<text x=\"" << C.x0 << "\" y=\"" << C.y0 - 4 << "\">"
           << xml(h.value_unit.empty() ? h.value_label : h.value_label + " [" + h.value_unit + "]") << "</text>\n";
    }
    os << "</svg>\n";
    return os.str();
}

}  // namespace ts::plot
