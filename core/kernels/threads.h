// How many threads the compute core may use: Eigen's matrix products (Eigen's OpenMP path, Debian's libgomp) and
// the per-head loops of attention. One process-wide setting, because Eigen's own is (Eigen::setNbThreads).
#pragma once

#include <string_view>

namespace ts {

/// Sets the threads for the forward's matrix products (each split into one block of output features per thread)
/// and per-head attention (>= 1; values below 1 become 1). Call before starting forwards, not while one runs on
/// another thread. Without OpenMP support in the build, only 1 is possible (returns 1). Returns the count now in
/// effect. Default: 1. `eigen_gemm` also lets Eigen parallelize the products it runs itself (the trainer's): on a
/// machine whose cores are busy, Eigen's threads spin-wait for each other, so the forward never relies on it.
int set_compute_threads(int n, bool eigen_gemm = false);
/// The count in effect (1 until set).
[[nodiscard]] int compute_threads();
/// Index of the calling thread in the innermost `omp parallel` team (0 outside one, or without OpenMP): picks a
/// per-thread scratch buffer inside the core's parallel loops.
[[nodiscard]] int compute_thread_index();
/// Logical cores of this machine (std::thread::hardware_concurrency, at least 1).
[[nodiscard]] int hardware_threads();
/// The app's default for its compute worker: max(1, cores - 1), so the UI thread keeps a core.
[[nodiscard]] int default_worker_threads();
/// Parses a --threads value: an integer in [1, 256]; throws std::invalid_argument with a one-line message.
[[nodiscard]] int parse_thread_count(const std::string_view text);

}  // namespace ts
