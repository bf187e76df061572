// Panel-ordered float32 weights and the product x · Wᵀ (core/gemm.h), and matmul_weight_t, which picks the product
// for a weight's storage: panels, half precision widened panel by panel, or plain row-major float32.
#include "core/gemm.h"

#include "core/half.h"
#include "core/model.h"
#include "core/threads.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#if defined(__AVX512F__)
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

// One block of the product: out[c, 0..valid) (+)= sum over i in [0, depth) of x[c, i] * P[i, 0..valid) for c < C,
// where P is a panel slice (depth, 32) and x rows are ldx apart. `first`: the block starts the sum (else it adds
// to what out holds).
#if defined(__AVX512F__)
template <int C>
void kernel(const float* P, const float* x, int64_t ldx, int64_t depth, float* out, int64_t ldo, bool first,
            int valid) {
    const __mmask16 m0 = valid >= 16 ? __mmask16(0xffff) : __mmask16((1u << valid) - 1);
    const __mmask16 m1 = valid >= 32 ? __mmask16(0xffff) : valid <= 16 ? __mmask16(0) : __mmask16((1u << (valid - 16)) - 1);
    __m512 a0[C], a1[C];
    for (int c = 0; c < C; ++c) {
        a0[c] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m0, out + c * ldo);
        a1[c] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m1, out + c * ldo + 16);
    }
    for (int64_t i = 0; i < depth; ++i) {
        const __m512 p0 = _mm512_load_ps(P + i * kP), p1 = _mm512_load_ps(P + i * kP + 16);
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
template <int C>
void kernel_portable(const float* P, const float* x, int64_t ldx, int64_t depth, float* out, int64_t ldo,
                     bool first, int valid) {
    float acc[C][kP];
    for (int c = 0; c < C; ++c)
        for (int j = 0; j < kP; ++j) acc[c][j] = first || j >= valid ? 0.0f : out[c * ldo + j];
    for (int64_t i = 0; i < depth; ++i) {
        const float* p = P + i * kP;
        for (int c = 0; c < C; ++c) {
            const float b = x[c * ldx + i];
            for (int j = 0; j < kP; ++j) acc[c][j] += p[j] * b;
        }
    }
    for (int c = 0; c < C; ++c)
        for (int j = 0; j < valid; ++j) out[c * ldo + j] = acc[c][j];
}

using KernelFn = void (*)(const float*, const float*, int64_t, int64_t, float*, int64_t, bool, int);

// The kernel for this build's target (AVX-512 when the compiler targets it) and the portable one.
template <int C>
struct Native {
#if defined(__AVX512F__)
    static void run(const float* P, const float* x, int64_t ldx, int64_t d, float* o, int64_t ldo, bool f, int v) {
        kernel<C>(P, x, ldx, d, o, ldo, f, v);
    }
#else
    static void run(const float* P, const float* x, int64_t ldx, int64_t d, float* o, int64_t ldo, bool f, int v) {
        kernel_portable<C>(P, x, ldx, d, o, ldo, f, v);
    }
#endif
};
template <int C>
struct Portable {
    static void run(const float* P, const float* x, int64_t ldx, int64_t d, float* o, int64_t ldo, bool f, int v) {
        kernel_portable<C>(P, x, ldx, d, o, ldo, f, v);
    }
};

template <template <int> class K>
const KernelFn* kernels() {
    static constexpr KernelFn table[kMaxRows + 1] = {nullptr,   &K<1>::run, &K<2>::run,  &K<3>::run, &K<4>::run,
                                                     &K<5>::run, &K<6>::run, &K<7>::run,  &K<8>::run, &K<9>::run,
                                                     &K<10>::run, &K<11>::run, &K<12>::run};
    return table;
}

// Panels [p0, p1) of the product: for each panel and 256-deep block of the inner dimension, every row of x in
// chunks of up to 12 (the panel slice, 32 KB, stays in L1 while the rows pass).
void panels_range(const MatrixRM& x, const Tensor& w, MatrixRM& out, int64_t p0, int64_t p1, const KernelFn* k) {
    const int64_t N = x.rows(), I = w.shape[1], O = w.shape[0];
    for (int64_t p = p0; p < p1; ++p) {
        const int valid = int(std::min(kP, O - p * kP));
        const float* panel = w.panels.data() + p * kP * I;
        for (int64_t k0 = 0; k0 < I; k0 += kPanelDepth) {
            const int64_t depth = std::min(kPanelDepth, I - k0);
            for (int64_t n = 0; n < N; n += kMaxRows) {
                const int rows = int(std::min<int64_t>(kMaxRows, N - n));
                k[rows](panel + k0 * kP, x.data() + n * I + k0, I, depth, out.data() + n * O + p * kP, O, k0 == 0,
                        valid);
            }
        }
    }
}

void check_panels(const MatrixRM& x, const Tensor& w) {
    if (w.storage != Storage::F32Panels || w.shape.size() != 2)
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

}  // namespace

namespace {

// Hands the whole pages of [begin, end) back to the kernel; they are not read again (the weight is being moved into
// panels and freed after). Keeps the load's peak memory at about one copy of the weight. Linux only; elsewhere a no-op.
void release_pages(const float* begin, const float* end) {
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

// Panels appended one at a time to reserved (untouched) memory, so the result's pages are touched only as they are
// filled; with `release`, the rows a panel consumed are released from w as it goes.
Tensor pack(const Tensor& w, bool release) {
    if (!w.is_f32_rows() || w.shape.size() != 2)
        throw std::invalid_argument("pack_panels: needs a float32 rank-2 weight, got shape " + w.shape_str());
    const int64_t O = w.shape[0], I = w.shape[1];
    Tensor p;
    p.shape = w.shape;
    p.storage = Storage::F32Panels;
    p.panels.reserve(size_t(n_panels(O) * kP * I));
    std::vector<float> block(size_t(kP * I));
    for (int64_t p0 = 0; p0 < O; p0 += kP) {
        const int64_t rows = std::min(kP, O - p0);
        std::fill(block.begin(), block.end(), 0.0f);  // the last panel's rows past O stay 0
        for (int64_t j = 0; j < rows; ++j) {
            const float* src = w.data.data() + (p0 + j) * I;
            for (int64_t i = 0; i < I; ++i) block[size_t(i * kP + j)] = src[i];
        }
        p.panels.insert(p.panels.end(), block.begin(), block.end());
        if (release) release_pages(w.data.data() + p0 * I, w.data.data() + (p0 + rows) * I);
    }
    return p;
}

}  // namespace

Tensor pack_panels(const Tensor& w) { return pack(w, false); }

Tensor pack_panels(Tensor&& w) {
    Tensor p = pack(w, true);
    w = Tensor();  // its released pages are never read
    return p;
}

Tensor unpack_panels(const Tensor& p) {
    if (p.storage != Storage::F32Panels || p.shape.size() != 2)
        throw std::invalid_argument("unpack_panels: the tensor is not in panels");
    const int64_t O = p.shape[0], I = p.shape[1];
    Tensor w(p.shape);
    for (int64_t o = 0; o < O; ++o) panel_row(p, o, w.data.data() + o * I);
    return w;
}

void panel_row(const Tensor& p, int64_t o, float* dst) {
    if (p.storage != Storage::F32Panels || p.shape.size() != 2)
        throw std::invalid_argument("panel_row: the tensor is not in panels");
    const int64_t O = p.shape[0], I = p.shape[1];
    if (o < 0 || o >= O)
        throw std::invalid_argument("panel_row: row " + std::to_string(o) + " outside [0, " + std::to_string(O) + ")");
    const float* src = p.panels.data() + (o / kP) * kP * I + (o % kP);
    for (int64_t i = 0; i < I; ++i) dst[i] = src[i * kP];
}

void matmul_panels(const MatrixRM& x, const Tensor& w, MatrixRM& out, int n_threads) {
    check_panels(x, w);
    const int64_t N = x.rows(), O = w.shape[0], I = w.shape[1];
    out.resize(N, O);
    if (N == 0) return;
    if (I == 0) {
        out.setZero();
        return;
    }
    const int64_t np = n_panels(O);
    const KernelFn* k = kernels<Native>();
    if (n_threads <= 1 || np < 2 * n_threads || double(N) * double(O) * double(I) < 1e6) {
        panels_range(x, w, out, 0, np, k);
        return;
    }
#pragma omp parallel for num_threads(n_threads) schedule(static)
    for (int t = 0; t < n_threads; ++t) panels_range(x, w, out, np * t / n_threads, np * (t + 1) / n_threads, k);
}

void detail::matmul_panels_portable(const MatrixRM& x, const Tensor& w, MatrixRM& out) {
    check_panels(x, w);
    out.resize(x.rows(), w.shape[0]);
    if (x.rows() == 0) return;
    if (w.shape[1] == 0) {
        out.setZero();
        return;
    }
    panels_range(x, w, out, 0, n_panels(w.shape[0]), kernels<Portable>());
}

void matmul_weight_t(const MatrixRM& x, const Tensor& w, MatrixRM& out) {
    const int n_threads = compute_threads();
    if (w.storage == Storage::F32Panels) {
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
    // Half precision: widen kPanel rows of W (kPanel x I floats, <= 2.5 MB for d_ff 4864) into a per-thread buffer
    // and multiply; panels are independent, so threads split them and each product runs single-threaded.
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
