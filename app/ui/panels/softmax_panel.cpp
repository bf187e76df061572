// Softmax lab: one query row of the model's scaled attention scores (or typed logits) as bars, its softmax at a
// temperature with entropy and max-probability readouts, a live mask (none, causal, padding, sliding window, custom
// painted on the mask grid), a switch that applies them to the model itself, and the naive-formula overflow demo.
#include "app/i18n/tr.h"
#include "app/gfx/painter.h"
#include "app/plot/ticks.h"
#include "app/figures/figures.h"
#include "app/ui/panels/panels.h"
#include "app/session/forward_spec.h"
#include "core/kernels/ops.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>

namespace ts::ui {

void draw_softmax_panel(PanelContext& ctx) {
    UiState& st = ctx.state;
    const float line_h = ImGui::GetTextLineHeight();
    const Snapshot* snap = ctx.snap;
    const int layer = current_layer(ctx), head = current_head(ctx), q = current_query(ctx);

    // --- source row ---
    const bool have_model_row = snap && snap->trace;
    bool typed = st.sm_use_typed || !have_model_row;
    if (ImGui::RadioButton(tr("query row from the model"), !typed) && have_model_row) st.sm_use_typed = false;
    ImGui::SameLine();
    if (ImGui::RadioButton(tr("typed logits"), typed)) st.sm_use_typed = true;
    typed = st.sm_use_typed || !have_model_row;
    if (typed) {
        ImGui::SameLine();
        ImGui::SetNextItemWidth(line_h * 20);
        ImGui::InputText("##logits", &st.sm_typed_logits);
    }
    SoftmaxLab lab = softmax_lab(st, snap);
    if (!typed) {
        ImGui::SameLine();
        ImGui::TextDisabled(tr("(%s; pick layer/head/query in the sidebar)"), lab.source.c_str());
    }
    if (!lab.error.empty() && typed) {
        ImGui::TextColored(ImVec4(0.95f, 0.4f, 0.3f, 1), "%s", lab.error.c_str());
        return;
    }
    if (lab.logits.empty()) return empty_message(tr("no scores recorded yet"));
    const int S = int(lab.logits.size());
    (void)layer; (void)head; (void)q;

    // --- knobs ---
    ImGui::SetNextItemWidth(line_h * 14);
    slider_log(tr("temperature T"), &st.sm_temperature, 0.05f, 10.0f, "%.3g");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(line_h * 9);
    mask_combo(st.sm_mask);
    if (st.sm_mask == MaskChoice::Custom) {
        ImGui::SameLine();
        if (ImGui::SmallButton(tr("causal"))) {
            st.sm_paint.clear();
            st.sm_paint_n = 0;
        }
        ImGui::SameLine();
        if (ImGui::SmallButton(tr("all visible"))) {
            st.sm_paint.assign(size_t(S) * size_t(S), 1);
            st.sm_paint_n = S;
        }
        ImGui::SameLine();
        if (ImGui::SmallButton(tr("diagonal only"))) {
            st.sm_paint.assign(size_t(S) * size_t(S), 0);
            for (int i = 0; i < S; ++i) st.sm_paint[size_t(i) * size_t(S) + size_t(i)] = 1;
            st.sm_paint_n = S;
        }
    }
    if (st.sm_mask == MaskChoice::Sliding) {
        same_line_if_fits(labeled_width(tr("window w"), line_h * 8));
        ImGui::SetNextItemWidth(line_h * 8);
        ImGui::SliderInt(tr("window w"), &st.sm_window, 1, std::max(1, S));
    }
    if (st.sm_mask == MaskChoice::Padding) {
        same_line_if_fits(labeled_width(tr("padded keys"), line_h * 8));
        ImGui::SetNextItemWidth(line_h * 8);
        ImGui::SliderInt(tr("padded keys"), &st.sm_padding, 0, std::max(0, S - 1));
    }
    same_line_if_fits(ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
                      ImGui::CalcTextSize(tr("apply to the model")).x);
    bool apply = st.apply_to_model;
    if (ImGui::Checkbox(tr("apply to the model"), &apply)) st.apply_to_model = apply;
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", tr("Re-run the forward pass with this temperature and mask in every attention layer."));
    // With "apply to the model" on, these knobs and the sidebar's are one setting (link_attention_knobs, each frame).

    // --- softmax with mask and temperature (recomputed after the knobs moved) ---
    lab = softmax_lab(st, snap);
    if (lab.figures.size() < 3) return empty_message(lab.error.c_str());
    ImGui::Text(tr("entropy H = %.4f nats (uniform over %d visible keys: %.4f)   ·   max probability %.4f at key %d '%s'"), lab.entropy,
                lab.n_visible, lab.n_visible > 0 ? std::log(double(lab.n_visible)) : 0.0, lab.pmax, lab.amax,
                lab.amax < int(lab.labels.size()) ? lab.labels[size_t(lab.amax)].c_str() : "");
    const float avail_w = ImGui::GetContentRegionAvail().x;
    const float plot_h = std::max(line_h * 12, (ImGui::GetContentRegionAvail().y - line_h * 9) * 0.5f);
    gfx::draw_figure(lab.figures[0], ImVec2(avail_w * 0.5f - 4, plot_h), {}, "sm_logits");
    ImGui::SameLine();
    gfx::draw_figure(lab.figures[1], ImVec2(avail_w * 0.5f - 4, plot_h), {}, "sm_probs");
    const float bottom_h = std::max(line_h * 10, ImGui::GetContentRegionAvail().y);
    gfx::draw_figure(lab.figures[2], ImVec2(avail_w * 0.34f - 4, bottom_h), {}, "sm_entropy");
    ImGui::SameLine();

    // The mask of every query row; in "custom" mode a click toggles a cell and a drag paints the same value.
    {
        static int drag_value = -1;  // -1: not painting; else the value a drag writes
        gfx::PaintOptions o;
        o.highlight_row = lab.qpos;
        o.export_button = false;
        const auto r = gfx::draw_figure(lab.mask_figure, ImVec2(avail_w * 0.3f - 4, bottom_h), o, "sm_mask");
        const bool custom = st.sm_mask == MaskChoice::Custom;
        if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) drag_value = -1;
        if (custom && r.hovered && r.row >= 0 && r.col >= 0 && r.row < S && r.col < S) {
            const std::vector<uint8_t> cells = painted_cells(st, S);
            const bool cur = cells[size_t(r.row) * size_t(S) + size_t(r.col)] != 0;
            if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) drag_value = cur ? 0 : 1;
            if (drag_value >= 0 && cur != (drag_value == 1)) paint_cell(st, S, r.row, r.col, drag_value == 1);
            ImGui::SetTooltip(tr("query %d, key %d: %s — click to %s"), r.row, r.col, cur ? tr("visible") : tr("masked"),
                              cur ? tr("mask") : tr("unmask"));
        } else if (!custom && r.clicked && r.row >= 0 && !lab.typed) {
            st.query = r.row;
        }
    }
    ImGui::SameLine();
    MatrixRM row(1, S);
    for (int s2 = 0; s2 < S; ++s2) row(0, s2) = lab.mask[size_t(s2)] ? lab.logits[size_t(s2)] : -INFINITY;

    // Stable-softmax demo.
    ImGui::BeginChild("stable", ImVec2(0, 0), true);
    ImGui::TextUnformatted(tr("Why subtract the max? softmax([1000, 1001, 2000])"));
    MatrixRM demo(1, 3);
    demo << 1000.0f, 1001.0f, 2000.0f;
    const MatrixRM naive = naive_softmax_rows(demo);
    const MatrixRM stable = softmax_rows(demo);
    // Short column headers (a narrow column clips long ones); the formulas they stand for go on the line above.
    ImGui::TextWrapped("%s", tr("In float32: naive = exp(x) / Σ exp(x); stable = exp(x − max) / Σ exp(x − max)."));
    if (ImGui::BeginTable("stable_tbl", 4, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg)) {
        ImGui::TableSetupColumn("x");
        ImGui::TableSetupColumn("exp(x)");
        ImGui::TableSetupColumn(tr("naive"));
        ImGui::TableSetupColumn(tr("stable"));
        ImGui::TableHeadersRow();
        for (int i = 0; i < 3; ++i) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::Text("%.0f", demo(0, i));
            ImGui::TableNextColumn();
            ImGui::Text("%s", plot::format_value(std::exp(demo(0, i))).c_str());
            ImGui::TableNextColumn();
            ImGui::Text("%s", plot::format_value(naive(0, i)).c_str());
            ImGui::TableNextColumn();
            ImGui::Text("%s", plot::format_value(stable(0, i)).c_str());
        }
        ImGui::EndTable();
    }
    ImGui::TextWrapped("%s", tr("float32 overflows past exp(88.7) ≈ 3.4e38: the naive formula divides inf by inf and gets NaN. "
                       "Subtracting the row max first (x − 2000 → −1000, −999, 0) gives the same probabilities without "
                       "overflow: softmax(x) = softmax(x − c) for any constant c."));
    ImGui::Separator();
    ImGui::TextUnformatted(tr("The current row, both ways:"));
    const MatrixRM nr = naive_softmax_rows(row);
    int n_nan = 0;
    for (int s = 0; s < S; ++s) n_nan += std::isnan(nr(0, s)) ? 1 : 0;
    double psum = 0;
    for (float v : lab.probs) psum += v;
    ImGui::Text(tr("naive: %d NaN of %d   ·   stable: sums to %.6f"), n_nan, S, psum);
    ImGui::EndChild();
}

}  // namespace ts::ui
