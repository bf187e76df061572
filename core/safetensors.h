// safetensors reading (mmap, strict bounds checks; F32/F16/BF16 -> float) and writing (F32), and model folders
// (config.json + model.safetensors). Format: 8-byte little-endian header length N, N bytes of JSON header
// {name: {dtype, shape, data_offsets: [begin, end)}, "__metadata__": {str: str}}, then the byte buffer.
#pragma once

#include "core/model.h"
#include "core/tensor.h"

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace ts {

/// Parses a safetensors image already in memory. Throws std::runtime_error naming the problem (truncated header,
/// header length beyond file, bad JSON, unknown dtype, offsets out of range or overlapping, shape/bytes mismatch).
/// `what` names the source in messages (a file path).
[[nodiscard]] WeightMap parse_safetensors(const uint8_t* bytes, size_t size, const std::string& what = "buffer",
                                          std::map<std::string, std::string>* metadata = nullptr);

/// mmaps `path` and parses it. Throws std::runtime_error with the path on failure.
[[nodiscard]] WeightMap load_safetensors(const std::filesystem::path& path,
                                         std::map<std::string, std::string>* metadata = nullptr);

/// Optional behaviour of load_safetensors / parse_safetensors (defaults = the strict plain load).
struct SafetensorsReadOptions {
    /// Names for which this returns true are not decoded and their dtype is not checked (their offsets still
    /// must lie inside the buffer). Used for GPT-2's non-persistent attn.bias / attn.masked_bias buffers.
    std::function<bool(std::string_view name)> skip;
    /// Called after each decoded tensor with (tensor-data bytes decoded so far, tensor-data bytes of the file).
    std::function<void(uint64_t bytes_done, uint64_t bytes_total)> progress;
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

/// Parses config.json text (depth-limited JSON) and validates it. Throws std::runtime_error prefixed with `what`.
[[nodiscard]] ModelConfig parse_config_json(std::string_view text, const std::string& what = "config.json");
/// Reads our config.json. Throws std::runtime_error naming the file and the bad field.
[[nodiscard]] ModelConfig load_config(const std::filesystem::path& path);
void save_config(const std::filesystem::path& path, const ModelConfig& c);

/// Loads a model folder (config.json + model.safetensors). Throws std::runtime_error naming the problem.
[[nodiscard]] std::shared_ptr<const Model> load_model_dir(const std::filesystem::path& dir);
void save_model_dir(const std::filesystem::path& dir, const Model& m);

}  // namespace ts
