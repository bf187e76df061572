// Training throughput: one full step (forward, backward, global-norm clip, AdamW) on the default model sizes
// (4 layers, d_model 256, 4 heads, vocab 8192, T 128 (and 256), batch 8), GPT-2-style and Llama-style. Compare with
// tests/reference/train_torch.py (the same step in PyTorch, 1 thread).
#include "core/model/model.h"
#include "core/train/adamw.h"
#include "core/kernels/threads.h"
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

namespace {

// Encoder–decoder training throughput on the translation model's recipe (post-norm, ReLU, sinusoidal positions,
// tied and ×√d_model embeddings, dropout 0.1, label smoothing 0.1, Adam) over a fixed mix of batch shapes like the
// ones PairDataset cuts (at most 256 pairs and 2048 padded positions a side), so buffers see every shape change of a
// real run. Compare with tests/reference/train_torch_seq2seq.py (torch.nn.Transformer, the same shapes and recipe).
// range(0): d_model (256: today's bundled model; 384, 512: candidates), range(1): layers per stack.
struct EncDecShape {
    int B, S, T;
};
constexpr EncDecShape kEncDecShapes[] = {{256, 7, 6}, {146, 14, 12}, {85, 24, 20}, {56, 36, 31}, {32, 64, 55},
                                         {18, 110, 96}};

ts::ModelConfig encdec_config(int d_model, int layers) {
    ts::ModelConfig c;
    c.arch = ts::Arch::EncoderDecoder;
    c.vocab_size = 8192;
    c.d_model = d_model;
    c.n_heads = d_model / 64;
    c.n_kv_heads = c.n_heads;
    c.n_layers = c.n_enc_layers = layers;
    c.d_ff = d_model == 256 ? 512 : 4 * d_model;
    c.max_seq_len = 128;
    c.norm_placement = ts::NormPlacement::Post;
    c.activation = ts::Activation::ReLU;
    c.position = ts::PositionKind::Sinusoidal;
    c.scale_embeddings = true;
    c.tie_embeddings = true;
    return c;
}

void BM_TrainEncDecStep(benchmark::State& state) {
    ts::set_compute_threads(int(state.range(2)));  // as `train --threads N`
    const ts::ModelConfig c = encdec_config(int(state.range(0)), int(state.range(1)));
    ts::train::TrainModel model(c, ts::init_weights(c, 1));
    ts::train::AdamWOptions ao;
    ao.beta2 = 0.98f;
    ao.eps = 1e-9f;
    ao.weight_decay = 0.0f;
    ts::train::AdamW adam(model.params(), ao);
    std::vector<ts::train::PairBatch> batches;
    for (const EncDecShape& sh : kEncDecShapes) {
        ts::train::PairBatch b;
        b.B = sh.B, b.S = sh.S, b.T = sh.T;
        b.src.resize(size_t(sh.B) * sh.S), b.tgt.resize(size_t(sh.B) * sh.T), b.targets.resize(size_t(sh.B) * sh.T);
        for (size_t i = 0; i < b.src.size(); ++i) b.src[i] = int((i * 7919 + 5) % c.vocab_size);
        for (size_t i = 0; i < b.tgt.size(); ++i)
            b.tgt[i] = int((i * 104729 + 3) % c.vocab_size), b.targets[i] = int((i * 31337 + 1) % c.vocab_size);
        batches.push_back(std::move(b));
    }
    ts::train::StepOptions so;
    so.label_smoothing = 0.1f, so.attn_dropout = 0.1f, so.resid_dropout = 0.1f, so.seed = 1;
    int64_t positions = 0;
    uint64_t step = 0;
    for (auto _ : state) {
        const ts::train::PairBatch& b = batches[step % std::size(kEncDecShapes)];
        so.step = step++;
        const auto l = model.forward(b, so);
        model.backward();
        ts::train::clip_grad_norm(model.grads(), 1.0);
        adam.step(model.params(), model.grads(), 1e-4f);
        benchmark::DoNotOptimize(l.loss);
        positions += int64_t(b.B) * (b.S + b.T);
    }
    state.counters["tokens_per_s"] = benchmark::Counter(double(positions), benchmark::Counter::kIsRate);
    state.SetLabel("d_model " + std::to_string(c.d_model) + ", " + std::to_string(c.n_layers) +
                   "+" + std::to_string(c.n_layers) + " layers, " + std::to_string(state.range(2)) +
                   " threads, 6 batch shapes (B*(S+T) positions)");
    ts::set_compute_threads(1);
}
BENCHMARK(BM_TrainEncDecStep)->Args({256, 3, 2})->Args({384, 4, 2})->Args({512, 6, 2})->Unit(benchmark::kMillisecond)
    ->Iterations(24)->UseRealTime();

}  // namespace
