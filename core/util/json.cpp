// JSON text with a nesting limit and bounded quotes in messages (core/util/json.h).
#include "core/util/json.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace ts {

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when the bytes there are not one.
size_t utf8_sequence_length(std::string_view s, size_t i) {
    const auto b = static_cast<unsigned char>(s[i]);
    size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    for (size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
    return n;
}

std::string excerpt(std::string_view s, size_t max_bytes) {
    std::string out;
    size_t i = 0;
    while (i < s.size() && i < max_bytes) {
        const size_t n = utf8_sequence_length(s, i);
        const auto b = static_cast<unsigned char>(s[i]);
        if (n == 0 || (n == 1 && (b < 0x20 || b == 0x7F))) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02X", unsigned(b));
            out += hex;
            ++i;
        } else {
            if (i + n > max_bytes) break;
            out.append(s.substr(i, n));
            i += n;
        }
    }
    if (i < s.size()) out += "\u2026";
    return out;
}

}  // namespace

nlohmann::json parse_json(std::string_view text, const std::string& what, int max_depth) {
    try {
        return nlohmann::json::parse(text.begin(), text.end(),
                                     [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
                                         if (depth > max_depth)
                                             throw std::runtime_error(what + ": JSON nested deeper than " +
                                                                      std::to_string(max_depth) + " levels");
                                         return true;
                                     });
    } catch (const nlohmann::json::parse_error& e) {
        // e.byte is 1-based: the line a person can find in an editor.
        const size_t upto = std::min(text.size(), e.byte > 0 ? size_t(e.byte - 1) : size_t(0));
        size_t line = 1, column = 1;
        for (size_t i = 0; i < upto; ++i) {
            if (text[i] == '\n') { ++line; column = 1; } else { ++column; }
        }
        std::string msg = e.what();
        if (const size_t at = msg.find("syntax error"); at != std::string::npos) msg = msg.substr(at);
        throw std::runtime_error(what + ": line " + std::to_string(line) + ", column " + std::to_string(column) +
                                 ": not valid JSON (" + msg + ")");
    } catch (const nlohmann::json::out_of_range& e) {
        throw std::runtime_error(what + ": a number overflows (" + std::string(e.what()) + ")");
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(what + ": invalid JSON (" + std::string(e.what()) + ")");
    }
}

std::string quote_value(std::string_view s, size_t max_bytes) {
    std::string out = "'" + excerpt(s, max_bytes) + "'";
    if (s.size() > max_bytes) out += " (" + std::to_string(s.size()) + " bytes)";
    return out;
}

std::string json_excerpt(const nlohmann::json& v, size_t max_bytes) {
    const std::string d = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string out = excerpt(d, max_bytes);
    if (d.size() > max_bytes) out += " (" + std::to_string(d.size()) + " bytes)";
    return out;
}

}  // namespace ts
