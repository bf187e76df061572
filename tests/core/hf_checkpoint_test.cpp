// Hugging Face checkpoint loading: tiny GPT-2 / Llama / Qwen2 / Mistral folders (tests/golden/hf_*, made by
// tests/reference/make_hf_fixtures.py) against PyTorch reference forwards, malformed folders built at runtime,
// and hub cache layouts.
#include "core/formats/hf_checkpoint.h"
#include "core/formats/safetensors.h"
#include "tests/test_util.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace ts {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// A temporary folder for this file's checkpoints (tests/test_util.h).
struct TempDir : test::TempDir {
    TempDir() : test::TempDir("ts_hf_test") {}
};

fs::path fixture(const std::string& name) { return fs::path(test::golden_path(name)); }

using test::copy_fixture;

json read_json(const fs::path& p) {
    std::ifstream in(p);
    return json::parse(in);
}
void write_json(const fs::path& p, const json& j) { std::ofstream(p) << j.dump(2); }

std::string load_error(const fs::path& dir) { return test::error_of([&] { (void)load_hf_model(dir); }); }

using test::contains;

// --- golden comparisons ---------------------------------------------------------------------------------------
class HfGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(HfGolden, LogitsAndEveryHeadsProbsMatchTorch) {
    const std::string name = GetParam();
    uint64_t last_done = 0, last_total = 0;
    int calls = 0;
    bool monotone = true;
    HfLoadOptions opt;
    opt.progress = [&](uint64_t done, uint64_t total) {
        monotone = monotone && done >= last_done && done <= total;
        last_done = done, last_total = total, ++calls;
    };
    const auto model = load_hf_model(fixture(name), opt);
    EXPECT_TRUE(monotone);
    EXPECT_GE(calls, 2);
    EXPECT_GT(last_total, 0u);
    EXPECT_EQ(last_done, last_total);

    const WeightMap expected = load_safetensors(fixture(name) / "expected.safetensors");
    std::vector<int> ids;
    for (float v : expected.at("ids").data) ids.push_back(int(v));
    ForwardOptions fo;
    fo.capture = CaptureFilter::prefixes({"dec.0.attn.probs", "dec.1.attn.probs", "logits"});
    const ForwardResult r = forward(*model, ids, fo);
    // Reference: float64 torch on the same (rounded) weights; ours: fp32. 1e-4 absolute on logits of magnitude
    // up to ~14 leaves a wide margin over fp32 rounding (measured max errors are printed by allclose).
    const Tensor& e_logits = expected.at("logits");
    ASSERT_EQ(r.logits.rows(), e_logits.dim(0));
    ASSERT_EQ(r.logits.cols(), e_logits.dim(1));
    const auto logits_ok = test::allclose(r.logits.data(), e_logits.data.data(), e_logits.numel(), 1e-4f, 0.0f);
    EXPECT_TRUE(logits_ok) << name << " logits";
    std::cout << "[ " << name << " ] logits " << logits_ok.message() << "\n";
    ASSERT_EQ(model->config().n_layers, 2);
    for (int i = 0; i < model->config().n_layers; ++i) {
        const std::string key = "dec." + std::to_string(i) + ".attn.probs";
        const Tensor& got = r.trace->at(key);
        const Tensor& want = expected.at(key);
        ASSERT_EQ(got.shape, want.shape) << key;  // (n_heads, T, T): every head compared
        const auto ok = test::allclose(got, want, 1e-5f);
        EXPECT_TRUE(ok) << name << " " << key;
        std::cout << "[ " << name << " ] " << key << " " << ok.message() << "\n";
    }
}

INSTANTIATE_TEST_SUITE_P(Families, HfGolden, ::testing::Values("hf_gpt2", "hf_llama", "hf_qwen2", "hf_mistral",
                                                               "hf_mistral_window", "hf_qwen2_window"));

