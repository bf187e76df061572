// Training panel: what training does that inference does not show, one topic at a time: the learning-rate warm-up
// of the original Transformer, inverted dropout on one of the model's own residual vectors, weight decay on one
// weight over many steps, and label smoothing's target and loss. Figures come from app/figures/training_figures.cpp
// (shared with `render`); each knob is a UiState train_* field, the topic is UiState::train_topic (a view name).
#include "app/figures/figures.h"
#include "app/gfx/painter.h"
#include "app/i18n/tr.h"
#include "app/ui/panels/panels.h"

#include <imgui.h>

#include <algorithm>

namespace ts::ui {

namespace {

void draw_side_by_side(const std::vector<plot::Figure>& figs, const std::vector<float>& shares, const char* id) {
    const float avail_w = ImGui::GetContentRegionAvail().x;
    const float h = std::max(ImGui::GetTextLineHeight() * 12, ImGui::GetContentRegionAvail().y);
    for (size_t i = 0; i < figs.size(); ++i) {
        if (i) ImGui::SameLine();
        gfx::draw_figure(figs[i], ImVec2(avail_w * shares[i] - 6, h), {}, (std::string(id) + std::to_string(i)).c_str());
    }
}

}  // namespace

void draw_training_panel(PanelContext& ctx) {
    UiState& st = ctx.state;
    const float line_h = ImGui::GetTextLineHeight();
    const float knob_w = line_h * 7;
    static const std::pair<const char*, const char*> topics[] = {{"lr-schedule", TS_N_("learning-rate warm-up")},
                                                                 {"dropout", TS_N_("dropout")},
                                                                 {"weight-decay", TS_N_("weight decay")},
                                                                 {"label-smoothing", TS_N_("label smoothing")}};
    for (size_t i = 0; i < std::size(topics); ++i) {
        if (i) ImGui::SameLine();
        if (ImGui::RadioButton(tr(topics[i].second), st.train_topic == topics[i].first)) st.train_topic = topics[i].first;
    }
    if (st.train_topic == "dropout") {
        ImGui::SetNextItemWidth(knob_w);
        ImGui::SliderFloat(tr("dropout p"), &st.train_dropout, 0.0f, 0.9f, "%.2f");
        same_line_if_fits(labeled_width(tr("mask seed"), knob_w));
        ImGui::SetNextItemWidth(knob_w);
        ImGui::SliderInt(tr("mask seed"), &st.train_seed, 1, 100);
        same_line_if_fits(ImGui::CalcTextSize(tr("(token and layer: the query and layer knobs on the left)")).x);
        ImGui::TextDisabled("%s", tr("(token and layer: the query and layer knobs on the left)"));
        st.clamp();
        const Snapshot* s = ctx.snap;
        if (!(s && s->trace && s->tokens && !s->tokens->ids.empty()))
            return empty_message(no_forward_message(ctx, tr("dropout on your text's activations appears after the first forward pass")));
        try {
            draw_side_by_side(dropout_figures(st, *s), {0.56f, 0.44f}, "dropout");
        } catch (const std::exception& e) {
            empty_message(e.what());
        }
    } else if (st.train_topic == "weight-decay") {
        ImGui::SetNextItemWidth(knob_w);
        slider_log(tr("learning rate η"), &st.train_lr, 1e-4f, 0.1f, "%.4g");
        same_line_if_fits(labeled_width(tr("weight decay λ"), knob_w));
        ImGui::SetNextItemWidth(knob_w);
        ImGui::SliderFloat(tr("weight decay λ"), &st.train_weight_decay, 0.0f, 1.0f, "%.3f");
        same_line_if_fits(labeled_width(tr("gradient g"), knob_w));
        ImGui::SetNextItemWidth(knob_w);
        ImGui::SliderFloat(tr("gradient g"), &st.train_grad, -1.0f, 1.0f, "%.2f");
        st.clamp();
        draw_side_by_side({weight_decay_figure(st)}, {1.0f}, "weight_decay");
    } else if (st.train_topic == "label-smoothing") {
        ImGui::SetNextItemWidth(knob_w);
        ImGui::SliderFloat(tr("label smoothing ε"), &st.train_label_smoothing, 0.0f, 0.5f, "%.2f");
        st.clamp();
        const std::vector<plot::Figure> ls = label_smoothing_figures(st);
        draw_side_by_side({ls[0], ls[1]}, {0.42f, 0.58f}, "label");
    } else {
        st.train_topic = "lr-schedule";
        ImGui::SetNextItemWidth(knob_w);
        ImGui::SliderInt(tr("warm-up steps"), &st.train_warmup, 0, 20000);
        ImGui::SameLine();
        ImGui::SetNextItemWidth(knob_w);
        ImGui::SliderInt("d_model", &st.train_d_model, 64, 4096, "%d", ImGuiSliderFlags_Logarithmic);
        st.clamp();
        draw_side_by_side({lr_schedule_figure(st)}, {1.0f}, "lr_schedule");
    }
}

}  // namespace ts::ui
