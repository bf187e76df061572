// Writing a whole file so that a reader never sees half of it and a crash never leaves it truncated: one
// implementation for checkpoints, configs, exports, the window's settings, the trainer's log and token files.
#pragma once

#include <filesystem>
#include <string_view>

namespace ts {

/// Writes `bytes` to a temp file beside `path` (its name ends in ".tmp<pid>"), flushes it to disk (fsync), then
/// renames it over `path`; creates missing parent folders. On any failure the temp file is removed, `path` keeps
/// its old content, and std::runtime_error says "cannot write <path>: <reason>" (also when `path` is a folder).
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

}  // namespace ts
