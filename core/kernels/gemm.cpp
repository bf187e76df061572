// Panel-ordered float32 weights and the product x · Wᵀ (core/kernels/gemm.h), and matmul_weight_t, which picks the product
// for a weight's storage: panels, a GGUF file's blocks dequantized into panels (or llama.cpp's 8-bit arithmetic,
// core/kernels/quant_gemm.h), half precision widened panel by panel, or plain row-major float32.
#include "core/kernels/gemm.h"

#include "core/model/half.h"
#include "core/model/model.h"
#include "core/kernels/quant_gemm.h"
#include "core/kernels/threads.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

#if defined(__AVX__)
#include <immintrin.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace ts {

namespace {

constexpr int64_t kP = kPanelRows;
/// Rows of x per kernel call: 2 * 12 accumulators of 16 floats, 2 panel registers and one broadcast fit the 32
/// AVX-512 registers.
constexpr int kMaxRows = 12;

int64_t n_panels(int64_t O) { return (O + kP - 1) / kP; }

// How a panel's values are stored: float32, or half-precision bits widened to float32 as the kernel loads them
// (exact), so a half-precision matrix is multiplied in float32 without a widened copy.
struct F32 {
    using T = float;
    static float scalar(float v) { return v; }
};
struct BF16 {
    using T = uint16_t;
    static float scalar(uint16_t v) { return bf16_to_f32(v); }
};
struct F16 {
    using T = uint16_t;
    static float scalar(uint16_t v) { return f16_to_f32(v); }
};

#if defined(__AVX512F__)
// One row of a panel slice (32 values) as two vectors of 16 floats, half precision widened exactly.
template <class E>
inline void load_row(const typename E::T* p, __m512& lo, __m512& hi) {
    if constexpr (std::is_same_v<E, F32>) {
        lo = _mm512_load_ps(p);
        hi = _mm512_load_ps(p + 16);
        return;
    } else {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
        const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16));
        if constexpr (std::is_same_v<E, BF16>) {  // bfloat16: the upper 16 bits of a float
            lo = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(a), 16));
            hi = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(b), 16));
        } else {
            lo = _mm512_cvtph_ps(a);
            hi = _mm512_cvtph_ps(b);
        }
    }
}

// One block of the product: out[c, 0..valid) (+)= sum over i in [0, depth) of x[c, i] * P[i, 0..valid) for c < C,
// where P is a panel slice (depth, 32) and x rows are ldx apart. `first`: the block starts the sum (else it adds
// to what out holds).
template <class E, int C>
void kernel(const typename E::T* P, const float* x, int64_t ldx, int64_t depth, float* out, int64_t ldo, bool first,
            int valid) {
    const __mmask16 m0 = valid >= 16 ? __mmask16(0xffff) : __mmask16((1u << valid) - 1);
    const __mmask16 m1 = valid >= 32 ? __mmask16(0xffff) : valid <= 16 ? __mmask16(0) : __mmask16((1u << (valid - 16)) - 1);
    __m512 a0[C], a1[C];
    for (int c = 0; c < C; ++c) {
        a0[c] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m0, out + c * ldo);
        a1[c] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m1, out + c * ldo + 16);
    }
    for (int64_t i = 0; i < depth; ++i) {
        __m512 p0, p1;
        load_row<E>(P + i * kP, p0, p1);
        for (int c = 0; c < C; ++c) {
            const __m512 b = _mm512_set1_ps(x[c * ldx + i]);
            a0[c] = _mm512_fmadd_ps(p0, b, a0[c]);
            a1[c] = _mm512_fmadd_ps(p1, b, a1[c]);
        }
    }
    for (int c = 0; c < C; ++c) {
        _mm512_mask_storeu_ps(out + c * ldo, m0, a0[c]);
        _mm512_mask_storeu_ps(out + c * ldo + 16, m1, a1[c]);
    }
}
#endif

// The same block in plain C++ (the compiler vectorizes the j loops for whatever the target has).
template <class E, int C>
void kernel_portable(const typename E::T* P, const float* x, int64_t ldx, int64_t depth, float* out, int64_t ldo,
                     bool first, int valid) {
    float acc[C][kP];
    for (int c = 0; c < C; ++c)
        for (int j = 0; j < kP; ++j) acc[c][j] = first || j >= valid ? 0.0f : out[c * ldo + j];
    float p[kP];
    for (int64_t i = 0; i < depth; ++i) {
        for (int j = 0; j < kP; ++j) p[j] = E::scalar(P[i * kP + j]);
        for (int c = 0; c < C; ++c) {
            const float b = x[c * ldx + i];
            for (int j = 0; j < kP; ++j) acc[c][j] += p[j] * b;
        }
    }
    for (int c = 0; c < C; ++c)
        for (int j = 0; j < valid; ++j) out[c * ldo + j] = acc[c][j];
}

