// Unit tests for core/ops: the course notes' worked examples (sinusoidal PE, GELU/Swish values, norms on a shifted
// batch), analytic derivatives vs finite differences, RoPE's relative-position property, softmax stability,
// losses and dropout. Bit-level agreement with PyTorch lives in ops_golden_test.cpp.
#include "core/kernels/ops.h"

#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace ts {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

MatrixRM random_matrix(int rows, int cols, uint64_t seed, float mean = 0.0f, float stddev = 1.0f) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> dist(mean, stddev);
    MatrixRM m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = dist(rng);
    return m;
}

MatrixRM row_of(std::initializer_list<float> v) {
    MatrixRM m(1, Eigen::Index(v.size()));
    Eigen::Index j = 0;
    for (float x : v) m(0, j++) = x;
    return m;
}

// --- activations -------------------------------------------------------------------------------------------------
const std::vector<float> kNotesPoints = {-2.0f, -0.5f, 0.0f, 0.5f, 2.0f};

TEST(Activation, GeluMatchesCourseNotes) {
    const std::vector<float> expected = {-0.046f, -0.154f, 0.0f, 0.346f, 1.954f};
    for (size_t i = 0; i < kNotesPoints.size(); ++i)
        EXPECT_NEAR(gelu(kNotesPoints[i]), expected[i], 1e-3f) << "x = " << kNotesPoints[i];
    // The tanh approximation agrees with the erf form to ~1e-3 over this range (Hendrycks & Gimpel).
    for (float x : kNotesPoints) EXPECT_NEAR(gelu_tanh(x), gelu(x), 1e-3f) << "x = " << x;
}

TEST(Activation, SwishMatchesCourseNotes) {
    const std::vector<float> expected = {-0.238f, -0.189f, 0.0f, 0.311f, 1.762f};
    for (size_t i = 0; i < kNotesPoints.size(); ++i)
        EXPECT_NEAR(swish(kNotesPoints[i], 1.0f), expected[i], 1e-3f) << "x = " << kNotesPoints[i];
    // beta -> large approaches ReLU; beta = 0 is x/2.
    EXPECT_NEAR(swish(2.0f, 50.0f), 2.0f, 1e-6f);
    EXPECT_NEAR(swish(-2.0f, 50.0f), 0.0f, 1e-6f);
    EXPECT_FLOAT_EQ(swish(3.0f, 0.0f), 1.5f);
}

TEST(Activation, ReluAndLeakyRelu) {
    const std::vector<float> expected = {0.0f, 0.0f, 0.0f, 0.5f, 2.0f};
    for (size_t i = 0; i < kNotesPoints.size(); ++i) EXPECT_EQ(relu(kNotesPoints[i]), expected[i]);
    EXPECT_EQ(relu_grad(0.0f), 0.0f);  // PyTorch's subgradient at the kink
    EXPECT_EQ(relu_grad(1e-6f), 1.0f);
    EXPECT_FLOAT_EQ(leaky_relu(-2.0f, 0.1f), -0.2f);
    EXPECT_FLOAT_EQ(leaky_relu(3.0f, 0.1f), 3.0f);
    EXPECT_FLOAT_EQ(leaky_relu_grad(-2.0f, 0.1f), 0.1f);
}

TEST(Activation, SigmoidIsStableAtExtremes) {
    EXPECT_EQ(sigmoid(-200.0f), 0.0f);
    EXPECT_EQ(sigmoid(200.0f), 1.0f);
    EXPECT_FALSE(std::isnan(sigmoid(-1e30f)));
    EXPECT_FLOAT_EQ(sigmoid(0.0f), 0.5f);
    EXPECT_FLOAT_EQ(sigmoid(1.0f) + sigmoid(-1.0f), 1.0f);
    EXPECT_GT(sigmoid(-100.0f), 0.0f);  // exp(-100) ~ 3.7e-44 is a float denormal, not flushed by 1/(1+inf)
    EXPECT_EQ(tanh_act(50.0f), 1.0f);
}

struct ScalarAct {
    std::string name;
    std::function<float(float)> f, df;
    bool kink_at_zero;
};

