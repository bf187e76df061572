// GGUF, llama.cpp's model file (format spec: ggml/docs/gguf.md in the llama.cpp repository). Layout, all little
// endian: magic "GGUF", u32 version (2 or 3 here; v1's 32-bit counts are refused), u64 tensor count, u64 metadata
// count; metadata key-values (string key, u32 value type, value); tensor infos (name, u32 n_dims <= 4, u64 ne[n_dims]
// with ne[0] the fastest axis, u32 ggml type, u64 offset into the data section); padding to `general.alignment`
// (default 32); the data section. Strings are a u64 byte length and the bytes (no terminator).
//
// Reading checks every count and length against the bytes that remain before allocating for it, so a lying header
// is refused with one line, never a huge allocation. Tensor data is read from a read-only mapping of the file.
#pragma once

#include "core/kernels/quants.h"
#include "core/model/tensor.h"
#include "core/util/file.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ts {

// --- metadata -------------------------------------------------------------------------------------------------

/// gguf_type: the value types of metadata.
enum class GgufValueType : uint32_t {
    U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7, String = 8, Array = 9,
    U64 = 10, I64 = 11, F64 = 12,
};

/// One metadata value. Scalars: integers in `integer` (u64 values above INT64_MAX are refused at read), floats in
/// `real`, bools in `integer` (0/1), strings in `text`. Arrays: `type` Array, `elem` the element type, strings in
/// `strings`, numbers and bools in `numbers` (every integer and float32 is exact in a double); an array of arrays
/// keeps only its length in `array_size`.
struct GgufValue {
    GgufValueType type = GgufValueType::U8;
    GgufValueType elem = GgufValueType::U8;
    int64_t integer = 0;
    double real = 0.0;
    std::string text;
    std::vector<std::string> strings;
    std::vector<double> numbers;
    uint64_t array_size = 0;

    [[nodiscard]] bool is_integer() const;
    [[nodiscard]] bool is_number() const { return is_integer() || type == GgufValueType::F32 || type == GgufValueType::F64; }
    /// The value as a double (integers and floats).
    [[nodiscard]] double as_double() const { return is_integer() ? double(integer) : real; }
    /// "u32 4096", "string \"llama\"", "array[151936] of string": for messages and the model panel.
    [[nodiscard]] std::string describe() const;
};

/// One tensor info. `ne` is ggml's order (ne[0] the fastest axis); shape() is torch's (ne reversed), so a matrix
/// stored with ne = {in, out} is an (out, in) nn.Linear weight.
struct GgufTensorInfo {
    std::string name;
    std::vector<int64_t> ne;
    uint32_t type = 0;       ///< ggml type number (ggml_type_info)
    uint64_t offset = 0;     ///< from the start of the data section
    uint64_t bytes = 0;      ///< row bytes x rows
    [[nodiscard]] std::vector<int64_t> shape() const { return {ne.rbegin(), ne.rend()}; }
    [[nodiscard]] int64_t numel() const;
};

/// What the header says, checked against the file's size.
struct GgufHeader {
    uint32_t version = 0;
    std::map<std::string, GgufValue, std::less<>> metadata;
    std::vector<GgufTensorInfo> tensors;  ///< in file order
    uint64_t alignment = 32;
    uint64_t data_offset = 0;             ///< start of the data section in the file

    /// The value under `key`, or null.
    [[nodiscard]] const GgufValue* find(std::string_view key) const;
    [[nodiscard]] const GgufTensorInfo* find_tensor(std::string_view name) const;
};

/// Parses a GGUF image's header and checks it: magic, version 2 or 3, every count and length within the bytes
/// left, value types the format defines, `general.alignment` a u32 power of two, unique keys and tensor names,
/// n_dims in 1..4, ne >= 0 with ne[0] a multiple of the type's block size, element and byte counts without
/// overflow, offsets aligned, every tensor inside the data section and none overlapping another. Throws
/// std::runtime_error "<what>: <problem>" (e.g. "tensor 'blk.0.attn_q.weight' ends at byte 9437184 of the data
/// section, which has 4096").
[[nodiscard]] GgufHeader parse_gguf_header(const uint8_t* bytes, size_t size, const std::string& what = "buffer");

/// True when `path` is a regular file that starts with the GGUF magic. Never throws.
[[nodiscard]] bool is_gguf_file(const std::filesystem::path& path);

/// A GGUF file mapped read-only with its checked header.
class GgufFile {
public:
    /// Maps and parses `path`. Throws std::runtime_error "<path>: <problem>".
    explicit GgufFile(const std::filesystem::path& path);
    [[nodiscard]] const GgufHeader& header() const { return m_header; }
    [[nodiscard]] const std::filesystem::path& path() const { return m_path; }
    [[nodiscard]] uint64_t file_bytes() const { return m_file->size(); }
    /// The tensor's bytes in the mapping (info.bytes of them).
    [[nodiscard]] const uint8_t* data(const GgufTensorInfo& info) const {
        return m_file->data() + m_header.data_offset + info.offset;
    }
    /// The tensor in torch order as a Tensor: F32 as float32; F16 / BF16 kept as half bits when keep_half (else
    /// widened); every other decodable type dequantized to float32 (ggml_dequantize). Throws std::runtime_error
    /// naming the tensor and its type when the type is not decodable.
    [[nodiscard]] Tensor read(const GgufTensorInfo& info, bool keep_half = false) const;
    /// The mapping itself, for tensors that point into it (Tensor::mapped_blocks) and must keep it alive.
    [[nodiscard]] std::shared_ptr<const void> mapping() const { return m_file; }
    /// Hands the mapping's pages of a tensor back to the system (they are read again from the file if touched):
    /// a loader that has copied the tensor keeps the file from counting twice in its resident memory.
    void release(const GgufTensorInfo& info) const { m_file->release(m_header.data_offset + info.offset, info.bytes); }

private:
    std::filesystem::path m_path;
    std::shared_ptr<MappedFile> m_file;
    GgufHeader m_header;
};

}  // namespace ts
