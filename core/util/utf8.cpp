// The UTF-8 codec (see core/util/utf8.h).
#include "core/util/utf8.h"

#include <cstdint>

namespace ts {

namespace {
// Allowed range of the second byte after lead byte b (Unicode Table 3-7), and the sequence length; 0 = no lead.
struct Lead {
    int len = 0;
    uint8_t lo = 0x80, hi = 0xBF;
    char32_t bits = 0;
};
Lead lead_of(uint8_t b) {
    if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF, char32_t(b & 0x1F)};
    if (b >= 0xE0 && b <= 0xEF) return {3, uint8_t(b == 0xE0 ? 0xA0 : 0x80), uint8_t(b == 0xED ? 0x9F : 0xBF), char32_t(b & 0x0F)};
    if (b >= 0xF0 && b <= 0xF4) return {4, uint8_t(b == 0xF0 ? 0x90 : 0x80), uint8_t(b == 0xF4 ? 0x8F : 0xBF), char32_t(b & 0x07)};
    return {};
}
}  // namespace

Utf8Char utf8_char_at(std::string_view s, size_t pos) {
    const uint8_t b = uint8_t(s[pos]);
    if (b < 0x80) return {char32_t(b), 1};
    const Lead l = lead_of(b);
    if (l.len == 0 || pos + size_t(l.len) > s.size()) return {};
    char32_t cp = l.bits;
    for (int k = 1; k < l.len; ++k) {
        const uint8_t c = uint8_t(s[pos + size_t(k)]);
        if (k == 1 ? (c < l.lo || c > l.hi) : (c & 0xC0) != 0x80) return {};
        cp = (cp << 6) | (c & 0x3F);
    }
    return {cp, size_t(l.len)};
}

size_t utf8_char_len(std::string_view s, size_t pos) { return utf8_char_at(s, pos).len; }

size_t utf8_char_count(std::string_view s) {
    size_t n = 0;
    for (size_t i = 0; i < s.size(); i += utf8_char_len(s, i)) ++n;
    return n;
}

bool is_valid_utf8(std::string_view s, size_t* bad_offset) {
    for (size_t i = 0; i < s.size();) {
        const Utf8Char c = utf8_char_at(s, i);
        if (!c.valid()) {
            if (bad_offset) *bad_offset = i;
            return false;
        }
        i += c.len;
    }
    return true;
}

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

std::u32string utf8_to_u32(std::string_view s) {
    std::u32string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        const Utf8Char c = utf8_char_at(s, i);
        if (c.valid()) {
            out.push_back(c.cp);
            i += c.len;
            continue;
        }
        // One U+FFFD for the maximal subpart: the lead byte and the continuation bytes that could still have
        // completed a sequence (what Python's errors="replace" replaces at once); a stray byte alone.
        const Lead l = lead_of(uint8_t(s[i]));
        size_t k = i + 1;
        for (int got = 1; l.len > 0 && got < l.len && k < s.size(); ++got, ++k) {
            const uint8_t c2 = uint8_t(s[k]);
            if (got == 1 ? (c2 < l.lo || c2 > l.hi) : (c2 & 0xC0) != 0x80) break;
        }
        out.push_back(0xFFFD);
        i = k;
    }
    return out;
}

std::string u32_to_utf8(std::u32string_view s) {
    std::string out;
    out.reserve(s.size());
    for (const char32_t c : s) append_utf8(out, c);
    return out;
}

}  // namespace ts
