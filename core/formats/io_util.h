// Internal to core/: JSON parsing with limits and atomic file writes, shared by core/formats/safetensors.cpp and
// core/formats/model_dir.cpp.
#pragma once

#include "core/util/file.h"

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <string>

namespace ts::detail {

/// Parses JSON text, rejecting nesting deeper than 16 levels and invalid UTF-8 with a clear message, and with
/// `unique_tensor_keys` a top-level key that appears twice (the safetensors format disallows duplicates; a JSON
/// parser would silently keep the last one). Throws std::runtime_error prefixed with `what`.
[[nodiscard]] nlohmann::json parse_json_limited(const char* begin, const char* end, const std::string& what,
                                                bool unique_tensor_keys = false);

/// core/util/file.h: temp file, fsync, rename.
using ts::write_file_atomic;

}  // namespace ts::detail
