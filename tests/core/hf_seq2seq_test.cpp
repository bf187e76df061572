// Hugging Face encoder–decoder checkpoints (t5, t5 v1.1, t5 with num_heads * d_kv != d_model, marian, bart;
// tests/golden/hf_{t5,t5_v11,t5_dkv,marian,bart}, made by
// tests/reference/make_hf_seq2seq_fixtures.py) against PyTorch reference forwards: logits, every head's encoder
// self-, decoder self- and cross-attention probabilities, T5's relative position buckets and bias; the switches they
// map onto; the source/target spec derived from config.json / generation_config.json; malformed configs.
#include "core/forward/decode.h"
#include "core/formats/hf_checkpoint.h"
#include "core/kernels/ops.h"
#include "core/formats/safetensors.h"
#include "tests/test_util.h"

#include <nlohmann/json.hpp>

#include <fstream>

namespace ts {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path fixture(const std::string& name) { return fs::path(test::golden_path(name)); }

std::vector<int> ids_of(const Tensor& t) {
    std::vector<int> ids;
    for (float v : t.data) ids.push_back(int(v));
    return ids;
}

struct TempDir : test::TempDir {
    TempDir() : test::TempDir("ts_hf_seq2seq_test") {}
};

/// Copies a fixture folder (without expected.safetensors) into `dst` and applies `edit` to its config.json.
fs::path edited_copy(const std::string& name, const fs::path& dst, const std::function<void(json&)>& edit) {
    test::copy_fixture(name, dst);
    std::ifstream in(dst / "config.json");
    json j = json::parse(in);
    in.close();
    edit(j);
    std::ofstream(dst / "config.json") << j.dump(2);
    return dst;
}

std::string load_error(const fs::path& dir) { return test::error_of([&] { (void)load_hf_model(dir); }); }

// --- golden comparisons ---------------------------------------------------------------------------------------
class HfSeq2SeqGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(HfSeq2SeqGolden, LogitsAndEveryAttentionMatchTorch) {
    const std::string name = GetParam();
    const auto model = load_hf_model(fixture(name));
    const ModelConfig& c = model->config();
    ASSERT_EQ(c.arch, Arch::EncoderDecoder);
    const WeightMap expected = load_safetensors(fixture(name) / "expected.safetensors");
    ForwardOptions fo;
    fo.capture = CaptureFilter::all();
    const ForwardResult r =
        forward_seq2seq(*model, ids_of(expected.at("src_ids")), ids_of(expected.at("tgt_ids")), fo);
    // Reference: float64 torch on the same (rounded) weights; ours: fp32.
    const Tensor& e_logits = expected.at("logits");
    ASSERT_EQ(r.logits.rows(), e_logits.dim(0));
    ASSERT_EQ(r.logits.cols(), e_logits.dim(1));
    const auto logits_ok = test::allclose(r.logits.data(), e_logits.data.data(), e_logits.numel(), 1e-4f, 0.0f);
    EXPECT_TRUE(logits_ok) << name << " logits";
    std::cout << "[ " << name << " ] logits " << logits_ok.message() << "\n";
    int compared = 0;
    const auto compare = [&](const std::string& key) {
        const Tensor& got = r.trace->at(key);
        const Tensor& want = expected.at(key);
        ASSERT_EQ(got.shape, want.shape) << key;  // (n_heads, T, S): every head compared
        const auto ok = test::allclose(got, want, 1e-5f);
        EXPECT_TRUE(ok) << name << " " << key;
        std::cout << "[ " << name << " ] " << key << " " << ok.message() << "\n";
        ++compared;
    };
    for (int i = 0; i < c.n_enc_layers; ++i) compare("enc." + std::to_string(i) + ".attn.probs");
    for (int i = 0; i < c.n_layers; ++i) {
        compare("dec." + std::to_string(i) + ".attn.probs");
        compare("dec." + std::to_string(i) + ".cross_attn.probs");
    }
    EXPECT_EQ(compared, c.n_enc_layers + 2 * c.n_layers);
    if (c.relative_attention_bias) {
        // The bias added to the scores, as recorded in the trace, in every layer of the stack (shared table).
        for (int i = 0; i < c.n_enc_layers; ++i)
            EXPECT_TRUE(test::allclose(r.trace->at("enc." + std::to_string(i) + ".attn.position_bias"),
                                       expected.at("enc.position_bias"), 1e-6f));
        for (int i = 0; i < c.n_layers; ++i)
            EXPECT_TRUE(test::allclose(r.trace->at("dec." + std::to_string(i) + ".attn.position_bias"),
                                       expected.at("dec.position_bias"), 1e-6f));
        EXPECT_EQ(r.trace->find("dec.0.cross_attn.position_bias"), nullptr);  // none in cross-attention
    }
}

INSTANTIATE_TEST_SUITE_P(Families, HfSeq2SeqGolden,
                         ::testing::Values("hf_t5", "hf_t5_v11", "hf_t5_dkv", "hf_t5_gguf", "hf_marian", "hf_bart"));

TEST(HfSeq2Seq, IncrementalDecodingMatchesTeacherForcing) {
    // decoder_step (KV cache: T5's bias for a query at position n_past against keys 0..n_past) equals row t of the
    // teacher-forced logits, for every family (hf_t5_dkv: cached keys/values of width d_kv != d_model / num_heads).
    for (const char* name : {"hf_t5", "hf_t5_dkv", "hf_marian", "hf_bart"}) {
        const auto model = load_hf_model(fixture(name));
        const WeightMap expected = load_safetensors(fixture(name) / "expected.safetensors");
        const std::vector<int> src = ids_of(expected.at("src_ids")), tgt = ids_of(expected.at("tgt_ids"));
        const MatrixRM memory = encode_source(*model, src);
        KVCache cache;
        const Tensor& e = expected.at("logits");
        for (size_t t = 0; t < tgt.size(); ++t) {
            const MatrixRM step = decoder_step(*model, memory, tgt[t], cache);
            EXPECT_TRUE(test::allclose(step.data(), e.data.data() + t * e.dim(1), e.dim(1), 1e-4f, 0.0f))
                << name << " step " << t;
        }
    }
}

TEST(T5RelativePositionBucket, MatchesTorchForEveryDistance) {
    const WeightMap e = load_safetensors(fixture("hf_t5") / "expected.safetensors");
    const std::vector<int> rel = ids_of(e.at("buckets.rel"));
    const std::vector<int> bi = ids_of(e.at("buckets.bidirectional")), causal = ids_of(e.at("buckets.causal")),
                           bi_small = ids_of(e.at("buckets.bidirectional_8_12"));
    ASSERT_EQ(rel.size(), 601u);
    int mismatches = 0;
    for (size_t k = 0; k < rel.size(); ++k) {
        mismatches += relative_position_bucket(rel[k], true, 32, 128) != bi[k];
        mismatches += relative_position_bucket(rel[k], false, 32, 128) != causal[k];
        mismatches += relative_position_bucket(rel[k], true, 8, 12) != bi_small[k];
        if (mismatches) {
            ADD_FAILURE() << "first mismatch at relative position " << rel[k];
            break;
        }
    }
    EXPECT_EQ(mismatches, 0);
    // Facts a teacher can check by hand: small distances are exact, far ones share the last bucket of a direction.
    EXPECT_EQ(relative_position_bucket(0, true, 32, 128), 0);
    EXPECT_EQ(relative_position_bucket(3, true, 32, 128), 16 + 3);
    EXPECT_EQ(relative_position_bucket(-3, true, 32, 128), 3);
    EXPECT_EQ(relative_position_bucket(-1000, true, 32, 128), 15);
    EXPECT_EQ(relative_position_bucket(5, false, 32, 128), 0);  // the future is one bucket in a causal stack
}

// --- what the families map onto ------------------------------------------------------------------------------
TEST(HfSeq2SeqConfig, FixturesMapOntoSwitches) {
    const auto t5 = load_hf_model(fixture("hf_t5"));
    const ModelConfig& t = t5->config();
    EXPECT_TRUE(t.relative_attention_bias);
    EXPECT_EQ(t.relative_attention_num_buckets, 8);
    EXPECT_EQ(t.relative_attention_max_distance, 12);
    EXPECT_EQ(t.norm, NormKind::RMSNorm);
    EXPECT_FALSE(t.scale_attn);
    EXPECT_EQ(t.position, PositionKind::None);
    EXPECT_EQ(t.activation, Activation::ReLU);
    EXPECT_TRUE(t.tie_embeddings && t.scale_lm_head);
    EXPECT_EQ(t5->weight("enc.relative_attention_bias").shape, (std::vector<int64_t>{8, 4}));

    const auto v11 = load_hf_model(fixture("hf_t5_v11"));
    EXPECT_EQ(v11->config().activation, Activation::GeGLUTanh);
    EXPECT_FALSE(v11->config().tie_embeddings);
    EXPECT_FALSE(v11->config().scale_lm_head);
    EXPECT_EQ(v11->config().n_enc_layers, 2);
    EXPECT_EQ(v11->config().n_layers, 3);  // num_decoder_layers
    EXPECT_EQ(v11->config().head_dim, 0);   // d_kv 8 = d_model 32 / 4 heads: nothing explicit

    // Flan-T5 / T5 v1.1 small shape: 3 heads of d_kv 16, inner width 48 != d_model 32.
    const auto dkv = load_hf_model(fixture("hf_t5_dkv"));
    EXPECT_EQ(dkv->config().head_dim, 16);
    EXPECT_EQ(dkv->config().d_head(), 16);
    EXPECT_EQ(dkv->config().n_heads, 3);
    for (const char* w : {"enc.0.attn.wq", "enc.1.attn.wv", "dec.0.attn.wk", "dec.2.cross_attn.wq",
                          "dec.2.cross_attn.wk", "dec.1.cross_attn.wv"})
        EXPECT_EQ(dkv->weight(w).shape, (std::vector<int64_t>{48, 32})) << w;
    for (const char* w : {"enc.0.attn.wo", "dec.0.attn.wo", "dec.2.cross_attn.wo"})
        EXPECT_EQ(dkv->weight(w).shape, (std::vector<int64_t>{32, 48})) << w;

    const auto marian = load_hf_model(fixture("hf_marian"));
    const ModelConfig& m = marian->config();
    EXPECT_EQ(m.position, PositionKind::Sinusoidal);
    EXPECT_EQ(m.sinusoidal_layout, SinusoidalLayout::HalfSplit);
    EXPECT_EQ(m.norm_placement, NormPlacement::Post);
    EXPECT_EQ(m.activation, Activation::SiLU);
    EXPECT_TRUE(m.scale_embeddings && m.final_logits_bias);
    EXPECT_FALSE(m.final_norm);

    const auto bart = load_hf_model(fixture("hf_bart"));
    const ModelConfig& b = bart->config();
    EXPECT_EQ(b.position, PositionKind::Learned);
    EXPECT_TRUE(b.enc_pos_emb && b.embed_norm && b.final_logits_bias);
    EXPECT_EQ(b.activation, Activation::GELU);
    EXPECT_EQ(bart->weight("pos_emb.weight").shape, (std::vector<int64_t>{40, 32}));  // 42 rows stored, offset 2
}

TEST(HfSeq2SeqConfig, SwitchesRoundTripThroughOurConfigJson) {
    for (const char* name : {"hf_t5", "hf_t5_dkv", "hf_marian", "hf_bart"}) {
        const ModelConfig c = load_hf_model(fixture(name))->config();
        json j = c;
        const ModelConfig back = j.get<ModelConfig>();
        EXPECT_EQ(json(back).dump(), j.dump()) << name;
        EXPECT_EQ(back.parameter_count(), c.parameter_count()) << name;
        int64_t stored = 0;  // parameter_count() agrees with the weights the model holds
        for (const auto& [n, shape] : expected_weights(c)) stored += Tensor::count(shape);
        EXPECT_EQ(stored, c.parameter_count()) << name;
    }
    ModelConfig bad = load_hf_model(fixture("hf_t5"))->config();
    bad.relative_attention_max_distance = 2;
    EXPECT_THROW(bad.validate(), std::invalid_argument);
}

TEST(HfSeq2SeqConfig, MarianSinusoidalHalfSplitLayout) {
    // sin in columns [0, d/2), cos in [d/2, d), frequency base^(-2i/d): position 1, column 0 is sin(1), column d/2
    // is cos(1); the interleaved layout puts cos(1) at column 1.
    const MatrixRM half = sinusoidal_table(3, 8, 10000.0f, SinusoidalLayout::HalfSplit);
    const MatrixRM inter = sinusoidal_table(3, 8, 10000.0f, SinusoidalLayout::Interleaved);
    EXPECT_FLOAT_EQ(half(1, 0), std::sin(1.0f));
    EXPECT_FLOAT_EQ(half(1, 4), std::cos(1.0f));
    EXPECT_FLOAT_EQ(inter(1, 1), std::cos(1.0f));
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(half(2, i), inter(2, 2 * i));
        EXPECT_EQ(half(2, 4 + i), inter(2, 2 * i + 1));
    }
}