#if !defined(__AVX512F__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define TS_GEMM_AVX2 1
// AVX2 has 16 vector registers of 8 floats: the portable kernel's 12 rows × 32 columns of accumulators spill. This
// one takes a block of G <= 6 rows × 16 columns (columns [j0, j0 + 16) of the panel): 2G accumulators, two panel
// vectors and a broadcast fit, the classic 6 × 16 shape. Each output is still summed over i in order, as in the
// portable kernel.
// 8 values of a panel row as floats: float32 as stored, half precision widened exactly (F16C for IEEE half,
// a 16-bit shift for bfloat16, whose bits are a float's upper half).
template <class E>
inline __m256 load8(const typename E::T* p) {
    if constexpr (std::is_same_v<E, F32>) {
        return _mm256_loadu_ps(p);
    } else if constexpr (std::is_same_v<E, BF16>) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    } else {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    }
}

template <class E, int G>
void kernel_avx2_half(const typename E::T* P, const float* x, int64_t ldx, int64_t depth, float* out, int64_t ldo,
                      bool first, int valid, int j0) {
    const int nv = std::clamp(valid - j0, 0, 16);
    if (nv == 0) return;
    __m256 a0[G], a1[G];
    alignas(32) float tmp[16];
    for (int c = 0; c < G; ++c) {
        if (first) {
            a0[c] = a1[c] = _mm256_setzero_ps();
        } else if (nv == 16) {
            a0[c] = _mm256_loadu_ps(out + c * ldo + j0);
            a1[c] = _mm256_loadu_ps(out + c * ldo + j0 + 8);
        } else {
            for (int j = 0; j < 16; ++j) tmp[j] = j < nv ? out[c * ldo + j0 + j] : 0.0f;
            a0[c] = _mm256_load_ps(tmp);
            a1[c] = _mm256_load_ps(tmp + 8);
        }
    }
    for (int64_t i = 0; i < depth; ++i) {
        const __m256 p0 = load8<E>(P + i * kP + j0);
        const __m256 p1 = load8<E>(P + i * kP + j0 + 8);
        for (int c = 0; c < G; ++c) {
            const __m256 b = _mm256_broadcast_ss(x + c * ldx + i);
            a0[c] = _mm256_fmadd_ps(p0, b, a0[c]);
            a1[c] = _mm256_fmadd_ps(p1, b, a1[c]);
        }
    }
    for (int c = 0; c < G; ++c) {
        if (nv == 16) {
            _mm256_storeu_ps(out + c * ldo + j0, a0[c]);
            _mm256_storeu_ps(out + c * ldo + j0 + 8, a1[c]);
        } else {
            _mm256_store_ps(tmp, a0[c]);
            _mm256_store_ps(tmp + 8, a1[c]);
            for (int j = 0; j < nv; ++j) out[c * ldo + j0 + j] = tmp[j];
        }
    }
}

template <class E, int G>
void kernel_avx2_rows(const typename E::T* P, const float* x, int64_t ldx, int64_t depth, float* out, int64_t ldo,
                      bool first, int valid) {
    kernel_avx2_half<E, G>(P, x, ldx, depth, out, ldo, first, valid, 0);
    kernel_avx2_half<E, G>(P, x, ldx, depth, out, ldo, first, valid, 16);
}

// C rows in groups of up to 6.
template <class E, int C>
void kernel_avx2(const typename E::T* P, const float* x, int64_t ldx, int64_t depth, float* out, int64_t ldo,
                 bool first, int valid) {
    for (int c0 = 0; c0 < C; c0 += 6) {
        const float* xc = x + c0 * ldx;
        float* oc = out + c0 * ldo;
        switch (std::min(6, C - c0)) {
        case 1: kernel_avx2_rows<E, 1>(P, xc, ldx, depth, oc, ldo, first, valid); break;
        case 2: kernel_avx2_rows<E, 2>(P, xc, ldx, depth, oc, ldo, first, valid); break;
        case 3: kernel_avx2_rows<E, 3>(P, xc, ldx, depth, oc, ldo, first, valid); break;
        case 4: kernel_avx2_rows<E, 4>(P, xc, ldx, depth, oc, ldo, first, valid); break;
        case 5: kernel_avx2_rows<E, 5>(P, xc, ldx, depth, oc, ldo, first, valid); break;
        default: kernel_avx2_rows<E, 6>(P, xc, ldx, depth, oc, ldo, first, valid); break;
        }
    }
}
#endif

