// Hugging Face checkpoint load time: a random GPT-2-small checkpoint (124M parameters, HF GPT-2 layout with the
// attn.bias buffers; F32 ~550 MB and BF16 ~250 MB) generated once in /tmp/ts_hf_bench (not committed), loaded from
// a warm page cache. Reports wall time per load and the peak resident size (VmHWM) during the loads, and the peak
// resident size of load + one GPT-2-small forward with full capture against checkpoint bytes + trace bytes.
#include "core/formats/hf_checkpoint.h"
#include "core/model/model.h"
#include "core/formats/safetensors.h"
#include "tests/bench/bench_checkpoints.h"

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using namespace ts;

const fs::path kRoot = "/tmp/ts_hf_bench";
constexpr int kD = 768, kLayers = 12, kHeads = 12, kVocab = 50257, kPositions = 1024;

/// HF GPT-2 tensors (Conv1D layout, un-prefixed like the hub's gpt2 model.safetensors), uniform random values.
WeightMap gpt2_small_weights(bool with_buffers) {
    bench::UniformWeights rng;
    auto fill = [&](std::vector<int64_t> shape) {
        Tensor t(std::move(shape));
        for (float& v : t.data) v = rng.next();
        return t;
    };
    WeightMap w;
    w["wte.weight"] = fill({kVocab, kD});
    w["wpe.weight"] = fill({kPositions, kD});
    for (int i = 0; i < kLayers; ++i) {
        const std::string p = "h." + std::to_string(i) + ".";
        for (const char* ln : {"ln_1", "ln_2"}) {
            w[p + ln + ".weight"] = fill({kD});
            w[p + ln + ".bias"] = fill({kD});
        }
        w[p + "attn.c_attn.weight"] = fill({kD, 3 * kD});
        w[p + "attn.c_attn.bias"] = fill({3 * kD});
        w[p + "attn.c_proj.weight"] = fill({kD, kD});
        w[p + "attn.c_proj.bias"] = fill({kD});
        w[p + "mlp.c_fc.weight"] = fill({kD, 4 * kD});
        w[p + "mlp.c_fc.bias"] = fill({4 * kD});
        w[p + "mlp.c_proj.weight"] = fill({4 * kD, kD});
        w[p + "mlp.c_proj.bias"] = fill({kD});
        if (with_buffers) w[p + "attn.bias"] = Tensor({1, 1, kPositions, kPositions});
    }
    w["ln_f.weight"] = fill({kD});
    w["ln_f.bias"] = fill({kD});
    return w;
}

/// BF16 copy of `w` (save_safetensors writes F32 only).
void save_bf16(const fs::path& path, const WeightMap& w) {
    bench::TensorList list;
    for (const auto& [name, t] : w) list.push_back({name, t.shape});
    bench::write_bf16_safetensors(path, list, [&](const std::string& name, std::vector<float>& v) {
        const Tensor& t = w.at(name);
        std::copy(t.data.begin(), t.data.end(), v.begin());
    });
}

void write_config(const fs::path& dir) {
    const nlohmann::json c = {{"model_type", "gpt2"}, {"architectures", {"GPT2LMHeadModel"}}, {"n_embd", kD},
                              {"n_layer", kLayers}, {"n_head", kHeads}, {"n_positions", kPositions},
                              {"n_ctx", kPositions}, {"vocab_size", kVocab}, {"n_inner", nullptr},
                              {"activation_function", "gelu_new"}, {"layer_norm_epsilon", 1e-5}};
    std::ofstream(dir / "config.json") << c.dump(2);
}

/// Generates the checkpoints in a child process, so its memory does not count in this process's peak RSS.
void ensure_checkpoints() {
    if (fs::exists(kRoot / "f32" / "config.json") && fs::exists(kRoot / "bf16" / "config.json")) return;
    const pid_t pid = ::fork();
    if (pid == 0) {
        fs::create_directories(kRoot / "f32");
        fs::create_directories(kRoot / "bf16");
        save_safetensors(kRoot / "f32" / "model.safetensors", gpt2_small_weights(true), {{"format", "pt"}});
        write_config(kRoot / "f32");
        save_bf16(kRoot / "bf16" / "model.safetensors", gpt2_small_weights(false));
        write_config(kRoot / "bf16");
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
}

/// Resets the kernel's peak-RSS mark (Linux >= 4.0) so each benchmark reports its own peak.
void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }
using bench::status_kb;
double peak_rss_mb() { return status_kb("VmHWM:") / 1024.0; }

