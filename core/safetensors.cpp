// safetensors and model-folder IO. Reading mmaps the file and checks every offset before touching bytes;
// F16/BF16 are widened to float at load (the compute core is float32 throughout). Writing is F32, atomic.
#include "core/safetensors.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ts {

namespace {

constexpr uint64_t kMaxHeaderBytes = 100ull << 20;  // the format's own limit is 100 MB
constexpr int kMaxJsonDepth = 16;

[[noreturn]] void fail(const std::string& what, const std::string& msg) {
    throw std::runtime_error(what + ": " + msg);
}

float f16_to_f32(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t mant = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else {  // subnormal: value = mant * 2^-24
            const float v = float(mant) * 5.9604644775390625e-8f;
            std::memcpy(&bits, &v, 4);
            bits |= sign;
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 112u) << 23) | (mant << 13);
    }
    float out;
    std::memcpy(&out, &bits, 4);
    return out;
}

float bf16_to_f32(uint16_t b) {
    const uint32_t bits = uint32_t(b) << 16;
    float out;
    std::memcpy(&out, &bits, 4);
    return out;
}

size_t dtype_size(const std::string& dtype) {
    if (dtype == "F32") return 4;
    if (dtype == "F16" || dtype == "BF16") return 2;
    return 0;
}

/// RAII read-only mapping of a whole file.
class MappedFile {
public:
    explicit MappedFile(const std::filesystem::path& path) {
        m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (m_fd < 0) fail(path.string(), std::string("cannot open: ") + std::strerror(errno));
        struct stat st {};
        if (::fstat(m_fd, &st) != 0) fail(path.string(), std::string("cannot stat: ") + std::strerror(errno));
        if (!S_ISREG(st.st_mode)) fail(path.string(), "not a regular file");
        m_size = size_t(st.st_size);
        if (m_size > 0) {
            void* p = ::mmap(nullptr, m_size, PROT_READ, MAP_PRIVATE, m_fd, 0);
            if (p == MAP_FAILED) fail(path.string(), std::string("mmap failed: ") + std::strerror(errno));
            m_data = static_cast<const uint8_t*>(p);
        }
    }
    ~MappedFile() {
        if (m_data) ::munmap(const_cast<uint8_t*>(m_data), m_size);
        if (m_fd >= 0) ::close(m_fd);
    }
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    [[nodiscard]] const uint8_t* data() const { return m_data; }
    [[nodiscard]] size_t size() const { return m_size; }

private:
    int m_fd = -1;
    const uint8_t* m_data = nullptr;
    size_t m_size = 0;
};

/// Parses JSON text, rejecting nesting deeper than kMaxJsonDepth and invalid UTF-8 with a clear message.
nlohmann::json parse_json_limited(const char* begin, const char* end, const std::string& what) {
    try {
        return nlohmann::json::parse(begin, end, [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
            if (depth > kMaxJsonDepth)
                throw std::runtime_error(what + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                                         " levels");
            return true;
        });
    } catch (const nlohmann::json::exception& e) {
        fail(what, std::string("invalid JSON: ") + e.what());
    }
}

void write_file_atomic(const std::filesystem::path& path, const std::string& bytes) {
    const auto tmp = path.string() + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw std::runtime_error(path.string() + ": cannot write (" + std::strerror(errno) + ")");
        out.write(bytes.data(), std::streamsize(bytes.size()));
        out.flush();
        if (!out) {
            std::filesystem::remove(tmp);
            throw std::runtime_error(path.string() + ": write failed (disk full?)");
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp);
        throw std::runtime_error(path.string() + ": cannot rename temp file: " + ec.message());
    }
}

}  // namespace

