// Neurons panel: the FFN neurons of the selected layer on the typed text (neuron × token heatmap, the top neurons at
// the selected token, one neuron over the text) and the chosen neuron's max-activating contexts from a corpus,
// whose index is built on a background thread and cached beside the model (app/session/neuron_index.h).
#include "app/i18n/tr.h"
#include "app/gfx/painter.h"
#include "app/figures/figures.h"
#include "app/session/neuron_index.h"
#include "app/ui/panels/panels.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace ts::ui {

namespace {

// The index job is started once per (model, corpus, chunk length) on its own; after that only the button does.
std::string index_key(const PanelContext& ctx) {
    return (ctx.model ? ctx.model->path + "|" + ctx.model->display_name : std::string()) + "|" +
        ctx.state.neuron_corpus + "|" + std::to_string(ctx.state.neuron_context);
}

void draw_examples(PanelContext& ctx, int layer, int neuron, float height) {
    UiState& st = ctx.state;
    NeuronIndexJob* job = ctx.neuron_index;
    if (!job || !ctx.model || !ctx.model->model) return;
    static std::string started_for;
    const std::string key = index_key(ctx);
    const auto latest = job->latest();
    if (!job->busy() && started_for != key) {  // a cached index is read on its own; building waits for the button
        started_for = key;
        job->start(st, *ctx.model, false);
    }
    // Knobs: the corpus file and the chunk length, the build button or progress.
    ImGui::TextUnformatted(tr("Max-activating examples"));
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 18);
    text_field("##corpus", tr("corpus text file (empty: the training text)"), st.neuron_corpus);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s",
                          tr("A UTF-8 text file; its first million tokens are indexed. Empty: corpus/corpus.txt, the "
                             "default models' training text (transformer-studio corpus build --out corpus/)."));
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
    int context = st.neuron_context;
    if (ImGui::InputInt(tr("tokens per chunk"), &context, 8, 64, ImGuiInputTextFlags_EnterReturnsTrue))
        st.neuron_context = std::clamp(context, 8, 1024);
    ImGui::SameLine();
    if (job->busy()) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * job->progress());
        ImGui::ProgressBar(job->progress(), ImVec2(ImGui::GetFontSize() * 10, 0), buf);
        ImGui::SameLine();
        if (ImGui::SmallButton(tr("Cancel"))) job->cancel();
        if (ctx.keep_drawing) ctx.keep_drawing();
    } else if (ImGui::Button(latest && latest->index ? tr("Rebuild the index") : tr("Build the index"))) {
        started_for = key;
        job->start(st, *ctx.model, true);
    }
    if (!latest) {
        if (job->busy()) empty_message(tr("reading the corpus, looking for its index…"));
        return;
    }
    if (!latest->error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.95f, 0.45f, 0.3f, 1.0f));
        text_wrapped(latest->error);
        ImGui::PopStyleColor();
        return;
    }
    if (!latest->index) return text_wrapped(latest->status);
    ImGui::TextDisabled("%s", latest->status.c_str());
    try {
        // One forward per example: built when the neuron, layer or index changes, not every frame.
        static struct {
            const void* index = nullptr;
            const void* model = nullptr;
            int layer = -1, neuron = -1;
            plot::Figure fig;
        } cache;
        const int l = std::min(layer, latest->index->n_layers - 1);
        if (cache.index != latest->index.get() || cache.model != ctx.model->model.get() || cache.layer != l ||
            cache.neuron != neuron) {
            cache.fig = neuron_examples_figure(*latest->index, *ctx.model->model, *ctx.model->codec, l, neuron);
            cache.index = latest->index.get();
            cache.model = ctx.model->model.get();
            cache.layer = l;
            cache.neuron = neuron;
        }
        const plot::Figure& f = cache.fig;
        gfx::draw_figure(
            f, ImVec2(0, std::max(height - ImGui::GetFrameHeightWithSpacing() * 2, ImGui::GetFontSize() * 12)), {},
            "neuron_examples");
    } catch (const std::exception& e) {
        empty_message(e.what());
    }
}

}  // namespace

void draw_neurons_panel(PanelContext& ctx) {
    UiState& st = ctx.state;
    const Snapshot* s = ctx.snap;
    if (!s || !s->trace || !s->model)
        return empty_message(
            no_forward_message(ctx, tr("the FFN neurons of your text appear after the first forward pass")));
    if (s->ffn_skipped_need) return empty_message(ffn_not_recorded_message(*s).c_str());  // a long text
    const float line_h = ImGui::GetTextLineHeight();
    const int layer = current_layer(ctx);
    const int query = current_query(ctx);
    // The panel scrolls: the examples need a readable row per context below the two figures of the text.
    ImGui::BeginChild("neurons_scroll", ImVec2(0, 0), false);
    try {
        // Knobs.
        ImGui::SetNextItemWidth(line_h * 8);
        ImGui::SliderInt(tr("neurons shown"), &st.neuron_rows, 4, 128);
        ImGui::SameLine();
        ImGui::SetNextItemWidth(line_h * 6);
        int chosen = st.neuron;
        if (ImGui::InputInt(tr("neuron (−1: the top one at the token)"), &chosen, 1, 10))
            st.neuron = std::clamp(chosen, -1, s->model->config().d_ff - 1);
        const int neuron = selected_neuron(st, *s, layer, query);

        const float avail_w = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize;
        const float avail_h = ImGui::GetContentRegionAvail().y;
        const float top_h = std::max(line_h * 14, avail_h * 0.45f);
        std::vector<int> row_neurons;
        const plot::Figure heat = neuron_heatmap_figure(*s, layer, st.neuron_rows, &row_neurons);
        gfx::PaintOptions o;
        o.highlight_col = query;
        const auto it = std::find(row_neurons.begin(), row_neurons.end(), neuron);
        o.highlight_row = it == row_neurons.end() ? -1 : int(it - row_neurons.begin());
        const auto r = gfx::draw_figure(heat, ImVec2(avail_w * 0.62f, top_h), o, "neuron_heatmap");
        if (r.clicked && r.row >= 0 && r.row < int(row_neurons.size())) {
            st.neuron = row_neurons[size_t(r.row)];
            if (r.col >= 0) st.query = r.col;
        }
        ImGui::SameLine();
        const plot::Figure top = neuron_top_figure(*s, layer, query);
        const auto rt =
            gfx::draw_figure(top, ImVec2(avail_w * 0.38f - ImGui::GetStyle().ItemSpacing.x, top_h), {}, "neuron_top");
        // A click on a bar follows its neuron: bar i stands at x = i, its category is "N<neuron>".
        if (rt.clicked && std::isfinite(rt.x)) {
            const long i = std::lround(rt.x);
            if (i >= 0 && i < long(top.x.categories.size()))
                st.neuron = std::stoi(top.x.categories[size_t(i)].substr(1));
        }
        const float mid_h = std::max(line_h * 10, avail_h * 0.25f);
        gfx::draw_figure(neuron_text_figure(*s, layer, neuron), ImVec2(avail_w, mid_h), {}, "neuron_text");
        // Every example row tall enough for its tokens, whatever the window's height.
        draw_examples(ctx, layer, neuron,
                      std::max(ImGui::GetContentRegionAvail().y, line_h * (1.9f * kNeuronExamples + 8)));
    } catch (const std::exception& e) {
        empty_message(e.what());
    }
    ImGui::EndChild();
}

}  // namespace ts::ui
