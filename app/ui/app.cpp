// The app's main loop: window and ImGui set-up, frames, tabs, model loading, worker results, screenshot and
// benchmark modes (see app.h; the sidebar is sidebar.cpp, input handling app_input.cpp).
#include "app/ui/app_window.h"

#include "app/gfx/gl.h"
#include "app/i18n/tr.h"
#include "app/gfx/heatmap_colors.h"
#include "app/gfx/heatmap_texture.h"
#include "app/gfx/painter.h"
#include "app/gfx/raster.h"
#include "app/ui/export_menu.h"
#include "app/figures/views.h"
#include "app/lessons/lesson.h"
#include "app/gfx/astral.h"
#include "app/gfx/fonts.h"
#include "app/ui/input_queue.h"
#include "core/formats/ollama.h"
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
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

namespace ts::ui::detail {

namespace {
int g_error_count = 0;
// Taken during static initialisation, i.e. before main(): the reference for "cold start to first frame".
const Clock::time_point g_process_start = Clock::now();
void glfw_error(int code, const char* desc) { log_error("GLFW " + std::to_string(code) + ": " + desc); }
}  // namespace

double ms_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

void log_error(const std::string& msg) {
    ++g_error_count;
    std::fprintf(stderr, "[error] %s\n", msg.c_str());
}
void log_info(const std::string& msg) { std::fprintf(stderr, "[info] %s\n", msg.c_str()); }

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
    m_fonts = gfx::build_fonts(std::round(16.0f * m_scale), m_state.text + lessons::lesson_font_text());
    if (!m_fonts.notice.empty()) log_info(m_fonts.notice);
    io.ConfigInputTextCursorBlink = false;  // a blinking caret would need a frame every half second when idle
    install_input_callbacks();
    ImGui_ImplGlfw_InitForOpenGL(m_window, true);
    // Characters go through our queue too, so their order against keys (Backspace, arrows) survives slow frames.
    glfwSetCharCallback(m_window, [](GLFWwindow* w, unsigned int c) {
        App* a = static_cast<App*>(glfwGetWindowUserPointer(w));  // the char callback (set after ImGui)
        a->m_input.push({InputEvent::Kind::Char, int(c), true, 0, 0});
        a->m_input_seen = true;
    });
    // The clipboard in and out of ImGui goes through the emoji stand-ins (astral.h): pasted "🐱" stays "🐱".
    io.GetClipboardTextFn = [](void* w) -> const char* {
        static std::string pasted;
        const char* s = glfwGetClipboardString(static_cast<GLFWwindow*>(w));
        pasted = gfx::shown(s ? s : "");
        return pasted.c_str();
    };
    io.SetClipboardTextFn = [](void* w, const char* text) {
        glfwSetClipboardString(static_cast<GLFWwindow*>(w), gfx::typed(text ? text : "").c_str());
    };
    io.ClipboardUserData = m_window;
    ImGui_ImplOpenGL3_Init("#version 330 core");
    gfx::set_export_menu(draw_export_menu);
    return true;
}




void App::apply_language(const std::string& lang) {
    std::string why;
    if (!i18n::set_language(lang, &why)) log_info("interface language: " + why + "; showing English");
    m_fonts_dirty = m_window != nullptr;  // the atlas holds the catalog's glyphs; rebuilt once a window exists
}

void App::shutdown() {
    m_worker.reset();
    m_overviews.set_on_done({});  // a head that finishes now must not post to a terminated GLFW
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
    m_interp.clear();  // results of the previous model
    m_neuron_index.clear();
    m_compare.clear();
    if (!m_model.path.empty()) {
        m_state.model_path = m_model.path;
        m_state.remember_model(m_model.path);
    }
    m_path_edit = m_model.path;
    if (!m_model.tokenizer_warning.empty()) log_info(m_model.tokenizer_warning);
    for (const auto& w : m_model.weight_warnings) std::fprintf(stderr, "[warn] %s\n", w.c_str());
    m_spec = ForwardSpec{};  // force a new forward
    m_examples = m_model.translation ? read_example_pairs(m_model.path) : std::vector<ExamplePair>{};
    for (const ExamplePair& p : m_examples) gfx::request_glyphs(p.en + p.zh);  // in the atlas before the picker opens
    m_translated.reset();
    m_translate_id = 0;
    m_reference.clear();
    if (!m_model.translation_warning.empty()) log_info(m_model.translation_warning);
}