void BM_HfLoadGpt2Small(benchmark::State& state, const char* variant) {
    ensure_checkpoints();
    const fs::path dir = kRoot / variant;
    (void)load_hf_model(dir);  // warm the page cache
    reset_peak_rss();
    for (auto _ : state) {
        auto m = load_hf_model(dir);
        benchmark::DoNotOptimize(m.get());
    }
    state.counters["peak_rss_MB"] = peak_rss_mb();
    state.counters["file_MB"] = double(fs::file_size(dir / "model.safetensors")) / (1 << 20);
}

BENCHMARK_CAPTURE(BM_HfLoadGpt2Small, f32, "f32")->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK_CAPTURE(BM_HfLoadGpt2Small, bf16, "bf16")->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

// --- peak memory of load + forward -----------------------------------------------------------------------------------

struct ForwardMemory {
    double base_kb = 0, peak_kb = 0;  ///< RSS when the child starts (inherited pages), VmHWM after the forward
    double load_peak_kb = 0;          ///< VmHWM after the load, before the forward
    double trace_bytes = 0, logits_bytes = 0, ms = 0;
    int traced = 0;
};

/// Loads the checkpoint and runs one forward (T tokens, CaptureFilter::all()) in a forked child, so the peak
/// resident size is this job's alone and not freed-but-kept heap of other benchmarks in this process.
ForwardMemory measure_forward_memory(const fs::path& dir, int T, bool all_logits) {
    int fds[2];
    if (::pipe(fds) != 0) return {};
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        ForwardMemory r;
        reset_peak_rss();
        r.base_kb = status_kb("VmRSS:");
        const auto t0 = std::chrono::steady_clock::now();
        const std::shared_ptr<const Model> m = load_hf_model(dir);
        r.load_peak_kb = status_kb("VmHWM:");
        std::vector<int> ids(static_cast<size_t>(T), 0);
        for (int t = 0; t < T; ++t) ids[size_t(t)] = (t * 7919) % m->config().vocab_size;
        ForwardOptions opt;
        opt.capture = CaptureFilter::all();
        opt.all_logits = all_logits;
        const ForwardResult out = forward(*m, ids, opt);
        r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        // What the forward stored; derived entries (scores_scaled, scores_masked) cost nothing until a reader asks.
        r.trace_bytes = double(out.trace->bytes());
        r.logits_bytes = 4.0 * double(out.logits.size());
        r.traced = int(out.trace->size());
        r.peak_kb = status_kb("VmHWM:");
        (void)!::write(fds[1], &r, sizeof r);
        ::_exit(0);
    }
    ::close(fds[1]);
    ForwardMemory r;
    if (::read(fds[0], &r, sizeof r) != ssize_t(sizeof r)) r = {};
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return r;
}

/// Peak RSS of load_hf_model + one forward with full capture at T = 64 vs checkpoint file + trace (the budget:
/// peak <= 1.5 x (checkpoint + trace)). peak_MB excludes the pages the forked child inherits (base_MB); the trace
/// holds a copy of the logits, and ForwardResult::logits (logits_MB) is counted in the peak but not in the budget.
/// Run with TS_BENCH_MALLOC_DEFAULTS=1 to measure with glibc's malloc defaults as the app has them.
void BM_HfForwardPeakMemory(benchmark::State& state, const char* variant, bool all_logits) {
    ensure_checkpoints();
    const fs::path dir = kRoot / variant;
    ForwardMemory r;
    for (auto _ : state) r = measure_forward_memory(dir, 64, all_logits);
    const double mb = 1 << 20, ckpt = double(fs::file_size(dir / "model.safetensors"));
    state.counters["ckpt_MB"] = ckpt / mb;
    state.counters["trace_MB"] = r.trace_bytes / mb;
    state.counters["logits_MB"] = r.logits_bytes / mb;
    state.counters["base_MB"] = r.base_kb / 1024.0;
    state.counters["peak_MB"] = (r.peak_kb - r.base_kb) / 1024.0;
    state.counters["load_peak_MB"] = (r.load_peak_kb - r.base_kb) / 1024.0;
    state.counters["ratio"] = (r.peak_kb - r.base_kb) * 1024.0 / (ckpt + r.trace_bytes);
    state.counters["traced"] = r.traced;
    state.counters["load_fwd_ms"] = r.ms;
}

BENCHMARK_CAPTURE(BM_HfForwardPeakMemory, f32, "f32", true)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();
BENCHMARK_CAPTURE(BM_HfForwardPeakMemory, f32_last_logits, "f32", false)
    ->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();
BENCHMARK_CAPTURE(BM_HfForwardPeakMemory, bf16, "bf16", true)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

}  // namespace
