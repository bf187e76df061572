// Small helpers shared by the trainer's .cpp files: Eigen views of WeightMap tensors and bias-gradient sums.
// Internal to core/train.
#pragma once

#include "core/tensor.h"

namespace ts::train {

/// A weight tensor as a (rows, cols) row-major matrix view (rank-1: one row).
[[nodiscard]] inline MapRM map(Tensor& t) { return MapRM(t.data.data(), t.rows(), t.cols()); }
[[nodiscard]] inline ConstMapRM cmap(const Tensor& t) { return ConstMapRM(t.data.data(), t.rows(), t.cols()); }
/// A rank-1 tensor as a row vector view.
[[nodiscard]] inline Eigen::Map<const RowVectorF> crow(const Tensor& t) {
    return Eigen::Map<const RowVectorF>(t.data.data(), t.numel());
}
/// bias_grad (cols) += column sums of m (rows, cols), summed row by row (contiguous, vectorized).
inline void add_colsum(Tensor& bias_grad, const MatrixRM& m) {
    Eigen::Map<Eigen::ArrayXf> acc(bias_grad.data.data(), m.cols());
    for (Eigen::Index r = 0; r < m.rows(); ++r) acc += Eigen::Map<const Eigen::ArrayXf>(m.data() + r * m.cols(), m.cols());
}

}  // namespace ts::train
