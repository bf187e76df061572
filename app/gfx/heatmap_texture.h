// Large heatmaps on the GPU: the values go into an R32F texture and a colormap shader (shaders/heatmap_*.glsl)
// renders them into an RGBA texture that ImGui draws as an image. Textures are cached per plot id and re-rendered
// only when the values or the color range change.
#pragma once

#include "app/plot/figure.h"

#include <imgui.h>

namespace ts::gfx {

/// Texture id (for ImDrawList::AddImage) showing heatmap `h` with one texel per cell, row 0 at uv.y = 0.
/// Returns nullptr when GL resources cannot be created (callers then fall back to rectangles).
[[nodiscard]] ImTextureID heatmap_texture(ImGuiID id, const plot::Heatmap& h);

/// Deletes textures not used for a few frames. Call once per frame after rendering.
void heatmap_textures_collect();

/// Deletes everything (before the GL context goes away).
void heatmap_textures_shutdown();

}  // namespace ts::gfx
