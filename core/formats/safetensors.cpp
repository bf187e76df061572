// safetensors IO. Reading mmaps the file and checks the whole header (every entry, and that the spans tile the
// buffer) before touching tensor bytes; F16/BF16 are widened to float at load (the compute core is float32
// throughout) while NaN/±Inf are counted. Writing is F32, atomic. Model folders: core/formats/model_dir.cpp.
#include "core/formats/safetensors.h"

#include "core/model/half.h"
#include "core/formats/io_util.h"
#include "core/model/nonfinite.h"
#include "core/util/file.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ts {

using detail::parse_json_limited;
using detail::write_file_atomic;

namespace {

constexpr uint64_t kMaxHeaderBytes = 100ull << 20;  // the format's own limit is 100 MB

[[noreturn]] void fail(const std::string& what, const std::string& msg) {
    throw std::runtime_error(what + ": " + msg);
}

/// The dtypes the format defines (safetensors 0.6 `Dtype`), with their element sizes in bits.
struct DtypeBits {
    std::string_view name;
    int bits;
};
constexpr DtypeBits kDtypes[] = {{"BOOL", 8},   {"U8", 8},       {"I8", 8},       {"F8_E5M2", 8}, {"F8_E4M3", 8},
                                 {"F8_E8M0", 8}, {"I16", 16},     {"U16", 16},     {"F16", 16},    {"BF16", 16},
                                 {"I32", 32},   {"U32", 32},     {"F32", 32},     {"I64", 64},    {"U64", 64},
                                 {"F64", 64},   {"C64", 64},     {"F4", 4},       {"F6_E2M3", 6}, {"F6_E3M2", 6}};

}  // namespace

// --- header ------------------------------------------------------------------------------------------------