// Mistral's sliding_window (4 < 7 tokens) and Qwen2's (3, from max_window_layers = 1) are applied: a windowed
// layer gives exactly zero weight to keys older than the window, and token-by-token decoding through the KV cache
// gives the full forward's logits.
TEST(HfSlidingWindow, AppliedPerLayerAndThroughTheKvCache) {
    struct Case {
        const char* name;
        int window, from_layer;
    };
    for (const Case& k : {Case{"hf_mistral_window", 4, 0}, Case{"hf_qwen2_window", 3, 1}}) {
        SCOPED_TRACE(k.name);
        const auto model = load_hf_model(fixture(k.name));
        const ModelConfig& c = model->config();
        EXPECT_EQ(c.sliding_window, k.window);
        EXPECT_EQ(c.sliding_window_from_layer, k.from_layer);
        const std::vector<int> ids = {1, 17, 254, 3, 99, 42, 7};
        ForwardOptions fo;
        fo.capture = CaptureFilter::prefixes({"dec.0.attn.probs", "dec.1.attn.probs"});
        const ForwardResult full = forward(*model, ids, fo);
        const int T = int(ids.size());
        for (int layer = 0; layer < c.n_layers; ++layer) {
            const Tensor& p = full.trace->at("dec." + std::to_string(layer) + ".attn.probs");
            const bool slides = layer >= k.from_layer;
            float outside = 0, inside_old = 0;
            for (int h = 0; h < c.n_heads; ++h)
                for (int t = 0; t < T; ++t)
                    for (int s = 0; s <= t - k.window; ++s) {
                        const float v = p.data[(size_t(h) * T + t) * T + s];
                        (slides ? outside : inside_old) += v;
                    }
            if (slides) EXPECT_EQ(outside, 0.0f) << "layer " << layer;
            else EXPECT_GT(inside_old, 0.0f) << "layer " << layer << " should see every earlier key";
        }
        KVCache cache;
        ForwardOptions step;
        step.all_logits = false;
        for (int t = 0; t < T; ++t) {
            const ForwardResult r = forward(*model, {ids[size_t(t)]}, step, &cache);
            ASSERT_EQ(r.logits.rows(), 1);
            for (int v = 0; v < c.vocab_size; ++v)
                ASSERT_NEAR(r.logits(0, v), full.logits(t, v), 2e-4f) << "position " << t << " token " << v;
        }
    }
}

TEST(HfConfigMapping, FixturesMapOntoModelConfig) {
    const auto gpt2 = load_hf_model(fixture("hf_gpt2"));
    const ModelConfig& g = gpt2->config();
    EXPECT_EQ(g.d_ff, 4 * g.d_model);  // n_inner: null
    EXPECT_EQ(g.activation, Activation::GELUTanh);
    EXPECT_EQ(g.position, PositionKind::Learned);
    EXPECT_TRUE(g.tie_embeddings);
    EXPECT_EQ(gpt2->find_weight("lm_head.weight"), nullptr);
    EXPECT_EQ(g.name, "hf_gpt2");

    const auto llama = load_hf_model(fixture("hf_llama"));
    const ModelConfig& l = llama->config();
    EXPECT_EQ(l.n_heads, 4);
    EXPECT_EQ(l.n_kv_heads, 2);
    EXPECT_EQ(l.norm, NormKind::RMSNorm);
    EXPECT_EQ(l.activation, Activation::SwiGLU);
    EXPECT_EQ(l.rope_layout, RopeLayout::HalfSplit);
    EXPECT_FALSE(l.tie_embeddings);
    EXPECT_FALSE(l.attn_qkv_bias);
    EXPECT_FLOAT_EQ(l.norm_eps, 1e-5f);

    const auto qwen = load_hf_model(fixture("hf_qwen2"));
    EXPECT_TRUE(qwen->config().tie_embeddings);
    EXPECT_TRUE(qwen->config().attn_qkv_bias);
    EXPECT_FALSE(qwen->config().attn_out_bias);
    EXPECT_FLOAT_EQ(qwen->config().rope_theta, 1e6f);

    std::ifstream in(fixture("hf_mistral") / "config.json");
    std::stringstream ss;
    ss << in.rdbuf();
    const HfConfig m = parse_hf_config(ss.str());
    EXPECT_EQ(m.model_type, "mistral");
    EXPECT_EQ(m.sliding_window, 4096);
    EXPECT_EQ(m.config.n_kv_heads, 1);
}

