// Causal panel: ask the model why, with the mouse. Knock heads out (every panel's forward then runs with them
// ablated), sweep every head, patch activations from a clean prompt into a corrupted one, split a logit into the
// contributions of every head and MLP, compare raw attention with attention rollout and flow, and find heads of known
// kinds with the head detectors. The analyses
// run off the UI thread (app/session/interp_jobs.h); figures come from app/figures (the same as `render`).
#include "app/i18n/tr.h"
#include "app/figures/figures.h"
#include "app/gfx/painter.h"
#include "app/ui/panels/panels.h"
#include "core/kernels/ops.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ts::ui {

namespace {

using Kind = InterpResult::Kind;

bool is_ablated(const UiState& st, int l, int h) {
    return std::find(st.ablated_heads.begin(), st.ablated_heads.end(), std::array<int, 2>{l, h}) != st.ablated_heads.end();
}

void toggle_ablation(UiState& st, int l, int h) {
    const std::array<int, 2> k{l, h};
    auto it = std::find(st.ablated_heads.begin(), st.ablated_heads.end(), k);
    if (it == st.ablated_heads.end()) st.ablated_heads.push_back(k);
    else st.ablated_heads.erase(it);
}

/// log softmax(last logits row)[token] of the snapshot, nats (NaN without logits).
double last_log_prob(const Snapshot* s, int token) {
    if (!s) return NAN;
    const std::span<const float> row = s->logits_row(s->logits_positions() - 1);  // computed here if not yet
    if (token < 0 || size_t(token) >= row.size()) return NAN;
    const Eigen::Map<const MatrixRM> l(row.data(), 1, Eigen::Index(row.size()));
    return double(row[size_t(token)]) - double(logsumexp_rows(l)(0));
}

/// "Run" button, or progress bar + Cancel while this kind runs. Returns true when the button was pressed.
bool run_button(PanelContext& ctx, const char* label, Kind kind) {
    InterpJobs& jobs = *ctx.interp;
    if (jobs.busy() && jobs.running_kind() == kind) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * jobs.progress());
        ImGui::ProgressBar(jobs.progress(), ImVec2(ImGui::GetFontSize() * 12, 0), buf);
        ImGui::SameLine();
        if (ImGui::SmallButton(tr("Cancel"))) jobs.cancel();
        return false;
    }
    ImGui::BeginDisabled(jobs.busy());
    const bool pressed = ImGui::Button(label);
    ImGui::EndDisabled();
    return pressed;
}

void error_line(const std::string& e) {
    if (e.empty()) return;
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.95f, 0.45f, 0.3f, 1.0f));
    ImGui::TextWrapped("%s", e.c_str());
    ImGui::PopStyleColor();
}

void section(const char* title) {
    ImGui::Spacing();
    ImGui::Separator();
    ImGui::TextUnformatted(title);
}

