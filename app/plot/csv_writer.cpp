// CSV of Figures: one tidy table per figure (header row, float-exact values; see writers.h).
#include "app/plot/writers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

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

std::string category(const Axis& a, double x) {
    const long i = std::lround(x);
    return i >= 0 && i < long(a.categories.size()) ? a.categories[size_t(i)] : "";
}

}  // namespace

// --- CSV ------------------------------------------------------------------------------------------------------------

std::string figure_to_csv(const Figure& f) {
    std::ostringstream os;
    if (f.heatmap) {
        const Heatmap& h = *f.heatmap;
        auto col_label = [&](int c) { return c < int(f.x.categories.size()) ? f.x.categories[size_t(c)] : std::to_string(c); };
        auto row_label = [&](int r) { return r < int(f.y.categories.size()) ? f.y.categories[size_t(r)] : std::to_string(r); };
        if (h.cell_text.size() == size_t(h.rows) * size_t(h.cols) && h.rows * h.cols > 0) {
            os << csv_field(h.row_name) << ',' << csv_field(h.col_name) << ','
               << csv_field(h.value_title()) << ",text\n";
            for (int r = 0; r < h.rows; ++r)
                for (int c = 0; c < h.cols; ++c)
                    os << csv_field(row_label(r)) << ',' << csv_field(col_label(c)) << ',' << num(h.at(r, c)) << ','
                       << csv_field(h.cell_text[size_t(r) * size_t(h.cols) + size_t(c)]) << '\n';
        } else {
            os << csv_field(h.row_name + "\\" + h.col_name);
            for (int c = 0; c < h.cols; ++c) os << ',' << csv_field(col_label(c));
            os << '\n';
            for (int r = 0; r < h.rows; ++r) {
                os << csv_field(row_label(r));
                for (int c = 0; c < h.cols; ++c) {
                    const float v = h.at(r, c);
                    os << ',' << (std::isnan(v) ? "-inf" : num(v));
                }
                os << '\n';
            }
        }
        if (!f.series.empty()) os << '\n';
    }
    if (!f.series.empty()) {
        bool labels = false;
        for (const auto& s : f.series) labels |= !s.point_labels.empty();
        const bool cats = !f.x.categories.empty();
        os << "series," << csv_field(f.x.title().empty() ? "x" : f.x.title());
        if (cats) os << ',' << csv_field((f.x.label.empty() ? std::string("x") : f.x.label) + " name");
        os << ',' << csv_field(f.y.title().empty() ? "y" : f.y.title());
        if (labels) os << ",label";
        os << '\n';
        for (size_t si = 0; si < f.series.size(); ++si) {
            const Series& s = f.series[si];
            const std::string name = s.name.empty() ? "series " + std::to_string(si) : s.name;
            for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
                os << csv_field(name) << ',' << num(s.x[i]);
                if (cats) os << ',' << csv_field(category(f.x, s.x[i]));
                os << ',' << num(s.y[i]);
                if (labels) os << ',' << csv_field(i < s.point_labels.size() ? s.point_labels[i] : "");
                os << '\n';
            }
        }
    }
    return os.str();
}

std::string figures_to_csv(const std::vector<Figure>& figs) {
    if (figs.size() == 1) return figure_to_csv(figs.front());
    bool any_heat = false, any_series = false;
    for (const auto& f : figs) {
        any_heat |= f.heatmap.has_value();
        any_series |= !f.series.empty();
    }
    if (any_heat && any_series)
        throw std::invalid_argument("these " + std::to_string(figs.size()) +
                                    " figures mix heatmaps and curves, which do not fit one CSV table: export one figure at a time");
    std::ostringstream os;
    if (any_heat) {
        os << "figure,row,row_label,col,col_label,value\n";
        for (const auto& f : figs) {
            if (!f.heatmap) continue;
            const Heatmap& h = *f.heatmap;
            for (int r = 0; r < h.rows; ++r)
                for (int c = 0; c < h.cols; ++c) {
                    const float v = h.at(r, c);
                    os << csv_field(f.title) << ',' << r << ','
                       << csv_field(r < int(f.y.categories.size()) ? f.y.categories[size_t(r)] : std::to_string(r)) << ',' << c
                       << ',' << csv_field(c < int(f.x.categories.size()) ? f.x.categories[size_t(c)] : std::to_string(c))
                       << ',' << (std::isnan(v) ? "-inf" : num(v)) << '\n';
                }
        }
    } else {
        os << "figure,series,x,y,label\n";
        for (const auto& f : figs)
            for (size_t si = 0; si < f.series.size(); ++si) {
                const Series& s = f.series[si];
                for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
                    os << csv_field(f.title) << ',' << csv_field(s.name.empty() ? "series " + std::to_string(si) : s.name) << ','
                       << num(s.x[i]) << ',' << num(s.y[i]) << ','
                       << csv_field(i < s.point_labels.size() ? s.point_labels[i] : category(f.x, s.x[i])) << '\n';
            }
    }
    return os.str();
}

}  // namespace ts::plot
