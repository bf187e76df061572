// Nice tick computation (Heckbert's "nice numbers" idea) and tick-label formatting.
#include "app/plot/ticks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ts::plot {

double nice_step(double range, int target_count) {
    if (!(range > 0) || !std::isfinite(range)) return 1.0;
    const double raw = range / std::max(1, target_count);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double f = raw / mag;
    const double nice = f < 1.5 ? 1.0 : f < 3.0 ? 2.0 : f < 7.0 ? 5.0 : 10.0;
    return nice * mag;
}

std::vector<double> nice_ticks(double lo, double hi, int max_ticks) {
    std::vector<double> out;
    if (!std::isfinite(lo) || !std::isfinite(hi)) return out;
    if (lo > hi) std::swap(lo, hi);
    if (hi == lo) return {lo};
    max_ticks = std::max(2, max_ticks);
    double step = nice_step(hi - lo, max_ticks - 1);
    // Widen the step until the count fits (nice_step rounds down sometimes).
    while ((hi - lo) / step + 1 > max_ticks + 0.5) step = nice_step(step * 2.01, 1);
    const double eps = step * 1e-9;
    const double first = std::ceil((lo - eps) / step) * step;
    for (double v = first; v <= hi + eps; v += step) {
        const double snapped = std::abs(v) < eps ? 0.0 : v;
        out.push_back(snapped);
        if (out.size() > 100) break;
    }
    return out;
}

std::vector<double> log_ticks(double lo, double hi) {
    std::vector<double> out;
    if (!(lo > 0) || !(hi > 0) || !std::isfinite(lo) || !std::isfinite(hi)) return out;
    if (lo > hi) std::swap(lo, hi);
    const int e0 = int(std::floor(std::log10(lo) + 1e-9)), e1 = int(std::ceil(std::log10(hi) - 1e-9));
    const bool fine = std::log10(hi / lo) <= 3.0;
    // Over many decades, every k-th decade only: at most 7 labels, which fit a small plot's height.
    const int every = std::max(1, (e1 - e0 + 1 + 6) / 7);
    for (int e = e0; e <= e1; ++e) {
        if (((e % every) + every) % every != 0) continue;
        for (double m : {1.0, 2.0, 5.0}) {
            if (m != 1.0 && !fine) continue;
            const double v = m * std::pow(10.0, e);
            if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back(v);
        }
    }
    return out;
}

std::string format_tick(double v, double step) {
    char buf[64];
    if (v == 0.0) return "0";
    const double a = std::abs(v);
    if (a >= 1e5 || (step > 0 && step < 1e-3)) {
        std::snprintf(buf, sizeof buf, "%.3g", v);
        return buf;
    }
    int decimals = step > 0 ? std::max(0, int(std::ceil(-std::log10(step) - 1e-9))) : 3;
    // Steps like 0.25 need one more digit than their magnitude says.
    while (step > 0 && decimals < 6) {
        const double scaled = step * std::pow(10.0, decimals);
        if (std::abs(scaled - std::round(scaled)) <= 1e-6 * scaled) break;
        ++decimals;
    }
    decimals = std::min(decimals, 6);
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string format_value(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+inf" : "-inf";
    char buf[64];
    const double a = std::abs(v);
    if (a != 0 && (a >= 1e5 || a < 1e-3)) std::snprintf(buf, sizeof buf, "%.4e", v);
    else std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

}  // namespace ts::plot
