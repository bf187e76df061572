// Process-wide compute thread count: Eigen's OpenMP GEMMs and the core's own `omp parallel for` over heads.
#include "core/kernels/threads.h"
#include "core/util/json.h"
#include "core/util/number.h"

#include <Eigen/Core>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <atomic>
#include <charconv>
#include <stdexcept>
#include <string>
#include <thread>

namespace ts {

namespace {
std::atomic<int> g_threads{1};
const bool kEigenSingle = [] {
    Eigen::setNbThreads(1);  // Eigen's default with OpenMP is every core; the core starts at 1 like torch here
    return true;
}();
}  // namespace

int set_compute_threads(int n, bool eigen_gemm) {
    (void)kEigenSingle;
#ifdef _OPENMP
    n = std::clamp(n, 1, 256);
#else
    n = 1;
#endif
    g_threads.store(n);
    Eigen::setNbThreads(eigen_gemm ? n : 1);
    return n;
}

int compute_threads() { return g_threads.load(); }

int compute_thread_index() {
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

int hardware_threads() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

int default_worker_threads() { return std::max(1, hardware_threads() - 1); }

int parse_thread_count(const std::string_view text) {
    const auto n = parse_int(text);  // core/util/number.h: the whole text
    if (!n || *n < 1 || *n > 256)
        throw std::invalid_argument("--threads expects an integer from 1 to 256, got " +
                                    quote_value(std::string(text)));
    return int(*n);
}

}  // namespace ts