void App::start_load(const std::string& path) {
    m_load_error.clear();
    if (!m_loader.start(path, [] { glfwPostEmptyEvent(); })) m_load_error = tr("a model is already loading");
}

void App::poll_results() {
    if (m_interp.poll()) m_settle_frames = std::max(m_settle_frames, 2);
    if (m_neuron_index.poll()) m_settle_frames = std::max(m_settle_frames, 2);
    if (m_compare.poll()) m_settle_frames = std::max(m_settle_frames, 2);
    if (auto r = m_loader.poll()) {
        if (r->model) {
            log_info("loaded model " + r->path);
            adopt_model(std::move(*r->model));
        } else {
            m_load_error = trf("could not load '%s': %s (the previous model stays)", r->path.c_str(), r->error.c_str());
            std::fprintf(stderr, "[warn] %s\n", m_load_error.c_str());
            m_state.recent.erase(std::remove(m_state.recent.begin(), m_state.recent.end(), r->path), m_state.recent.end());
        }
    }
    // A partial snapshot (no logit lens yet) updates every panel but Predictions, which waits for the complete one
    // rather than flicker its lens plot. A progressive one (a long forward's first layers) only the Attention panel
    // takes; the others keep the previous snapshot until the forward is done.
    const auto latest = m_worker->latest();
    if (latest) m_progress = latest->layers_done > 0 ? latest : nullptr;
    if (auto s = latest; s && s != m_snap && !(s->partial && m_state.panel == Panel::Predictions) &&
        !(s->layers_done > 0 && m_state.panel != Panel::Attention)) {
        if (s->layers_done > 0)
            log_info("a long text: " + std::to_string(s->layers_done) + " of " + std::to_string(s->n_layers()) +
                     " layers shown after " + std::to_string(int(s->compute_ms)) + " ms of its forward");
        m_snap = s;
        if (m_translate_id != 0 && s->id >= m_translate_id) {
            if (s->id == m_translate_id && s->translation && s->tokens) {
                // The decoded target becomes the target text; the snapshot already holds its forward.
                m_state.target_text = s->tokens->text;
                m_tokens = s->tokens;
                m_translated = s;
                m_spec = current_spec();
                log_info("translated (" + std::string(m_state.decode_beam > 1 ? "beam" : "greedy") + "): " + m_state.target_text);
            }
            m_translate_id = 0;
        }
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

// The spec of the forward the window shows, for the open tab. The logit lens costs one LM-head product per layer
// (GPT-2 small at T = 128: about 5x the forward's own work) and only Predictions shows it; the LM head is a third of
// the weights a GPT-2-small keystroke reads (154 of 498 MB) and only some tabs read logits (Snapshot::logits_row
// still computes any row on request). Opening Predictions changes the spec, so the text runs again with the lens
// (the kept prefix makes that forward one token's work).
ForwardSpec App::current_spec() const { return forward_spec(m_state, m_model, m_state.panel); }

void App::maybe_submit() {
    if (!m_model.model || m_translate_id != 0) return;  // a translation in flight brings its own forward
    ForwardSpec spec = current_spec();
    if (spec == m_spec) return;
    m_spec = std::move(spec);
    const int max_len = m_model.model->config().max_seq_len;
    auto text_tokens = std::make_shared<const TokenizedText>(tokenize_text(m_state.text, *m_model.codec, max_len));
    // The same request `render` runs (app/session/forward_spec.h), so exports match the window.
    ForwardRequest r = make_forward_request(m_spec, m_model, text_tokens);
    m_tokens = r.tokens;
    m_source_tokens = r.source_tokens;
    m_last_submitted = m_worker->submit(std::move(r));
    if (!m_opt.frame_stats.empty())  // after this frame's input, else the last frame's (see frame())
        m_stats.submitted[m_last_submitted] = {Clock::now(), m_input_time ? m_input_time : std::exchange(m_stats.applied_input, {})};
    if (m_fonts_dirty == false && gfx::fonts_need_rebuild(m_state.text)) m_fonts_dirty = true;
}


// Translate: decode the source on the worker; the result's forward (source + decoded target) replaces the
// snapshot and its text fills the target box (poll_results).
void App::translate_now() {
    if (!m_model.model || !m_model.translation || m_state.text.empty()) return;
    auto text_tokens = std::make_shared<const TokenizedText>(
        tokenize_text(m_state.text, *m_model.codec, m_model.model->config().max_seq_len));
    ForwardRequest r = make_forward_request(current_spec(), m_model, text_tokens);
    r.kind = ForwardRequest::Kind::Translate;
    m_source_tokens = r.source_tokens;
    m_translate_id = m_last_submitted = m_worker->submit(std::move(r));
    m_keep_drawing = true;
}

void App::main_area() {
    PanelContext ctx{m_state,
                     m_snap.get(),
                     &m_model,
                     [this] { m_spec = ForwardSpec{}; },
                     [this] {
                         if (!m_model.model || !m_tokens) return;
                         ForwardRequest r;
                         r.kind = ForwardRequest::Kind::Generate;
                         r.model = m_model.model;
                         r.codec = m_model.codec;
                         r.target_codec = m_model.target_codec;
                         r.tokens = m_tokens;
                         r.source_tokens = m_source_tokens;  // encoder–decoder: continue the target
                         r.generate_tokens = m_state.generate_tokens;
                         r.sampling = {m_state.sample_temperature, m_state.top_k, m_state.top_p};
                         r.seed = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
                         m_worker->submit(std::move(r));
                     },
                     m_gen,
                     &m_interp,
                     [this] { m_keep_drawing = true; },
                     [this](const std::string& path) { start_load(path); },
                     &m_bundled,
                     &m_neuron_index,
                     &m_lab,
                     m_snap,
                     &m_attn_pin,
                     &m_compare,
                     &m_overviews};
    set_export_menu_context({&m_state, m_snap.get(), &m_model});
    // Whatever changes the forward is said above every panel it affects (ablations persist in the saved state, so
    // after a restart a blank head would otherwise look like a bug).
    const std::vector<interp::HeadRef> ablated =
        m_model.model ? ablated_heads_for(m_state, m_model.model->config()) : std::vector<interp::HeadRef>{};
    if (!ablated.empty()) {
        std::string heads;
        for (const auto& h : ablated)
            heads += (heads.empty() ? "" : ", ") + std::string("L") + std::to_string(h.layer) + " H" + std::to_string(h.head);
        // The button first: at 1024 px a long list of heads would push it off the window.
        if (ImGui::SmallButton(tr("clear ablations"))) {
            m_state.ablated_heads.clear();
            m_spec = ForwardSpec{};
        }
        ImGui::SameLine();
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.95f, 0.55f, 0.2f, 1.0f));
        ImGui::TextWrapped(tr("heads ablated (%s): %s; every panel shows the model with these heads knocked out"),
                           tr(name_of(m_state.ablate_mode)), heads.c_str());
        ImGui::PopStyleColor();
    }
    link_attention_knobs(m_state, m_attn_link);  // one knob, one value: the sidebar's and the Softmax lab's
    // Thirteen tabs: when their labels do not fit the row, the padding around each label shrinks before ImGui would
    // cut the labels short ("Attenti…" at 1280 pixels).
    const ImGuiStyle& style = ImGui::GetStyle();
    float labels_w = 0;
    for (const auto& p : all_panels()) labels_w += ImGui::CalcTextSize(tr(name_of(p.panel))).x;
    const float n_tabs = float(all_panels().size());
    const float room = ImGui::GetContentRegionAvail().x - style.ItemInnerSpacing.x * (n_tabs - 1) - labels_w;
    const ImVec2 tab_padding(std::clamp(room / (2 * n_tabs) - 1.0f, 2.0f, style.FramePadding.x), style.FramePadding.y);
    const ImVec2 frame_padding = style.FramePadding;
    ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, tab_padding);  // the tab bar lays the tabs out with it
    if (ImGui::BeginTabBar("panels")) {
        for (const auto& p : all_panels()) {
            ImGuiTabItemFlags flags = 0;
            const char* name = name_of(p.panel);
            if (m_force_panel == p.panel) flags |= ImGuiTabItemFlags_SetSelected;
            // Translated label, English ID: the tab keeps its identity (and m_state.panel its value) across languages.
            const std::string label = std::string(tr(name)) + "###" + name;
            const bool open = ImGui::BeginTabItem(label.c_str(), nullptr, flags);
            // Students meet both names: the English one on hover while another language is on.
            if (ImGui::IsItemHovered() && std::strcmp(tr(name), name) != 0) ImGui::SetTooltip("%s", name);
            if (!m_opt.frame_stats.empty()) record_rect("tab:" + std::string(name));
            if (open) {
                if (!m_force_panel || m_force_panel == p.panel) m_state.panel = p.panel;
                // Before the panel draws: a lesson sets its text up when drawn, so the student's must be kept first.
                on_panel_change(m_state.panel);
                ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, frame_padding);  // the panel's own widgets
                ImGui::BeginChild("panel_body", ImVec2(0, 0), false);
                if (m_snap && m_snap->layers_done > 0 && p.panel != Panel::Attention)
                    empty_message(trf("Computing the model on this long text: %d of %d layers done. The Attention tab "
                                      "already shows the finished layers.",
                                      m_snap->layers_done, m_snap->n_layers())
                                      .c_str());
                else if (m_snap && m_snap->attention_only && p.panel != Panel::Attention)
                    empty_message(
                        tr("This long text was run for the Attention tab, which keeps only what that tab "
                           "shows (to save memory). It is being run again for this tab…"));
                else p.draw(ctx);
                ImGui::EndChild();
                ImGui::PopStyleVar();
                ImGui::EndTabItem();
            }
        }
        ImGui::EndTabBar();
    }
    ImGui::PopStyleVar();
    m_force_panel.reset();
}

