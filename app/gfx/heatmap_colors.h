// Heatmap colours kept between frames: a heatmap drawn as one rectangle per cell (up to 64 × 64 cells; larger ones
// are GPU textures, heatmap_texture.h) is coloured once per change of its data, not once per frame (#29). GL-free:
// the PNG exporter and the CPU frame benchmark use it too.
#pragma once

#include "app/plot/figure.h"

#include <imgui.h>

#include <cstdint>
#include <vector>

namespace ts::gfx {

/// What a heatmap's colours depend on — shape, values, masked cells, range and colormap — copied, so that a cache
/// can tell byte for byte (no hash, so no collision) whether a figure still shows what was drawn last frame.
/// Comparing is a memcmp of the values: about a microsecond for 64 × 64 cells.
class HeatmapColorKey {
public:
    /// True when `h` would be coloured exactly as the heatmap last passed to take().
    [[nodiscard]] bool same(const plot::Heatmap& h) const;
    void take(const plot::Heatmap& h);

private:
    int m_rows = -1, m_cols = -1;
    float m_vmin = 0, m_vmax = 0;
    plot::Colormap m_cmap = plot::Colormap::Viridis;
    std::vector<float> m_values;
    std::vector<uint8_t> m_masked;
};

/// Packed RGBA colours (ImU32) of every cell of `h`, row-major, kept per `id` while `h` does not change (see
/// HeatmapColorKey); entries unused for 120 frames are dropped by heatmap_cell_colors_collect().
[[nodiscard]] const std::vector<ImU32>& heatmap_cell_colors(ImGuiID id, const plot::Heatmap& h);

/// Drops the colours of heatmaps not drawn for 120 frames. Call once per frame after rendering.
void heatmap_cell_colors_collect();

}  // namespace ts::gfx
