// Activations panel: curves of tanh, sigmoid, ReLU, LeakyReLU(α), GELU (erf and tanh), Swish(β) and the GLU family
// with their derivatives, the course's example points (x = −2, −0.5, 0, 0.5, 2) with exact values, and a histogram of
// the model's real FFN pre-activations at the selected layer.
#include "app/i18n/tr.h"
#include "app/gfx/painter.h"
#include "app/plot/ticks.h"
#include "app/figures/figures.h"
#include "app/ui/panels/panels.h"
#include "core/kernels/ops.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <functional>

namespace ts::ui {

void draw_activations_panel(PanelContext& ctx) {
    UiState& st = ctx.state;
    const float line_h = ImGui::GetTextLineHeight();
    bool* shown = st.act_shown.data();
    const std::vector<ActivationDef> acts = activation_defs(st.act_leaky_alpha, st.act_swish_beta);

    // Knobs.
    for (size_t i = 0; i < acts.size(); ++i) {
        if (i) ImGui::SameLine();
        ImGui::PushStyleColor(ImGuiCol_CheckMark, ImGui::ColorConvertU32ToFloat4(gfx::to_u32(gfx::palette(int(i)))));
        ImGui::Checkbox(acts[i].name, &shown[i]);
        ImGui::PopStyleColor();
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr(acts[i].formula));
        if (i == 4) ImGui::NewLine();
    }
    ImGui::SetNextItemWidth(line_h * 10);
    ImGui::SliderFloat(tr("α (LeakyReLU)"), &st.act_leaky_alpha, 0.0f, 0.5f, "%.3f");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(line_h * 10);
    ImGui::SliderFloat(tr("β (Swish)"), &st.act_swish_beta, 0.1f, 5.0f, "%.2f");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(line_h * 10);
    ImGui::SliderFloat(tr("x range ±"), &st.act_range, 1.0f, 10.0f, "%.1f");
    ImGui::SameLine();
    ImGui::Checkbox(tr("derivatives"), &st.act_show_grad);
    ImGui::SameLine();
    ImGui::Checkbox(tr("real pre-activations behind the curves"), &st.act_overlay);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", tr("Grey bars: histogram of the model's FFN pre-activations at the selected layer for the typed "
                          "text, scaled to the plot's height — where on the curve the real inputs fall."));

    const int layer = current_layer(ctx);
    const Snapshot* s = ctx.snap;
    auto curves = [&](bool grad) {
        plot::Figure f = activation_curves(st, grad);
        if (s && st.act_overlay) overlay_ffn_pre_activations(f, *s, layer);
        return f;
    };
    const float avail_w = ImGui::GetContentRegionAvail().x;
    const float top_h = std::max(line_h * 14, ImGui::GetContentRegionAvail().y * 0.55f);
    const float half = st.act_show_grad ? avail_w * 0.5f - 4 : avail_w;
    gfx::draw_figure(curves(false), ImVec2(half, top_h), {}, "act_f");
    if (st.act_show_grad) {
        ImGui::SameLine();
        gfx::draw_figure(curves(true), ImVec2(half, top_h), {}, "act_df");
    }

    // Real FFN pre-activations at the selected layer.
    const float bottom_h = std::max(line_h * 10, ImGui::GetContentRegionAvail().y);
    const Tensor* pre = s ? s->find(s->stack() + "." + std::to_string(layer) + ".ffn.pre_act") : nullptr;
    if (!pre) {
        if (s && s->ffn_skipped_need) ImGui::TextWrapped("%s", ffn_not_recorded_message(*s).c_str());
        else
            ImGui::TextDisabled(
                "%s", no_forward_message(ctx, tr("FFN pre-activations appear here after the first forward pass.")));
        return;
    }
    const std::optional<plot::Figure> hist = ffn_histogram(*s, layer);
    if (!hist) return;
    const plot::Figure& h = *hist;
    const char* note = h.note.c_str();
    ImGui::BeginGroup();
    gfx::draw_figure(h, ImVec2(avail_w * 0.6f, bottom_h - line_h * 1.5f), {}, "act_hist");
    ImGui::TextDisabled("%s", note);
    ImGui::EndGroup();
    ImGui::SameLine();

    // Example values table.
    ImGui::BeginChild("examples", ImVec2(0, bottom_h), true);
    ImGui::TextUnformatted(tr("Example points"));
    if (ImGui::BeginTable("ex", 6, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
        ImGui::TableSetupColumn("f");
        for (float x : activation_examples()) ImGui::TableSetupColumn(("x=" + plot::format_value(x)).c_str());
        ImGui::TableHeadersRow();
        for (size_t i = 0; i < acts.size(); ++i) {
            if (!shown[i]) continue;
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(acts[i].name);
            for (float x : activation_examples()) {
                ImGui::TableNextColumn();
                ImGui::Text("%.4f", acts[i].f(x));
            }
        }
        ImGui::EndTable();
    }
    ImGui::EndChild();
}

}  // namespace ts::ui
