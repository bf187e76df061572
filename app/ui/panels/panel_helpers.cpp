// Helpers shared by panels, and the panel registry (tab order).
#include "app/ui/panels/panels.h"
#include "app/gfx/astral.h"
#include "app/ui/soft_wrap.h"

#include "app/figures/figures.h"
#include "app/i18n/tr.h"
#include "core/model/memory_budget.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>

namespace ts::ui {

const std::vector<PanelInfo>& all_panels() {
    static const std::vector<PanelInfo> p = {
        {Panel::Tokens, draw_tokens_panel},       {Panel::Attention, draw_attention_panel},
        {Panel::Softmax, draw_softmax_panel},     {Panel::Activations, draw_activations_panel},
        {Panel::Neurons, draw_neurons_panel},     {Panel::Normalization, draw_normalization_panel},
        {Panel::Positions, draw_positions_panel}, {Panel::Predictions, draw_predictions_panel},
        {Panel::Residual, draw_residual_panel},   {Panel::Model, draw_model_panel},
        {Panel::Training, draw_training_panel},   {Panel::Causal, draw_causal_panel},
        {Panel::Lessons, draw_lessons_panel}};
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

void same_line_if_fits(float width) {
    const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    const float x = ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x;
    if (x + width <= right) ImGui::SameLine();
}

float labeled_width(const char* label, float item_w) {
    const char* end = std::strstr(label, "##");
    return item_w + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label, end).x;
}

std::string wrap_for_width(const std::string& text, float width) {
    width = std::max(ImGui::GetTextLineHeight() * 4, width);
    return soft_wrap(text, cjk_line_breaker(
                               [](std::string_view s) { return ImGui::CalcTextSize(s.data(), s.data() + s.size()).x; },
                               width))
        .display;
}

bool text_field(const char* label, const char* hint, std::string& text) {
    std::string seen = gfx::shown(text);
    const std::string before = seen;
    ImGui::InputTextWithHint(label, hint ? hint : "", &seen, ImGuiInputTextFlags_CallbackAlways,
                             [](ImGuiInputTextCallbackData* d) {
                                 insert_typed_emoji(d);
                                 return 0;
                             });
    if (seen == before) return false;
    text = gfx::typed(seen);
    return true;
}

void insert_typed_emoji(ImGuiInputTextCallbackData* d) {
    const std::string emoji = gfx::take_typed();
    if (emoji.empty()) return;
    if (d->SelectionStart != d->SelectionEnd)  // typing replaces a selection
        d->DeleteChars(std::min(d->SelectionStart, d->SelectionEnd), std::abs(d->SelectionEnd - d->SelectionStart));
    d->InsertChars(d->CursorPos, emoji.data(), emoji.data() + emoji.size());  // moves the cursor past them
}

bool mask_combo(MaskChoice& kind) {
    auto label = [](MaskChoice m) {
        switch (m) {
        case MaskChoice::None: return tr("none");
        case MaskChoice::Causal: return tr("causal");
        case MaskChoice::Padding: return tr("padding");
        case MaskChoice::Sliding: return tr("sliding window");
        case MaskChoice::Custom: return tr("custom (paint)");
        }
        return tr("causal");
    };
    std::array<const char*, kMaskChoices.size()> names{};
    int i = 1;
    for (size_t k = 0; k < kMaskChoices.size(); ++k) {
        names[k] = label(kMaskChoices[k]);
        if (kind == kMaskChoices[k]) i = int(k);
    }
    if (!ImGui::Combo(tr("mask"), &i, names.data(), int(names.size()))) return false;
    kind = kMaskChoices[size_t(i)];
    return true;
}

void text_wrapped(const std::string& text, float width) {
    const std::string d = wrap_for_width(text, width > 0 ? width : ImGui::GetContentRegionAvail().x);
    ImGui::TextUnformatted(d.c_str(), d.c_str() + d.size());
}

const char* no_forward_message(const PanelContext& ctx, const char* waiting) {
    if (ctx.state.text.empty()) return tr("type some text to see inside the model");
    if (ctx.snap && !ctx.snap->error.empty()) return ctx.snap->error.c_str();
    return waiting;
}

std::string ffn_not_recorded_message(const Snapshot& s) {
    if (!s.ffn_skipped_need) return "";
    return trf(
        "The FFN intermediates (pre-activations, activations) are not recorded for this long text: with them "
        "its trace would need %s, over the memory budget of %s. Shorten the text to see them.",
        human_bytes(double(s.ffn_skipped_need)).c_str(), human_bytes(double(s.ffn_skipped_budget)).c_str());
}

bool slider_log(const char* label, float* v, float lo, float hi, const char* fmt) {
    return ImGui::SliderFloat(label, v, lo, hi, fmt, ImGuiSliderFlags_Logarithmic);
}

}  // namespace ts::ui