// A lesson opens in its own set-up and gives the student's model, text and knobs back when they leave it: entering
// the Lessons tab keeps a copy of the state and model; leaving it restores them (the lesson and its step are kept,
// so coming back resumes it). The look of the window (language, theme, size) and exports are never reverted.
void App::on_panel_change(Panel panel) {
    if (panel == m_prev_panel) return;
    // One more frame: a snapshot held back for another panel (a long forward's progressive one, Predictions' wait
    // for the lens) is taken at the start of the next frame, which would otherwise wait for the next event.
    m_keep_drawing = true;
    const bool entering = panel == Panel::Lessons, leaving = m_prev_panel == Panel::Lessons;
    m_prev_panel = panel;
    if (entering) {
        m_before_lesson = m_state;
        m_before_lesson_model = m_model.path;
        lessons_panel_entered();
    } else if (leaving && m_before_lesson) {
        UiState back = *m_before_lesson;
        back.panel = panel;
        back.lesson = m_state.lesson;
        back.lesson_step = m_state.lesson_step;
        back.language = m_state.language;
        back.dark_theme = m_state.dark_theme;
        back.ui_scale = m_state.ui_scale;
        back.recent = m_state.recent;
        back.export_dir = m_state.export_dir;
        back.export_format = m_state.export_format;
        const bool changed = back.text != m_state.text || m_before_lesson_model != m_model.path;
        m_state = back;
        m_before_lesson.reset();
        m_spec = ForwardSpec{};
        if (!m_before_lesson_model.empty() && m_before_lesson_model != m_model.path) start_load(m_before_lesson_model);
        if (changed) log_info(tr("left the lesson: your model and text are back"));
    }
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
    j["lens_layers"] = m_snap ? int(m_snap->lens_argmax.size()) : 0;  // logit-lens rows of the shown snapshot
    j["logits_rows"] = m_snap ? int(m_snap->logits.rows()) : 0;       // positions whose logits the forward computed
    j["frame_ms"] = m_stats.frame_ms;
    j["build_ms"] = m_stats.build_ms;
    j["worker_busy"] = m_stats.worker_busy;
    j["edit_to_frame_ms"] = m_stats.result_ms;
    j["input_to_frame_ms"] = m_stats.input_ms;
    j["mouse_presses"] = m_stats.presses;
    j["lost_presses"] = m_stats.lost_presses;
    j["key_to_result_ms"] = m_stats.key_result_ms;  // keystroke -> its forward on screen (ui_frame_bench.sh (5))
    j["panel"] = m_state.panel;
    for (const auto& [name, r] : m_stats.rects) j["rects"][name] = r;
    j["text"] = m_state.text;
    j["language"] = i18n::language();
    std::ofstream f(m_opt.frame_stats);
    f << j.dump() << "\n";
    if (!f) log_error("could not write frame stats to " + m_opt.frame_stats);
}

