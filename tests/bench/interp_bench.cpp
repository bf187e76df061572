// Interpretability analyses (core/interp) at realistic sizes: activation patching over every (layer, position) of
// the residual stream and every (layer, head) on a GPT-2-small-shaped random model at T = 16 (one forward per cell,
// last-position logits only, no capture), the clean baseline they reuse, a head-ablation sweep on the default-size
// model, exact attention flow at T = 16 / 32 / 64 on the default size (4 layers), and input attribution of one
// target on the GPT-2-small shape at T = 64 (#32's target: integrated gradients, 50 steps, batched, ≤ 1 s on 2
// threads), with gradient × input and occlusion beside it; the neurons' example index over 64 k tokens.
#include "core/interp/ablation.h"
#include "core/interp/attention_flow.h"
#include "core/interp/input_attribution.h"
#include "core/interp/neurons.h"
#include "core/interp/patching.h"
#include "core/kernels/threads.h"

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

// Input attribution of the last position's top token, T = 64, GPT-2-small shape; arg: method (0 grad × input,
// 1 integrated gradients with 50 steps, 2 occlusion); the GradientModel (a float32 copy of the weights) is made once.
void BM_InputAttributionGpt2Small(benchmark::State& state) {
    const Model& m = model(true);
    static std::unique_ptr<GradientModel> grad;
    if (!grad) grad = std::make_unique<GradientModel>(m);
    const std::vector<int> ids = ids_of(64, 0, m.config().vocab_size);
    AttributionOptions opt;
    opt.method = state.range(0) == 0 ? AttributionMethod::GradientTimesInput
        : state.range(0) == 1        ? AttributionMethod::IntegratedGradients
                                     : AttributionMethod::Occlusion;
    opt.steps = 50;
    opt.batch = 10;
    set_compute_threads(2);
    float gap = 0;
    for (auto _ : state) gap = attribute_tokens(m, grad.get(), ids, {-1, 1, -1}, opt).completeness_gap;
    benchmark::DoNotOptimize(gap);
    state.SetLabel(std::string(name_of(opt.method)) + ", T = 64");
}
BENCHMARK(BM_InputAttributionGpt2Small)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

// The neurons' max-activating-example index on the default model's shape (austen-gpt: 4 layers, d_ff 1024), 64-token
// chunks, 2 threads; arg: tokens indexed. #32's target is 1 M tokens in ≤ 2 min: tokens/s ≥ 8,333 (the counter).
void BM_NeuronIndexDefaultSize(benchmark::State& state) {
    const Model& m = model(false);
    const std::vector<int> ids = ids_of(int(state.range(0)), 3, m.config().vocab_size);
    NeuronIndexOptions opt;
    opt.context = 64;
    set_compute_threads(2);
    int chunks = 0;
    for (auto _ : state) chunks = build_neuron_index(m, ids, opt).chunks_done;
    benchmark::DoNotOptimize(chunks);
    state.counters["tokens/s"] =
        benchmark::Counter(double(state.range(0)) * double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_NeuronIndexDefaultSize)->Arg(65536)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();
