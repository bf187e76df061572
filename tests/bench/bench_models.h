// Model shapes and settings shared by the benchmarks: GPT-2 small (124M) and the bundled default size, both with
// random weights, plus the malloc tuning the app uses (keep trace buffers in the heap between forwards).
#pragma once

#include "core/model/model_config.h"

#include <malloc.h>

namespace ts::bench {

/// GPT-2 small shape: 12 layers, d_model 768, 12 heads, d_ff 3072, vocab 50257, GELU-tanh, learned positions.
inline ModelConfig gpt2_small_config() {
    ModelConfig c;
    c.name = "gpt2_small_random";
    c.vocab_size = 50257;
    c.d_model = 768;
    c.n_heads = c.n_kv_heads = 12;
    c.d_ff = 3072;
    c.n_layers = 12;
    c.max_seq_len = 1024;
    c.activation = Activation::GELUTanh;
    c.position = PositionKind::Learned;
    return c;
}

/// The bundled default size: 4 layers, d_model 256, 4 heads, d_ff 1024, vocab 8192, pre-LayerNorm, GELU.
inline ModelConfig default_size_config() {
    ModelConfig c;
    c.name = "default_size_random";
    c.vocab_size = 8192;
    c.d_model = 256;
    c.n_heads = c.n_kv_heads = 4;
    c.d_ff = 1024;
    c.n_layers = 4;
    c.max_seq_len = 256;
    return c;
}

/// English prose of a little over 32 tokens for the UI benchmarks.
inline constexpr const char* kBenchText =
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a "
    "wife. However little known the feelings or views of such a man may be on his first entering a neighbourhood.";

/// As app/main.cpp: keep multi-MB trace buffers in the heap between forwards.
inline void tune_malloc_like_app() {
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
}

}  // namespace ts::bench
