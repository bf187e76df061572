// The current interface language ("en" or "zh"), for content that carries its own translations (lesson files)
// rather than going through the gettext catalogs. The sidebar's language switch sets it; the default is English.
#pragma once

#include <string>

namespace ts {

namespace detail {
inline std::string& ui_language_storage() {
    static std::string lang = "en";
    return lang;
}
}  // namespace detail

/// "en" or "zh".
[[nodiscard]] inline const std::string& ui_language() { return detail::ui_language_storage(); }
/// Sets the interface language; anything but "zh" means English.
inline void set_ui_language(const std::string& lang) { detail::ui_language_storage() = lang == "zh" ? "zh" : "en"; }

}  // namespace ts
