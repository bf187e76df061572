// ggml's tensor types (the numbers GGUF files store) and their block formats decoded to float32, exactly as ggml
// does (core/kernels/quants.cpp). Quantized weights stay in their blocks (Tensor Storage::Ggml) and the products
// dequantize a few rows at a time; the file format that carries them is core/formats/gguf.h.
#pragma once

#include "core/model/tensor.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace ts {

struct NonfiniteCount;  // core/model/nonfinite.h

/// ggml's tensor types (ggml.h `enum ggml_type`; the numbers are the file's). The ones named here are the ones
/// ggml_dequantize decodes; ggml_type_info also knows the sizes of the others (IQ*, TQ*, MXFP4 ...).
enum class GgmlType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    BF16 = 30,
};

/// A type's name ("Q4_K"), values per block and bytes per block (ggml's type traits / gguf-py GGML_QUANT_SIZES),
/// and whether ggml_dequantize decodes it.
struct GgmlTypeInfo {
    std::string_view name;
    int block_size = 0;   ///< values per block (1 for F32/F16/BF16, 32 for Q*_0/Q*_1, 256 for the K-quants)
    int block_bytes = 0;  ///< bytes per block
    bool decodable = false;
};

/// Facts of a type number the format defines; nullopt for a number it does not.
[[nodiscard]] std::optional<GgmlTypeInfo> ggml_type_info(uint32_t type);

/// Decodes n values from `blocks` (n / block_size consecutive blocks) into out[0, n), exactly as ggml's
/// dequantize_row_* (ggml-quants.c) and gguf-py's quants.py compute them: the same products in the same order, so
/// the floats are equal bit for bit. Each block's scales are IEEE half (bfloat16 for BF16 values). Throws
/// std::invalid_argument for a type it does not decode or an n that is not a multiple of the block size.
void ggml_dequantize(GgmlType type, const uint8_t* blocks, int64_t n, float* out);

/// Rows [r0, r0 + n) of a Storage::Ggml tensor (rows = shape[0], each of shape[1] values) dequantized into out
/// (n x shape[1] floats), as ggml_dequantize. Throws std::invalid_argument when t is not Ggml or the rows are outside.
void ggml_dequantize_rows(const Tensor& t, int64_t r0, int64_t n, float* out);
/// Adds the NaN / ±Inf among n values of block-quantized data (Q4_0 ... Q6_K; base = flat index of the first) to
/// `count` without decoding every block: a block's values are all finite when its f16 scales are, so only blocks
/// with a non-finite scale are decoded and counted. Throws std::invalid_argument for another type.
void ggml_count_nonfinite(GgmlType type, const uint8_t* blocks, int64_t n, int64_t base, NonfiniteCount& count);
/// Bytes of one row of `cols` values of a ggml type (cols a multiple of its block size).
[[nodiscard]] int64_t ggml_row_bytes(uint32_t type, int64_t cols);

}  // namespace ts
