// Forward pass against PyTorch: torch.nn.Transformer (encoder-decoder) and torch-written GPT-2-, Llama-, interleaved-
// RoPE and encoder-only models (fixtures from tests/reference/make_model_fixtures.py, expected values in float64).
#include "core/model/model.h"
#include "core/formats/safetensors.h"
#include "tests/test_util.h"

#include <nlohmann/json.hpp>

#include <string>

namespace ts {
namespace {

// All comparisons in fp32 against float64 references, absolute tolerance only (max error seen: 2e-6 on logits).
constexpr float kAtol = 1e-5f;

struct Fixture {
    ModelConfig config;
    nlohmann::json options;
    WeightMap tensors;  // in.* and out.*
    std::shared_ptr<Model> model;

    const Tensor& at(const std::string& name) const {
        auto it = tensors.find(name);
        if (it == tensors.end()) throw std::out_of_range("fixture has no tensor '" + name + "'");
        return it->second;
    }
    std::vector<int> ids(const std::string& name) const {
        std::vector<int> r;
        for (float v : at(name).data) r.push_back(static_cast<int>(v));
        return r;
    }
};

Fixture load_fixture(const std::string& file) {
    std::map<std::string, std::string> meta;
    WeightMap all = load_safetensors(test::golden_path(file), &meta);
    Fixture f;
    f.config = parse_config_json(meta.at("config"), file);
    f.options = nlohmann::json::parse(meta.at("options"));
    WeightMap weights;
    for (auto& [name, t] : all) {
        if (name.rfind("model.", 0) == 0)
            weights.emplace(name.substr(6), std::move(t));
        else
            f.tensors.emplace(name, std::move(t));
    }
    f.model = std::make_shared<Model>(f.config, std::move(weights));
    return f;
}

ForwardOptions options_of(const Fixture& f) {
    ForwardOptions opt;
    opt.capture = CaptureFilter::all();
    opt.temperature = f.options.at("temperature").get<float>();
    const std::string mask = f.options.at("mask").get<std::string>();
    MaskSpec spec;
    spec.kind = mask == "causal" ? MaskKind::Causal : mask == "sliding_window" ? MaskKind::SlidingWindow : MaskKind::None;
    spec.window = f.options.at("window").get<int>();
    if (auto it = f.tensors.find("in.key_padding"); it != f.tensors.end())
        for (float v : it->second.data) spec.key_padding.push_back(v != 0.0f);
    if (f.config.arch == Arch::EncoderOnly)
        opt.enc_mask = spec;
    else
        opt.self_mask = spec;
    return opt;
}

MatrixRM as_matrix(const Tensor& t) { return t.mat(); }

TEST(ForwardGolden, NnTransformerStacksMatchTorch) {
    const Fixture f = load_fixture("model_nn_transformer.safetensors");
    ForwardOptions opt = options_of(f);
    Trace trace(CaptureFilter::all());
    const MatrixRM memory = encoder_stack_forward(*f.model, as_matrix(f.at("in.src_x")), opt, trace);
    EXPECT_ALLCLOSE(memory, as_matrix(f.at("out.enc_out")), kAtol, 0.0f);
    const MatrixRM dec = decoder_stack_forward(*f.model, as_matrix(f.at("in.tgt_x")), &memory, opt, trace);
    EXPECT_ALLCLOSE(dec, as_matrix(f.at("out.dec_out")), kAtol, 0.0f);
    for (int i = 0; i < 2; ++i) {
        for (const std::string& name : {"enc." + std::to_string(i) + ".attn.probs",
                                       "dec." + std::to_string(i) + ".attn.probs",
                                       "dec." + std::to_string(i) + ".cross_attn.probs"}) {
            SCOPED_TRACE(name);
            const Tensor& got = trace.at(name);
            const Tensor& want = f.at("out." + name);
            EXPECT_EQ(got.shape, want.shape);
            EXPECT_ALLCLOSE(got, want, kAtol, 0.0f);
        }
    }
}

TEST(ForwardGolden, NnTransformerSeq2SeqLogitsMatchTorch) {
    const Fixture f = load_fixture("model_nn_transformer.safetensors");
    const ForwardOptions opt = options_of(f);
    const ForwardResult r = forward_seq2seq(*f.model, f.ids("in.src_ids"), f.ids("in.tgt_ids"), opt);
    EXPECT_ALLCLOSE(r.trace->at("enc.embed.out"), f.at("in.src_x"), kAtol, 0.0f);
    EXPECT_ALLCLOSE(r.trace->at("embed.out"), f.at("in.tgt_x"), kAtol, 0.0f);
    EXPECT_ALLCLOSE(r.trace->at("enc.out"), f.at("out.enc_out"), kAtol, 0.0f);
    EXPECT_ALLCLOSE(r.hidden, as_matrix(f.at("out.dec_out")), kAtol, 0.0f);
    EXPECT_ALLCLOSE(r.logits, as_matrix(f.at("out.logits")), kAtol, 0.0f);
}

class DecoderGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(DecoderGolden, LogitsHiddenAndAttentionMatchTorch) {
    const Fixture f = load_fixture(GetParam());
    const ForwardOptions opt = options_of(f);
    const ForwardResult r = forward(*f.model, f.ids("in.ids"), opt);
    EXPECT_ALLCLOSE(r.hidden, as_matrix(f.at("out.hidden")), kAtol, 0.0f);
    EXPECT_ALLCLOSE(r.logits, as_matrix(f.at("out.logits")), kAtol, 0.0f);
    const std::string stack = f.config.arch == Arch::EncoderOnly ? "enc" : "dec";
    int checked = 0;
    for (int i = 0; i < f.config.n_layers; ++i) {
        const std::string name = stack + "." + std::to_string(i) + ".attn.probs";
        SCOPED_TRACE(name);
        const Tensor& got = r.trace->at(name);
        const Tensor& want = f.at("out." + name);
        EXPECT_EQ(got.shape, want.shape);
        EXPECT_ALLCLOSE(got, want, kAtol, 0.0f);
        ++checked;
    }
    EXPECT_EQ(checked, f.config.n_layers);

    // The last-row-only head gives the last row of the full logits.
    ForwardOptions last = opt;
    last.all_logits = false;
    last.capture = CaptureFilter::none();
    const ForwardResult r1 = forward(*f.model, f.ids("in.ids"), last);
    ASSERT_EQ(r1.logits.rows(), 1);
    EXPECT_ALLCLOSE(MatrixRM(r1.logits), MatrixRM(r.logits.bottomRows(1)), 1e-6f, 0.0f);
    EXPECT_EQ(r1.trace->size(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, DecoderGolden,
                         ::testing::Values("model_gpt2.safetensors", "model_llama.safetensors",
                                           "model_rope_interleaved.safetensors",
                                           "model_encoder_sinusoidal.safetensors"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                             std::string s = info.param;
                             s = s.substr(6, s.find('.') - 6);  // "model_gpt2.safetensors" -> "gpt2"
                             return s;
                         });

}  // namespace
}  // namespace ts
