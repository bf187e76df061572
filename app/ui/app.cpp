// The app's main loop, sidebar and tabs (see app.h).
#include "app/ui/app.h"

#include "app/gfx/gl.h"
#include "app/gfx/heatmap_texture.h"
#include "app/gfx/painter.h"
#include "app/gfx/raster.h"
#include "app/ui/export_menu.h"
#include "app/figures/views.h"
#include "app/ui/fonts.h"
#include "app/ui/input_queue.h"
#include "app/ui/panels/panels.h"
#include "app/session/state.h"
#include "app/session/worker.h"
#include "app/ui/soft_wrap.h"
#include "app/ui/theme.h"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <imgui_stdlib.h>
#include <nlohmann/json.hpp>
#include <stb_image_write.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <csignal>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

namespace ts::ui {

namespace {

int g_error_count = 0;

using Clock = std::chrono::steady_clock;
// Taken during static initialisation, i.e. before main(): the reference for "cold start to first frame".
const Clock::time_point g_process_start = Clock::now();
double ms_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

/// --frame-stats: what every frame cost and how long edits took to show (benchmarks, tests/bench/ui_frame_bench.sh).
struct FrameStats {
    std::vector<double> frame_ms;        ///< whole loop iteration: events, UI, GL submit, swap
    std::vector<double> build_ms;        ///< ImGui NewFrame .. Render (CPU only)
    std::vector<int> worker_busy;        ///< 1 when the worker was computing during the frame
    std::vector<double> result_ms;       ///< text edit -> first frame presenting its forward pass
    std::vector<double> input_ms;        ///< key/mouse/char event -> the frame that applied it is on screen
    double first_frame_ms = -1, first_data_ms = -1;  ///< since process start
    std::map<uint64_t, Clock::time_point> submitted;  ///< request id -> submit time
    bool show_pending = false;
    Clock::time_point show_submit;
    int edits = 0;
    std::map<std::string, std::array<float, 4>> rects;  ///< screen rectangles of tabs and the text box (input tests)
};

void log_error(const std::string& msg) {
    ++g_error_count;
    std::fprintf(stderr, "[error] %s\n", msg.c_str());
}
void log_info(const std::string& msg) { std::fprintf(stderr, "[info] %s\n", msg.c_str()); }

void glfw_error(int code, const char* desc) { log_error("GLFW " + std::to_string(code) + ": " + desc); }

const char* kSamples[][2] = {
    {"English", "The quick brown fox jumps over the lazy dog."},
    {"Austen", "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife."},
    {"中文", "注意力机制让模型关注句子中的重要部分。"},
    {"Mixed", "Attention 注意力 is all you need!"},
};

/// What decides whether the forward pass must run again.
struct ForwardKey {
    const Model* model = nullptr;
    std::string text;
    bool apply = false;
    float temperature = 1;
    std::string mask;
    int window = 0;
    std::vector<uint8_t> painted;  ///< the Softmax lab's painted mask (mask "custom")
    bool operator==(const ForwardKey&) const = default;
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
    void text_box(float height);
    void record_rect(const std::string& name);
    [[nodiscard]] bool animating() const;

    AppOptions m_opt;
    GLFWwindow* m_window = nullptr;
    UiState m_state;
    std::filesystem::path m_state_file;
    std::string m_ini_path;
    float m_scale = 1.0f;
    bool m_fonts_dirty = false;
    FontStatus m_fonts;

    std::unique_ptr<ForwardWorker> m_worker;
    ModelLoader m_loader;
    LoadedModel m_model;
    std::shared_ptr<const TokenizedText> m_tokens;
    std::shared_ptr<const Snapshot> m_snap, m_gen;
    uint64_t m_last_submitted = 0;
    ForwardKey m_key;
    std::string m_path_edit;
    std::string m_load_error, m_state_warning;
    uint64_t m_seen_gen = 0;

    // Screenshot mode.
    std::vector<std::string> m_shot_panels;
    size_t m_shot_index = 0;
    int m_shot_frames = 0;
    std::chrono::steady_clock::time_point m_shot_wait_start;
    std::string m_force_panel;
    bool m_quit = false;
    int m_exit_code = 0;

    // Benchmark mode (--frame-stats, --bench-edits, --max-frames).
    FrameStats m_stats;
    int m_frame_index = 0;

    // Input and idle: events queue here (one transition per button/key per frame); the loop waits for events
    // unless something animates, and draws a few frames after each event so hover and layout settle.
    InputQueue m_input;
    bool m_input_seen = false;
    std::optional<Clock::time_point> m_input_time;  ///< oldest event not yet on screen (--frame-stats)
    int m_settle_frames = 0;

