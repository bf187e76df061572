// GGUF forward speed: every file named in $TS_GGUF_BENCH (colon-separated paths; tests/bench/gguf_bench.sh makes
// synthetic ones and runs llama.cpp on the same files) at T = 64 and 256, 1 and 2 threads, recording nothing (the
// default capture), the last position's logits, as llama.cpp computes them. Quantized matrices
// stay quantized (Storage::Ggml) and are dequantized 32 rows at a time into panels inside each product, or (int8:1) multiplied
// on activations rounded to 8 bits as llama.cpp does (core/kernels/quant_gemm.h).
#include "app/session/worker.h"
#include "core/formats/gguf_model.h"
#include "core/kernels/quant_gemm.h"
#include "core/kernels/threads.h"
#include "core/model/model.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace ts;

std::vector<std::string> bench_files() {
    std::vector<std::string> out;
    if (const char* env = std::getenv("TS_GGUF_BENCH"))
        for (std::stringstream ss(env); std::getline(ss, out.emplace_back(), ':');) {
        }
    while (!out.empty() && out.back().empty()) out.pop_back();
    return out;
}

std::shared_ptr<const Model> model_at(size_t i) {
    static std::map<size_t, std::shared_ptr<const Model>> cache;
    auto it = cache.find(i);
    if (it == cache.end()) it = cache.emplace(i, load_gguf_model(bench_files().at(i))).first;
    return it->second;
}

// The model of file range(0) and T = range(1) ids, or null (the benchmark skipped with the reason).
std::shared_ptr<const Model> bench_model(benchmark::State& state, std::vector<int>& ids) {
    const size_t file = size_t(state.range(0));
    if (file >= bench_files().size()) {
        state.SkipWithError("set TS_GGUF_BENCH to GGUF paths (tests/bench/gguf_bench.sh)");
        return nullptr;
    }
    auto model = model_at(file);
    const int T = int(state.range(1));
    if (T > model->config().max_seq_len) {
        state.SkipWithError("T is longer than the file's context");
        return nullptr;
    }
    ids.resize(static_cast<size_t>(T));
    for (int t = 0; t < T; ++t) ids[size_t(t)] = (t * 7919 + 13) % model->config().vocab_size;
    const std::string f = bench_files()[file];
    state.SetLabel(f.substr(f.find_last_of('/') + 1));
    return model;
}

// arithmetic: 0 = float products of the dequantized weights (default), 1 = llama.cpp's (8-bit activations).
void BM_GgufForward(benchmark::State& state) {
    std::vector<int> ids;
    const auto model = bench_model(state, ids);
    if (!model) return;
    set_compute_threads(int(state.range(2)));
    set_quant_activations(state.range(3) ? QuantActivations::Int8 : QuantActivations::Float);
    ForwardOptions opt;
    opt.all_logits = false;
    for (auto _ : state) {
        const ForwardResult r = forward(*model, ids, opt);
        benchmark::DoNotOptimize(r.logits.data());
    }
    set_compute_threads(1);
    set_quant_activations(QuantActivations::Float);
}
BENCHMARK(BM_GgufForward)
    ->ArgsProduct({{0, 1, 2, 3}, {64, 256}, {1, 2}, {0, 1}})
    ->ArgNames({"file", "T", "threads", "int8"})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);

// #30: long sequences against llama.cpp's flash attention (gguf_bench.sh, "long"): T tokens of file `file` on
// `threads` threads, the last position's logits. capture 0 records nothing (what llama.cpp computes); 1 records what
// the app's Attention tab keeps of a long text (every layer's queries and keys for on-demand attention, the
// embeddings, the final norm: studio::attention_only_capture without the logit lens).
// Attention runs kAttnRowBlock query rows at a time against only the keys the causal mask leaves (never T x T).
// CPU time is the whole process's.
void BM_GgufLongForward(benchmark::State& state) {
    std::vector<int> ids;
    const auto model = bench_model(state, ids);
    if (!model) return;
    set_compute_threads(int(state.range(2)));
    ForwardOptions opt;
    opt.all_logits = false;
    if (state.range(3)) opt.capture = studio::attention_only_capture(false);
    size_t bytes = 0;
    for (auto _ : state) {
        const ForwardResult r = forward(*model, ids, opt);
        benchmark::DoNotOptimize(r.logits.data());
        bytes = r.trace ? r.trace->bytes() : 0;
    }
    state.counters["trace_MB"] = double(bytes) / 1e6;
    set_compute_threads(1);
}
BENCHMARK(BM_GgufLongForward)
    ->ArgsProduct({{0}, {1024, 4096}, {2}, {0, 1}})
    ->ArgNames({"file", "T", "threads", "capture"})
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace
