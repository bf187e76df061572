// Soft wrapping for a multi-line text box: Debian's Dear ImGui 1.86 InputTextMultiline draws each '\n'-separated
// line on one row, so a long sentence ran out of sight to the right. The box edits a display copy in which
// "soft" '\n' are inserted where lines wrap; they are removed again to recover the user's text, which never
// contains them. GL-free (the line breaker is passed in), so it is unit-tested.
#pragma once

#include "core/util/utf8.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace ts::ui {

/// Where a visual line that starts at byte `begin` of `line` (no '\n' inside) must end: a byte offset in
/// (begin, line.size()]. ImGui's ImFont::CalcWordWrapPositionA in the window; a fixed width in tests.
using LineBreaker = std::function<size_t(std::string_view line, size_t begin)>;

struct Wrapped {
    std::string display;        ///< the text with soft '\n' inserted
    std::vector<size_t> soft;   ///< byte offsets in `display` of the soft '\n', ascending
};

/// Inserts a soft '\n' wherever `brk` ends a visual line (after any spaces at the break, so lines never start
/// with the space that separated two words). Hard '\n' of `text` are kept as they are.
[[nodiscard]] inline Wrapped soft_wrap(std::string_view text, const LineBreaker& brk) {
    Wrapped w;
    w.display.reserve(text.size() + text.size() / 16);
    size_t start = 0;
    while (start <= text.size()) {
        const size_t nl = text.find('\n', start);
        const std::string_view line = text.substr(start, (nl == std::string_view::npos ? text.size() : nl) - start);
        size_t b = 0;
        while (b < line.size()) {
            size_t e = std::clamp(brk(line, b), b, line.size());
            if (e == b) {  // no progress: keep at least one UTF-8 character on the line
                e = b + 1;
                while (e < line.size() && (static_cast<unsigned char>(line[e]) & 0xC0) == 0x80) ++e;
            }
            while (e < line.size() && line[e] == ' ') ++e;
            w.display.append(line.substr(b, e - b));
            if (e < line.size()) {
                w.soft.push_back(w.display.size());
                w.display.push_back('\n');
            }
            b = e;
        }
        if (nl == std::string_view::npos) break;
        w.display.push_back('\n');
        start = nl + 1;
    }
    return w;
}

using ts::is_cjk_breakable;  // core/util/utf8.h
/// CJK punctuation that must not start a line (，。、：；！？）」』》 and their kin): it stays with the character
/// before it.
[[nodiscard]] inline bool is_cjk_closing(char32_t c) {
    switch (c) {
        case 0x3001: case 0x3002: case 0xFF0C: case 0xFF0E: case 0xFF1A: case 0xFF1B: case 0xFF01: case 0xFF1F:
        case 0xFF09: case 0x300D: case 0x300F: case 0x300B: case 0x3011: case 0x201D: case 0x2019: case 0x3009:
            return true;
        default:
            return false;
    }
}

/// A LineBreaker for mixed Chinese and Latin text: breaks at spaces and between CJK characters (never before CJK
/// closing punctuation), keeping a line within `width` as measured by `text_width` (ImGui::CalcTextSize in the
/// window). A Latin word longer than the line is left to soft_wrap's one-character progress rule.
[[nodiscard]] inline LineBreaker cjk_line_breaker(std::function<float(std::string_view)> text_width, float width) {
    return [text_width = std::move(text_width), width](std::string_view line, size_t begin) -> size_t {
        auto decode = [&](size_t i, size_t* len) -> char32_t {  // core/util/utf8.h: an invalid byte is one
            const Utf8Char c = utf8_char_at(line, i);
            *len = c.len;
            return c.cp;
        };
        // A word wider than the whole line (a URL) breaks at the last character that fits.
        auto mid_word = [&]() {
            size_t fit = begin, k = begin;
            while (k < line.size()) {
                size_t len = 1;
                (void)decode(k, &len);
                if (k > begin && text_width(line.substr(begin, k + len - begin)) > width) break;
                k += len;
                fit = k;
            }
            return fit;
        };
        size_t best = begin;  // the last allowed break that fits
        size_t i = begin;
        char32_t prev = 0;
        while (i < line.size()) {
            size_t len = 1;
            const char32_t c = decode(i, &len);
            // A break is allowed before i after a space, or between two characters one of which is CJK.
            const bool allowed = i > begin && !is_cjk_closing(c) &&
                                 (prev == U' ' || (c != U' ' && (is_cjk_breakable(c) || is_cjk_breakable(prev))));
            if (allowed) {
                if (text_width(line.substr(begin, i - begin)) > width) return best > begin ? best : mid_word();
                best = i;
            }
            prev = c;
            i += len;
        }
        if (text_width(line.substr(begin)) <= width) return line.size();
        return best > begin ? best : mid_word();
    };
}