    // The text box edits a soft-wrapped copy of m_state.text (app/ui/soft_wrap.h).
    Wrapped m_text_wrap;
    std::string m_text_wrap_src;
    float m_text_wrap_width = -1;
    LineBreaker m_text_breaker;
};

// SIGTERM / SIGINT close the window like its close button (state saved): a watcher thread waits for the signal
// and wakes the event loop.
std::atomic<bool> g_quit_signal{false};

bool App::init_window() {
    glfwSetErrorCallback(glfw_error);
    if (!glfwInit()) {
        log_error("could not initialise GLFW (is a display available? try xvfb-run)");
        return false;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GL_TRUE);
    glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
    m_window = glfwCreateWindow(m_opt.width, m_opt.height, "Transformer Studio", nullptr, nullptr);
    if (!m_window) {
        log_error("could not create an OpenGL 3.3 window");
        glfwTerminate();
        return false;
    }
    glfwMakeContextCurrent(m_window);
    glfwSwapInterval(m_opt.screenshot_dir.empty() ? 1 : 0);
    float sx = 1, sy = 1;
    glfwGetWindowContentScale(m_window, &sx, &sy);
    m_scale = m_state.ui_scale > 0 ? m_state.ui_scale : std::clamp(sx, 1.0f, 3.0f);

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = m_ini_path.empty() ? nullptr : m_ini_path.c_str();
    apply_theme(m_state.dark_theme, m_scale);
    m_fonts = build_fonts(std::round(16.0f * m_scale), m_state.text);
    if (!m_fonts.notice.empty()) log_info(m_fonts.notice);
    io.ConfigInputTextCursorBlink = false;  // a blinking caret would need a frame every half second when idle
    install_input_callbacks();
    ImGui_ImplGlfw_InitForOpenGL(m_window, true);
    // Characters go through our queue too, so their order against keys (Backspace, arrows) survives slow frames.
    glfwSetCharCallback(m_window, [](GLFWwindow* w, unsigned int c) {
        App* a = static_cast<App*>(glfwGetWindowUserPointer(w));
        a->m_input.push({InputEvent::Kind::Char, int(c), true, 0, 0});
        a->m_input_seen = true;
    });
    ImGui_ImplOpenGL3_Init("#version 330 core");
    gfx::set_export_menu(draw_export_menu);
    return true;
}

void App::install_input_callbacks() {
    glfwSetWindowUserPointer(m_window, this);
    auto self = [](GLFWwindow* w) { return static_cast<App*>(glfwGetWindowUserPointer(w)); };
    // Installed before ImGui's backend, which chains to them; the char callback replaces the backend's (below).
    glfwSetMouseButtonCallback(m_window, [](GLFWwindow* w, int button, int action, int) {
        App* a = static_cast<App*>(glfwGetWindowUserPointer(w));
        double x = 0, y = 0;
        glfwGetCursorPos(w, &x, &y);
        if (action != GLFW_REPEAT) a->m_input.push({InputEvent::Kind::MouseButton, button, action == GLFW_PRESS, x, y});
        a->m_input_seen = true;
    });
    glfwSetKeyCallback(m_window, [](GLFWwindow* w, int key, int, int action, int) {
        App* a = static_cast<App*>(glfwGetWindowUserPointer(w));
        if (action != GLFW_REPEAT && key >= 0) a->m_input.push({InputEvent::Kind::Key, key, action == GLFW_PRESS, 0, 0});
        a->m_input_seen = true;
    });
    glfwSetCursorPosCallback(m_window, [](GLFWwindow* w, double, double) { static_cast<App*>(glfwGetWindowUserPointer(w))->m_input_seen = true; });
    glfwSetScrollCallback(m_window, [](GLFWwindow* w, double, double) { static_cast<App*>(glfwGetWindowUserPointer(w))->m_input_seen = true; });
    glfwSetWindowSizeCallback(m_window, [](GLFWwindow* w, int, int) { static_cast<App*>(glfwGetWindowUserPointer(w))->m_input_seen = true; });
    glfwSetWindowRefreshCallback(m_window, [](GLFWwindow* w) { static_cast<App*>(glfwGetWindowUserPointer(w))->m_input_seen = true; });
    glfwSetWindowFocusCallback(m_window, [](GLFWwindow* w, int) { static_cast<App*>(glfwGetWindowUserPointer(w))->m_input_seen = true; });
    glfwSetCursorEnterCallback(m_window, [](GLFWwindow* w, int) { static_cast<App*>(glfwGetWindowUserPointer(w))->m_input_seen = true; });
    (void)self;
}

/// Feeds this frame's share of the queued input to ImGui, after the GLFW backend's NewFrame (which sets the mouse
/// buttons from their current state) and before ImGui::NewFrame.
void App::apply_input() {
    ImGuiIO& io = ImGui::GetIO();
    const auto events = m_input.take_frame();
    for (const auto& e : events) {
        if (e.kind == InputEvent::Kind::MouseButton) {
            if (e.code < 0 || e.code >= IM_ARRAYSIZE(io.MouseDown)) continue;
            io.MouseDown[e.code] = e.down;
            io.MousePos = ImVec2(float(e.x), float(e.y));
        } else if (e.kind == InputEvent::Kind::Key) {
            if (e.code < IM_ARRAYSIZE(io.KeysDown)) io.KeysDown[e.code] = e.down;
        } else {
            io.AddInputCharacter(unsigned(e.code));
        }
    }
    if (!events.empty()) {
        io.KeyCtrl = io.KeysDown[GLFW_KEY_LEFT_CONTROL] || io.KeysDown[GLFW_KEY_RIGHT_CONTROL];
        io.KeyShift = io.KeysDown[GLFW_KEY_LEFT_SHIFT] || io.KeysDown[GLFW_KEY_RIGHT_SHIFT];
        io.KeyAlt = io.KeysDown[GLFW_KEY_LEFT_ALT] || io.KeysDown[GLFW_KEY_RIGHT_ALT];
        io.KeySuper = io.KeysDown[GLFW_KEY_LEFT_SUPER] || io.KeysDown[GLFW_KEY_RIGHT_SUPER];
    }
}

/// True while frames must keep coming without input: a model loading (progress bar), test and benchmark modes.
bool App::animating() const {
    return m_loader.busy() || m_fonts_dirty || !m_input.empty() || !m_opt.screenshot_dir.empty() ||
           m_opt.bench_edits > 0 || m_opt.max_frames > 0 || m_opt.slow_frame_ms > 0;
}

void App::shutdown() {
    m_worker.reset();
    gfx::release_raster_resources();
    gfx::heatmap_textures_shutdown();
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    if (m_window) glfwDestroyWindow(m_window);
    glfwTerminate();
}

void App::save_state_now() {
    if (!m_opt.persist) return;
    try {
        save_state(m_state_file, m_state);
    } catch (const std::exception& e) {
        log_info(std::string("settings not saved: ") + e.what());
    }
}

void App::adopt_model(LoadedModel lm) {
    m_model = std::move(lm);
    if (!m_model.path.empty()) {
        m_state.model_path = m_model.path;
        m_state.remember_model(m_model.path);
    }
    m_path_edit = m_model.path;
    if (!m_model.tokenizer_warning.empty()) log_info(m_model.tokenizer_warning);
    m_key = ForwardKey{};  // force a new forward
}

void App::start_load(const std::string& path) {
    m_load_error.clear();
    if (!m_loader.start(path, [] { glfwPostEmptyEvent(); })) m_load_error = "a model is already loading";
}

void App::poll_results() {
    if (auto r = m_loader.poll()) {
        if (r->model) {
            log_info("loaded model " + r->path);
            adopt_model(std::move(*r->model));
        } else {
            m_load_error = "could not load '" + r->path + "': " + r->error + " (the previous model stays)";
            std::fprintf(stderr, "[warn] %s\n", m_load_error.c_str());
            m_state.recent.erase(std::remove(m_state.recent.begin(), m_state.recent.end(), r->path), m_state.recent.end());
        }
    }
    // A partial snapshot (no logit lens yet) updates every panel but Predictions, which waits for the complete one
    // rather than flicker its lens plot.
    if (auto s = m_worker->latest(); s && s != m_snap && !(s->partial && m_state.panel == "Predictions")) {
        m_snap = s;
        m_settle_frames = std::max(m_settle_frames, 2);  // new figures: let auto-sized items settle
        if (auto it = m_stats.submitted.find(s->id); it != m_stats.submitted.end()) {
            m_stats.show_pending = true;
            m_stats.show_submit = it->second;
            m_stats.submitted.erase(m_stats.submitted.begin(), std::next(it));
        }
    }
    if (auto g = m_worker->latest_generation(); g && g->id != m_seen_gen) {
        m_seen_gen = g->id;
        m_gen = g;
        m_settle_frames = std::max(m_settle_frames, 2);
    }
}

void App::maybe_submit() {
    if (!m_model.model) return;
    ForwardKey k{m_model.model.get(), m_state.text, m_state.apply_to_model, m_state.attn_temperature, m_state.attn_mask,
                 m_state.attn_window, m_state.attn_mask == "custom" ? m_state.sm_paint : std::vector<uint8_t>{}};
    if (k == m_key) return;
    m_key = k;
    const int max_len = m_model.model->config().max_seq_len;
    m_tokens = std::make_shared<const TokenizedText>(tokenize_text(m_state.text, *m_model.codec, max_len));
    // The same request `render` runs (app/figures/views.h), so exports match the window.
    ForwardRequest r = make_forward_request(m_state, m_model, m_tokens);
    m_last_submitted = m_worker->submit(std::move(r));
    if (!m_opt.frame_stats.empty()) m_stats.submitted[m_last_submitted] = Clock::now();
    if (m_fonts_dirty == false && fonts_need_rebuild(m_state.text)) m_fonts_dirty = true;
}

void App::sidebar() {
    const float line_h = ImGui::GetTextLineHeight();
    ImGui::TextUnformatted("Transformer Studio");
    ImGui::SameLine(ImGui::GetContentRegionAvail().x - line_h * 3.5f);
    if (ImGui::SmallButton(m_state.dark_theme ? "Light" : "Dark")) {
        m_state.dark_theme = !m_state.dark_theme;
        apply_theme(m_state.dark_theme, m_scale);
    }
    ImGui::Separator();

    // Model.
    ImGui::TextDisabled("MODEL");
    ImGui::TextWrapped("%s", m_model.display_name.c_str());
    if (m_model.model) {
        const ModelConfig& c = m_model.model->config();
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
        ImGui::TextWrapped("%s · %d layers · d_model %d · %d heads (%d KV) · vocab %d · max_seq_len %d", to_string(c.arch),
                           c.n_layers, c.d_model, c.n_heads, c.n_kv_heads, c.vocab_size, c.max_seq_len);
        ImGui::PopStyleColor();
    }
    if (m_model.random_weights) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.55f, 0.1f, 1.0f));
        ImGui::TextWrapped("random weights — attention teaches nothing (no bundled model found; load a trained model folder)");
        ImGui::PopStyleColor();
    }
    ImGui::SetNextItemWidth(-line_h * 3.2f);
    const bool enter = ImGui::InputTextWithHint("##path", "model folder (config.json + model.safetensors)", &m_path_edit,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    if ((ImGui::Button("Load") || enter) && !m_path_edit.empty()) start_load(m_path_edit);
    if (m_loader.busy()) {
        ImGui::TextDisabled("loading %s ...", m_loader.loading_path().c_str());
        ImGui::ProgressBar(m_loader.progress(), ImVec2(-1, 0));
    }
    if (!m_load_error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.95f, 0.3f, 0.3f, 1.0f));
        ImGui::TextWrapped("%s", m_load_error.c_str());
        ImGui::PopStyleColor();
    }
    if (!m_state.recent.empty() && ImGui::TreeNode("Recent models")) {
        for (size_t i = 0; i < m_state.recent.size(); ++i) {
            ImGui::PushID(int(i));
            if (ImGui::Selectable(m_state.recent[i].c_str(), m_state.recent[i] == m_model.path)) {
                m_path_edit = m_state.recent[i];
                start_load(m_state.recent[i]);
            }
            ImGui::PopID();
        }
        ImGui::TreePop();
    }
    ImGui::Separator();

    // Text.
    ImGui::TextDisabled("TEXT");
    text_box(line_h);
    ImGui::TextDisabled("samples:");
    for (const auto& smp : kSamples) {
        ImGui::SameLine();
        if (ImGui::SmallButton(smp[0])) m_state.text = smp[1];
    }
    if (m_tokens) {
        for (const auto& n : m_tokens->notices) {
            ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.95f, 0.65f, 0.2f, 1.0f));
            ImGui::TextWrapped("%s", n.c_str());
            ImGui::PopStyleColor();
        }
    }
    ImGui::Separator();

    // Layer, head, query.
    ImGui::TextDisabled("VIEW");
    if (m_model.model) {
        const ModelConfig& c = m_model.model->config();
        m_state.layer = std::clamp(m_state.layer, 0, c.n_layers - 1);
        m_state.head = std::clamp(m_state.head, 0, c.n_heads - 1);
        ImGui::SliderInt("layer", &m_state.layer, 0, c.n_layers - 1);
        ImGui::SliderInt("head", &m_state.head, 0, c.n_heads - 1);
        const int T = m_tokens ? int(m_tokens->ids.size()) : 0;
        if (T > 0) {
            m_state.query = std::clamp(m_state.query, -1, T - 1);
            const int q = m_state.query < 0 ? T - 1 : m_state.query;
            const std::string lbl = m_tokens->pieces[size_t(q)].label;
            ImGui::SliderInt("query", &m_state.query, -1, T - 1, m_state.query < 0 ? ("last: " + lbl).c_str() : ("%d: " + lbl).c_str());
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("query token for the Softmax lab and Predictions (-1 = last token)");
        }
    }
    ImGui::Separator();

    // Attention knobs applied to the model.
    ImGui::TextDisabled("ATTENTION KNOBS");
    ImGui::Checkbox("apply to the model's attention", &m_state.apply_to_model);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Re-runs the forward pass with softmax(scores / temperature) and this mask in every layer.");
    ImGui::BeginDisabled(!m_state.apply_to_model);
    slider_log("temperature", &m_state.attn_temperature, 0.05f, 10.0f);
    const char* masks[] = {"causal", "none", "sliding", "padding", "custom"};
    int mi = 0;
    for (int i = 0; i < 5; ++i)
        if (m_state.attn_mask == masks[i]) mi = i;
    if (ImGui::Combo("mask", &mi, masks, 5)) m_state.attn_mask = masks[mi];
    if (m_state.attn_mask == "custom" && ImGui::IsItemHovered())
        ImGui::SetTooltip("custom: the mask painted in the Softmax lab (click cells of its mask grid)");
    if (m_state.attn_mask == "sliding") ImGui::SliderInt("window w", &m_state.attn_window, 1, 64);
    ImGui::EndDisabled();
    ImGui::Separator();

    // Status.
    if (m_snap) {
        if (!m_snap->error.empty()) {
            ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.95f, 0.3f, 0.3f, 1.0f));
            ImGui::TextWrapped("forward failed: %s", m_snap->error.c_str());
            ImGui::PopStyleColor();
        }
        ImGui::TextDisabled("forward: %.1f ms · %zu tokens%s", m_snap->compute_ms,
                            m_snap->tokens ? m_snap->tokens->ids.size() : size_t(0), m_worker->busy() ? " · computing..." : "");
    }
    draw_export_status();
    if (!m_fonts.notice.empty()) ImGui::TextDisabled("%s", m_fonts.notice.c_str());
    if (!m_state_warning.empty()) ImGui::TextWrapped("%s", m_state_warning.c_str());
}

