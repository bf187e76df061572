// `transformer-studio trace` selections (#30): --only / --exclude / --layers write exactly the chosen names with the
// values of a full trace, --head writes one head of an attention entry equal to its slice of the whole entry, and the
// streamed file reads back bit for bit. Runs the CLI binary (TS_CLI_BIN) on tests/golden/hf_gpt2.
#include "core/formats/safetensors.h"

#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

namespace ts {
namespace {

namespace fs = std::filesystem;

fs::path out_dir() {
    const fs::path d = fs::temp_directory_path() / ("ts_trace_cli_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
}

// Runs the CLI with `args`; returns its exit status.
int run_cli(const std::string& args) {
    const std::string cmd = std::string(TS_CLI_BIN) + " trace --model " + test::golden_path("hf_gpt2") + " " + args +
                            " 2>/dev/null";
    return std::system(cmd.c_str());
}

TEST(TraceCli, SelectionsAndOneHeadEqualTheFullTrace) {
    const fs::path d = out_dir();
    const std::string ids = "--ids 3,1,4,1,5,9,2,6";
    ASSERT_EQ(run_cli(ids + " --out " + (d / "full.safetensors").string()), 0);
    ASSERT_EQ(run_cli(ids + " --only dec.1. --exclude '*.scores*' --head dec.0.attn.probs:1 --out " +
                      (d / "some.safetensors").string()),
              0);
    ASSERT_EQ(run_cli(ids + " --layers 1 --only '*resid*,logits,embed.out' --out " + (d / "layer.safetensors").string()),
              0);
    const WeightMap full = load_safetensors(d / "full.safetensors");
    const WeightMap some = load_safetensors(d / "some.safetensors");
    const WeightMap layer = load_safetensors(d / "layer.safetensors");
    ASSERT_TRUE(full.count("dec.1.attn.probs"));

    // --only dec.1. --exclude '*.scores*': every dec.1 name but the scores, and the one extra head.
    size_t expected = 0;
    for (const auto& [name, t] : full) {
        if (name == "input_ids") continue;
        const bool want = name.rfind("dec.1.", 0) == 0 && name.find(".scores") == std::string::npos;
        expected += want;
        EXPECT_EQ(some.count(name), size_t(want)) << name;
        if (want && some.count(name)) EXPECT_EQ(some.at(name).data, t.data) << name;
    }
    EXPECT_EQ(some.size(), expected + 2);  // + dec.0.attn.probs.head1 + input_ids
    ASSERT_TRUE(some.count("dec.0.attn.probs.head1"));
    const Tensor& head = some.at("dec.0.attn.probs.head1");
    const Tensor& probs = full.at("dec.0.attn.probs");
    const int64_t T = probs.dim(1), S = probs.dim(2);
    ASSERT_EQ(head.shape, (std::vector<int64_t>{T, S}));
    for (int64_t i = 0; i < T * S; ++i) ASSERT_EQ(head.data[size_t(i)], probs.data[size_t(T * S + i)]) << i;

    // --layers 1 with globs: layer 1's residuals, and the names outside the layers that match.
    for (const auto& [name, t] : layer) {
        if (name == "input_ids") continue;
        EXPECT_TRUE(name == "logits" || name == "embed.out" || name.rfind("dec.1.resid", 0) == 0) << name;
        EXPECT_EQ(t.data, full.at(name).data) << name;
    }
    EXPECT_TRUE(layer.count("dec.1.resid_ffn"));
    EXPECT_FALSE(layer.count("dec.0.resid_ffn"));
    EXPECT_TRUE(layer.count("logits"));
    fs::remove_all(d);
}

TEST(SafetensorsStreamed, AWriterThatGivesTheWrongCountLeavesNoFile) {
    const fs::path d = out_dir();
    std::map<std::string, StreamedTensor> t;
    t.emplace("a", StreamedTensor{{2, 3}, [](const auto& put) {
                                      const float v[5] = {1, 2, 3, 4, 5};
                                      put(v, 5);
                                  }});
    try {
        save_safetensors_streamed(d / "bad.safetensors", t);
        ADD_FAILURE() << "no error for 5 values of a (2, 3) tensor";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("tensor 'a' gave 5 values for 6"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(d / "bad.safetensors"));
    for (const auto& entry : fs::directory_iterator(d)) ADD_FAILURE() << "left behind: " << entry.path();
    fs::remove_all(d);
}

}  // namespace
}  // namespace ts
