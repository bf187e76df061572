// Products with Q4_0 / Q8_0 weights on activations rounded to Q8_0 (core/kernels/quant_gemm.h).
//
// Layout. The activations are quantized once per product: per row, int8 values, and per 32-block the f16-rounded
// scale and -offset · Σq (below). The weights are regrouped per call, 16 output features at a time, so that one
// 64-byte vector holds, for each of the 16 features, 4 consecutive weights of a block as unsigned bytes: the
// AVX-512 VNNI instruction vpdpbusd then adds, in each feature's 32-bit lane, the products of those 4 weights with
// 4 activation bytes broadcast to every lane. Eight such steps are one block for 16 features and one row of x.
// Unsigned weights: a Q4_0 value q - 8 is stored as q (0..15) and a Q8_0 value v as v + 128 (0..255); the integer
// sum then carries offset · Σ x_q too, which the lane starts from subtracting (-offset · Σ x_q, exact in int32).
// Each block's integer sum is scaled in float32 and added in block order with one fused multiply-add, in the
// vector kernel and the portable one alike, so the two agree bit for bit.
#include "core/kernels/quant_gemm.h"

#include "core/kernels/quants.h"
#include "core/model/half.h"
#include "core/model/model.h"

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__AVX512F__) && defined(__AVX512VNNI__)
#include <immintrin.h>
#define TS_INT8_VNNI 1
#endif

namespace ts {

namespace {

std::atomic<QuantActivations> g_quant_activations{QuantActivations::Float};

constexpr int kBlock = 32;    // values per Q8_0 / Q4_0 block
constexpr int kGroup = 16;    // output features per regrouped panel (one 32-bit lane each)
constexpr int kMaxRows = 12;  // rows of x per kernel call (12 int + 12 float accumulators)

// The activations of a product as Q8_0 blocks: q (N, I) int8; per (row, block) the scale d_x (the f16 value ggml
// stores, widened) and start = -offset · Σ q.
struct QuantRows {
    std::vector<int8_t> q;
    std::vector<float> d;
    std::vector<int32_t> start;
    int64_t n_blocks = 0;
};

// Rounds x to Q8_0 as ggml's x86 quantize_row_q8_0: d = max|x| / 127 stored as f16; q = round(x · (127 / max|x|)),
// ties to even. False when a value is NaN or ±Inf.
bool quantize_rows(const MatrixRM& x, int offset, QuantRows& qr, bool portable) {
    const int64_t N = x.rows(), I = x.cols(), nb = I / kBlock;
    qr.n_blocks = nb;
    qr.q.resize(size_t(N * I));
    qr.d.resize(size_t(N * nb));
    qr.start.resize(size_t(N * nb));
    for (int64_t r = 0; r < N; ++r) {
        for (int64_t b = 0; b < nb; ++b) {
            const float* v = x.data() + r * I + b * kBlock;
#if defined(TS_INT8_VNNI)
            // The same steps 16 lanes at a time (roundscale to nearest = nearbyint in the default rounding mode).
            if (!portable) {
                const __m512 sign = _mm512_set1_ps(-0.0f), big = _mm512_set1_ps(FLT_MAX);
                const __m512 v0 = _mm512_loadu_ps(v), v1 = _mm512_loadu_ps(v + 16);
                const __m512 a0 = _mm512_andnot_ps(sign, v0), a1 = _mm512_andnot_ps(sign, v1);
                if ((_mm512_cmp_ps_mask(a0, big, _CMP_LE_OQ) & _mm512_cmp_ps_mask(a1, big, _CMP_LE_OQ)) != 0xffff)
                    return false;
                const float amax = _mm512_reduce_max_ps(_mm512_max_ps(a0, a1));
                const __m512 id = _mm512_set1_ps(amax != 0.0f ? 127.0f / amax : 0.0f);
                constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
                const __m512i q0 = _mm512_cvtps_epi32(_mm512_roundscale_ps(_mm512_mul_ps(v0, id), kRound));
                const __m512i q1 = _mm512_cvtps_epi32(_mm512_roundscale_ps(_mm512_mul_ps(v1, id), kRound));
                int8_t* q = qr.q.data() + r * I + b * kBlock;
                _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm512_cvtepi32_epi8(q0));
                _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16), _mm512_cvtepi32_epi8(q1));
                qr.d[size_t(r * nb + b)] = f16_to_f32(f32_to_f16(amax / 127.0f));
                qr.start[size_t(r * nb + b)] = -offset * _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
                continue;
            }
#endif
            float amax = 0.0f;
            bool finite = true;
            for (int k = 0; k < kBlock; ++k) {
                const float a = std::fabs(v[k]);
                finite = finite && a <= FLT_MAX;
                amax = std::max(amax, a);
            }
            if (!finite) return false;
            const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
            int8_t* q = qr.q.data() + r * I + b * kBlock;
            int32_t sum = 0;
            for (int k = 0; k < kBlock; ++k) {
                q[k] = int8_t(std::nearbyint(v[k] * id));
                sum += q[k];
            }
            qr.d[size_t(r * nb + b)] = f16_to_f32(f32_to_f16(amax / 127.0f));
            qr.start[size_t(r * nb + b)] = -offset * sum;
        }
    }
    return true;
}

