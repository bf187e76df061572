// Model folders with tokenizers other than byte-level BPE open with them in the app: a BERT vocab.txt folder gives
// WordPiece pieces with [CLS] … [SEP] and their spans in the Tokens panel's data; a malformed tokenizer file leaves
// the model open in ids-only mode with a message naming the file.
#include "app/session/text_codec.h"
#include "app/session/worker.h"
#include "core/safetensors.h"
#include "core/tokenizer/text_tokenizer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace ts::ui;

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
