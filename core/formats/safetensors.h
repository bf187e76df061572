// safetensors reading (mmap, strict bounds checks; F32/F16/BF16 -> float) and writing (F32), and model folders
// (config.json + model.safetensors). Format: 8-byte little-endian header length N, N bytes of JSON header
// {name: {dtype, shape, data_offsets: [begin, end)}, "__metadata__": {str: str}}, then the byte buffer.
#pragma once

#include "core/model/model.h"
#include "core/model/nonfinite.h"
#include "core/model/tensor.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ts {

// --- header -------------------------------------------------------------------------------------------------
// Every entry of a header is checked, whether or not it is decoded later: a dtype the format defines (BOOL U8 I8
// F8_E5M2 F8_E4M3 F8_E8M0 I16 U16 F16 BF16 I32 U32 F32 I64 U64 F64 C64, and the sub-byte F4 F6_E2M3 F6_E3M2), a
// shape whose byte count (numel x dtype bits / 8, overflow-checked) equals its data_offsets span, the span inside
// the buffer, no name twice; and the spans together tile the data buffer exactly: no overlap, no hole, no trailing
// bytes ("the byte buffer needs to be entirely indexed, and cannot contain holes", as the reference reader
// enforces).

/// One tensor of a header: dtype as spelled in the file, shape, byte span [begin, end) in the data buffer.
struct SafetensorsTensorInfo {
    std::string name;
    std::string dtype;
    std::vector<int64_t> shape;
    uint64_t begin = 0, end = 0;
};

/// Bits per element of a dtype the format defines ("F32" -> 32, "F4" -> 4); 0 for an unknown name.
[[nodiscard]] int safetensors_dtype_bits(std::string_view dtype);

/// Parses and checks the header of a safetensors image without decoding any tensor; entries sorted by offset.
/// Throws std::runtime_error prefixed with `what` naming the tensor and what was expected and found.
[[nodiscard]] std::vector<SafetensorsTensorInfo> parse_safetensors_header(
    const uint8_t* bytes, size_t size, const std::string& what = "buffer",
    std::map<std::string, std::string>* metadata = nullptr);
/// As above for a file; reads the header only (the file is mapped, its data pages are not touched).
[[nodiscard]] std::vector<SafetensorsTensorInfo> load_safetensors_header(
    const std::filesystem::path& path, std::map<std::string, std::string>* metadata = nullptr);

// --- tensors --------------------------------------------------------------------------------------------------

/// Parses a safetensors image already in memory: the header checks above, then every tensor is widened to float
/// (F32, F16 and BF16 are decoded; another dtype is an error unless the tensor is skipped). Throws
/// std::runtime_error naming the problem (truncated header, header length beyond file, bad JSON, a header rule
/// broken, an undecodable dtype). `what` names the source in messages (a file path).
[[nodiscard]] WeightMap parse_safetensors(const uint8_t* bytes, size_t size, const std::string& what = "buffer",
                                          std::map<std::string, std::string>* metadata = nullptr);

/// mmaps `path` and parses it. Throws std::runtime_error with the path on failure.
[[nodiscard]] WeightMap load_safetensors(const std::filesystem::path& path,
                                         std::map<std::string, std::string>* metadata = nullptr);

/// Optional behaviour of load_safetensors / parse_safetensors (defaults = the strict plain load).
struct SafetensorsReadOptions {
    /// Names for which this returns true are not decoded, so their dtype may be one we do not widen (BOOL, U8,
    /// ...); they still must pass every header check. Used for GPT-2's non-persistent attn.bias / attn.masked_bias.
    std::function<bool(std::string_view name)> skip;
    /// Called after each decoded tensor with (tensor-data bytes decoded so far, tensor-data bytes to decode).
    std::function<void(uint64_t bytes_done, uint64_t bytes_total)> progress;
    /// When set, receives each decoded tensor that holds NaN or ±Inf (counted while decoding, in offset order).
    std::vector<NonfiniteTensor>* nonfinite = nullptr;
    /// F16/BF16 tensors whose name this accepts stay half precision (Tensor::storage F16/BF16, values in
    /// Tensor::half): the model's matrices, widened block by block inside the products (core/model/half.h).
    std::function<bool(std::string_view name)> keep_half;
};

/// As above, with skip/progress options. load_safetensors also releases each tensor's mapped source pages once
/// it is decoded, so the peak resident size stays near the decoded floats plus one tensor.
[[nodiscard]] WeightMap parse_safetensors(const uint8_t* bytes, size_t size, const std::string& what,
                                          const SafetensorsReadOptions& options,
                                          std::map<std::string, std::string>* metadata = nullptr);
[[nodiscard]] WeightMap load_safetensors(const std::filesystem::path& path, const SafetensorsReadOptions& options,
                                         std::map<std::string, std::string>* metadata = nullptr);

/// Writes F32 tensors (sorted by name) atomically (temp file + rename). Throws std::runtime_error on I/O failure.
void save_safetensors(const std::filesystem::path& path, const WeightMap& tensors,
                      const std::map<std::string, std::string>& metadata = {});

/// One F32 tensor of a streamed safetensors file: `write` is called once and must hand `put` exactly
/// Tensor::count(shape) floats, row-major, in as many pieces as it likes (so no tensor need exist whole).
struct StreamedTensor {
    std::vector<int64_t> shape;
    std::function<void(const std::function<void(const float*, size_t)>& put)> write;
};
/// save_safetensors for tensors produced while writing (sorted by name, as the header lists them); written
/// atomically without building the file in memory. Throws std::runtime_error on I/O failure or when a `write`
/// hands over the wrong number of floats.
void save_safetensors_streamed(const std::filesystem::path& path, const std::map<std::string, StreamedTensor>& tensors,
                               const std::map<std::string, std::string>& metadata = {});

/// Parses config.json text (depth-limited JSON) and validates it. Throws std::runtime_error prefixed with `what`.
[[nodiscard]] ModelConfig parse_config_json(std::string_view text, const std::string& what = "config.json");
/// Reads our config.json. Throws std::runtime_error naming the file and the bad field.
[[nodiscard]] ModelConfig load_config(const std::filesystem::path& path);
void save_config(const std::filesystem::path& path, const ModelConfig& c);

/// Loads a model folder (config.json + model.safetensors). Before decoding anything it compares every weight the
/// config implies (expected_weights) with the header: a missing, unexpected or mis-shaped tensor is a
/// std::runtime_error naming it, the expected shape and the shape found, so an absurd config allocates nothing.
/// Tensors holding NaN/±Inf do not fail the load: Model::weight_warnings() names them.
[[nodiscard]] std::shared_ptr<const Model> load_model_dir(const std::filesystem::path& dir);
void save_model_dir(const std::filesystem::path& dir, const Model& m);

}  // namespace ts
