// Colormaps for heatmaps and colorbars: perceptually uniform viridis and magma for non-negative values, a
// blue-white-red diverging map for signed values. Pure data (no GL); the GL heatmap shader samples a 256-entry LUT.
#pragma once

#include <array>
#include <string_view>
#include <vector>

namespace ts::plot {

struct Rgba {
    float r = 0, g = 0, b = 0, a = 1;
    friend bool operator==(const Rgba&, const Rgba&) = default;
};

enum class Colormap { Viridis, Magma, Diverging, Gray };

[[nodiscard]] const char* to_string(Colormap c);
/// Throws std::invalid_argument for an unknown name ("viridis", "magma", "diverging", "gray").
[[nodiscard]] Colormap colormap_from_string(std::string_view name);

/// Color at t in [0, 1] (clamped; NaN gives the map's "masked" gray). Linear interpolation between anchors
/// sampled from matplotlib's viridis / magma and ColorBrewer's RdBu (reversed: low = blue, high = red).
[[nodiscard]] Rgba colormap_sample(Colormap c, float t);

/// n_entries RGBA8 values (4 bytes each) for a GL lookup texture.
[[nodiscard]] std::vector<unsigned char> colormap_lut(Colormap c, int n_entries = 256);

/// The color a masked (NaN / -inf) cell is drawn with.
[[nodiscard]] Rgba masked_color();

/// Maps value into [0,1] for [vmin, vmax]; for Diverging the range is made symmetric around 0 by the caller.
[[nodiscard]] float normalize_value(float v, float vmin, float vmax);

/// Series colors that read on light and dark backgrounds and for color-blind readers (Okabe-Ito palette);
/// cycles every 8.
[[nodiscard]] Rgba palette(int i);

}  // namespace ts::plot
