// Hugging Face checkpoint load time: a random GPT-2-small checkpoint (124M parameters, HF GPT-2 layout with the
// attn.bias buffers; F32 ~550 MB and BF16 ~250 MB) generated once in /tmp/ts_hf_bench (not committed), loaded from
// a warm page cache. Reports wall time per load and the peak resident size (VmHWM) during the loads.
#include "core/hf_checkpoint.h"
#include "core/safetensors.h"

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

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
    uint64_t s = 0x9e3779b97f4a7c15ull;
    auto fill = [&](std::vector<int64_t> shape) {
        Tensor t(std::move(shape));
        for (float& v : t.data) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            v = float(int64_t(s >> 40) - (int64_t(1) << 23)) * (0.05f / float(1 << 23));
        }
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

/// BF16 writer (save_safetensors writes F32 only): round to nearest even, then the same file layout.
void save_bf16(const fs::path& path, const WeightMap& w) {
    nlohmann::json header = {{"__metadata__", {{"format", "pt"}}}};
    uint64_t off = 0;
    for (const auto& [name, t] : w) {
        header[name] = {{"dtype", "BF16"}, {"shape", t.shape}, {"data_offsets", {off, off + 2 * t.numel()}}};
        off += 2 * uint64_t(t.numel());
    }
    std::string h = header.dump();
    while (h.size() % 8) h.push_back(' ');
    std::ofstream out(path, std::ios::binary);
    const uint64_t n = h.size();
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << h;
    std::vector<uint16_t> buf;
    for (const auto& [name, t] : w) {
        buf.resize(t.data.size());
        for (size_t i = 0; i < buf.size(); ++i) {
            uint32_t b;
            std::memcpy(&b, &t.data[i], 4);
            buf[i] = uint16_t((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
        }
        out.write(reinterpret_cast<const char*>(buf.data()), std::streamsize(2 * buf.size()));
    }
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
double peak_rss_mb() {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
    return 0.0;
}

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

}  // namespace
