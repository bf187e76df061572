// Heatmap colours kept between frames (see heatmap_colors.h).
#include "app/gfx/heatmap_colors.h"

#include "app/plot/colormap.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <unordered_map>

namespace ts::gfx {

namespace {
struct CellColors {
    HeatmapColorKey key;
    std::vector<ImU32> colors;
    int unused_frames = 0;
};
std::unordered_map<ImGuiID, CellColors> g_cell_colors;
}  // namespace

bool HeatmapColorKey::same(const plot::Heatmap& h) const {
    return h.rows == m_rows && h.cols == m_cols && h.vmin == m_vmin && h.vmax == m_vmax && h.cmap == m_cmap &&
        h.values.size() == m_values.size() && h.masked.size() == m_masked.size() &&
        (m_values.empty() ||  // memcmp on an empty vector's null data() is undefined
         std::memcmp(h.values.data(), m_values.data(), m_values.size() * sizeof(float)) == 0) &&
        (m_masked.empty() || std::memcmp(h.masked.data(), m_masked.data(), m_masked.size()) == 0);
}

void HeatmapColorKey::take(const plot::Heatmap& h) {
    m_rows = h.rows;
    m_cols = h.cols;
    m_vmin = h.vmin;
    m_vmax = h.vmax;
    m_cmap = h.cmap;
    m_values = h.values;
    m_masked = h.masked;
}

const std::vector<ImU32>& heatmap_cell_colors(ImGuiID id, const plot::Heatmap& h) {
    CellColors& e = g_cell_colors[id];
    e.unused_frames = 0;
    if (e.key.same(h)) return e.colors;
    e.key.take(h);
    e.colors.resize(size_t(std::max(h.rows, 0)) * size_t(std::max(h.cols, 0)));
    for (int r = 0; r < h.rows; ++r)
        for (int c = 0; c < h.cols; ++c) {
            const plot::Rgba col = plot::colormap_sample(h.cmap, h.shade(r, c));
            e.colors[size_t(r) * size_t(h.cols) + size_t(c)] =
                ImGui::ColorConvertFloat4ToU32(ImVec4(col.r, col.g, col.b, col.a));
        }
    return e.colors;
}

void heatmap_cell_colors_collect() {
    for (auto it = g_cell_colors.begin(); it != g_cell_colors.end();)
        it = ++it->second.unused_frames > 120 ? g_cell_colors.erase(it) : std::next(it);
}

}  // namespace ts::gfx
