// Figure helpers: histograms, heatmap construction, bounds, layout and the data-to-pixel transform.
#include "app/plot/figure.h"

#include "app/plot/ticks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace ts::plot {

Series histogram_series(std::span<const float> values, int bins, double lo, double hi, bool density) {
    if (bins < 1) throw std::invalid_argument("histogram_series: bins must be >= 1, got " + std::to_string(bins));
    double dmin = std::numeric_limits<double>::infinity(), dmax = -dmin;
    size_t n_finite = 0;
    for (float v : values)
        if (std::isfinite(v)) { dmin = std::min(dmin, double(v)); dmax = std::max(dmax, double(v)); ++n_finite; }
    if (std::isnan(lo)) lo = n_finite ? dmin : 0.0;
    if (std::isnan(hi)) hi = n_finite ? dmax : 1.0;
    if (!(hi > lo)) { lo -= 0.5; hi += 0.5; }
    const double w = (hi - lo) / bins;
    std::vector<double> counts(size_t(bins), 0.0);
    size_t n_in = 0;
    for (float v : values) {
        if (!std::isfinite(v) || v < lo || v > hi) continue;
        const int b = std::min(bins - 1, int((double(v) - lo) / w));
        counts[size_t(b)] += 1.0;
        ++n_in;
    }
    Series s;
    s.kind = SeriesKind::Bars;
    s.bar_width = w;
    for (int b = 0; b < bins; ++b) {
        s.x.push_back(lo + (b + 0.5) * w);
        s.y.push_back(density && n_in ? counts[size_t(b)] / (double(n_in) * w) : counts[size_t(b)]);
    }
    return s;
}

std::string heatmap_cell_label(float v) {
    char buf[16];
    if (std::isfinite(v)) std::snprintf(buf, sizeof buf, std::abs(v) < 10 ? "%.2f" : "%.0f", v);
    else std::snprintf(buf, sizeof buf, "%s", std::isnan(v) ? "NaN" : v > 0 ? "inf" : "-inf");
    return buf;
}

float Heatmap::shade(int r, int c) const { return is_masked(r, c) ? NAN : normalize_value(at(r, c), vmin, vmax); }

bool heatmap_cell_is_dark(const Heatmap& h, float v) {
    const float t = normalize_value(v, h.vmin, h.vmax);
    return h.cmap == Colormap::Diverging ? std::abs(t - 0.5f) > 0.3f : (std::isnan(t) || t < 0.6f);
}

Heatmap make_heatmap(int rows, int cols, std::span<const float> values, Colormap cmap, std::string value_label,
                     std::string value_unit) {
    if (rows < 0 || cols < 0 || size_t(rows) * size_t(cols) != values.size())
        throw std::invalid_argument("make_heatmap: " + std::to_string(rows) + "x" + std::to_string(cols) +
                                    " cells need " + std::to_string(size_t(rows) * size_t(cols)) + " values, got " +
                                    std::to_string(values.size()));
    Heatmap h;
    h.rows = rows;
    h.cols = cols;
    h.values.assign(values.begin(), values.end());
    h.cmap = cmap;
    h.value_label = std::move(value_label);
    h.value_unit = std::move(value_unit);
    // The finite range, eight lanes at a time so the compiler can keep it in vector registers (this loop was most of
    // the time of building a frame's attention figures): a non-finite value counts as +inf for the minimum and
    // -inf for the maximum, i.e. not at all.
    constexpr float inf = std::numeric_limits<float>::infinity(), big = std::numeric_limits<float>::max();
    float lo8[8], hi8[8];
    std::fill(lo8, lo8 + 8, inf);
    std::fill(hi8, hi8 + 8, -inf);
    const size_t n = values.size(), n8 = n / 8 * 8;
    for (size_t i = 0; i < n8; i += 8)
        for (size_t j = 0; j < 8; ++j) {
            const float v = values[i + j];
            const bool finite = std::abs(v) <= big;  // false for NaN and ±inf
            const float a = finite ? v : inf, b = finite ? v : -inf;
            lo8[j] = a < lo8[j] ? a : lo8[j];
            hi8[j] = b > hi8[j] ? b : hi8[j];
        }
    float lo = *std::min_element(lo8, lo8 + 8), hi = *std::max_element(hi8, hi8 + 8);
    for (size_t i = n8; i < n; ++i)
        if (std::isfinite(values[i])) {
            lo = std::min(lo, values[i]);
            hi = std::max(hi, values[i]);
        }
    if (!std::isfinite(lo)) { lo = 0; hi = 1; }
    if (cmap == Colormap::Diverging) {
        const float m = std::max(std::abs(lo), std::abs(hi));
        lo = -m;
        hi = m;
    }
    // A constant field is shown against zero (one attention weight of 1 on a one-token text: 0 .. 1, not 0.5 .. 1.5).
    if (!(hi > lo)) {
        if (lo > 0) lo = 0;
        else if (hi < 0) hi = 0;
        else lo -= 0.5f, hi += 0.5f;
    }
    h.vmin = lo;
    h.vmax = hi;
    return h;
}