template <class E>
using KernelFn = void (*)(const typename E::T*, const float*, int64_t, int64_t, float*, int64_t, bool, int);

// The kernel for this build's target (AVX-512 when the compiler targets it, else AVX2 + FMA + F16C, for float32
// and half-precision panels alike) and the portable one.
template <class E, int C>
struct Native {
    static void run(const typename E::T* P, const float* x, int64_t ldx, int64_t d, float* o, int64_t ldo, bool f,
                    int v) {
#if defined(__AVX512F__)
        kernel<E, C>(P, x, ldx, d, o, ldo, f, v);
#elif defined(TS_GEMM_AVX2)
        kernel_avx2<E, C>(P, x, ldx, d, o, ldo, f, v);
#else
        kernel_portable<E, C>(P, x, ldx, d, o, ldo, f, v);
#endif
    }
};
template <class E, int C>
struct Portable {
    static void run(const typename E::T* P, const float* x, int64_t ldx, int64_t d, float* o, int64_t ldo, bool f,
                    int v) {
        kernel_portable<E, C>(P, x, ldx, d, o, ldo, f, v);
    }
};

template <class E, template <class, int> class K>
const KernelFn<E>* kernels() {
    static constexpr KernelFn<E> table[kMaxRows + 1] = {
        nullptr,        &K<E, 1>::run, &K<E, 2>::run, &K<E, 3>::run,  &K<E, 4>::run,  &K<E, 5>::run, &K<E, 6>::run,
        &K<E, 7>::run,  &K<E, 8>::run, &K<E, 9>::run, &K<E, 10>::run, &K<E, 11>::run, &K<E, 12>::run};
    return table;
}

template <class E>
const typename E::T* panel_values(const Tensor& w) {
    if constexpr (std::is_same_v<E, F32>)
        return w.panels.data();
    else
        return w.half.data();
}

// Panel p (output features [32p, 32p + 32), `panel` its values in panel order) times every row of x into out's
// columns of those features: for each 256-deep block of the inner dimension, every row of x in chunks of up to 12
// (the panel slice, 32 KB, stays in L1 while the rows pass).
template <class E>
void panel_product(const MatrixRM& x, const typename E::T* panel, int64_t p, int64_t O, MatrixRM& out,
                   const KernelFn<E>* k) {
    const int64_t N = x.rows(), I = x.cols();
    const int valid = int(std::min(kP, O - p * kP));
    for (int64_t k0 = 0; k0 < I; k0 += kPanelDepth) {
        const int64_t depth = std::min(kPanelDepth, I - k0);
        for (int64_t n = 0; n < N; n += kMaxRows) {
            const int rows = int(std::min<int64_t>(kMaxRows, N - n));
            k[rows](panel + k0 * kP, x.data() + n * I + k0, I, depth, out.data() + n * O + p * kP, O, k0 == 0, valid);
        }
    }
}

// Panels [p0, p1) of the product.
template <class E>
void panels_range(const MatrixRM& x, const Tensor& w, MatrixRM& out, int64_t p0, int64_t p1, const KernelFn<E>* k) {
    const int64_t I = w.shape[1], O = w.shape[0];
    for (int64_t p = p0; p < p1; ++p) panel_product<E>(x, panel_values<E>(w) + p * kP * I, p, O, out, k);
}

