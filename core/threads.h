// How many threads the compute core may use: Eigen's matrix products (Eigen's OpenMP path, Debian's libgomp) and
// the per-head loops of attention. One process-wide setting, because Eigen's own is (Eigen::setNbThreads).
#pragma once

#include <string_view>

namespace ts {

/// Sets the threads for GEMMs and per-head work (>= 1; values below 1 become 1). Call before starting forwards,
/// not while one runs on another thread. Without OpenMP support in the build, only 1 is possible (returns 1).
/// Returns the count now in effect. Default: 1 (results reproducible to the bit run to run).
int set_compute_threads(int n);
/// The count in effect (1 until set).
[[nodiscard]] int compute_threads();
/// Logical cores of this machine (std::thread::hardware_concurrency, at least 1).
[[nodiscard]] int hardware_threads();
/// The app's default for its compute worker: max(1, cores - 1), so the UI thread keeps a core.
[[nodiscard]] int default_worker_threads();
/// Parses a --threads value: an integer in [1, 256]; throws std::invalid_argument with a one-line message.
[[nodiscard]] int parse_thread_count(const std::string_view text);

}  // namespace ts
