// tokenizer.json pipelines beyond byte-level BPE and BERT's vocab.txt, on hand-built tiny vocabularies whose ids
// (and spans, and decodes) are worked out by hand in the comments. Also folder discovery and error messages.
#include "core/tokenizer/byte_level.h"
#include "core/tokenizer/text_tokenizer.h"
#include "tests/test_util.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

namespace ts {
namespace {

using nlohmann::json;
using Ids = std::vector<int32_t>;
using Spans = std::vector<std::pair<size_t, size_t>>;

const std::string kMeta = "\xE2\x96\x81";  // ▁

Spans byte_spans(const TextEncoding& e) {
    Spans s;
    for (const auto& t : e.spans) s.emplace_back(t.byte_begin, t.byte_end);
    return s;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}

void write(const std::filesystem::path& p, const std::string& text) {
    std::ofstream f(p, std::ios::binary);
    f << text;
}

// Llama-2 style: BPE with byte fallback, normalizer Prepend("▁") + Replace(" " -> "▁"), no pre-tokenizer,
// <s> template, decoder Replace/ByteFallback/Fuse/Strip.
json llama_style_json() {
    json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}, {"<0xE4>", 3}, {"<0xB8>", 4}, {"<0xAD>", 5},
                  {kMeta, 6},   {"h", 7},   {"i", 8},    {kMeta + "h", 9}, {"hi", 10}, {kMeta + "hi", 11}, {"!", 12}};
    json j;
    j["added_tokens"] = json::array({{{"id", 0}, {"content", "<unk>"}, {"special", true}},
                                     {{"id", 1}, {"content", "<s>"}, {"special", true}},
                                     {{"id", 2}, {"content", "</s>"}, {"special", true}}});
    j["normalizer"] = {{"type", "Sequence"},
                       {"normalizers", json::array({{{"type", "Prepend"}, {"prepend", kMeta}},
                                                    {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kMeta}}})}};
    j["pre_tokenizer"] = nullptr;
    j["post_processor"] = {
        {"type", "TemplateProcessing"},
        {"single", json::array({{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
        {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}};
    j["decoder"] = {{"type", "Sequence"},
                    {"decoders", json::array({{{"type", "Replace"}, {"pattern", {{"String", kMeta}}}, {"content", " "}},
                                              {{"type", "ByteFallback"}},
                                              {{"type", "Fuse"}},
                                              {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}})}};
    j["model"] = {{"type", "BPE"},         {"byte_fallback", true},
                  {"fuse_unk", true},      {"unk_token", "<unk>"},
                  {"vocab", vocab},        {"merges", json::array({kMeta + " h", "h i", kMeta + "h i"})}};
    return j;
}

TEST(PipelineBpeByteFallback, LlamaStyleIdsSpansAndDecodeByHand) {
    const auto tok = parse_hf_tokenizer_json(llama_style_json().dump());
    // "hi hi!中" -> normalized "▁hi▁hi!中"; symbols ▁ h i ▁ h i ! and 中 (not in vocab) as bytes E4 B8 AD.
    // Merges by rank: "▁ h" (both), then "▁h i" (both) -> ▁hi ▁hi ! <0xE4> <0xB8> <0xAD>, after <s>.
    const std::string text = "hi hi!\xE4\xB8\xAD";
    const TextEncoding e = tok->encode(text);
    EXPECT_EQ(e.ids, (Ids{1, 11, 11, 12, 3, 4, 5}));
    EXPECT_EQ(e.pieces[1], kMeta + "hi");
    // <s> empty at 0; the prepended ▁ is zero-width, so ▁hi = "hi" [0,2); the second ▁ is the space: [2,5);
    // byte-fallback tokens of the unchanged 中 get one byte each.
    EXPECT_EQ(byte_spans(e), (Spans{{0, 0}, {0, 2}, {2, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 9}}));
    EXPECT_EQ(e.spans[4].char_begin, 6u);
    EXPECT_EQ(e.spans[6].char_end, 7u);
    EXPECT_EQ(e.special, (std::vector<char>{1, 0, 0, 0, 0, 0, 0}));
    EXPECT_EQ(tok->encode(text, false).ids, (Ids{11, 11, 12, 3, 4, 5}));
    // decode: " hi" " hi" "!" + bytes E4 B8 AD -> "中", fused, one leading space stripped
    EXPECT_EQ(tok->decode(Ids{11, 11, 12, 3, 4, 5}), text);
    EXPECT_EQ(tok->decode(Ids{1, 11}, /*skip_special_tokens=*/true), "hi");
    EXPECT_EQ(tok->decode(Ids{1, 11}), "<s> hi");
    // an incomplete byte sequence decodes to U+FFFD per byte (HF's ByteFallback decoder)
    EXPECT_EQ(tok->decode(Ids{3, 4}), "\xEF\xBF\xBD\xEF\xBF\xBD");
    // added tokens are cut out before normalization: "<s>hi" -> <s> <s> then "hi" normalized alone -> ▁hi
    EXPECT_EQ(tok->encode("<s>hi").ids, (Ids{1, 1, 11}));
    EXPECT_EQ(tok->special_token_id("bos"), 1);
    EXPECT_EQ(tok->special_token_id("eos"), 2);
    EXPECT_EQ(tok->special_token_id("unk"), 0);
    EXPECT_THROW((void)tok->decode(Ids{99}), std::out_of_range);
}

// Newer Llama conversions (legacy=False): no normalizer, Metaspace pre-tokenizer with prepend_scheme "first" and
// split false: "▁" goes only before text that starts the input, so "<s>hi" gives <s> "hi" (not "▁hi").
TEST(PipelineBpeByteFallback, MetaspaceFirstPrependsOnlyAtTheStartOfTheInput) {
    json j = llama_style_json();
    j["normalizer"] = nullptr;
    j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", kMeta}, {"prepend_scheme", "first"}, {"split", false}};
    j["decoder"] = {{"type", "Sequence"},
                    {"decoders", json::array({{{"type", "ByteFallback"}},
                                              {{"type", "Metaspace"}, {"replacement", kMeta}, {"prepend_scheme", "first"}}})}};
    const auto tok = parse_hf_tokenizer_json(j.dump());
    EXPECT_EQ(tok->encode("hi hi!\xE4\xB8\xAD").ids, (Ids{1, 11, 11, 12, 3, 4, 5}));
    EXPECT_EQ(tok->encode("<s>hi", false).ids, (Ids{1, 10}));
    EXPECT_EQ(tok->decode(Ids{11, 11, 12, 3, 4, 5}), "hi hi!\xE4\xB8\xAD");
}

TEST(PipelineBpeByteFallback, UnknownCharacterWithoutByteTokenIsUnk) {
    json j = llama_style_json();
    // "é" (C3 A9): no byte tokens for C3/A9 -> <unk>; two unknown characters in a row fuse (fuse_unk)
    const auto tok = parse_hf_tokenizer_json(j.dump());
    EXPECT_EQ(tok->encode("hi\xC3\xA9\xC3\xA9", false).ids, (Ids{11, 0}));
}

// T5 style: Unigram over Metaspace pieces, Viterbi on the scores.
json unigram_json() {
    json j;
    j["model"] = {{"type", "Unigram"},
                  {"unk_id", 0},
                  {"vocab", json::array({json::array({"<unk>", 0.0}), json::array({kMeta, -2.0}), json::array({"a", -3.0}),
                                         json::array({"b", -3.0}), json::array({"ab", -4.0}), json::array({kMeta + "ab", -4.5}),
                                         json::array({"c", -5.0}), json::array({"</s>", 0.0})})}};
    j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", kMeta}, {"prepend_scheme", "always"}, {"split", true}};
    j["post_processor"] = {
        {"type", "TemplateProcessing"},
        {"single", json::array({{{"Sequence", {{"id", "A"}, {"type_id", 0}}}}, {{"SpecialToken", {{"id", "</s>"}, {"type_id", 0}}}}})},
        {"special_tokens", {{"</s>", {{"id", "</s>"}, {"ids", {7}}, {"tokens", {"</s>"}}}}}}};
    j["decoder"] = {{"type", "Metaspace"}, {"replacement", kMeta}, {"prepend_scheme", "always"}, {"split", true}};
    j["added_tokens"] = json::array({{{"id", 7}, {"content", "</s>"}, {"special", true}}});
    return j;
}

TEST(PipelineUnigram, ViterbiByHand) {
    const auto tok = parse_hf_tokenizer_json(unigram_json().dump());
    // "ab abc" -> "▁ab" "▁abc". "▁ab": ▁ab -4.5 beats ▁+ab -6 and ▁+a+b -8. "▁abc": ▁ab+c -9.5 beats ▁+ab+c -11.
    EXPECT_EQ(tok->encode("ab abc").ids, (Ids{5, 5, 6, 7}));
    // "d" is unknown: unk score = min score (-5) - 10 = -15 -> "▁ab" + <unk>
    const TextEncoding e = tok->encode("ab abd", false);
    EXPECT_EQ(e.ids, (Ids{5, 5, 0}));
    EXPECT_EQ(byte_spans(e), (Spans{{0, 2}, {2, 5}, {5, 6}}));
    EXPECT_EQ(tok->decode(Ids{5, 5, 6}), "ab abc");
    EXPECT_EQ(tok->special_token_id("eos"), 7);
}

// BERT: BertNormalizer (lower-case, strip accents, CJK spacing, control cleanup), BertPreTokenizer, WordPiece,
// [CLS] … [SEP].
const std::vector<std::string> kBertVocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the",  "cafe", "##s",
                                             "un",    "##aff", "##able", ",",    "\xE4\xB8\xAD", "!", "."};

json bert_json() {
    json vocab = json::object();
    for (size_t i = 0; i < kBertVocab.size(); ++i) vocab[kBertVocab[i]] = i;
    json j;
    j["added_tokens"] = json::array();
    for (int i = 0; i < 5; ++i) j["added_tokens"].push_back({{"id", i}, {"content", kBertVocab[size_t(i)]}, {"special", true}});
    j["normalizer"] = {{"type", "BertNormalizer"}, {"clean_text", true}, {"handle_chinese_chars", true},
                       {"strip_accents", nullptr}, {"lowercase", true}};
    j["pre_tokenizer"] = {{"type", "BertPreTokenizer"}};
    j["post_processor"] = {{"type", "BertProcessing"}, {"sep", {"[SEP]", 3}}, {"cls", {"[CLS]", 2}}};
    j["decoder"] = {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}};
    j["model"] = {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"continuing_subword_prefix", "##"},
                  {"max_input_chars_per_word", 100}, {"vocab", vocab}};
    return j;
}

void check_bert(const TextTokenizer& tok) {
    // "The Cafés, UNAFFABLE 中!" -> "the cafes, unaffable  中 !" -> the | cafes | , | unaffable | 中 | !
    // cafes = cafe ##s; unaffable = un ##aff ##able (greedy longest match first)
    const std::string text = "The Caf\xC3\xA9s,\x01 UNAFFABLE \xE4\xB8\xAD!";
    const TextEncoding e = tok.encode(text);
    EXPECT_EQ(e.ids, (Ids{2, 5, 6, 7, 11, 8, 9, 10, 12, 13, 3}));
    // bytes: The[0,3) Cafés: C4 a5 f6 é7-8 s9 ,10 \x01 11 ' '12 UNAFFABLE[13,22) ' '22 中[23,26) ![26,27)
    EXPECT_EQ(byte_spans(e), (Spans{{0, 0}, {0, 3}, {4, 9}, {9, 10}, {10, 11}, {13, 15}, {15, 18}, {18, 22}, {23, 26},
                                    {26, 27}, {27, 27}}));
    EXPECT_EQ(e.spans[2].char_end, 8u);  // "Café" ends at character 8 (é is one character)
    // decode: "##" pieces join, others get a space; cleanup removes the space before "," and "!"
    EXPECT_EQ(tok.decode(Ids{5, 6, 7, 11, 8, 9, 10, 12, 13}), "the cafes, unaffable \xE4\xB8\xAD!");
    EXPECT_EQ(tok.decode(Ids{2, 5, 3}, true), "the");
    // [MASK] is an added token, matched before normalization
    EXPECT_EQ(tok.encode("the [MASK].").ids, (Ids{2, 5, 4, 14, 3}));
    EXPECT_EQ(tok.special_token_id("mask"), 4);
    EXPECT_EQ(tok.special_token_id("cls"), 2);
    EXPECT_EQ(tok.special_token_id("sep"), 3);
    // a word with no piece at all -> one [UNK] for the whole word
    EXPECT_EQ(tok.encode("xyz", false).ids, (Ids{1}));
}

TEST(PipelineWordPiece, BertTokenizerJsonByHand) { check_bert(*parse_hf_tokenizer_json(bert_json().dump())); }

TEST(PipelineWordPiece, VocabTxtFolderAndDoLowerCase) {
    test::TempDir dir("ts_vocab_txt");
    std::string lines;
    for (const auto& t : kBertVocab) lines += t + "\n";
    write(dir.path / "vocab.txt", lines);
    const auto tok = find_text_tokenizer(dir.path.string());
    ASSERT_TRUE(tok);
    check_bert(*tok);
    // do_lower_case false: "The" is not in the vocabulary
    write(dir.path / "tokenizer_config.json", R"({"do_lower_case": false, "mask_token": "[MASK]"})");
    EXPECT_EQ(find_text_tokenizer(dir.path.string())->encode("The the", false).ids, (Ids{1, 5}));
}

TEST(PipelineFolders, TokenizerJsonIsPreferredOverTokenizerModel) {
    test::TempDir dir("ts_prefer_json");
    write(dir.path / "tokenizer.json", llama_style_json().dump());
    write(dir.path / "tokenizer.model", "this is not a sentencepiece model");
    const auto tok = find_text_tokenizer(dir.path.string());
    ASSERT_TRUE(tok);
    EXPECT_EQ(tok->encode("hi").ids, (Ids{1, 11}));
    // without tokenizer.json the broken .model is read, and the error names it
    std::filesystem::remove(dir.path / "tokenizer.json");
    const std::string err = error_of([&] { (void)find_text_tokenizer(dir.path.string()); });
    EXPECT_NE(err.find("tokenizer.model"), std::string::npos) << err;
    EXPECT_NE(err.find("not a SentencePiece model"), std::string::npos) << err;
    std::filesystem::remove(dir.path / "tokenizer.model");
    EXPECT_EQ(find_text_tokenizer(dir.path.string()), nullptr);
    EXPECT_THROW((void)load_text_tokenizer(dir.path.string()), std::runtime_error);
}

