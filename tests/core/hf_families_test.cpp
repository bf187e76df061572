// Hugging Face BERT, GPT-NeoX (Pythia) and Gemma folders (tests/golden/hf_{bert,gpt_neox,gpt_neox_sequential,gemma},
// made by tests/reference/make_bert_neox_gemma_fixtures.py) against reference forwards written in plain torch
// from the transformers equations; the config mapping onto ModelConfig's switches; and the errors that name keys.
#include "core/formats/hf_checkpoint.h"
#include "core/formats/safetensors.h"
#include "core/tokenizer/tokenizer_io.h"
#include "tests/test_util.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace ts {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path fixture(const std::string& name) { return fs::path(test::golden_path(name)); }

struct TempDir : test::TempDir {
    TempDir() : test::TempDir("ts_hf_families_test") {}
};

using test::copy_fixture;


std::string config_error(const std::string& text) { return test::error_of([&] { (void)parse_hf_config(text, "cfg"); }); }

std::string load_error(const fs::path& dir) { return test::error_of([&] { (void)load_hf_model(dir); }); }

using test::contains;

// --- golden comparisons ---------------------------------------------------------------------------------------
class HfFamilyGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(HfFamilyGolden, LogitsAndEveryHeadsProbsMatchTorch) {
    const std::string name = GetParam();
    const auto model = load_hf_model(fixture(name));
    const ModelConfig& c = model->config();
    const std::string stack = c.arch == Arch::EncoderOnly ? "enc" : "dec";
    const WeightMap expected = load_safetensors(fixture(name) / "expected.safetensors");
    std::vector<int> ids;
    for (float v : expected.at("ids").data) ids.push_back(int(v));
    ForwardOptions fo;
    if (c.arch == Arch::EncoderOnly) fo.enc_mask.kind = MaskKind::None;  // BERT: every token sees every token
    fo.capture = CaptureFilter::prefixes({stack + ".0.attn.probs", stack + ".1.attn.probs", "logits"});
    const ForwardResult r = forward(*model, ids, fo);
    // Reference: float64 torch on the same (rounded) weights; ours: fp32.
    const Tensor& e_logits = expected.at("logits");
    ASSERT_EQ(r.logits.rows(), e_logits.dim(0));
    ASSERT_EQ(r.logits.cols(), e_logits.dim(1));
    const auto logits_ok = test::allclose(r.logits.data(), e_logits.data.data(), e_logits.numel(), 1e-4f, 0.0f);
    EXPECT_TRUE(logits_ok) << name << " logits";
    std::cout << "[ " << name << " ] logits " << logits_ok.message() << "\n";
    ASSERT_EQ(c.n_layers, 2);
    for (int i = 0; i < c.n_layers; ++i) {
        const std::string key = stack + "." + std::to_string(i) + ".attn.probs";
        const Tensor& got = r.trace->at(key);
        const Tensor& want = expected.at(key);
        ASSERT_EQ(got.shape, want.shape) << key;  // (n_heads, T, T): every head compared
        const auto ok = test::allclose(got, want, 1e-5f);
        EXPECT_TRUE(ok) << name << " " << key;
        std::cout << "[ " << name << " ] " << key << " " << ok.message() << "\n";
    }
}

INSTANTIATE_TEST_SUITE_P(Families, HfFamilyGolden,
                         ::testing::Values("hf_bert", "hf_gpt_neox", "hf_gpt_neox_sequential", "hf_gemma"));

TEST(HfFamilyGolden, BertAttentionIsBidirectional) {
    const auto model = load_hf_model(fixture("hf_bert"));
    ForwardOptions fo;
    fo.enc_mask.kind = MaskKind::None;
    fo.capture = CaptureFilter::prefixes({"enc.0.attn.probs"});
    const ForwardResult r = forward(*model, {5, 6, 7, 8}, fo);
    const Tensor& p = r.trace->at("enc.0.attn.probs");
    // The first query row of head 0 gives weight to the last key: no causal mask.
    EXPECT_GT(p.data[3], 0.0f);
}