TEST(HfConfigMapping, DefaultsAndMissingKeys) {
    const HfConfig g = parse_hf_config(R"({"model_type": "gpt2", "n_embd": 16, "n_layer": 1, "n_head": 2,
                                           "vocab_size": 10})");
    EXPECT_EQ(g.config.d_ff, 64);
    EXPECT_EQ(g.config.max_seq_len, 1024);
    EXPECT_FLOAT_EQ(g.config.norm_eps, 1e-5f);
    const HfConfig l = parse_hf_config(R"({"model_type": "llama", "hidden_size": 16, "intermediate_size": 40,
        "num_hidden_layers": 1, "num_attention_heads": 4, "vocab_size": 10, "head_dim": 4})");
    EXPECT_EQ(l.config.n_kv_heads, 4);
    EXPECT_FLOAT_EQ(l.config.rope_theta, 10000.0f);
    EXPECT_FALSE(l.config.tie_embeddings);
    try {
        (void)parse_hf_config(R"({"model_type": "llama", "hidden_size": 16})", "cfg");
        FAIL() << "no error";
    } catch (const std::runtime_error& e) {
        EXPECT_TRUE(contains(e.what(), {"cfg", "intermediate_size"}));
    }
    try {
        (void)parse_hf_config(std::string(100000, '['), "deep");
        FAIL() << "no error";
    } catch (const std::runtime_error& e) {
        EXPECT_TRUE(contains(e.what(), {"deep", "nested deeper"}));
    }
}

TEST(HfLoad, GPT2WithoutPrefixOrHeadOrBuffersGivesSameLogits) {
    TempDir tmp;
    SafetensorsReadOptions ro;
    ro.skip = [](std::string_view n) { return n.ends_with(".attn.bias") || n.ends_with(".attn.masked_bias"); };
    const WeightMap src = load_safetensors(fixture("hf_gpt2") / "model.safetensors", ro);
    WeightMap plain;  // GPT2Model.save_pretrained: no prefix, no lm_head
    for (const auto& [name, t] : src)
        if (name != "lm_head.weight") plain[name.substr(std::string("transformer.").size())] = t;
    ASSERT_TRUE(plain.count("h.0.attn.c_attn.bias"));
    save_safetensors(tmp.path / "model.safetensors", plain);
    fs::copy_file(fixture("hf_gpt2") / "config.json", tmp.path / "config.json");
    const std::vector<int> ids = {5, 6, 7, 299, 0};
    const auto a = forward(*load_hf_model(fixture("hf_gpt2")), ids, {});
    const auto b = forward(*load_hf_model(tmp.path), ids, {});
    EXPECT_ALLCLOSE(b.logits, a.logits, 0.0f, 0.0f);
}

// --- malformed folders --------------------------------------------------------------------------------------------
TEST(HfLoadErrors, MissingShardNamesTheFile) {
    TempDir tmp;
    copy_fixture("hf_qwen2", tmp.path);
    fs::remove(tmp.path / "model-00002-of-00002.safetensors");
    EXPECT_TRUE(contains(load_error(tmp.path), {"model-00002-of-00002.safetensors", "missing"}));
    // Without the index, numbered shards are still checked for completeness.
    fs::remove(tmp.path / "model.safetensors.index.json");
    EXPECT_TRUE(contains(load_error(tmp.path), {"model-00002-of-00002.safetensors", "missing"}));
}

TEST(HfLoadErrors, IndexPointingAtMissingFile) {
    TempDir tmp;
    copy_fixture("hf_qwen2", tmp.path);
    json idx = read_json(tmp.path / "model.safetensors.index.json");
    idx["weight_map"]["model.norm.weight"] = "model-00003-of-00003.safetensors";
    write_json(tmp.path / "model.safetensors.index.json", idx);
    EXPECT_TRUE(contains(load_error(tmp.path), {"model-00003-of-00003.safetensors", "model.norm.weight"}));
}

TEST(HfLoadErrors, IndexDisagreesWithShardContents) {
    TempDir tmp;
    copy_fixture("hf_qwen2", tmp.path);
    json idx = read_json(tmp.path / "model.safetensors.index.json");
    idx["weight_map"]["model.norm.weight"] = "model-00001-of-00002.safetensors";
    write_json(tmp.path / "model.safetensors.index.json", idx);
    EXPECT_TRUE(contains(load_error(tmp.path), {"model.norm.weight", "index"}));
}

/// Rewrites hf_llama's weights (F32) with `edit` applied.
template <typename Edit>
void llama_variant(const fs::path& dst, Edit edit) {
    copy_fixture("hf_llama", dst);
    WeightMap w = load_safetensors(dst / "model.safetensors");
    edit(w);
    save_safetensors(dst / "model.safetensors", w, {{"format", "pt"}});
}

TEST(HfLoadErrors, WrongShapeNamesTensorExpectedAndFound) {
    TempDir tmp;
    llama_variant(tmp.path, [](WeightMap& w) { w["model.layers.1.self_attn.k_proj.weight"] = Tensor({8, 32}); });
    EXPECT_TRUE(contains(load_error(tmp.path), {"model.layers.1.self_attn.k_proj.weight", "(8, 32)", "(16, 32)"}));
}