TEST(PipelineErrors, MessagesNameTheFileAndWhatIsWrong) {
    const auto err = [](json j) { return error_of([&] { (void)parse_hf_tokenizer_json(j.dump(), "m/tokenizer.json"); }); };
    EXPECT_NE(error_of([] { (void)parse_hf_tokenizer_json("{\"model\": ", "m/tokenizer.json"); }).find("m/tokenizer.json: line 1, column"),
              std::string::npos);
    json j = llama_style_json();
    j["normalizer"] = {{"type", "Frobnicate"}};
    EXPECT_NE(err(j).find("m/tokenizer.json: normalizer.type: normalizer \"Frobnicate\" is not supported"), std::string::npos)
        << err(j);
    j = llama_style_json();
    j["model"]["merges"].push_back("x y");
    EXPECT_NE(err(j).find("model.merges[3]: \"x\" is not in model.vocab"), std::string::npos) << err(j);
    j = llama_style_json();
    j["model"]["type"] = "Tree";
    EXPECT_NE(err(j).find("model.type"), std::string::npos) << err(j);
    j = unigram_json();
    j["model"]["vocab"][2] = "a";
    EXPECT_NE(err(j).find("model.vocab[2]: expected [piece, score]"), std::string::npos) << err(j);
    j = bert_json();
    j["post_processor"] = {{"type", "BertProcessing"}, {"sep", {"[SEP]", 3}}, {"cls", 2}};
    EXPECT_NE(err(j).find("post_processor.cls: expected [\"token\", id]"), std::string::npos) << err(j);
    EXPECT_NE(error_of([] { (void)parse_wordpiece_vocab_txt("a\nb\n", true, "d/vocab.txt"); }).find("d/vocab.txt: expected the token [UNK]"),
              std::string::npos);
    EXPECT_NE(error_of([] { (void)parse_wordpiece_vocab_txt("[UNK]\n[UNK]\n", true, "d/vocab.txt"); }).find("line 2"),
              std::string::npos);
}