// 32 rows of I floats (row-major) into panel order: panel[i * 32 + j] = rows[j * I + i]. 8 x 8 tiles transposed in
// registers where the build has AVX (a copy: the same floats).
void to_panel_order(const float* rows, int64_t I, float* panel) {
    int64_t i0 = 0;
#if defined(__AVX__)
    for (; i0 + 8 <= I; i0 += 8)
        for (int64_t j0 = 0; j0 < kP; j0 += 8) {
            __m256 r[8], t[8], u[8];
            for (int a = 0; a < 8; ++a) r[a] = _mm256_loadu_ps(rows + (j0 + a) * I + i0);
            for (int a = 0; a < 8; a += 2) {
                t[a] = _mm256_unpacklo_ps(r[a], r[a + 1]);
                t[a + 1] = _mm256_unpackhi_ps(r[a], r[a + 1]);
            }
            for (int a = 0; a < 8; a += 4) {
                u[a] = _mm256_shuffle_ps(t[a], t[a + 2], _MM_SHUFFLE(1, 0, 1, 0));
                u[a + 1] = _mm256_shuffle_ps(t[a], t[a + 2], _MM_SHUFFLE(3, 2, 3, 2));
                u[a + 2] = _mm256_shuffle_ps(t[a + 1], t[a + 3], _MM_SHUFFLE(1, 0, 1, 0));
                u[a + 3] = _mm256_shuffle_ps(t[a + 1], t[a + 3], _MM_SHUFFLE(3, 2, 3, 2));
            }
            for (int a = 0; a < 4; ++a) {
                _mm256_storeu_ps(panel + (i0 + a) * kP + j0, _mm256_permute2f128_ps(u[a], u[a + 4], 0x20));
                _mm256_storeu_ps(panel + (i0 + a + 4) * kP + j0, _mm256_permute2f128_ps(u[a], u[a + 4], 0x31));
            }
        }
#endif
    for (int64_t i = i0; i < I; ++i)
        for (int64_t j = 0; j < kP; ++j) panel[i * kP + j] = rows[j * I + i];
}

// A GGUF file's quantized matrix: each panel's 32 rows dequantized (ggml_dequantize) and put in panel order in a
// per-thread buffer, then multiplied by the float32 kernel, so the product equals that of the dequantized weight's
// own panels bit for bit (a quantized file and its float32 twin compute the same numbers).
void ggml_panels_range(const MatrixRM& x, const Tensor& w, MatrixRM& out, int64_t p0, int64_t p1) {
    const int64_t I = w.shape[1], O = w.shape[0];
    thread_local std::vector<float, Eigen::aligned_allocator<float>> rows, panel;
    if (rows.size() < size_t(kP * I)) rows.resize(size_t(kP * I));
    if (panel.size() < size_t(kP * I)) panel.resize(size_t(kP * I));
    const KernelFn<F32>* k = kernels<F32, Native>();
    for (int64_t p = p0; p < p1; ++p) {
        const int64_t valid = std::min(kP, O - p * kP);
        // Q4_0 / Q8_0: 16 rows at a time straight into panel order (vectorized, the same floats).
        if (ggml_dequantize_to_panel(w, p * kP, int(std::min<int64_t>(16, valid)), panel.data(), kP) &&
            ggml_dequantize_to_panel(w, p * kP + 16, int(std::max<int64_t>(0, valid - 16)), panel.data() + 16, kP)) {
            panel_product<F32>(x, panel.data(), p, O, out, k);
            continue;
        }
        ggml_dequantize_rows(w, p * kP, valid, rows.data());
        if (valid < kP) std::fill(rows.begin() + valid * I, rows.begin() + kP * I, 0.0f);
        to_panel_order(rows.data(), I, panel.data());
        panel_product<F32>(x, panel.data(), p, O, out, k);
    }
}

void check_panels(const MatrixRM& x, const Tensor& w) {
    if (!w.in_panels() || w.shape.size() != 2)
        throw std::invalid_argument("matmul_panels: the weight is not in panels (pack_panels)");
    if (x.cols() != w.shape[1])
        throw std::invalid_argument("matmul_panels: x has " + std::to_string(x.cols()) + " columns, the weight " +
                                    w.shape_str() + " needs " + std::to_string(w.shape[1]));
}

// out = x · Wᵀ for W row-major (O, I) as PyTorch stores nn.Linear weights (the half-precision path's widened
// panels). Eigen packs W as the product's left operand with a transposing gather, which for a few rows of x costs
// as much as the multiply itself. Below kFewRows rows the product is taken with a column-major result instead, so
// W is packed as the right operand from contiguous rows, and the (N, O) result is transposed into place.
constexpr int64_t kFewRows = 96;

template <class Out, class Weight>
void product_wt(const MatrixRM& x, const Weight& W, Out&& out) {
    if (x.rows() > 1 && x.rows() < kFewRows) {
        thread_local std::vector<float> col_major;  // grows only: a resize per shape reallocated on every call
        const size_t n = size_t(x.rows() * W.rows());
        if (col_major.size() < n) col_major.resize(n);
        Eigen::Map<Eigen::MatrixXf> cm(col_major.data(), x.rows(), W.rows());
        cm.noalias() = x * W.transpose();
        out = cm;
    } else {
        out.noalias() = x * W.transpose();
    }
}

