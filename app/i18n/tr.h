// Interface language: every user-visible string goes through ts::tr() so it can be looked up in the gettext
// catalog (po/*.po, compiled by CMake into <build>/locale/<lang>/LC_MESSAGES/transformer-studio.mo). The lookup
// is glibc's libintl (dgettext); app/i18n/tr.cpp picks the language and finds the catalog.
#pragma once

#include <string>
#include <vector>

namespace ts {

/// Translated form of an English UI string (msgid) in the current interface language; the msgid itself when no
/// translation exists or English is on. The returned pointer stays valid for the life of the program.
[[nodiscard]] const char* tr(const char* msgid);

/// printf into a std::string with a translated format: trf("layer %d of %d", l, n). The catalog's msgstr keeps the
/// msgid's conversions (msgfmt --check enforces it; "%2$d ... %1$d" reorders them where the sentence needs it).
[[nodiscard]] std::string trf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

namespace i18n {

/// Interface languages: "en" (the msgids) and "zh" (Simplified Chinese, po/zh_CN.po).
[[nodiscard]] const std::vector<std::string>& languages();

/// Switches the interface language ("en" | "zh"; "zh_CN", "zh-CN", "zh_CN.UTF-8" also mean "zh"). Safe to call at
/// any time from the UI thread (later tr() calls answer in the new language). Returns false, and leaves English
/// on, when `lang` is unknown or its catalog (.mo) cannot be found; `why` (optional) then says what is missing.
bool set_language(const std::string& lang, std::string* why = nullptr);

/// The current interface language ("en" until set_language succeeds).
[[nodiscard]] std::string language();

/// "zh" when the system locale asks for Chinese (LANGUAGE, LC_ALL, LC_MESSAGES or LANG starting with "zh", in
/// glibc's order of precedence), else "en".
[[nodiscard]] std::string system_language();

/// "en" | "zh" for an accepted spelling of a language ("zh_CN.UTF-8" -> "zh"); "" when unknown.
[[nodiscard]] std::string normalize_language(const std::string& lang);

/// Every translated string of `lang`'s catalog, concatenated (the font atlas adds their glyphs). "" for "en" or
/// when the catalog is missing.
[[nodiscard]] std::string catalog_text(const std::string& lang);

/// Folder holding <lang>/LC_MESSAGES/transformer-studio.mo: $TS_LOCALE_DIR, else <exe dir>/locale, else the build
/// tree's locale folder this binary was built with. "" when none has a catalog.
[[nodiscard]] std::string locale_dir();

}  // namespace i18n
}  // namespace ts

/// Marks a string literal for extraction (xgettext --keyword=TS_N_) without translating it where it appears,
/// e.g. in static tables; translate it later with ts::tr().
#define TS_N_(s) s
