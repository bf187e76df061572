// The project's one UTF-8 codec: characters of a byte string (well-formed sequences per RFC 3629 / Unicode's
// Table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF; any other byte counts as one invalid
// character), code points to bytes, and whole-string conversions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ts {

/// The code point utf8_char_at gives an invalid byte (not a Unicode scalar value, so it never collides).
inline constexpr char32_t kInvalidUtf8 = 0xFFFFFFFF;

struct Utf8Char {
    char32_t cp = kInvalidUtf8;  ///< the code point, or kInvalidUtf8
    size_t len = 1;              ///< bytes it takes, 1..4 (an invalid byte: 1)
    [[nodiscard]] bool valid() const { return cp != kInvalidUtf8; }
};

/// The character starting at s[pos]: a well-formed sequence that ends within s gives its code point and length,
/// anything else {kInvalidUtf8, 1}. Precondition: pos < s.size().
[[nodiscard]] Utf8Char utf8_char_at(std::string_view s, size_t pos);

/// Length in bytes (1..4) of the character at s[pos] under utf8_char_at's rule. Precondition: pos < s.size().
[[nodiscard]] size_t utf8_char_len(std::string_view s, size_t pos);

/// Number of characters in s under utf8_char_at's rule (an invalid byte is one character).
[[nodiscard]] size_t utf8_char_count(std::string_view s);

/// True when s is well-formed UTF-8; else false with *bad_offset (if given) = the first invalid byte.
[[nodiscard]] bool is_valid_utf8(std::string_view s, size_t* bad_offset = nullptr);

/// Appends the UTF-8 encoding of code point cp (assumed a scalar value, <= U+10FFFF) to out.
void append_utf8(std::string& out, char32_t cp);

/// UTF-8 -> code points; each maximal invalid subpart becomes one U+FFFD (Python's bytes.decode(errors="replace")).
[[nodiscard]] std::u32string utf8_to_u32(std::string_view s);
/// Code points -> UTF-8 (append_utf8 of each).
[[nodiscard]] std::string u32_to_utf8(std::u32string_view s);

/// A code point that Chinese text may break before or after (CJK ideographs, kana, Hangul, CJK and full-width
/// punctuation): such text has no spaces, so a breaker that only breaks at spaces moves a whole CJK sentence to
/// the next line (Dear ImGui 1.86's TextWrapped does).
[[nodiscard]] inline bool is_cjk_breakable(char32_t c) {
    return (c >= 0x2E80 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7AF) || (c >= 0xF900 && c <= 0xFAFF) ||
        (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFFEF) || (c >= 0x20000 && c <= 0x3FFFF);
}

}  // namespace ts
