// NaN and ±Inf in weights. A checkpoint holding them still opens (the format does not forbid them), but every
// output they touch is NaN, so the loaders count them while decoding and report each bad tensor by name.
#pragma once

#include "core/model/model.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ts {

/// How many values of one tensor are NaN, +Inf or -Inf, and where the first one is.
struct NonfiniteCount {
    int64_t nan = 0, pos_inf = 0, neg_inf = 0;
    int64_t first_index = -1;  ///< flat (row-major) index of the first non-finite value; -1 when there is none

    [[nodiscard]] int64_t total() const { return nan + pos_inf + neg_inf; }
    /// Adds x[0, n), which are the flat indices [base, base + n) of the tensor; call with increasing base.
    /// One vectorized pass when every value is finite (the common case), a counting pass otherwise.
    void scan(const float* x, int64_t n, int64_t base = 0);
};

/// One tensor that holds non-finite values.
struct NonfiniteTensor {
    std::string name;
    std::vector<int64_t> shape;
    NonfiniteCount count;
};

/// Every tensor of `w` holding NaN or ±Inf, in name order (empty when all are finite).
[[nodiscard]] std::vector<NonfiniteTensor> find_nonfinite(const WeightMap& w);

/// One line for the user, e.g. "tensor 'dec.0.attn.wq' (64, 64) holds 3 non-finite values (2 NaN, 1 +Inf), the
/// first at flat index 70: outputs that depend on it will be NaN".
[[nodiscard]] std::string describe(const NonfiniteTensor& t);

}  // namespace ts
