// CPU time to build one ImGui frame of the app with the Attention panel open (issue 5 "Performance": <= 4 ms on the
// default model at 32 tokens): NewFrame, the panel's thumbnail grid + big heatmap + step view through the painter
// (app/gfx/painter.cpp) into draw lists, Render. No GL: the font atlas is built with GetTexDataAsRGBA32 and
// heatmap textures are a stub (see below).
// Also a GPT-2-small-sized model (12 layers × 12 heads of thumbnails) for the "UI keeps drawing" target.
// `ts_ui_bench --write-model gpt2|default DIR` saves that random model as a model folder (for the window benchmark,
// tests/bench/ui_frame_bench.sh) and exits; other arguments go to Google Benchmark.
#include "app/gfx/heatmap_texture.h"
#include "app/gfx/painter.h"
#include "app/figures/views.h"
#include "app/gfx/fonts.h"
#include "app/ui/panels/panels.h"
#include "app/session/state.h"
#include "app/session/text_codec.h"
#include "app/session/worker.h"
#include "app/ui/theme.h"
#include "core/model/model.h"
#include "tests/bench/bench_models.h"
#include "core/formats/safetensors.h"

#include <benchmark/benchmark.h>
#include <imgui.h>

#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

// The app's GPU heatmap path is not linked here (no GL context): a placeholder texture id, so the painter takes the
// app's path (one image per large heatmap or thumbnail) without the texture cache's check (a hash of the values).
// TS_UI_BENCH_RECTS=1 returns nullptr instead: every heatmap as rectangles (the painter's fallback).
namespace ts::gfx {
ImTextureID heatmap_texture(ImGuiID, const plot::Heatmap&) {
    static const bool rects = std::getenv("TS_UI_BENCH_RECTS") != nullptr;
    return rects ? nullptr : ImTextureID(intptr_t(2));
}
void heatmap_textures_collect() {}
void heatmap_textures_shutdown() {}
}  // namespace ts::gfx

