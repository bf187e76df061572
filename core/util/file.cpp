// Atomic whole-file writes (see core/util/file.h).
#include "core/util/file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include <unistd.h>

namespace ts {

void write_file_atomic(const std::filesystem::path& path, std::string_view bytes) {
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
    const size_t n = bytes.empty() ? 0 : std::fwrite(bytes.data(), 1, bytes.size(), fp);
    int err = n == bytes.size() ? 0 : errno;
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

}  // namespace ts
