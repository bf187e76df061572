// Helpers the checkpoint benchmarks share: reproducible random weights, a streaming BF16 safetensors writer (large
// synthetic checkpoints never sit in memory as float32) and the process's memory counters from /proc/self/status.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ts::bench {

/// Uniform values in (-0.05, 0.05) from a xorshift64 stream (the same sequence on every machine).
struct UniformWeights {
    uint64_t s = 0x9e3779b97f4a7c15ull;
    float next() {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        return float(int64_t(s >> 40) - (int64_t(1) << 23)) * (0.05f / float(1 << 23));
    }
};

/// float -> bfloat16 bits, rounded to nearest even (as torch's .to(torch.bfloat16)).
inline uint16_t f32_to_bf16(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return uint16_t((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

using TensorList = std::vector<std::pair<std::string, std::vector<int64_t>>>;

/// Writes a safetensors file whose tensors are all BF16. The header lists them by name (nlohmann::json's order) and
/// the data follows in that order; `fill(name, values)` supplies each tensor's float32 values (values.size() is
/// its element count) just before it is written.
inline void write_bf16_safetensors(const std::filesystem::path& path, const TensorList& tensors,
                                   const std::function<void(const std::string&, std::vector<float>&)>& fill) {
    nlohmann::json header = {{"__metadata__", {{"format", "pt"}}}};
    uint64_t off = 0;
    for (const auto& [name, shape] : tensors) {
        uint64_t n = 1;
        for (int64_t d : shape) n *= uint64_t(d);
        header[name] = {{"dtype", "BF16"}, {"shape", shape}, {"data_offsets", {off, off + 2 * n}}};
        off += 2 * n;
    }
    std::string h = header.dump();
    while (h.size() % 8) h.push_back(' ');
    std::ofstream out(path, std::ios::binary);
    const uint64_t hn = h.size();
    out.write(reinterpret_cast<const char*>(&hn), 8);
    out << h;
    std::vector<float> values;
    std::vector<uint16_t> bits;
    for (const auto& [name, info] : header.items()) {
        if (name == "__metadata__") continue;
        uint64_t n = 1;
        for (const auto& d : info["shape"]) n *= d.get<uint64_t>();
        values.resize(size_t(n));
        fill(name, values);
        bits.resize(values.size());
        for (size_t i = 0; i < values.size(); ++i) bits[i] = f32_to_bf16(values[i]);
        out.write(reinterpret_cast<const char*>(bits.data()), std::streamsize(2 * bits.size()));
    }
}

/// A /proc/self/status field in kB ("VmHWM:", "VmRSS:"), 0 when absent.
inline double status_kb(const char* field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    const size_t n = std::strlen(field);
    while (std::getline(in, line))
        if (line.rfind(field, 0) == 0) return std::stod(line.substr(n));
    return 0.0;
}

}  // namespace ts::bench