std::vector<ScalarAct> all_scalar_acts() {
    return {
        {"tanh", tanh_act, tanh_grad, false},
        {"sigmoid", sigmoid, sigmoid_grad, false},
        {"relu", relu, relu_grad, true},
        {"leaky_relu(0.01)", [](float x) { return leaky_relu(x); }, [](float x) { return leaky_relu_grad(x); }, true},
        {"leaky_relu(0.2)", [](float x) { return leaky_relu(x, 0.2f); },
         [](float x) { return leaky_relu_grad(x, 0.2f); }, true},
        {"gelu", gelu, gelu_grad, false},
        {"gelu_tanh", gelu_tanh, gelu_tanh_grad, false},
        {"swish(1)", [](float x) { return swish(x); }, [](float x) { return swish_grad(x); }, false},
        {"swish(1.7)", [](float x) { return swish(x, 1.7f); }, [](float x) { return swish_grad(x, 1.7f); }, false},
        {"swish(0.5)", [](float x) { return swish(x, 0.5f); }, [](float x) { return swish_grad(x, 0.5f); }, false},
    };
}

TEST(Activation, DerivativesMatchCentralDifferences) {
    // Central difference in float: truncation ~ h^2 f'''/6, rounding ~ 1e-7 |f| / h. h = 1e-2 balances both.
    const float h = 1e-2f;
    int checked = 0;
    for (const ScalarAct& a : all_scalar_acts()) {
        for (int k = 0; k <= 160; ++k) {
            const float x = -6.0f + 0.075f * float(k);
            if (a.kink_at_zero && std::abs(x) < 2.0f * h) continue;
            const double fd = (double(a.f(x + h)) - double(a.f(x - h))) / (2.0 * h);
            EXPECT_NEAR(a.df(x), fd, 2e-3) << a.name << " at x = " << x;
            ++checked;
        }
    }
    EXPECT_GT(checked, 1500);
}

TEST(Activation, DispatchUsesGateActivationForGatedKinds) {
    for (float x : {-3.0f, -0.7f, 0.0f, 0.4f, 2.5f}) {
        EXPECT_EQ(apply_activation(Activation::ReLU, x), relu(x));
        EXPECT_EQ(apply_activation(Activation::GELU, x), gelu(x));
        EXPECT_EQ(apply_activation(Activation::GELUTanh, x), gelu_tanh(x));
        EXPECT_EQ(apply_activation(Activation::SiLU, x), swish(x, 1.0f));
        EXPECT_EQ(apply_activation(Activation::GLU, x), sigmoid(x));
        EXPECT_EQ(apply_activation(Activation::SwiGLU, x), swish(x, 1.0f));
        EXPECT_EQ(apply_activation(Activation::GeGLU, x), gelu(x));
        EXPECT_EQ(activation_grad(Activation::ReLU, x), relu_grad(x));
        EXPECT_EQ(activation_grad(Activation::GELU, x), gelu_grad(x));
        EXPECT_EQ(activation_grad(Activation::GELUTanh, x), gelu_tanh_grad(x));
        EXPECT_EQ(activation_grad(Activation::SiLU, x), swish_grad(x, 1.0f));
        EXPECT_EQ(activation_grad(Activation::GLU, x), sigmoid_grad(x));
        EXPECT_EQ(activation_grad(Activation::SwiGLU, x), swish_grad(x, 1.0f));
        EXPECT_EQ(activation_grad(Activation::GeGLU, x), gelu_grad(x));
    }
}

// The vectorized matrix path (Eigen tanh/erf/exp) agrees with the scalar libm path to float rounding.
TEST(Activation, InplaceMatchesScalarForEveryKind) {
    const MatrixRM x = random_matrix(7, 13, 3, 0.0f, 2.0f);
    for (Activation a : {Activation::ReLU, Activation::GELU, Activation::GELUTanh, Activation::SiLU, Activation::GLU,
                         Activation::SwiGLU, Activation::GeGLU}) {
        MatrixRM y = x;
        apply_activation_inplace(a, y);
        MatrixRM expected = x.unaryExpr([a](float v) { return apply_activation(a, v); });
        EXPECT_ALLCLOSE(y, expected, 1e-6f, 1e-5f) << to_string(a);
    }
}

