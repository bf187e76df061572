// Byte-level helpers shared by the BPE tokenizer: GPT-2's byte <-> printable-unicode mapping (how vocab.json and
// tokenizer.json spell raw bytes, e.g. ' ' -> "Ġ") and a UTF-8 walker that treats each invalid byte as one character.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ts {

/// GPT-2's bytes_to_unicode(): printable Latin-1 bytes map to themselves, the other 68 bytes to U+0100.. in order.
/// Source: openai/gpt-2 src/encoder.py bytes_to_unicode().
[[nodiscard]] char32_t byte_to_unicode(unsigned char b);

/// Raw bytes -> their byte-level spelling in UTF-8 (e.g. " cat" -> "Ġcat").
[[nodiscard]] std::string bytes_to_byte_level(std::string_view bytes);

/// Byte-level spelling (UTF-8) -> raw bytes; std::nullopt when the string is not valid UTF-8 or contains a code
/// point outside the 256 mapped ones.
[[nodiscard]] std::optional<std::string> byte_level_to_bytes(std::string_view spelled);

/// Length in bytes (1..4) of the character starting at s[pos]: a well-formed UTF-8 sequence (no overlongs,
/// surrogates or code points > U+10FFFF) or, for anything else, 1 (an invalid byte counts as one character).
/// Precondition: pos < s.size().
[[nodiscard]] size_t utf8_char_len(std::string_view s, size_t pos);

/// Number of characters in s under the utf8_char_len() rule.
[[nodiscard]] size_t utf8_char_count(std::string_view s);

/// Appends the UTF-8 encoding of a code point (assumed valid) to out.
void append_utf8(std::string& out, char32_t cp);

}  // namespace ts