void App::frame() {
    poll_results();
    // --analyses: one after another, once the forward of the text is on screen.
    if (!m_opt.analyses.empty() && m_snap && m_snap->trace && !m_interp.busy() && m_model.model) {
        const std::string a = m_opt.analyses.front();
        m_opt.analyses.erase(m_opt.analyses.begin());
        // gui_command checked the names.
        m_interp.start(parse_interp_kind(a).value_or(InterpResult::Kind::Flow), m_state, m_model,
                       top_prediction(m_snap.get()));
    }
    if (m_opt.bench_edits > 0) bench_edit();  // its edit is submitted at the end of this frame, like a keystroke's
    if (m_fonts_dirty) {
        m_fonts =
            gfx::build_fonts(std::round(16.0f * m_scale), m_state.text + lessons::lesson_font_text() + m_font_extra);
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
    // Characters this frame drew that the atlas lacks (model output, token labels, examples): in the atlas from the
    // next frame on (a dirty atlas asks for that frame at once).
    if (std::string more = gfx::take_glyph_requests(); !more.empty()) {
        m_font_extra += more;
        m_fonts_dirty = true;
    }
    // The one submit of a frame, after its UI: a text or knob it changed (or a model loaded, a bench edit) goes to the
    // worker now, and its forward runs while this frame is rasterised (at 1600×1000 under software GL, ~25 ms of a
    // keystroke's wait that a submit at the next frame's start added).
    maybe_submit();
    if (gfx::stand_in_glyphs_missing()) m_fonts_dirty = true;  // an emoji shown for the first time
    gfx::clear_typed();                                        // typed emoji no text box took

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
    gfx::heatmap_cell_colors_collect();
    if (m_worker) m_worker->set_share_cores(m_lab.active());  // no idle OpenMP pool beside the lab's (#33)

    // Screenshot mode: wait for the forward pass of the current text, render N frames of each panel, capture.
    if (!m_opt.screenshot_dir.empty() && m_shot_index < m_shot_panels.size()) {
        const bool ready = m_snap && m_snap->id >= m_last_submitted && !m_worker->busy() && !m_loader.busy() &&
            !m_interp.busy() && !m_neuron_index.busy() && !m_compare.busy() && !m_overviews.busy() &&
            m_opt.analyses.empty() && !m_lab.active();
        const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_shot_wait_start).count();
        if (ready || (waited > 120.0 && !m_lab.active())) {
            if (!ready) log_error("timed out waiting for the forward pass before the screenshot");
            if (++m_shot_frames >= std::max(2, m_opt.frames)) {
                const std::string name = name_of(m_shot_panels[m_shot_index]);
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
    if (m_opt.slow_frame_ms > 0) {
        // The tests' clock: input sent after this line arrives in the next frame (input_test.sh).
        std::fprintf(stderr, "[frame] %d drawn\n", ImGui::GetFrameCount() - 1);
        std::fflush(stderr);
        std::this_thread::sleep_for(std::chrono::milliseconds(m_opt.slow_frame_ms));
    }
    glfwSwapBuffers(m_window);
    const Clock::time_point shown = Clock::now();
    if (had_input && m_input_time) {
        if (!m_opt.frame_stats.empty()) m_stats.input_ms.push_back(ms_between(*m_input_time, shown));
        m_stats.applied_input = m_input_time;  // for a submit the next frame makes (not one this frame's UI caused)
        m_input_time.reset();
    } else {
        m_stats.applied_input.reset();
    }
    if (m_stats.first_frame_ms < 0) m_stats.first_frame_ms = ms_between(g_process_start, shown);
    if (m_stats.first_data_ms < 0 && m_snap && m_snap->trace) m_stats.first_data_ms = ms_between(g_process_start, shown);
    if (m_stats.show_pending) {
        m_stats.result_ms.push_back(ms_between(m_stats.show_submit.at, shown));
        if (m_stats.show_submit.input) m_stats.key_result_ms.push_back(ms_between(*m_stats.show_submit.input, shown));
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
    if (m_opt.has_target) m_state.target_text = m_opt.target;
    if (!m_opt.translate_to.empty()) m_state.translate_to = m_opt.translate_to;
    if (m_opt.beam > 0) m_state.decode_beam = m_opt.beam;
    if (m_opt.attn_source) m_state.attn_source = *m_opt.attn_source;
    // Interface language: --lang, else the remembered choice, else the system locale's.
    if (!m_opt.lang.empty()) m_state.language = i18n::normalize_language(m_opt.lang);
    apply_language(m_state.language.empty() ? i18n::system_language() : m_state.language);
    if (!m_opt.lab_settings.empty()) m_state.train_topic = "lab";
    if (!m_opt.lesson.empty()) {
        m_state.lesson = m_opt.lesson;
        m_state.lesson_step = m_opt.lesson_step - 1;
    }
    if (m_opt.theme == "light") m_state.dark_theme = false;
    if (m_opt.theme == "dark") m_state.dark_theme = true;
    if (!m_opt.panel.empty() && m_opt.panel != "all") {
        const std::optional<Panel> p = parse_panel(m_opt.panel);
        if (!p) throw std::invalid_argument("unknown panel '" + m_opt.panel + "' (expected all, " + panel_list() + ")");
        m_state.panel = *p;
    }
    if (!m_opt.screenshot_dir.empty()) {
        if (m_opt.panel == "all" || m_opt.panel.empty())
            for (const auto& p : all_panels()) m_shot_panels.push_back(p.panel);
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
    m_lab.set_on_update([] { glfwPostEmptyEvent(); });
    if (!m_opt.lab_settings.empty()) {  // after set_on_update: its first publish wakes the window
        try {
            const LabSettings s = load_lab_settings(m_opt.lab_settings);
            m_lab.draft() = s;
            m_lab.start(s, m_opt.lab_out.empty() ? default_lab_dir(s) : std::filesystem::path(m_opt.lab_out));
        } catch (const std::exception& e) {
            log_error(e.what());  // the window opens all the same; the Training tab shows the knobs
        }
    }
    m_interp.set_on_done([] { glfwPostEmptyEvent(); });
    m_overviews.set_on_done([] { glfwPostEmptyEvent(); });

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
            m_load_error = trf("could not load '%s': %s", c.c_str(), e.what());
            std::fprintf(stderr, "[warn] %s\n", m_load_error.c_str());
        }
    }
    if (!m_model.model) {
        adopt_model(make_demo_model());
        log_info("no model folder found: using the random-weight demo model");
    }
    m_path_edit = m_model.path;
    m_bundled = list_bundled_model_dirs(m_opt.exe_path);
    for (const OllamaModel& o : list_ollama_models()) m_ollama.push_back(o.name);
    if (m_opt.translate) {
        if (m_model.translation) translate_now();
        else log_error("--translate: " + m_model.display_name + " has no translation.json (an encoder-decoder translation model is needed)");
    }
    m_shot_wait_start = std::chrono::steady_clock::now();

    while (!glfwWindowShouldClose(m_window) && !m_quit && !g_quit_signal) {
        // Idle: sleep until an event (input, a worker result via glfwPostEmptyEvent, a signal). Busy: poll.
        // Soft animation (a progress bar, a panel waiting for a result): wake every 50 ms instead of every frame.
        const bool soft = m_keep_drawing || m_loader.busy() || m_interp.busy() || m_neuron_index.busy() ||
            m_compare.busy() || m_overviews.busy();
        m_keep_drawing = false;
        if (animating() || m_settle_frames > 0) glfwPollEvents();
        else if (soft) glfwWaitEventsTimeout(0.05);
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

}  // namespace ts::ui::detail

namespace ts::ui {

int run_app(const AppOptions& opt) {
    detail::App app(opt);
    return app.run();
}

}  // namespace ts::ui