TEST(PipelineRobustness, InvalidUtf8AndControlCharactersNeverThrow) {
    const std::vector<std::string> texts = {"\xFF\xFE", "ab\xC3", "\xE4\xB8", std::string("a\0b", 3), "\xF0\x9F\x98", "",
                                            "   ", "\xED\xA0\x80 surrogate"};
    for (const json& j : {llama_style_json(), unigram_json(), bert_json()}) {
        const auto tok = parse_hf_tokenizer_json(j.dump());
        for (const std::string& t : texts) {
            TextEncoding e;
            ASSERT_NO_THROW(e = tok->encode(t)) << j["model"]["type"];
            ASSERT_EQ(e.ids.size(), e.spans.size());
            size_t prev = 0;
            for (const auto& s : e.spans) {
                EXPECT_LE(prev, s.byte_begin);
                EXPECT_LE(s.byte_begin, s.byte_end);
                EXPECT_LE(s.byte_end, t.size());
                prev = s.byte_end;
            }
            EXPECT_NO_THROW((void)tok->decode(e.ids));
        }
    }
    // byte fallback keeps invalid bytes as <0xXX> when the vocabulary has them
    EXPECT_EQ(parse_hf_tokenizer_json(llama_style_json().dump())->encode("\xE4", false).ids, (Ids{6, 3}));
}

// Random byte strings (fixed seed; mostly fragments of UTF-8 text, some arbitrary bytes) through every pipeline:
// no exception, spans ordered and inside the text, decode accepts what encode gave.
TEST(PipelineRobustness, RandomBytesKeepSpanInvariants) {
    const std::vector<std::string> alphabet = {"a", "b", "h", "i", " ", "  ", "\t", "\n", "!", ",", ".", "[MASK]", "<s>",
                                               "\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80", "\xCC\x81", "\xEF\xBC\xA1",
                                               "\xE2\x80\x8D", "\xE2\x96\x81", "\xFF", "\x80", "\xC3", "\x01"};
    std::mt19937 rng(1234);
    for (const json& j : {llama_style_json(), unigram_json(), bert_json()}) {
        const auto tok = parse_hf_tokenizer_json(j.dump());
        for (int n = 0; n < 300; ++n) {
            std::string t;
            const int len = int(rng() % 12);
            for (int k = 0; k < len; ++k) t += alphabet[rng() % alphabet.size()];
            TextEncoding e;
            ASSERT_NO_THROW(e = tok->encode(t)) << t;
            ASSERT_EQ(e.ids.size(), e.spans.size());
            ASSERT_EQ(e.ids.size(), e.pieces.size());
            size_t prev = 0;
            for (const auto& s : e.spans) {
                ASSERT_LE(prev, s.byte_begin) << t;
                ASSERT_LE(s.byte_begin, s.byte_end) << t;
                ASSERT_LE(s.byte_end, t.size()) << t;
                ASSERT_LE(s.char_begin, s.char_end) << t;
                prev = s.byte_end;
            }
            ASSERT_NO_THROW((void)tok->decode(e.ids)) << t;
        }
    }
}