// Input attribution (section 6; the only analysis of this panel for encoder–decoder models).
void draw_input_attribution(PanelContext& ctx, float avail_w, float fig_h, int fallback, bool seq2seq) {
    UiState& st = ctx.state;
    InterpJobs& jobs = *ctx.interp;
    // --- input attribution -------------------------------------------------------------------------------------------
    section(seq2seq ? tr("Input attribution: which source tokens made each word of the translation?")
                    : tr("6. Input attribution: which input tokens made the prediction?"));
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
    text_wrapped(
        seq2seq ? tr("explains every token of the translation: the target box, or when it is empty the model's own "
                     "translation; beside it the cross-attention of the same pairs")
                : tr("explains the target token predicted after the selected token (the query knob; blank: the top "
                     "prediction there); with a minus token, logit(target) − logit(minus): why this token and not that "
                     "one"));
    ImGui::PopStyleColor();
    static const char* const kMethods[] = {"integrated-gradients", "grad-x-input", "occlusion"};
    const char* method_labels[] = {tr("integrated gradients"), tr("gradient × input"), tr("occlusion")};
    int method = 0;
    for (int i = 0; i < 3; ++i)
        if (st.attr_method == kMethods[i]) method = i;
    for (int i = 0; i < 3; ++i) {
        if (i) ImGui::SameLine();
        ImGui::RadioButton(method_labels[i], &method, i);
    }
    st.attr_method = kMethods[method];
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
    if (method == 0) {
        ImGui::SliderInt(tr("steps"), &st.attr_steps, 1, 1024, "%d",
                         ImGuiSliderFlags_AlwaysClamp | ImGuiSliderFlags_Logarithmic);
        ImGui::SameLine();
        bool adaptive = st.attr_ig_rule == "adaptive";
        ImGui::Checkbox(tr("adaptive points"), &adaptive);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s",
                              tr("halve the stretches of the path where the scores miss f's change, until the "
                                 "gap is under 0.5 % (at most the steps); off: evenly spaced midpoints"));
        st.attr_ig_rule = adaptive ? "adaptive" : "midpoint";
    } else if (method == 2)
        ImGui::SliderInt(tr("tokens hidden at once"), &st.attr_span, 1, 16, "%d", ImGuiSliderFlags_AlwaysClamp);
    int zero_base = st.attr_baseline == "zero" ? 1 : 0;
    ImGui::AlignTextToFramePadding();  // a row of its own: one row clipped the run button at 1280 px
    ImGui::TextUnformatted(tr("baseline:"));
    ImGui::SameLine();
    ImGui::RadioButton(tr("mean embedding"), &zero_base, 0);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", tr("every token replaced by the mean token embedding (positions kept)"));
    ImGui::SameLine();
    ImGui::RadioButton(tr("zero"), &zero_base, 1);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s",
                          tr("every token embedding set to 0 (positions kept); degenerate for RoPE + RMSNorm "
                             "models, whose completeness gap then stays large"));
    st.attr_baseline = zero_base ? "zero" : "mean";
    ImGui::SameLine();
    if (run_button(ctx, tr("Attribute to input tokens"), Kind::Inputs))
        jobs.start(Kind::Inputs, st, *ctx.model, fallback);
    if (auto r = jobs.latest(Kind::Inputs)) {
        error_line(r->error);
        if (r->inputs || r->inputs_seq2seq) {
            const auto figs = input_attribution_figures(*r);
            const char* ids[] = {"input_attribution", "input_attribution_attn"};
            for (size_t i = 0; i < figs.size() && i < 2; ++i) {
                if (i) ImGui::SameLine();
                gfx::draw_figure(figs[i], ImVec2(avail_w / float(figs.size()) - (figs.size() > 1 ? 6 : 0), fig_h), {},
                                 ids[i]);
            }
            // The note carries f(x), f(0), the completeness gap and ρ: what a reader needs to trust the figure.
            ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
            text_wrapped(figs.empty() ? std::string() : figs[0].note + " · " + trf("%.1f s", r->seconds));
            ImGui::PopStyleColor();
        }
    }
}

}  // namespace

