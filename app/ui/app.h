// The desktop app: window, sidebar (model picker, text, layer/head/knobs), one tab per panel, the compute worker
// and state persistence. Also a screenshot mode for tests (--screenshot-dir DIR --frames N --panel NAME|all) and
// frame timing for benchmarks (--frame-stats FILE, --bench-edits N, --max-frames N; tests/bench/ui_frame_bench.sh).
#pragma once

#include "app/session/knobs.h"

#include <optional>
#include <string>
#include <vector>

namespace ts::ui {

struct AppOptions {
    std::string exe_path;
    std::string model_dir;         ///< --model: overrides the remembered model
    std::string text;              ///< --text: overrides the remembered text
    bool has_text = false;
    std::string target;            ///< --target: encoder–decoder models: the teacher-forced target text
    bool has_target = false;
    bool translate = false;        ///< --translate: translate the text once the model is loaded
    std::string translate_to;      ///< --to auto|en|zh
    int beam = 0;                  ///< --beam N (> 0: overrides the remembered width; 1 = greedy)
    std::optional<studio::AttnSource> attn_source;  ///< --attn-source decoder|encoder|cross
    std::string screenshot_dir;    ///< non-empty: screenshot mode (exit when done)
    int frames = 5;                ///< frames to render per panel before its screenshot
    std::string panel;             ///< panel to open ("all" in screenshot mode: every panel)
    std::string theme;             ///< "light" | "dark" | "" (remembered)
    std::string lang;              ///< --lang en|zh: interface language ("" = remembered, else the system locale's)
    int width = 1600, height = 1000;
    bool persist = true;           ///< false: neither read nor write state.json
    std::string frame_stats;       ///< non-empty: write per-frame times as JSON here at exit
    int bench_edits = 0;           ///< > 0: change one character of the text every few frames, N times, then exit
    int max_frames = 0;            ///< > 0: exit after this many frames (1: cold start to first frame)
    int slow_frame_ms = 0;         ///< > 0: sleep this long in every frame (tests: input must survive slow frames)
    std::string lesson;            ///< --lesson ID[:STEP]: the Lessons tab opens on that lesson
    int lesson_step = 1;           ///< its step, from 1
    std::string lab_settings;      ///< --lab FILE: start a training-lab run with these settings (Training tab)
    std::string lab_out;           ///< --lab-out DIR: its run folder ("" = a new one under the data folder)
    std::vector<std::string> analyses;  ///< --analyses: Causal-panel analyses to run once the text's forward is in
                                        ///< (sweep, patching, attribution, flow), e.g. for screenshots
};

/// Runs the window until closed (or screenshots are done; SIGTERM/SIGINT close it too, state saved). The loop
/// draws only on input, on worker results and while something animates (loading); otherwise it sleeps in
/// glfwWaitEvents. Returns the process exit code.
int run_app(const AppOptions& opt);

}  // namespace ts::ui
