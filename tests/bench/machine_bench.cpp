// The machine's own ceilings, measured in the same run as the forward benchmarks so their ratios can be judged
// (issue #14): the float32 fused multiply-add peak of one core, and the streaming read bandwidth from memory with
// 1 and 2 threads. A forward over T rows cannot beat its FLOPs / peak; appending one token (T = 1) cannot beat the
// bytes of weights it reads / bandwidth (GPT-2 small, float32: 340 MB of layer weights + 154 MB of tied LM head).
//
//   BM_MachineFmaPeak       counter GFLOP_per_s: 2 FLOPs per lane per FMA, 12 independent accumulators of the widest
//                           float packet Eigen uses here (16 lanes with AVX-512), one thread
//   BM_MachineReadBandwidth counter GB_per_s: sum of a 512 MiB float array (far larger than any cache), split over
//                           range(0) threads, 4 packet accumulators each
#include <Eigen/Core>
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

namespace {

using Packet = Eigen::internal::packet_traits<float>::type;
constexpr int kLanes = Eigen::internal::packet_traits<float>::size;

void BM_MachineFmaPeak(benchmark::State& state) {
    constexpr int kAcc = 12;      // enough independent chains to cover the FMA latency on both pipes
    constexpr int64_t kSteps = 1 << 22;
    Packet acc[kAcc];
    for (int j = 0; j < kAcc; ++j) acc[j] = Eigen::internal::pset1<Packet>(1.0f + 1e-7f * float(j));
    const Packet b = Eigen::internal::pset1<Packet>(0.999999f), c = Eigen::internal::pset1<Packet>(1e-7f);
    for (auto _ : state) {
        for (int64_t i = 0; i < kSteps; ++i)
            for (int j = 0; j < kAcc; ++j) acc[j] = Eigen::internal::pmadd(acc[j], b, c);
        for (int j = 0; j < kAcc; ++j) benchmark::DoNotOptimize(acc[j]);
    }
    state.counters["GFLOP_per_s"] = benchmark::Counter(double(state.iterations()) * double(kSteps) * kAcc * kLanes * 2,
                                                       benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
    state.counters["lanes"] = kLanes;
}
BENCHMARK(BM_MachineFmaPeak)->Unit(benchmark::kMillisecond)->UseRealTime();

// Sum of n floats (n a multiple of 4 packets) with 4 independent packet accumulators: bound by memory, not by adds.
float stream_sum(const float* p, int64_t n) {
    using namespace Eigen::internal;
    Packet s0 = pset1<Packet>(0.0f), s1 = s0, s2 = s0, s3 = s0;
    for (int64_t i = 0; i + 4 * kLanes <= n; i += 4 * kLanes) {
        s0 = padd(s0, ploadu<Packet>(p + i));
        s1 = padd(s1, ploadu<Packet>(p + i + kLanes));
        s2 = padd(s2, ploadu<Packet>(p + i + 2 * kLanes));
        s3 = padd(s3, ploadu<Packet>(p + i + 3 * kLanes));
    }
    return predux(padd(padd(s0, s1), padd(s2, s3)));
}

void BM_MachineReadBandwidth(benchmark::State& state) {
    const int n_threads = static_cast<int>(state.range(0));
    const int64_t n = int64_t(512) << 20 >> 2;  // 512 MiB of floats
    std::vector<float> a(size_t(n), 1.0f);
    for (auto _ : state) {
        double total = 0.0;
#pragma omp parallel for num_threads(n_threads) reduction(+ : total) schedule(static)
        for (int t = 0; t < n_threads; ++t) {
            const int64_t b = n * t / n_threads, e = n * (t + 1) / n_threads;
            total += double(stream_sum(a.data() + b, e - b));
        }
        benchmark::DoNotOptimize(total);
    }
    state.counters["GB_per_s"] = benchmark::Counter(double(state.iterations()) * double(n) * sizeof(float),
                                                    benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_MachineReadBandwidth)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
