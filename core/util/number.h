// One number parser for every option, file field and checkpoint value a user can hand the program: the whole
// string must be the number (no "1e3x", no leading blanks), within stated bounds, and the error quotes the value
// (truncated) and names where it came from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace ts {

/// A decimal integer (optional leading '-') that is the whole of `s`; nullopt otherwise or on overflow.
[[nodiscard]] std::optional<int64_t> parse_int(std::string_view s);
/// A finite decimal or scientific number ("0.5", "-3", "1e-4") that is the whole of `s`; nullopt otherwise
/// (also for "nan", "inf", hex and numbers beyond double's range).
[[nodiscard]] std::optional<double> parse_real(std::string_view s);

/// Two whole numbers joined by `sep`, e.g. a head "3.1" (sep '.') or a size "1280x800" (sep 'x'), each within int's
/// range and parsed like parse_int; blanks around the whole are allowed ("  3.1 "), none inside. nullopt otherwise.
[[nodiscard]] std::optional<std::pair<int, int>> parse_int_pair(std::string_view s, char sep);

/// parse_int within [lo, hi]. Throws std::invalid_argument "<what>: expected a whole number from lo to hi, got
/// '<s>'" (the value quoted and truncated).
[[nodiscard]] int64_t parse_int_in(std::string_view s, int64_t lo, int64_t hi, const std::string& what);
/// parse_real within [lo, hi]. Throws std::invalid_argument like parse_int_in.
[[nodiscard]] double parse_real_in(std::string_view s, double lo, double hi, const std::string& what);

}  // namespace ts