void App::main_area() {
    PanelContext ctx{m_state, m_snap.get(), &m_model, [this] { m_key = ForwardKey{}; },
                     [this] {
                         if (!m_model.model || !m_tokens) return;
                         ForwardRequest r;
                         r.kind = ForwardRequest::Kind::Generate;
                         r.model = m_model.model;
                         r.codec = m_model.codec;
                         r.tokens = m_tokens;
                         r.generate_tokens = m_state.generate_tokens;
                         r.sampling = {m_state.sample_temperature, m_state.top_k, m_state.top_p};
                         r.seed = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
                         m_worker->submit(std::move(r));
                     },
                     m_gen};
    set_export_menu_context({&m_state, m_snap.get(), &m_model});
    if (ImGui::BeginTabBar("panels")) {
        for (const auto& p : all_panels()) {
            ImGuiTabItemFlags flags = 0;
            if (!m_force_panel.empty() && m_force_panel == p.name) flags |= ImGuiTabItemFlags_SetSelected;
            const bool open = ImGui::BeginTabItem(p.name, nullptr, flags);
            if (!m_opt.frame_stats.empty()) record_rect("tab:" + std::string(p.name));
            if (open) {
                if (m_force_panel.empty() || m_force_panel == p.name) m_state.panel = p.name;
                ImGui::BeginChild("panel_body", ImVec2(0, 0), false);
                p.draw(ctx);
                ImGui::EndChild();
                ImGui::EndTabItem();
            }
        }
        ImGui::EndTabBar();
    }
    m_force_panel.clear();
}

