// Normalization panel: LayerNorm, RMSNorm and BatchNorm side by side on synthetic data (batch 64 × 128 features,
// adjustable mean and std) and LayerNorm / RMSNorm on the model's real residual stream at the selected layer, with
// mean / variance / RMS readouts and γ, β, ε sliders.
#include "app/i18n/tr.h"
#include "app/gfx/painter.h"
#include "app/plot/ticks.h"
#include "app/figures/figures.h"
#include "app/ui/panels/panels.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

namespace ts::ui {

namespace {

void hist_figure(const plot::Figure& f, ImVec2 size, const char* id) {
    // The readout wraps within the figure's width (at 1024 px a third of the row is narrower than one line of it),
    // and the figure gives up the height the readout needs.
    const std::string note = wrap_for_width(f.note, size.x);
    const int lines = 1 + int(std::count(note.begin(), note.end(), '\n'));
    ImGui::BeginGroup();
    gfx::draw_figure(f, ImVec2(size.x, std::max(ImGui::GetTextLineHeight() * 6,
                                                size.y - ImGui::GetTextLineHeightWithSpacing() * float(lines))),
                     {}, id);
    ImGui::TextUnformatted(note.c_str());
    ImGui::EndGroup();
}

}  // namespace

void draw_normalization_panel(PanelContext& ctx) {
    UiState& st = ctx.state;
    const float line_h = ImGui::GetTextLineHeight();
    ImGui::SetNextItemWidth(line_h * 8);
    ImGui::SliderFloat(tr("data mean"), &st.norm_mean, -10.0f, 10.0f, "%.2f");
    same_line_if_fits(labeled_width(tr("data std"), line_h * 8));
    ImGui::SetNextItemWidth(line_h * 8);
    ImGui::SliderFloat(tr("data std"), &st.norm_std, 0.1f, 10.0f, "%.2f");
    same_line_if_fits(labeled_width(tr("γ (scale)"), line_h * 8));
    ImGui::SetNextItemWidth(line_h * 8);
    ImGui::SliderFloat(tr("γ (scale)"), &st.norm_gamma, 0.0f, 3.0f, "%.2f");
    same_line_if_fits(labeled_width(tr("β (shift)"), line_h * 8));
    ImGui::SetNextItemWidth(line_h * 8);
    ImGui::SliderFloat(tr("β (shift)"), &st.norm_beta, -3.0f, 3.0f, "%.2f");
    same_line_if_fits(labeled_width("ε", line_h * 8));
    ImGui::SetNextItemWidth(line_h * 8);
    ImGui::SliderFloat("ε", &st.norm_eps, 1e-8f, 1.0f, "%.1e", ImGuiSliderFlags_Logarithmic);
    ImGui::SetNextItemWidth(line_h * 8);
    ImGui::SliderFloat(tr("shift of row 0"), &st.norm_outlier, -30.0f, 30.0f, "%.1f");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", tr("Adds this to every feature of one example of the batch. LayerNorm and RMSNorm treat each row "
                                   "alone, so the other 63 rows come out the same; BatchNorm's statistics pool the batch, "
                                   "so their output moves."));
    same_line_if_fits(ImGui::CalcTextSize(tr("(one unusual example: only BatchNorm's output for the other rows changes)")).x);
    ImGui::TextDisabled("%s", tr("(one unusual example: only BatchNorm's output for the other rows changes)"));

    const std::vector<plot::Figure> syn = normalization_synthetic_figures(st);
    const float avail_w = ImGui::GetContentRegionAvail().x;
    const float row_h = std::max(line_h * 14, ImGui::GetContentRegionAvail().y * 0.5f);
    const float third = avail_w / 3.0f - 6;
    ImGui::TextDisabled("%s", tr("Synthetic data: batch 64 × 128 features drawn from N(mean, std²)"));
    hist_figure(syn[0], ImVec2(third, row_h), "syn_ln");
    ImGui::SameLine();
    hist_figure(syn[1], ImVec2(third, row_h), "syn_rms");
    ImGui::SameLine();
    hist_figure(syn[2], ImVec2(third, row_h), "syn_bn");

    // Real residual stream.
    const Snapshot* s = ctx.snap;
    const int layer = current_layer(ctx);
    std::string caption;
    const std::vector<plot::Figure> real = s ? normalization_model_figures(st, *s, layer, &caption) : std::vector<plot::Figure>{};
    if (real.empty()) return empty_message(no_forward_message(ctx, tr("the model's residual stream appears here after the first forward pass")));
    const float h2 = std::max(line_h * 12, ImGui::GetContentRegionAvail().y - line_h * 1.5f);
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    text_wrapped(caption);
    ImGui::PopStyleColor();
    hist_figure(real[0], ImVec2(avail_w * 0.5f - 4, h2), "real_ln");
    ImGui::SameLine();
    hist_figure(real[1], ImVec2(avail_w * 0.5f - 4, h2), "real_rms");
}

}  // namespace ts::ui