/// Real-text byte offset of display offset `pos` (soft breaks before it do not count).
[[nodiscard]] inline size_t soft_to_real(const std::vector<size_t>& soft, size_t pos) {
    return pos - size_t(std::lower_bound(soft.begin(), soft.end(), pos) - soft.begin());
}

/// Display offset of real offset `real`: a position at a wrap point lands after the soft break (start of the
/// next visual line), where typing continues.
[[nodiscard]] inline size_t real_to_soft(const std::vector<size_t>& soft, size_t real) {
    size_t pos = real;
    for (size_t k = 0; k < soft.size(); ++k) {
        if (soft[k] - k <= real) ++pos;
        else break;
    }
    return pos;
}

/// After the box edited `old_w.display` into `edited`: the user's real text. Soft breaks outside the edited span
/// survive (shifted); those inside it are gone. Deleting nothing but a soft break (Backspace at the start of a
/// wrapped line) deletes the character before it, as the user meant. Each of `positions` (display offsets in
/// `edited`: cursor, selection ends) is converted in place to an offset in the returned text.
[[nodiscard]] inline std::string soft_unwrap(const Wrapped& old_w, std::string_view edited,
                                             std::initializer_list<size_t*> positions = {}) {
    const std::string_view old = old_w.display;
    size_t p = 0;
    while (p < old.size() && p < edited.size() && old[p] == edited[p]) ++p;
    size_t s = 0;
    while (s < old.size() - p && s < edited.size() - p && old[old.size() - 1 - s] == edited[edited.size() - 1 - s]) ++s;
    const size_t old_end = old.size() - s, new_end = edited.size() - s;
    std::vector<size_t> soft;  // soft breaks still in `edited`
    for (size_t k : old_w.soft) {
        if (k < p) soft.push_back(k);
        else if (k >= old_end) soft.push_back(k - old.size() + edited.size());
    }
    bool only_soft_deleted = new_end == p && old_end > p;
    for (size_t i = p; i < old_end && only_soft_deleted; ++i)
        only_soft_deleted = std::binary_search(old_w.soft.begin(), old_w.soft.end(), i);
    std::string real;
    real.reserve(edited.size());
    for (size_t i = 0, k = 0; i < edited.size(); ++i) {
        if (k < soft.size() && soft[k] == i) { ++k; continue; }
        real.push_back(edited[i]);
    }
    for (size_t* q : positions) *q = soft_to_real(soft, std::min(*q, edited.size()));
    if (only_soft_deleted && p > 0) {  // delete the UTF-8 character before the removed break
        const size_t rp = soft_to_real(soft, p);
        size_t b = rp;
        do { --b; } while (b > 0 && (static_cast<unsigned char>(real[b]) & 0xC0) == 0x80);
        real.erase(b, rp - b);
        for (size_t* q : positions) *q = *q >= rp ? *q - (rp - b) : std::min(*q, b);
    }
    return real;
}

}  // namespace ts::ui