Bounds figure_bounds(const Figure& f) {
    Bounds b;
    const double inf = std::numeric_limits<double>::infinity();
    double xmin = inf, xmax = -inf, ymin = inf, ymax = -inf;
    auto addx = [&](double v) { if (std::isfinite(v) && (!f.x.log || v > 0)) { xmin = std::min(xmin, v); xmax = std::max(xmax, v); } };
    auto addy = [&](double v) { if (std::isfinite(v) && (!f.y.log || v > 0)) { ymin = std::min(ymin, v); ymax = std::max(ymax, v); } };
    bool has_bars = false;
    for (const auto& s : f.series) {
        for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
            if (!std::isfinite(s.y[i])) continue;
            if (s.kind == SeriesKind::Bars) {
                addx(s.x[i] - s.bar_width / 2);
                addx(s.x[i] + s.bar_width / 2);
                addy(s.bar_base);
                has_bars = true;
            } else {
                addx(s.x[i]);
            }
            addy(s.y[i]);
        }
    }
    if (f.heatmap) {
        xmin = 0; xmax = f.heatmap->cols; ymin = 0; ymax = f.heatmap->rows;
    } else {
        for (const auto& a : f.annotations) { addx(a.x); addy(a.y); }
        if (!std::isfinite(xmin)) { xmin = 0; xmax = 1; }
        if (!std::isfinite(ymin)) { ymin = 0; ymax = 1; }
        auto pad = [](double& lo, double& hi, bool log, bool keep_lo) {
            if (log) {
                if (hi <= lo) { lo /= 2; hi *= 2; }
                const double r = std::log10(hi / lo) * 0.05;
                lo /= std::pow(10.0, r);
                hi *= std::pow(10.0, r);
                return;
            }
            if (hi <= lo) { lo -= 0.5; hi += 0.5; }
            const double r = (hi - lo) * 0.05;
            if (!keep_lo) lo -= r;
            hi += r;
        };
        pad(xmin, xmax, f.x.log, false);
        pad(ymin, ymax, f.y.log, has_bars && ymin == 0.0);
    }
    b = {xmin, xmax, ymin, ymax};
    if (std::isfinite(f.x.min)) b.xmin = f.x.min;
    if (std::isfinite(f.x.max)) b.xmax = f.x.max;
    if (std::isfinite(f.y.min)) b.ymin = f.y.min;
    if (std::isfinite(f.y.max)) b.ymax = f.y.max;
    if (!(b.xmax > b.xmin)) b.xmax = b.xmin + 1;
    if (!(b.ymax > b.ymin)) b.ymax = b.ymin + 1;
    return b;
}

std::string Heatmap::value_title() const {
    if (value_unit.empty()) return value_label;
    return value_label + " [" + value_unit + "]";
}

std::string Axis::shown_title() const {
    if (!show_labels) return {};
    return title();
}

float colorbar_width(const Heatmap& h, const std::function<float(const std::string&)>& text_width, float line_h) {
    const auto ticks = nice_ticks(h.vmin, h.vmax, 6);
    const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1.0;
    float tw = 0;
    for (double v : ticks) tw = std::max(tw, text_width(format_tick(v, step)));
    return line_h * 0.6f + line_h * 0.8f + 5 + tw + line_h * 1.3f;
}

