// Stand-ins for characters a 16-bit ImWchar cannot hold (see astral.h).
#include "app/gfx/astral.h"

#include "core/util/utf8.h"

#include <unordered_map>

namespace ts::gfx {

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
        const Utf8Char ch = utf8_char_at(text, i);  // core/util/utf8.h
        if (!ch.valid()) {
            ++i;
            continue;
        }
        const char32_t c = ch.cp;
        const size_t len = ch.len;
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

}  // namespace ts::gfx
