// Predictions panel: the next-token distribution at the selected position under temperature / top-k / top-p, the
// logit lens (the argmax token after each layer at each position, through the final norm and the LM head), and a
// Generate button that samples a continuation on the worker. Masked-LM models (BERT) get the fill-mask view instead.
#include "app/i18n/tr.h"
#include "app/gfx/painter.h"
#include "app/plot/ticks.h"
#include "app/figures/figures.h"
#include "app/i18n/tr.h"
#include "app/ui/panels/panels.h"

#include <imgui.h>

#include <algorithm>
#include <numeric>

namespace ts::ui {

namespace {

// Masked-LM models (BERT): no next token to predict; the fill-mask candidates of each mask in the text instead.
void draw_fill_mask(const PanelContext& ctx, const Snapshot& s) {
    const float line_h = ImGui::GetTextLineHeight();
    const float avail_w = ImGui::GetContentRegionAvail().x;
    const int mask = mask_token_id(s);
    const std::vector<plot::Figure> figs = fill_mask_figures(s);
    if (figs.empty()) {
        if (mask < 0)
            ImGui::TextWrapped("%s", ts::tr("This model has a masked-LM head, but its tokenizer has no mask token "
                                            "([MASK] or <mask>): nothing to fill."));
        else
            ImGui::TextWrapped(ts::tr("Type %s where a word should be guessed, e.g. \"The capital of France is %s.\" — "
                                      "the masked-LM head then shows its top candidates for each mask."),
                               s.codec->label(mask).c_str(), s.codec->label(mask).c_str());
    } else {
        // Up to three masks side by side, more wrap onto further rows.
        const int n = int(figs.size()), cols = std::min(n, 3);
        const int rows = (n + cols - 1) / cols;
        const float lens_h = s.lens_argmax.empty() ? 0.0f : line_h * 10;
        const float fig_h = std::max(line_h * 12, (ImGui::GetContentRegionAvail().y - lens_h) / float(rows) - line_h);
        const float fig_w = (avail_w - ImGui::GetStyle().ItemSpacing.x * float(cols - 1)) / float(cols);
        for (int k = 0; k < n; ++k) {
            if (k % cols) ImGui::SameLine();
            gfx::draw_figure(figs[size_t(k)], ImVec2(fig_w, fig_h), {}, ("fill_mask_" + std::to_string(k)).c_str());
        }
    }
    (void)ctx;
    if (const std::optional<plot::Figure> fl = logit_lens_figure(s))
        gfx::draw_figure(*fl, ImVec2(avail_w, std::max(line_h * 8, ImGui::GetContentRegionAvail().y)), {}, "lens");
}

}  // namespace

void draw_predictions_panel(PanelContext& ctx) {
    UiState& st = ctx.state;
    const float line_h = ImGui::GetTextLineHeight();
    const Snapshot* s = ctx.snap;
    if (s && s->error.empty() && s->trace && s->tokens && !s->tokens->ids.empty() && s->logits_positions() == 0)
        return empty_message(ts::tr("this model has no output head (e.g. a BertModel folder without its masked-LM head): "
                                    "no predictions; the attention panels still show it"));
    if (!s || s->logits_positions() == 0 || !s->tokens || s->tokens->ids.empty())
        return empty_message(s && !s->error.empty() ? s->error.c_str() : tr("type some text: predictions appear after the forward pass"));
    if (has_fill_mask(*s)) return draw_fill_mask(ctx, *s);
    const int T = s->logits_positions(), V = int(s->logits.cols());
    const int q = std::min(current_query(ctx), T - 1);

    const float knob_w = line_h * 8;
    ImGui::SetNextItemWidth(knob_w);
    slider_log(tr("temperature"), &st.sample_temperature, 0.05f, 10.0f, "%.3g");
    same_line_if_fits(labeled_width(tr("top-k (0 = all)"), knob_w));
    ImGui::SetNextItemWidth(knob_w);
    ImGui::SliderInt(tr("top-k (0 = all)"), &st.top_k, 0, std::min(V, 200));
    same_line_if_fits(labeled_width(tr("top-p"), knob_w));
    ImGui::SetNextItemWidth(knob_w);
    ImGui::SliderFloat(tr("top-p"), &st.top_p, 0.05f, 1.0f, "%.2f");
    // The generate controls stay together: wrapped as one group when the row is full.
    same_line_if_fits(labeled_width(tr("tokens"), line_h * 7) + ImGui::CalcTextSize(tr("Generate")).x + line_h * 2);
    ImGui::SetNextItemWidth(line_h * 7);
    ImGui::SliderInt(tr("tokens"), &st.generate_tokens, 1, 100);
    ImGui::SameLine();
    if (ImGui::Button(tr("Generate"))) ctx.generate();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr("Sample a continuation of the text with these settings (runs on the worker)."));

    const float avail_w = ImGui::GetContentRegionAvail().x;
    const float top_h = std::max(line_h * 12, ImGui::GetContentRegionAvail().y * 0.45f);
    const plot::Figure f = next_token_figure(*s, st, q);
    gfx::draw_figure(f, ImVec2(avail_w * 0.6f, top_h), {}, "next_token");
    ImGui::SameLine();
    ImGui::BeginChild("gen", ImVec2(0, top_h), true);
    ImGui::TextUnformatted(tr("Generated continuation"));
    if (ctx.generation) {
        if (!ctx.generation->error.empty()) ImGui::TextColored(ImVec4(0.95f, 0.4f, 0.3f, 1), "%s", ctx.generation->error.c_str());
        ImGui::TextWrapped("%s", printable_label(ctx.generation->generated_text, false).c_str());
        ImGui::TextDisabled(tr("%zu tokens in %.0f ms"), ctx.generation->generated.size(), ctx.generation->compute_ms);
        if (ImGui::SmallButton(tr("Append to the text"))) st.text += ctx.generation->generated_text;
    } else {
        ImGui::TextDisabled("%s", tr("press Generate"));
    }
    ImGui::EndChild();

    // Logit lens.
    const std::optional<plot::Figure> fl = logit_lens_figure(*s);
    if (!fl) return;
    gfx::draw_figure(*fl, ImVec2(avail_w, std::max(line_h * 8, ImGui::GetContentRegionAvail().y)), {}, "lens");
}

}  // namespace ts::ui