TEST(HfLoadErrors, MissingTensorIsNamed) {
    TempDir tmp;
    llama_variant(tmp.path, [](WeightMap& w) { w.erase("model.layers.0.mlp.gate_proj.weight"); });
    EXPECT_TRUE(contains(load_error(tmp.path), {"missing tensor 'model.layers.0.mlp.gate_proj.weight'"}));
}

TEST(HfLoadErrors, UnknownExtraTensorIsNamed) {
    TempDir tmp;
    llama_variant(tmp.path, [](WeightMap& w) { w["model.layers.0.self_attn.q_norm.weight"] = Tensor({8}); });
    EXPECT_TRUE(contains(load_error(tmp.path), {"unexpected tensor 'model.layers.0.self_attn.q_norm.weight'"}));
}

TEST(HfLoadErrors, TiedHeadThatDiffersFromEmbeddings) {
    TempDir tmp;
    copy_fixture("hf_llama", tmp.path);
    json cfg = read_json(tmp.path / "config.json");
    cfg["tie_word_embeddings"] = true;
    write_json(tmp.path / "config.json", cfg);
    EXPECT_TRUE(contains(load_error(tmp.path), {"lm_head.weight", "tie_word_embeddings"}));
}

TEST(HfLoadErrors, ConfigProblems) {
    struct Case {
        const char* key;
        json value;
        std::vector<std::string> expect;
    };
    const std::vector<Case> cases = {
        {"model_type", "xlnet", {"model_type 'xlnet'", "gpt2, llama, mistral, qwen2"}},
        {"rope_scaling", json{{"type", "linear"}, {"factor", 2.0}}, {"rope_scaling", "not supported"}},
        {"head_dim", 16, {"head_dim", "not supported"}},
        {"hidden_act", "relu", {"hidden_act 'relu'"}},
        {"num_key_value_heads", 3, {"n_kv_heads"}},
    };
    for (const Case& c : cases) {
        TempDir tmp;
        copy_fixture("hf_llama", tmp.path);
        json cfg = read_json(tmp.path / "config.json");
        cfg[c.key] = c.value;
        write_json(tmp.path / "config.json", cfg);
        const std::string msg = load_error(tmp.path);
        for (const auto& part : c.expect) EXPECT_TRUE(contains(msg, {part, "config.json"})) << c.key;
    }
}

TEST(HfLoadErrors, NoWeightsOrNoFolder) {
    TempDir tmp;
    fs::copy_file(fixture("hf_llama") / "config.json", tmp.path / "config.json");
    EXPECT_TRUE(contains(load_error(tmp.path), {"no model.safetensors"}));
    std::ofstream(tmp.path / "pytorch_model.bin") << "x";
    EXPECT_TRUE(contains(load_error(tmp.path), {"pytorch_model.bin"}));
    EXPECT_TRUE(contains(load_error(tmp.path / "nope"), {"does not exist"}));
}

// --- hub cache layout ---------------------------------------------------------------------------------------------
/// models--org--tiny-llama/{blobs/, refs/main, snapshots/<hash>/ with symlinks into blobs/}.
fs::path make_hub_entry(const fs::path& root, bool with_ref) {
    const fs::path entry = root / "models--org--tiny-llama";
    fs::create_directories(entry / "blobs");
    int blob = 0;
    for (const char* snap : {"0ld5nap", "a1b2c3d4"}) {
        const fs::path s = entry / "snapshots" / snap;
        fs::create_directories(s);
        for (const char* f : {"config.json", "model.safetensors"}) {
            const std::string b = "blob" + std::to_string(blob++);
            fs::copy_file(fixture("hf_llama") / f, entry / "blobs" / b);
            fs::create_symlink(fs::path("../../blobs") / b, s / f);
        }
    }
    // The old snapshot is older; refs/main names the new one.
    fs::last_write_time(entry / "snapshots" / "0ld5nap", fs::file_time_type::clock::now() - std::chrono::hours(24));
    if (with_ref) {
        fs::create_directories(entry / "refs");
        std::ofstream(entry / "refs" / "main") << "a1b2c3d4";
    }
    return entry;
}

