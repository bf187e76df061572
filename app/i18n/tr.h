// Interface language: every user-visible string goes through ts::tr() so it can be looked up in the gettext
// catalog (po/*.po). This header is the stable API; the lookup behind it lives with the catalogs.
#pragma once

namespace ts {

/// Translated form of an English UI string (msgid) in the current interface language; the msgid itself when no
/// translation exists. The returned pointer stays valid for the life of the program.
[[nodiscard]] inline const char* tr(const char* msgid) { return msgid; }

}  // namespace ts

/// Marks a string literal for extraction (xgettext --keyword=TS_N_) without translating it where it appears,
/// e.g. in static tables; translate it later with ts::tr().
#define TS_N_(s) s
