// Interface language (issue #16): the gettext lookup behind ts::tr() finds the build tree's catalog and answers in
// Chinese or English on request, on a machine with no zh_CN locale generated (LC_MESSAGES "C"); the language is
// remembered in the UI state; the fonts have a glyph for every character of the catalog.
#include "app/i18n/tr.h"
#include "app/session/state.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#define STB_TRUETYPE_IMPLEMENTATION
#define STBTT_STATIC
#include <stb_truetype.h>

#include <clocale>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

struct LanguageGuard {
    ~LanguageGuard() { ts::i18n::set_language("en"); }
};

TEST(I18n, ChineseOnAnswersTheCatalogEnglishOnAnswersTheMsgid) {
    LanguageGuard g;
    std::string why;
    ASSERT_TRUE(ts::i18n::set_language("zh", &why)) << why;
    EXPECT_EQ(ts::i18n::language(), "zh");
    EXPECT_STREQ(ts::tr("Tokens"), "词元");
    EXPECT_STREQ(ts::tr("Attention"), "注意力");
    ASSERT_TRUE(ts::i18n::set_language("en", &why)) << why;
    EXPECT_EQ(ts::i18n::language(), "en");
    const char* id = "Tokens";
    EXPECT_EQ(ts::tr(id), id);  // English: the msgid itself, same pointer
    // And back again: glibc must not answer from the lookups it cached for the other language.
    ASSERT_TRUE(ts::i18n::set_language("zh_CN.UTF-8", &why)) << why;
    EXPECT_STREQ(ts::tr("Tokens"), "词元");
}

TEST(I18n, UnknownMsgidAndEmptyStringPassThrough) {
    LanguageGuard g;
    ASSERT_TRUE(ts::i18n::set_language("zh"));
    const char* unknown = "no such msgid in any catalog";
    EXPECT_STREQ(ts::tr(unknown), unknown);
    EXPECT_STREQ(ts::tr(""), "");  // not the catalog header dgettext would answer for ""
    EXPECT_EQ(ts::tr(nullptr), nullptr);
}

TEST(I18n, WorksWhenTheProcessLocaleIsC) {
    // A fresh Debian container: LC_ALL=C, no zh_CN locale. glibc ignores LANGUAGE under "C"; tr.cpp moves
    // LC_MESSAGES to a UTF-8 locale that exists (C.UTF-8) and must still find the Chinese catalog.
    LanguageGuard g;
    setenv("LC_ALL", "C", 1);
    std::setlocale(LC_ALL, "C");
    ASSERT_STREQ(std::setlocale(LC_MESSAGES, nullptr), "C");
    std::string why;
    ASSERT_TRUE(ts::i18n::set_language("zh", &why)) << why;
    EXPECT_STREQ(ts::tr("Tokens"), "词元");
    // Numbers keep the "C" formatting: only LC_MESSAGES moved.
    EXPECT_STREQ(std::setlocale(LC_NUMERIC, nullptr), "C");
    unsetenv("LC_ALL");
}

TEST(I18n, UnknownLanguageIsRefusedWithAMessage) {
    LanguageGuard g;
    std::string why;
    EXPECT_FALSE(ts::i18n::set_language("klingon", &why));
    EXPECT_NE(why.find("klingon"), std::string::npos);
    EXPECT_EQ(ts::i18n::language(), "en");
}

TEST(I18n, SystemLanguageFollowsTheLocaleVariables) {
    const char* vars[] = {"LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"};
    std::string saved[4];
    bool had[4];
    for (int i = 0; i < 4; ++i) {
        const char* v = std::getenv(vars[i]);
        had[i] = v != nullptr;
        if (v) saved[i] = v;
        unsetenv(vars[i]);
    }
    EXPECT_EQ(ts::i18n::system_language(), "en");
    setenv("LANG", "zh_CN.UTF-8", 1);
    EXPECT_EQ(ts::i18n::system_language(), "zh");
    setenv("LC_MESSAGES", "en_GB.UTF-8", 1);  // LC_MESSAGES wins over LANG
    EXPECT_EQ(ts::i18n::system_language(), "en");
    setenv("LC_ALL", "zh_TW.UTF-8", 1);       // LC_ALL wins over both
    EXPECT_EQ(ts::i18n::system_language(), "zh");
    for (int i = 0; i < 4; ++i) {
        if (had[i]) setenv(vars[i], saved[i].c_str(), 1);
        else unsetenv(vars[i]);
    }
}

