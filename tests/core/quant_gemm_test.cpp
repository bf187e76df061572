// llama.cpp's arithmetic for Q4_0 / Q8_0 products (core/kernels/quant_gemm.h), checked against a direct computation
// written here from ggml's definitions (quantize_row_q8_0 on x86: d = max|x| / 127 stored as f16, q = round(x ·
// 127 / max|x|) ties to even; the dot product of a block pair is Σ w_q · x_q in integers, times d_w · d_x), bit for
// bit; the vector kernel against the portable one; the product close to the float product of the dequantized weight;
// non-finite activations and unsupported types refused; the process-wide choice routes matmul_weight_t. Also
// f32_to_f16 (core/model/half.h), which the activation scales go through.
#include "core/kernels/gemm.h"
#include "core/kernels/quant_gemm.h"
#include "core/kernels/quants.h"
#include "core/model/half.h"
#include "core/model/model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace ts {
namespace {

float bits_float(uint32_t b) {
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}

TEST(F32ToF16, RoundTripsEveryHalfAndRoundsTiesToEven) {
    for (uint32_t h = 0; h < 0x10000u; ++h) {
        const bool nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
        if (!nan) {
            ASSERT_EQ(f32_to_f16(f16_to_f32(uint16_t(h))), h) << std::hex << h;
        }
    }
    EXPECT_EQ(f32_to_f16(1.0f + 1.0f / 2048), 0x3c00u);          // halfway between 1 and 1 + 2^-10: to even (1)
    EXPECT_EQ(f32_to_f16(1.0f + 3.0f / 2048), 0x3c02u);          // halfway, odd below: up
    EXPECT_EQ(f32_to_f16(1.0f + 1.0f / 2048 + 1e-7f), 0x3c01u);  // past halfway: up
    EXPECT_EQ(f32_to_f16(65504.0f), 0x7bffu);
    EXPECT_EQ(f32_to_f16(65519.0f), 0x7bffu);
    EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00u);  // the tie above the largest half: Inf
    EXPECT_EQ(f32_to_f16(-1e30f), 0xfc00u);
    EXPECT_EQ(f32_to_f16(std::numeric_limits<float>::infinity()), 0x7c00u);
    EXPECT_EQ(f32_to_f16(-std::numeric_limits<float>::quiet_NaN()) & 0x7fffu, 0x7e00u);
    EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -24)), 0x0001u);                    // the smallest subnormal
    EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000u);                    // half of it: a tie, to even (0)
    EXPECT_EQ(f32_to_f16(std::ldexp(3.0f, -25)), 0x0002u);                    // 1.5 steps: a tie, to even (2)
    EXPECT_EQ(f32_to_f16(-std::ldexp(1.0f, -14) * (1.0f - 1e-4f)), 0x8400u);  // rounds up into the normals
#if defined(__F16C__)
    std::mt19937 g(3);
    for (int i = 0; i < 200000; ++i) {
        const float f = bits_float((uint32_t(g()) & 0xc7ffffffu) | (i % 2 ? 0x30000000u : 0u));  // wide exponents
        if (std::isnan(f)) continue;
        ASSERT_EQ(f32_to_f16(f), uint16_t(_cvtss_sh(f, 0))) << f;
    }
#endif
}

// A Storage::Ggml weight (O, I) of random blocks: scales of a few magnitudes (and one zero block), random quants.
Tensor random_blocks(GgmlType type, int64_t O, int64_t I, uint32_t seed) {
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> scale(0.001f, 0.05f);
    const bool q4 = type == GgmlType::Q4_0;
    const int bytes = q4 ? 18 : 34;
    Tensor t;
    t.shape = {O, I};
    t.storage = Storage::Ggml;
    t.ggml_type = uint32_t(type);
    t.blocks.resize(size_t(O * (I / 32) * bytes));
    for (size_t b = 0; b < t.blocks.size() / bytes; ++b) {
        uint8_t* p = t.blocks.data() + b * bytes;
        const uint16_t d = b == 5 ? 0 : f32_to_f16(scale(g));
        std::memcpy(p, &d, 2);
        for (int k = 2; k < bytes; ++k) p[k] = uint8_t(g());
    }
    return t;
}