int offset_of(uint32_t type) { return type == uint32_t(GgmlType::Q4_0) ? 8 : 128; }

// Features [o0, o0 + valid) of W regrouped: wq[b][k4][j][t] = unsigned weight 4·k4 + t of block b of feature o0 + j
// (512 bytes per block), wd[b][j] = that block's scale; features past `valid` are 0 with scale 0.
void regroup(const Tensor& w, int64_t o0, int valid, std::vector<uint8_t>& wq, std::vector<float>& wd) {
    const int64_t I = w.shape[1], nb = I / kBlock;
    const int64_t row_bytes = ggml_row_bytes(w.ggml_type, I);
    const bool q4 = w.ggml_type == uint32_t(GgmlType::Q4_0);
    const int block_bytes = q4 ? 18 : 34;
    wq.assign(size_t(nb * kGroup * kBlock), 0);
    wd.assign(size_t(nb * kGroup), 0.0f);
    uint8_t v[kBlock];
    for (int j = 0; j < valid; ++j) {
        const uint8_t* row = w.block_data() + (o0 + j) * row_bytes;
        for (int64_t b = 0; b < nb; ++b) {
            const uint8_t* blk = row + b * block_bytes;
            uint16_t dh;
            std::memcpy(&dh, blk, 2);
            wd[size_t(b * kGroup + j)] = f16_to_f32(dh);
            if (q4) {
                for (int m = 0; m < kBlock / 2; ++m) {
                    v[m] = blk[2 + m] & 0x0F;
                    v[m + kBlock / 2] = blk[2 + m] >> 4;
                }
            } else {
                for (int m = 0; m < kBlock; ++m) v[m] = uint8_t(blk[2 + m] ^ 0x80u);  // int8 v -> v + 128
            }
            uint8_t* dst = wq.data() + b * kGroup * kBlock + j * 4;
            for (int k4 = 0; k4 < kBlock / 4; ++k4) std::memcpy(dst + k4 * kGroup * 4, v + 4 * k4, 4);
        }
    }
}

#if defined(TS_INT8_VNNI)
// Four dwords at each of 16 addresses p[j] (j = 0..15) transposed: out[m] lane j = dword m at p[j]. Rows j, j+4,
// j+8, j+12 share a vector (one per 128-bit lane), then a 4 x 4 transpose inside each lane puts lane L's dwords in
// the order 4L, 4L+1, 4L+2, 4L+3.
inline void transpose_16x4(const uint8_t* const* p, int at, __m512i out[4]) {
    __m512i a[4];
    for (int i = 0; i < 4; ++i) {
        __m512i v = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p[i] + at)));
        v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p[i + 4] + at)), 1);
        v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p[i + 8] + at)), 2);
        a[i] = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p[i + 12] + at)), 3);
    }
    const __m512i t0 = _mm512_unpacklo_epi32(a[0], a[1]), t1 = _mm512_unpackhi_epi32(a[0], a[1]);
    const __m512i t2 = _mm512_unpacklo_epi32(a[2], a[3]), t3 = _mm512_unpackhi_epi32(a[2], a[3]);
    out[0] = _mm512_unpacklo_epi64(t0, t2);
    out[1] = _mm512_unpackhi_epi64(t0, t2);
    out[2] = _mm512_unpacklo_epi64(t1, t3);
    out[3] = _mm512_unpackhi_epi64(t1, t3);
}

// The same regrouping with vector transposes: vector k4 holds, in lane j, the dword of feature o0 + j's block with
// weights 4·k4 .. 4·k4 + 3 (Q8_0: quant bytes 4·k4.., each + 128; Q4_0: the low nibbles of quant dword k4 for
// k4 < 4, the high nibbles of dword k4 - 4 after). Features past `valid` read a block of zeros (scale 0).
void regroup_vnni(const Tensor& w, int64_t o0, int valid, std::vector<uint8_t>& wq, std::vector<float>& wd) {
    const int64_t I = w.shape[1], nb = I / kBlock;
    const int64_t row_bytes = ggml_row_bytes(w.ggml_type, I);
    const bool q4 = w.ggml_type == uint32_t(GgmlType::Q4_0);
    const int block_bytes = q4 ? 18 : 34;
    wq.resize(size_t(nb * kGroup * kBlock));
    wd.resize(size_t(nb * kGroup));
    static const uint8_t zeros[64] = {};
    const uint8_t* p[kGroup];
    for (int j = 0; j < kGroup; ++j) p[j] = j < valid ? w.block_data() + (o0 + j) * row_bytes : zeros;
    const int64_t step = kGroup * kBlock;
    const __m512i low4 = _mm512_set1_epi8(0x0F), flip = _mm512_set1_epi8(int8_t(0x80));
    alignas(32) uint16_t dh[kGroup];
    __m512i g[4];
    for (int64_t b = 0; b < nb; ++b) {
        for (int j = 0; j < kGroup; ++j) std::memcpy(&dh[j], p[j], 2);
        _mm512_storeu_ps(wd.data() + b * kGroup,
                         _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(dh))));
        uint8_t* dst = wq.data() + b * step;
        transpose_16x4(p, 2, g);
        if (q4) {
            for (int k4 = 0; k4 < 4; ++k4) {
                _mm512_storeu_si512(dst + k4 * 64, _mm512_and_si512(g[k4], low4));
                _mm512_storeu_si512(dst + (k4 + 4) * 64, _mm512_and_si512(_mm512_srli_epi32(g[k4], 4), low4));
            }
        } else {
            for (int k4 = 0; k4 < 4; ++k4) _mm512_storeu_si512(dst + k4 * 64, _mm512_xor_si512(g[k4], flip));
            transpose_16x4(p, 18, g);
            for (int k4 = 0; k4 < 4; ++k4) _mm512_storeu_si512(dst + (k4 + 4) * 64, _mm512_xor_si512(g[k4], flip));
        }
        for (int j = 0; j < valid; ++j) p[j] += block_bytes;
    }
}
#endif

// out[r, j] for rows [0, R) of the quantized activations and the regrouped features (portable).
void kernel_portable(const uint8_t* wq, const float* wd, const QuantRows& qr, int64_t I, int64_t r0, int R, float* out,
                     int64_t ldo, int valid) {
    const int64_t nb = qr.n_blocks;
    for (int r = 0; r < R; ++r) {
        const int8_t* xq = qr.q.data() + (r0 + r) * I;
        for (int j = 0; j < valid; ++j) {
            float acc = 0.0f;
            for (int64_t b = 0; b < nb; ++b) {
                int32_t s = qr.start[size_t((r0 + r) * nb + b)];
                const uint8_t* wb = wq + b * kGroup * kBlock + j * 4;
                for (int k4 = 0; k4 < kBlock / 4; ++k4)
                    for (int t = 0; t < 4; ++t)
                        s += int32_t(wb[k4 * kGroup * 4 + t]) * int32_t(xq[b * kBlock + k4 * 4 + t]);
                const float scale = wd[size_t(b * kGroup + j)] * qr.d[size_t((r0 + r) * nb + b)];
                acc = std::fma(float(s), scale, acc);
            }
            out[r * ldo + j] = acc;
        }
    }
}

