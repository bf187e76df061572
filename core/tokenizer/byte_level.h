// Byte-level helpers shared by the BPE tokenizer: GPT-2's byte <-> printable-unicode mapping (how vocab.json and
// tokenizer.json spell raw bytes, e.g. ' ' -> "Ġ") and a UTF-8 walker that treats each invalid byte as one character.
#pragma once

#include "core/util/utf8.h"

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

// utf8_char_len, utf8_char_count and append_utf8: core/util/utf8.h (included above).

}  // namespace ts
