// Fonts: DejaVu Sans merged with WenQuanYi Micro Hei for CJK, glyph ranges = Latin, Greek, math symbols, the
// common simplified Chinese set, plus every character of the current text (so any typed character renders).
#pragma once

#include <string>

namespace ts::gfx {

struct FontStatus {
    bool latin = false, cjk = false;
    std::string notice;  ///< shown in the status line when a font file is missing
};

/// (Re)builds the ImGui font atlas at `pixel_size` covering `text`. Call before the first NewFrame, or between
/// frames followed by re-creating the backend's font texture. cjk_common = false adds only the CJK characters of
/// `text` (figure exports: a much smaller atlas that builds in milliseconds at large sizes).
FontStatus build_fonts(float pixel_size, const std::string& text, bool cjk_common = true);

/// True when some character of `text` is not in the current atlas but the CJK font could supply it.
[[nodiscard]] bool fonts_need_rebuild(const std::string& text);

/// True when a stand-in for a character beyond 16-bit ImWchar (astral.h) was allocated after the atlas was built:
/// rebuild it so the stand-in shows its character's glyph (from fonts-symbola) instead of nothing.
[[nodiscard]] bool stand_in_glyphs_missing();

/// Asks for every character of `text` (model output, token labels, examples, figure text) to be in the atlas: the
/// ones missing that the CJK font has are remembered until the App rebuilds the atlas before the next frame, so a
/// string shows "�" for at most the frame it first appears in. UI thread only; cheap when nothing is missing.
void request_glyphs(const std::string& text);
/// The characters requested since the last call, UTF-8 ("" when none); clears the request.
[[nodiscard]] std::string take_glyph_requests();

}  // namespace ts::gfx
