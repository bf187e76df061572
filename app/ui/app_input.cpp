// The window's input: GLFW callbacks that queue button/key/character transitions (app/ui/input_queue.h) and mark
// activity, the per-frame hand-over to ImGui, and what counts as "animating" for the idle loop (App, app_window.h).
#include "app/ui/app_window.h"

#include "app/gfx/astral.h"

#include <GLFW/glfw3.h>
#include <algorithm>
#include <iterator>
#include <imgui.h>

namespace ts::ui::detail {

namespace {
App* app_of(GLFWwindow* w) { return static_cast<App*>(glfwGetWindowUserPointer(w)); }
}  // namespace

void App::install_input_callbacks() {
    glfwSetWindowUserPointer(m_window, this);
    // Installed before ImGui's backend, which chains to them; the char callback replaces the backend's (below).
    // A press is where the pointer was when it happened: the position of the motion event before it. GLFW's
    // glfwGetCursorPos asks the X server for the pointer now, so two clicks handled in one batch (a slow first frame)
    // both landed where the second one was, and a click on a tab became a click on the text box (CI under ASan).
    glfwSetMouseButtonCallback(m_window, [](GLFWwindow* w, int button, int action, int) {
        App* a = app_of(w);
        if (!a->m_cursor_known) {  // no motion seen yet: the pointer has not moved since the window appeared
            glfwGetCursorPos(w, &a->m_cursor_x, &a->m_cursor_y);
            a->m_cursor_known = true;
        }
        if (action != GLFW_REPEAT)
            a->m_input.push(
                {InputEvent::Kind::MouseButton, button, action == GLFW_PRESS, a->m_cursor_x, a->m_cursor_y});
        a->m_input_seen = true;
    });
    glfwSetKeyCallback(m_window, [](GLFWwindow* w, int key, int, int action, int) {
        App* a = app_of(w);
        if (action != GLFW_REPEAT && key >= 0) a->m_input.push({InputEvent::Kind::Key, key, action == GLFW_PRESS, 0, 0});
        a->m_input_seen = true;
    });
    glfwSetCursorPosCallback(m_window, [](GLFWwindow* w, double x, double y) {
        App* a = app_of(w);
        a->m_cursor_x = x;
        a->m_cursor_y = y;
        a->m_cursor_known = true;
        a->m_input_seen = true;
    });
    glfwSetScrollCallback(m_window, [](GLFWwindow* w, double, double) { app_of(w)->m_input_seen = true; });
    glfwSetWindowSizeCallback(m_window, [](GLFWwindow* w, int, int) { app_of(w)->m_input_seen = true; });
    glfwSetWindowRefreshCallback(m_window, [](GLFWwindow* w) { app_of(w)->m_input_seen = true; });
    glfwSetWindowFocusCallback(m_window, [](GLFWwindow* w, int) { app_of(w)->m_input_seen = true; });
    glfwSetCursorEnterCallback(m_window, [](GLFWwindow* w, int) { app_of(w)->m_input_seen = true; });
}

/// Feeds this frame's share of the queued input to ImGui, after the GLFW backend's NewFrame and before
/// ImGui::NewFrame. ImGui sees the buttons and keys exactly as the queue hands them over: the backend also sets them
/// (a press from its own callback, held for one frame, and the live device state), and a press it showed in a frame
/// before the queue's own made the queue's look like the same press still held, so no click happened (a click on a
/// tab during the first frames under a slow start, seen in CI under ASan).
void App::apply_input() {
    ImGuiIO& io = ImGui::GetIO();
    static_assert(IM_ARRAYSIZE(io.MouseDown) == IM_ARRAYSIZE(m_buttons_down));
    static_assert(IM_ARRAYSIZE(io.KeysDown) == IM_ARRAYSIZE(m_keys_down));
    // Nothing in the first two frames: ImGui finds what is under the mouse from the windows and items of the frames
    // before, and a click handled in frame 0 or 1 hit nothing and was lost (measured with xdotool on the tab bar).
    // A click made while the app starts (the model loads before the first frame: seconds on a cold machine) or
    // during its first frames waits in the queue for frame 2 instead.
    // A press somewhere the mouse was not in the frame before first moves the mouse there for one frame: ImGui's
    // tabs (items that allow overlap) take a click only when the frame before hovered them or nothing, so a tab
    // click queued behind a click elsewhere (one slow frame) was lost.
    const bool hover_first = ImGui::GetFrameCount() >= 2 && !m_input.empty() &&
        m_input.front().kind == InputEvent::Kind::MouseButton && m_input.front().down &&
        (float(m_input.front().x) != m_last_mouse_x || float(m_input.front().y) != m_last_mouse_y);
    if (hover_first) io.MousePos = ImVec2(float(m_input.front().x), float(m_input.front().y));
    if (ImGui::GetFrameCount() >= 2 && !hover_first) {
        for (const auto& e : m_input.take_frame()) {
            if (e.kind == InputEvent::Kind::MouseButton) {
                if (e.code < 0 || e.code >= IM_ARRAYSIZE(m_buttons_down)) continue;
                m_buttons_down[e.code] = e.down;
                if (e.down) {
                    // ImGui clicks on a button that was up in the frame before; one it saw down then hears no click.
                    ++m_stats.presses;
                    if (io.MouseDownDuration[e.code] >= 0.0f) ++m_stats.lost_presses;
                }
                io.MousePos = ImVec2(float(e.x), float(e.y));
            } else if (e.kind == InputEvent::Kind::Key) {
                if (e.code < IM_ARRAYSIZE(m_keys_down)) m_keys_down[e.code] = e.down;
            } else if (gfx::needs_stand_in(char32_t(e.code))) {
                gfx::queue_typed(char32_t(e.code));  // emoji: the text box's callback inserts its stand-in (astral.h)
            } else {
                io.AddInputCharacter(unsigned(e.code));
            }
        }
    }
    m_last_mouse_x = io.MousePos.x;
    m_last_mouse_y = io.MousePos.y;
    std::copy(std::begin(m_buttons_down), std::end(m_buttons_down), std::begin(io.MouseDown));
    std::copy(std::begin(m_keys_down), std::end(m_keys_down), std::begin(io.KeysDown));
    io.KeyCtrl = m_keys_down[GLFW_KEY_LEFT_CONTROL] || m_keys_down[GLFW_KEY_RIGHT_CONTROL];
    io.KeyShift = m_keys_down[GLFW_KEY_LEFT_SHIFT] || m_keys_down[GLFW_KEY_RIGHT_SHIFT];
    io.KeyAlt = m_keys_down[GLFW_KEY_LEFT_ALT] || m_keys_down[GLFW_KEY_RIGHT_ALT];
    io.KeySuper = m_keys_down[GLFW_KEY_LEFT_SUPER] || m_keys_down[GLFW_KEY_RIGHT_SUPER];
}

/// True while frames must keep coming without input (fonts, queued input, test and benchmark modes); a loading
/// model or a running analysis only needs a frame every 50 ms (see the loop in app.cpp).
bool App::animating() const {
    // Screenshot mode draws every frame, except while a lab run it waits for trains (its updates wake the loop,
    // so the window costs what it costs a student: tests/bench/lab_ui_bench.sh).
    // Nor while the forward it waits for computes: under software GL a frame costs more than the worker's share of
    // the cores (an 8,000-token forward took 10 s drawn beside, 2.8 s alone); the result's publish wakes the loop.
    const bool shots = !m_opt.screenshot_dir.empty() && !m_lab.active() && !(m_worker && m_worker->busy());
    return m_fonts_dirty || !m_input.empty() || shots || m_opt.bench_edits > 0 || m_opt.max_frames > 0 ||
        m_opt.slow_frame_ms > 0 || !m_opt.analyses.empty();
}

}  // namespace ts::ui::detail