Rect legend_box(LegendLocation loc, const Rect& plot, float box_w, float box_h, float margin) {
    const bool west = loc == LegendLocation::NorthWest || loc == LegendLocation::SouthWest;
    const bool south = loc == LegendLocation::SouthEast || loc == LegendLocation::SouthWest;
    const float x0 = west ? plot.x0 + margin : plot.x1 - margin - box_w;
    const float y0 = south ? plot.y1 - margin - box_h : plot.y0 + margin;
    return Rect{x0, y0, x0 + box_w, y0 + box_h};
}

double legend_overlap(const Figure& f, const Transform& t, const Rect& box) {
    double n = 0;
    for (const auto& s : f.series) {
        const size_t m = std::min(s.x.size(), s.y.size());
        if (s.kind == SeriesKind::Bars) {
            for (size_t i = 0; i < m; ++i) {
                if (!std::isfinite(s.y[i])) continue;
                const float xa = t.px(s.x[i] - s.bar_width / 2), xb = t.px(s.x[i] + s.bar_width / 2);
                const float ya = t.py(s.bar_base), yb = t.py(s.y[i]);
                const float w = std::min(std::max(xa, xb), box.x1) - std::max(std::min(xa, xb), box.x0);
                const float h = std::min(std::max(ya, yb), box.y1) - std::max(std::min(ya, yb), box.y0);
                if (w > 0 && h > 0) n += double(w) * double(h) / 4.0;
            }
        } else if (s.kind == SeriesKind::Scatter) {
            for (size_t i = 0; i < m; ++i)
                if (std::isfinite(s.y[i]) && box.contains(t.px(s.x[i]), t.py(s.y[i]))) n += 1;
        } else {
            for (size_t i = 0; i + 1 < m; ++i) {
                if (!std::isfinite(s.y[i]) || !std::isfinite(s.y[i + 1])) continue;
                const float x0 = t.px(s.x[i]), y0 = t.py(s.y[i]), x1 = t.px(s.x[i + 1]), y1 = t.py(s.y[i + 1]);
                // A point a log axis cannot place (<= 0) is NaN here: skip the segment (converting NaN to int is
                // undefined; it once made this loop run for minutes).
                const float len = std::hypot(x1 - x0, y1 - y0);
                if (!std::isfinite(len)) continue;
                const int k = std::clamp(int(std::min(len / 2.0f, 4096.0f)), 1, 4096);
                for (int j = 0; j < k; ++j) {
                    const float a = float(j) / float(k);
                    if (box.contains(x0 + a * (x1 - x0), y0 + a * (y1 - y0))) n += 1;
                }
            }
        }
    }
    for (const auto& a : f.annotations)
        if (box.contains(t.px(a.x), t.py(a.y))) n += 20;
    return n;
}

LegendLocation best_legend_location(const Figure& f, const Transform& t, float box_w, float box_h, float margin) {
    if (f.legend_location != LegendLocation::Best) return f.legend_location;
    LegendLocation best = LegendLocation::NorthEast;
    double least = INFINITY;
    for (LegendLocation loc : {LegendLocation::NorthEast, LegendLocation::NorthWest, LegendLocation::SouthEast,
                               LegendLocation::SouthWest}) {
        const double n = legend_overlap(f, t, legend_box(loc, t.plot, box_w, box_h, margin));
        if (n < least) { least = n; best = loc; }
    }
    return best;
}

int note_lines(const std::string& note) {
    if (note.empty()) return 0;
    return 1 + int(std::count(note.begin(), note.end(), '\n'));
}