TEST(PipelineNormalizers, NfkcAndLowercaseAndStripThroughSequence) {
    json j = bert_json();
    j["normalizer"] = {{"type", "Sequence"},
                       {"normalizers", json::array({{{"type", "NFKC"}}, {{"type", "Lowercase"}}, {{"type", "Strip"}}})}};
    j["pre_tokenizer"] = {{"type", "Whitespace"}};
    const auto tok = parse_hf_tokenizer_json(j.dump());
    // fullwidth "ＴＨＥ" -> NFKC "THE" -> "the"; its span is the three fullwidth characters (9 bytes)
    const TextEncoding e = tok->encode("  \xEF\xBC\xB4\xEF\xBC\xA8\xEF\xBC\xA5!", false);
    EXPECT_EQ(e.ids, (Ids{5, 13}));
    EXPECT_EQ(byte_spans(e), (Spans{{2, 11}, {11, 12}}));
}

}  // namespace
}  // namespace ts

namespace ts {
namespace {

// Byte-level BPE tokenizer.json (RoBERTa/BART style) goes through ts::Tokenizer and keeps its post-processor.
TEST(PipelineByteLevel, RobertaProcessingAddsBosAndEos) {
    json vocab = json::object();
    for (int b = 0; b < 256; ++b) vocab[bytes_to_byte_level(std::string(1, char(b)))] = b;
    vocab["<s>"] = 256;
    vocab["</s>"] = 257;
    json j;
    j["added_tokens"] = json::array({{{"id", 256}, {"content", "<s>"}, {"special", true}},
                                     {{"id", 257}, {"content", "</s>"}, {"special", true}}});
    j["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
    j["post_processor"] = {{"type", "RobertaProcessing"}, {"sep", {"</s>", 257}}, {"cls", {"<s>", 256}},
                           {"trim_offsets", true}, {"add_prefix_space", false}};
    j["decoder"] = {{"type", "ByteLevel"}};
    j["model"] = {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array()}};
    const auto tok = parse_hf_tokenizer_json(j.dump());
    ASSERT_TRUE(tok->byte_level_bpe());
    const TextEncoding e = tok->encode("a b");
    EXPECT_EQ(e.ids, (Ids{256, 97, 32, 98, 257}));  // "a", "Ġ" (no merges), "b"
    EXPECT_EQ(byte_spans(e), (Spans{{0, 0}, {0, 1}, {1, 2}, {2, 3}, {3, 3}}));
    EXPECT_EQ(e.pieces[2], "\xC4\xA0");
    EXPECT_EQ(tok->encode("a b", false).ids, (Ids{97, 32, 98}));
    EXPECT_EQ(tok->decode(e.ids, true), "a b");
    EXPECT_EQ(tok->special_token_id("bos"), 256);
    EXPECT_EQ(tok->special_token_id("mask"), std::nullopt);
}

}  // namespace
}  // namespace ts