TEST(HfFamilyGolden, SyntheticBertFolderFillsItsMaskToken) {
    // tests/golden/hf_bert/tokenizer.json: byte-level BPE with "[MASK]" as an added special token (the app's
    // fill-mask test types into this folder; real BERT folders ship WordPiece).
    const auto tok = find_tokenizer(fixture("hf_bert").string());
    ASSERT_TRUE(tok);
    const auto mask = tok->token_id("[MASK]");
    ASSERT_TRUE(mask.has_value());
    const std::vector<int32_t> ids = tok->encode_ids("The capital of France is [MASK].");
    ASSERT_EQ(ids.size(), 8u);
    EXPECT_EQ(ids[6], *mask);
    const auto model = load_hf_model(fixture("hf_bert"));
    EXPECT_EQ(size_t(model->config().vocab_size), tok->vocab_size());
    const ForwardResult r = forward(*model, std::vector<int>(ids.begin(), ids.end()), {});
    ASSERT_EQ(r.logits.rows(), 8);  // a masked-LM head scores every position, the mask included
    EXPECT_TRUE(r.logits.row(6).allFinite());
}

// --- config mapping -----------------------------------------------------------------------------------------------
TEST(HfFamilyConfig, FixturesMapOntoModelConfigSwitches) {
    const ModelConfig b = load_hf_model(fixture("hf_bert"))->config();
    EXPECT_EQ(b.arch, Arch::EncoderOnly);
    EXPECT_EQ(b.norm_placement, NormPlacement::Post);
    EXPECT_FALSE(b.final_norm);
    EXPECT_TRUE(b.embed_norm);
    EXPECT_TRUE(b.mlm_head);
    EXPECT_EQ(b.type_vocab_size, 2);
    EXPECT_EQ(b.activation, Activation::GELU);
    EXPECT_FLOAT_EQ(b.norm_eps, 1e-12f);

    const ModelConfig n = load_hf_model(fixture("hf_gpt_neox"))->config();
    EXPECT_TRUE(n.parallel_residual);
    EXPECT_EQ(n.d_head(), 16);
    EXPECT_EQ(n.rotary_dim, 4);  // int(16 * 0.25)
    EXPECT_EQ(n.rope_dim(), 4);
    EXPECT_FALSE(n.tie_embeddings);
    EXPECT_TRUE(n.attn_qkv_bias);
    const ModelConfig s = load_hf_model(fixture("hf_gpt_neox_sequential"))->config();
    EXPECT_FALSE(s.parallel_residual);
    EXPECT_EQ(s.rotary_dim, 0);  // rotary_pct 1.0: the whole head
    EXPECT_EQ(s.rope_dim(), s.d_head());

    const auto gm = load_hf_model(fixture("hf_gemma"));
    const ModelConfig& g = gm->config();
    EXPECT_EQ(g.head_dim, 16);
    EXPECT_EQ(g.d_head(), 16);
    EXPECT_NE(g.d_head(), g.d_model / g.n_heads);
    EXPECT_EQ(g.n_kv_heads, 1);
    EXPECT_EQ(g.activation, Activation::GeGLUTanh);
    EXPECT_TRUE(g.scale_embeddings);
    EXPECT_TRUE(g.tie_embeddings);
    EXPECT_EQ(g.norm, NormKind::RMSNorm);
    // The file's norm weights w are folded to 1 + w at load.
    const WeightMap file = load_safetensors(fixture("hf_gemma") / "model.safetensors");
    const Tensor& w = file.at("model.norm.weight");
    const Tensor& ours = gm->weight("dec.final_norm.weight");
    ASSERT_EQ(ours.numel(), w.numel());
    for (int64_t i = 0; i < w.numel(); ++i) EXPECT_EQ(ours.data[size_t(i)], 1.0f + w.data[size_t(i)]) << i;
}

