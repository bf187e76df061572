// llama.cpp's arithmetic for products with a GGUF file's quantized weights: the activations are rounded to 8 bits in
// blocks of 32 (ggml's Q8_0, as quantize_row_q8_0 computes them) and each block's dot product with a weight block is
// taken in integers, then scaled by the two blocks' scales (ggml_vec_dot_q4_0_q8_0 / _q8_0_q8_0). It is what
// llama.cpp computes for a Q4_0 or Q8_0 matrix, and about 2.5x faster here than widening the weights to float32.
// The default stays the exact product of the stored weights (core/kernels/gemm.cpp): rounding the activations
// changes the logits by about 1e-2 relative, which the quantization lens and checks against a float twin must not
// see. The setting is process-wide, like the compute threads (core/kernels/threads.h).
#pragma once

#include "core/model/tensor.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace ts {

class Model;  // core/model/model.h

/// How a product with Storage::Ggml weights treats its activations.
enum class QuantActivations {
    Float,  ///< dequantize the weights and multiply in float32 (exact products of the stored weights; default)
    Int8,   ///< llama.cpp's: activations rounded to Q8_0, integer block dot products (Q4_0 and Q8_0 weights)
};

/// "float" or "int8" (the state file's and the CLI's names).
[[nodiscard]] std::string_view name_of(QuantActivations a);
/// The choice a name gives ("float", "int8"); nullopt for another.
[[nodiscard]] std::optional<QuantActivations> parse_quant_activations(std::string_view name);

/// Sets the process-wide choice (any thread; takes effect at the next product) and returns it.
QuantActivations set_quant_activations(QuantActivations a);
/// The choice in effect (Float until set).
[[nodiscard]] QuantActivations quant_activations();

/// Whether some stored matrix of `m` is of a type the Int8 path covers (a GGUF file with Q4_0 or Q8_0 matrices): the
/// choice then changes the model's products.
[[nodiscard]] bool has_int8_products(const Model& m);

/// Whether the Int8 path has a kernel for this ggml type (Q4_0, Q8_0); the other types stay on the float path.
[[nodiscard]] bool int8_product_supported(uint32_t ggml_type);

/// out (N, O) = x (N, I) · Wᵀ for a Storage::Ggml W (O, I) of a supported type, with x rounded to Q8_0 per row in
/// blocks of 32: for each 32-block b, d_x = max|x| / 127 (stored as f16, as ggml's block_q8_0), q = round(x · 127 /
/// max|x|) (ties to even, as ggml's x86 code); then out[n, o] adds, block by block in order with one fused
/// multiply-add each, float(Σ_k w_q · x_q) · (d_w · d_x), the integer sum exact. Equals ggml's product up to the
/// order of that float sum (ggml sums 8 partial lanes). I must be a multiple of 32. Returns false, computing nothing, when a row of x has a NaN or ±Inf
/// (the caller takes the float path, whose result says so) or the type is not supported. On `n_threads` threads
/// (each a range of 16 output features). Throws std::invalid_argument for a W that is not Ggml or x of the wrong width.
bool matmul_int8_activations(const MatrixRM& x, const Tensor& w, MatrixRM& out, int n_threads);

/// Rows [o0, o0 + valid) (valid <= 16) of a Q4_0 / Q8_0 weight dequantized exactly as ggml_dequantize into 16
/// columns of a panel-ordered block: panel[i * ld + j] = W[o0 + j][i] for i < I, j < 16 (0 for j >= valid). Returns
/// false, writing nothing, for another type or a build without AVX-512 (the caller dequantizes rows and transposes).
bool ggml_dequantize_to_panel(const Tensor& w, int64_t o0, int valid, float* panel, int64_t ld);

namespace detail {
/// The same product in plain C++ (used when the build has no AVX-512 VNNI); equal to the vector kernel bit for bit.
bool matmul_int8_activations_portable(const MatrixRM& x, const Tensor& w, MatrixRM& out);
}  // namespace detail

}  // namespace ts
