// Small helpers shared by the trainer's .cpp files: Eigen views of WeightMap tensors and bias-gradient sums.
// Internal to core/train.
#pragma once

#include "core/model/tensor.h"
#include "core/kernels/threads.h"

#include <utility>

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

/// dst = lhs * rhs (add = false) or dst += lhs * rhs (add = true) for a presized dst (rows, cols): the rows of dst
/// are cut into compute_threads() contiguous ranges, each one single-threaded Eigen product on its own thread.
/// Eigen's own parallel product makes its threads wait for each other inside every product (busy-waiting, which on
/// a shared 2-core machine costs as much as the work); here threads meet once, at the end. lhs may be any Eigen
/// expression with direct access (a matrix, a map, a transpose of one). Used for every weight-sized product of the
/// training forward and backward.
template <class Dst, class Lhs, class Rhs>
void product(Dst&& dst, const Lhs& lhs, const Rhs& rhs, bool add) {
    if (!add) dst.resize(lhs.rows(), rhs.cols());  // a matrix is resized; a map's size is only checked
    const Eigen::Index rows = dst.rows();
    const int nt = rows >= 64 ? compute_threads() : 1;
    auto part = [&](Eigen::Index r0, Eigen::Index n) {
        if (add)
            dst.middleRows(r0, n).noalias() += lhs.middleRows(r0, n) * rhs;
        else
            dst.middleRows(r0, n).noalias() = lhs.middleRows(r0, n) * rhs;
    };
    if (nt <= 1) {
        part(0, rows);
        return;
    }
#pragma omp parallel for num_threads(nt) schedule(static, 1)
    for (int t = 0; t < nt; ++t) {
        const Eigen::Index r0 = rows * t / nt, r1 = rows * (t + 1) / nt;
        if (r1 > r0) part(r0, r1 - r0);
    }
}

}  // namespace ts::train