// --- normalization -----------------------------------------------------------------------------------------------
TEST(Norm, LayerNormRowsHaveZeroMeanUnitVariance) {
    const MatrixRM x = random_matrix(4, 32, 11, 3.0f, 4.0f);
    const MatrixRM y = layer_norm(x, {}, {}, 1e-5f);
    for (Eigen::Index r = 0; r < y.rows(); ++r) {
        const float mean = y.row(r).mean();
        EXPECT_NEAR(mean, 0.0f, 1e-5f);
        EXPECT_NEAR((y.row(r).array() - mean).square().mean(), 1.0f, 1e-4f);
    }
}

TEST(Norm, LayerNormAppliesGammaBeta) {
    const MatrixRM x = random_matrix(3, 4, 12);
    const std::vector<float> gamma = {1.0f, 2.0f, -1.0f, 0.5f}, beta = {0.0f, 1.0f, 2.0f, -3.0f};
    const MatrixRM plain = layer_norm(x, {}, {}, 1e-5f);
    const MatrixRM y = layer_norm(x, gamma, beta, 1e-5f);
    for (Eigen::Index r = 0; r < 3; ++r)
        for (Eigen::Index c = 0; c < 4; ++c) EXPECT_NEAR(y(r, c), plain(r, c) * gamma[c] + beta[c], 1e-6f);
}

TEST(Norm, RmsNormRowsHaveUnitRms) {
    const MatrixRM x = random_matrix(4, 32, 13, 1.0f, 3.0f);
    const MatrixRM y = rms_norm(x, {}, 1e-6f);
    for (Eigen::Index r = 0; r < y.rows(); ++r) EXPECT_NEAR(std::sqrt(y.row(r).squaredNorm() / 32.0f), 1.0f, 1e-5f);
    // RMSNorm keeps the direction of each row: y is x scaled by a positive number.
    for (Eigen::Index r = 0; r < y.rows(); ++r) {
        const float s = y(r, 0) / x(r, 0);
        EXPECT_GT(s, 0.0f);
        EXPECT_ALLCLOSE(MatrixRM(y.row(r)), MatrixRM(x.row(r) * s), 1e-5f, 1e-5f);
    }
}

TEST(Norm, ApplyNormDispatches) {
    const MatrixRM x = random_matrix(2, 8, 14);
    const std::vector<float> g(8, 1.5f), b(8, 0.25f);
    EXPECT_ALLCLOSE(apply_norm(NormKind::LayerNorm, x, g, b, 1e-5f), layer_norm(x, g, b, 1e-5f), 0.0f, 0.0f);
    // beta is ignored for RMSNorm.
    EXPECT_ALLCLOSE(apply_norm(NormKind::RMSNorm, x, g, b, 1e-5f), rms_norm(x, g, 1e-5f), 0.0f, 0.0f);
}

// The course notes' comparison: a (64, 128) batch drawn with mean 5 and std 2.
class NormOnShiftedBatch : public ::testing::Test {
protected:
    const MatrixRM x = random_matrix(64, 128, 2024, 5.0f, 2.0f);
};

TEST_F(NormOnShiftedBatch, BatchNormNormalizesEachFeatureColumn) {
    BatchNormState state;
    const MatrixRM y = batch_norm(x, {}, {}, 1e-5f, state, /*training=*/true);
    for (Eigen::Index c = 0; c < y.cols(); ++c) {
        const float mean = y.col(c).mean();
        EXPECT_NEAR(mean, 0.0f, 1e-5f) << "column " << c;
        EXPECT_NEAR((y.col(c).array() - mean).square().mean(), 1.0f, 1e-4f) << "column " << c;
    }
    // Rows are not normalized by BatchNorm: with 128 features a row mean is far from exact 0 only by chance, but
    // row variances scatter around 1 rather than equal it.
    float max_row_var_dev = 0.0f;
    for (Eigen::Index r = 0; r < y.rows(); ++r) {
        const float m = y.row(r).mean();
        max_row_var_dev = std::max(max_row_var_dev, std::abs((y.row(r).array() - m).square().mean() - 1.0f));
    }
    EXPECT_GT(max_row_var_dev, 0.05f);
}

