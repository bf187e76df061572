// Helpers shared by panels, and the panel registry (tab order).
#include "app/ui/panels/panels.h"
#include "app/ui/soft_wrap.h"

#include "app/figures/figures.h"
#include "app/i18n/tr.h"

#include <imgui.h>

#include <algorithm>

namespace ts::ui {

const std::vector<PanelInfo>& all_panels() {
    static const std::vector<PanelInfo> p = {
        {TS_N_("Tokens"), draw_tokens_panel},           {TS_N_("Attention"), draw_attention_panel},
        {TS_N_("Softmax"), draw_softmax_panel},         {TS_N_("Activations"), draw_activations_panel},
        {TS_N_("Normalization"), draw_normalization_panel}, {TS_N_("Positions"), draw_positions_panel},
        {TS_N_("Predictions"), draw_predictions_panel}, {TS_N_("Residual"), draw_residual_panel},
        {TS_N_("Model"), draw_model_panel},             {TS_N_("Training"), draw_training_panel},
        {TS_N_("Causal"), draw_causal_panel},
        {TS_N_("Lessons"), draw_lessons_panel}};
    return p;
}

std::vector<std::string> token_labels(const Snapshot& s, bool with_index) { return snapshot_token_labels(s, with_index); }

int current_layer(const PanelContext& ctx) { return clamp_layer(ctx.state, ctx.model ? ctx.model->model.get() : nullptr); }
int current_head(const PanelContext& ctx) { return clamp_head(ctx.state, ctx.model ? ctx.model->model.get() : nullptr); }
int current_query(const PanelContext& ctx) {
    return resolve_query(ctx.state, ctx.snap && ctx.snap->tokens ? int(ctx.snap->tokens->ids.size()) : 0);
}

std::vector<float> head_slice(const Tensor* t, int head, int* rows, int* cols) { return tensor_head_slice(t, head, rows, cols); }

void empty_message(const char* text) {
    ImGui::Dummy(ImVec2(0, ImGui::GetTextLineHeight() * 2));
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    text_wrapped(text);
    ImGui::PopStyleColor();
}

void text_wrapped(const std::string& text) {
    const float width = std::max(ImGui::GetTextLineHeight() * 4, ImGui::GetContentRegionAvail().x);
    const Wrapped w = soft_wrap(text, cjk_line_breaker(
                                          [](std::string_view s) {
                                              return ImGui::CalcTextSize(s.data(), s.data() + s.size()).x;
                                          },
                                          width));
    ImGui::TextUnformatted(w.display.c_str(), w.display.c_str() + w.display.size());
}

const char* no_forward_message(const PanelContext& ctx, const char* waiting) {
    if (ctx.state.text.empty()) return tr("type some text to see inside the model");
    if (ctx.snap && !ctx.snap->error.empty()) return ctx.snap->error.c_str();
    return waiting;
}

bool slider_log(const char* label, float* v, float lo, float hi, const char* fmt) {
    return ImGui::SliderFloat(label, v, lo, hi, fmt, ImGuiSliderFlags_Logarithmic);
}

}  // namespace ts::ui
