// The current interface language ("en" or "zh") for content that carries its own translations (lesson files)
// rather than going through the gettext catalogs: whatever the sidebar's switch (i18n::set_language) chose.
#pragma once

#include "app/i18n/tr.h"

#include <string>

namespace ts {

/// "en" or "zh": the language the interface is shown in now.
[[nodiscard]] inline std::string ui_language() { return i18n::language(); }

}  // namespace ts
