// Axis tick placement: "nice" round steps (1, 2, 5 × 10^k) for linear axes, decades for log axes, and the
// number formatting that goes with a step so labels are short and exact.
#pragma once

#include <string>
#include <vector>

namespace ts::plot {

/// Round step for covering `range` with about `target_count` intervals: 1, 2 or 5 × 10^k. range > 0.
[[nodiscard]] double nice_step(double range, int target_count);

/// Tick values inside [lo, hi] (inclusive, within 1e-9 of a step) at a nice step, at most ~max_ticks of them.
/// Empty when lo/hi are not finite; a degenerate range (lo == hi) gives the single value.
[[nodiscard]] std::vector<double> nice_ticks(double lo, double hi, int max_ticks = 6);

/// Ticks for a log10 axis over [lo, hi] (both > 0): powers of ten, adding 2 and 5 × 10^k when fewer than 3
/// decades are shown. Empty if lo <= 0.
[[nodiscard]] std::vector<double> log_ticks(double lo, double hi);

/// Label for tick value v on an axis with spacing `step`: enough decimals to tell neighbours apart, no trailing
/// noise ("0.1" not "0.10000000149"); scientific notation for |v| >= 1e5 or small non-zero steps < 1e-3.
[[nodiscard]] std::string format_tick(double v, double step);

/// Value readout for hover tooltips: 4 significant digits, "-inf"/"+inf"/"NaN" spelled out.
[[nodiscard]] std::string format_value(double v);

}  // namespace ts::plot
