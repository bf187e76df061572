// Dense float tensors and the Eigen aliases every core file shares.
// A Tensor is a shape plus contiguous row-major float storage (last axis fastest), like a C-contiguous
// torch.Tensor of dtype float32.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace ts {

/// The one matrix type of the project: float, dynamic, row-major (matches torch's default layout).
using MatrixRM = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVectorF = Eigen::Matrix<float, 1, Eigen::Dynamic, Eigen::RowMajor>;
using MapRM = Eigen::Map<MatrixRM>;
using ConstMapRM = Eigen::Map<const MatrixRM>;

/// "(2, 3)" for shape {2, 3}, "()" for a scalar. Formats without allocating (unlike Tensor(shape).shape_str()),
/// so messages about absurd shapes from a file are safe to build.
[[nodiscard]] inline std::string shape_str(const std::vector<int64_t>& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    return s + ")";
}

/// How a Tensor's values are stored: float32 in `data`, IEEE half / bfloat16 bits in `half` (model weights kept
/// as a checkpoint stores them; core/model/half.h widens them block by block inside the matrix products), or float32 in
/// `panels`, the order of the forward's matrix product (F32Panels: a model's linear-layer weights; core/kernels/gemm.h), or
/// half-precision bits in that order in `half` (F16Panels, BF16Panels: the same weights of a half-precision model).
/// Ggml: a GGUF file's quantized blocks kept as stored (Q4_0 ... Q6_K, `ggml_type` a ggml type number) in `blocks`,
/// row-major (each row a whole number of blocks); the products dequantize a few rows at a time (core/kernels/quants.h,
/// ggml_dequantize_rows), so a 4-bit model takes about its file size.
enum class Storage : uint8_t { F32, F16, BF16, F32Panels, F16Panels, BF16Panels, Ggml };

/// Row-major float tensor. shape {} is a scalar holding one value. A half-precision tensor (storage F16/BF16) keeps
/// its values in `half` and `data` is empty: read it through core/model/half.h (widen_half, to_f32), not mat()/data.
/// So does a panel-ordered one (F32Panels, values in `panels`; F16Panels / BF16Panels, bits in `half`): to_f32
/// gives the row-major float32 copy.
struct Tensor {
    std::vector<int64_t> shape;
    std::vector<float> data;
    Storage storage = Storage::F32;
    std::vector<uint16_t> half;  ///< F16 / BF16 bits (row-major, or panel order for F16Panels / BF16Panels)
    std::vector<float, Eigen::aligned_allocator<float>> panels;  ///< F32Panels: 32-row panels (core/kernels/gemm.h)
    std::vector<uint8_t> blocks;  ///< Ggml: the quantized rows as the GGUF file stores them (when owned)
    uint32_t ggml_type = 0;       ///< Ggml: the ggml type number of the blocks
    /// Ggml: the blocks in memory this tensor does not own (a GGUF file's mapping, kept alive by `mapping`); null
    /// when they are in `blocks`. Read them through block_data().
    const uint8_t* mapped_blocks = nullptr;
    std::shared_ptr<const void> mapping;
    [[nodiscard]] const uint8_t* block_data() const { return mapped_blocks ? mapped_blocks : blocks.data(); }

    Tensor() = default;
    explicit Tensor(std::vector<int64_t> shape_) : shape(std::move(shape_)), data(count(shape), 0.0f) {}
    Tensor(std::vector<int64_t> shape_, std::vector<float> data_) : shape(std::move(shape_)), data(std::move(data_)) {
        if (static_cast<int64_t>(data.size()) != count(shape))
            throw std::invalid_argument("Tensor: data has " + std::to_string(data.size()) +
                                        " values but shape needs " + std::to_string(count(shape)));
    }

    [[nodiscard]] static int64_t count(const std::vector<int64_t>& s) {
        return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
    }
    [[nodiscard]] int64_t numel() const {
        if (in_panels() || storage == Storage::Ggml) return count(shape);
        return static_cast<int64_t>(storage == Storage::F32 ? data.size() : half.size());
    }
    /// F16 or BF16 bits in `half`, row-major or in panels.
    [[nodiscard]] bool is_half() const {
        return storage == Storage::F16 || storage == Storage::BF16 || storage == Storage::F16Panels ||
               storage == Storage::BF16Panels;
    }
    /// In the panel order of the forward's product (core/kernels/gemm.h), float32 or half precision.
    [[nodiscard]] bool in_panels() const {
        return storage == Storage::F32Panels || storage == Storage::F16Panels || storage == Storage::BF16Panels;
    }
    /// Quantized ggml blocks in `blocks` (read through to_f32 or ggml_dequantize_rows).
    [[nodiscard]] bool is_ggml() const { return storage == Storage::Ggml; }
    /// Row-major float32 in `data`: mat() and data are valid (otherwise read the tensor through to_f32).
    [[nodiscard]] bool is_f32_rows() const { return storage == Storage::F32; }
    [[nodiscard]] int64_t dim(size_t i) const { return shape.at(i); }
    [[nodiscard]] size_t rank() const { return shape.size(); }
    [[nodiscard]] std::string shape_str() const { return ts::shape_str(shape); }
    /// View a rank-2 tensor as a row-major matrix (rows = shape[0]); rank-1 is one row.
    /// Higher ranks are viewed as (shape[0]*...*shape[r-2], shape[r-1]).
    [[nodiscard]] ConstMapRM mat() const { return ConstMapRM(data.data(), rows(), cols()); }
    [[nodiscard]] MapRM mat() { return MapRM(data.data(), rows(), cols()); }
    [[nodiscard]] int64_t cols() const { return shape.empty() ? 1 : shape.back(); }
    [[nodiscard]] int64_t rows() const { return cols() == 0 ? 0 : numel() / cols(); }
};

}  // namespace ts