// The text box: a multi-line box whose lines wrap at its width (soft '\n' in a display copy, app/ui/soft_wrap.h)
// and which grows with the text, from 3 to 12 lines, so the whole sentence stays in sight.
void App::text_box(float line_h) {
    ImFont* font = ImGui::GetFont();
    const ImGuiStyle& st = ImGui::GetStyle();
    const float wrap_w = std::max(line_h, ImGui::GetContentRegionAvail().x - 2 * st.FramePadding.x - st.ScrollbarSize - 2);
    const float scale = ImGui::GetFontSize() / font->FontSize;
    m_text_breaker = [font, wrap_w, scale](std::string_view line, size_t begin) {
        const char* end = font->CalcWordWrapPositionA(scale, line.data() + begin, line.data() + line.size(), wrap_w);
        return size_t(end - line.data());
    };
    if (m_text_wrap_src != m_state.text || m_text_wrap_width != wrap_w) {
        m_text_wrap = soft_wrap(m_state.text, m_text_breaker);
        m_text_wrap_src = m_state.text;
        m_text_wrap_width = wrap_w;
    }
    const int lines = 1 + int(std::count(m_text_wrap.display.begin(), m_text_wrap.display.end(), '\n'));
    const float h = float(std::clamp(lines + 1, 3, 12)) * line_h + 2 * st.FramePadding.y;
    std::string buf = m_text_wrap.display;
    ImGui::InputTextMultiline("##text", &buf, ImVec2(-1, h), ImGuiInputTextFlags_CallbackAlways,
                              [](ImGuiInputTextCallbackData* d) {
                                  App* a = static_cast<App*>(d->UserData);
                                  const std::string_view cur(d->Buf, size_t(d->BufTextLen));
                                  if (cur == a->m_text_wrap.display) return 0;
                                  size_t c = size_t(d->CursorPos), s0 = size_t(d->SelectionStart), s1 = size_t(d->SelectionEnd);
                                  std::string real = soft_unwrap(a->m_text_wrap, cur, {&c, &s0, &s1});
                                  Wrapped w = soft_wrap(real, a->m_text_breaker);
                                  if (w.display != cur) {
                                      d->DeleteChars(0, d->BufTextLen);
                                      d->InsertChars(0, w.display.data(), w.display.data() + w.display.size());
                                  }
                                  d->CursorPos = int(real_to_soft(w.soft, c));
                                  d->SelectionStart = int(real_to_soft(w.soft, s0));
                                  d->SelectionEnd = int(real_to_soft(w.soft, s1));
                                  a->m_text_wrap = std::move(w);
                                  a->m_text_wrap_src = real;
                                  a->m_state.text = std::move(real);
                                  return 0;
                              },
                              this);
    if (!m_opt.frame_stats.empty()) record_rect("text_box");
}

