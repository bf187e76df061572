// Decoding speed of an encoder-decoder model shaped like the project's zh-en translation model (d_model 256, 4 heads,
// d_ff 512, 3 + 3 post-norm layers, vocab 8192; random weights): greedy decoding of a 20-token target after a
// 20-token source, (1) with the KV cache of core/forward/decode.h (encoder once, self-attention K/V cached, cross-attention
// K/V of the memory projected once per layer), (2) with the self-attention cache only (cross-attention K/V projected
// again every step), (3) naively, one full forward_seq2seq over the whole prefix per step; and translate_ids with
// beam 1 and 4 (time per call; the counter `tokens` is how many target tokens it produced).
#include "core/forward/decode.h"

#include <benchmark/benchmark.h>

#include "tests/bench/bench_models.h"

#include <memory>

namespace {

using namespace ts;

constexpr int kSrcLen = 20;
constexpr int kTgtLen = 20;

ModelConfig translation_config() {
    ModelConfig c;
    c.name = "zh_en_shape_random";
    c.arch = Arch::EncoderDecoder;
    c.vocab_size = 8192;
    c.d_model = 256;
    c.n_heads = c.n_kv_heads = 4;
    c.d_ff = 512;
    c.n_layers = 3;
    c.n_enc_layers = 3;
    c.max_seq_len = 128;
    c.norm_placement = NormPlacement::Post;
    c.activation = Activation::ReLU;
    c.position = PositionKind::Sinusoidal;
    c.scale_embeddings = true;
    return c;
}

const Model& model() {
    static const std::unique_ptr<Model> m = [] {
        bench::tune_malloc_like_app();
        const ModelConfig c = translation_config();
        return std::make_unique<Model>(c, init_weights(c, 42));
    }();
    return *m;
}

std::vector<int> source() {
    std::vector<int> ids(kSrcLen);
    for (int t = 0; t < kSrcLen; ++t) ids[t] = (t * 7919 + 11) % model().config().vocab_size;
    return ids;
}

int argmax(const MatrixRM& logits) {
    Eigen::Index best = 0;
    logits.row(logits.rows() - 1).maxCoeff(&best);
    return int(best);
}

// (1) and (2): kTgtLen cached steps; `keep_cross` false drops the memory's cross K/V before every step.
void greedy_cached(benchmark::State& state, bool keep_cross) {
    const Model& m = model();
    const std::vector<int> src = source();
    for (auto _ : state) {
        const MatrixRM memory = encode_source(m, src);
        KVCache cache;
        int prev = 0;
        for (int t = 0; t < kTgtLen; ++t) {
            if (!keep_cross) cache.cross.reset();
            prev = argmax(decoder_step(m, memory, prev, cache));
        }
        benchmark::DoNotOptimize(prev);
    }
    state.SetItemsProcessed(int64_t(state.iterations()) * kTgtLen);  // items/s = target tokens per second
}

void BM_GreedyDecode_Cached(benchmark::State& state) { greedy_cached(state, true); }
void BM_GreedyDecode_SelfCacheOnly(benchmark::State& state) { greedy_cached(state, false); }

// (3): one full forward_seq2seq (encoder included) over [start] + the prefix per produced token.
void BM_GreedyDecode_NaiveRecompute(benchmark::State& state) {
    const Model& m = model();
    const std::vector<int> src = source();
    ForwardOptions opt;
    opt.all_logits = false;
    for (auto _ : state) {
        std::vector<int> tgt{0};
        for (int t = 0; t < kTgtLen; ++t) tgt.push_back(argmax(forward_seq2seq(m, src, tgt, opt).logits));
        benchmark::DoNotOptimize(tgt.data());
    }
    state.SetItemsProcessed(int64_t(state.iterations()) * kTgtLen);  // items/s = target tokens per second
}

// translate_ids as the CLI calls it (top-5 recorded per step); the end token is id 8191, which this random model
// does not produce early, so max_len = 20 ends it.
void BM_TranslateIds(benchmark::State& state) {
    const Model& m = model();
    const std::vector<int> src = source();
    TranslationSpec spec;
    spec.direction = "en-zh";
    spec.decoder_start_id = spec.source_end_id = 0;
    spec.target_end_id = 8191;
    spec.pad_id = 1;
    DecodeOptions opt;
    opt.beam = int(state.range(0));
    opt.max_len = kTgtLen;
    size_t tokens = 0;
    for (auto _ : state) {
        const DecodeResult r = translate_ids(m, spec, src, opt);
        tokens = r.steps.size();
        benchmark::DoNotOptimize(r.score);
    }
    state.counters["tokens"] = double(tokens);
}

BENCHMARK(BM_GreedyDecode_Cached)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GreedyDecode_SelfCacheOnly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GreedyDecode_NaiveRecompute)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TranslateIds)->Arg(1)->Arg(4)->Unit(benchmark::kMillisecond);

}  // namespace
