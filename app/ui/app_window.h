// The window's App class, shared by the files that implement it: app.cpp (main loop, frames, tabs, model
// loading, test and benchmark modes), sidebar.cpp (model picker, text box, knobs) and app_input.cpp (input queue,
// idle detection). Internal to app/ui; the public entry point is app.h.
#pragma once

#include "app/ui/app.h"

#include "app/figures/views.h"
#include "app/session/compare_job.h"
#include "app/session/interp_jobs.h"
#include "app/session/neuron_index.h"
#include "app/session/training_lab.h"
#include "app/session/seq2seq.h"
#include "app/session/state.h"
#include "app/session/worker.h"
#include "app/gfx/fonts.h"
#include "app/ui/input_queue.h"
#include "app/ui/panels/panels.h"  // AttentionPin
#include "app/ui/soft_wrap.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct GLFWwindow;

namespace ts::ui::detail {

using namespace ts::studio;   // the session layer (app/session) below
using namespace ts::figures;  // the figure builders and views (app/figures)

using Clock = std::chrono::steady_clock;
[[nodiscard]] double ms_between(Clock::time_point a, Clock::time_point b);

/// --frame-stats: what every frame cost and how long edits took to show (benchmarks, tests/bench/ui_frame_bench.sh).
struct FrameStats {
    std::vector<double> frame_ms;        ///< whole loop iteration: events, UI, GL submit, swap
    std::vector<double> build_ms;        ///< ImGui NewFrame .. Render (CPU only)
    std::vector<int> worker_busy;        ///< 1 when the worker was computing during the frame
    std::vector<double> result_ms;       ///< text edit -> first frame presenting its forward pass
    std::vector<double> input_ms;        ///< key/mouse/char event -> the frame that applied it is on screen
    double first_frame_ms = -1, first_data_ms = -1;  ///< since process start
    int presses = 0;                                 ///< mouse presses the queue handed to ImGui
    int lost_presses = 0;                ///< of those, presses ImGui saw as a button still held (so no click)
    std::vector<double> key_result_ms;   ///< key/char event -> first frame presenting the forward of the text it edited
    struct Submitted {
        Clock::time_point at;                     ///< submit time
        std::optional<Clock::time_point> input;   ///< the input event whose frame changed what is submitted
    };
    std::map<uint64_t, Submitted> submitted;      ///< request id -> when, and after which input
    std::optional<Clock::time_point> applied_input;  ///< oldest input of the last frame that had input
    bool show_pending = false;
    Submitted show_submit;
    int edits = 0;
    std::map<std::string, std::array<float, 4>> rects;  ///< screen rectangles of tabs and the text box (input tests)
};

/// "[error] msg" / "[info] msg" on stderr; errors are counted (screenshot mode then exits non-zero).
void log_error(const std::string& msg);
void log_info(const std::string& msg);

/// A soft-wrapped text box's state: the display copy with soft newlines and how it maps back.
struct WrapBox {
    Wrapped wrap;
    std::string src;       ///< the real text `wrap` was made from
    float width = -1;
    LineBreaker breaker;
    std::string* text = nullptr;  ///< the text being edited (set each frame)
};

class App {
public:
    explicit App(const AppOptions& o) : m_opt(o) {}
    int run();

private:
    bool init_window();
    void shutdown();
    void frame();
    void sidebar();
    void main_area();
    void poll_results();
    void maybe_submit();
    void start_load(const std::string& path);
    void adopt_model(LoadedModel lm);
    bool save_screenshot(const std::string& path);
    void save_state_now();
    void bench_edit();
    void write_frame_stats() const;
    void install_input_callbacks();
    void apply_input();
    /// A soft-wrapped text box editing `text` (3 to 12 lines high, growing with the text); `id` as for ImGui.
    void text_box(const char* id, std::string& text, WrapBox& box, float line_h, const char* hint = nullptr);
    void translation_section(float line_h);
    /// Under the target box: each target token on a chip coloured by its probability, the value on hover.
    void target_probability_strip(float line_h);
    void translate_now();
    /// Switches the interface language (ts::i18n::set_language); English with a logged note when that fails.
    void apply_language(const std::string& lang);
    [[nodiscard]] ForwardSpec current_spec() const;
    void record_rect(const std::string& name);
    [[nodiscard]] bool animating() const;

