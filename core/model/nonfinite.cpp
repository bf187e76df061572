// Counting NaN / ±Inf in float buffers (see core/model/nonfinite.h).
#include "core/model/nonfinite.h"

#include <cmath>

namespace ts {

void NonfiniteCount::scan(const float* x, int64_t n, int64_t base) {
    if (n <= 0) return;
    // allFinite() is a vectorized reduction (x - x is NaN exactly for NaN and ±Inf); only a bad block is walked.
    if (Eigen::Map<const Eigen::ArrayXf>(x, Eigen::Index(n)).allFinite()) return;
    for (int64_t i = 0; i < n; ++i) {
        const float v = x[i];
        if (std::isfinite(v)) continue;
        if (first_index < 0) first_index = base + i;
        if (std::isnan(v)) ++nan;
        else if (v > 0) ++pos_inf;
        else ++neg_inf;
    }
}

std::vector<NonfiniteTensor> find_nonfinite(const WeightMap& w) {
    std::vector<NonfiniteTensor> out;
    for (const auto& [name, t] : w) {
        NonfiniteCount c;
        c.scan(t.data.data(), t.numel());
        if (c.total() > 0) out.push_back({name, t.shape, c});
    }
    return out;
}

std::string describe(const NonfiniteTensor& t) {
    const NonfiniteCount& c = t.count;
    std::string kinds;
    auto add = [&](int64_t k, const char* what) {
        if (k) kinds += (kinds.empty() ? "" : ", ") + std::to_string(k) + " " + what;
    };
    add(c.nan, "NaN");
    add(c.pos_inf, "+Inf");
    add(c.neg_inf, "-Inf");
    return "tensor '" + t.name + "' " + shape_str(t.shape) + " holds " + std::to_string(c.total()) +
           " non-finite value" + (c.total() == 1 ? "" : "s") + " (" + kinds + "), the first at flat index " +
           std::to_string(c.first_index) + ": outputs that depend on it will be NaN";
}

}  // namespace ts