TEST(HfHubCache, ResolvesSnapshotFromRefsMainOrNewest) {
    for (bool with_ref : {true, false}) {
        TempDir tmp;
        const fs::path entry = make_hub_entry(tmp.path, with_ref);
        EXPECT_EQ(resolve_model_dir(entry), entry / "snapshots" / "a1b2c3d4") << with_ref;
        const fs::path snap = entry / "snapshots" / "0ld5nap";
        EXPECT_EQ(resolve_model_dir(snap), snap);
        EXPECT_TRUE(is_hf_model_dir(entry));
        const auto m = load_hf_model(entry);
        EXPECT_EQ(m->config().name, "org/tiny-llama");
        EXPECT_EQ(m->config().n_kv_heads, 2);
    }
}

TEST(HfHubCache, BadRefAndOurOwnFolders) {
    TempDir tmp;
    const fs::path entry = make_hub_entry(tmp.path, true);
    std::ofstream(entry / "refs" / "main") << "deadbeef";
    try {
        (void)resolve_model_dir(entry);
        FAIL() << "no error";
    } catch (const std::runtime_error& e) {
        EXPECT_TRUE(contains(e.what(), {"deadbeef"}));
    }
    EXPECT_FALSE(is_hf_model_dir(tmp.path / "nothing"));
    ModelConfig c;  // our own folders have no model_type
    save_model_dir(tmp.path / "ours", Model(c, init_weights(c, 1)));
    EXPECT_FALSE(is_hf_model_dir(tmp.path / "ours"));
    EXPECT_TRUE(is_hf_model_dir(fixture("hf_gpt2")));
}

}  // namespace
}  // namespace ts

namespace ts {
namespace {

// Fidelity (#27): what transformers accepts is accepted here too. A special token id outside a small vocabulary is
// a warning (transformers loads such configs); Marian keys a config leaves out take MarianConfig's defaults (gelu,
// 1024 positions), not another family's.
TEST(HfConfigMapping, OutOfVocabTokenIdsWarnAndMarianDefaultsFollowTransformers) {
    const HfConfig l = parse_hf_config(R"({"model_type": "llama", "hidden_size": 16, "intermediate_size": 40,
        "num_hidden_layers": 1, "num_attention_heads": 4, "vocab_size": 10, "bos_token_id": 50000, "eos_token_id": 2})");
    EXPECT_EQ(l.bos_token_id, -1);
    EXPECT_EQ(l.eos_token_id, 2);
    ASSERT_EQ(l.warnings.size(), 1u);
    EXPECT_NE(l.warnings[0].find("bos_token_id 50000 is outside the vocabulary"), std::string::npos) << l.warnings[0];

    std::ifstream in(fixture("hf_marian") / "config.json");
    nlohmann::json j = nlohmann::json::parse(in);
    j.erase("activation_function");
    j.erase("max_position_embeddings");
    const HfConfig m = parse_hf_config(j.dump());
    EXPECT_EQ(m.config.activation, Activation::GELU);
    EXPECT_EQ(m.config.max_seq_len, 1024);
}

}  // namespace
}  // namespace ts

namespace ts {
namespace {

// Greedy decoding through the KV cache gives the tokens Hugging Face's own generate(max_new_tokens=5,
// do_sample=False) gives on the same checkpoints (transformers 4.42.3, eager attention, float64; recorded with
// tests/reference/check_hf_transformers.py). hf_mistral_window decodes past its 4-token window.
TEST(HfGenerate, GreedyDecodingMatchesTransformersGenerate) {
    const std::vector<int> prompt = {1, 17, 254, 3, 99, 42, 7};
    const std::vector<std::pair<const char*, std::vector<int>>> cases = {
        {"hf_mistral_window", {66, 100, 76, 66, 246}}, {"hf_mistral", {45, 3, 187, 158, 40}},
        {"hf_qwen2", {76, 76, 76, 76, 76}},             {"hf_llama", {244, 221, 244, 221, 163}}};
    for (const auto& [name, want] : cases) {
        SCOPED_TRACE(name);
        const auto model = load_hf_model(fixture(name));
        KVCache cache;
        ForwardOptions fo;
        fo.all_logits = false;
        std::vector<int> next = prompt, got;
        for (size_t step = 0; step < want.size(); ++step) {
            const ForwardResult r = forward(*model, next, fo, &cache);
            Eigen::Index best = 0;
            r.logits.row(0).maxCoeff(&best);
            got.push_back(int(best));
            next = {int(best)};
        }
        EXPECT_EQ(got, want);
    }
}

}  // namespace
}  // namespace ts
