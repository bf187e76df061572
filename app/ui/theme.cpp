// Theme colors and sizes.
#include "app/ui/theme.h"

#include <imgui.h>

namespace ts::ui {

void apply_theme(bool dark, float scale) {
    ImGuiStyle style;
    if (dark) ImGui::StyleColorsDark(&style);
    else ImGui::StyleColorsLight(&style);
    style.WindowRounding = 0.0f;
    style.FrameRounding = 3.0f;
    style.GrabRounding = 3.0f;
    style.TabRounding = 3.0f;
    style.WindowPadding = ImVec2(8, 8);
    style.FramePadding = ImVec2(6, 4);
    style.ItemSpacing = ImVec2(8, 6);
    if (dark) {
        style.Colors[ImGuiCol_WindowBg] = ImVec4(0.10f, 0.11f, 0.13f, 1.0f);
        style.Colors[ImGuiCol_ChildBg] = ImVec4(0.10f, 0.11f, 0.13f, 1.0f);
        style.Colors[ImGuiCol_FrameBg] = ImVec4(0.18f, 0.20f, 0.24f, 1.0f);
        style.Colors[ImGuiCol_Text] = ImVec4(0.92f, 0.93f, 0.95f, 1.0f);
    } else {
        style.Colors[ImGuiCol_WindowBg] = ImVec4(0.97f, 0.97f, 0.96f, 1.0f);
        style.Colors[ImGuiCol_ChildBg] = ImVec4(0.97f, 0.97f, 0.96f, 1.0f);
        style.Colors[ImGuiCol_FrameBg] = ImVec4(0.89f, 0.90f, 0.92f, 1.0f);
        style.Colors[ImGuiCol_Text] = ImVec4(0.08f, 0.08f, 0.10f, 1.0f);
    }
    style.ScaleAllSizes(scale);
    ImGui::GetStyle() = style;
}

}  // namespace ts::ui