    AppOptions m_opt;
    GLFWwindow* m_window = nullptr;
    UiState m_state;
    std::optional<AttentionKnobs> m_attn_link;  ///< link_attention_knobs' memory (apply to the model)
    std::filesystem::path m_state_file;
    std::string m_ini_path;
    float m_scale = 1.0f;
    bool m_fonts_dirty = false;
    // The Lessons tab's own set-up (on_panel_change): what the student had before entering it.
    std::optional<Panel> m_prev_panel;
    std::optional<UiState> m_before_lesson;
    std::string m_before_lesson_model;
    void on_panel_change(Panel panel);
    std::string m_font_extra;  ///< characters shown since start that the common set lacks (request_glyphs)
    gfx::FontStatus m_fonts;

    std::unique_ptr<ForwardWorker> m_worker;
    ModelLoader m_loader;
    TrainingLab m_lab;        ///< the Training panel's live run (stopped when the app closes)
    AttentionPin m_attn_pin;  ///< the Attention panel's forward A (pin these settings as A)
    LoadedModel m_model;
    std::shared_ptr<const TokenizedText> m_tokens;         ///< the decoder's input (or the text)
    std::shared_ptr<const TokenizedText> m_source_tokens;  ///< encoder–decoder: the encoder's input
    std::vector<std::string> m_bundled;                    ///< bundled model folders (assets/models)
    std::vector<std::string> m_ollama;  ///< models in Ollama's local store, by name (core/formats/ollama.h)
    std::shared_ptr<const Snapshot> m_snap, m_gen;
    /// The worker's newest progressive snapshot (a long forward still running), adopted or not: the sidebar says how
    /// far it is on every panel. Null once the forward is done.
    std::shared_ptr<const Snapshot> m_progress;
    uint64_t m_last_submitted = 0;
    ForwardSpec m_spec;  ///< the last forward submitted (ForwardSpec{}: none, the next frame submits one)
    std::string m_path_edit;
    std::string m_load_error, m_state_warning;
    uint64_t m_seen_gen = 0;

    // Screenshot mode.
    std::vector<Panel> m_shot_panels;
    size_t m_shot_index = 0;
    int m_shot_frames = 0;
    std::chrono::steady_clock::time_point m_shot_wait_start;
    std::optional<Panel> m_force_panel;  ///< selected by the next frame (start-up, screenshot mode), then cleared
    bool m_quit = false;
    int m_exit_code = 0;

    // Benchmark mode (--frame-stats, --bench-edits, --max-frames).
    FrameStats m_stats;
    int m_frame_index = 0;

    // Input and idle: events queue here (one transition per button/key per frame); the loop waits for events
    // unless something animates, and draws a few frames after each event so hover and layout settle.
    InputQueue m_input;
    /// The mouse buttons and keys as the queue has handed them to ImGui so far: written to ImGui's io every frame,
    /// over what the GLFW backend set from its own callbacks and the live device state (apply_input).
    bool m_buttons_down[5] = {};
    double m_cursor_x = 0, m_cursor_y = 0;  ///< the pointer as of the last motion event (window pixels)
    bool m_cursor_known = false;
    float m_last_mouse_x = -1, m_last_mouse_y = -1;  ///< where ImGui saw the mouse in the frame before
    bool m_keys_down[512] = {};
    bool m_input_seen = false;
    std::optional<Clock::time_point> m_input_time;  ///< oldest event not yet on screen (--frame-stats)
    int m_settle_frames = 0;

    // The text boxes edit a soft-wrapped copy of their text (app/ui/soft_wrap.h): m_state.text (the source for
    // encoder–decoder models) and m_state.target_text.
    WrapBox m_text_box, m_target_box;

    // Translation (encoder–decoder models with translation.json).
    std::vector<ExamplePair> m_examples;          ///< the model folder's held-out pairs (examples.tsv)
    uint64_t m_translate_id = 0;                  ///< the Translate request in flight (0: none)
    std::shared_ptr<const Snapshot> m_translated; ///< the last Translate result (its steps, while the target is unchanged)
    std::string m_reference;                      ///< the human translation of the picked example pair
    std::vector<float> m_target_probs;            ///< m_snap's next_token_probs (computed once per snapshot)
    uint64_t m_target_probs_of = 0;               ///< Snapshot::id they belong to (0: none; ids start at 1)

    InterpJobs m_interp;                 ///< the Causal panel's background analyses
    NeuronIndexJob m_neuron_index;       ///< the Neurons panel's max-activating-examples index
    CompareJob m_compare;                ///< the Model panel's quantization lens
    OverviewJobs m_overviews;            ///< the Attention panel's overviews of a long text
    bool m_keep_drawing = false;         ///< a panel asked for frames this frame (PanelContext::keep_drawing)
};


/// Set by the SIGTERM / SIGINT watcher thread: the loop closes the window like its close button (state saved).
extern std::atomic<bool> g_quit_signal;

}  // namespace ts::ui::detail
