// Figures -> pixels: draws figures with the same ImGui painter as the window, in a private ImGui context whose font
// atlas is built at the export scale (crisp text at any size, not an upscaled screenshot), into an offscreen
// framebuffer of any size; then PNG. Needs a current OpenGL 3.3 context (the app's window or gfx::HeadlessGl).
#pragma once

#include "app/plot/figure.h"
#include "app/plot/writers.h"

#include <cstdint>
#include <filesystem>
#include <vector>

namespace ts::gfx {

struct Image {
    int width = 0, height = 0;
    std::vector<uint8_t> rgba;           ///< row 0 at the top, 4 bytes per pixel
};

/// Renders figures in a grid (opt.columns) into a width × height RGBA image with opt's theme and scale.
/// Throws std::invalid_argument for a bad size / scale and std::runtime_error when GL cannot make the framebuffer.
[[nodiscard]] Image render_figures(const std::vector<plot::Figure>& figs, const plot::ExportOptions& opt);

/// Frees the cached export ImGui context and its GL objects (call before the GL context is destroyed).
void release_raster_resources();

/// Writes figures to `path` in the format of its extension: PNG through render_figures (GL needed), SVG / CSV
/// through the GL-free writers. Atomic; throws std::runtime_error / std::invalid_argument with one clear line.
void write_figures(const std::vector<plot::Figure>& figs, const plot::ExportOptions& opt, const std::filesystem::path& path);

}  // namespace ts::gfx