void App::record_rect(const std::string& name) {
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    m_stats.rects[name] = {a.x, a.y, b.x, b.y};
}

// --bench-edits: every few frames once the first forward is shown, flip the case of one letter of the text (the
// token count stays about the same), as a user typing would; quit when the last edit's forward is on screen.
void App::bench_edit() {
    constexpr int kEditEvery = 3;
    if (!m_snap || !m_snap->trace) return;
    if (m_stats.edits < m_opt.bench_edits) {
        if (m_frame_index % kEditEvery != 0 || m_state.text.empty()) return;
        for (size_t k = 0; k < m_state.text.size(); ++k) {
            const size_t pos = (size_t(m_stats.edits) * 7 + k) % m_state.text.size();
            const unsigned char ch = static_cast<unsigned char>(m_state.text[pos]);
            if (ch < 128 && std::isalpha(ch)) {
                m_state.text[pos] = char(std::isupper(ch) ? std::tolower(ch) : std::toupper(ch));
                break;
            }
        }
        ++m_stats.edits;
    } else if (!m_worker->busy() && m_snap->id >= m_last_submitted) {
        m_quit = true;
    }
}

void App::write_frame_stats() const {
    nlohmann::json j;
    j["first_frame_ms"] = m_stats.first_frame_ms;
    j["first_data_frame_ms"] = m_stats.first_data_ms;
    j["model"] = m_model.display_name;
    j["tokens"] = m_snap && m_snap->tokens ? int(m_snap->tokens->ids.size()) : 0;
    j["edits"] = m_stats.edits;
    j["forwards_completed"] = m_worker ? m_worker->completed() : 0;
    j["forwards_dropped"] = m_worker ? m_worker->dropped() : 0;
    j["last_compute_ms"] = m_snap ? m_snap->compute_ms : 0.0;
    j["frame_ms"] = m_stats.frame_ms;
    j["build_ms"] = m_stats.build_ms;
    j["worker_busy"] = m_stats.worker_busy;
    j["edit_to_frame_ms"] = m_stats.result_ms;
    j["input_to_frame_ms"] = m_stats.input_ms;
    j["panel"] = m_state.panel;
    for (const auto& [name, r] : m_stats.rects) j["rects"][name] = r;
    j["text"] = m_state.text;
    std::ofstream f(m_opt.frame_stats);
    f << j.dump() << "\n";
    if (!f) log_error("could not write frame stats to " + m_opt.frame_stats);
}