FigureLayout layout_figure(const Figure& f, float width, float height,
                           const std::function<float(const std::string&)>& text_width, float line_h, bool compact,
                           bool show_note) {
    FigureLayout L;
    L.outer = {0, 0, width, height};
    const float pad = compact ? 2.0f : line_h * 0.5f;
    const float title_h = (compact || f.title.empty()) ? 0.0f : line_h * 1.4f;
    L.title = {pad, pad, width - pad, pad + title_h};
    if (compact) {
        L.plot = {pad, pad, width - pad, height - pad};
        return L;
    }
    // Left margin: the widest y tick / category label plus the rotated y-axis title.
    float ytick_w = 0;
    if (!f.y.show_labels) {
        // nothing to the left of the plot but the padding
    } else if (f.y.categories.empty()) {
        // Widest label of the ticks the painters will draw.
        const Bounds b = figure_bounds(f);
        const auto ticks = f.y.log ? log_ticks(b.ymin, b.ymax) : nice_ticks(b.ymin, b.ymax, 6);
        const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1.0;
        for (double v : ticks) ytick_w = std::max(ytick_w, text_width(format_tick(v, step)));
        if (ytick_w == 0) ytick_w = text_width("0.0");
        ytick_w += text_width("0");  // the painter may pick a finer step with one more digit
    } else {
        float m = 0;
        for (const auto& c : f.y.categories) m = std::max(m, text_width(c));
        ytick_w = std::min(m, width * 0.35f);
    }
    const float ytitle_w = (f.y.title().empty() || !f.y.show_labels) ? 0.0f : line_h * 1.2f;
    const float left = pad + ytitle_w + ytick_w + line_h * 0.4f;
    // Bottom margin: tick labels (rotated categories take more) plus the x-axis title.
    float xcat_h = f.x.show_labels ? line_h : 0.0f;
    if (f.x.show_labels && !f.x.categories.empty()) {
        float m = 0;
        for (const auto& c : f.x.categories) m = std::max(m, text_width(c));
        const float cell = (width - left) / float(std::max<size_t>(1, f.x.categories.size()));
        if (m > cell * 0.95f) {
            L.rotate_x_categories = true;
            xcat_h = std::min(m, height * 0.25f) + line_h * 0.3f;
        }
    }
    const float xtitle_h = (f.x.title().empty() || !f.x.show_labels) ? 0.0f : line_h * 1.3f;
    const float note_h = show_note ? float(note_lines(f.note)) * line_h * 1.1f : 0.0f;
    const float bottom = xcat_h + xtitle_h + note_h + pad + line_h * 0.3f;
    const bool has_cbar = f.heatmap && f.colorbar;
    const float cbar_w = has_cbar ? colorbar_width(*f.heatmap, text_width, line_h) : 0.0f;
    const float right = pad + cbar_w + line_h * 0.5f;
    L.plot = {left, L.title.y1 + line_h * 0.3f, std::max(left + 10.0f, width - right),
              std::max(L.title.y1 + 10.0f, height - bottom)};
    if (f.square_cells && f.heatmap && f.heatmap->rows > 0 && f.heatmap->cols > 0) {
        // Shrink the longer side so cells are square; the axis title and colorbar follow the plot.
        const float cell = std::min(L.plot.w() / float(f.heatmap->cols), L.plot.h() / float(f.heatmap->rows));
        L.plot.x1 = L.plot.x0 + cell * float(f.heatmap->cols);
        L.plot.y1 = L.plot.y0 + cell * float(f.heatmap->rows);
    }
    L.y_label = {pad, L.plot.y0, pad + ytitle_w, L.plot.y1};
    const float xtitle_y0 = L.plot.y1 + xcat_h + line_h * 0.3f;
    L.x_label = {L.plot.x0, xtitle_y0, L.plot.x1, xtitle_y0 + xtitle_h};
    if (note_h > 0) L.note = {pad, height - pad - note_h, width - pad, height - pad};
    if (has_cbar) L.colorbar = {L.plot.x1 + line_h * 0.6f, L.plot.y0, L.plot.x1 + line_h * 1.4f, L.plot.y1};
    // Category label strides so labels never overlap.
    if (!f.y.categories.empty()) {
        const float cell = L.plot.h() / float(f.y.categories.size());
        L.category_stride_y = std::max(1, int(std::ceil(line_h / std::max(cell, 1e-3f))));
    }
    if (!f.x.categories.empty()) {
        const float cell = L.plot.w() / float(f.x.categories.size());
        float need = line_h;
        if (!L.rotate_x_categories) {
            float m = 0;
            for (const auto& c : f.x.categories) m = std::max(m, text_width(c));
            need = m + line_h * 0.3f;
        }
        L.category_stride_x = std::max(1, int(std::ceil(need / std::max(cell, 1e-3f))));
    }
    // Legend: inside the plot in the emptiest corner, unless every corner would cover data; then under the x-axis
    // title. The box size follows the painters' (text + swatch + padding; margins about a quarter line).
    if (f.legend && !f.heatmap && f.legend_location == LegendLocation::Best) {
        float w = 0;
        int count = 0;
        for (const auto& s : f.series)
            if (!s.name.empty()) { w = std::max(w, text_width(s.name)); ++count; }
        if (count > 0) {
            const float u = line_h / 16.0f;
            const float bw = w + line_h * 2.2f - 4 * u, bh = float(count) * line_h + 6 * u;
            const Transform T = make_transform(f, L.plot);
            const LegendLocation loc = best_legend_location(f, T, bw, bh, 4 * u);
            if (legend_overlap(f, T, legend_box(loc, L.plot, bw, bh, 4 * u)) > 0) {
                const Rect area{L.plot.x0, 0, width - pad, 0};
                float rows_h = line_h;
                for (const auto& e : legend_flow(f, area, text_width, line_h)) rows_h = std::max(rows_h, e.y + line_h);
                const float shift = rows_h + line_h * 0.3f;
                L.plot.y1 = std::max(L.plot.y0 + 10.0f, L.plot.y1 - shift);
                L.y_label.y1 = L.plot.y1;
                L.x_label.y0 -= shift;
                L.x_label.y1 -= shift;
                const float y0 = (L.x_label.h() > 0 ? L.x_label.y1 : L.plot.y1 + xcat_h) + line_h * 0.3f;
                L.legend_below = {area.x0, y0, area.x1, y0 + rows_h};
            }
        }
    }
    return L;
}