TEST(HfFamilyConfig, SwitchesRoundTripThroughOurConfigJson) {
    for (const char* name : {"hf_bert", "hf_gpt_neox", "hf_gemma"}) {
        const ModelConfig c = load_hf_model(fixture(name))->config();
        json j = c;
        ModelConfig back;
        from_json(j, back);
        EXPECT_EQ(json(back), j) << name;
        EXPECT_EQ(back.parameter_count(), c.parameter_count()) << name;
    }
}

TEST(HfFamilyConfig, ParameterCountMatchesTheWeights) {
    for (const char* name : {"hf_bert", "hf_gpt_neox", "hf_gpt_neox_sequential", "hf_gemma"}) {
        const auto m = load_hf_model(fixture(name));
        int64_t n = 0;
        for (const auto& [k, t] : m->stored_weights()) n += t.numel();
        EXPECT_EQ(m->config().parameter_count(), n) << name;
    }
}

TEST(HfFamilyConfig, ValidateRejectsInconsistentSwitches) {
    ModelConfig c;
    c.rotary_dim = 4;  // learned positions
    EXPECT_THROW(c.validate(), std::invalid_argument);
    c = ModelConfig{};
    c.position = PositionKind::RoPE;
    c.rotary_dim = 3;
    EXPECT_THROW(c.validate(), std::invalid_argument);
    c = ModelConfig{};
    c.parallel_residual = true;
    c.norm_placement = NormPlacement::Post;
    EXPECT_THROW(c.validate(), std::invalid_argument);
    c = ModelConfig{};
    c.mlm_head = true;  // decoder
    EXPECT_THROW(c.validate(), std::invalid_argument);
    c = ModelConfig{};
    c.d_model = 30;
    c.n_heads = 4;
    EXPECT_THROW(c.validate(), std::invalid_argument);  // 30 / 4 without head_dim
    c.head_dim = 8;
    EXPECT_NO_THROW(c.validate());
}

TEST(HfFamilyConfig, UnsupportedKeysAreNamed) {
    const std::string bert = R"({"model_type": "bert", "hidden_size": 16, "num_hidden_layers": 1,
        "num_attention_heads": 2, "intermediate_size": 32, "vocab_size": 10)";
    EXPECT_TRUE(contains(config_error(bert + R"(, "position_embedding_type": "relative_key"})"),
                         {"cfg", "position_embedding_type", "relative_key"}));
    EXPECT_TRUE(contains(config_error(bert + R"(, "is_decoder": true})"), {"is_decoder"}));
    EXPECT_TRUE(contains(config_error(bert + R"(, "hidden_act": "mish"})"), {"hidden_act", "mish"}));
    EXPECT_EQ(config_error(bert + "}"), "<no error>");

    const std::string neox = R"({"model_type": "gpt_neox", "hidden_size": 32, "num_hidden_layers": 1,
        "num_attention_heads": 4, "intermediate_size": 64, "vocab_size": 10)";
    EXPECT_TRUE(contains(config_error(neox + R"(, "rope_scaling": {"type": "linear", "factor": 2.0}})"),
                         {"rope_scaling", "linear"}));
    EXPECT_TRUE(contains(config_error(neox + R"(, "rope_parameters": {"rope_type": "yarn"}})"),
                         {"rope_parameters.rope_type", "yarn"}));
    EXPECT_TRUE(contains(config_error(neox + R"(, "rotary_pct": 0.1})"), {"rotary_pct"}));  // int(8 * 0.1) = 0
    const HfConfig neox_new = parse_hf_config(
        neox + R"(, "rope_parameters": {"rope_type": "default", "rope_theta": 500.0, "partial_rotary_factor": 0.5}})");
    EXPECT_EQ(neox_new.config.rotary_dim, 4);
    EXPECT_FLOAT_EQ(neox_new.config.rope_theta, 500.0f);

    const std::string gemma = R"({"model_type": "gemma", "hidden_size": 32, "num_hidden_layers": 1,
        "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 16, "intermediate_size": 64, "vocab_size": 10)";
    EXPECT_TRUE(contains(config_error(gemma + R"(, "rope_scaling": {"type": "dynamic"}})"), {"rope_scaling"}));
    EXPECT_TRUE(contains(config_error(gemma + R"(, "hidden_activation": "relu"})"), {"hidden_activation", "relu"}));
    // No hidden_activation: transformers uses gelu_pytorch_tanh whatever hidden_act says.
    EXPECT_EQ(parse_hf_config(gemma + R"(, "hidden_act": "gelu"})").config.activation, Activation::GeGLUTanh);
    EXPECT_EQ(parse_hf_config(gemma + "}").config.head_dim, 16);
}

