// Interpretability analyses (core/interp) at realistic sizes: activation patching over every (layer, position) of
// the residual stream and every (layer, head) on a GPT-2-small-shaped random model at T = 16 (one forward per cell,
// last-position logits only, no capture), the clean baseline they reuse, a head-ablation sweep on the default-size
// model, and exact attention flow at T = 16 / 32 / 64 on the default size (4 layers).
#include "core/interp/ablation.h"
#include "core/interp/attention_flow.h"
#include "core/interp/patching.h"

#include <benchmark/benchmark.h>

#include "tests/bench/bench_models.h"

#include <chrono>
#include <memory>

namespace {

using namespace ts;
using namespace ts::interp;

const Model& model(bool gpt2_small) {
    static std::unique_ptr<Model> big, small;
    std::unique_ptr<Model>& m = gpt2_small ? big : small;
    if (!m) {
        bench::tune_malloc_like_app();
        const ModelConfig c = gpt2_small ? bench::gpt2_small_config() : bench::default_size_config();
        m = std::make_unique<Model>(c, init_weights(c, 42));
    }
    return *m;
}

std::vector<int> ids_of(int T, int salt, int vocab) {
    std::vector<int> ids(T);
    for (int t = 0; t < T; ++t) ids[t] = (t * 7919 + salt) % vocab;
    return ids;
}

// Clean and corrupted inputs differing in two positions; answer/wrong = the two runs' top tokens.
PatchingBaseline baseline(const Model& m, int T) {
    const std::vector<int> clean = ids_of(T, 0, m.config().vocab_size);
    std::vector<int> corrupt = clean;
    corrupt[1] = (corrupt[1] + 1) % m.config().vocab_size;
    corrupt[T / 2] = (corrupt[T / 2] + 1) % m.config().vocab_size;
    ForwardOptions last;
    last.all_logits = false;
    Eigen::Index a = 0, w = 0;
    forward(m, clean, last).logits.row(0).maxCoeff(&a);
    const MatrixRM lc = forward(m, corrupt, last).logits;
    lc.row(0).maxCoeff(&w);
    if (w == a) lc.row(0).cwiseProduct(RowVectorF::Ones(lc.cols()) - RowVectorF::Unit(lc.cols(), a)).maxCoeff(&w);
    return prepare_patching(m, clean, corrupt, int(a), int(w));
}

void BM_PatchingBaselineGpt2Small(benchmark::State& state) {
    const Model& m = model(true);
    for (auto _ : state) benchmark::DoNotOptimize(baseline(m, int(state.range(0))).clean_metric);
    state.SetLabel("clean forward with capture + corrupted forward + 2 top-token forwards");
}
BENCHMARK(BM_PatchingBaselineGpt2Small)->Arg(16)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_PatchResidPreGpt2Small(benchmark::State& state) {
    const Model& m = model(true);
    const PatchingBaseline b = baseline(m, int(state.range(0)));
    int cells = 0;
    double seconds = 0.0;
    for (auto _ : state) {
        const auto t0 = std::chrono::steady_clock::now();
        const PatchingResult r = patch_resid_pre(m, b);
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        cells += int(r.normalized.size());
        benchmark::DoNotOptimize(r.normalized.data());
    }
    state.counters["cells"] = double(cells) / double(state.iterations());
    state.counters["ms_per_cell"] = 1e3 * seconds / cells;
}
BENCHMARK(BM_PatchResidPreGpt2Small)->Arg(16)->Unit(benchmark::kSecond)->Iterations(1);

void BM_PatchHeadOutGpt2Small(benchmark::State& state) {
    const Model& m = model(true);
    const PatchingBaseline b = baseline(m, int(state.range(0)));
    int cells = 0;
    double seconds = 0.0;
    for (auto _ : state) {
        const auto t0 = std::chrono::steady_clock::now();
        const PatchingResult r = patch_head_out(m, b);
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        cells += int(r.normalized.size());
        benchmark::DoNotOptimize(r.normalized.data());
    }
    state.counters["cells"] = double(cells) / double(state.iterations());
    state.counters["ms_per_cell"] = 1e3 * seconds / cells;
}
BENCHMARK(BM_PatchHeadOutGpt2Small)->Arg(16)->Unit(benchmark::kSecond)->Iterations(1);

void BM_HeadAblationSweepDefaultSize(benchmark::State& state) {
    const Model& m = model(false);
    const int T = int(state.range(0));
    const std::vector<int> ids = ids_of(T, 3, m.config().vocab_size);
    AblationSweepOptions opt;
    opt.targets = next_token_targets(ids, T / 2, T - 1);
    for (auto _ : state) benchmark::DoNotOptimize(head_ablation_sweep(m, ids, opt).clean_log_prob);
}
BENCHMARK(BM_HeadAblationSweepDefaultSize)->Arg(32)->Unit(benchmark::kMillisecond);

void BM_AttentionFlowDefaultSize(benchmark::State& state) {
    const Model& m = model(false);
    const int T = int(state.range(0));
    ForwardOptions opt;
    opt.capture = CaptureFilter::prefixes({"dec."});
    const ForwardResult r = forward(m, ids_of(T, 5, m.config().vocab_size), opt);
    const std::vector<MatrixRM> attn = head_mean_attention(*r.trace, "dec", m.config().n_layers);
    for (auto _ : state) benchmark::DoNotOptimize(attention_flow(attn).flow.data());
    state.SetLabel("T^2 exact max-flows, 4 layers");
}
BENCHMARK(BM_AttentionFlowDefaultSize)->Arg(16)->Arg(32)->Arg(64)->Unit(benchmark::kMillisecond);

}  // namespace
