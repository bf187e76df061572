// Training panel: what training does that inference does not show. The learning-rate warm-up of the original
// Transformer, inverted dropout on one of the model's own residual vectors, weight decay on one weight over many
// steps, and label smoothing's target and loss. Figures come from app/figures/training_figures.cpp (shared with
// `render`); each knob is a UiState train_* field.
#include "app/figures/figures.h"
#include "app/gfx/painter.h"
#include "app/i18n/tr.h"
#include "app/ui/panels/panels.h"

#include <imgui.h>

#include <algorithm>

namespace ts::ui {

void draw_training_panel(PanelContext& ctx) {
    UiState& st = ctx.state;
    const float line_h = ImGui::GetTextLineHeight();
    const float knob_w = line_h * 7;
    ImGui::SetNextItemWidth(knob_w);
    ImGui::SliderInt(tr("warm-up steps"), &st.train_warmup, 0, 20000);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(knob_w);
    ImGui::SliderInt("d_model", &st.train_d_model, 64, 4096, "%d", ImGuiSliderFlags_Logarithmic);
    ImGui::SameLine();
    ImGui::TextDisabled("|");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(knob_w);
    ImGui::SliderFloat(tr("dropout p"), &st.train_dropout, 0.0f, 0.9f, "%.2f");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(knob_w);
    ImGui::SliderInt(tr("mask seed"), &st.train_seed, 1, 100);
    ImGui::SetNextItemWidth(knob_w);
    slider_log(tr("learning rate η"), &st.train_lr, 1e-4f, 0.1f, "%.4g");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(knob_w);
    ImGui::SliderFloat(tr("weight decay λ"), &st.train_weight_decay, 0.0f, 1.0f, "%.3f");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(knob_w);
    ImGui::SliderFloat(tr("gradient g"), &st.train_grad, -1.0f, 1.0f, "%.2f");
    ImGui::SameLine();
    ImGui::TextDisabled("|");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(knob_w);
    ImGui::SliderFloat(tr("label smoothing ε"), &st.train_label_smoothing, 0.0f, 0.5f, "%.2f");
    st.clamp();

    const float avail_w = ImGui::GetContentRegionAvail().x;
    const float row_h = std::max(line_h * 11, ImGui::GetContentRegionAvail().y * 0.5f - 4);
    const float third = avail_w / 3.0f - 6;
    gfx::draw_figure(lr_schedule_figure(st), ImVec2(third, row_h), {}, "lr_schedule");
    ImGui::SameLine();
    gfx::draw_figure(weight_decay_figure(st), ImVec2(third, row_h), {}, "weight_decay");
    ImGui::SameLine();
    const std::vector<plot::Figure> ls = label_smoothing_figures(st);
    gfx::draw_figure(ls[1], ImVec2(third, row_h), {}, "label_loss");

    const float h2 = std::max(line_h * 11, ImGui::GetContentRegionAvail().y);
    const Snapshot* s = ctx.snap;
    if (s && s->trace && s->tokens && !s->tokens->ids.empty()) {
        std::vector<plot::Figure> df;
        try {
            df = dropout_figures(st, *s);
        } catch (const std::exception& e) {
            ImGui::TextWrapped("%s", e.what());
        }
        if (df.size() == 2) {
            gfx::draw_figure(df[0], ImVec2(third * 1.4f, h2), {}, "dropout");
            ImGui::SameLine();
            gfx::draw_figure(df[1], ImVec2(third * 0.8f, h2), {}, "dropout_mean");
            ImGui::SameLine();
        }
    } else {
        ImGui::BeginChild("dropout_wait", ImVec2(third * 2.2f + 6, h2));
        empty_message(no_forward_message(ctx, tr("dropout on your text's activations appears after the first forward pass")));
        ImGui::EndChild();
        ImGui::SameLine();
    }
    gfx::draw_figure(ls[0], ImVec2(std::max(line_h * 8, ImGui::GetContentRegionAvail().x), h2), {}, "label_target");
}

}  // namespace ts::ui