TEST(I18n, CatalogTextHoldsTheTranslations) {
    const std::string t = ts::i18n::catalog_text("zh");
    EXPECT_NE(t.find("词元"), std::string::npos);
    EXPECT_NE(t.find("注意力"), std::string::npos);
    EXPECT_EQ(ts::i18n::catalog_text("en"), "");
}

}  // namespace

namespace {

TEST(I18n, LanguageIsRememberedInTheUiState) {
    ts::studio::UiState s;
    EXPECT_EQ(s.language, "");  // first start: from the system locale
    s.language = "zh";
    nlohmann::json j = s;
    ts::studio::UiState back;
    ts::studio::from_json(j, back);
    EXPECT_EQ(back.language, "zh");
    j["language"] = "fr";  // a hand-edited file: unknown languages fall back to the system locale
    ts::studio::UiState bad;
    ts::studio::from_json(j, bad);
    bad.clamp();
    EXPECT_EQ(bad.language, "");
}

}  // namespace

namespace {

std::vector<unsigned char> read_bytes(const char* path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<unsigned char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// The window's atlas merges DejaVu Sans with WenQuanYi Micro Hei and adds every character of the catalog
// (app/gfx/fonts.cpp); PNG exports add the characters of the figure text. Either font must have a glyph for every
// character a translation uses, or it would show as a box.
TEST(I18n, EveryCharacterOfTheCatalogHasAGlyph) {
    const char* kLatin = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
    const char* kCjk = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc";
    if (!std::filesystem::exists(kLatin) || !std::filesystem::exists(kCjk))
        GTEST_SKIP() << "fonts-dejavu-core / fonts-wqy-microhei not installed (bash .ci/deps.sh)";
    const std::vector<unsigned char> latin = read_bytes(kLatin), cjk = read_bytes(kCjk);
    stbtt_fontinfo fl, fc;
    ASSERT_TRUE(stbtt_InitFont(&fl, latin.data(), stbtt_GetFontOffsetForIndex(latin.data(), 0)));
    ASSERT_TRUE(stbtt_InitFont(&fc, cjk.data(), stbtt_GetFontOffsetForIndex(cjk.data(), 0)));
    const std::string text = ts::i18n::catalog_text("zh");
    ASSERT_FALSE(text.empty());
    size_t checked = 0, cjk_chars = 0;
    std::string missing;
    for (size_t i = 0; i < text.size();) {
        const unsigned char c0 = static_cast<unsigned char>(text[i]);
        const int n = c0 < 0x80 ? 1 : c0 < 0xE0 ? 2 : c0 < 0xF0 ? 3 : 4;
        unsigned cp = n == 1 ? c0 : n == 2 ? (c0 & 0x1F) : n == 3 ? (c0 & 0x0F) : (c0 & 0x07);
        for (int k = 1; k < n && i + size_t(k) < text.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + size_t(k)]) & 0x3F);
        const std::string ch = text.substr(i, size_t(n));
        i += size_t(n);
        if (cp < 0x20) continue;  // '\n'
        ++checked;
        if (cp >= 0x2E80) ++cjk_chars;
        if (stbtt_FindGlyphIndex(&fl, int(cp)) == 0 && stbtt_FindGlyphIndex(&fc, int(cp)) == 0 &&
            missing.find(ch) == std::string::npos)
            missing += ch + " ";
    }
    EXPECT_GT(cjk_chars, 1000u);
    EXPECT_EQ(missing, "") << "characters of po/zh_CN.po without a glyph in DejaVu Sans or WenQuanYi Micro Hei ("
                           << checked << " checked)";
}

}  // namespace
