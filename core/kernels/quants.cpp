// ggml's block formats decoded to float32 (declared in core/kernels/quants.h). Block layouts are ggml-common.h's; each value
// is computed with the products in the order ggml-quants.c's dequantize_row_* uses (and gguf-py's quants.py
// mirrors), and this file is built with -ffp-contract=off (CMakeLists.txt) so the compiler cannot fuse a
// multiply-add into one rounding: the results are equal bit for bit.
#include "core/kernels/quants.h"

#include "core/model/half.h"
#include "core/model/nonfinite.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace ts {
namespace {

constexpr int kQK = 32;    // values per block of the Q*_0 / Q*_1 types
constexpr int kQKK = 256;  // values per super-block of the K-quants

float half_at(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return f16_to_f32(h);
}

uint32_t u32_at(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// Q4_0: d (f16), 16 bytes of nibbles; value j = (low nibble of byte j) - 8, value j + 16 = (high nibble) - 8.
void q4_0(const uint8_t* b, float* y) {
    const float d = half_at(b);
    const uint8_t* qs = b + 2;
    for (int j = 0; j < kQK / 2; ++j) {
        y[j] = float(int(qs[j] & 0x0F) - 8) * d;
        y[j + kQK / 2] = float(int(qs[j] >> 4) - 8) * d;
    }
}

// Q4_1: d, m (f16), 16 bytes of nibbles; value = q * d + m.
void q4_1(const uint8_t* b, float* y) {
    const float d = half_at(b), m = half_at(b + 2);
    const uint8_t* qs = b + 4;
    for (int j = 0; j < kQK / 2; ++j) {
        y[j] = float(qs[j] & 0x0F) * d + m;
        y[j + kQK / 2] = float(qs[j] >> 4) * d + m;
    }
}

// Q5_0: d (f16), 32 high bits (u32), 16 bytes of nibbles; 5-bit q - 16.
void q5_0(const uint8_t* b, float* y) {
    const float d = half_at(b);
    const uint32_t qh = u32_at(b + 2);
    const uint8_t* qs = b + 6;
    for (int j = 0; j < kQK / 2; ++j) {
        const int hi0 = int((qh >> j) << 4) & 0x10;
        const int hi1 = int(qh >> (j + 12)) & 0x10;
        y[j] = float(((qs[j] & 0x0F) | hi0) - 16) * d;
        y[j + kQK / 2] = float(((qs[j] >> 4) | hi1) - 16) * d;
    }
}

// Q5_1: d, m (f16), 32 high bits, 16 bytes of nibbles; value = q * d + m.
void q5_1(const uint8_t* b, float* y) {
    const float d = half_at(b), m = half_at(b + 2);
    const uint32_t qh = u32_at(b + 4);
    const uint8_t* qs = b + 8;
    for (int j = 0; j < kQK / 2; ++j) {
        const int hi0 = int((qh >> j) << 4) & 0x10;
        const int hi1 = int(qh >> (j + 12)) & 0x10;
        y[j] = float((qs[j] & 0x0F) | hi0) * d + m;
        y[j + kQK / 2] = float((qs[j] >> 4) | hi1) * d + m;
    }
}

// Q8_0: d (f16), 32 signed bytes.
void q8_0(const uint8_t* b, float* y) {
    const float d = half_at(b);
    const auto* qs = reinterpret_cast<const int8_t*>(b + 2);
    for (int j = 0; j < kQK; ++j) y[j] = float(qs[j]) * d;
}

// Q2_K: 16 scale bytes (low nibble scale, high nibble min), 64 bytes of 2-bit quants, d, dmin (f16).
void q2_k(const uint8_t* b, float* y) {
    const uint8_t* scales = b;
    const uint8_t* q = b + 16;
    const float d = half_at(b + 80), dmin = half_at(b + 82);
    int is = 0;
    for (int n = 0; n < kQKK; n += 128) {
        for (int shift = 0; shift < 8; shift += 2) {
            for (int half = 0; half < 2; ++half) {
                const uint8_t sc = scales[is++];
                const float dl = d * float(sc & 0x0F), ml = dmin * float(sc >> 4);
                for (int l = 0; l < 16; ++l) *y++ = dl * float((q[l + 16 * half] >> shift) & 3) - ml;
            }
        }
        q += 32;
    }
}

// Q3_K: 32 bytes of high bits, 64 bytes of 2-bit quants, 12 bytes of 6-bit scales, d (f16).
void q3_k(const uint8_t* b, float* y) {
    const uint8_t* hm = b;
    const uint8_t* q = b + 32;
    const uint8_t* packed = b + 96;
    const float d_all = half_at(b + 108);
    // 16 scales of 6 bits: low 4 bits from bytes 0-7 (low nibbles, then high nibbles), high 2 bits from bytes 8-11.
    int8_t scales[16];
    for (int i = 0; i < 16; ++i) {
        const int low = (i < 8 ? packed[i] : packed[i - 8] >> 4) & 0x0F;
        const int high = (packed[8 + (i % 4)] >> (2 * (i / 4))) & 0x03;
        scales[i] = int8_t((low | (high << 4)) - 32);
    }
    int is = 0;
    uint8_t m = 1;
    for (int n = 0; n < kQKK; n += 128) {
        for (int shift = 0; shift < 8; shift += 2) {
            for (int half = 0; half < 2; ++half) {
                const float dl = d_all * float(scales[is++]);
                for (int l = 0; l < 16; ++l) {
                    const int i = l + 16 * half;
                    *y++ = dl * float(int((q[i] >> shift) & 3) - ((hm[i] & m) ? 0 : 4));
                }
            }
            m = uint8_t(m << 1);
        }
        q += 32;
    }
}

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K / Q5_K super-block (ggml's get_scale_min_k4).
void scale_min_k4(int j, const uint8_t* s, int& sc, int& mn) {
    if (j < 4) {
        sc = s[j] & 63;
        mn = s[j + 4] & 63;
    } else {
        sc = (s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4);
        mn = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

// Scales and mins of sub-blocks j and j + 1 of a Q4_K / Q5_K super-block, times the super-block's d and dmin.
struct ScalePair {
    float d1, m1, d2, m2;
};
ScalePair scale_pair(int j, const uint8_t* s, float d, float dmin) {
    int sc, mn;
    scale_min_k4(j, s, sc, mn);
    ScalePair p{d * float(sc), dmin * float(mn), 0.0f, 0.0f};
    scale_min_k4(j + 1, s, sc, mn);
    p.d2 = d * float(sc), p.m2 = dmin * float(mn);
    return p;
}

// Q4_K: d, dmin (f16), 12 bytes of scales/mins, 128 bytes of nibbles; 8 sub-blocks of 32.
void q4_k(const uint8_t* b, float* y) {
    const float d = half_at(b), dmin = half_at(b + 2);
    const uint8_t* s = b + 4;
    const uint8_t* q = b + 16;
    for (int j = 0; j < 8; j += 2) {
        const ScalePair sp = scale_pair(j, s, d, dmin);
        const float d1 = sp.d1, m1 = sp.m1, d2 = sp.d2, m2 = sp.m2;
        for (int l = 0; l < 32; ++l) *y++ = d1 * float(q[l] & 0x0F) - m1;
        for (int l = 0; l < 32; ++l) *y++ = d2 * float(q[l] >> 4) - m2;
        q += 32;
    }
}

// Q5_K: d, dmin (f16), 12 bytes of scales/mins, 32 bytes of high bits, 128 bytes of nibbles.
void q5_k(const uint8_t* b, float* y) {
    const float d = half_at(b), dmin = half_at(b + 2);
    const uint8_t* s = b + 4;
    const uint8_t* qh = b + 16;
    const uint8_t* ql = b + 48;
    uint8_t u1 = 1, u2 = 2;
    for (int j = 0; j < 8; j += 2) {
        const ScalePair sp = scale_pair(j, s, d, dmin);
        const float d1 = sp.d1, m1 = sp.m1, d2 = sp.d2, m2 = sp.m2;
        for (int l = 0; l < 32; ++l) *y++ = d1 * float((ql[l] & 0x0F) + ((qh[l] & u1) ? 16 : 0)) - m1;
        for (int l = 0; l < 32; ++l) *y++ = d2 * float((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
        ql += 32;
        u1 = uint8_t(u1 << 2);
        u2 = uint8_t(u2 << 2);
    }
}

// Q6_K: 128 bytes of low nibbles, 64 bytes of high 2 bits, 16 signed scale bytes, d (f16); 16 sub-blocks of 16.
void q6_k(const uint8_t* b, float* y) {
    const uint8_t* ql = b;
    const uint8_t* qh = b + 128;
    const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
    const float d = half_at(b + 208);
    for (int n = 0; n < kQKK; n += 128) {
        for (int l = 0; l < 32; ++l) {
            const int is = l / 16;
            const int q1 = int((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
            const int q2 = int((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
            const int q3 = int((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            const int q4 = int((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l] = d * float(sc[is]) * float(q1);
            y[l + 32] = d * float(sc[is + 2]) * float(q2);
            y[l + 64] = d * float(sc[is + 4]) * float(q3);
            y[l + 96] = d * float(sc[is + 6]) * float(q4);
        }
        y += 128;
        ql += 64;
        qh += 32;
        sc += 8;
    }
}

struct TypeRow {
    uint32_t number;
    GgmlTypeInfo info;
    void (*block)(const uint8_t*, float*);
    int16_t scale_at[2] = {-1, -1};  ///< byte offsets of the block's f16 scales (d, and m / dmin); -1: none
};

// gguf-py's GGML_QUANT_SIZES (block size, bytes per block) for every type the format defines.
constexpr TypeRow kTypes[] = {
    {0, {"F32", 1, 4, true}, nullptr},        {1, {"F16", 1, 2, true}, nullptr},
    {2, {"Q4_0", 32, 18, true}, q4_0, {0, -1}},        {3, {"Q4_1", 32, 20, true}, q4_1, {0, 2}},
    {6, {"Q5_0", 32, 22, true}, q5_0, {0, -1}},        {7, {"Q5_1", 32, 24, true}, q5_1, {0, 2}},
    {8, {"Q8_0", 32, 34, true}, q8_0, {0, -1}},        {9, {"Q8_1", 32, 40, false}, nullptr},
    {10, {"Q2_K", 256, 84, true}, q2_k, {80, 82}},      {11, {"Q3_K", 256, 110, true}, q3_k, {108, -1}},
    {12, {"Q4_K", 256, 144, true}, q4_k, {0, 2}},     {13, {"Q5_K", 256, 176, true}, q5_k, {0, 2}},
    {14, {"Q6_K", 256, 210, true}, q6_k, {208, -1}},     {15, {"Q8_K", 256, 292, false}, nullptr},
    {16, {"IQ2_XXS", 256, 66, false}, nullptr}, {17, {"IQ2_XS", 256, 74, false}, nullptr},
    {18, {"IQ3_XXS", 256, 98, false}, nullptr}, {19, {"IQ1_S", 256, 50, false}, nullptr},
    {20, {"IQ4_NL", 32, 18, false}, nullptr}, {21, {"IQ3_S", 256, 110, false}, nullptr},
    {22, {"IQ2_S", 256, 82, false}, nullptr}, {23, {"IQ4_XS", 256, 136, false}, nullptr},
    {24, {"I8", 1, 1, false}, nullptr},       {25, {"I16", 1, 2, false}, nullptr},
    {26, {"I32", 1, 4, false}, nullptr},      {27, {"I64", 1, 8, false}, nullptr},
    {28, {"F64", 1, 8, false}, nullptr},      {29, {"IQ1_M", 256, 56, false}, nullptr},
    {30, {"BF16", 1, 2, true}, nullptr},      {34, {"TQ1_0", 256, 54, false}, nullptr},
    {35, {"TQ2_0", 256, 66, false}, nullptr}, {39, {"MXFP4", 32, 17, false}, nullptr},
};

const TypeRow* find_type(uint32_t number) {
    for (const TypeRow& r : kTypes)
        if (r.number == number) return &r;
    return nullptr;
}

}  // namespace

std::optional<GgmlTypeInfo> ggml_type_info(uint32_t type) {
    const TypeRow* r = find_type(type);
    if (!r) return std::nullopt;
    return r->info;
}

void ggml_dequantize(GgmlType type, const uint8_t* blocks, int64_t n, float* out) {
    const TypeRow* r = find_type(uint32_t(type));
    if (!r || !r->info.decodable)
        throw std::invalid_argument("ggml_dequantize: type " + std::to_string(uint32_t(type)) +
                                    (r ? " (" + std::string(r->info.name) + ")" : std::string()) + " is not decoded");
    if (n < 0 || n % r->info.block_size)
        throw std::invalid_argument("ggml_dequantize: " + std::to_string(n) + " values is not a multiple of " +
                                    std::string(r->info.name) + "'s block size " + std::to_string(r->info.block_size));
    switch (type) {
        case GgmlType::F32:
            std::memcpy(out, blocks, size_t(n) * 4);
            return;
        case GgmlType::F16:
            for (int64_t i = 0; i < n; ++i) out[i] = half_at(blocks + 2 * i);
            return;
        case GgmlType::BF16:
            for (int64_t i = 0; i < n; ++i) {
                uint16_t h;
                std::memcpy(&h, blocks + 2 * i, 2);
                out[i] = bf16_to_f32(h);
            }
            return;
        default:
            break;
    }
    const int64_t nb = n / r->info.block_size;
    for (int64_t i = 0; i < nb; ++i) r->block(blocks + i * r->info.block_bytes, out + i * r->info.block_size);
}

void ggml_count_nonfinite(GgmlType type, const uint8_t* blocks, int64_t n, int64_t base, NonfiniteCount& count) {
    const TypeRow* r = find_type(uint32_t(type));
    if (!r || !r->info.decodable || !r->block || n % r->info.block_size)
        throw std::invalid_argument("ggml_count_nonfinite: not a block-quantized type, or n not whole blocks");
    const auto finite_half = [](const uint8_t* p) { return ((p[1] >> 2) & 0x1F) != 0x1F; };  // exponent not all ones
    float values[kQKK];
    const int64_t nb = n / r->info.block_size;
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* b = blocks + i * r->info.block_bytes;
        bool finite = true;
        for (const int16_t at : r->scale_at) finite = finite && (at < 0 || finite_half(b + at));
        if (finite) continue;  // finite scales times small integers: every value of the block is finite
        r->block(b, values);
        count.scan(values, r->info.block_size, base + i * r->info.block_size);
    }
}

int64_t ggml_row_bytes(uint32_t type, int64_t cols) {
    const TypeRow* r = find_type(type);
    if (!r || cols % r->info.block_size)
        throw std::invalid_argument("ggml_row_bytes: " + std::to_string(cols) + " values of type " + std::to_string(type));
    return cols / r->info.block_size * r->info.block_bytes;
}

void ggml_dequantize_rows(const Tensor& t, int64_t r0, int64_t n, float* out) {
    if (!t.is_ggml() || t.shape.size() != 2 || r0 < 0 || n < 0 || r0 + n > t.shape[0])
        throw std::invalid_argument("ggml_dequantize_rows: rows [" + std::to_string(r0) + ", " + std::to_string(r0 + n) +
                                    ") of a tensor " + t.shape_str() + (t.is_ggml() ? "" : " not in ggml blocks"));
    const int64_t cols = t.shape[1], row_bytes = ggml_row_bytes(t.ggml_type, cols);
    ggml_dequantize(GgmlType(t.ggml_type), t.block_data() + r0 * row_bytes, n * cols, out);
}

}  // namespace ts