#if defined(TS_INT8_VNNI)
template <int R>
void kernel_vnni(const uint8_t* wq, const float* wd, const QuantRows& qr, int64_t I, int64_t r0, float* out,
                 int64_t ldo, int valid) {
    const int64_t nb = qr.n_blocks;
    const int8_t* xq = qr.q.data() + r0 * I;
    const float* xd = qr.d.data() + r0 * nb;
    const int32_t* xs = qr.start.data() + r0 * nb;
    __m512 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        __m512i s[R];
        for (int r = 0; r < R; ++r) s[r] = _mm512_set1_epi32(xs[r * nb + b]);
        const uint8_t* wb = wq + b * kGroup * kBlock;
        for (int k4 = 0; k4 < kBlock / 4; ++k4) {
            const __m512i wv = _mm512_loadu_si512(wb + k4 * 64);
            for (int r = 0; r < R; ++r) {
                int32_t x4;
                std::memcpy(&x4, xq + r * I + b * kBlock + k4 * 4, 4);
                s[r] = _mm512_dpbusd_epi32(s[r], wv, _mm512_set1_epi32(x4));
            }
        }
        const __m512 dw = _mm512_loadu_ps(wd + b * kGroup);
        for (int r = 0; r < R; ++r)
            acc[r] =
                _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[r]), _mm512_mul_ps(dw, _mm512_set1_ps(xd[r * nb + b])), acc[r]);
    }
    const __mmask16 m = valid >= kGroup ? __mmask16(0xffff) : __mmask16((1u << valid) - 1);
    for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(out + r * ldo, m, acc[r]);
}

using VnniFn = void (*)(const uint8_t*, const float*, const QuantRows&, int64_t, int64_t, float*, int64_t, int);
constexpr VnniFn kVnni[kMaxRows + 1] = {nullptr,         &kernel_vnni<1>, &kernel_vnni<2>,  &kernel_vnni<3>,
                                        &kernel_vnni<4>, &kernel_vnni<5>, &kernel_vnni<6>,  &kernel_vnni<7>,
                                        &kernel_vnni<8>, &kernel_vnni<9>, &kernel_vnni<10>, &kernel_vnni<11>,
                                        &kernel_vnni<12>};
#endif

void groups_range(const QuantRows& qr, const Tensor& w, MatrixRM& out, int64_t g0, int64_t g1, bool portable) {
    const int64_t N = out.rows(), O = w.shape[0], I = w.shape[1];
    thread_local std::vector<uint8_t> wq;  // per thread: the regrouped weights of one group of features
    thread_local std::vector<float> wd;
    for (int64_t g = g0; g < g1; ++g) {
        const int64_t o0 = g * kGroup;
        const int valid = int(std::min<int64_t>(kGroup, O - o0));
#if defined(TS_INT8_VNNI)
        if (!portable) regroup_vnni(w, o0, valid, wq, wd);
        else
#endif
            regroup(w, o0, valid, wq, wd);
        for (int64_t r0 = 0; r0 < N; r0 += kMaxRows) {
            const int R = int(std::min<int64_t>(kMaxRows, N - r0));
            float* o = out.data() + r0 * O + o0;
#if defined(TS_INT8_VNNI)
            if (!portable) {
                kVnni[R](wq.data(), wd.data(), qr, I, r0, o, O, valid);
                continue;
            }
#endif
            kernel_portable(wq.data(), wd.data(), qr, I, r0, R, o, O, valid);
        }
    }
}

void check(const MatrixRM& x, const Tensor& w) {
    if (!w.is_ggml() || w.shape.size() != 2)
        throw std::invalid_argument("matmul_int8_activations: the weight " + w.shape_str() + " is not in ggml blocks");
    if (x.cols() != w.shape[1])
        throw std::invalid_argument("matmul_int8_activations: x has " + std::to_string(x.cols()) +
                                    " columns, the weight " + w.shape_str() + " needs " + std::to_string(w.shape[1]));
}