// --- folder variants and errors -----------------------------------------------------------------------------------
TEST(HfFamilyLoad, BertTiedDecoderCopiesAreAcceptedWhenEqualAndRefusedWhenNot) {
    TempDir tmp;
    copy_fixture("hf_bert", tmp.path);
    WeightMap w = load_safetensors(tmp.path / "model.safetensors");
    w["cls.predictions.decoder.weight"] = w.at("bert.embeddings.word_embeddings.weight");
    w["cls.predictions.decoder.bias"] = w.at("cls.predictions.bias");
    w["bert.pooler.dense.weight"] = Tensor({32, 32});  // BertForPreTraining extras: skipped
    w["bert.pooler.dense.bias"] = Tensor({32});
    w["cls.seq_relationship.weight"] = Tensor({2, 32});
    save_safetensors(tmp.path / "model.safetensors", w);
    const std::vector<int> ids = {3, 4, 5};
    const auto a = forward(*load_hf_model(fixture("hf_bert")), ids, {});
    const auto b = forward(*load_hf_model(tmp.path), ids, {});
    EXPECT_ALLCLOSE(b.logits, a.logits, 0.0f, 0.0f);

    w["cls.predictions.decoder.bias"].data[0] += 1.0f;
    save_safetensors(tmp.path / "model.safetensors", w);
    EXPECT_TRUE(contains(load_error(tmp.path), {"cls.predictions.decoder.bias", "mlm_head.bias", "tied"}));
}

TEST(HfFamilyLoad, BertLayerNormGammaBetaNamesAreRenamedAsTransformersDoes) {
    // bert-base-uncased and other TensorFlow-converted checkpoints store LayerNorm.gamma / LayerNorm.beta.
    TempDir tmp;
    copy_fixture("hf_bert", tmp.path);
    const WeightMap src = load_safetensors(tmp.path / "model.safetensors");
    WeightMap w;
    int renamed = 0;
    for (const auto& [name, t] : src) {
        std::string n = name;
        for (const auto& [from, to] : {std::pair{".LayerNorm.weight", ".LayerNorm.gamma"},
                                       std::pair{".LayerNorm.bias", ".LayerNorm.beta"}})
            if (n.ends_with(from)) n = n.substr(0, n.size() - std::string(from).size()) + to, ++renamed;
        w[n] = t;
    }
    EXPECT_EQ(renamed, 2 * (1 + 2 * 2 + 1));  // embeddings, 2 per layer, MLM transform
    save_safetensors(tmp.path / "model.safetensors", w);
    const std::vector<int> ids = {3, 4, 5, 299};
    const auto a = forward(*load_hf_model(fixture("hf_bert")), ids, {});
    const auto b = forward(*load_hf_model(tmp.path), ids, {});
    EXPECT_ALLCLOSE(b.logits, a.logits, 0.0f, 0.0f);
}

TEST(HfFamilyLoad, MissingTensorsAreNamedWithTheFilesPrefix) {
    TempDir tmp;
    copy_fixture("hf_gpt_neox_sequential", tmp.path);
    WeightMap w = load_safetensors(tmp.path / "model.safetensors");
    w.erase("gpt_neox.layers.1.attention.query_key_value.weight");
    save_safetensors(tmp.path / "model.safetensors", w);
    EXPECT_TRUE(contains(load_error(tmp.path), {"missing tensor 'gpt_neox.layers.1.attention.query_key_value.weight'"}));

    TempDir tmp2;
    copy_fixture("hf_gpt_neox_sequential", tmp2.path);
    w = load_safetensors(tmp2.path / "model.safetensors");
    w.erase("embed_out.weight");
    save_safetensors(tmp2.path / "model.safetensors", w);
    EXPECT_TRUE(contains(load_error(tmp2.path), {"missing tensor 'embed_out.weight'"}));

    TempDir tmp3;
    copy_fixture("hf_bert", tmp3.path);
    w = load_safetensors(tmp3.path / "model.safetensors");
    w.erase("cls.predictions.bias");
    save_safetensors(tmp3.path / "model.safetensors", w);
    EXPECT_TRUE(contains(load_error(tmp3.path), {"missing tensor 'cls.predictions.bias'"}));
}

