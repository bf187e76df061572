// core/util: the one JSON reader (nesting limit, file and line in errors), bounded quotes, whole-string numbers.
#include "core/util/json.h"
#include "core/util/number.h"
#include "core/util/utf8.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace ts {
namespace {

std::string error_of(const std::string& text) {
    try {
        (void)parse_json(text, "lesson.json");
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(UtilJson, NestingPastTheLimitStopsWithTheFileNamed) {
    // 100k levels: without the limit a recursive reader (or dump()) of the tree overflows the stack.
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    EXPECT_EQ(error_of(deep), "lesson.json: JSON nested deeper than 64 levels");
    const std::string objects = [] {
        std::string s;
        for (int i = 0; i < 70; ++i) s += "{\"a\":";
        s += "1";
        for (int i = 0; i < 70; ++i) s += "}";
        return s;
    }();
    EXPECT_EQ(error_of(objects), "lesson.json: JSON nested deeper than 64 levels");
    const std::string ok = std::string(60, '[') + std::string(60, ']');
    EXPECT_NO_THROW((void)parse_json(ok, "ok.json"));
}

TEST(UtilJson, SyntaxErrorsNameLineAndColumnAndOverflowNamesTheFile) {
    EXPECT_EQ(error_of("{\n  \"a\": 1,\n  \"b\": oops\n}").rfind("lesson.json: line 3, column 8: not valid JSON", 0), 0u)
        << error_of("{\n  \"a\": 1,\n  \"b\": oops\n}");
    const std::string overflow = error_of("{\"order\": 1e999}");
    EXPECT_EQ(overflow.rfind("lesson.json: a number overflows", 0), 0u) << overflow;
    EXPECT_NE(error_of("\"\xff\xfe\"").find("not valid JSON"), std::string::npos);
}

TEST(UtilJson, QuotesAreBoundedAndShowBadBytes) {
    EXPECT_EQ(quote_value("abc"), "'abc'");
    const std::string big(10 << 20, 'x');
    const std::string q = quote_value(big, 8);
    EXPECT_EQ(q, "'xxxxxxxx\u2026' (10485760 bytes)");
    EXPECT_EQ(quote_value("a\xff\nb"), "'a\\xFF\\x0Ab'");
    // A multi-byte character is never cut in half: 猫 is 3 bytes, so 4 bytes keep one character.
    EXPECT_EQ(quote_value("猫猫", 4), "'猫\u2026' (6 bytes)");
    EXPECT_EQ(json_excerpt(nlohmann::json::array({1, 2, 3})), "[1,2,3]");
    EXPECT_LE(json_excerpt(nlohmann::json(std::string(1 << 20, 'y'))).size(), 100u);
}

TEST(UtilNumber, WholeStringFiniteAndBounded) {
    EXPECT_EQ(parse_int("42"), 42);
    EXPECT_EQ(parse_int("-50"), -50);
    EXPECT_FALSE(parse_int("1e3x"));
    EXPECT_FALSE(parse_int("1e3"));
    EXPECT_FALSE(parse_int(" 7"));
    EXPECT_FALSE(parse_int(""));
    EXPECT_FALSE(parse_int("99999999999999999999999"));
    EXPECT_DOUBLE_EQ(*parse_real("1e-4"), 1e-4);
    EXPECT_DOUBLE_EQ(*parse_real("-3"), -3.0);
    EXPECT_FALSE(parse_real("nan"));
    EXPECT_FALSE(parse_real("inf"));
    EXPECT_FALSE(parse_real("1e999"));
    EXPECT_FALSE(parse_real("0x10"));
    EXPECT_FALSE(parse_real("2.5 "));
    EXPECT_EQ(parse_int_in("16", 1, 16, "--beam"), 16);
    try {
        (void)parse_int_in("10000", 1, 16, "--beam");
        FAIL() << "no error";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "--beam: expected a whole number from 1 to 16, got '10000'");
    }
    EXPECT_THROW((void)parse_real_in("-0.5", 0, 1, "--p"), std::invalid_argument);
    EXPECT_DOUBLE_EQ(parse_real_in("0.5", 0, 1, "--p"), 0.5);
}

// A head "L.H" (--ablate in render and trace) and a size "WxH" (--size) (#29: sscanf's %d overflowed silently and
// took "1.2junk" in one of the two ablation parsers only).
TEST(UtilNumber, PairsAreTwoWholeNumbers) {
    EXPECT_EQ(parse_int_pair("3.1", '.'), (std::pair<int, int>{3, 1}));
    EXPECT_EQ(parse_int_pair(" 0.12 ", '.'), (std::pair<int, int>{0, 12}));
    EXPECT_EQ(parse_int_pair("1280x800", 'x'), (std::pair<int, int>{1280, 800}));
    for (const char* bad : {"3", "3.", ".1", "3.1.2", "3 .1", "3.1x", "a.b", "99999999999.1", "1.5e2", ""})
        EXPECT_FALSE(parse_int_pair(bad, '.')) << bad;
}

// The one UTF-8 codec (#29): well-formed sequences only (no overlongs, surrogates, > U+10FFFF, no sequence cut by
// the end), and Python's errors="replace" for whole strings (expected values printed by CPython 3.11).
TEST(UtilUtf8, StrictCharactersAndPythonsReplacement) {
    const std::string zh = "\xE4\xB8\xAD";  // 中
    EXPECT_EQ(utf8_char_at(zh, 0).cp, U'\u4E2D');
    EXPECT_EQ(utf8_char_at(zh, 0).len, 3u);
    EXPECT_EQ(utf8_char_at("\xF0\x9F\x90\xB1", 0).cp, U'\U0001F431');
    for (const std::string bad : {"\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE4\xB8", "\x80", "\xFF"}) {
        EXPECT_FALSE(utf8_char_at(bad, 0).valid()) << bad;
        EXPECT_EQ(utf8_char_len(bad, 0), 1u) << bad;
    }
    EXPECT_EQ(utf8_char_count("a\xFF\xE4\xB8\xAD" "b"), 4u);
    size_t bad = 0;
    EXPECT_TRUE(is_valid_utf8("a\xE4\xB8\xAD"));
    EXPECT_FALSE(is_valid_utf8("ab\xE4\xB8", &bad));
    EXPECT_EQ(bad, 2u);
    EXPECT_EQ(utf8_to_u32("\xE4\xB8"), std::u32string(U"\uFFFD"));
    EXPECT_EQ(utf8_to_u32("\xF0\x80"), std::u32string(U"\uFFFD\uFFFD"));
    EXPECT_EQ(utf8_to_u32("\xED\xA0\x80"), std::u32string(U"\uFFFD\uFFFD\uFFFD"));
    EXPECT_EQ(utf8_to_u32("a\xFF\xE4\xB8\xAD" "b"), std::u32string(U"a\uFFFD\u4E2Db"));
    std::string out;
    for (char32_t c : {U'a', U'\u00E9', U'\u4E2D', U'\U0001F431'}) append_utf8(out, c);
    EXPECT_EQ(out, "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x90\xB1");
    EXPECT_EQ(u32_to_utf8(utf8_to_u32(out)), out);
}

}  // namespace
}  // namespace ts
