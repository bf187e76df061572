// Half-precision weights (IEEE binary16 "F16" and bfloat16 "BF16", as safetensors stores them) widened to float32:
// one value, a run of values (F16C instructions when the CPU has them), or a whole Tensor. Widening is exact.
#pragma once

#include "core/kernels/gemm.h"
#include "core/kernels/quants.h"
#include "core/model/tensor.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace ts {

/// IEEE 754 binary16 bits -> float (exact; subnormals, ±Inf and NaN kept).
[[nodiscard]] inline float f16_to_f32(uint16_t h) {
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

/// float -> IEEE 754 binary16 bits, rounded to nearest, ties to even (as F16C's vcvtps2ph with rounding 0, numpy's
/// float16 and ggml's GGML_FP32_TO_FP16 compute it): subnormal halves for tiny values, ±Inf past 65,520, NaN kept
/// as a quiet NaN (0x7e00 with the sign).
[[nodiscard]] inline uint16_t f32_to_f16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    if (x > 0x7f800000u) return uint16_t(sign | 0x7e00u);
    if (x >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // >= 65520 (the tie above 65504 rounds to even: Inf)
    if (x < 0x38800000u) {                                  // below 2^-14: a subnormal half (or 0) of step 2^-24
        float a;
        std::memcpy(&a, &x, 4);
        return uint16_t(sign | uint32_t(std::nearbyint(a * 16777216.0f)));  // exact scaling, then ties to even
    }
    uint32_t h = ((((x >> 23) - 112u) << 10) | ((x & 0x7fffffu) >> 13));
    const uint32_t rest = x & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry into the exponent is the right result
    return uint16_t(sign | h);
}

/// bfloat16 bits -> float: the upper half of a float's bits (exact).
[[nodiscard]] inline float bf16_to_f32(uint16_t b) {
    const uint32_t bits = uint32_t(b) << 16;
    float out;
    std::memcpy(&out, &bits, 4);
    return out;
}

/// dst[i] = widen(src[i]) for i < n; kind F16 or BF16 (or their panel kinds: the same bits).
inline void widen_half(const uint16_t* src, Storage kind, float* dst, size_t n) {
    size_t i = 0;
    if (kind == Storage::BF16 || kind == Storage::BF16Panels) {
        for (; i < n; ++i) {  // a shift: GCC vectorizes this loop
            const uint32_t bits = uint32_t(src[i]) << 16;
            std::memcpy(dst + i, &bits, 4);
        }
        return;
    }
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
#endif
    for (; i < n; ++i) dst[i] = f16_to_f32(src[i]);
}

/// A row-major float32 copy of `t` (itself when already so; panels are put back in rows).
[[nodiscard]] inline Tensor to_f32(const Tensor& t) {
    if (t.is_f32_rows()) return t;
    if (t.in_panels()) return unpack_panels(t);
    Tensor out;
    if (t.is_ggml()) {
        out.shape = t.shape;
        out.data.resize(size_t(t.numel()));
        ggml_dequantize_rows(t, 0, t.shape[0], out.data.data());
        return out;
    }
    out.shape = t.shape;
    out.data.resize(t.half.size());
    widen_half(t.half.data(), t.storage, out.data.data(), t.half.size());
    return out;
}

}  // namespace ts