void App::frame() {
    poll_results();
    if (m_opt.bench_edits > 0) bench_edit();
    maybe_submit();
    if (m_fonts_dirty) {
        m_fonts = build_fonts(std::round(16.0f * m_scale), m_state.text);
        ImGui_ImplOpenGL3_DestroyFontsTexture();
        ImGui_ImplOpenGL3_CreateFontsTexture();
        m_fonts_dirty = false;
    }
    const Clock::time_point build_start = Clock::now();
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    const bool had_input = !m_input.empty();
    apply_input();
    ImGui::NewFrame();

    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(vp->WorkPos);
    ImGui::SetNextWindowSize(vp->WorkSize);
    ImGui::Begin("##root", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoBringToFrontOnFocus |
                     ImGuiWindowFlags_NoSavedSettings);
    const float side_w = std::min(vp->WorkSize.x * 0.3f, 330.0f * m_scale);
    ImGui::BeginChild("sidebar", ImVec2(side_w, 0), true);
    sidebar();
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("main", ImVec2(0, 0), false);
    main_area();
    ImGui::EndChild();
    ImGui::End();

    ImGui::Render();
    if (!m_opt.frame_stats.empty()) m_stats.build_ms.push_back(ms_between(build_start, Clock::now()));
    int w = 0, h = 0;
    glfwGetFramebufferSize(m_window, &w, &h);
    glViewport(0, 0, w, h);
    const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    glClearColor(bg.x, bg.y, bg.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    gfx::heatmap_textures_collect();

    // Screenshot mode: wait for the forward pass of the current text, render N frames of each panel, capture.
    if (!m_opt.screenshot_dir.empty() && m_shot_index < m_shot_panels.size()) {
        const bool ready = m_snap && m_snap->id >= m_last_submitted && !m_worker->busy() && !m_loader.busy();
        const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_shot_wait_start).count();
        if (ready || waited > 120.0) {
            if (!ready) log_error("timed out waiting for the forward pass before the screenshot");
            if (++m_shot_frames >= std::max(2, m_opt.frames)) {
                const std::string name = m_shot_panels[m_shot_index];
                std::string file = name;
                std::transform(file.begin(), file.end(), file.begin(), [](unsigned char c) { return char(std::tolower(c)); });
                const std::string path = (std::filesystem::path(m_opt.screenshot_dir) / (file + ".png")).string();
                if (save_screenshot(path)) log_info("screenshot " + path);
                ++m_shot_index;
                m_shot_frames = 0;
                m_shot_wait_start = std::chrono::steady_clock::now();
                if (m_shot_index >= m_shot_panels.size()) m_quit = true;
                else m_force_panel = m_shot_panels[m_shot_index];
            }
        }
    }
    if (m_opt.slow_frame_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(m_opt.slow_frame_ms));
    glfwSwapBuffers(m_window);
    const Clock::time_point shown = Clock::now();
    if (had_input && m_input_time) {
        if (!m_opt.frame_stats.empty()) m_stats.input_ms.push_back(ms_between(*m_input_time, shown));
        m_input_time.reset();
    }
    if (m_stats.first_frame_ms < 0) m_stats.first_frame_ms = ms_between(g_process_start, shown);
    if (m_stats.first_data_ms < 0 && m_snap && m_snap->trace) m_stats.first_data_ms = ms_between(g_process_start, shown);
    if (m_stats.show_pending) {
        m_stats.result_ms.push_back(ms_between(m_stats.show_submit, shown));
        m_stats.show_pending = false;
    }
}