TEST_F(NormOnShiftedBatch, LayerNormNormalizesEachRow) {
    const MatrixRM y = layer_norm(x, {}, {}, 1e-5f);
    for (Eigen::Index r = 0; r < y.rows(); ++r) {
        const float mean = y.row(r).mean();
        EXPECT_NEAR(mean, 0.0f, 1e-5f) << "row " << r;
        EXPECT_NEAR((y.row(r).array() - mean).square().mean(), 1.0f, 1e-4f) << "row " << r;
    }
}

TEST_F(NormOnShiftedBatch, RmsNormGivesUnitRmsButKeepsTheMean) {
    const MatrixRM y = rms_norm(x, {}, 1e-6f);
    // E[x] / sqrt(E[x^2]) = 5 / sqrt(25 + 4) ~ 0.93: RMSNorm rescales but does not center.
    const float expected_mean = 5.0f / std::sqrt(29.0f);
    for (Eigen::Index r = 0; r < y.rows(); ++r) {
        EXPECT_NEAR(std::sqrt(y.row(r).squaredNorm() / float(y.cols())), 1.0f, 1e-5f) << "row " << r;
        EXPECT_NEAR(y.row(r).mean(), expected_mean, 0.05f) << "row " << r;
        EXPECT_GT(y.row(r).mean(), 0.8f) << "row " << r;
    }
}

TEST(Norm, BatchNormRunningStatsFollowTorch) {
    const MatrixRM x = random_matrix(6, 3, 15, 2.0f, 3.0f);
    BatchNormState state;  // empty: starts at torch's defaults (mean 0, var 1)
    state.momentum = 0.1f;
    (void)batch_norm(x, {}, {}, 1e-5f, state, true);
    for (Eigen::Index c = 0; c < 3; ++c) {
        const float mean = x.col(c).mean();
        const float unbiased = (x.col(c).array() - mean).square().sum() / 5.0f;
        EXPECT_NEAR(state.running_mean(c), 0.1f * mean, 1e-5f);
        EXPECT_NEAR(state.running_var(c), 0.9f + 0.1f * unbiased, 1e-5f);
    }
    // Eval mode normalizes with the running statistics, not the batch's.
    const std::vector<float> g = {1.0f, 2.0f, 3.0f}, b = {0.5f, 0.0f, -0.5f};
    const MatrixRM y = batch_norm(x, g, b, 1e-5f, state, false);
    for (Eigen::Index r = 0; r < 6; ++r)
        for (Eigen::Index c = 0; c < 3; ++c)
            EXPECT_NEAR(y(r, c),
                        (x(r, c) - state.running_mean(c)) / std::sqrt(state.running_var(c) + 1e-5f) * g[c] + b[c],
                        1e-5f);
}

TEST(Norm, InvalidArgumentsThrow) {
    const MatrixRM x = random_matrix(2, 4, 16);
    const std::vector<float> bad(3, 1.0f);
    EXPECT_THROW((void)layer_norm(x, bad, {}, 1e-5f), std::invalid_argument);
    EXPECT_THROW((void)layer_norm(x, {}, bad, 1e-5f), std::invalid_argument);
    EXPECT_THROW((void)rms_norm(x, bad, 1e-5f), std::invalid_argument);
    BatchNormState state;
    EXPECT_THROW((void)batch_norm(MatrixRM(random_matrix(1, 4, 1)), {}, {}, 1e-5f, state, true),
                 std::invalid_argument);
    BatchNormState wrong;
    wrong.running_mean = RowVectorF::Zero(5);
    wrong.running_var = RowVectorF::Ones(5);
    EXPECT_THROW((void)batch_norm(x, {}, {}, 1e-5f, wrong, false), std::invalid_argument);
}

// --- positions ---------------------------------------------------------------------------------------------------
TEST(OpsSinusoidal, MatchesCourseNotesForDModel4) {
    const MatrixRM pe = sinusoidal_table(3, 4);
    EXPECT_ALLCLOSE(MatrixRM(pe.row(0)), row_of({0.0f, 1.0f, 0.0f, 1.0f}), 1e-7f, 0.0f);
    EXPECT_ALLCLOSE(MatrixRM(pe.row(1)), row_of({std::sin(1.0f), std::cos(1.0f), std::sin(0.01f), std::cos(0.01f)}),
                    1e-7f, 0.0f);
    EXPECT_NEAR(pe(2, 2), std::sin(0.02f), 1e-7f);
}

