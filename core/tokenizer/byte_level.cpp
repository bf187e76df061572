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

std::string bytes_to_byte_level(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char b : bytes) append_utf8(out, tables().to_unicode[b]);
    return out;
}


std::optional<std::string> byte_level_to_bytes(std::string_view spelled) {
    std::string out;
    out.reserve(spelled.size());
    size_t i = 0;
    while (i < spelled.size()) {
        const Utf8Char ch = utf8_char_at(spelled, i);  // core/util/utf8.h
        if (!ch.valid()) return std::nullopt;           // invalid UTF-8
        const char32_t cp = ch.cp;                      // all mapped code points are < U+0200
        const size_t len = ch.len;
        if (cp >= 512 || tables().from_unicode[cp] < 0) return std::nullopt;
        out += char(tables().from_unicode[cp]);
        i += len;
    }
    return out;
}

}  // namespace ts