TEST(HfFamilyLoad, BertModelWithoutMaskedLmHeadOpensForItsAttention) {
    TempDir tmp;
    copy_fixture("hf_bert", tmp.path);
    WeightMap w = load_safetensors(tmp.path / "model.safetensors");
    for (auto it = w.begin(); it != w.end();) it = it->first.rfind("cls.", 0) == 0 ? w.erase(it) : std::next(it);
    save_safetensors(tmp.path / "model.safetensors", w);
    const auto headless = load_hf_model(tmp.path);
    EXPECT_FALSE(headless->config().mlm_head);
    ForwardOptions fo;
    fo.capture = CaptureFilter::prefixes({"enc.1.attn.probs"});
    const ForwardResult r = forward(*headless, {3, 4, 5}, fo);
    EXPECT_EQ(r.logits.size(), 0);  // no output head: no logits
    const ForwardResult full = forward(*load_hf_model(fixture("hf_bert")), {3, 4, 5}, fo);
    EXPECT_ALLCLOSE(r.trace->at("enc.1.attn.probs"), full.trace->at("enc.1.attn.probs"), 0.0f, 0.0f);
}

TEST(HfFamilyLoad, KvCacheInTwoCallsEqualsOneForward) {
    // Parallel residual + partial rotary (GPT-NeoX) and explicit head_dim + MQA (Gemma) through the KV cache: the
    // positions of the second call continue where the first stopped.
    const std::vector<int> ids = {1, 17, 254, 3, 99, 42, 7};
    for (const char* name : {"hf_gpt_neox", "hf_gemma"}) {
        const auto m = load_hf_model(fixture(name));
        const ForwardResult full = forward(*m, ids, {});
        KVCache cache;
        (void)forward(*m, std::vector<int>(ids.begin(), ids.begin() + 4), {}, &cache);
        const ForwardResult tail = forward(*m, std::vector<int>(ids.begin() + 4, ids.end()), {}, &cache);
        const MatrixRM want = full.logits.bottomRows(3);
        EXPECT_ALLCLOSE(tail.logits, want, 1e-4f, 0.0f) << name;
    }
}

TEST(HfFamilyLoad, PartialRotaryLeavesTheRestOfEachHeadUnrotated) {
    const auto m = load_hf_model(fixture("hf_gpt_neox"));
    ForwardOptions fo;
    fo.capture = CaptureFilter::prefixes({"dec.0.attn.q", "dec.0.attn.q_rot"});
    const ForwardResult r = forward(*m, {1, 2, 3, 4, 5}, fo);
    const Tensor& q = r.trace->at("dec.0.attn.q");
    const Tensor& q_rot = r.trace->at("dec.0.attn.q_rot");
    ASSERT_EQ(q.shape, q_rot.shape);
    const int64_t D = q.shape[2], R = m->config().rope_dim();
    bool rotated_changed = false;
    for (int64_t row = 0; row < q.shape[0] * q.shape[1]; ++row)
        for (int64_t d = 0; d < D; ++d) {
            const float a = q.data[size_t(row * D + d)], b = q_rot.data[size_t(row * D + d)];
            if (d >= R) EXPECT_EQ(a, b) << "row " << row << " feature " << d;
            else if (row % q.shape[1] != 0 && a != b) rotated_changed = true;  // position 0 is not rotated
        }
    EXPECT_TRUE(rotated_changed);
}

}  // namespace
}  // namespace ts
