// Helpers shared by panels, and the panel registry (tab order).
#include "app/ui/panels/panels.h"

#include <imgui.h>

#include <algorithm>

namespace ts::ui {

const std::vector<PanelInfo>& all_panels() {
    static const std::vector<PanelInfo> p = {
        {"Tokens", draw_tokens_panel},           {"Attention", draw_attention_panel},
        {"Softmax", draw_softmax_panel},         {"Activations", draw_activations_panel},
        {"Normalization", draw_normalization_panel}, {"Positions", draw_positions_panel},
        {"Predictions", draw_predictions_panel}, {"Residual", draw_residual_panel},
        {"Model", draw_model_panel}};
    return p;
}

std::vector<std::string> token_labels(const Snapshot& s, bool with_index) {
    std::vector<std::string> out;
    if (!s.tokens) return out;
    for (size_t i = 0; i < s.tokens->pieces.size(); ++i) {
        const std::string& l = s.tokens->pieces[i].label;
        out.push_back(with_index ? std::to_string(i) + ":" + l : l);
    }
    return out;
}

int current_layer(const PanelContext& ctx) {
    const int n = ctx.model && ctx.model->model ? ctx.model->model->config().n_layers : 1;
    return std::clamp(ctx.state.layer, 0, std::max(0, n - 1));
}
int current_head(const PanelContext& ctx) {
    const int n = ctx.model && ctx.model->model ? ctx.model->model->config().n_heads : 1;
    return std::clamp(ctx.state.head, 0, std::max(0, n - 1));
}
int current_query(const PanelContext& ctx) {
    const int T = ctx.snap && ctx.snap->tokens ? int(ctx.snap->tokens->ids.size()) : 0;
    if (T == 0) return 0;
    return ctx.state.query < 0 ? T - 1 : std::min(ctx.state.query, T - 1);
}

std::vector<float> head_slice(const Tensor* t, int head, int* rows, int* cols) {
    if (!t || t->rank() != 3 || head < 0 || head >= t->dim(0)) {
        *rows = *cols = 0;
        return {};
    }
    *rows = int(t->dim(1));
    *cols = int(t->dim(2));
    const size_t n = size_t(*rows) * size_t(*cols);
    return std::vector<float>(t->data.begin() + ptrdiff_t(n * size_t(head)), t->data.begin() + ptrdiff_t(n * size_t(head + 1)));
}

void empty_message(const char* text) {
    ImGui::Dummy(ImVec2(0, ImGui::GetTextLineHeight() * 2));
    ImGui::TextDisabled("%s", text);
}

bool slider_log(const char* label, float* v, float lo, float hi, const char* fmt) {
    return ImGui::SliderFloat(label, v, lo, hi, fmt, ImGuiSliderFlags_Logarithmic);
}

}  // namespace ts::ui
