// GPT-2 byte <-> unicode mapping and a lenient UTF-8 walker (see byte_level.h).
#include "core/tokenizer/byte_level.h"

#include <array>

namespace ts {
namespace {

struct ByteTables {
    std::array<char32_t, 256> to_unicode{};
    std::array<int16_t, 512> from_unicode{};  // code point (< 512) -> byte, -1 when unmapped
    ByteTables() {
        from_unicode.fill(-1);
        int n = 0;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            to_unicode[b] = printable ? char32_t(b) : char32_t(256 + n++);
            from_unicode[to_unicode[b]] = int16_t(b);
        }
    }
};

const ByteTables& tables() {
    static const ByteTables t;
    return t;
}

}  // namespace

char32_t byte_to_unicode(unsigned char b) { return tables().to_unicode[b]; }

void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    }
}

std::string bytes_to_byte_level(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char b : bytes) append_utf8(out, tables().to_unicode[b]);
    return out;
}

size_t utf8_char_len(std::string_view s, size_t pos) {
    const auto at = [&](size_t i) -> unsigned { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0u; };
    const auto cont = [&](size_t i) { return (at(i) & 0xC0u) == 0x80u && i < s.size(); };
    const unsigned b0 = at(pos);
    if (b0 < 0x80) return 1;
    if (b0 >= 0xC2 && b0 <= 0xDF) return cont(pos + 1) ? 2 : 1;
    if (b0 >= 0xE0 && b0 <= 0xEF) {
        const unsigned b1 = at(pos + 1);
        const bool ok1 = b0 == 0xE0 ? (b1 >= 0xA0 && b1 <= 0xBF) : b0 == 0xED ? (b1 >= 0x80 && b1 <= 0x9F)
                                                                              : cont(pos + 1);
        return ok1 && pos + 1 < s.size() && cont(pos + 2) ? 3 : 1;
    }
    if (b0 >= 0xF0 && b0 <= 0xF4) {
        const unsigned b1 = at(pos + 1);
        const bool ok1 = b0 == 0xF0 ? (b1 >= 0x90 && b1 <= 0xBF) : b0 == 0xF4 ? (b1 >= 0x80 && b1 <= 0x8F)
                                                                              : cont(pos + 1);
        return ok1 && pos + 1 < s.size() && cont(pos + 2) && cont(pos + 3) ? 4 : 1;
    }
    return 1;
}

size_t utf8_char_count(std::string_view s) {
    size_t n = 0;
    for (size_t i = 0; i < s.size(); i += utf8_char_len(s, i)) ++n;
    return n;
}

std::optional<std::string> byte_level_to_bytes(std::string_view spelled) {
    std::string out;
    out.reserve(spelled.size());
    size_t i = 0;
    while (i < spelled.size()) {
        const size_t len = utf8_char_len(spelled, i);
        const unsigned char b0 = static_cast<unsigned char>(spelled[i]);
        char32_t cp = 0;
        if (len == 1) {
            if (b0 >= 0x80) return std::nullopt;  // invalid UTF-8
            cp = b0;
        } else if (len == 2) {
            cp = ((b0 & 0x1Fu) << 6) | (static_cast<unsigned char>(spelled[i + 1]) & 0x3Fu);
        } else {
            return std::nullopt;  // all mapped code points are < U+0200
        }
        if (cp >= 512 || tables().from_unicode[cp] < 0) return std::nullopt;
        out += char(tables().from_unicode[cp]);
        i += len;
    }
    return out;
}

}  // namespace ts
