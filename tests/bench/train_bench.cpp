// Training throughput: one full step (forward, backward, global-norm clip, AdamW) on the default model sizes
// (4 layers, d_model 256, 4 heads, vocab 8192, T 128 (and 256), batch 8), GPT-2-style and Llama-style. Compare with
// tests/reference/train_torch.py (the same step in PyTorch, 1 thread).
#include "core/model.h"
#include "core/train/adamw.h"
#include "core/train/train_model.h"

#include <benchmark/benchmark.h>

#include <vector>

namespace {

ts::ModelConfig bench_config(bool llama, int T) {
    ts::ModelConfig c;
    c.vocab_size = 8192;
    c.d_model = 256;
    c.n_heads = 4;
    c.n_kv_heads = 4;
    c.n_layers = 4;
    c.max_seq_len = T;
    if (llama) {
        c.norm = ts::NormKind::RMSNorm;
        c.position = ts::PositionKind::RoPE;
        c.activation = ts::Activation::SwiGLU;
        c.d_ff = 688;
        c.ffn_bias = c.attn_qkv_bias = c.attn_out_bias = c.norm_bias = false;
        c.tie_embeddings = false;
    } else {
        c.activation = ts::Activation::GELUTanh;
        c.d_ff = 1024;
    }
    return c;
}

void BM_TrainStep(benchmark::State& state) {
    const bool llama = state.range(0) == 1;
    const int B = 8, T = int(state.range(1));
    const ts::ModelConfig c = bench_config(llama, T);
    ts::train::TrainModel model(c, ts::init_weights(c, 1));
    ts::train::AdamW adam(model.params(), {});
    std::vector<int> ids(B * T), tg(B * T);
    for (int i = 0; i < B * T; ++i) ids[i] = (i * 7919) % c.vocab_size, tg[i] = (i * 104729 + 1) % c.vocab_size;
    for (auto _ : state) {
        const auto l = model.forward(ids, tg, B, T);
        model.backward();
        ts::train::clip_grad_norm(model.grads(), 1.0);
        adam.step(model.params(), model.grads(), 1e-3f);
        benchmark::DoNotOptimize(l.loss);
    }
    state.counters["tokens_per_s"] = benchmark::Counter(double(B * T), benchmark::Counter::kIsIterationInvariantRate);
    state.SetLabel(llama ? "llama-style swiglu d_ff 688" : "gpt2-style gelu_tanh d_ff 1024");
}
BENCHMARK(BM_TrainStep)->Args({0, 128})->Args({1, 128})->Args({0, 256})->Args({1, 256})->Unit(benchmark::kMillisecond)->MinTime(5.0);

}  // namespace
