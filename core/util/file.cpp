// Atomic whole-file writes and read-only file mappings (see core/util/file.h).
#include "core/util/file.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

namespace ts {

MappedFile::MappedFile(const std::filesystem::path& path) {
    const auto fail = [&](const std::string& msg) { throw std::runtime_error(path.string() + ": " + msg); };
    m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (m_fd < 0) fail(std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(m_fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        const std::string why = S_ISREG(st.st_mode) ? std::string("cannot stat: ") + std::strerror(errno)
                                                    : std::string("not a regular file");
        ::close(m_fd);
        m_fd = -1;
        fail(why);
    }
    m_size = size_t(st.st_size);
    if (m_size > 0) {
        void* p = ::mmap(nullptr, m_size, PROT_READ, MAP_PRIVATE, m_fd, 0);
        if (p == MAP_FAILED) {
            const std::string why = std::string("mmap failed: ") + std::strerror(errno);
            ::close(m_fd);
            m_fd = -1;
            fail(why);
        }
        m_data = static_cast<const uint8_t*>(p);
    }
}

void MappedFile::release(uint64_t offset, uint64_t bytes) const {
    if (!m_data || offset >= m_size) return;
    const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
    const uint64_t end = std::min<uint64_t>(m_size, offset + std::min<uint64_t>(bytes, m_size - offset));
    const uint64_t b = (offset + page - 1) / page * page, e = end / page * page;
    if (e > b) ::madvise(const_cast<uint8_t*>(m_data) + b, size_t(e - b), MADV_DONTNEED);
}

MappedFile::~MappedFile() {
    if (m_data) ::munmap(const_cast<uint8_t*>(m_data), m_size);
    if (m_fd >= 0) ::close(m_fd);
}

}  // namespace ts