// Hands the whole pages of [begin, end) back to the kernel; they are not read again (the weight is being moved into
// panels and freed after). Keeps the load's peak memory at about one copy of the weight. Linux only; elsewhere a no-op.
void release_pages(const void* begin, const void* end) {
#if defined(__linux__)
    const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t b = (reinterpret_cast<uintptr_t>(begin) + page - 1) / page * page;
    const uintptr_t e = reinterpret_cast<uintptr_t>(end) / page * page;
    if (e > b) madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED);
#else
    (void)begin;
    (void)end;
#endif
}

// Panels of src (O, I) row-major appended one at a time to reserved (untouched) memory, so dst's pages are touched
// only as they are filled; with `release`, the rows a panel consumed are released from src as it goes.
template <class T, class Vec>
void pack_values(const T* src, int64_t O, int64_t I, Vec& dst, bool release) {
    dst.reserve(size_t(n_panels(O) * kP * I));
    std::vector<T> block(size_t(kP * I));
    for (int64_t p0 = 0; p0 < O; p0 += kP) {
        const int64_t rows = std::min(kP, O - p0);
        std::fill(block.begin(), block.end(), T{0});  // the last panel's rows past O stay 0 (+0 in every format)
        for (int64_t j = 0; j < rows; ++j)
            for (int64_t i = 0; i < I; ++i) block[size_t(i * kP + j)] = src[(p0 + j) * I + i];
        dst.insert(dst.end(), block.begin(), block.end());
        if (release) release_pages(src + p0 * I, src + (p0 + rows) * I);
    }
}

Tensor pack(const Tensor& w, bool release) {
    if (w.in_panels() || w.shape.size() != 2)
        throw std::invalid_argument("pack_panels: needs a row-major float32 or half-precision rank-2 weight, got " +
                                    w.shape_str());
    const int64_t O = w.shape[0], I = w.shape[1];
    Tensor p;
    p.shape = w.shape;
    if (w.is_f32_rows()) {
        p.storage = Storage::F32Panels;
        pack_values(w.data.data(), O, I, p.panels, release);
    } else {
        p.storage = w.storage == Storage::BF16 ? Storage::BF16Panels : Storage::F16Panels;
        pack_values(w.half.data(), O, I, p.half, release);
    }
    return p;
}

// Row o of a panel-ordered weight, widened to float32: one value every 32.
template <class E>
void row_of(const Tensor& p, int64_t o, float* dst) {
    const int64_t I = p.shape[1];
    const typename E::T* src = panel_values<E>(p) + (o / kP) * kP * I + (o % kP);
    for (int64_t i = 0; i < I; ++i) dst[i] = E::scalar(src[i * kP]);
}

}  // namespace

Tensor pack_panels(const Tensor& w) { return pack(w, false); }

Tensor pack_panels(Tensor&& w) {
    Tensor p = pack(w, true);
    w = Tensor();  // its released pages are never read
    return p;
}

Tensor unpack_panels(const Tensor& p) {
    if (!p.in_panels() || p.shape.size() != 2)
        throw std::invalid_argument("unpack_panels: the tensor is not in panels");
    const int64_t O = p.shape[0], I = p.shape[1];
    Tensor w(p.shape);
    for (int64_t o = 0; o < O; ++o) panel_row(p, o, w.data.data() + o * I);
    return w;
}

void panel_row(const Tensor& p, int64_t o, float* dst) {
    if (!p.in_panels() || p.shape.size() != 2) throw std::invalid_argument("panel_row: the tensor is not in panels");
    const int64_t O = p.shape[0];
    if (o < 0 || o >= O)
        throw std::invalid_argument("panel_row: row " + std::to_string(o) + " outside [0, " + std::to_string(O) + ")");
    switch (p.storage) {
        case Storage::BF16Panels: row_of<BF16>(p, o, dst); return;
        case Storage::F16Panels: row_of<F16>(p, o, dst); return;
        default: row_of<F32>(p, o, dst); return;
    }
}

