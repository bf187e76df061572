// Whole-string, bounded number parsing (core/util/number.h).
#include "core/util/number.h"

#include "core/util/json.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace ts {

std::optional<int64_t> parse_int(std::string_view s) {
    int64_t v = 0;
    const char* end = s.data() + s.size();
    const auto r = std::from_chars(s.data(), end, v);
    if (s.empty() || r.ec != std::errc() || r.ptr != end) return std::nullopt;
    return v;
}

std::optional<double> parse_real(std::string_view s) {
    double v = 0;
    const char* end = s.data() + s.size();
    const auto r = std::from_chars(s.data(), end, v, std::chars_format::general);
    if (s.empty() || r.ec != std::errc() || r.ptr != end || !std::isfinite(v)) return std::nullopt;
    return v;
}

std::optional<std::pair<int, int>> parse_int_pair(std::string_view s, char sep) {
    const auto blank = [](char c) { return c == ' ' || c == '\t'; };
    while (!s.empty() && blank(s.front())) s.remove_prefix(1);
    while (!s.empty() && blank(s.back())) s.remove_suffix(1);
    const size_t at = s.find(sep);
    if (at == std::string_view::npos) return std::nullopt;
    const auto a = parse_int(s.substr(0, at)), b = parse_int(s.substr(at + 1));
    constexpr int64_t lo = std::numeric_limits<int>::min(), hi = std::numeric_limits<int>::max();
    if (!a || !b || *a < lo || *a > hi || *b < lo || *b > hi) return std::nullopt;
    return std::pair<int, int>{int(*a), int(*b)};
}

namespace {
std::string shown(double v) {
    std::ostringstream o;
    o << v;
    return o.str();
}
}  // namespace

int64_t parse_int_in(std::string_view s, int64_t lo, int64_t hi, const std::string& what) {
    const std::optional<int64_t> v = parse_int(s);
    if (!v || *v < lo || *v > hi)
        throw std::invalid_argument(what + ": expected a whole number from " + std::to_string(lo) + " to " +
                                    std::to_string(hi) + ", got " + quote_value(s));
    return *v;
}

double parse_real_in(std::string_view s, double lo, double hi, const std::string& what) {
    const std::optional<double> v = parse_real(s);
    if (!v || *v < lo || *v > hi)
        throw std::invalid_argument(what + ": expected a number from " + shown(lo) + " to " + shown(hi) + ", got " +
                                    quote_value(s));
    return *v;
}

}  // namespace ts
