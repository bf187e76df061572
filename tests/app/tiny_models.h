// Small random-weight models for the app's session tests, built in one place.
#pragma once

#include "app/session/text_codec.h"
#include "app/session/worker.h"
#include "core/model/model.h"

#include <cstdint>
#include <memory>

namespace ts::test {

/// A byte-vocabulary encoder–decoder (d_model 32, 4 heads, d_ff 64, 2 + 2 layers) with random weights from `seed`.
/// vocab_size >= 256; ids past 255 are free for special tokens. Only shapes and bookkeeping can be checked with it.
inline studio::LoadedModel tiny_encdec_model(const char* name, int vocab_size, int max_seq_len, uint64_t seed) {
    ModelConfig c;
    c.name = name;
    c.arch = Arch::EncoderDecoder;
    c.vocab_size = vocab_size;
    c.d_model = 32;
    c.n_heads = 4;
    c.n_kv_heads = 4;
    c.d_ff = 64;
    c.n_layers = 2;
    c.n_enc_layers = 2;
    c.max_seq_len = max_seq_len;
    studio::LoadedModel lm;
    lm.model = std::make_shared<const Model>(c, init_weights(c, seed));
    lm.codec = studio::make_byte_codec(c.vocab_size);
    return lm;
}

}  // namespace ts::test
