// Model folders with tokenizers other than byte-level BPE open with them in the app: a BERT vocab.txt folder gives
// WordPiece pieces with [CLS] … [SEP] and their spans in the Tokens panel's data; a malformed tokenizer file leaves
// the model open in ids-only mode with a message naming the file.
#include "app/session/text_codec.h"
#include "app/session/worker.h"
#include "core/formats/safetensors.h"
#include "core/tokenizer/text_tokenizer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace ts::studio;

namespace {

fs::path demo_folder(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("ts_app_tok_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    ts::save_model_dir(d, *make_demo_model().model);  // vocabulary of 256
    return d;
}

TEST(TokenizerFolders, VocabTxtFolderGivesWordPiecePiecesAndSpans) {
    const fs::path dir = demo_folder("bert");
    std::ofstream(dir / "vocab.txt") << "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\ncafe\n##s\n,\n";
    const LoadedModel lm = load_model_folder(dir.string());
    ASSERT_TRUE(lm.codec);
    EXPECT_FALSE(lm.codec->ids_only());
    EXPECT_NE(lm.codec->name().find("WordPiece"), std::string::npos) << lm.codec->name();
    EXPECT_TRUE(lm.tokenizer_warning.empty()) << lm.tokenizer_warning;
    const TokenizedText t = tokenize_text("The caf\xC3\xA9s, [MASK]", *lm.codec, 64);
    ASSERT_EQ(t.ids, (std::vector<int>{2, 5, 6, 7, 8, 4, 3}));
    std::vector<std::string> labels;
    for (const auto& p : t.pieces) labels.push_back(p.label);
    EXPECT_EQ(labels, (std::vector<std::string>{"[CLS]", "the", "cafe", "##s", ",", "[MASK]", "[SEP]"}));
    EXPECT_EQ(t.pieces[2].byte_begin, 4u);  // "café" = bytes [4, 9)
    EXPECT_EQ(t.pieces[2].byte_end, 9u);
    EXPECT_EQ(t.pieces[0].byte_end, 0u);  // [CLS] has an empty span
    ASSERT_TRUE(lm.codec->text_tokenizer());
    EXPECT_EQ(lm.codec->text_tokenizer()->special_token_id("mask"), 4);
    fs::remove_all(dir);
}

TEST(TokenizerFolders, MalformedTokenizerFileKeepsTheModelOpenInIdsOnlyMode) {
    const fs::path dir = demo_folder("broken_tok");
    std::ofstream(dir / "tokenizer.model") << "not a sentencepiece model";
    const LoadedModel lm = load_model_folder(dir.string());
    ASSERT_TRUE(lm.model);
    ASSERT_TRUE(lm.codec);
    EXPECT_TRUE(lm.codec->ids_only());
    EXPECT_NE(lm.tokenizer_warning.find("tokenizer.model"), std::string::npos) << lm.tokenizer_warning;
    EXPECT_NE(lm.tokenizer_warning.find("not a SentencePiece model"), std::string::npos) << lm.tokenizer_warning;
    // invalid UTF-8 in ids-only mode: no crash, bytes as ids
    EXPECT_EQ(tokenize_text("\xFF", *lm.codec, 8).ids, (std::vector<int>{255}));
    fs::remove_all(dir);
}

}  // namespace

namespace {

// A .gguf file opens like a folder: its model, the tokenizer in its metadata, and the file's facts for the Model
// panel (tests/golden/gguf/llama_q8_0.gguf: Q8_0 where rows allow, F16 otherwise, F32 vectors).
TEST(GgufFiles, OpenWithTheirTokenizerAndFacts) {
    const std::string path = std::string(TS_GOLDEN_DIR) + "/gguf/llama_q8_0.gguf";
    const LoadedModel lm = load_model_folder(path);
    ASSERT_TRUE(lm.model);
    EXPECT_EQ(lm.display_name, "llama_q8_0.gguf");
    EXPECT_TRUE(lm.tokenizer_warning.empty()) << lm.tokenizer_warning;
    ASSERT_TRUE(lm.codec);
    EXPECT_FALSE(lm.codec->ids_only());
    const TokenizedText t = tokenize_text("hi there", *lm.codec, 64);
    EXPECT_EQ(t.ids, (std::vector<int>{'h', 'i', ' ', 't', 'h', 'e', 'r', 'e'}));  // byte-level, no merges
    ASSERT_TRUE(lm.gguf);
    EXPECT_EQ(lm.gguf->version, 3u);
    ASSERT_FALSE(lm.gguf->types.empty());
    // Most tensors first: 14 Q8_0 matrices (embeddings, output, 6 per layer), 5 F32 norms, 2 F16 ffn_down (rows of 88 values: not whole Q8_0 blocks).
    const std::vector<std::pair<std::string, int>> want{{"Q8_0", 14}, {"F32", 5}, {"F16", 2}};
    EXPECT_EQ(lm.gguf->types, want);
    EXPECT_GT(lm.gguf->bits_per_weight, 8.0);
    EXPECT_LT(lm.gguf->bits_per_weight, 17.0);
    // Neither folder nor GGUF: one line that says so.
    const fs::path txt = fs::temp_directory_path() / ("ts_app_not_gguf_" + std::to_string(::getpid()) + ".gguf");
    std::ofstream(txt) << "not a model";
    try {
        (void)load_model_folder(txt.string());
        ADD_FAILURE() << "loaded a text file";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("is neither a model folder nor a GGUF file"), std::string::npos) << e.what();
    }
    fs::remove(txt);
}

}  // namespace

namespace {

// An Ollama name opens the GGUF blob its manifest names ($OLLAMA_MODELS points at a store built here).
TEST(GgufFiles, OllamaNamesOpenTheirBlob) {
    const fs::path store = fs::temp_directory_path() / ("ts_app_ollama_" + std::to_string(::getpid()));
    fs::remove_all(store);
    const std::string digest(64, 'a');
    fs::create_directories(store / "blobs");
    fs::create_directories(store / "manifests/registry.ollama.ai/library/tiny");
    fs::copy_file(std::string(TS_GOLDEN_DIR) + "/gguf/llama_q4_0.gguf", store / "blobs" / ("sha256-" + digest));
    std::ofstream(store / "manifests/registry.ollama.ai/library/tiny/q4")
        << R"({"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:)" << digest << R"("}]})";
    ::setenv("OLLAMA_MODELS", store.c_str(), 1);
    const LoadedModel lm = load_model_folder("tiny:q4");
    EXPECT_EQ(lm.display_name, "tiny:q4 (Ollama)");
    EXPECT_EQ(lm.path, "tiny:q4");
    ASSERT_TRUE(lm.gguf);
    EXPECT_EQ(lm.model->config().n_layers, 2);
    try {
        (void)load_model_folder("tiny:q5");  // no such tag, and no such path
        ADD_FAILURE() << "loaded a missing tag";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("'tiny:q5' does not exist"), std::string::npos) << e.what();
    }
    ::unsetenv("OLLAMA_MODELS");
    fs::remove_all(store);
}

}  // namespace
