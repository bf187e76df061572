// Forward-pass speed: a GPT-2-small-shaped decoder (random weights) at T = 16, 64, 256 and the default-size model
// at T = 32, with full trace capture (and without, to show the capture cost), plus a plain Eigen sgemm of a
// comparable shape, and with logits for the last position only (ForwardOptions::all_logits = false, full capture
// otherwise: the LM head is one row instead of T). Compare with tests/reference/bench_forward_torch.py (same shapes, PyTorch, 1 thread).
#include "core/kernels/attention_rows.h"
#include "core/forward/incremental.h"
#include "core/model/model.h"
#include "core/kernels/threads.h"

#include <benchmark/benchmark.h>

#include <malloc.h>

#include "tests/bench/bench_models.h"

#include <cstdlib>
#include <memory>

namespace {

using namespace ts;

ModelConfig gpt2_small() {
    return bench::gpt2_small_config();
}

ModelConfig default_size() {
    return bench::default_size_config();
}

// glibc returns freed multi-MB trace/logit buffers to the OS and page-faults them back on the next forward (~1 ms of
// a 3 ms default-size forward with full capture). TS_BENCH_MALLOC_DEFAULTS=1 keeps glibc's defaults to show that cost;
// otherwise keep freed memory in the process, as an app doing back-to-back forwards should.
const bool kMallocTuned = [] {
    if (std::getenv("TS_BENCH_MALLOC_DEFAULTS")) return false;
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    return true;
}();

const Model& cached_model(bool big) {
    static std::unique_ptr<Model> gpt2, small;
    std::unique_ptr<Model>& m = big ? gpt2 : small;
    if (!m) {
        const ModelConfig c = big ? gpt2_small() : default_size();
        m = std::make_unique<Model>(c, init_weights(c, 42));
    }
    return *m;
}

// Multiply-adds counted as 2 FLOPs: projections, FFN, QK^T and PV, LM head (all rows).
double forward_flops(const ModelConfig& c, int T) {
    const double D = c.d_model, F = c.d_ff, Hd = double(c.n_heads) * c.d_head(), Kd = double(c.n_kv_heads) * c.d_head();
    const double per_layer = 2.0 * T * (D * Hd + 2 * D * Kd + Hd * D) + 2.0 * T * D * F * (is_gated(c.activation) ? 3 : 2) +
                             2.0 * 2.0 * T * T * Hd;
    return c.n_layers * per_layer + 2.0 * T * D * c.vocab_size;
}

void run_forward(benchmark::State& state, bool big, bool capture, bool all_logits = true) {
    const Model& m = cached_model(big);
    const int T = static_cast<int>(state.range(0));
    std::vector<int> ids(T);
    for (int t = 0; t < T; ++t) ids[t] = (t * 7919) % m.config().vocab_size;
    ForwardOptions opt;
    opt.capture = capture ? CaptureFilter::all() : CaptureFilter::none();
    opt.all_logits = all_logits;
    size_t traced = 0;
    for (auto _ : state) {
        ForwardResult r = forward(m, ids, opt);
        benchmark::DoNotOptimize(r.logits.data());
        traced = r.trace->size();
    }
    const ModelConfig& c = m.config();
    const double head_rows_saved = all_logits ? 0.0 : 2.0 * (T - 1) * double(c.d_model) * c.vocab_size;
    state.counters["FLOP/s"] =
        benchmark::Counter(forward_flops(c, T) - head_rows_saved, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["traced"] = static_cast<double>(traced);
    state.SetLabel(kMallocTuned ? "malloc tuned" : "malloc defaults");
}

// As the app's worker asks (issue #14): full capture, trace buffers from the worker's pool (handed back when the
// result is dropped), on range(1) compute threads, and range(2) = logits: 1, the last position's (the Predictions
// and Causal tabs; the others come on request, Snapshot::logits_row), or 0, none (the Attention tab and every other
// tab that shows no logits: no LM head product). BM_ForwardGpt2Small is the same forward with every logits row and
// no pool.
void BM_ForwardGpt2SmallApp(benchmark::State& state) {
    const Model& m = cached_model(true);
    const int T = static_cast<int>(state.range(0));
    set_compute_threads(static_cast<int>(state.range(1)));
    const bool logits = state.range(2) != 0;
    std::vector<int> ids(T);
    for (int t = 0; t < T; ++t) ids[t] = (t * 7919) % m.config().vocab_size;
    ForwardOptions opt;
    opt.capture = CaptureFilter::all();
    opt.all_logits = false;
    opt.compute_logits = logits;
    opt.pool = std::make_shared<TensorPool>();
    size_t bytes = 0;
    { const ForwardResult warm = forward(m, ids, opt); }  // the pool holds a trace's buffers, as in the app
    for (auto _ : state) {
        ForwardResult r = forward(m, ids, opt);
        benchmark::DoNotOptimize(r.logits.data());
        bytes = r.trace->bytes();
    }
    set_compute_threads(1);
    const ModelConfig& c = m.config();
    const double head_rows_skipped = logits ? T - 1 : T;
    state.counters["FLOP/s"] = benchmark::Counter(forward_flops(c, T) - 2.0 * head_rows_skipped * double(c.d_model) * c.vocab_size,
                                                  benchmark::Counter::kIsIterationInvariantRate);
    state.counters["trace_MB"] = double(bytes) / 1e6;
}
// #30: what a keystroke costs until the Attention tab can draw: the app's forward (full capture, no logits) and then
// the one head the big heatmap shows, from the block's AttentionRows — every row at T <= 256, the pooled overview
// (256 x 256 blocks, max) above. range(0) = T, range(1) = threads. Counter attn_MB: what the eager forward kept as
// scores + probs (2 H T^2 floats per layer), none of which exists now.
void BM_FirstHeatmapGpt2Small(benchmark::State& state) {
    const Model& m = cached_model(true);
    const int T = static_cast<int>(state.range(0));
    set_compute_threads(static_cast<int>(state.range(1)));
    std::vector<int> ids(T);
    for (int t = 0; t < T; ++t) ids[t] = (t * 7919) % m.config().vocab_size;
    ForwardOptions opt;
    opt.capture = CaptureFilter::all();
    opt.compute_logits = false;
    opt.pool = std::make_shared<TensorPool>();
    { const ForwardResult warm = forward(m, ids, opt); }
    std::vector<float> head;
    for (auto _ : state) {
        ForwardResult r = forward(m, ids, opt);
        const auto rows = r.trace->attention("dec.0.attn.");
        if (T <= 256) {
            rows->rows(AttentionRows::Kind::Probs, 0, 0, T, head);
            benchmark::DoNotOptimize(head.data());
        } else {
            const AttentionRows::Pooled p = rows->pooled(AttentionRows::Kind::Probs, 0, 256, 256, AttentionRows::Pool::Max);
            benchmark::DoNotOptimize(p.values.data());
        }
    }
    set_compute_threads(1);
    const ModelConfig& c = m.config();
    state.counters["attn_MB"] = 2.0 * c.n_layers * c.n_heads * double(T) * T * 4 / 1e6;
}
BENCHMARK(BM_FirstHeatmapGpt2Small)
    ->ArgsProduct({{256, 1024}, {2}})
    ->ArgNames({"T", "threads"})
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// CPU time is the whole process's (every thread): on the shared VM wall time mostly measures the other tenants.
BENCHMARK(BM_ForwardGpt2SmallApp)
    ->ArgsProduct({{16, 64, 256, 1024}, {1, 2}, {0, 1}})
    ->ArgNames({"T", "threads", "logits"})
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

// Typing: a 128-token sentence is in the worker's memory; each iteration changes the 129th token and runs the
// incremental forward (full capture, pool, as the app asks; range(2) = logits as in BM_ForwardGpt2SmallApp), which
// computes one position and splices the trace. Compare with BM_ForwardGpt2SmallApp at T = 128 with the same logits
// (the full forward the app ran before).
// The spliced entries are composed when first read; read:1 also reads what the Attention tab draws (every layer's
// attn.probs, for the layer x head grid), as the UI thread does after each keystroke.
void BM_AppendOneTokenGpt2Small(benchmark::State& state) {
    const Model& m = cached_model(true);
    set_compute_threads(static_cast<int>(state.range(0)));
    const bool read_probs = state.range(1) != 0;
    std::vector<int> ids(128);
    for (int t = 0; t < 128; ++t) ids[t] = (t * 7919) % m.config().vocab_size;
    ForwardOptions opt;
    opt.capture = CaptureFilter::all();
    opt.all_logits = false;
    opt.compute_logits = state.range(2) != 0;
    opt.pool = std::make_shared<TensorPool>();
    IncrementalState st;
    (void)forward_incremental(m, ids, opt, st);
    ids.push_back(0);
    int k = 0;
    IncrementalStats stats;
    for (int warm = 0; warm < 3; ++warm) {  // the pool reaches its steady state, as in the app
        ids.back() = 1001 + warm;
        (void)forward_incremental(m, ids, opt, st, &stats);
    }
    for (auto _ : state) {
        ids.back() = 1 + (k++ % 1000);
        ForwardResult r = forward_incremental(m, ids, opt, st, &stats);
        benchmark::DoNotOptimize(r.logits.data());
        if (read_probs)
            for (int l = 0; l < m.config().n_layers; ++l)
                benchmark::DoNotOptimize(r.trace->at("dec." + std::to_string(l) + ".attn.probs").data.data());
    }
    set_compute_threads(1);
    state.counters["computed"] = stats.computed;
}
BENCHMARK(BM_AppendOneTokenGpt2Small)
    ->ArgsProduct({{1, 2}, {0, 1}, {0, 1}})
    ->ArgNames({"threads", "read", "logits"})
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ForwardGpt2SmallApp)
    ->ArgsProduct({{128}, {1, 2}, {0, 1}})
    ->ArgNames({"T", "threads", "logits"})
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

void BM_ForwardGpt2Small(benchmark::State& s) { run_forward(s, true, true); }
void BM_ForwardGpt2SmallNoCapture(benchmark::State& s) { run_forward(s, true, false); }
void BM_ForwardGpt2SmallLastLogits(benchmark::State& s) { run_forward(s, true, true, false); }
void BM_ForwardDefaultSize(benchmark::State& s) { run_forward(s, false, true); }
void BM_ForwardDefaultSizeLastLogits(benchmark::State& s) { run_forward(s, false, true, false); }
void BM_ForwardDefaultSizeNoCapture(benchmark::State& s) { run_forward(s, false, false); }

BENCHMARK(BM_ForwardGpt2Small)->Arg(16)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ForwardGpt2SmallNoCapture)->Arg(64)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ForwardGpt2SmallLastLogits)->Arg(64)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ForwardDefaultSize)->Arg(32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ForwardDefaultSizeLastLogits)->Arg(32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ForwardDefaultSizeNoCapture)->Arg(32)->Unit(benchmark::kMillisecond);

// Reference: the FFN up-projection of GPT-2 small, (T, 768) x (768, 3072)^T with a row-major (out, in) weight,
// exactly the GEMM the forward runs.
void BM_EigenSgemmFfnUp(benchmark::State& state) {
    const int T = static_cast<int>(state.range(0));
    const MatrixRM x = MatrixRM::Random(T, 768);
    const MatrixRM w = MatrixRM::Random(3072, 768);
    MatrixRM out(T, 3072);
    for (auto _ : state) {
        out.noalias() = x * w.transpose();
        benchmark::DoNotOptimize(out.data());
    }
    state.counters["FLOP/s"] =
        benchmark::Counter(2.0 * T * 768 * 3072, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_EigenSgemmFfnUp)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond);

}  // namespace
