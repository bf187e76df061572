// Stand-ins for characters a 16-bit ImWchar cannot hold (see astral.h).
#include "app/ui/astral.h"

#include <unordered_map>

namespace ts::ui {

namespace {
constexpr char32_t kFirstStandIn = 0xE000, kLastStandIn = 0xF8FF, kReplacement = 0xFFFD;

struct StandInMap {
    std::unordered_map<char32_t, char32_t> of;    // code point -> stand-in
    std::unordered_map<char32_t, char32_t> back;  // stand-in -> code point
    std::vector<std::pair<char32_t, char32_t>> order;
};
StandInMap& map() {
    static StandInMap m;
    return m;
}
std::u32string& typed_queue() {
    static std::u32string q;
    return q;
}

// The code point of the well-formed UTF-8 sequence at s[i] and its length, or length 0 when it is not one.
std::pair<char32_t, size_t> decode_at(std::string_view s, size_t i) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
    const auto cont = [&](size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
    const unsigned char c0 = b(0);
    if (c0 >= 0xE0 && c0 <= 0xEF && cont(1) && cont(2)) {
        const char32_t c = char32_t(c0 & 0x0F) << 12 | char32_t(b(1) & 0x3F) << 6 | char32_t(b(2) & 0x3F);
        if (c >= 0x800 && !(c >= 0xD800 && c <= 0xDFFF)) return {c, 3};
    } else if (c0 >= 0xF0 && c0 <= 0xF4 && cont(1) && cont(2) && cont(3)) {
        const char32_t c = char32_t(c0 & 0x07) << 18 | char32_t(b(1) & 0x3F) << 12 | char32_t(b(2) & 0x3F) << 6 |
                           char32_t(b(3) & 0x3F);
        if (c >= 0x10000 && c <= 0x10FFFF) return {c, 4};
    }
    return {0, 0};
}

void append_utf8(std::string& out, char32_t c) {
    if (c < 0x80) {
        out += char(c);
    } else if (c < 0x800) {
        out += char(0xC0 | (c >> 6));
        out += char(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        out += char(0xE0 | (c >> 12));
        out += char(0x80 | ((c >> 6) & 0x3F));
        out += char(0x80 | (c & 0x3F));
    } else {
        out += char(0xF0 | (c >> 18));
        out += char(0x80 | ((c >> 12) & 0x3F));
        out += char(0x80 | ((c >> 6) & 0x3F));
        out += char(0x80 | (c & 0x3F));
    }
}

// Rewrites each character for which `f` returns a different code point; a copy when there is none.
template <typename F>
std::string rewrite(std::string_view text, F&& f) {
    std::string out;
    size_t copied = 0;  // text[0, copied) is in out (only once something changed)
    bool changed = false;
    for (size_t i = 0; i < text.size();) {
        const unsigned char c0 = static_cast<unsigned char>(text[i]);
        if (c0 < 0xEE) {  // below U+E000 in a lead byte: nothing to rewrite (also ASCII, continuation bytes)
            ++i;
            continue;
        }
        const auto [c, len] = decode_at(text, i);
        if (len == 0) {
            ++i;
            continue;
        }
        const char32_t r = f(c);
        if (r != c) {
            if (!changed) out.reserve(text.size());
            changed = true;
            out.append(text.substr(copied, i - copied));
            append_utf8(out, r);
            copied = i + len;
        }
        i += len;
    }
    if (!changed) return std::string(text);
    out.append(text.substr(copied));
    return out;
}
}  // namespace

char32_t stand_in(char32_t c) {
    if (!needs_stand_in(c)) return c;
    StandInMap& m = map();
    if (auto it = m.of.find(c); it != m.of.end()) return it->second;
    const char32_t next = kFirstStandIn + char32_t(m.order.size());
    if (next > kLastStandIn) return kReplacement;
    m.of.emplace(c, next);
    m.back.emplace(next, c);
    m.order.emplace_back(next, c);
    return next;
}

std::string shown(std::string_view text) { return rewrite(text, [](char32_t c) { return stand_in(c); }); }

std::string typed(std::string_view shown_text) {
    const StandInMap& m = map();
    return rewrite(shown_text, [&](char32_t c) {
        const auto it = m.back.find(c);
        return it == m.back.end() ? c : it->second;
    });
}

std::vector<std::pair<char32_t, char32_t>> stand_ins() { return map().order; }

void queue_typed(char32_t c) { typed_queue() += stand_in(c); }

std::string take_typed() {
    std::string bytes;
    for (char32_t c : typed_queue()) append_utf8(bytes, c);
    typed_queue().clear();
    return bytes;
}

void clear_typed() { typed_queue().clear(); }

}  // namespace ts::ui
