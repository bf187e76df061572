// Interface language lookup (see tr.h): glibc's libintl with our own catalogs.
//
// Why the locale dance: glibc's dgettext ignores LANGUAGE while LC_MESSAGES is the "C" locale, and a fresh Debian
// machine usually has no zh_CN locale generated, so setlocale(LC_MESSAGES, "zh_CN.UTF-8") would fail there. We
// therefore keep LC_MESSAGES on whatever UTF-8 locale exists (the user's, else the always-present C.UTF-8), pick the
// catalog with LANGUAGE=zh_CN, and bump _nl_msg_cat_cntr after each switch so glibc drops lookups it cached for the
// previous language. Only LC_MESSAGES is touched: number formatting (LC_NUMERIC) stays "C" for printf and files.
#include "app/i18n/tr.h"

#include <libintl.h>

#include <atomic>
#include <clocale>
#include <cstdarg>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <unistd.h>

extern "C" int _nl_msg_cat_cntr;  // glibc: generation counter of loaded catalogs; bumping it invalidates its caches

namespace ts {

namespace {
constexpr const char* kDomain = "transformer-studio";
std::atomic<bool> g_chinese{false};
std::mutex g_mutex;
std::string g_lang = "en";

std::string catalog_folder(const std::string& lang) { return lang == "zh" ? "zh_CN" : ""; }

bool has_catalog(const std::filesystem::path& dir) {
    std::error_code ec;
    return std::filesystem::exists(dir / "zh_CN" / "LC_MESSAGES" / (std::string(kDomain) + ".mo"), ec);
}

std::string exe_dir() {
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return "";
    buf[n] = '\0';
    return std::filesystem::path(buf).parent_path().string();
}

bool is_c_locale(const char* name) {
    return !name || std::strcmp(name, "C") == 0 || std::strcmp(name, "POSIX") == 0;
}

// LC_MESSAGES on a locale under which glibc honours LANGUAGE; false when none could be set.
bool ensure_messages_locale() {
    if (!is_c_locale(std::setlocale(LC_MESSAGES, nullptr))) return true;
    for (const char* name : {"", "C.UTF-8", "C.utf8", "en_US.UTF-8"}) {
        const char* got = std::setlocale(LC_MESSAGES, name);
        if (got && !is_c_locale(got)) return true;
    }
    return false;
}
}  // namespace

const char* tr(const char* msgid) {
    if (!msgid || !*msgid || !g_chinese.load(std::memory_order_acquire)) return msgid;
    return dgettext(kDomain, msgid);
}

std::string trf(const char* fmt, ...) {
    const char* f = tr(fmt);
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    const int n = std::vsnprintf(nullptr, 0, f, ap);
    va_end(ap);
    std::string out;
    if (n > 0) {
        out.resize(size_t(n) + 1);
        std::vsnprintf(out.data(), out.size(), f, ap2);
        out.resize(size_t(n));
    }
    va_end(ap2);
    return out;
}

namespace i18n {

const std::vector<std::string>& languages() {
    static const std::vector<std::string> l{"en", "zh"};
    return l;
}

std::string normalize_language(const std::string& lang) {
    if (lang == "en" || lang.rfind("en_", 0) == 0 || lang.rfind("en-", 0) == 0 || lang == "C" || lang == "POSIX" ||
        lang.rfind("C.", 0) == 0)
        return "en";
    if (lang == "zh" || lang.rfind("zh_", 0) == 0 || lang.rfind("zh-", 0) == 0 || lang.rfind("zh.", 0) == 0) return "zh";
    return "";
}

std::string system_language() {
    // glibc's precedence for messages: LANGUAGE (a colon list), LC_ALL, LC_MESSAGES, LANG; the first set decides.
    for (const char* var : {"LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"}) {
        const char* v = std::getenv(var);
        if (!v || !*v) continue;
        return std::strncmp(v, "zh", 2) == 0 ? "zh" : "en";
    }
    return "en";
}

std::string locale_dir() {
    std::vector<std::filesystem::path> candidates;
    if (const char* env = std::getenv("TS_LOCALE_DIR"); env && *env) candidates.emplace_back(env);
    if (const std::string d = exe_dir(); !d.empty()) {
        candidates.push_back(std::filesystem::path(d) / "locale");
        candidates.push_back(std::filesystem::path(d).parent_path() / "locale");  // tests/ below the build tree
        candidates.push_back(std::filesystem::path(d).parent_path() / "share" / "locale");  // an installed prefix
    }
#ifdef TS_LOCALE_BUILD_DIR
    candidates.emplace_back(TS_LOCALE_BUILD_DIR);
#endif
    for (const auto& c : candidates)
        if (has_catalog(c)) return c.string();
    return "";
}

bool set_language(const std::string& lang_in, std::string* why) {
    const std::string lang = normalize_language(lang_in);
    std::lock_guard<std::mutex> lock(g_mutex);
    auto fail = [&](const std::string& msg) {
        if (why) *why = msg;
        g_chinese.store(false, std::memory_order_release);
        g_lang = "en";
        return false;
    };
    if (lang.empty()) return fail("unknown interface language '" + lang_in + "' (expected en or zh)");
    if (lang == "en") {
        g_chinese.store(false, std::memory_order_release);
        g_lang = "en";
        return true;
    }
    const std::string dir = locale_dir();
    if (dir.empty())
        return fail("no Chinese catalog found (locale/zh_CN/LC_MESSAGES/" + std::string(kDomain) +
                    ".mo next to the executable; build it with msgfmt from the gettext package)");
    if (!ensure_messages_locale()) return fail("no UTF-8 locale available for messages (not even C.UTF-8)");
    bindtextdomain(kDomain, dir.c_str());
    bind_textdomain_codeset(kDomain, "UTF-8");
    setenv("LANGUAGE", catalog_folder(lang).c_str(), 1);
    ++_nl_msg_cat_cntr;
    // dgettext("") answers the catalog's header when the catalog was found and loaded.
    const char* header = dgettext(kDomain, "");
    if (!header || !*header) return fail("the Chinese catalog in " + dir + " could not be loaded");
    g_lang = lang;
    g_chinese.store(true, std::memory_order_release);
    return true;
}

std::string language() {
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_lang;
}

std::string catalog_text(const std::string& lang_in) {
    const std::string lang = normalize_language(lang_in);
    if (lang != "zh") return "";
    const std::string dir = locale_dir();
    if (dir.empty()) return "";
    std::ifstream f(std::filesystem::path(dir) / catalog_folder(lang) / "LC_MESSAGES" / (std::string(kDomain) + ".mo"),
                    std::ios::binary);
    const std::string mo((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    // GNU .mo: magic, revision, N, offset of the original-string table, offset of the translation table; each
    // table holds N (length, offset) pairs of uint32 in the file's byte order.
    auto u32 = [&](size_t at, bool swap) -> uint32_t {
        if (at + 4 > mo.size()) return 0;
        uint32_t v;
        std::memcpy(&v, mo.data() + at, 4);
        return swap ? __builtin_bswap32(v) : v;
    };
    if (mo.size() < 28) return "";
    const bool swap = u32(0, false) != 0x950412deu;
    if (u32(0, swap) != 0x950412deu) return "";
    const uint32_t n = u32(8, swap), trans = u32(16, swap);
    std::string out;
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t len = u32(trans + 8 * size_t(i), swap), off = u32(trans + 8 * size_t(i) + 4, swap);
        if (size_t(off) + len <= mo.size()) out.append(mo, off, len);
    }
    return out;
}

}  // namespace i18n
}  // namespace ts
