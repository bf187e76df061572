// Characters beyond the Basic Multilingual Plane (emoji, rare CJK of the supplementary planes) in a Dear ImGui
// built with 16-bit ImWchar (Debian's 1.86): ImGui decodes every 4-byte UTF-8 sequence to U+FFFD, so "I ❤️ 🐱" was
// shown, typed and saved as "I ❤️ �". The window shows each such character as a stand-in from the Private Use
// Area (U+E000–U+F8FF), one per distinct character, and maps it back wherever text leaves ImGui: the text boxes,
// the clipboard, the characters typed. The font atlas draws each stand-in with the character's own glyph from an
// emoji-capable font (fonts.cpp). Real Private Use characters in a text get stand-ins too, so the map is one to
// one. The text a model, a file or an export sees is always the real text.
//
// The map is process-wide and only grows (6,400 stand-ins; past that a character shows as U+FFFD and is kept in
// the real text wherever the text was not edited through the window). UI thread only. No ImGui in here: unit-tested with the GL-free code (ts_figures).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ts::gfx {

/// True for the code points the window shows through a stand-in: above U+FFFF, or in U+E000–U+F8FF.
[[nodiscard]] constexpr bool needs_stand_in(char32_t c) { return c > 0xFFFF || (c >= 0xE000 && c <= 0xF8FF); }

/// The stand-in of code point c (allocated on first use), U+FFFD once all are taken; c itself when it needs none.
[[nodiscard]] char32_t stand_in(char32_t c);

/// `text` (UTF-8) as ImGui should get it: every character needing a stand-in replaced by it. Invalid UTF-8 is
/// passed through unchanged. Returns a copy of `text` when nothing changes (the common case, one scan).
[[nodiscard]] std::string shown(std::string_view text);
/// The inverse of shown(): stand-ins back to the characters they stand for; everything else unchanged.
[[nodiscard]] std::string typed(std::string_view shown_text);

/// Every stand-in allocated so far, (stand-in, code point), in allocation order.
[[nodiscard]] std::vector<std::pair<char32_t, char32_t>> stand_ins();

/// A character typed on the keyboard that needs a stand-in: ImGui 1.86 drops Private Use characters that come as
/// key input, so the stand-in is inserted by the active text box's callback instead (App::text_box, which takes
/// them with take_typed()).
void queue_typed(char32_t c);
/// The stand-ins queued since the last call, UTF-8 ("" when none); clears the queue.
[[nodiscard]] std::string take_typed();
/// Forgets queued stand-ins no text box took (called at the end of every frame: with no box active, typing does
/// nothing, as for any other character).
void clear_typed();

}  // namespace ts::gfx
