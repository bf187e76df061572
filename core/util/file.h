// Writing a whole file so that a reader never sees half of it and a crash never leaves it truncated: one
// implementation for checkpoints, configs, exports, the window's settings, the trainer's log and token files. And a
// read-only mapping of a whole file (safetensors, GGUF).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string_view>

namespace ts {

/// Writes `bytes` to a temp file beside `path` (its name ends in ".tmp<pid>"), flushes it to disk (fsync), then
/// renames it over `path`; creates missing parent folders. On any failure the temp file is removed, `path` keeps
/// its old content, and std::runtime_error says "cannot write <path>: <reason>" (also when `path` is a folder).
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);
/// The same, with the content written by `write` into the open temp file as it goes (a file bigger than memory never
/// exists as one string). A short write is reported like write_file_atomic's; an exception from `write` removes the
/// temp file and propagates.
void write_file_atomic_with(const std::filesystem::path& path, const std::function<void(std::FILE*)>& write);


/// A whole file mapped read-only (mmap, MAP_PRIVATE) for as long as the object lives; an empty file maps to
/// data() == nullptr, size() == 0. Throws std::runtime_error "<path>: cannot open: <reason>" (also "not a regular
/// file", "cannot stat", "mmap failed").
class MappedFile {
public:
    explicit MappedFile(const std::filesystem::path& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    [[nodiscard]] const uint8_t* data() const { return m_data; }
    [[nodiscard]] size_t size() const { return m_size; }
    /// madvise(MADV_DONTNEED) on the whole pages inside [offset, offset + bytes): they leave the resident set and
    /// are read from the file again if touched. Out-of-range parts are ignored.
    void release(uint64_t offset, uint64_t bytes) const;

private:
    int m_fd = -1;
    const uint8_t* m_data = nullptr;
    size_t m_size = 0;
};

}  // namespace ts