TEST(OpsSinusoidal, OddDModelAndInvalid) {
    const MatrixRM pe = sinusoidal_table(2, 5);
    EXPECT_EQ(pe.cols(), 5);
    EXPECT_NEAR(pe(1, 4), std::sin(1.0 / std::pow(10000.0, 4.0 / 5.0)), 1e-7);
    EXPECT_THROW((void)sinusoidal_table(2, 0), std::invalid_argument);
    EXPECT_THROW((void)sinusoidal_table(-1, 4), std::invalid_argument);
}

class RopeLayouts : public ::testing::TestWithParam<RopeLayout> {};

TEST_P(RopeLayouts, DotProductDependsOnlyOnOffset) {
    const int d_head = 16;
    const MatrixRM q = random_matrix(1, d_head, 21), k = random_matrix(1, d_head, 22);
    auto rotated_dot = [&](int m, int n) {
        MatrixRM qm = q, kn = k;
        apply_rope(qm, m, 10000.0f, GetParam());
        apply_rope(kn, n, 10000.0f, GetParam());
        return qm.row(0).dot(kn.row(0));
    };
    for (int offset : {0, 1, 3, 7}) {
        const float ref = rotated_dot(offset, 0);
        for (int n : {1, 5, 20, 100}) EXPECT_NEAR(rotated_dot(n + offset, n), ref, 2e-4f) << "offset " << offset;
    }
    // ... and it does depend on the offset (the rotation is not the identity).
    EXPECT_GT(std::abs(rotated_dot(3, 0) - rotated_dot(0, 0)), 1e-2f);
}

TEST_P(RopeLayouts, PreservesNormsAndIsIdentityAtPositionZero) {
    const MatrixRM x = random_matrix(9, 8, 23);
    MatrixRM y = x;
    apply_rope(y, 4, 500.0f, GetParam());
    for (Eigen::Index r = 0; r < x.rows(); ++r) EXPECT_NEAR(y.row(r).norm(), x.row(r).norm(), 1e-5f);
    MatrixRM z = MatrixRM(x.row(0));
    apply_rope(z, 0, 500.0f, GetParam());
    EXPECT_ALLCLOSE(z, MatrixRM(x.row(0)), 0.0f, 0.0f);
}

TEST_P(RopeLayouts, RowsVersionMatchesMatrixVersionWithStartPos) {
    const MatrixRM x = random_matrix(5, 8, 24);
    MatrixRM a = x;
    apply_rope(a, 3, 10000.0f, GetParam());
    MatrixRM b = x;
    apply_rope_rows(b.data(), 5, 8, 3, 10000.0f, GetParam());
    EXPECT_ALLCLOSE(a, b, 0.0f, 0.0f);
    // Row t at start_pos 3 is the same as the single row at position 3 + t (KV-cache decoding relies on this).
    MatrixRM last = MatrixRM(x.row(4));
    apply_rope(last, 7, 10000.0f, GetParam());
    EXPECT_ALLCLOSE(last, MatrixRM(a.row(4)), 0.0f, 0.0f);
}

