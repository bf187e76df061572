// Files that should never be accepted, at the model level: a config.json whose sizes the safetensors header does
// not back (absurd d_model, vocab_size, n_layers) is refused before decoding, naming the field or the tensor with
// the expected and found shapes; weights holding NaN/±Inf open, with a warning naming the tensor. Our own folders
// (load_model_dir) and Hugging Face ones (load_hf_model).
#include "core/formats/hf_checkpoint.h"
#include "core/formats/safetensors.h"
#include "tests/test_util.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>

namespace ts {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// A temporary folder for this file's checkpoints (tests/test_util.h).
struct TempDir : test::TempDir {
    TempDir() : test::TempDir("ts_model_dir_test") {}
};

ModelConfig tiny_config() {
    ModelConfig c;
    c.name = "tiny";
    c.vocab_size = 16;
    c.d_model = 8;
    c.n_heads = 2;
    c.n_kv_heads = 2;
    c.d_ff = 16;
    c.n_layers = 2;
    c.max_seq_len = 8;
    return c;
}

json read_json(const fs::path& p) {
    std::ifstream in(p);
    return json::parse(in);
}
void write_json(const fs::path& p, const json& j) { std::ofstream(p) << j.dump(2); }

/// Writes a tiny model folder, then overwrites config.json keys with `edits`.
fs::path tiny_folder(const fs::path& dir, const json& edits = json::object()) {
    const ModelConfig c = tiny_config();
    save_model_dir(dir, Model(c, init_weights(c, 3)));
    json cfg = read_json(dir / "config.json");
    for (const auto& [k, v] : edits.items()) cfg[k] = v;
    write_json(dir / "config.json", cfg);
    return dir;
}

std::string load_error(const fs::path& dir) { return test::error_of([&] { (void)load_model_dir(dir); }); }

std::string hf_load_error(const fs::path& dir) { return test::error_of([&] { (void)load_hf_model(dir); }); }

using test::contains;

// --- absurd configs -----------------------------------------------------------------------------------------------

TEST(ModelDirSizes, AbsurdConfigIsRefusedNamingTheField) {
    TempDir tmp;
    tiny_folder(tmp.path, {{"d_model", 1000000000}});
    EXPECT_TRUE(contains(load_error(tmp.path), {"config.json", "d_model (1000000000) exceeds the limit"}));
    tiny_folder(tmp.path, {{"vocab_size", int64_t(1) << 40}});
    EXPECT_TRUE(contains(load_error(tmp.path), {"config.json", "vocab_size", "1099511627776"}));
    tiny_folder(tmp.path, {{"n_layers", 100000}});
    EXPECT_TRUE(contains(load_error(tmp.path), {"config.json", "n_layers (100000) exceeds the limit"}));
    tiny_folder(tmp.path, {{"d_ff", 1 << 30}});
    EXPECT_TRUE(contains(load_error(tmp.path), {"config.json", "d_ff (1073741824) exceeds the limit"}));
}

TEST(ModelDirSizes, ConfigTheFileDoesNotBackNamesTensorExpectedAndFound) {
    TempDir tmp;
    // Valid on its own (about 1e11 parameters), but the file holds a d_model = 8 model.
    tiny_folder(tmp.path, {{"d_model", 65536}});
    EXPECT_TRUE(contains(load_error(tmp.path), {"model.safetensors", "weight 'tok_emb.weight'", "shape (16, 8)",
                                                "config.json implies (16, 65536)"}));
    tiny_folder(tmp.path, {{"n_layers", 10000}});
    EXPECT_TRUE(contains(load_error(tmp.path), {"missing weight 'dec.2.attn_norm.weight'", "(8)"}));
    tiny_folder(tmp.path, {{"n_layers", 1}});
    EXPECT_TRUE(contains(load_error(tmp.path), {"unexpected weight 'dec.1."}));
}

TEST(ModelDirSizes, SizeCheckRunsBeforeAnyTensorIsDecoded) {
    // The file's tok_emb.weight is stored as I32, which the decoder refuses; with a config that disagrees with the
    // header, the size mismatch must be what is reported: it was found from the header alone.
    TempDir tmp;
    tiny_folder(tmp.path, {{"vocab_size", 4096}});
    const fs::path st = tmp.path / "model.safetensors";
    std::ifstream in(st, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    const size_t at = bytes.find(R"("tok_emb.weight":{)");
    ASSERT_NE(at, std::string::npos);
    bytes.replace(bytes.find("F32", at), 3, "I32");
    std::ofstream(st, std::ios::binary | std::ios::trunc) << bytes;
    EXPECT_TRUE(contains(load_error(tmp.path), {"tok_emb.weight", "config.json implies (4096, 8)"}));
    tiny_folder(tmp.path);
    std::ofstream(st, std::ios::binary | std::ios::trunc) << bytes;
    EXPECT_TRUE(contains(load_error(tmp.path), {"tok_emb.weight", "unsupported dtype I32"}));
}

TEST(HfSizes, AbsurdOrUnbackedConfigIsRefusedBeforeDecoding) {
    struct Case {
        const char* key;
        json value;
        std::vector<std::string> expect;
    };
    const std::vector<Case> cases = {
        {"hidden_size", 1000000000, {"config.json", "d_model (1000000000) exceeds the limit"}},
        {"vocab_size", int64_t(1) << 40, {"config.json", "vocab_size", "1099511627776"}},
        {"num_hidden_layers", 100000, {"config.json", "n_layers (100000) exceeds the limit"}},
        {"intermediate_size", 1000000, {"tensor 'model.layers.0.mlp.", "1000000", "from config.json"}},
        {"hidden_size", 65536, {"model.safetensors", "expected", "65536", "from config.json"}},
        {"num_hidden_layers", 5000, {"missing tensor 'model.layers.", "required by config.json"}},
    };
    for (const Case& c : cases) {
        TempDir tmp;
        for (const auto& e : fs::directory_iterator(test::golden_path("hf_llama")))
            if (e.path().filename() != "expected.safetensors") fs::copy_file(e.path(), tmp.path / e.path().filename());
        json cfg = read_json(tmp.path / "config.json");
        cfg[c.key] = c.value;
        write_json(tmp.path / "config.json", cfg);
        const std::string msg = hf_load_error(tmp.path);
        for (const auto& part : c.expect) EXPECT_TRUE(contains(msg, {part})) << c.key;
    }
}

// --- non-finite weights -------------------------------------------------------------------------------------------

TEST(ModelDirNonfinite, NaNWeightLoadsWithAWarningNamingTheTensor) {
    TempDir tmp;
    const ModelConfig c = tiny_config();
    WeightMap w = init_weights(c, 3);
    w.at("dec.1.ffn.w_up").data[5] = NAN;
    w.at("dec.1.ffn.w_up").data[7] = INFINITY;
    save_model_dir(tmp.path, Model(c, std::move(w)));
    const auto m = load_model_dir(tmp.path);
    ASSERT_EQ(m->weight_warnings().size(), 1u);
    EXPECT_TRUE(contains(m->weight_warnings()[0], {"model.safetensors", "tensor 'dec.1.ffn.w_up'", "(16, 8)",
                                                   "2 non-finite values", "1 NaN", "1 +Inf", "flat index 5"}));
    EXPECT_TRUE(std::isnan(m->weight("dec.1.ffn.w_up").data[5]));
    const ForwardResult r = forward(*m, {1, 2, 3}, {});  // opens and runs; the NaN spreads as it should
    EXPECT_EQ(r.logits.rows(), 3);
    EXPECT_TRUE(std::isnan(r.logits(0, 0)));

    // A clean folder has no warnings.
    TempDir clean;
    tiny_folder(clean.path);
    EXPECT_TRUE(load_model_dir(clean.path)->weight_warnings().empty());
}

TEST(HfNonfinite, WarningUsesTheCheckpointsTensorName) {
    TempDir tmp;
    for (const auto& e : fs::directory_iterator(test::golden_path("hf_llama")))
        if (e.path().filename() != "expected.safetensors") fs::copy_file(e.path(), tmp.path / e.path().filename());
    WeightMap w = load_safetensors(tmp.path / "model.safetensors");
    w.at("model.layers.0.self_attn.q_proj.weight").data[0] = -INFINITY;
    save_safetensors(tmp.path / "model.safetensors", w, {{"format", "pt"}});
    const auto m = load_hf_model(tmp.path);
    ASSERT_EQ(m->weight_warnings().size(), 1u);
    EXPECT_TRUE(contains(m->weight_warnings()[0],
                         {"tensor 'model.layers.0.self_attn.q_proj.weight'", "1 -Inf", "flat index 0"}));
    EXPECT_TRUE(load_hf_model(test::golden_path("hf_llama"))->weight_warnings().empty());
}

}  // namespace
}  // namespace ts