bool run(const MatrixRM& x, const Tensor& w, MatrixRM& out, int n_threads, bool portable) {
    check(x, w);
    if (!int8_product_supported(w.ggml_type) || w.shape[1] % kBlock != 0) return false;
    thread_local QuantRows qr;
    if (!quantize_rows(x, offset_of(w.ggml_type), qr, portable)) return false;
    const int64_t N = x.rows(), O = w.shape[0];
    out.resize(N, O);
    if (N == 0 || O == 0) return true;
    const int64_t ng = (O + kGroup - 1) / kGroup;
    if (n_threads <= 1 || ng < 2 * n_threads) {
        groups_range(qr, w, out, 0, ng, portable);
        return true;
    }
    const QuantRows& shared = qr;  // thread_local: the team's threads read the caller's copy
#pragma omp parallel for num_threads(n_threads) schedule(static)
    for (int t = 0; t < n_threads; ++t)
        groups_range(shared, w, out, ng * t / n_threads, ng * (t + 1) / n_threads, portable);
    return true;
}

}  // namespace

std::string_view name_of(QuantActivations a) { return a == QuantActivations::Int8 ? "int8" : "float"; }

std::optional<QuantActivations> parse_quant_activations(std::string_view name) {
    if (name == "float") return QuantActivations::Float;
    if (name == "int8") return QuantActivations::Int8;
    return std::nullopt;
}

QuantActivations set_quant_activations(QuantActivations a) {
    g_quant_activations.store(a);
    return a;
}

QuantActivations quant_activations() { return g_quant_activations.load(); }

bool has_int8_products(const Model& m) {
    for (const auto& [name, t] : m.stored_weights())
        if (t.is_ggml() && int8_product_supported(t.ggml_type)) return true;
    return false;
}

bool int8_product_supported(uint32_t ggml_type) {
    return ggml_type == uint32_t(GgmlType::Q4_0) || ggml_type == uint32_t(GgmlType::Q8_0);
}

bool ggml_dequantize_to_panel(const Tensor& w, int64_t o0, int valid, float* panel, int64_t ld) {
#if defined(TS_INT8_VNNI)
    if (!w.is_ggml() || !int8_product_supported(w.ggml_type) || w.shape.size() != 2 || w.shape[1] % kBlock)
        return false;
    thread_local std::vector<uint8_t> wq;
    thread_local std::vector<float> wd;
    regroup_vnni(w, o0, valid, wq, wd);
    // Lane j of regrouped vector k4 holds weights 4·k4 .. 4·k4 + 3 of feature o0 + j as unsigned bytes (q, or v + 128):
    // value = float(byte - offset) · d, the one product ggml's dequantize_row_q4_0 / _q8_0 computes.
    const __m512i offset = _mm512_set1_epi32(offset_of(w.ggml_type)), byte = _mm512_set1_epi32(0xFF);
    const int64_t nb = w.shape[1] / kBlock;
    for (int64_t b = 0; b < nb; ++b) {
        const __m512 d = _mm512_loadu_ps(wd.data() + b * kGroup);
        for (int k4 = 0; k4 < kBlock / 4; ++k4) {
            const __m512i v = _mm512_loadu_si512(wq.data() + b * kGroup * kBlock + k4 * 64);
            for (int t = 0; t < 4; ++t) {
                const __m512i q = _mm512_sub_epi32(_mm512_and_si512(_mm512_srli_epi32(v, 8 * t), byte), offset);
                _mm512_storeu_ps(panel + (b * kBlock + 4 * k4 + t) * ld, _mm512_mul_ps(_mm512_cvtepi32_ps(q), d));
            }
        }
    }
    return true;
#else
    (void)w, (void)o0, (void)valid, (void)panel, (void)ld;
    return false;
#endif
}

bool matmul_int8_activations(const MatrixRM& x, const Tensor& w, MatrixRM& out, int n_threads) {
    return run(x, w, out, n_threads, false);
}

bool detail::matmul_int8_activations_portable(const MatrixRM& x, const Tensor& w, MatrixRM& out) {
    return run(x, w, out, 1, true);
}

}  // namespace ts
