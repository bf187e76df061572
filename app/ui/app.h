// The desktop app: window, sidebar (model picker, text, layer/head/knobs), one tab per panel, the compute worker
// and state persistence. Also a screenshot mode for tests (--screenshot-dir DIR --frames N --panel NAME|all).
#pragma once

#include <string>

namespace ts::ui {

struct AppOptions {
    std::string exe_path;
    std::string model_dir;         ///< --model: overrides the remembered model
    std::string text;              ///< --text: overrides the remembered text
    bool has_text = false;
    std::string screenshot_dir;    ///< non-empty: screenshot mode (exit when done)
    int frames = 5;                ///< frames to render per panel before its screenshot
    std::string panel;             ///< panel to open ("all" in screenshot mode: every panel)
    std::string theme;             ///< "light" | "dark" | "" (remembered)
    int width = 1600, height = 1000;
    bool persist = true;           ///< false: neither read nor write state.json
};

/// Runs the window until closed (or screenshots are done). Returns the process exit code.
int run_app(const AppOptions& opt);

}  // namespace ts::ui