namespace {

/// Shared by both parse_safetensors overloads. `released(begin, end)` is told each decoded tensor's source bytes.
WeightMap parse_impl(const uint8_t* bytes, size_t size, const std::string& what, const SafetensorsReadOptions& opt,
                     std::map<std::string, std::string>* metadata,
                     const std::function<void(const uint8_t*, const uint8_t*)>& released) {
    if (size < 8) fail(what, "file is " + std::to_string(size) + " bytes, too short for the 8-byte header length");
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[i];
    if (header_len > kMaxHeaderBytes) fail(what, "header length " + std::to_string(header_len) + " exceeds 100 MB");
    if (header_len > size - 8)
        fail(what, "header length " + std::to_string(header_len) + " runs past the end of the file (" +
                       std::to_string(size) + " bytes)");
    const char* hbegin = reinterpret_cast<const char*>(bytes + 8);
    const nlohmann::json header = parse_json_limited(hbegin, hbegin + header_len, what);
    if (!header.is_object()) fail(what, "header is not a JSON object");

    const uint8_t* buffer = bytes + 8 + header_len;
    const uint64_t buffer_size = size - 8 - header_len;

    struct Entry {
        uint64_t begin, end;
        std::string name, dtype;
        std::vector<int64_t> shape;
        bool skip;
    };
    std::vector<Entry> entries;
    uint64_t total = 0;
    for (const auto& [name, info] : header.items()) {
        if (name == "__metadata__") {
            if (!info.is_object()) fail(what, "__metadata__ is not an object");
            if (metadata)
                for (const auto& [k, v] : info.items())
                    if (v.is_string()) (*metadata)[k] = v.get<std::string>();
            continue;
        }
        const std::string where = "tensor '" + name + "'";
        const bool skip = opt.skip && opt.skip(name);
        if (!info.is_object()) fail(what, where + " entry is not an object");
        if (!info.contains("dtype") || !info["dtype"].is_string()) fail(what, where + " has no string dtype");
        if (!info.contains("shape") || !info["shape"].is_array()) fail(what, where + " has no shape array");
        if (!info.contains("data_offsets") || !info["data_offsets"].is_array() || info["data_offsets"].size() != 2)
            fail(what, where + " has no [begin, end] data_offsets");
        const std::string dtype = info["dtype"].get<std::string>();
        const size_t esize = dtype_size(dtype);
        if (esize == 0 && !skip)
            fail(what, where + " has unsupported dtype " + dtype + " (supported: F32, F16, BF16)");
        std::vector<int64_t> shape;
        uint64_t numel = 1;
        for (const auto& d : info["shape"]) {
            if (!d.is_number_unsigned()) fail(what, where + " has a non-integer or negative dimension");
            const uint64_t v = d.get<uint64_t>();
            if (v > (1ull << 40) || (v && numel > (1ull << 40) / v)) fail(what, where + " shape is absurdly large");
            numel *= v;
            shape.push_back(int64_t(v));
        }
        const auto& offs = info["data_offsets"];
        if (!offs[0].is_number_unsigned() || !offs[1].is_number_unsigned())
            fail(what, where + " data_offsets must be non-negative integers");
        const uint64_t b = offs[0].get<uint64_t>(), e = offs[1].get<uint64_t>();
        if (b > e) fail(what, where + " data_offsets begin > end");
        if (e > buffer_size)
            fail(what, where + " data ends at byte " + std::to_string(e) + " but the data buffer has " +
                           std::to_string(buffer_size) + " bytes (truncated file?)");
        if (!skip && e - b != numel * esize)
            fail(what, where + " shape " + Tensor(shape).shape_str() + " of " + dtype + " needs " +
                           std::to_string(numel * esize) + " bytes but data_offsets span " + std::to_string(e - b));
        if (!skip) total += e - b;
        entries.push_back({b, e, name, dtype, std::move(shape), skip});
    }
    std::vector<const Entry*> by_offset;
    for (const Entry& en : entries) by_offset.push_back(&en);
    std::sort(by_offset.begin(), by_offset.end(), [](const Entry* a, const Entry* b) { return a->begin < b->begin; });
    for (size_t i = 1; i < by_offset.size(); ++i)
        if (by_offset[i]->begin < by_offset[i - 1]->end)
            fail(what, "tensors '" + by_offset[i - 1]->name + "' and '" + by_offset[i]->name +
                           "' overlap in the data buffer");

    WeightMap out;
    uint64_t done = 0;
    for (Entry& en : entries) {
        if (en.skip) continue;
        Tensor t;
        const uint64_t numel = uint64_t(Tensor::count(en.shape));
        t.shape = std::move(en.shape);
        t.data.resize(numel);
        const uint8_t* src = buffer + en.begin;
        if (en.dtype == "F32") {
            std::memcpy(t.data.data(), src, numel * 4);
        } else {
            const bool bf = en.dtype == "BF16";
            for (uint64_t i = 0; i < numel; ++i) {
                uint16_t h;
                std::memcpy(&h, src + 2 * i, 2);
                t.data[i] = bf ? bf16_to_f32(h) : f16_to_f32(h);
            }
        }
        out.emplace(en.name, std::move(t));
        if (released) released(buffer + en.begin, buffer + en.end);
        done += en.end - en.begin;
        if (opt.progress) opt.progress(done, total);
    }
    return out;
}

}  // namespace

