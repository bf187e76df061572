// One way to read JSON text and to quote a bad value in a message, for every reader in core and the app: a nesting
// limit (so no reader that walks the tree recursively can overflow the stack), errors that name the file and line,
// and quotes that never echo megabytes into a one-line error.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace ts {

/// Deepest nesting any JSON file of ours (lessons, tokenizer.json pipelines, configs, state) needs is ~10 levels.
inline constexpr int kMaxJsonDepth = 64;

/// Parses JSON `text`. Throws std::runtime_error starting with `what` (a file name): "<what>: line L, column C: not valid JSON
/// (...)" for a syntax error, "<what>: a number overflows (...)" for 1e999, "<what>: JSON nested deeper than
/// `max_depth` levels". Parsing stops at the first level past `max_depth` (no deep tree is ever built).
/// Same semantics as nlohmann::json::parse otherwise (UTF-8 checked, duplicate keys: the last one wins).
[[nodiscard]] nlohmann::json parse_json(std::string_view text, const std::string& what,
                                        int max_depth = kMaxJsonDepth);

/// `s` quoted for a message: "'abc'", or the first `max_bytes` (cut on a UTF-8 character boundary) then
/// "…' (N bytes)" when longer. Control characters and invalid UTF-8 bytes are shown as \xNN.
[[nodiscard]] std::string quote_value(std::string_view s, size_t max_bytes = 60);

/// A JSON value for a message: its compact dump, truncated like quote_value (without the quotes around it).
[[nodiscard]] std::string json_excerpt(const nlohmann::json& v, size_t max_bytes = 60);

}  // namespace ts
