// GGUF header reading and tensor access (see core/formats/gguf.h). Every count is checked against the bytes that remain
// before anything is allocated for it.
#include "core/formats/gguf.h"

#include "core/model/half.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <stdexcept>

namespace ts {
namespace {

constexpr uint32_t kMaxDims = 4;           // GGML_MAX_DIMS
constexpr int kMaxArrayDepth = 8;          // arrays of arrays deeper than this are refused

[[noreturn]] void fail(const std::string& what, const std::string& msg) { throw std::runtime_error(what + ": " + msg); }

const char* type_name(GgufValueType t) {
    switch (t) {
        case GgufValueType::U8: return "u8";
        case GgufValueType::I8: return "i8";
        case GgufValueType::U16: return "u16";
        case GgufValueType::I16: return "i16";
        case GgufValueType::U32: return "u32";
        case GgufValueType::I32: return "i32";
        case GgufValueType::F32: return "f32";
        case GgufValueType::Bool: return "bool";
        case GgufValueType::String: return "string";
        case GgufValueType::Array: return "array";
        case GgufValueType::U64: return "u64";
        case GgufValueType::I64: return "i64";
        case GgufValueType::F64: return "f64";
    }
    return "?";
}

/// Bytes of one scalar of type t (strings: their 8-byte length, the least they take).
uint64_t min_bytes(GgufValueType t) {
    switch (t) {
        case GgufValueType::U8: case GgufValueType::I8: case GgufValueType::Bool: return 1;
        case GgufValueType::U16: case GgufValueType::I16: return 2;
        case GgufValueType::U32: case GgufValueType::I32: case GgufValueType::F32: return 4;
        case GgufValueType::U64: case GgufValueType::I64: case GgufValueType::F64: case GgufValueType::String: return 8;
        case GgufValueType::Array: return 12;  // element type + count
    }
    return 1;
}

class Reader {
public:
    Reader(const uint8_t* b, size_t n, const std::string& what) : m_b(b), m_n(n), m_what(what) {}
    [[nodiscard]] size_t pos() const { return m_pos; }
    [[nodiscard]] size_t left() const { return m_n - m_pos; }
    void need(uint64_t k, const std::string& for_what) const {
        if (k > left())
            fail(m_what, "file ends inside " + for_what + " (needs " + std::to_string(k) + " bytes at offset " +
                             std::to_string(m_pos) + ", " + std::to_string(left()) + " left)");
    }
    template <class T>
    T get(const std::string& for_what) {
        need(sizeof(T), for_what);
        T v;
        std::memcpy(&v, m_b + m_pos, sizeof(T));
        m_pos += sizeof(T);
        return v;
    }
    std::string string(const std::string& for_what) {
        const uint64_t len = get<uint64_t>(for_what);
        need(len, for_what);
        std::string s(reinterpret_cast<const char*>(m_b + m_pos), size_t(len));
        m_pos += size_t(len);
        return s;
    }
    void skip(uint64_t k, const std::string& for_what) {
        need(k, for_what);
        m_pos += size_t(k);
    }

private:
    const uint8_t* m_b;
    size_t m_n;
    size_t m_pos = 0;
    const std::string& m_what;
};

bool valid_type(uint32_t t) { return t <= uint32_t(GgufValueType::F64); }

/// One scalar of type t into v (integer / real / text).
void read_scalar(Reader& r, GgufValueType t, GgufValue& v, const std::string& ctx, const std::string& what) {
    switch (t) {
        case GgufValueType::U8: v.integer = r.get<uint8_t>(ctx); break;
        case GgufValueType::I8: v.integer = r.get<int8_t>(ctx); break;
        case GgufValueType::U16: v.integer = r.get<uint16_t>(ctx); break;
        case GgufValueType::I16: v.integer = r.get<int16_t>(ctx); break;
        case GgufValueType::U32: v.integer = r.get<uint32_t>(ctx); break;
        case GgufValueType::I32: v.integer = r.get<int32_t>(ctx); break;
        case GgufValueType::I64: v.integer = r.get<int64_t>(ctx); break;
        case GgufValueType::U64: {
            const uint64_t u = r.get<uint64_t>(ctx);
            if (u > uint64_t(std::numeric_limits<int64_t>::max())) fail(what, ctx + " is a u64 beyond 2^63 - 1");
            v.integer = int64_t(u);
            break;
        }
        case GgufValueType::F32: v.real = r.get<float>(ctx); break;
        case GgufValueType::F64: v.real = r.get<double>(ctx); break;
        case GgufValueType::Bool: {
            const uint8_t b = r.get<uint8_t>(ctx);
            if (b > 1) fail(what, ctx + " is a bool holding " + std::to_string(b));
            v.integer = b;
            break;
        }
        case GgufValueType::String: v.text = r.string(ctx); break;
        case GgufValueType::Array: break;  // handled by read_value
    }
}

void read_value(Reader& r, GgufValueType t, GgufValue& v, const std::string& ctx, const std::string& what, int depth) {
    v.type = t;
    if (t != GgufValueType::Array) {
        read_scalar(r, t, v, ctx, what);
        return;
    }
    if (depth >= kMaxArrayDepth) fail(what, ctx + " nests arrays deeper than " + std::to_string(kMaxArrayDepth));
    const uint32_t et = r.get<uint32_t>(ctx + " (array element type)");
    if (!valid_type(et)) fail(what, ctx + " is an array of unknown value type " + std::to_string(et));
    v.elem = GgufValueType(et);
    const uint64_t n = r.get<uint64_t>(ctx + " (array length)");
    if (n > r.left() / min_bytes(v.elem))
        fail(what, ctx + " claims " + std::to_string(n) + " elements of " + type_name(v.elem) + ", more than the " +
                       std::to_string(r.left()) + " bytes left can hold");
    v.array_size = n;
    if (v.elem == GgufValueType::String) {
        v.strings.reserve(size_t(n));
        for (uint64_t i = 0; i < n; ++i) v.strings.push_back(r.string(ctx + " element " + std::to_string(i)));
    } else if (v.elem == GgufValueType::Array) {
        for (uint64_t i = 0; i < n; ++i) {
            GgufValue inner;  // kept as a length only
            read_value(r, GgufValueType::Array, inner, ctx + " element " + std::to_string(i), what, depth + 1);
        }
    } else {
        v.numbers.reserve(size_t(n));
        GgufValue e;
        for (uint64_t i = 0; i < n; ++i) {
            e.type = v.elem;
            read_scalar(r, v.elem, e, ctx, what);
            v.numbers.push_back(e.is_integer() || v.elem == GgufValueType::Bool ? double(e.integer) : e.real);
        }
    }
}

}  // namespace

bool GgufValue::is_integer() const {
    switch (type) {
        case GgufValueType::U8: case GgufValueType::I8: case GgufValueType::U16: case GgufValueType::I16:
        case GgufValueType::U32: case GgufValueType::I32: case GgufValueType::U64: case GgufValueType::I64:
            return true;
        default:
            return false;
    }
}

std::string GgufValue::describe() const {
    if (type == GgufValueType::Array)
        return "array[" + std::to_string(array_size) + "] of " + type_name(elem);
    if (type == GgufValueType::String) {
        std::string s = text.size() > 60 ? text.substr(0, 57) + "..." : text;
        return "string \"" + s + "\"";
    }
    if (type == GgufValueType::Bool) return integer ? "bool true" : "bool false";
    if (is_integer()) return std::string(type_name(type)) + " " + std::to_string(integer);
    return std::string(type_name(type)) + " " + std::to_string(real);
}

int64_t GgufTensorInfo::numel() const {
    int64_t n = 1;
    for (int64_t d : ne) n *= d;
    return n;
}

const GgufValue* GgufHeader::find(std::string_view key) const {
    const auto it = metadata.find(key);
    return it == metadata.end() ? nullptr : &it->second;
}

const GgufTensorInfo* GgufHeader::find_tensor(std::string_view name) const {
    for (const GgufTensorInfo& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

GgufHeader parse_gguf_header(const uint8_t* bytes, size_t size, const std::string& what) {
    Reader r(bytes, size, what);
    if (size < 4 || std::memcmp(bytes, "GGUF", 4) != 0) fail(what, "not a GGUF file (it does not start with \"GGUF\")");
    r.skip(4, "the magic");
    GgufHeader h;
    h.version = r.get<uint32_t>("the version");
    if (h.version == 1) fail(what, "GGUF version 1 (32-bit counts) is not supported; convert it with a newer llama.cpp");
    if (h.version != 2 && h.version != 3) {
        const bool swapped = h.version == 0x02000000u || h.version == 0x03000000u;
        fail(what, swapped ? "big-endian GGUF is not supported"
                           : "GGUF version " + std::to_string(h.version) + " is not supported (2 and 3 are)");
    }
    const uint64_t n_tensors = r.get<uint64_t>("the tensor count");
    const uint64_t n_kv = r.get<uint64_t>("the metadata count");
    // A key-value takes at least 8 (key length) + 4 (type) + 1 bytes; a tensor info 8 + 4 + 8 + 4 + 8.
    if (n_kv > r.left() / 13) fail(what, "header claims " + std::to_string(n_kv) + " metadata entries, more than the file can hold");
    if (n_tensors > r.left() / 32) fail(what, "header claims " + std::to_string(n_tensors) + " tensors, more than the file can hold");
    for (uint64_t i = 0; i < n_kv; ++i) {
        const std::string ctx = "metadata entry " + std::to_string(i);
        std::string key = r.string(ctx + " (key)");
        const uint32_t t = r.get<uint32_t>("metadata '" + key + "' (type)");
        if (!valid_type(t)) fail(what, "metadata '" + key + "' has unknown value type " + std::to_string(t));
        GgufValue v;
        read_value(r, GgufValueType(t), v, "metadata '" + key + "'", what, 0);
        if (!h.metadata.emplace(key, std::move(v)).second) fail(what, "metadata key '" + key + "' appears twice");
    }
    if (const GgufValue* a = h.find("general.alignment")) {
        if (a->type != GgufValueType::U32) fail(what, "general.alignment must be a u32, found " + a->describe());
        if (a->integer == 0 || (a->integer & (a->integer - 1)))
            fail(what, "general.alignment " + std::to_string(a->integer) + " is not a power of two");
        h.alignment = uint64_t(a->integer);
    }
    std::set<std::string_view> names;
    h.tensors.reserve(size_t(n_tensors));
    for (uint64_t i = 0; i < n_tensors; ++i) {
        GgufTensorInfo t;
        t.name = r.string("tensor info " + std::to_string(i) + " (name)");
        const std::string ctx = "tensor '" + t.name + "'";
        const uint32_t n_dims = r.get<uint32_t>(ctx + " (n_dims)");
        if (n_dims < 1 || n_dims > kMaxDims)
            fail(what, ctx + " has " + std::to_string(n_dims) + " dimensions (1 to 4 are allowed)");
        for (uint32_t d = 0; d < n_dims; ++d) {
            const uint64_t e = r.get<uint64_t>(ctx + " (ne)");
            if (e > uint64_t(std::numeric_limits<int64_t>::max())) fail(what, ctx + " has a negative dimension");
            t.ne.push_back(int64_t(e));
        }
        t.type = r.get<uint32_t>(ctx + " (type)");
        t.offset = r.get<uint64_t>(ctx + " (offset)");
        const auto info = ggml_type_info(t.type);
        if (!info) fail(what, ctx + " has unknown ggml type " + std::to_string(t.type));
        if (t.ne[0] % info->block_size)
            fail(what, ctx + " has rows of " + std::to_string(t.ne[0]) + " values, not a multiple of " +
                           std::string(info->name) + "'s block size " + std::to_string(info->block_size));
        uint64_t bytes = uint64_t(t.ne[0] / info->block_size) * uint64_t(info->block_bytes);
        if (t.ne[0] / info->block_size > int64_t(std::numeric_limits<uint64_t>::max() / uint64_t(info->block_bytes)))
            fail(what, ctx + " is too large");
        int64_t numel = t.ne[0];
        for (size_t d = 1; d < t.ne.size(); ++d) {
            if (t.ne[d] && (bytes > std::numeric_limits<uint64_t>::max() / uint64_t(t.ne[d]) ||
                            numel > std::numeric_limits<int64_t>::max() / t.ne[d]))
                fail(what, ctx + " has " + shape_str(t.shape()) + " elements, too many to count");
            bytes *= uint64_t(t.ne[d]);
            numel *= t.ne[d];
        }
        t.bytes = bytes;
        if (t.offset % h.alignment)
            fail(what, ctx + " starts at offset " + std::to_string(t.offset) + ", not a multiple of the alignment " +
                           std::to_string(h.alignment));
        h.tensors.push_back(std::move(t));
        if (!names.insert(h.tensors.back().name).second)
            fail(what, "tensor name '" + h.tensors.back().name + "' appears twice");
    }
    const uint64_t pad = (h.alignment - r.pos() % h.alignment) % h.alignment;
    // A file that ends inside the padding after its header (gguf-py writes none when there are no tensors) has an
    // empty data section at its end: data_offset never lies beyond the input, so only empty tensors can be in it.
    h.data_offset = std::min<uint64_t>(r.pos() + pad, size);
    const uint64_t data_bytes = size - h.data_offset;
    std::vector<const GgufTensorInfo*> by_offset;
    for (const GgufTensorInfo& t : h.tensors) {
        if (t.offset > data_bytes || t.bytes > data_bytes - t.offset)
            fail(what, "tensor '" + t.name + "' (" + std::to_string(t.bytes) + " bytes at offset " +
                           std::to_string(t.offset) + ") ends beyond the data section, which has " +
                           std::to_string(data_bytes) + " bytes: the file is truncated or its header is wrong");
        by_offset.push_back(&t);
    }
    std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
    for (size_t i = 1; i < by_offset.size(); ++i)
        if (by_offset[i - 1]->offset + by_offset[i - 1]->bytes > by_offset[i]->offset)
            fail(what, "tensors '" + by_offset[i - 1]->name + "' and '" + by_offset[i]->name + "' overlap");
    return h;
}

bool is_gguf_file(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return false;
    std::ifstream in(path, std::ios::binary);
    char magic[4] = {};
    return in.read(magic, 4) && std::memcmp(magic, "GGUF", 4) == 0;
}

GgufFile::GgufFile(const std::filesystem::path& path)
    : m_path(path), m_file(std::make_shared<MappedFile>(path)),
      m_header(parse_gguf_header(m_file->data(), m_file->size(), path.string())) {}

Tensor GgufFile::read(const GgufTensorInfo& info, bool keep_half) const {
    const auto type = ggml_type_info(info.type);
    if (!type || !type->decodable)
        fail(m_path.string(), "tensor '" + info.name + "' is stored as " +
                                  (type ? std::string(type->name) : "type " + std::to_string(info.type)) +
                                  ", which is not supported (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, "
                                  "Q4_K, Q5_K, Q6_K are)");
    Tensor t;
    t.shape = info.shape();
    const uint8_t* p = data(info);
    const int64_t n = info.numel();
    if (keep_half && (info.type == uint32_t(GgmlType::F16) || info.type == uint32_t(GgmlType::BF16))) {
        t.storage = info.type == uint32_t(GgmlType::F16) ? Storage::F16 : Storage::BF16;
        t.half.resize(size_t(n));
        std::memcpy(t.half.data(), p, size_t(n) * 2);
        return t;
    }
    t.data.resize(size_t(n));
    ggml_dequantize(GgmlType(info.type), p, n, t.data.data());
    return t;
}

}  // namespace ts
