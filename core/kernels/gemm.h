// x · Wᵀ for the forward's linear layers and LM head, with the weights (float32, or half precision as stored) kept in
// panel order.
//
// A torch.nn.Linear weight W (out_features O, in_features I) is stored row-major, so output feature o reads a
// contiguous row. A product of a few rows of x with W then needs W gathered into column order first: Eigen packs
// (transposes) every panel of W on every call, and at the sizes a typed sentence has (T = 16-64 tokens) that gather
// cost as much as the multiply. Panels keep W in the order the product reads it, once, when the model is built:
// for each block of kPanelRows = 32 output features p, the values W[32p + j][i] are stored at i*32 + j — 32
// consecutive output features per input feature, one cache line pair. The micro-kernel multiplies a panel with up
// to 12 rows of x in registers (24 accumulators of 16 floats, AVX-512), summing the inner dimension in blocks of
// kPanelDepth, so each row of the result is computed in the same order whatever the number of rows (an
// incremental one-row forward equals the full forward's row bit for bit) and whatever the thread count (threads
// take whole panels). Same memory as the row-major weight (the last panel is zero-padded to 32 rows). Half-precision
// panels hold the 16-bit values in the same order; the kernel widens each panel row as it loads it (exact), so
// their product equals that of the float32 panels of the widened weight bit for bit.
#pragma once

#include "core/model/tensor.h"

namespace ts {

/// Output features per panel.
inline constexpr int64_t kPanelRows = 32;
/// Inner-dimension block: each 256-long block of a dot product is summed in registers, then added to the result.
inline constexpr int64_t kPanelDepth = 256;

/// The panel-ordered copy of a row-major rank-2 weight (O, I): float32 -> Storage::F32Panels, values in `panels`
/// (ceil(O / 32) * 32 * I floats), `data` empty; F16 / BF16 -> F16Panels / BF16Panels, the bits in that order in
/// `half` (the product widens them as it loads them, exactly). `shape` unchanged. Throws std::invalid_argument for
/// another rank or storage.
[[nodiscard]] Tensor pack_panels(const Tensor& w);
/// The same, consuming w: the pages of rows already packed are handed back to the system as packing goes, so a
/// model's load peaks at about one copy of the weight, not two (w is left empty).
[[nodiscard]] Tensor pack_panels(Tensor&& w);
/// The row-major float32 weight back from its panels (exact: a permutation, half precision widened).
[[nodiscard]] Tensor unpack_panels(const Tensor& p);
/// Row o of a panel-ordered weight (O, I) into dst[0, I): one value every 32 floats (an embedding lookup in a tied
/// LM head's panels). Throws std::invalid_argument when p is not in panels or o is outside [0, O).
void panel_row(const Tensor& p, int64_t o, float* dst);

/// out (N, O) = x (N, I) · Wᵀ for W (O, I) in panels (float32 or half precision, computed in float32), on
/// `n_threads` threads (each a range of panels); out is resized and must not alias x. Equals
/// torch.nn.functional.linear(x, W) up to float rounding (the inner sum runs in 256-long blocks, each in the order
/// i = 0, 1, ...). Throws std::invalid_argument when x has not I columns.
void matmul_panels(const MatrixRM& x, const Tensor& w, MatrixRM& out, int n_threads);

namespace detail {
/// The portable kernel (plain C++ loops), used when the build has no AVX-512; exposed so tests compare both.
void matmul_panels_portable(const MatrixRM& x, const Tensor& w, MatrixRM& out);
}  // namespace detail

}  // namespace ts
