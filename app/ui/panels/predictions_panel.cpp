// Predictions panel: the next-token distribution at the selected position under temperature / top-k / top-p, the
// logit lens (the argmax token after each layer at each position, through the final norm and the LM head), and a
// Generate button that samples a continuation on the worker.
#include "app/gfx/painter.h"
#include "app/plot/ticks.h"
#include "app/ui/panels/panels.h"

#include <imgui.h>

#include <algorithm>
#include <numeric>

namespace ts::ui {

void draw_predictions_panel(PanelContext& ctx) {
    UiState& st = ctx.state;
    const float line_h = ImGui::GetTextLineHeight();
    const Snapshot* s = ctx.snap;
    if (!s || s->logits.rows() == 0 || !s->tokens || s->tokens->ids.empty())
        return empty_message(s && !s->error.empty() ? s->error.c_str() : "type some text: predictions appear after the forward pass");
    const int T = int(s->logits.rows()), V = int(s->logits.cols());
    const int q = std::min(current_query(ctx), T - 1);
    const auto labels = token_labels(*s);
    auto id_label = [&](int id) { return s->codec ? s->codec->label(id) : std::to_string(id); };

    ImGui::SetNextItemWidth(line_h * 9);
    slider_log("temperature", &st.sample_temperature, 0.05f, 10.0f, "%.3g");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(line_h * 9);
    ImGui::SliderInt("top-k (0 = all)", &st.top_k, 0, std::min(V, 200));
    ImGui::SameLine();
    ImGui::SetNextItemWidth(line_h * 9);
    ImGui::SliderFloat("top-p", &st.top_p, 0.05f, 1.0f, "%.2f");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(line_h * 7);
    ImGui::SliderInt("tokens", &st.generate_tokens, 1, 100);
    ImGui::SameLine();
    if (ImGui::Button("Generate")) ctx.generate();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Sample a continuation of the text with these settings (runs on the worker).");

    const auto row = s->logits.row(q);
    const std::vector<float> raw = sampling_distribution(row.data(), V, {1.0f, 0, 1.0f});
    const std::vector<float> p = sampling_distribution(row.data(), V, {st.sample_temperature, st.top_k, st.top_p});
    std::vector<int> order(static_cast<size_t>(V));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return row[a] > row[b]; });
    const int K = std::min(V, 20);
    int kept = 0;
    for (float v : p) kept += v > 0 ? 1 : 0;

    const float avail_w = ImGui::GetContentRegionAvail().x;
    const float top_h = std::max(line_h * 12, ImGui::GetContentRegionAvail().y * 0.45f);
    plot::Figure f;
    f.title = "Next token after position " + std::to_string(q) + " '" + (q < int(labels.size()) ? labels[size_t(q)] : "") + "'";
    f.formula = "p = softmax(logits / T), then keep the k most likely (top-k) and the smallest set whose mass reaches p "
                "(top-p), renormalized. Bars: sampling distribution; dots: plain softmax (T = 1, no filtering).";
    f.x.label = "candidate token (top 20 by logit)";
    f.y.label = "probability";
    f.y.min = 0;
    plot::Series b, d;
    b.kind = plot::SeriesKind::Bars;
    b.name = "sampled from (" + std::to_string(kept) + " tokens kept)";
    b.color = gfx::palette(2);
    d.kind = plot::SeriesKind::Scatter;
    d.name = "softmax, T = 1";
    d.color = gfx::palette(1);
    for (int i = 0; i < K; ++i) {
        const int id = order[size_t(i)];
        f.x.categories.push_back(id_label(id));
        b.x.push_back(i);
        b.y.push_back(p[size_t(id)]);
        d.x.push_back(i);
        d.y.push_back(raw[size_t(id)]);
        b.point_labels.push_back("id " + std::to_string(id) + " '" + id_label(id) + "', logit " + plot::format_value(row[id]));
        d.point_labels.push_back(b.point_labels.back());
    }
    f.series = {b, d};
    gfx::draw_figure(f, ImVec2(avail_w * 0.6f, top_h), {}, "next_token");
    ImGui::SameLine();
    ImGui::BeginChild("gen", ImVec2(0, top_h), true);
    ImGui::TextUnformatted("Generated continuation");
    if (ctx.generation) {
        if (!ctx.generation->error.empty()) ImGui::TextColored(ImVec4(0.95f, 0.4f, 0.3f, 1), "%s", ctx.generation->error.c_str());
        ImGui::TextWrapped("%s", printable_label(ctx.generation->generated_text, false).c_str());
        ImGui::TextDisabled("%zu tokens in %.0f ms", ctx.generation->generated.size(), ctx.generation->compute_ms);
        if (ImGui::SmallButton("Append to the text")) st.text += ctx.generation->generated_text;
    } else {
        ImGui::TextDisabled("press Generate");
    }
    ImGui::EndChild();

    // Logit lens.
    if (s->lens_argmax.empty()) return;
    const int L = int(s->lens_argmax.size());
    const int cols = std::min(T, 48);
    const int first = T - cols;
    std::vector<float> vals;
    plot::Figure fl;
    fl.title = "Logit lens: most likely next token after each layer";
    fl.formula = "For layer ℓ and position t: argmax softmax(final_norm(resid_ffn[ℓ, t]) · W_headᵀ) — what the model "
                 "would predict if it stopped after layer ℓ. Color: that token's probability.";
    plot::Heatmap h;
    h.rows = L;
    h.cols = cols;
    h.cmap = plot::Colormap::Viridis;
    h.vmin = 0;
    h.vmax = 1;
    h.value_label = "probability";
    h.row_name = "after layer";
    h.col_name = "position";
    for (int l = 0; l < L; ++l)
        for (int t = first; t < T; ++t) {
            h.values.push_back(s->lens_prob[size_t(l)][size_t(t)]);
            h.cell_text.push_back(id_label(s->lens_argmax[size_t(l)][size_t(t)]));
        }
    fl.heatmap = h;
    for (int l = 0; l < L; ++l) fl.y.categories.push_back("L" + std::to_string(l));
    for (int t = first; t < T; ++t) fl.x.categories.push_back(labels[size_t(t)]);
    fl.x.label = "input token (position)";
    fl.y.label = "layer";
    if (first > 0) fl.note = "showing the last 48 positions";
    gfx::draw_figure(fl, ImVec2(avail_w, std::max(line_h * 8, ImGui::GetContentRegionAvail().y)), {}, "lens");
}

}  // namespace ts::ui
