// libFuzzer target for the app's saved state and `render --session` files: bytes -> parse_state_text. Broken text
// must give std::runtime_error; a state that loads must be clamped into the window's ranges (a ui_scale ImGui can
// lay out, a beam the window offers) and survive a save/load round trip unchanged.
#include "app/session/state.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    ts::studio::UiState st;
    std::string warning;
    try {
        st = ts::studio::parse_state_text(text, "fuzz_state.json", &warning);
    } catch (const std::runtime_error&) {
        return 0;
    }
    if (st.ui_scale != 0.0f && !(st.ui_scale >= ts::studio::kMinUiScale && st.ui_scale <= ts::studio::kMaxUiScale))
        __builtin_trap();
    if (st.decode_beam < 1 || st.decode_beam > 16 || st.layer < 0 || st.head < 0) __builtin_trap();
    const nlohmann::json saved = st;
    ts::studio::UiState again;
    ts::studio::from_json(saved, again);
    if (nlohmann::json(again) != saved) __builtin_trap();
    return 0;
}