namespace {

std::string shape_str(const std::vector<uint64_t>& s) {
    std::string r = "(";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + ")";
}

std::string span_str(uint64_t b, uint64_t e) {
    std::string r = "[";  // appended, not "[" + to_string(b): GCC 12 warns falsely (-Wrestrict) on the latter
    r += std::to_string(b);
    r += ", ";
    r += std::to_string(e);
    return r + ")";
}

/// A parsed and checked header: its tensors sorted by offset, and where the data buffer is.
struct Header {
    std::vector<SafetensorsTensorInfo> tensors;
    const uint8_t* buffer = nullptr;
    uint64_t buffer_size = 0;
};

/// Checks one header entry (everything but its relation to the other entries).
SafetensorsTensorInfo check_entry(const std::string& name, const nlohmann::json& info, uint64_t buffer_size,
                                  const std::string& what) {
    const std::string where = "tensor '" + name + "'";
    if (!info.is_object()) fail(what, where + " entry is not an object");
    if (!info.contains("dtype") || !info["dtype"].is_string()) fail(what, where + " has no string dtype");
    if (!info.contains("shape") || !info["shape"].is_array()) fail(what, where + " has no shape array");
    if (!info.contains("data_offsets") || !info["data_offsets"].is_array() || info["data_offsets"].size() != 2)
        fail(what, where + " has no [begin, end] data_offsets");
    SafetensorsTensorInfo t;
    t.name = name;
    t.dtype = info["dtype"].get<std::string>();
    const int bits = safetensors_dtype_bits(t.dtype);
    if (bits == 0) {
        std::string known;
        for (const auto& [n, b] : kDtypes) known += (known.empty() ? "" : " ") + std::string(n);
        fail(what, where + " has unknown dtype '" + t.dtype + "' (the format defines " + known + ")");
    }
    std::vector<uint64_t> dims;
    for (const auto& d : info["shape"]) {
        if (!d.is_number_unsigned()) fail(what, where + " has a non-integer or negative dimension " + d.dump());
        dims.push_back(d.get<uint64_t>());
    }
    const auto& offs = info["data_offsets"];
    if (!offs[0].is_number_unsigned() || !offs[1].is_number_unsigned())
        fail(what, where + " data_offsets must be non-negative integers");
    t.begin = offs[0].get<uint64_t>();
    t.end = offs[1].get<uint64_t>();
    if (t.begin > t.end) fail(what, where + " data_offsets begin > end: " + span_str(t.begin, t.end));
    if (t.end > buffer_size)
        fail(what, where + " data ends at byte " + std::to_string(t.end) + " but the data buffer has " +
                       std::to_string(buffer_size) + " bytes (truncated file?)");
    // numel * bits / 8 without overflow: the reference reader refuses what does not fit 64 bits, and so do we.
    uint64_t n_bits = uint64_t(bits);
    for (const uint64_t d : dims)
        if (__builtin_mul_overflow(n_bits, d, &n_bits))
            fail(what, where + " shape " + shape_str(dims) + " of " + t.dtype +
                           " has more bytes than 64 bits can count (data_offsets span " +
                           std::to_string(t.end - t.begin) + ")");
    if (n_bits % 8 != 0)
        fail(what, where + " shape " + shape_str(dims) + " of " + t.dtype + " is " + std::to_string(n_bits) +
                       " bits, not a whole number of bytes");
    if (n_bits / 8 != t.end - t.begin)
        fail(what, where + " shape " + shape_str(dims) + " of " + t.dtype + " needs " + std::to_string(n_bits / 8) +
                       " bytes but data_offsets " + span_str(t.begin, t.end) + " span " +
                       std::to_string(t.end - t.begin));
    // Every dimension now fits int64: a non-zero product is at most the buffer size; with a zero among them, a
    // huge one would still be absurd.
    for (const uint64_t d : dims) {
        if (d > uint64_t(INT64_MAX)) fail(what, where + " has dimension " + std::to_string(d) + " beyond 2^63 - 1");
        t.shape.push_back(int64_t(d));
    }
    return t;
}

Header parse_header(const uint8_t* bytes, size_t size, const std::string& what,
                    std::map<std::string, std::string>* metadata) {
    if (size < 8) fail(what, "file is " + std::to_string(size) + " bytes, too short for the 8-byte header length");
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[i];
    if (header_len > kMaxHeaderBytes) fail(what, "header length " + std::to_string(header_len) + " exceeds 100 MB");
    if (header_len > size - 8)
        fail(what, "header length " + std::to_string(header_len) + " runs past the end of the file (" +
                       std::to_string(size) + " bytes)");
    const char* hbegin = reinterpret_cast<const char*>(bytes + 8);
    const nlohmann::json header = parse_json_limited(hbegin, hbegin + header_len, what, true);
    if (!header.is_object()) fail(what, "header is not a JSON object");

    Header h;
    h.buffer = bytes + 8 + header_len;
    h.buffer_size = size - 8 - header_len;
    for (const auto& [name, info] : header.items()) {
        if (name == "__metadata__") {
            if (!info.is_object()) fail(what, "__metadata__ is not an object");
            if (metadata)
                for (const auto& [k, v] : info.items())
                    if (v.is_string()) (*metadata)[k] = v.get<std::string>();
            continue;
        }
        h.tensors.push_back(check_entry(name, info, h.buffer_size, what));
    }
    // The spans must tile the buffer: "the byte buffer needs to be entirely indexed, and cannot contain holes"
    // (format README; the reference reader refuses gaps, overlaps and trailing bytes). Unindexed bytes are where a
    // polyglot file would hide its second payload.
    std::sort(h.tensors.begin(), h.tensors.end(), [](const auto& a, const auto& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    uint64_t covered = 0;
    for (size_t i = 0; i < h.tensors.size(); ++i) {
        const SafetensorsTensorInfo& t = h.tensors[i];
        if (t.begin < covered)
            fail(what, "tensors '" + h.tensors[i - 1].name + "' " + span_str(h.tensors[i - 1].begin, covered) +
                           " and '" + t.name + "' " + span_str(t.begin, t.end) + " overlap in the data buffer");
        if (t.begin > covered)
            fail(what, "bytes " + span_str(covered, t.begin) + " of the data buffer, before tensor '" + t.name +
                           "', belong to no tensor (the format allows no holes)");
        covered = t.end;
    }
    if (covered != h.buffer_size)
        fail(what, "the data buffer has " + std::to_string(h.buffer_size) + " bytes but the tensors cover " +
                       std::to_string(covered) + " (the format allows no trailing bytes)");
    return h;
}

// --- decoding ---------------------------------------------------------------------------------------------------

/// Shared by both parse_safetensors overloads. `released(begin, end)` is told each decoded tensor's source bytes.
WeightMap parse_impl(const uint8_t* bytes, size_t size, const std::string& what, const SafetensorsReadOptions& opt,
                     std::map<std::string, std::string>* metadata,
                     const std::function<void(const uint8_t*, const uint8_t*)>& released) {
    const Header h = parse_header(bytes, size, what, metadata);
    // Every tensor to decode must have a dtype we widen to float; checked for all before decoding any.
    uint64_t total = 0;
    std::vector<bool> skip(h.tensors.size());
    for (size_t i = 0; i < h.tensors.size(); ++i) {
        const SafetensorsTensorInfo& t = h.tensors[i];
        skip[i] = opt.skip && opt.skip(t.name);
        if (skip[i]) continue;
        if (t.dtype != "F32" && t.dtype != "F16" && t.dtype != "BF16")
            fail(what, "tensor '" + t.name + "' has unsupported dtype " + t.dtype +
                           " (weights are read from F32, F16 or BF16)");
        total += t.end - t.begin;
    }

    WeightMap out;
    uint64_t done = 0;
    // Decoded in blocks small enough to stay in L1/L2, so the non-finite scan costs no second trip to memory.
    constexpr int64_t kBlock = 4096;
    for (size_t i = 0; i < h.tensors.size(); ++i) {
        if (skip[i]) continue;
        const SafetensorsTensorInfo& en = h.tensors[i];
        const int64_t esize = en.dtype == "F32" ? 4 : 2;
        const int64_t numel = int64_t((en.end - en.begin) / uint64_t(esize));
        Tensor t;
        t.shape = en.shape;
        const uint8_t* src = h.buffer + en.begin;
        const bool bf = en.dtype == "BF16";
        const bool keep_half = esize == 2 && opt.keep_half && opt.keep_half(en.name);
        if (keep_half) {
            t.storage = bf ? Storage::BF16 : Storage::F16;
            t.half.resize(size_t(numel));
        } else {
            t.data.resize(size_t(numel));
        }
        NonfiniteCount nonfinite;
        std::vector<float> widened(keep_half ? size_t(kBlock) : 0);
        for (int64_t b = 0; b < numel; b += kBlock) {
            const int64_t n = std::min(kBlock, numel - b);
            float* dst = keep_half ? widened.data() : t.data.data() + b;
            if (esize == 4) {
                std::memcpy(dst, src + 4 * b, size_t(n) * 4);
            } else if (keep_half) {
                std::memcpy(t.half.data() + b, src + 2 * b, size_t(n) * 2);
                if (opt.nonfinite) widen_half(t.half.data() + b, t.storage, dst, size_t(n));
            } else {
                for (int64_t k = 0; k < n; ++k) {
                    uint16_t v;
                    std::memcpy(&v, src + 2 * (b + k), 2);
                    dst[k] = bf ? bf16_to_f32(v) : f16_to_f32(v);
                }
            }
            if (opt.nonfinite) nonfinite.scan(dst, n, b);
        }
        if (nonfinite.total() > 0) opt.nonfinite->push_back({en.name, en.shape, nonfinite});
        out.emplace(en.name, std::move(t));
        if (released) released(h.buffer + en.begin, h.buffer + en.end);
        done += en.end - en.begin;
        if (opt.progress) opt.progress(done, total);
    }
    return out;
}

}  // namespace

int safetensors_dtype_bits(std::string_view dtype) {
    for (const auto& [name, bits] : kDtypes)
        if (dtype == name) return bits;
    return 0;
}

std::vector<SafetensorsTensorInfo> parse_safetensors_header(const uint8_t* bytes, size_t size, const std::string& what,
                                                            std::map<std::string, std::string>* metadata) {
    return parse_header(bytes, size, what, metadata).tensors;
}

std::vector<SafetensorsTensorInfo> load_safetensors_header(const std::filesystem::path& path,
                                                           std::map<std::string, std::string>* metadata) {
    const MappedFile f(path);  // only the header's pages are touched
    return parse_header(f.data(), f.size(), path.string(), metadata).tensors;
}

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

void save_safetensors_streamed(const std::filesystem::path& path, const std::map<std::string, StreamedTensor>& tensors,
                               const std::map<std::string, std::string>& metadata) {
    nlohmann::json header = nlohmann::json::object();
    if (!metadata.empty()) header["__metadata__"] = metadata;
    uint64_t offset = 0;
    for (const auto& [name, t] : tensors) {
        const uint64_t n = uint64_t(Tensor::count(t.shape)) * 4;
        header[name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + n}}};
        offset += n;
    }
    std::string h = header.dump();
    while ((8 + h.size()) % 8) h.push_back(' ');  // align the buffer to 8 bytes, as the reference writer does
    write_file_atomic_with(path, [&](std::FILE* fp) {
        const uint64_t hl = h.size();
        char len[8];
        for (int i = 0; i < 8; ++i) len[i] = char((hl >> (8 * i)) & 0xff);
        std::fwrite(len, 1, 8, fp);
        std::fwrite(h.data(), 1, h.size(), fp);
        for (const auto& [name, t] : tensors) {
            const size_t want = size_t(Tensor::count(t.shape));
            size_t got = 0;
            t.write([&](const float* v, size_t n) {
                got += n;
                if (got <= want && n) std::fwrite(v, sizeof(float), n, fp);
            });
            if (got != want)
                throw std::runtime_error("cannot write " + path.string() + ": tensor '" + name + "' gave " +
                                         std::to_string(got) + " values for " + std::to_string(want));
            if (std::ferror(fp)) return;  // reported by write_file_atomic_with
        }
    });
}

void save_safetensors(const std::filesystem::path& path, const WeightMap& tensors,
                      const std::map<std::string, std::string>& metadata) {
    std::map<std::string, StreamedTensor> streamed;
    for (const auto& entry : tensors) {
        const Tensor& t = entry.second;  // a reference, not a structured binding: clang 14 cannot capture those
        streamed.emplace(entry.first, StreamedTensor{t.shape, [&t](const auto& put) {
                                                  if (!t.is_f32_rows()) {  // written as row-major F32 like every tensor
                                                      const Tensor f = to_f32(t);
                                                      put(f.data.data(), f.data.size());
                                                  } else {
                                                      put(t.data.data(), t.data.size());
                                                  }
                                              }});
    }
    save_safetensors_streamed(path, streamed, metadata);
}

}  // namespace ts
