// FNV-1a, 64 bit (Fowler–Noll–Vo): a fast non-cryptographic fingerprint of bytes, for cache keys that must change
// when their inputs do (a model's weights, a corpus's token ids). Not for security.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ts {

inline constexpr uint64_t kFnv1aOffset = 0xcbf29ce484222325ull;

/// FNV-1a of `n` bytes at `data`, continuing from `h` (kFnv1aOffset to start), so several buffers hash as one.
[[nodiscard]] inline uint64_t fnv1a(const void* data, size_t n, uint64_t h = kFnv1aOffset) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/// FNV-1a of token ids, each as 4 little-endian bytes whatever the machine's byte order (translation alignment
/// records, the neuron index's corpus key).
[[nodiscard]] inline uint64_t fnv1a_ids(const std::vector<int>& ids) {
    uint64_t h = kFnv1aOffset;
    for (const int id : ids) {
        const uint32_t u = uint32_t(id);
        const unsigned char b[4] = {uint8_t(u), uint8_t(u >> 8), uint8_t(u >> 16), uint8_t(u >> 24)};
        h = fnv1a(b, 4, h);
    }
    return h;
}

}  // namespace ts