namespace ts {
namespace {

// Trust (#27): a Split / Replace regex runs on any bytes (invalid UTF-8 included: it was undefined behaviour
// inside pcre2_match), a catastrophic pattern says so instead of silently stopping, and 100k levels of nested
// Sequence normalizers are refused when the file is read instead of overflowing the stack.
TEST(PipelineTrust, RegexOnInvalidUtf8AndHostilePatternsAndNesting) {
    nlohmann::json j = llama_style_json();
    j["normalizer"] = {{"type", "Replace"}, {"pattern", {{"Regex", "\\s+"}}}, {"content", kMeta}};
    j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "\\p{L}+"}}}, {"behavior", "Isolated"},
                          {"invert", false}};
    const auto tok = parse_hf_tokenizer_json(j.dump());
    for (const std::string& text : {std::string("hi \xff\xfe hi"), std::string("\xe4\xb8 hi\x80"), std::string("\xc3")}) {
        const TextEncoding e = tok->encode(text);
        size_t prev = 0;
        for (const auto& s : e.spans) {
            EXPECT_GE(s.byte_begin, prev);
            EXPECT_LE(s.byte_end, text.size());
            prev = s.byte_end;
        }
        EXPECT_FALSE(e.ids.empty());
    }

    nlohmann::json slow = llama_style_json();
    slow["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(h+)+$"}}}, {"behavior", "Isolated"},
                             {"invert", false}};
    const auto slow_tok = parse_hf_tokenizer_json(slow.dump());
    const std::string msg = error_of([&] { (void)slow_tok->encode(std::string(5000, 'h') + "!"); });
    EXPECT_NE(msg.find("cannot be matched on this text"), std::string::npos) << msg;

    // Every match quick but every one looking to the end of the text: quadratic in the text, so the budget for
    // the whole text runs out (before, each call was within its own limit and 20 KB took minutes).
    nlohmann::json ahead = llama_style_json();
    ahead["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "h(?=(?:h|x)*!)"}}},
                              {"behavior", "Isolated"}, {"invert", false}};
    const auto ahead_tok = parse_hf_tokenizer_json(ahead.dump());
    EXPECT_EQ(ahead_tok->encode("hhh!").pieces.size(), 6u);  // <s>, "▁", three "h" and "!": short texts work
    const std::string budget_msg = error_of([&] { (void)ahead_tok->encode(std::string(20000, 'h') + "!"); });
    EXPECT_NE(budget_msg.find("backtracking steps for 20004 bytes"), std::string::npos) << budget_msg;
    // An ordinary pattern on long runs and on many short matches stays within it.
    nlohmann::json words = llama_style_json();
    words["pre_tokenizer"] = {{"type", "Split"},
                              {"pattern", {{"Regex", " ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"}}},
                              {"behavior", "Isolated"}, {"invert", false}};
    const auto words_tok = parse_hf_tokenizer_json(words.dump());
    std::string many;
    for (int i = 0; i < 4000; ++i) many += "a1, ";
    EXPECT_FALSE(words_tok->encode(std::string(100000, 'h') + many + std::string(20000, ' ')).ids.empty());

    std::string deep = R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "normalizer": )";
    for (int i = 0; i < 100000; ++i) deep += R"({"type": "Sequence", "normalizers": [)";
    const std::string err = error_of([&] { (void)parse_hf_tokenizer_json(deep, "deep.json"); });
    EXPECT_NE(err.find("deep.json"), std::string::npos) << err;
    EXPECT_NE(err.find("nested deeper than 64 levels"), std::string::npos) << err;
}

}  // namespace
}  // namespace ts

namespace ts {
namespace {

// A vocabulary holding one 100k-byte piece (a hostile or broken file) tokenizes ordinary text exactly as without
// it, and the piece itself still wins where the text holds it (the Viterbi walks a byte trie of the pieces).
TEST(PipelineUnigram, AHugePieceChangesNothingElseAndStillMatches) {
    json j = unigram_json();
    j["model"]["vocab"].push_back(json::array({std::string(100000, 'x'), -1.0}));  // id 8
    const std::string longish(2000, 'y');
    j["model"]["vocab"].push_back(json::array({longish, -1.0}));  // id 9
    const auto tok = parse_hf_tokenizer_json(j.dump());
    EXPECT_EQ(tok->encode("ab abc").ids, (Ids{5, 5, 6, 7}));
    const auto base = parse_hf_tokenizer_json(unigram_json().dump());
    std::string text;
    for (int i = 0; i < 2000; ++i) text += "ab abc ";
    EXPECT_EQ(tok->encode(text).ids, base->encode(text).ids);
    const TextEncoding e = tok->encode("a" + longish);
    ASSERT_GE(e.ids.size(), 2u);
    EXPECT_EQ(e.ids[e.ids.size() - 2], 9);  // the 2000-byte piece, then </s>
}

}  // namespace
}  // namespace ts
