// Positions panel: the sinusoidal table (position × dimension) with d_model and base sliders, a few dimensions as
// curves, the similarity PE(pos)·PE(pos+k); RoPE's rotation angle per pair against position and the dot product
// ⟨RoPE(q, m), RoPE(k, n)⟩ against m − n (it depends only on the offset), with rope_theta and pair layout.
#include "app/i18n/tr.h"
#include "app/gfx/painter.h"
#include "app/figures/figures.h"
#include "app/ui/panels/panels.h"
#include "core/kernels/ops.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

namespace ts::ui {

void draw_positions_panel(PanelContext& ctx) {
    UiState& st = ctx.state;
    const float line_h = ImGui::GetTextLineHeight();
    ImGui::SetNextItemWidth(line_h * 9);
    if (ImGui::SliderInt(tr("d_model"), &st.pe_d_model, 4, 256)) st.pe_d_model = std::max(2, st.pe_d_model / 2 * 2);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(line_h * 9);
    slider_log(tr("base"), &st.pe_base, 10.0f, 1e6f, "%.0f");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(line_h * 9);
    ImGui::SliderInt(tr("positions"), &st.pe_positions, 8, 512);
    ImGui::SameLine();
    ImGui::TextDisabled("|");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(line_h * 9);
    slider_log(tr("rope_theta"), &st.rope_theta, 10.0f, 1e6f, "%.0f");
    ImGui::SameLine();
    int layout = st.rope_interleaved ? 1 : 0;
    ImGui::RadioButton(tr("half-split (i, i+d/2)"), &layout, 0);
    ImGui::SameLine();
    ImGui::RadioButton(tr("interleaved (2i, 2i+1)"), &layout, 1);
    st.rope_interleaved = layout == 1;
    if (ctx.model && ctx.model->model) {
        const ModelConfig& c = ctx.model->model->config();
        if (c.relative_attention_bias) ImGui::TextDisabled("%s", tr("This model adds a relative position bias to the scores (T5)."));
        else ImGui::TextDisabled(tr("This model uses %s positions%s."), position_label(c.position),
                            c.position == PositionKind::RoPE ? (std::string(", rope_theta ") + std::to_string(int(c.rope_theta)) + ", " + to_string(c.rope_layout)).c_str() : "");
    }

    // A T5-style model: its relative position bias gets a third row (stack from the Attention source setting).
    const Model* rel_model = ctx.model && ctx.model->model && ctx.model->model->config().relative_attention_bias
                                 ? ctx.model->model.get()
                                 : nullptr;
    const float rows = rel_model ? 3.0f : 2.0f;
    const std::vector<plot::Figure> figs = position_figures(st);
    const float avail_w = ImGui::GetContentRegionAvail().x;
    const float row_h = std::max(line_h * 12, ImGui::GetContentRegionAvail().y / rows - 4);
    const float third = avail_w / 3.0f - 6;
    gfx::draw_figure(figs[0], ImVec2(third, row_h), {}, "pe_table");
    ImGui::SameLine();
    gfx::draw_figure(figs[1], ImVec2(third, row_h), {}, "pe_curves");
    ImGui::SameLine();
    gfx::draw_figure(figs[2], ImVec2(third, row_h), {}, "pe_sim");
    const float half_w = avail_w * 0.5f - 4;
    const float h2 = rel_model ? row_h : std::max(line_h * 12, ImGui::GetContentRegionAvail().y);
    gfx::draw_figure(figs[3], ImVec2(half_w, h2), {}, "rope_angle");
    ImGui::SameLine();
    gfx::draw_figure(figs[4], ImVec2(half_w, h2), {}, "rope_dot");
    if (rel_model) {
        const ModelConfig& c = rel_model->config();
        const std::string stack = st.attn_source == AttnSource::Encoder ? "enc" : "dec";
        const int head = std::clamp(st.head, 0, c.n_heads - 1);
        const std::string line = stack == "enc"
                                     ? trf("Relative position bias (T5): encoder stack, head %d (stack and head follow "
                                           "the Attention tab)", head)
                                     : trf("Relative position bias (T5): decoder stack, head %d (stack and head follow "
                                           "the Attention tab)", head);
        ImGui::TextDisabled("%s", line.c_str());
        const float h3 = std::max(line_h * 12, ImGui::GetContentRegionAvail().y - line_h);
        gfx::draw_figure(relative_bucket_figure(c.relative_attention_num_buckets, c.relative_attention_max_distance),
                         ImVec2(third, h3), {}, "rel_buckets");
        ImGui::SameLine();
        if (auto f = relative_bias_heads_figure(*rel_model, stack)) gfx::draw_figure(*f, ImVec2(third, h3), {}, "rel_heads");
        ImGui::SameLine();
        if (auto f = relative_bias_heatmap_figure(*rel_model, stack, st.head, std::min(st.pe_positions, 64)))
            gfx::draw_figure(*f, ImVec2(third, h3), {}, "rel_bias");
    }
}

}  // namespace ts::ui
