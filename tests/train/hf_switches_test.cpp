// The switches of the Hugging Face encoder–decoder families (T5 relative position bias, BART embedding norm and
// separate encoder positions, final_logits_bias, T5's LM-head rescale, Marian's half-split sinusoids) are inference
// only: the trainer, whose kernels do not implement them, refuses such a config naming the switch instead of
// silently training a different model.
#include "core/model/model.h"
#include "core/train/train_model.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace ts {
namespace {

ModelConfig tiny_encdec() {
    ModelConfig c;
    c.arch = Arch::EncoderDecoder;
    c.vocab_size = 40;
    c.d_model = 16;
    c.n_heads = c.n_kv_heads = 2;
    c.d_ff = 32;
    c.n_layers = c.n_enc_layers = 1;
    c.max_seq_len = 16;
    return c;
}

TEST(TrainModelHfSwitches, RefusedNamingTheSwitch) {
    const std::pair<const char*, std::function<void(ModelConfig&)>> cases[] = {
        {"relative_attention_bias", [](ModelConfig& c) { c.relative_attention_bias = true; }},
        {"embed_norm", [](ModelConfig& c) { c.embed_norm = true; }},
        {"final_logits_bias", [](ModelConfig& c) { c.final_logits_bias = true; }},
        {"scale_lm_head", [](ModelConfig& c) { c.scale_lm_head = true; }},
        {"enc_pos_emb", [](ModelConfig& c) { c.enc_pos_emb = true; }},
        {"sinusoidal_layout", [](ModelConfig& c) {
             c.position = PositionKind::Sinusoidal;
             c.sinusoidal_layout = SinusoidalLayout::HalfSplit;
         }},
    };
    for (const auto& [name, set] : cases) {
        ModelConfig c = tiny_encdec();
        set(c);
        try {
            train::TrainModel t(c, init_weights(c, 1));
            ADD_FAILURE() << name << ": no error";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
        }
    }
    const ModelConfig plain = tiny_encdec();
    EXPECT_NO_THROW(train::TrainModel(plain, init_weights(plain, 1)));
}

}  // namespace
}  // namespace ts
