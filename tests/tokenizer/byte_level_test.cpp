// GPT-2 byte <-> unicode mapping and the lenient UTF-8 walker.
#include "core/tokenizer/byte_level.h"

#include <gtest/gtest.h>

#include <set>

namespace ts {
namespace {

TEST(ByteLevel, MappingIsBijectiveAndMatchesGpt2) {
    std::set<char32_t> seen;
    for (int b = 0; b < 256; ++b) seen.insert(byte_to_unicode(static_cast<unsigned char>(b)));
    EXPECT_EQ(seen.size(), 256u);
    EXPECT_EQ(byte_to_unicode(' '), U'\u0120');   // "Ġ"
    EXPECT_EQ(byte_to_unicode('\n'), U'\u010A');  // "Ċ"
    EXPECT_EQ(byte_to_unicode('A'), U'A');
    EXPECT_EQ(byte_to_unicode(0x00), U'\u0100');
    EXPECT_EQ(byte_to_unicode(0xAD), U'\u0143');  // soft hyphen is the last of the remapped bytes
    EXPECT_EQ(bytes_to_byte_level(" cat"), "\xC4\xA0" "cat");
}

TEST(ByteLevel, RoundTripsEveryByte) {
    std::string all;
    for (int b = 0; b < 256; ++b) all += char(b);
    const auto back = byte_level_to_bytes(bytes_to_byte_level(all));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, all);
    EXPECT_FALSE(byte_level_to_bytes(" ").has_value());         // a raw space is not in the alphabet
    EXPECT_FALSE(byte_level_to_bytes("\xE4\xB8\x96").has_value());  // CJK character is not either
    EXPECT_FALSE(byte_level_to_bytes("\xC4").has_value());          // truncated UTF-8
}

TEST(ByteLevel, Utf8CharLenCountsInvalidBytesAsOneChar) {
    EXPECT_EQ(utf8_char_count("abc"), 3u);
    EXPECT_EQ(utf8_char_count("\xE4\xB8\x96\xE7\x95\x8C"), 2u);  // 世界
    EXPECT_EQ(utf8_char_count("\xF0\x9F\x8E\x89"), 1u);          // 🎉
    EXPECT_EQ(utf8_char_count("\xFF\xFE"), 2u);
    EXPECT_EQ(utf8_char_count("\xE4\xB8"), 2u);                  // truncated 3-byte sequence: two invalid bytes
    EXPECT_EQ(utf8_char_count("\xC0\xAF"), 2u);                  // overlong '/'
    EXPECT_EQ(utf8_char_count("\xED\xA0\x80"), 3u);              // UTF-16 surrogate
    EXPECT_EQ(utf8_char_count("\xF4\x90\x80\x80"), 4u);          // > U+10FFFF
    EXPECT_EQ(utf8_char_len("e\xCC\x81", 1), 2u);                // combining acute accent
}

}  // namespace
}  // namespace ts
