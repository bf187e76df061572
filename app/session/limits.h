// The bounds of the knobs a user can set both in the window and on the command line: one table, so `render
// --beam 10000` is refused with the same limit the window's control offers, and a hand-edited state file is
// clamped into the same ranges (UiState::clamp).
#pragma once

namespace ts::studio {

inline constexpr int kMaxBeam = 16;                ///< beam width of translation decoding (1 = greedy)
inline constexpr int kMaxGenerateTokens = 512;     ///< tokens one Generate / sampling run adds
inline constexpr int kMaxExportPixels = 16384;     ///< export width and height, pixels
inline constexpr float kMinExportScale = 0.25f, kMaxExportScale = 8.0f;  ///< text and line size of exports
inline constexpr float kMinTemperature = 0.05f, kMaxTemperature = 10.0f; ///< softmax / sampling temperature
inline constexpr int kMaxRepeat = 1000;            ///< `render --repeat` (benchmarking a view)

}  // namespace ts::studio