std::vector<LegendEntry> legend_flow(const Figure& f, const Rect& area,
                                     const std::function<float(const std::string&)>& text_width, float line_h) {
    std::vector<LegendEntry> out;
    float x = area.x0, y = area.y0;
    for (size_t i = 0; i < f.series.size(); ++i) {
        if (f.series[i].name.empty()) continue;
        const float w = line_h * 1.55f + text_width(f.series[i].name);
        if (x > area.x0 && x + w > area.x1) {
            x = area.x0;
            y += line_h;
        }
        out.push_back({i, x, y});
        x += w + line_h;
    }
    return out;
}

float Transform::px(double x) const {
    const double t = xlog ? (std::log10(x) - std::log10(b.xmin)) / (std::log10(b.xmax) - std::log10(b.xmin))
                          : (x - b.xmin) / (b.xmax - b.xmin);
    return plot.x0 + float(t) * plot.w();
}
float Transform::py(double y) const {
    const double t = ylog ? (std::log10(y) - std::log10(b.ymin)) / (std::log10(b.ymax) - std::log10(b.ymin))
                          : (y - b.ymin) / (b.ymax - b.ymin);
    return y_down ? plot.y0 + float(t) * plot.h() : plot.y1 - float(t) * plot.h();
}
double Transform::data_x(float p) const {
    const double t = (p - plot.x0) / plot.w();
    return xlog ? std::pow(10.0, std::log10(b.xmin) + t * (std::log10(b.xmax) - std::log10(b.xmin)))
                : b.xmin + t * (b.xmax - b.xmin);
}
double Transform::data_y(float p) const {
    const double t = y_down ? (p - plot.y0) / plot.h() : (plot.y1 - p) / plot.h();
    return ylog ? std::pow(10.0, std::log10(b.ymin) + t * (std::log10(b.ymax) - std::log10(b.ymin)))
                : b.ymin + t * (b.ymax - b.ymin);
}

