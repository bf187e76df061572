// The project's one random-number generator: splitmix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014). Its output is the same on every platform and standard library, unlike
// std::uniform_real_distribution or std::discrete_distribution, so a seed means the same dropout mask, the same
// training batch and the same sampled text everywhere.
#pragma once

#include <cstdint>

namespace ts {

/// splitmix64's output function: a bijective 64-bit mix of x. As a counter-based generator (mix64(key + i)),
/// every draw is a pure function of its key: the trainer resumes without generator state.
[[nodiscard]] constexpr uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/// splitmix64 as a sequential generator: the next 64 random bits; advances `state`.
[[nodiscard]] constexpr uint64_t splitmix64(uint64_t& state) {
    const uint64_t z = mix64(state);
    state += 0x9E3779B97F4A7C15ull;
    return z;
}

/// A double uniform in [0, 1) from the top 53 of 64 random bits.
[[nodiscard]] constexpr double uniform01(uint64_t bits) { return double(bits >> 11) * 0x1.0p-53; }

}  // namespace ts
