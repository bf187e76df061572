// LayerNorm, RMSNorm and BatchNorm (train and eval) over the last dimension (see core/kernels/ops.h for shapes, units and
// sources). Reference semantics are PyTorch's; tests/core/ops_golden_test.cpp checks them against torch fixtures.
#include "core/kernels/ops.h"

// GCC 12 reports -Wmaybe-uninitialized inside its own AVX-512 intrinsics when Eigen is inlined with -march=native.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <cmath>
#include <stdexcept>
#include <string>

namespace ts {

namespace {

using ConstRowMap = Eigen::Map<const RowVectorF>;

// gamma/beta may be empty (identity affine) or exactly d long; anything else is a caller bug worth a clear message.
void check_affine(const char* fn, const char* what, std::span<const float> v, Eigen::Index d) {
    if (!v.empty() && static_cast<Eigen::Index>(v.size()) != d)
        throw std::invalid_argument(std::string(fn) + ": " + what + " has " + std::to_string(v.size()) +
                                    " values, expected 0 or d = " + std::to_string(d));
}

void apply_affine(MatrixRM& y, std::span<const float> gamma, std::span<const float> beta) {
    if (!gamma.empty()) y.array().rowwise() *= ConstRowMap(gamma.data(), Eigen::Index(gamma.size())).array();
    if (!beta.empty()) y.array().rowwise() += ConstRowMap(beta.data(), Eigen::Index(beta.size())).array();
}

}  // namespace

// --- normalization -----------------------------------------------------------------------------------------------
MatrixRM layer_norm(const MatrixRM& x, std::span<const float> gamma, std::span<const float> beta, float eps) {
    const Eigen::Index d = x.cols();
    check_affine("layer_norm", "gamma", gamma, d);
    check_affine("layer_norm", "beta", beta, d);
    MatrixRM y = x;
    if (d == 0) return y;
    for (Eigen::Index r = 0; r < y.rows(); ++r) {
        auto row = y.row(r);
        const float mean = row.mean();
        row.array() -= mean;
        const float var = row.squaredNorm() / float(d);  // biased, as torch.nn.LayerNorm
        row *= 1.0f / std::sqrt(var + eps);
    }
    apply_affine(y, gamma, beta);
    return y;
}

MatrixRM rms_norm(const MatrixRM& x, std::span<const float> gamma, float eps) {
    const Eigen::Index d = x.cols();
    check_affine("rms_norm", "gamma", gamma, d);
    MatrixRM y = x;
    if (d == 0) return y;
    for (Eigen::Index r = 0; r < y.rows(); ++r) {
        auto row = y.row(r);
        const float ms = row.squaredNorm() / float(d);
        row *= 1.0f / std::sqrt(ms + eps);
    }
    apply_affine(y, gamma, {});
    return y;
}

MatrixRM apply_norm(NormKind kind, const MatrixRM& x, std::span<const float> gamma, std::span<const float> beta,
                    float eps) {
    switch (kind) {
        case NormKind::LayerNorm: return layer_norm(x, gamma, beta, eps);
        case NormKind::RMSNorm: return rms_norm(x, gamma, eps);
    }
    throw std::invalid_argument("apply_norm: unknown NormKind value " + std::to_string(int(kind)));
}

MatrixRM batch_norm(const MatrixRM& x, std::span<const float> gamma, std::span<const float> beta, float eps,
                    BatchNormState& state, bool training) {
    const Eigen::Index n = x.rows(), d = x.cols();
    check_affine("batch_norm", "gamma", gamma, d);
    check_affine("batch_norm", "beta", beta, d);
    // An empty state starts where torch.nn.BatchNorm1d starts: running_mean = 0, running_var = 1.
    if (state.running_mean.size() == 0) state.running_mean = RowVectorF::Zero(d);
    if (state.running_var.size() == 0) state.running_var = RowVectorF::Ones(d);
    if (state.running_mean.size() != d || state.running_var.size() != d)
        throw std::invalid_argument("batch_norm: running stats have " + std::to_string(state.running_mean.size()) +
                                    "/" + std::to_string(state.running_var.size()) + " features, x has d = " +
                                    std::to_string(d));
    MatrixRM y(n, d);
    if (training) {
        if (n < 2)
            throw std::invalid_argument("batch_norm: training needs more than 1 row per feature (batch variance), "
                                        "found N = " + std::to_string(n));
        const RowVectorF mean = x.colwise().mean();
        y = x.rowwise() - mean;
        const RowVectorF var = y.colwise().squaredNorm() / float(n);  // biased: used to normalize
        // sqrt then divide (IEEE exact) rather than Eigen's rsqrt, which may use an approximate SIMD instruction.
        const RowVectorF inv_std = (var.array() + eps).sqrt().inverse().matrix();
        y.array().rowwise() *= inv_std.array();
        // torch updates running_var with the unbiased estimate and running = (1 - m) running + m batch.
        const float m = state.momentum;
        const float unbias = float(n) / float(n - 1);
        state.running_mean = (1.0f - m) * state.running_mean + m * mean;
        state.running_var = (1.0f - m) * state.running_var + (m * unbias) * var;
    } else {
        y = x.rowwise() - state.running_mean;
        const RowVectorF inv_std = (state.running_var.array() + eps).sqrt().inverse().matrix();
        y.array().rowwise() *= inv_std.array();
    }
    apply_affine(y, gamma, beta);
    return y;
}

}  // namespace ts
