// Light and dark themes (ImGui style colors + sizes scaled for HiDPI).
#pragma once

namespace ts::ui {

/// Applies colors and sizes; `scale` is the monitor content scale (1 = 96 dpi).
void apply_theme(bool dark, float scale);

}  // namespace ts::ui