bool App::save_screenshot(const std::string& path) {
    int w = 0, h = 0;
    glfwGetFramebufferSize(m_window, &w, &h);
    std::vector<unsigned char> px(size_t(w) * size_t(h) * 3);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, px.data());
    std::error_code ec;
    std::filesystem::create_directories(m_opt.screenshot_dir, ec);
    stbi_flip_vertically_on_write(1);
    if (!stbi_write_png(path.c_str(), w, h, 3, px.data(), w * 3)) {
        log_error("could not write screenshot " + path);
        m_exit_code = 1;
        return false;
    }
    return true;
}

int App::run() {
    // State.
    if (m_opt.persist) {
        const auto dir = config_dir();
        m_state_file = dir / "state.json";
        m_state = load_state(m_state_file, &m_state_warning);
        if (!m_state_warning.empty()) log_info(m_state_warning);
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        m_ini_path = (dir / "imgui.ini").string();
    }
    if (m_opt.has_text) m_state.text = m_opt.text;
    if (m_opt.theme == "light") m_state.dark_theme = false;
    if (m_opt.theme == "dark") m_state.dark_theme = true;
    if (!m_opt.panel.empty() && m_opt.panel != "all") {
        bool found = false;
        for (const auto& p : all_panels()) {
            std::string a = p.name, b = m_opt.panel;
            std::transform(a.begin(), a.end(), a.begin(), ::tolower);
            std::transform(b.begin(), b.end(), b.begin(), ::tolower);
            if (a == b) { m_state.panel = p.name; found = true; }
        }
        if (!found) {
            std::string names;
            for (const auto& p : all_panels()) names += std::string(" ") + p.name;
            throw std::invalid_argument("unknown panel '" + m_opt.panel + "' (expected all or one of:" + names + ")");
        }
    }
    if (!m_opt.screenshot_dir.empty()) {
        if (m_opt.panel == "all" || m_opt.panel.empty())
            for (const auto& p : all_panels()) m_shot_panels.push_back(p.name);
        else m_shot_panels.push_back(m_state.panel);
        m_state.panel = m_shot_panels.front();
    }
    m_force_panel = m_state.panel;

    // SIGTERM / SIGINT: blocked here (threads started below inherit the mask) and taken by a watcher thread.
    sigset_t quit_signals;
    sigemptyset(&quit_signals);
    sigaddset(&quit_signals, SIGTERM);
    sigaddset(&quit_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &quit_signals, nullptr);
    std::thread([quit_signals] {
        int sig = 0;
        if (sigwait(&quit_signals, &sig) == 0) {
            g_quit_signal = true;
            glfwPostEmptyEvent();
        }
    }).detach();

    if (!init_window()) return 1;
    m_worker = std::make_unique<ForwardWorker>();
    m_worker->set_on_publish([] { glfwPostEmptyEvent(); });

    // First model: --model, else the remembered one, else the bundled default, else the random demo. Loaded
    // synchronously at start (the window shows right after); later loads run in the background.
    std::vector<std::string> candidates;
    if (!m_opt.model_dir.empty()) candidates.push_back(m_opt.model_dir);
    else if (!m_state.model_path.empty()) candidates.push_back(m_state.model_path);
    if (m_opt.model_dir.empty()) {
        const std::string def = find_default_model_dir(m_opt.exe_path);
        if (!def.empty()) candidates.push_back(def);
    }
    for (const auto& c : candidates) {
        try {
            adopt_model(load_model_folder(c));
            break;
        } catch (const std::exception& e) {
            m_load_error = "could not load '" + c + "': " + e.what();
            std::fprintf(stderr, "[warn] %s\n", m_load_error.c_str());
        }
    }
    if (!m_model.model) {
        adopt_model(make_demo_model());
        log_info("no model folder found: using the random-weight demo model");
    }
    m_path_edit = m_model.path;
    m_shot_wait_start = std::chrono::steady_clock::now();

    while (!glfwWindowShouldClose(m_window) && !m_quit && !g_quit_signal) {
        // Idle: sleep until an event (input, a worker result via glfwPostEmptyEvent, a signal). Busy: poll.
        if (animating() || m_settle_frames > 0) glfwPollEvents();
        else glfwWaitEvents();
        if (g_quit_signal) break;
        const Clock::time_point t0 = Clock::now();
        if (m_input_seen) {
            m_input_seen = false;
            m_settle_frames = 3;
            if (!m_input_time) m_input_time = t0;
        } else if (m_settle_frames > 0) {
            --m_settle_frames;
        }
        frame();
        if (!m_opt.frame_stats.empty()) {
            m_stats.frame_ms.push_back(ms_between(t0, Clock::now()));
            m_stats.worker_busy.push_back(m_worker->busy() ? 1 : 0);
        }
        if (++m_frame_index == m_opt.max_frames) m_quit = true;
    }
    if (!m_opt.frame_stats.empty()) write_frame_stats();
    save_state_now();
    shutdown();
    if (g_error_count > 0 && !m_opt.screenshot_dir.empty()) return 1;
    return m_exit_code;
}

}  // namespace

int run_app(const AppOptions& opt) {
    App app(opt);
    return app.run();
}

}  // namespace ts::ui