AxisTicks axis_ticks(const Figure& f, const Transform& t, float line_h, bool x_axis) {
    AxisTicks out;
    const Axis& a = x_axis ? f.x : f.y;
    if (!a.categories.empty() || !a.show_labels) return out;
    const double lo = x_axis ? t.b.xmin : t.b.ymin, hi = x_axis ? t.b.xmax : t.b.ymax;
    if (a.log) {
        out.values = log_ticks(lo, hi);
        // Labels need the precision of the finest spacing (0.05, 0.1, 0.2 ... -> two decimals).
        if (out.values.size() > 1) out.step = out.values[1] - out.values[0];
        // A narrow plot cannot hold a label at every 1-2-5 tick ("0.050.100.20"): keep 1 and 5, then decades only.
        const float len = x_axis ? t.plot.w() : t.plot.h();
        const size_t fit = size_t(std::max(2, int(len / (line_h * (x_axis ? 3.5f : 2.0f)))));
        for (const double keep_five : {1.0, 0.0}) {
            if (out.values.size() <= fit) break;
            std::vector<double> thin;
            for (const double v : out.values) {
                const double mantissa = v / std::pow(10.0, std::floor(std::log10(v) + 1e-9));
                if (std::abs(mantissa - 1.0) < 1e-6 || (keep_five > 0 && std::abs(mantissa - 5.0) < 1e-6)) thin.push_back(v);
            }
            if (thin.size() >= 2) out.values = std::move(thin);
        }
    } else {
        const float len = x_axis ? t.plot.w() : t.plot.h();
        const int n = std::clamp(int(len / (line_h * (x_axis ? 4.5f : 2.5f))), 2, 10);
        out.values = nice_ticks(lo, hi, n);
        if (out.values.size() > 1) out.step = out.values[1] - out.values[0];
        if (x_axis && out.values.size() > 1 && hi > lo) {
            // A narrow plot (the step view's "5. · V", ~20 pixels) drew ticks 0 and 50 as "050": keep, from the
            // left, the ticks whose labels stay apart (a label: 0.6 line heights per character, plus half a line).
            std::vector<double> kept;
            double right = -INFINITY;  // right edge of the last kept label (pixels from the plot's left)
            for (const double v : out.values) {
                const double w = (0.6 * double(format_tick(v, out.step).size()) + 0.5) * line_h;
                const double px = double(len) * (v - lo) / (hi - lo);
                if (px - w / 2 < right) continue;
                kept.push_back(v);
                right = px + w / 2;
            }
            if (!kept.empty()) out.values = std::move(kept);
        }
    }
    return out;
}

AxisTicks colorbar_ticks(const Heatmap& h, float bar_height, float line_h) {
    AxisTicks out;
    out.values = nice_ticks(h.vmin, h.vmax, std::clamp(int(bar_height / (line_h * 2.2f)), 2, 8));
    if (out.values.size() > 1) out.step = out.values[1] - out.values[0];
    return out;
}

Theme export_theme(bool dark, bool transparent) {
    Theme t;
    t.dark = dark;
    if (dark) {
        t.background = {0.10f, 0.11f, 0.13f, 1};
        t.plot_background = {0.18f, 0.20f, 0.24f, 1};
        t.text = {0.92f, 0.93f, 0.95f, 1};
        t.text_dim = {0.60f, 0.62f, 0.66f, 1};
    } else {
        t.background = {1, 1, 1, 1};
        t.plot_background = {0.965f, 0.965f, 0.97f, 1};
        t.text = {0.08f, 0.08f, 0.10f, 1};
        t.text_dim = {0.42f, 0.42f, 0.45f, 1};
    }
    t.grid = {t.text.r, t.text.g, t.text.b, 0.12f};
    t.frame = {t.text.r, t.text.g, t.text.b, 0.55f};
    t.legend_background = dark ? Rgba{0.14f, 0.15f, 0.18f, 0.85f} : Rgba{1, 1, 1, 0.85f};
    if (transparent) t.background.a = 0;
    return t;
}

Transform make_transform(const Figure& f, const Rect& plot) {
    Transform t;
    t.plot = plot;
    t.b = figure_bounds(f);
    t.xlog = f.x.log;
    t.ylog = f.y.log;
    t.y_down = f.heatmap.has_value();
    return t;
}

}  // namespace ts::plot