WeightMap parse_safetensors(const uint8_t* bytes, size_t size, const std::string& what,
                            std::map<std::string, std::string>* metadata) {
    return parse_impl(bytes, size, what, {}, metadata, {});
}

WeightMap parse_safetensors(const uint8_t* bytes, size_t size, const std::string& what,
                            const SafetensorsReadOptions& options, std::map<std::string, std::string>* metadata) {
    return parse_impl(bytes, size, what, options, metadata, {});
}

WeightMap load_safetensors(const std::filesystem::path& path, std::map<std::string, std::string>* metadata) {
    return load_safetensors(path, SafetensorsReadOptions{}, metadata);
}

WeightMap load_safetensors(const std::filesystem::path& path, const SafetensorsReadOptions& options,
                           std::map<std::string, std::string>* metadata) {
    MappedFile f(path);
    // Drop the pages of each decoded tensor from this mapping (they stay in the page cache), so a big checkpoint
    // is not resident twice (mapped source + decoded floats) while it loads.
    const auto page = uintptr_t(::sysconf(_SC_PAGESIZE));
    auto release = [&](const uint8_t* b, const uint8_t* e) {
        const uintptr_t lo = (uintptr_t(b) + page - 1) / page * page, hi = uintptr_t(e) / page * page;
        if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
    };
    return parse_impl(f.data(), f.size(), path.string(), options, metadata, release);
}

void save_safetensors(const std::filesystem::path& path, const WeightMap& tensors,
                      const std::map<std::string, std::string>& metadata) {
    nlohmann::json header = nlohmann::json::object();
    if (!metadata.empty()) header["__metadata__"] = metadata;
    uint64_t offset = 0;
    for (const auto& [name, t] : tensors) {  // WeightMap is ordered by name
        const uint64_t n = uint64_t(t.numel()) * 4;
        header[name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + n}}};
        offset += n;
    }
    std::string h = header.dump();
    while ((8 + h.size()) % 8) h.push_back(' ');  // align the buffer to 8 bytes, as the reference writer does
    std::string bytes;
    bytes.reserve(8 + h.size() + offset);
    const uint64_t hl = h.size();
    for (int i = 0; i < 8; ++i) bytes.push_back(char((hl >> (8 * i)) & 0xff));
    bytes += h;
    for (const auto& [name, t] : tensors)
        bytes.append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * 4);
    write_file_atomic(path, bytes);
}

ModelConfig parse_config_json(std::string_view text, const std::string& what) {
    const nlohmann::json j = parse_json_limited(text.data(), text.data() + text.size(), what);
    try {
        ModelConfig c = j.get<ModelConfig>();
        c.validate();
        return c;
    } catch (const std::invalid_argument& e) {
        fail(what, e.what());
    } catch (const nlohmann::json::exception& e) {
        fail(what, e.what());
    }
}

ModelConfig load_config(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path.string(), std::string("cannot open: ") + std::strerror(errno));
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_config_json(ss.str(), path.string());
}

void save_config(const std::filesystem::path& path, const ModelConfig& c) {
    write_file_atomic(path, nlohmann::json(c).dump(2) + "\n");
}

std::shared_ptr<const Model> load_model_dir(const std::filesystem::path& dir) {
    if (!std::filesystem::is_directory(dir)) fail(dir.string(), "model folder does not exist");
    const auto cfg_path = dir / "config.json";
    const auto st_path = dir / "model.safetensors";
    if (!std::filesystem::exists(cfg_path)) fail(dir.string(), "no config.json in model folder");
    if (!std::filesystem::exists(st_path)) fail(dir.string(), "no model.safetensors in model folder");
    ModelConfig c = load_config(cfg_path);
    WeightMap w = load_safetensors(st_path);
    try {
        return std::make_shared<const Model>(std::move(c), std::move(w));
    } catch (const std::invalid_argument& e) {
        fail(st_path.string(), e.what());
    }
}

void save_model_dir(const std::filesystem::path& dir, const Model& m) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) fail(dir.string(), "cannot create folder: " + ec.message());
    save_config(dir / "config.json", m.config());
    save_safetensors(dir / "model.safetensors", m.weights(), {{"format", "pt"}});
}

}  // namespace ts