namespace {

using namespace ts;
using namespace ts::ui;
using namespace ts::studio;

constexpr int kTokens = 32;
const char* kText = bench::kBenchText;

const bool kMallocTuned = [] {
    bench::tune_malloc_like_app();
    return true;
}();

ModelConfig model_config(bool gpt2) {
    return gpt2 ? bench::gpt2_small_config() : bench::default_size_config();
}

struct Setup {
    LoadedModel model;
    std::shared_ptr<const Snapshot> snap;
    std::string label;
};

// Default: the bundled model when present, else random weights of the same config. GPT-2 small: random weights.
const Setup& setup(bool gpt2) {
    static std::unique_ptr<Setup> cache[2];
    std::unique_ptr<Setup>& s = cache[gpt2 ? 1 : 0];
    if (s) return *s;
    s = std::make_unique<Setup>();
    const std::filesystem::path bundled = std::filesystem::path(TS_ASSETS_DIR) / "models" / "austen-gpt";
    if (!gpt2 && std::filesystem::exists(bundled / "config.json")) {
        try {
            s->model = load_model_folder(bundled.string());
            s->label = "austen-gpt";
        } catch (const std::exception&) {
            s->model = {};
        }
    }
    if (!s->model.model) {
        const ModelConfig c = model_config(gpt2);
        s->model.model = std::make_shared<const Model>(c, init_weights(c, 42));
        s->model.codec = make_byte_codec(c.vocab_size);
        s->label = gpt2 ? "random GPT-2 small" : "random default-size";
    }
    UiState st;
    st.text = kText;
    const auto tokens = std::make_shared<const TokenizedText>(tokenize_text(kText, *s->model.codec, kTokens));
    s->snap = run_forward_request(make_forward_request(st, s->model, tokens), 1);
    return *s;
}

// An ImGui context like the app's: theme, the app's fonts (atlas built on the CPU), 1600×1000 display.
struct ImGuiHeadless {
    ImGuiHeadless() {
        ImGui::CreateContext();
        ImGuiIO& io = ImGui::GetIO();
        io.IniFilename = nullptr;
        io.DisplaySize = ImVec2(1600, 1000);
        io.DeltaTime = 1.0f / 60.0f;
        io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;  // as imgui_impl_opengl3 on GL >= 3.2 (> 64k vertices)
        apply_theme(true, 1.0f);
        gfx::build_fonts(16.0f, kText);
        unsigned char* px = nullptr;
        int w = 0, h = 0;
        io.Fonts->GetTexDataAsRGBA32(&px, &w, &h);
        io.Fonts->SetTexID(ImTextureID(1));
    }
    ~ImGuiHeadless() { ImGui::DestroyContext(); }
};

// One frame as App::frame lays it out: root window, a sidebar-width child, the tab bar with the Attention tab.
size_t draw_frame(UiState& st, const Setup& su, ImVec2 mouse) {
    ImGui::GetIO().MousePos = mouse;
    ImGui::NewFrame();
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(vp->WorkPos);
    ImGui::SetNextWindowSize(vp->WorkSize);
    ImGui::Begin("##root", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                        ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoSavedSettings);
    ImGui::BeginChild("sidebar", ImVec2(330, 0), true);
    ImGui::TextUnformatted("Transformer Studio");
    ImGui::SliderInt("layer", &st.layer, 0, su.snap->model->config().n_layers - 1);
    ImGui::SliderInt("head", &st.head, 0, su.snap->model->config().n_heads - 1);
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("main", ImVec2(0, 0), false);
    PanelContext ctx{st, su.snap.get(), &su.model, [] {}, [] {}, nullptr, nullptr, {}, {}, nullptr};
    if (ImGui::BeginTabBar("panels")) {
        if (ImGui::BeginTabItem("Attention")) {
            ImGui::BeginChild("panel_body", ImVec2(0, 0), false);
            draw_attention_panel(ctx);
            ImGui::EndChild();
            ImGui::EndTabItem();
        }
        ImGui::EndTabBar();
    }
    ImGui::EndChild();
    ImGui::End();
    ImGui::Render();
    return size_t(ImGui::GetDrawData()->TotalVtxCount);
}

// range(0): 0 default model, 1 GPT-2 small. range(1): 1 = the mouse hovers the big heatmap (tooltip readout).
void BM_UiFrameAttention(benchmark::State& state) {
    const bool gpt2 = state.range(0) != 0;
    const Setup& su = setup(gpt2);
    if (!su.snap->error.empty()) {
        state.SkipWithError(su.snap->error.c_str());
        return;
    }
    ImGuiHeadless imgui;
    UiState st;
    st.panel = Panel::Attention;
    st.layer = 1;
    st.head = 1;
    const ImVec2 mouse = state.range(1) ? ImVec2(1200, 300) : ImVec2(-1, -1);
    size_t vtx = 0;
    for (int i = 0; i < 3; ++i) draw_frame(st, su, mouse);  // settle layout (child sizes, tab selection)
    for (auto _ : state) vtx = draw_frame(st, su, mouse);
    state.counters["vertices"] = double(vtx);
    state.SetLabel(su.label);
}
BENCHMARK(BM_UiFrameAttention)->ArgsProduct({{0, 1}, {0, 1}})->ArgNames({"gpt2", "hover"})->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
    if (argc == 4 && std::strcmp(argv[1], "--write-model") == 0) {
        const bool gpt2 = std::strcmp(argv[2], "gpt2") == 0;
        if (!gpt2 && std::strcmp(argv[2], "default") != 0) {
            std::fprintf(stderr, "--write-model expects gpt2 or default, got '%s'\n", argv[2]);
            return 2;
        }
        const ts::ModelConfig c = model_config(gpt2);
        ts::save_model_dir(argv[3], ts::Model(c, ts::init_weights(c, 42)));
        std::printf("wrote %s (%s, random weights)\n", argv[3], c.name.c_str());
        return 0;
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