void draw_causal_panel(PanelContext& ctx) {
    UiState& st = ctx.state;
    const Model* model = ctx.model ? ctx.model->model.get() : nullptr;
    if (!model || !ctx.interp) return empty_message(tr("load a model to ask it causal questions"));
    const ModelConfig& c = model->config();
    InterpJobs& jobs = *ctx.interp;
    if (jobs.busy() && ctx.keep_drawing) ctx.keep_drawing();
    const float line_h = ImGui::GetTextLineHeight();
    const float avail_w = ImGui::GetContentRegionAvail().x;
    const float fig_h = std::max(line_h * 14, ImGui::GetContentRegionAvail().y * 0.42f);
    const int fallback = top_prediction(ctx.snap);
    if (c.arch == Arch::EncoderDecoder) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
        text_wrapped(
            tr("ablation, patching and logit attribution are defined here for decoder-only and encoder-only "
               "models; this one is encoder–decoder"));
        ImGui::PopStyleColor();
        return draw_input_attribution(ctx, avail_w, fig_h, fallback, true);
    }
    const std::string top_label = fallback >= 0 && ctx.model->codec ? quoted_token(ctx.model->codec->label(fallback)) : "?";

    ImGui::TextWrapped("%s", tr("Looking at attention shows where a head looks, not whether it matters. Knock heads out, patch "
                       "activations between two prompts and split a logit into its sources to see what the "
                       "prediction depends on."));
    if (ImGui::SmallButton(tr("Load the indirect-object example (Wang et al. 2022)"))) {
        st.text = "When Mary and John went to the store, John gave a drink to";
        st.interp_corrupt = "When Mary and John went to the store, Mary gave a drink to";
        st.interp_answer = " Mary";
        st.interp_wrong = " John";
        st.interp_target = " Mary";
        st.interp_minus = " John";
    }
    ImGui::SameLine();
    if (ImGui::SmallButton(tr("Load a repeated sentence (induction)"))) {
        st.text = "Mr. Darcy bowed to Elizabeth, and Elizabeth smiled. Mr. Darcy bowed to Elizabeth, and";
        st.interp_target = " Elizabeth";
        st.interp_minus.clear();
    }

    // --- ablation ----------------------------------------------------------------------------------------------------
    section(tr("1. Head ablation: click heads to knock them out (every panel then runs with them ablated)"));
    ImGui::SetNextItemWidth(line_h * 6);
    int mode = st.ablate_mode == interp::AblationKind::Mean ? 1 : 0;
    const char* mode_names[] = {tr("zero"), tr("mean")};
    if (ImGui::Combo(tr("ablation"), &mode, mode_names, 2))
        st.ablate_mode = mode == 1 ? interp::AblationKind::Mean : interp::AblationKind::Zero;
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", tr("zero: the head's output (before W_O) := 0\nmean: := its mean over the positions of the text"));
    ImGui::SameLine();
    if (ImGui::SmallButton(tr("clear all"))) st.ablated_heads.clear();
    ImGui::SameLine();
    ImGui::SetNextItemWidth(line_h * 8);
    text_field(tr("target token"), top_label.c_str(), st.interp_target);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr("the token whose log-probability (and logit) is explained; empty = the top prediction"));
    const float cell = std::clamp((avail_w * 0.45f - line_h * 2.5f) / float(std::max(1, c.n_heads)), line_h * 1.2f, line_h * 2.4f);
    ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(2, 2));
    ImGui::TextUnformatted("   ");
    for (int h = 0; h < c.n_heads; ++h) {
        ImGui::SameLine();
        char lbl[16];
        std::snprintf(lbl, sizeof lbl, "H%d", h);
        const float x = ImGui::GetCursorPosX();
        ImGui::SetCursorPosX(x + std::max(0.0f, (cell - ImGui::CalcTextSize(lbl).x) * 0.5f));
        ImGui::TextUnformatted(lbl);
        ImGui::SameLine();
        ImGui::SetCursorPosX(x + cell);
        ImGui::Dummy(ImVec2(0, 0));
    }
    for (int l = 0; l < c.n_layers; ++l) {
        ImGui::AlignTextToFramePadding();
        ImGui::Text("L%-2d", l);
        for (int h = 0; h < c.n_heads; ++h) {
            ImGui::SameLine();
            const bool on = is_ablated(st, l, h);
            if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.8f, 0.25f, 0.2f, 1.0f));
            char id[32];
            std::snprintf(id, sizeof id, "%s##abl%d_%d", on ? "x" : "", l, h);
            if (ImGui::Button(id, ImVec2(cell, line_h * 1.2f))) toggle_ablation(st, l, h);
            if (ImGui::IsItemHovered()) ImGui::SetTooltip(tr("layer %d, head %d: %s"), l, h, on ? "ablated (click to restore)" : "click to ablate");
            if (on) ImGui::PopStyleColor();
        }
    }
    ImGui::PopStyleVar();
    {
        int target = fallback;
        if (!st.interp_target.empty() && ctx.model->codec) {
            try {
                target = first_token(*ctx.model->codec, st.interp_target, "target token");
            } catch (const std::invalid_argument&) {
                target = -1;
            }
        }
        const double lp = last_log_prob(ctx.snap, target);
        auto sweep = jobs.latest(Kind::Sweep);
        const bool same_target = sweep && sweep->sweep && sweep->in.target == target && sweep->in.ids == (ctx.snap && ctx.snap->tokens ? ctx.snap->tokens->ids : std::vector<int>{});
        if (std::isfinite(lp)) {
            ImGui::Text(tr("log p(%s) at the last position, this run: %.3f nats (p = %.3f)%s"), target >= 0 ? ctx.model->codec->label(target).c_str() : "?",
                        lp, std::exp(lp), st.ablated_heads.empty() ? tr(" · no head ablated") : "");
            if (same_target && !st.ablated_heads.empty()) {
                ImGui::Text(tr("clean: %.3f nats; change %.3f nats. Each ablated head alone (from the sweep):"), double(sweep->sweep->clean_log_prob),
                            lp - double(sweep->sweep->clean_log_prob));
                for (const auto& h : st.ablated_heads)
                    if (h[0] < sweep->sweep->delta_log_prob.rows() && h[1] < sweep->sweep->delta_log_prob.cols()) {
                        ImGui::SameLine();
                        ImGui::Text(" L%dH%d %+.3f", h[0], h[1], double(sweep->sweep->delta_log_prob(h[0], h[1])));
                    }
            } else if (!st.ablated_heads.empty()) {
                ImGui::TextDisabled("%s", tr("run the sweep to see each ablated head's own effect and the clean value"));
            }
        }
    }
    if (run_button(ctx, tr("Ablate each head in turn"), Kind::Sweep) && ctx.model)
        jobs.start(Kind::Sweep, st, *ctx.model, fallback);
    if (auto r = jobs.latest(Kind::Sweep)) {
        error_line(r->error);
        if (r->sweep) {
            const gfx::PlotInteraction pi = gfx::draw_figure(ablation_sweep_figure(*r), ImVec2(avail_w * 0.6f, fig_h), {}, "ablation_sweep");
            if (pi.clicked && pi.row >= 0 && pi.col >= 0) toggle_ablation(st, pi.row, pi.col);
            ImGui::TextDisabled(tr("%.1f s · click a cell to ablate that head"), r->seconds);
        }
    }

    // --- patching ----------------------------------------------------------------------------------------------------
    section(tr("2. Activation patching: which activations carry the difference between two prompts?"));
    ImGui::TextDisabled("%s", tr("clean prompt = the text in the sidebar; the corrupted prompt needs the same number of tokens"));
    ImGui::SetNextItemWidth(avail_w * 0.6f);
    text_field(tr("corrupted prompt"), "", st.interp_corrupt);
    ImGui::SetNextItemWidth(line_h * 6);
    text_field(tr("answer"), "", st.interp_answer);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(line_h * 6);
    text_field(tr("wrong answer"), "", st.interp_wrong);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr("metric: logit(answer) − logit(wrong answer) at the last position"));
    ImGui::SameLine();
    if (run_button(ctx, tr("Run patching"), Kind::Patching))
        jobs.start(Kind::Patching, st, *ctx.model, fallback);
    if (auto r = jobs.latest(Kind::Patching)) {
        error_line(r->error);
        const auto figs = r->error.empty() ? patching_figures(*r) : std::vector<plot::Figure>{};
        for (size_t i = 0; i < figs.size(); ++i) {
            if (i) ImGui::SameLine();
            gfx::draw_figure(figs[i], ImVec2(i == 0 ? avail_w * 0.6f - 4 : avail_w * 0.4f - 4, fig_h), {}, i == 0 ? "patch_resid" : "patch_heads");
        }
        const bool cancelled = (r->patch_resid && r->patch_resid->cancelled) || (r->patch_heads && r->patch_heads->cancelled);
        if (r->error.empty() && cancelled)
            ImGui::TextDisabled(tr("cancelled after %.1f s: cells not run are left blank"), r->seconds);
        else if (r->error.empty())
            ImGui::TextDisabled(tr("%.1f s for %d forwards"), r->seconds, int(c.n_layers * (r->in.ids.size() + size_t(c.n_heads))));
    }

    // --- direct logit attribution ---------------------------------------------------------------------------------------
    section(tr("3. Direct logit attribution: which components write the target's logit?"));
    ImGui::SetNextItemWidth(line_h * 8);
    text_field(tr("minus token (optional)"), tr("none"), st.interp_minus);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr("attribute logit(target) − logit(this token), e.g. ' Mary' − ' John'"));
    ImGui::SameLine();
    if (run_button(ctx, tr("Attribute"), Kind::Attribution))
        jobs.start(Kind::Attribution, st, *ctx.model, fallback);
    if (auto r = jobs.latest(Kind::Attribution)) {
        error_line(r->error);
        if (r->attribution && !r->attribution->error.empty()) error_line(r->attribution->error);
        if (r->attribution && r->attribution->error.empty()) {
            const auto figs = logit_attribution_figures(*r, c.n_layers);
            gfx::draw_figure(figs[0], ImVec2(avail_w * 0.6f - 4, fig_h), {}, "dla_layers");
            ImGui::SameLine();
            gfx::draw_figure(figs[1], ImVec2(avail_w * 0.4f - 4, fig_h), {}, "dla_heads");
        }
    }

    // --- rollout and flow --------------------------------------------------------------------------------------------
    section(tr("4. Attention rollout and attention flow (Abnar & Zuidema 2020) beside raw attention"));
    const float rollout_y = ImGui::GetCursorPosY();
    if (ctx.snap && ctx.snap->trace && ctx.snap->tokens && !ctx.snap->tokens->ids.empty()) {
        gfx::draw_figure(attention_rollout_figure(*ctx.snap), ImVec2(avail_w * 0.5f - 4, fig_h * 1.2f), {}, "rollout");
        ImGui::SameLine();
        ImGui::BeginGroup();
        if (run_button(ctx, tr("Compute attention flow"), Kind::Flow))
            jobs.start(Kind::Flow, st, *ctx.model, fallback);
        if (auto r = jobs.latest(Kind::Flow)) {
            error_line(r->error);
            if (r->flow) gfx::draw_figure(attention_flow_figure(*r), ImVec2(avail_w * 0.5f - 4, fig_h * 1.2f - line_h * 1.6f), {}, "flow");
        }
        ImGui::EndGroup();
        // Below the taller of the two (the rollout figure does not move the cursor past its own height).
        ImGui::SetCursorPosY(
            std::max(ImGui::GetCursorPosY(), rollout_y + fig_h * 1.2f + ImGui::GetStyle().ItemSpacing.y));
    } else {
        empty_message(no_forward_message(ctx, tr("rollout appears after the first forward pass of your text")));
    }

    // --- head detectors ----------------------------------------------------------------------------------------------
    section(
        tr("5. Head detectors: which heads look at the previous token, at earlier copies, after earlier copies "
           "(induction) or at the first token"));
    int on_random = st.detect_random ? 1 : 0;
    ImGui::RadioButton(tr("on your text"), &on_random, 0);
    ImGui::SameLine();
    ImGui::RadioButton(tr("on random tokens said twice"), &on_random, 1);
    st.detect_random = on_random == 1;
    if (st.detect_random) {
        ImGui::SameLine();
        ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
        ImGui::SliderInt(tr("tokens per half"), &st.detect_half, 2, 512, "%d", ImGuiSliderFlags_AlwaysClamp);
    }
    ImGui::Checkbox(tr("leave out attention on the first token"), &st.detect_exclude_bos);
    ImGui::SameLine();
    ImGui::Checkbox(tr("leave out attention on the query itself"), &st.detect_exclude_current);
    ImGui::SameLine();
    if (run_button(ctx, tr("Detect heads"), Kind::Heads)) jobs.start(Kind::Heads, st, *ctx.model, fallback);
    if (auto r = jobs.latest(Kind::Heads)) {
        error_line(r->error);
        const std::vector<plot::Figure> figs = head_detector_figures(*r);
        const char* ids[] = {"heads_prev", "heads_dup", "heads_induction", "heads_first"};
        // Two by two: four in a row leave too little room for the titles and labels at 1280 px.
        for (size_t k = 0; k < figs.size() && k < std::size(ids); ++k) {
            if (k % 2 == 1) ImGui::SameLine();
            const float y = ImGui::GetCursorPosY();
            gfx::draw_figure(figs[k], ImVec2(avail_w * 0.5f - 6, fig_h), {}, ids[k]);
            if (k % 2 == 1)
                ImGui::SetCursorPosY(std::max(ImGui::GetCursorPosY(), y + fig_h + ImGui::GetStyle().ItemSpacing.y));
        }
    }
    draw_input_attribution(ctx, avail_w, fig_h, fallback, false);
}

}  // namespace ts::ui
