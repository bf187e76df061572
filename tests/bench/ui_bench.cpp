// UI latency of the desktop app without GL (issue 5 "Performance"): a knob change that re-runs the model
// (temperature slider with "apply to the model": full-capture forward + logit lens, as the worker runs it) plus the
// figures the Attention panel builds from the new snapshot (layer × head thumbnails, the big heatmap, the five step
// heatmaps), at 32 tokens. Target: forward + figures <= 5 ms on the default model (BM_UiSliderForwardAndFigures). The ImGui frame itself is
// measured by ts_ui_bench (tests/bench/imgui/ui_frame_bench.cpp).
// Model: assets/models/austen-gpt when it exists, else a random model of the same config (printed as a label).
#include "app/figures/figures.h"
#include "app/figures/views.h"
#include "app/session/state.h"
#include "app/session/text_codec.h"
#include "app/session/worker.h"
#include "core/model/model.h"

#include <benchmark/benchmark.h>

#include "tests/bench/bench_models.h"

#include <malloc.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

namespace {

using namespace ts;
using namespace ts::figures;
using namespace ts::studio;

constexpr int kTokens = 32;

const char* kText = bench::kBenchText;

// The app keeps freed trace buffers in the heap between forwards (app/ui/gui_command.cpp); do the same here.
const bool kMallocTuned = [] {
    bench::tune_malloc_like_app();
    return true;
}();

// Default model: 4 layers, d_model 256, 4 heads, d_ff 1024, vocab 8192, learned positions, pre-LayerNorm, GELU.
ModelConfig default_config() {
    return bench::default_size_config();
}

struct Setup {
    LoadedModel model;
    std::shared_ptr<const TokenizedText> tokens;  // exactly kTokens tokens
    std::string label;
};

const Setup& setup() {
    static const Setup s = [] {
        Setup out;
        const std::filesystem::path bundled = std::filesystem::path(TS_ASSETS_DIR) / "models" / "austen-gpt";
        if (std::filesystem::exists(bundled / "config.json")) {
            try {
                out.model = load_model_folder(bundled.string());
                out.label = "austen-gpt";
            } catch (const std::exception&) {
                out.model = {};
            }
        }
        if (!out.model.model) {
            const ModelConfig c = default_config();
            out.model.model = std::make_shared<const Model>(c, init_weights(c, 42));
            out.model.codec = make_byte_codec(c.vocab_size);  // 1 token per byte: kText's first 32 bytes
            out.label = "random default-size";
        }
        out.tokens = std::make_shared<const TokenizedText>(tokenize_text(kText, *out.model.codec, kTokens));
        return out;
    }();
    return s;
}

UiState attention_state() {
    UiState st;
    st.text = kText;
    st.panel = Panel::Attention;
    st.layer = 1;
    st.head = 2;
    st.apply_to_model = true;
    st.attn_temperature = 0.7f;
    return st;
}

// Every figure the Attention panel builds in one frame (same calls as app/ui/panels/attention_panel.cpp).
size_t build_attention_panel_figures(const Snapshot& s, const UiState& st) {
    size_t cells = 0;
    const ModelConfig& c = s.model->config();
    for (int l = 0; l < c.n_layers; ++l)
        for (int h = 0; h < c.n_heads; ++h) {
            const plot::Figure f = attention_thumb_figure(s, l, h, st.attn_unit_scale);
            if (f.heatmap) cells += f.heatmap->values.size();
        }
    const plot::Figure big = attention_head_figure(s, st.layer, st.head, st);
    if (big.heatmap) cells += big.heatmap->values.size();
    for (const plot::Figure& f : attention_step_figures(s, st.layer, st.head))
        if (f.heatmap) cells += f.heatmap->values.size();
    return cells;
}

// Slider change that re-runs the model, as the app sees it: the worker publishes the snapshot before the logit lens
// (ForwardRequest::publish_partial), the UI builds the Attention panel's figures from it. Reported time: request ->
// figures built (manual time); the lens that follows on the worker is run but not counted (BM_UiForwardFullCapture).
void BM_UiSliderForwardAndFigures(benchmark::State& state) {
    const Setup& su = setup();
    UiState st = attention_state();
    size_t cells = 0;
    int i = 0;
    for (auto _ : state) {
        st.attn_temperature = (i++ % 2) ? 0.7f : 0.8f;  // what the slider changes
        ForwardRequest r = make_forward_request(st, su.model, su.tokens);
        const auto t0 = std::chrono::steady_clock::now();
        double shown_s = -1;
        r.publish_partial = [&](std::shared_ptr<const Snapshot> snap) {
            cells = build_attention_panel_figures(*snap, st);
            shown_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        };
        const auto snap = run_forward_request(r, uint64_t(i));
        if (!snap->error.empty() || shown_s < 0) {
            state.SkipWithError(snap->error.empty() ? "no partial snapshot published" : snap->error.c_str());
            return;
        }
        benchmark::DoNotOptimize(cells);
        state.SetIterationTime(shown_s);
    }
    state.counters["tokens"] = double(su.tokens->ids.size());
    state.counters["cells"] = double(cells);
    state.SetLabel(su.label);
}
BENCHMARK(BM_UiSliderForwardAndFigures)->UseManualTime()->Unit(benchmark::kMillisecond);

// The same without the early publish: forward + logit lens + figures (what the UI waited for before).
void BM_UiSliderForwardLensAndFigures(benchmark::State& state) {
    const Setup& su = setup();
    UiState st = attention_state();
    int i = 0;
    for (auto _ : state) {
        st.attn_temperature = (i++ % 2) ? 0.7f : 0.8f;
        const auto snap = run_forward_request(make_forward_request(st, su.model, su.tokens), uint64_t(i));
        benchmark::DoNotOptimize(build_attention_panel_figures(*snap, st));
    }
    state.SetLabel(su.label);
}
BENCHMARK(BM_UiSliderForwardLensAndFigures)->Unit(benchmark::kMillisecond);

// The worker's whole job: forward with full capture + logit lens.
void BM_UiForwardFullCapture(benchmark::State& state) {
    const Setup& su = setup();
    const UiState st = attention_state();
    const ForwardRequest r = make_forward_request(st, su.model, su.tokens);
    for (auto _ : state) benchmark::DoNotOptimize(run_forward_request(r, 1));
    state.SetLabel(su.label);
}
BENCHMARK(BM_UiForwardFullCapture)->Unit(benchmark::kMillisecond);

// The figures alone (what the UI thread builds every frame for a layer / head slider change, no forward).
void BM_UiAttentionFigures(benchmark::State& state) {
    const Setup& su = setup();
    UiState st = attention_state();
    const auto snap = run_forward_request(make_forward_request(st, su.model, su.tokens), 1);
    int i = 0;
    for (auto _ : state) {
        st.head = i++ % snap->model->config().n_heads;
        benchmark::DoNotOptimize(build_attention_panel_figures(*snap, st));
    }
    state.SetLabel(su.label);
}
BENCHMARK(BM_UiAttentionFigures)->Unit(benchmark::kMicrosecond);

}  // namespace