TEST_P(RopeLayouts, OddDHeadThrows) {
    MatrixRM x = random_matrix(2, 7, 25);
    EXPECT_THROW(apply_rope(x, 0, 10000.0f, GetParam()), std::invalid_argument);
    MatrixRM y = random_matrix(2, 8, 25);
    EXPECT_THROW(apply_rope(y, 0, 0.0f, GetParam()), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Rope, RopeLayouts, ::testing::Values(RopeLayout::Interleaved, RopeLayout::HalfSplit),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(Rope, HalfSplitIsInterleavedUnderAPermutation) {
    // Dims (i, i + d/2) of the half-split layout play the role of (2i, 2i + 1) of the interleaved one.
    const int d = 8, h = d / 2;
    const MatrixRM x = random_matrix(4, d, 26);
    MatrixRM xi(4, d);
    for (int i = 0; i < h; ++i) {
        xi.col(2 * i) = x.col(i);
        xi.col(2 * i + 1) = x.col(i + h);
    }
    MatrixRM a = x, b = xi;
    apply_rope(a, 2, 10000.0f, RopeLayout::HalfSplit);
    apply_rope(b, 2, 10000.0f, RopeLayout::Interleaved);
    for (int i = 0; i < h; ++i) {
        EXPECT_ALLCLOSE(MatrixRM(a.col(i)), MatrixRM(b.col(2 * i)), 1e-6f, 0.0f);
        EXPECT_ALLCLOSE(MatrixRM(a.col(i + h)), MatrixRM(b.col(2 * i + 1)), 1e-6f, 0.0f);
    }
}

TEST(Rope, FirstPairRotatesByOneRadianPerPosition) {
    MatrixRM x = row_of({1.0f, 0.0f, 1.0f, 0.0f});
    apply_rope(x, 1, 10000.0f, RopeLayout::Interleaved);  // theta_0 = 1, theta_1 = 10000^(-1/2) = 0.01
    EXPECT_ALLCLOSE(x, row_of({std::cos(1.0f), std::sin(1.0f), std::cos(0.01f), std::sin(0.01f)}), 1e-7f, 0.0f);
}

// --- softmax family ----------------------------------------------------------------------------------------------
TEST(Softmax, InvariantToAddingAConstant) {
    const MatrixRM x = random_matrix(3, 10, 31);
    const MatrixRM shifted = (x.array() + 37.5f).matrix();
    EXPECT_ALLCLOSE(softmax_rows(x), softmax_rows(shifted), 1e-6f, 0.0f);
    const MatrixRM p = softmax_rows(x);
    for (Eigen::Index r = 0; r < 3; ++r) EXPECT_NEAR(p.row(r).sum(), 1.0f, 1e-6f);
}

TEST(Softmax, StableOnLargeScoresWhereNaiveOverflows) {
    const MatrixRM x = row_of({1000.0f, 1001.0f, 2000.0f});
    const MatrixRM p = softmax_rows(x);
    EXPECT_TRUE(p.allFinite());
    EXPECT_ALLCLOSE(p, row_of({0.0f, 0.0f, 1.0f}), 1e-7f, 0.0f);
    const MatrixRM naive = naive_softmax_rows(x);
    EXPECT_FALSE(naive.allFinite());
    // On small scores the naive formula is correct.
    const MatrixRM small = row_of({0.1f, -0.3f, 1.2f});
    EXPECT_ALLCLOSE(naive_softmax_rows(small), softmax_rows(small), 1e-6f, 0.0f);
}

TEST(Softmax, MaskedEntriesGiveZeroAndFullyMaskedRowGivesZeros) {
    MatrixRM x(2, 3);
    x << 0.5f, -kInf, 0.5f, -kInf, -kInf, -kInf;
    const MatrixRM p = softmax_rows(x);
    EXPECT_ALLCLOSE(MatrixRM(p.row(0)), row_of({0.5f, 0.0f, 0.5f}), 1e-7f, 0.0f);
    EXPECT_ALLCLOSE(MatrixRM(p.row(1)), row_of({0.0f, 0.0f, 0.0f}), 0.0f, 0.0f);
    const MatrixRM lp = log_softmax_rows(x);
    EXPECT_EQ(lp(1, 0), -kInf);
    EXPECT_EQ(lp(0, 1), -kInf);
    EXPECT_EQ(logsumexp_rows(x)(1), -kInf);
}

// A masked key's probability is exactly 0 wherever it sits in the row: in SIMD lanes (Eigen's vectorised exp gave
// 1.6e-39 there on AVX2) as well as in the scalar tail, for every row length up to two AVX-512 vectors and more.
TEST(Softmax, MaskedKeysAreExactlyZeroAtEveryPositionAndLength) {
    for (int n = 2; n <= 40; ++n)
        for (int phase = 0; phase < 3; ++phase) {  // every third key masked, starting at key 0, 1 or 2
            std::vector<float> scores(static_cast<size_t>(n));
            for (int i = 0; i < n; ++i) scores[size_t(i)] = i % 3 == phase ? -kInf : 0.1f * float(i % 7);
            softmax_row_inplace(scores.data(), n, 1.0f);
            double sum = 0;
            for (int i = 0; i < n; ++i) {
                if (i % 3 == phase) ASSERT_EQ(scores[size_t(i)], 0.0f) << "n " << n << ", key " << i;
                sum += scores[size_t(i)];
            }
            EXPECT_NEAR(sum, 1.0, 1e-6) << n;
        }
}

TEST(Softmax, TemperatureFlattensOrSharpens) {
    const MatrixRM x = row_of({1.0f, 2.0f, 4.0f});
    const MatrixRM p1 = softmax_rows(x, 1.0f), p_hot = softmax_rows(x, 5.0f), p_cold = softmax_rows(x, 0.2f);
    auto H = [](const MatrixRM& p) { return entropy_nats({p.data(), size_t(p.size())}); };
    EXPECT_GT(H(p_hot), H(p1));
    EXPECT_LT(H(p_cold), H(p1));
    EXPECT_ALLCLOSE(p_hot, softmax_rows(MatrixRM(x / 5.0f)), 1e-7f, 0.0f);
    MatrixRM inplace = x;
    softmax_rows_inplace(inplace, 0.2f);
    EXPECT_ALLCLOSE(inplace, p_cold, 0.0f, 0.0f);
}

TEST(Softmax, LogSoftmaxAndLogsumexpAgree) {
    const MatrixRM x = random_matrix(4, 6, 32, 0.0f, 3.0f);
    const MatrixRM lp = log_softmax_rows(x);
    const Eigen::VectorXf lse = logsumexp_rows(x);
    for (Eigen::Index r = 0; r < 4; ++r) {
        EXPECT_NEAR(lse(r), std::log(x.row(r).array().exp().sum()), 1e-5f);
        EXPECT_NEAR(lp.row(r).array().exp().sum(), 1.0f, 1e-6f);
        for (Eigen::Index c = 0; c < 6; ++c) EXPECT_NEAR(lp(r, c), x(r, c) - lse(r), 1e-5f);
    }
    EXPECT_NEAR(logsumexp_rows(row_of({1000.0f, 1000.0f}))(0), 1000.0f + std::log(2.0f), 1e-3f);
}

TEST(Softmax, EntropyInNats) {
    const std::vector<float> uniform(4, 0.25f), onehot = {0.0f, 1.0f, 0.0f};
    EXPECT_NEAR(entropy_nats(uniform), std::log(4.0f), 1e-6f);
    EXPECT_EQ(entropy_nats(onehot), 0.0f);
}

TEST(Softmax, InvalidTemperatureThrows) {
    const MatrixRM x = row_of({1.0f, 2.0f});
    EXPECT_THROW((void)softmax_rows(x, 0.0f), std::invalid_argument);
    EXPECT_THROW((void)softmax_rows(x, -1.0f), std::invalid_argument);
    EXPECT_THROW((void)softmax_rows(x, std::numeric_limits<float>::quiet_NaN()), std::invalid_argument);
    MatrixRM y = x;
    EXPECT_THROW(softmax_rows_inplace(y, 0.0f), std::invalid_argument);
}

// --- losses ------------------------------------------------------------------------------------------------------
TEST(Loss, CrossEntropyWithoutSmoothingIsMeanNegativeLogLikelihood) {
    const MatrixRM logits = random_matrix(5, 7, 41);
    const std::vector<int> targets = {0, 6, 3, 3, 1};
    const MatrixRM lp = log_softmax_rows(logits);
    double nll = 0.0;
    for (int r = 0; r < 5; ++r) nll -= lp(r, targets[r]);
    EXPECT_NEAR(cross_entropy(logits, targets), nll / 5.0, 1e-5);
    EXPECT_NEAR(cross_entropy(logits, targets, 0.0f), nll / 5.0, 1e-5);
    // Uniform logits cost exactly log V nats.
    EXPECT_NEAR(cross_entropy(MatrixRM::Zero(2, 7), std::vector<int>{1, 2}), std::log(7.0f), 1e-6f);
}

TEST(Loss, LabelSmoothingAndIgnoreIndex) {
    const MatrixRM logits = random_matrix(4, 5, 42);
    const std::vector<int> targets = {2, -1, 0, 4};
    const float eps = 0.1f;
    const MatrixRM lp = log_softmax_rows(logits);
    double expected = 0.0;
    for (int r : {0, 2, 3}) expected += -(1.0 - eps) * lp(r, targets[r]) - eps * lp.row(r).mean();
    EXPECT_NEAR(cross_entropy(logits, targets, eps), expected / 3.0, 1e-5);
    // Ignored rows do not count, not even in the mean's denominator.
    MatrixRM kept(3, 5);
    kept << logits.row(0), logits.row(2), logits.row(3);
    EXPECT_NEAR(cross_entropy(logits, targets, eps), cross_entropy(kept, std::vector<int>{2, 0, 4}, eps), 1e-6f);
    EXPECT_TRUE(std::isnan(cross_entropy(logits, std::vector<int>{-1, -1, -1, -1})));  // torch: 0/0
}

TEST(Loss, ZLossIsMeanSquaredLogPartition) {
    const MatrixRM logits = random_matrix(3, 4, 43);
    const Eigen::VectorXf lse = logsumexp_rows(logits);
    EXPECT_NEAR(z_loss(logits, std::vector<int>{0, -1, 2}, 1e-4f), 1e-4f * (lse(0) * lse(0) + lse(2) * lse(2)) / 2.0f,
                1e-9f);
    EXPECT_EQ(z_loss(logits, std::vector<int>{-1, -1, -1}, 1e-4f), 0.0f);
}

TEST(Loss, InvalidArgumentsThrow) {
    const MatrixRM logits = random_matrix(2, 3, 44);
    EXPECT_THROW((void)cross_entropy(logits, std::vector<int>{0}), std::invalid_argument);
    EXPECT_THROW((void)cross_entropy(logits, std::vector<int>{0, 3}), std::invalid_argument);
    EXPECT_THROW((void)cross_entropy(logits, std::vector<int>{0, -2}), std::invalid_argument);
    EXPECT_THROW((void)cross_entropy(logits, std::vector<int>{0, 1}, 1.5f), std::invalid_argument);
    EXPECT_THROW((void)cross_entropy(logits, std::vector<int>{0, 1}, -0.1f), std::invalid_argument);
    EXPECT_THROW((void)z_loss(logits, std::vector<int>{0, 7}, 1e-4f), std::invalid_argument);
}

// --- dropout -----------------------------------------------------------------------------------------------------
TEST(Dropout, KeepsAboutOneMinusPAndRescalesSurvivors) {
    const MatrixRM x = (random_matrix(100, 100, 51).array() + 10.0f).matrix();  // no exact zeros in x
    const float p = 0.3f;
    MatrixRM y = x;
    std::vector<uint8_t> mask;
    dropout_inplace(y, p, 1234, &mask);
    ASSERT_EQ(mask.size(), size_t(x.size()));
    int kept = 0;
    for (Eigen::Index i = 0; i < x.size(); ++i) {
        if (mask[size_t(i)]) {
            ++kept;
            EXPECT_NEAR(y.data()[i], x.data()[i] / (1.0f - p), 1e-5f);
        } else {
            EXPECT_EQ(y.data()[i], 0.0f);
        }
    }
    // 10000 Bernoulli(0.7): std of the fraction ~ 0.0046, so 0.02 is > 4 sigma.
    EXPECT_NEAR(kept / 10000.0, 0.7, 0.02);
}

TEST(Dropout, SameSeedSameMaskDifferentSeedDifferentMask) {
    const MatrixRM x = MatrixRM::Ones(20, 30);
    MatrixRM a = x, b = x, c = x;
    std::vector<uint8_t> ma, mb, mc;
    dropout_inplace(a, 0.5f, 7, &ma);
    dropout_inplace(b, 0.5f, 7, &mb);
    dropout_inplace(c, 0.5f, 8, &mc);
    EXPECT_EQ(ma, mb);
    EXPECT_ALLCLOSE(a, b, 0.0f, 0.0f);
    EXPECT_NE(ma, mc);
}

TEST(Dropout, ZeroProbabilityIsIdentityAndInvalidThrows) {
    const MatrixRM x = random_matrix(3, 3, 52);
    MatrixRM y = x;
    std::vector<uint8_t> mask;
    dropout_inplace(y, 0.0f, 1, &mask);
    EXPECT_ALLCLOSE(y, x, 0.0f, 0.0f);
    EXPECT_EQ(mask, std::vector<uint8_t>(9, 1));
    EXPECT_THROW(dropout_inplace(y, 1.0f, 1), std::invalid_argument);
    EXPECT_THROW(dropout_inplace(y, -0.1f, 1), std::invalid_argument);
}

}  // namespace
}  // namespace ts