namespace {

template <class E, template <class, int> class K>
void run_panels(const MatrixRM& x, const Tensor& w, MatrixRM& out, int n_threads) {
    const int64_t N = x.rows(), O = w.shape[0], I = w.shape[1];
    const int64_t np = n_panels(O);
    const KernelFn<E>* k = kernels<E, K>();
    if (n_threads <= 1 || np < 2 * n_threads || double(N) * double(O) * double(I) < 1e6) {
        panels_range<E>(x, w, out, 0, np, k);
        return;
    }
#pragma omp parallel for num_threads(n_threads) schedule(static)
    for (int t = 0; t < n_threads; ++t) panels_range<E>(x, w, out, np * t / n_threads, np * (t + 1) / n_threads, k);
}

template <template <class, int> class K>
void dispatch_panels(const MatrixRM& x, const Tensor& w, MatrixRM& out, int n_threads) {
    check_panels(x, w);
    out.resize(x.rows(), w.shape[0]);
    if (x.rows() == 0) return;
    if (w.shape[1] == 0) {
        out.setZero();
        return;
    }
    switch (w.storage) {
        case Storage::BF16Panels: run_panels<BF16, K>(x, w, out, n_threads); return;
        case Storage::F16Panels: run_panels<F16, K>(x, w, out, n_threads); return;
        default: run_panels<F32, K>(x, w, out, n_threads); return;
    }
}

}  // namespace

void matmul_panels(const MatrixRM& x, const Tensor& w, MatrixRM& out, int n_threads) {
    dispatch_panels<Native>(x, w, out, n_threads);
}

void detail::matmul_panels_portable(const MatrixRM& x, const Tensor& w, MatrixRM& out) {
    dispatch_panels<Portable>(x, w, out, 1);
}

void matmul_weight_t(const MatrixRM& x, const Tensor& w, MatrixRM& out) {
    const int n_threads = compute_threads();
    if (w.in_panels()) {
        matmul_panels(x, w, out, n_threads);
        return;
    }
    const int64_t O = w.shape.at(0), I = w.shape.at(1), N = x.rows();
    out.resize(N, O);
    if (w.is_f32_rows()) {
        const ConstMapRM W = w.mat();
        if (n_threads == 1 || O < 64 * n_threads || double(N) * double(O) * double(I) < 1e6) {
            product_wt(x, W, out);
            return;
        }
        // One contiguous block of output features per thread, each an independent single-threaded product (Eigen
        // does not nest inside an OpenMP region). Measured on the shared 2-core VM: Eigen's own parallel GEMM,
        // whose threads spin-wait on each other's packed panels, ran 10x slower than one thread whenever the
        // machine was busy; blocks meet once per product.
        const int64_t chunk = (O + n_threads - 1) / n_threads;
#pragma omp parallel for num_threads(n_threads) schedule(static)
        for (int k = 0; k < n_threads; ++k) {
            const int64_t o0 = std::min<int64_t>(O, k * chunk), len = std::min<int64_t>(chunk, O - o0);
            if (len > 0) product_wt(x, W.middleRows(o0, len), out.middleCols(o0, len));
        }
        return;
    }
    // A GGUF file's Q4_0 / Q8_0 blocks on llama.cpp's arithmetic when chosen (activations rounded to 8 bits); a
    // product whose activations are not all finite, or another type, takes the float path below.
    if (w.is_ggml() && quant_activations() == QuantActivations::Int8 && matmul_int8_activations(x, w, out, n_threads))
        return;
    if (w.is_ggml()) {
        const int64_t np = n_panels(O);
        if (w.shape[1] == 0 || N == 0) {
            out.setZero();
            return;
        }
        if (n_threads <= 1 || np < 2 * n_threads || double(N) * double(O) * double(I) < 1e6) {
            ggml_panels_range(x, w, out, 0, np);
            return;
        }
#pragma omp parallel for num_threads(n_threads) schedule(static)
        for (int t = 0; t < n_threads; ++t) ggml_panels_range(x, w, out, np * t / n_threads, np * (t + 1) / n_threads);
        return;
    }
    // Half precision: widen kPanel rows of W (kPanel x I floats,
    // <= 2.5 MB for d_ff 4864) into a per-thread buffer and multiply; panels are independent, so threads split them
    // and each product runs single-threaded.
    constexpr int64_t kPanel = 128;
    const int64_t n_half_panels = (O + kPanel - 1) / kPanel;
#pragma omp parallel for num_threads(n_threads) if (n_threads > 1 && n_half_panels > 1) schedule(static)
    for (int64_t p = 0; p < n_half_panels; ++p) {
        thread_local std::vector<float> panel;
        const int64_t r0 = p * kPanel, r = std::min(kPanel, O - r0);
        if (panel.size() < size_t(r * I)) panel.resize(size_t(kPanel * I));
        widen_half(w.half.data() + r0 * I, w.storage, panel.data(), size_t(r * I));
        const ConstMapRM P(panel.data(), r, I);
        product_wt(x, P, out.middleCols(r0, r));
    }
}

}  // namespace ts
