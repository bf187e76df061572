// Keystroke → attention figures on a 0.5B-parameter decoder (Qwen2-0.5B shape: 24 layers, d_model 896, 14 query /
// 2 KV heads, d_ff 4864, vocab 151936, RoPE, SwiGLU, qkv biases, tied head; synthetic weights kept in BF16, 1 GB) at
// 32 tokens, the way the app's worker runs it: full capture, the worker's trace pool and its memory of the previous
// sentence (one more token typed at the end), timed until the partial snapshot with every attention map is
// published (the logit lens follows it). range(0): compute threads; range(1): 1 = incremental (the app), 0 = full.
#include "app/session/worker.h"
#include "core/kernels/threads.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <memory>

namespace {

using namespace ts;

ModelConfig qwen2_05b_config() {
    ModelConfig c;
    c.name = "qwen2_0.5b_shape";
    c.vocab_size = 151936;
    c.d_model = 896;
    c.n_heads = 14;
    c.n_kv_heads = 2;
    c.d_ff = 4864;
    c.n_layers = 24;
    c.max_seq_len = 512;
    c.norm = NormKind::RMSNorm;
    c.norm_bias = false;
    c.norm_eps = 1e-6f;
    c.activation = Activation::SwiGLU;
    c.position = PositionKind::RoPE;
    c.rope_theta = 1e6f;
    c.attn_qkv_bias = true;
    c.attn_out_bias = false;
    c.ffn_bias = false;
    c.tie_embeddings = true;
    return c;
}

// Synthetic weights, matrices rounded to BF16 (nearest even) and kept so, as a BF16 Hugging Face checkpoint loads.
std::shared_ptr<const Model> qwen2_shape_bf16() {
    WeightMap w = init_weights(qwen2_05b_config(), 7);
    for (auto& [name, t] : w) {
        if (t.rank() != 2) continue;
        t.half.resize(t.data.size());
        for (size_t i = 0; i < t.data.size(); ++i) {
            uint32_t b;
            std::memcpy(&b, &t.data[i], 4);
            t.half[i] = uint16_t((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
        }
        t.storage = Storage::BF16;
        std::vector<float>().swap(t.data);
    }
    return std::make_shared<const Model>(qwen2_05b_config(), std::move(w));
}

void BM_KeystrokeQwen2Shape(benchmark::State& state) {
    static std::shared_ptr<const Model> model;
    if (!model) model = qwen2_shape_bf16();
    set_compute_threads(static_cast<int>(state.range(0)));
    const bool incremental = state.range(1) == 1;
    auto pool = std::make_shared<TensorPool>();
    auto memory = std::make_shared<studio::ForwardMemory>();
    auto make_request = [&](int n, int last) {
        studio::ForwardRequest r;
        r.model = model;
        auto tt = std::make_shared<studio::TokenizedText>();
        for (int t = 0; t < n; ++t) tt->ids.push_back((t * 7919 + 11) % 151936);
        tt->ids.back() = last;
        r.tokens = tt;
        r.pool = pool;
        if (incremental) r.memory = memory;
        return r;
    };
    (void)studio::run_forward_request(make_request(31, 5), 1);  // the sentence before the keystroke
    int k = 0;
    double to_partial_ms = 0;
    for (auto _ : state) {
        state.PauseTiming();
        if (incremental) (void)studio::run_forward_request(make_request(31, 5), 1);  // back to 31 tokens (not timed)
        state.ResumeTiming();
        studio::ForwardRequest r = make_request(32, 100 + (k++ % 1000));
        const auto t0 = std::chrono::steady_clock::now();
        std::shared_ptr<const studio::Snapshot> partial;
        r.publish_partial = [&](std::shared_ptr<const studio::Snapshot> s) {
            partial = std::move(s);
            to_partial_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        };
        r.superseded = [] { return true; };  // the lens stops: the next keystroke would replace it
        auto snap = studio::run_forward_request(r, 2);
        benchmark::DoNotOptimize(snap.get());
    }
    set_compute_threads(1);
    state.counters["to_attention_ms"] = to_partial_ms;
}
BENCHMARK(BM_KeystrokeQwen2Shape)
    ->Args({1, 1})->Args({2, 1})->Args({1, 0})->Args({2, 0})
    ->ArgNames({"threads", "incremental"})
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace
