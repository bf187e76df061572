// Load time, peak memory and time to the first attention of a BF16 checkpoint of about 0.5B parameters in the
// GPT-NeoX (Pythia) layout: d_model 1024, 32 layers, 16 heads, rotary_pct 0.25, vocab 50304, untied embed_out
// (Pythia-410m's shape with 8 more layers: 506M parameters, 1.01 GB). Random weights are written once, streamed
// without holding the model in memory, to /tmp/ts_hf_bench/neox_0p5b_bf16 (not committed). Each measurement runs in
// a forked child so its peak resident size (VmHWM) is its own: load_hf_model from a warm page cache, then one
// forward of a 32-token sentence with full capture (what the app runs before it shows the attention panels).
#include "core/formats/hf_checkpoint.h"
#include "core/model/model.h"
#include "tests/bench/bench_checkpoints.h"

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace ts;

const fs::path kDir = "/tmp/ts_hf_bench/neox_0p5b_bf16";
constexpr int64_t kD = 1024, kLayers = 32, kHeads = 16, kVocab = 50304, kFf = 4 * kD;

bench::TensorList neox_tensors() {
    bench::TensorList t;
    t.push_back({"gpt_neox.embed_in.weight", {kVocab, kD}});
    for (int i = 0; i < kLayers; ++i) {
        const std::string p = "gpt_neox.layers." + std::to_string(i) + ".";
        for (const char* ln : {"input_layernorm", "post_attention_layernorm"}) {
            t.push_back({p + ln + ".weight", {kD}});
            t.push_back({p + ln + ".bias", {kD}});
        }
        t.push_back({p + "attention.query_key_value.weight", {3 * kD, kD}});
        t.push_back({p + "attention.query_key_value.bias", {3 * kD}});
        t.push_back({p + "attention.dense.weight", {kD, kD}});
        t.push_back({p + "attention.dense.bias", {kD}});
        t.push_back({p + "mlp.dense_h_to_4h.weight", {kFf, kD}});
        t.push_back({p + "mlp.dense_h_to_4h.bias", {kFf}});
        t.push_back({p + "mlp.dense_4h_to_h.weight", {kD, kFf}});
        t.push_back({p + "mlp.dense_4h_to_h.bias", {kD}});
    }
    t.push_back({"gpt_neox.final_layer_norm.weight", {kD}});
    t.push_back({"gpt_neox.final_layer_norm.bias", {kD}});
    t.push_back({"embed_out.weight", {kVocab, kD}});
    return t;
}

/// Streams BF16 values uniform in about ±0.05 (norm weights near 1) straight to the file.
void write_checkpoint() {
    fs::create_directories(kDir);
    bench::UniformWeights rng;
    bench::write_bf16_safetensors(kDir / "model.safetensors", neox_tensors(),
                                  [&](const std::string& name, std::vector<float>& v) {
                                      const bool norm_weight = name.find("layernorm.weight") != std::string::npos ||
                                                               name.find("final_layer_norm.weight") != std::string::npos;
                                      for (float& x : v) x = rng.next() + (norm_weight ? 1.0f : 0.0f);
                                  });
    const nlohmann::json c = {{"model_type", "gpt_neox"}, {"architectures", {"GPTNeoXForCausalLM"}},
                              {"hidden_size", kD}, {"num_hidden_layers", kLayers}, {"num_attention_heads", kHeads},
                              {"intermediate_size", kFf}, {"vocab_size", kVocab}, {"max_position_embeddings", 2048},
                              {"rotary_pct", 0.25}, {"rotary_emb_base", 10000}, {"use_parallel_residual", true},
                              {"hidden_act", "gelu"}, {"layer_norm_eps", 1e-5}, {"tie_word_embeddings", false},
                              {"torch_dtype", "bfloat16"}};
    std::ofstream(kDir / "config.json") << c.dump(2);
}

void ensure_checkpoint() {
    if (!fs::exists(kDir / "config.json")) write_checkpoint();
}

using bench::status_kb;

/// CPU time of the whole process (all threads), ms: on a shared VM wall time mostly measures the neighbours.
double cpu_ms() {
    timespec ts{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) * 1e-6;
}

struct Result {
    double base_kb = 0, load_peak_kb = 0, peak_kb = 0, load_ms = 0, forward_ms = 0, load_cpu_ms = 0, forward_cpu_ms = 0;
    int64_t params = 0;
};

/// In a forked child: load, then one 32-token forward with full capture (the app's first forward).
Result measure() {
    int fds[2];
    if (::pipe(fds) != 0) return {};
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        Result r;
        std::ofstream("/proc/self/clear_refs") << "5";
        r.base_kb = status_kb("VmRSS:");
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = cpu_ms();
        const std::shared_ptr<const Model> m = load_hf_model(kDir);
        const auto t1 = std::chrono::steady_clock::now();
        const double c1 = cpu_ms();
        r.load_peak_kb = status_kb("VmHWM:");
        r.params = m->config().parameter_count();
        std::vector<int> ids(32);
        for (int t = 0; t < 32; ++t) ids[size_t(t)] = (t * 7919 + 13) % int(kVocab);
        ForwardOptions opt;
        opt.capture = CaptureFilter::all();
        const ForwardResult out = forward(*m, ids, opt);
        benchmark::DoNotOptimize(out.trace.get());
        const auto t2 = std::chrono::steady_clock::now();
        r.load_cpu_ms = c1 - c0;
        r.forward_cpu_ms = cpu_ms() - c1;
        r.load_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
        r.forward_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
        r.peak_kb = status_kb("VmHWM:");
        (void)!::write(fds[1], &r, sizeof r);
        ::_exit(0);
    }
    ::close(fds[1]);
    Result r;
    if (::read(fds[0], &r, sizeof r) != ssize_t(sizeof r)) r = {};
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return r;
}

void BM_HfLoadNeox0p5bBf16(benchmark::State& state) {
    ensure_checkpoint();
    (void)measure();  // warm the page cache
    Result r;
    for (auto _ : state) r = measure();
    state.counters["params_M"] = double(r.params) / 1e6;
    state.counters["file_MB"] = double(fs::file_size(kDir / "model.safetensors")) / (1 << 20);
    state.counters["load_ms"] = r.load_ms;
    state.counters["load_peak_MB"] = (r.load_peak_kb - r.base_kb) / 1024.0;
    state.counters["first_attention_ms"] = r.load_ms + r.forward_ms;  // load + 32-token forward
    state.counters["forward_ms"] = r.forward_ms;
    state.counters["load_cpu_ms"] = r.load_cpu_ms;
    state.counters["forward_cpu_ms"] = r.forward_cpu_ms;
    state.counters["peak_MB"] = (r.peak_kb - r.base_kb) / 1024.0;
}

BENCHMARK(BM_HfLoadNeox0p5bBf16)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

}  // namespace