MatrixRM random_rows(int64_t N, int64_t I, uint32_t seed) {
    std::mt19937 g(seed);
    std::normal_distribution<float> d(0.0f, 1.0f);
    MatrixRM x(N, I);
    for (int64_t k = 0; k < x.size(); ++k) x.data()[k] = d(g);
    for (int64_t k = 0; k < 32 && k < x.cols(); ++k) x(0, k) = 0.0f;  // an all-zero block (scale 0)
    if (x.cols() >= 64) x(0, 40) = 3.5f;                              // a value that is exactly max|x| of its block
    return x;
}

// ggml's arithmetic written out: activations to Q8_0, integer block dot products, scaled and summed in block order.
MatrixRM direct_product(const MatrixRM& x, const Tensor& w) {
    const int64_t N = x.rows(), I = x.cols(), O = w.shape[0], nb = I / 32;
    const bool q4 = w.ggml_type == uint32_t(GgmlType::Q4_0);
    const int bytes = q4 ? 18 : 34;
    MatrixRM out(N, O);
    for (int64_t n = 0; n < N; ++n) {
        std::vector<int> xq(static_cast<size_t>(I));
        std::vector<float> xd(static_cast<size_t>(nb));
        for (int64_t b = 0; b < nb; ++b) {
            float amax = 0.0f;
            for (int k = 0; k < 32; ++k) amax = std::max(amax, std::fabs(x(n, b * 32 + k)));
            xd[size_t(b)] = f16_to_f32(f32_to_f16(amax / 127.0f));
            const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
            for (int k = 0; k < 32; ++k) xq[size_t(b * 32 + k)] = int(std::nearbyint(x(n, b * 32 + k) * id));
        }
        for (int64_t o = 0; o < O; ++o) {
            float acc = 0.0f;
            for (int64_t b = 0; b < nb; ++b) {
                const uint8_t* p = w.blocks.data() + (o * nb + b) * bytes;
                uint16_t dh;
                std::memcpy(&dh, p, 2);
                int s = 0;
                for (int k = 0; k < 32; ++k) {
                    const int wq = q4 ? int(k < 16 ? p[2 + k] & 15 : p[2 + k - 16] >> 4) - 8 : int(int8_t(p[2 + k]));
                    s += wq * xq[size_t(b * 32 + k)];
                }
                acc = std::fma(float(s), f16_to_f32(dh) * xd[size_t(b)], acc);
            }
            out(n, o) = acc;
        }
    }
    return out;
}

void expect_bits_equal(const MatrixRM& a, const MatrixRM& b, const std::string& what) {
    ASSERT_EQ(a.rows(), b.rows()) << what;
    ASSERT_EQ(a.cols(), b.cols()) << what;
    EXPECT_EQ(std::memcmp(a.data(), b.data(), size_t(a.size()) * 4), 0)
        << what << ": max |diff| " << (a - b).cwiseAbs().maxCoeff();
}