// --- source/target spec ------------------------------------------------------------------------------------------
TEST(HfSeq2SeqSpec, DerivedFromConfigAndGenerationConfig) {
    const TranslationSpec t5 = hf_translation_spec(fixture("hf_t5"));
    EXPECT_EQ(t5.direction, "model");
    EXPECT_EQ(t5.decoder_start_id, 0);  // pad
    EXPECT_EQ(t5.target_end_id, 1);
    EXPECT_EQ(t5.source_end_id, 1);
    EXPECT_EQ(t5.source_start_id, -1);
    EXPECT_EQ(make_source_ids(t5, {5, 6}, "en"), (std::vector<int>{5, 6, 1}));

    const TranslationSpec marian = hf_translation_spec(fixture("hf_marian"));
    EXPECT_EQ(marian.decoder_start_id, 319);  // pad
    EXPECT_EQ(marian.pad_id, 319);
    EXPECT_EQ(marian.target_end_id, 0);

    const TranslationSpec bart = hf_translation_spec(fixture("hf_bart"));
    EXPECT_EQ(bart.decoder_start_id, 2);  // eos
    EXPECT_EQ(bart.source_start_id, 0);   // <s>
    EXPECT_EQ(make_source_ids(bart, {9}, ""), (std::vector<int>{0, 9, 2}));

    TempDir tmp;  // generation_config.json overrides config.json, as HF generate reads it
    const fs::path d = edited_copy("hf_marian", tmp.path / "m", [](json&) {});
    std::ofstream(d / "generation_config.json") << R"({"decoder_start_token_id": 7, "eos_token_id": 3})";
    const TranslationSpec over = hf_translation_spec(d);
    EXPECT_EQ(over.decoder_start_id, 7);
    EXPECT_EQ(over.target_end_id, 3);

    const fs::path no_start = edited_copy("hf_t5", tmp.path / "t", [](json& j) { j.erase("decoder_start_token_id"); });
    try {
        (void)hf_translation_spec(no_start);
        ADD_FAILURE() << "no error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("decoder_start_token_id"), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)hf_translation_spec(fixture("hf_gpt2")), std::runtime_error);
}

TEST(HfSeq2SeqSpec, GreedyDecodingRunsOnEveryFamily) {
    for (const char* name : {"hf_t5", "hf_t5_dkv", "hf_marian", "hf_bart"}) {
        const auto model = load_hf_model(fixture(name));
        const TranslationSpec spec = hf_translation_spec(fixture(name));
        DecodeOptions opt;
        opt.max_len = 6;
        const DecodeResult r = translate_ids(*model, spec, make_source_ids(spec, {5, 6, 7}, ""), opt);
        EXPECT_FALSE(r.steps.empty()) << name;
        for (int id : r.ids) EXPECT_NE(id, spec.pad_id) << name;  // pad is never produced (Marian's bad_words_ids)
    }
}

// --- unsupported keys and broken files name what is wrong --------------------------------------------------------
TEST(HfSeq2SeqErrors, UnsupportedKeysAreNamed) {
    TempDir tmp;
    const auto err = [&](const char* name, const char* sub, const std::function<void(json&)>& edit) {
        return load_error(edited_copy(name, tmp.path / sub, edit));
    };
    EXPECT_NE(err("hf_t5", "a", [](json& j) { j["feed_forward_proj"] = "gated-relu"; }).find("feed_forward_proj"),
              std::string::npos);
    // d_kv != d_model / num_heads is a supported shape; weights stored for another d_kv are named with their shape.
    const std::string dkv = err("hf_t5", "b", [](json& j) { j["d_kv"] = 16; });
    EXPECT_NE(dkv.find("SelfAttention."), std::string::npos) << dkv;
    EXPECT_NE(dkv.find("(64, 32)"), std::string::npos) << dkv;  // num_heads 4 * d_kv 16 rows
    EXPECT_NE(err("hf_marian", "c", [](json& j) { j["share_encoder_decoder_embeddings"] = false; })
                  .find("share_encoder_decoder_embeddings"),
              std::string::npos);
    EXPECT_NE(err("hf_marian", "d", [](json& j) { j["decoder_ffn_dim"] = 96; }).find("decoder_ffn_dim"),
              std::string::npos);
    EXPECT_NE(err("hf_bart", "e", [](json& j) { j["normalize_before"] = true; }).find("normalize_before"),
              std::string::npos);
    EXPECT_NE(err("hf_bart", "f", [](json& j) { j["activation_function"] = "tanh"; }).find("activation_function"),
              std::string::npos);
    // The stored Marian sinusoidal table no longer fits the config: the tensor is named.
    const std::string shape = err("hf_marian", "g", [](json& j) { j["max_position_embeddings"] = 65; });
    EXPECT_NE(shape.find("embed_positions.weight"), std::string::npos) << shape;
}

}  // namespace
}  // namespace ts
