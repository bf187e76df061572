// Atomic whole-file writes (see core/util/file.h).
#include "core/util/file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include <unistd.h>

namespace ts {

void write_file_atomic_with(const std::filesystem::path& path, const std::function<void(std::FILE*)>& write) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (path.has_parent_path() && !fs::exists(path.parent_path(), ec)) {
        fs::create_directories(path.parent_path(), ec);
        if (ec) throw std::runtime_error("cannot write " + path.string() + ": cannot create its folder (" + ec.message() + ")");
    }
    if (fs::is_directory(path, ec)) throw std::runtime_error("cannot write " + path.string() + ": it is a folder");
    fs::path tmp = path;
    tmp += ".tmp" + std::to_string(::getpid());
    std::FILE* fp = std::fopen(tmp.c_str(), "wb");
    if (!fp) throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
    try {
        write(fp);
    } catch (...) {
        std::fclose(fp);
        fs::remove(tmp, ec);
        throw;
    }
    int err = std::ferror(fp) ? (errno ? errno : EIO) : 0;
    if (std::fflush(fp) != 0 && !err) err = errno;
    if (!err && ::fsync(::fileno(fp)) != 0 && errno != EINVAL && errno != EROFS) err = errno;
    if (std::fclose(fp) != 0 && !err) err = errno;
    if (err) {
        fs::remove(tmp, ec);
        throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(err));
    }
    fs::rename(tmp, path, ec);
    if (ec) {
        std::error_code ec2;
        fs::remove(tmp, ec2);
        throw std::runtime_error("cannot write " + path.string() + ": " + ec.message());
    }
}

void write_file_atomic(const std::filesystem::path& path, std::string_view bytes) {
    write_file_atomic_with(path, [&](std::FILE* fp) {
        if (!bytes.empty()) std::fwrite(bytes.data(), 1, bytes.size(), fp);
    });
}

}  // namespace ts