TEST(Int8Activations, EqualGgmlsArithmeticBitForBit) {
    for (const GgmlType type : {GgmlType::Q4_0, GgmlType::Q8_0}) {
        // 37 features: the third group of 16 holds 5; 13 rows: a chunk of 12 and one; 96 = 3 blocks.
        for (const auto& [N, O, I] : {std::tuple<int64_t, int64_t, int64_t>{13, 37, 96}, {2, 16, 32}, {25, 70, 256}}) {
            const Tensor w = random_blocks(type, O, I, uint32_t(O + I));
            const MatrixRM x = random_rows(N, I, uint32_t(N));
            const std::string what = std::string(type == GgmlType::Q4_0 ? "Q4_0 " : "Q8_0 ") + std::to_string(N) + "x" +
                std::to_string(O) + "x" + std::to_string(I);
            MatrixRM fast, portable, two;
            ASSERT_TRUE(matmul_int8_activations(x, w, fast, 1)) << what;
            ASSERT_TRUE(detail::matmul_int8_activations_portable(x, w, portable)) << what;
            ASSERT_TRUE(matmul_int8_activations(x, w, two, 2)) << what;
            const MatrixRM direct = direct_product(x, w);
            expect_bits_equal(fast, direct, what + " vector kernel vs direct");
            expect_bits_equal(portable, direct, what + " portable vs direct");
            expect_bits_equal(two, direct, what + " 2 threads vs direct");

            // Near the float product of the dequantized weight: 8-bit activations cost about 1 % of the output.
            Tensor dense({O, I});
            ggml_dequantize(type, w.blocks.data(), O * I, dense.data.data());
            const MatrixRM exact = x * dense.mat().transpose();
            const double rel = double((fast - exact).norm() / exact.norm());
            EXPECT_LT(rel, 0.02) << what;
            EXPECT_GT(rel, 0.0) << what;  // the activations were rounded
        }
    }
}

TEST(Int8Activations, RefusesNonFiniteActivationsAndOtherTypes) {
    const Tensor w = random_blocks(GgmlType::Q8_0, 16, 64, 1);
    MatrixRM x = random_rows(3, 64, 2), out;
    x(2, 50) = std::numeric_limits<float>::quiet_NaN();
    EXPECT_FALSE(matmul_int8_activations(x, w, out, 1));
    x(2, 50) = -std::numeric_limits<float>::infinity();
    EXPECT_FALSE(matmul_int8_activations(x, w, out, 1));
    Tensor k = w;
    k.ggml_type = uint32_t(GgmlType::Q4_K);
    EXPECT_FALSE(int8_product_supported(k.ggml_type));
    EXPECT_FALSE(matmul_int8_activations(random_rows(3, 64, 2), k, out, 1));
    EXPECT_THROW((void)matmul_int8_activations(random_rows(3, 32, 2), w, out, 1), std::invalid_argument);
    Tensor dense({16, 64});
    EXPECT_THROW((void)matmul_int8_activations(random_rows(3, 64, 2), dense, out, 1), std::invalid_argument);

    // Through matmul_weight_t, a non-finite activation takes the float path, whose result carries it.
    set_quant_activations(QuantActivations::Int8);
    MatrixRM y;
    matmul_weight_t(x, w, y);
    set_quant_activations(QuantActivations::Float);
    EXPECT_TRUE(std::isnan(y(2, 0)) || std::isinf(y(2, 0)));
    EXPECT_TRUE(std::isfinite(y(0, 0)));
}

TEST(Int8Activations, TheProcessWideChoiceRoutesTheProducts) {
    const Tensor w = random_blocks(GgmlType::Q4_0, 40, 128, 4);
    const MatrixRM x = random_rows(5, 128, 5);
    EXPECT_EQ(quant_activations(), QuantActivations::Float);
    MatrixRM exact, int8, direct;
    matmul_weight_t(x, w, exact);
    EXPECT_EQ(set_quant_activations(QuantActivations::Int8), QuantActivations::Int8);
    matmul_weight_t(x, w, int8);
    set_quant_activations(QuantActivations::Float);
    ASSERT_TRUE(matmul_int8_activations(x, w, direct, 1));
    expect_bits_equal(int8, direct, "matmul_weight_t with Int8");
    EXPECT_GT((exact - int8).cwiseAbs().maxCoeff(), 0.0f);  // the default multiplies the stored weights exactly
    Tensor dense({40, 128});
    ggml_dequantize(GgmlType::Q4_0, w.blocks.data(), 40 * 128, dense.data.data());
    EXPECT_LE((exact - x * dense.mat().transpose()).cwiseAbs().maxCoeff(), 1e-4f);
}

}  // namespace
}  // namespace ts
