// InputQueue: mouse-button and key transitions recorded as they arrive and handed to ImGui one transition per
// button/key per frame. Debian's Dear ImGui 1.86 has no input queue of its own (1.87 added one): a key pressed
// and released within one slow frame was never seen down, so the keystroke was lost. GL-free, so it is unit-tested.
#pragma once

#include "app/gfx/astral.h"

#include <cstddef>
#include <deque>
#include <set>
#include <utility>
#include <vector>

namespace ts::ui {

struct InputEvent {
    enum class Kind { MouseButton, Key, Char };
    Kind kind = Kind::MouseButton;
    int code = 0;          ///< mouse button index, key code, or Unicode code point (Char)
    bool down = false;     ///< true = press, false = release
    double x = 0, y = 0;   ///< cursor position when the event arrived (window pixels; mouse events)
};

class InputQueue {
public:
    void push(const InputEvent& e) { m_events.push_back(e); }
    [[nodiscard]] bool empty() const { return m_events.empty(); }
    [[nodiscard]] size_t size() const { return m_events.size(); }
    /// The oldest event still queued (the queue must not be empty).
    [[nodiscard]] const InputEvent& front() const { return m_events.front(); }

    /// The events to apply this frame, in arrival order: every event up to the second transition of any one
    /// button or key, which (with everything after it) waits for the next frame, so a press and its release land
    /// in different frames and ImGui sees the button down for at least one frame. A character typed after a key
    /// press also waits: ImGui's text box inserts a frame's characters before it handles its keys, so
    /// Backspace-then-"b" in one frame would delete the "b". A character above U+FFFF or in the Private Use Area
    /// (an emoji, astral.h) ends the frame's share: the text box's callback inserts it after the frame's other
    /// characters, so "a🐱b" typed within one frame would come out "ab🐱".
    [[nodiscard]] std::vector<InputEvent> take_frame() {
        std::vector<InputEvent> out;
        std::set<std::pair<int, int>> touched;
        bool key_pressed = false;
        while (!m_events.empty()) {
            const InputEvent& e = m_events.front();
            if (e.kind == InputEvent::Kind::Char) {
                if (key_pressed) break;
            } else if (!touched.insert({int(e.kind), e.code}).second) {
                break;
            }
            key_pressed = key_pressed || (e.kind == InputEvent::Kind::Key && e.down);
            const bool late = e.kind == InputEvent::Kind::Char && gfx::needs_stand_in(char32_t(e.code));
            out.push_back(e);
            m_events.pop_front();
            if (late) break;
        }
        return out;
    }

private:
    std::deque<InputEvent> m_events;
};

}  // namespace ts::ui
