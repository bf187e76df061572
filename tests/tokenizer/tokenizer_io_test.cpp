// Loading GPT-2 vocab.json/merges.txt and Hugging Face tokenizer.json (both merges formats, Split/Digits
// pre-tokenizers, added tokens), folder discovery, and error messages that name the file and line/field.
#include "tests/tokenizer/tokenizer_test_util.h"

#include <unistd.h>

#include <filesystem>
#include <functional>

namespace ts {
namespace {

// A tiny byte-level vocabulary: all 256 bytes (GPT-2 spelling) plus "ab", "abc", "Ġa".
std::string tiny_vocab_json(bool with_eot = true) {
    nlohmann::json v = nlohmann::json::object();
    for (int b = 0; b < 256; ++b) v[bytes_to_byte_level(std::string(1, char(b)))] = b;
    v["ab"] = 256;
    v["abc"] = 257;
    v["\xC4\xA0" "a"] = 258;
    if (with_eot) v["<|endoftext|>"] = 259;
    return v.dump();
}
const char* kTinyMerges = "#version: 0.2\na b\nab c\n\xC4\xA0 a\n";

std::string tiny_tokenizer_json(const nlohmann::json& merges, const nlohmann::json& pre_tokenizer) {
    nlohmann::json j;
    j["model"] = {{"type", "BPE"}, {"vocab", nlohmann::json::parse(tiny_vocab_json())}, {"merges", merges}};
    j["added_tokens"] = nlohmann::json::array({{{"id", 259}, {"content", "<|endoftext|>"}, {"special", true}}});
    j["pre_tokenizer"] = pre_tokenizer;
    return j.dump();
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(TokenizerIo, Gpt2FormatTinyVocab) {
    const auto tok = parse_gpt2_tokenizer(tiny_vocab_json(), kTinyMerges);
    EXPECT_EQ(tok->vocab_size(), 260u);
    EXPECT_EQ(tok->merges().size(), 3u);
    EXPECT_EQ(tok->encode_ids("abc ab a<|endoftext|>"),
              (std::vector<int32_t>{257, 32 /* " " */, 256, 258, 259}));
    ASSERT_EQ(tok->added_tokens().size(), 1u);
    EXPECT_EQ(tok->added_tokens()[0].id, 259);
}

TEST(TokenizerIo, TokenizerJsonBothMergeFormatsAgree) {
    const nlohmann::json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
    const auto old_fmt = parse_tokenizer_json(tiny_tokenizer_json({"a b", "ab c", "\xC4\xA0 a"}, byte_level));
    const auto new_fmt = parse_tokenizer_json(
        tiny_tokenizer_json(nlohmann::json::array({nlohmann::json::array({"a", "b"}), nlohmann::json::array({"ab", "c"}),
                                                    nlohmann::json::array({"\xC4\xA0", "a"})}),
                            byte_level));
    EXPECT_EQ(old_fmt->merges(), new_fmt->merges());
    EXPECT_EQ(old_fmt->vocab(), new_fmt->vocab());
    EXPECT_EQ(old_fmt->patterns(), std::vector<std::string>{kGpt2Pattern});
    EXPECT_EQ(old_fmt->encode_ids("abc<|endoftext|>"), (std::vector<int32_t>{257, 259}));
}

TEST(TokenizerIo, SplitRegexAndDigitsPreTokenizersAreRecorded) {
    // Llama-3 / Qwen2 style: Sequence[Split(Regex), ByteLevel(use_regex=false)]
    const std::string llama3 =
        R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
    const nlohmann::json seq = {
        {"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", llama3}}}, {"behavior", "Isolated"}, {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}}}};
    const auto tok = parse_tokenizer_json(tiny_tokenizer_json({"a b"}, seq));
    EXPECT_EQ(tok->patterns(), std::vector<std::string>{llama3});
    const std::string text = "It'S 12345 abc";
    EXPECT_EQ(tok->decode(tok->encode_ids(text)), text);
    // "12345" -> "123", "45" under \p{N}{1,3}: digits 1,2,3 are single-byte tokens, never merged across pieces
    const auto round = parse_tokenizer_json(tokenizer_to_json(*tok));
    EXPECT_EQ(round->patterns(), tok->patterns());

    const nlohmann::json digits = {{"type", "Sequence"},
                                   {"pretokenizers",
                                    {{{"type", "Digits"}, {"individual_digits", true}},
                                     {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}}}};
    const auto dtok = parse_tokenizer_json(tiny_tokenizer_json({"a b"}, digits));
    EXPECT_EQ(dtok->patterns(), (std::vector<std::string>{"[0-9]", kGpt2Pattern}));
}

TEST(TokenizerIo, FindTokenizerInFolders) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("ts_tok_io_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    EXPECT_EQ(find_tokenizer(dir.string()), nullptr);
    EXPECT_THROW((void)load_tokenizer(dir.string()), std::runtime_error);
    { std::ofstream(dir / "vocab.json") << tiny_vocab_json(); }
    { std::ofstream(dir / "merges.txt") << kTinyMerges; }
    auto tok = find_tokenizer(dir.string());
    ASSERT_NE(tok, nullptr);
    EXPECT_EQ(tok->merges().size(), 3u);
    EXPECT_EQ(load_tokenizer((dir / "vocab.json").string())->vocab(), tok->vocab());
    save_tokenizer_json(*tok, (dir / "tokenizer.json").string());  // tokenizer.json now takes precedence
    auto from_json = find_tokenizer(dir.string());
    EXPECT_EQ(from_json->vocab(), tok->vocab());
    EXPECT_EQ(from_json->merges(), tok->merges());
    fs::remove_all(dir);
}

TEST(TokenizerIo, MalformedMergesNameFileAndLine) {
    const std::string v = tiny_vocab_json();
    EXPECT_EQ(error_of([&] { (void)parse_gpt2_tokenizer(v, "#version: 0.2\na b\nab\n", "v.json", "m.txt"); }),
              "m.txt: line 3: expected two tokens separated by one space, found \"ab\"");
    EXPECT_NE(error_of([&] { (void)parse_gpt2_tokenizer(v, "a b\nq zz\n", "v.json", "m.txt"); })
                  .find("m.txt: line 2: expected the right token to be in the vocabulary, found \"zz\""),
              std::string::npos);
    EXPECT_NE(error_of([&] { (void)parse_gpt2_tokenizer(v, "a b\nb c\n", "v.json", "m.txt"); })
                  .find("m.txt: line 2: merging \"b\" and \"c\" gives \"bc\", which is not in the vocabulary"),
              std::string::npos);
}

TEST(TokenizerIo, MalformedVocabNamesFileAndField) {
    EXPECT_EQ(error_of([] { (void)parse_gpt2_tokenizer("{\"a\": 0,\n \"b\": }", "", "v.json"); })
                  .rfind("v.json: line 2, column 7: not valid JSON (syntax error", 0),
              0u);
    EXPECT_EQ(error_of([] { (void)parse_gpt2_tokenizer(R"({"a": "zero"})", "", "v.json"); }),
              "v.json: entry \"a\": expected an integer token id, found string \"zero\"");
    EXPECT_EQ(error_of([] { (void)parse_gpt2_tokenizer(R"({"a": 0, "b": 0})", "", "v.json"); }),
              "v.json: entry \"b\": id 0 is already used by entry \"a\"");
    EXPECT_EQ(error_of([] { (void)parse_gpt2_tokenizer(R"({"a": -3})", "", "v.json"); }),
              "v.json: entry \"a\": expected a token id in [0, 2097152), found -3");
    EXPECT_NE(error_of([] { (void)parse_gpt2_tokenizer(R"({"a b": 1})", "", "v.json"); })
                  .find("v.json: entry \"a b\": expected a byte-level BPE token"),
              std::string::npos);
    EXPECT_EQ(error_of([] { (void)parse_gpt2_tokenizer("[1, 2]", "", "v.json"); }),
              "v.json: top level: expected a JSON object {token: id}, found array [1,2]");
}

TEST(TokenizerIo, MalformedTokenizerJsonNamesField) {
    const nlohmann::json bl = {{"type", "ByteLevel"}};
    auto j = nlohmann::json::parse(tiny_tokenizer_json({"a b"}, bl));
    const auto err = [](const nlohmann::json& doc) {
        return error_of([&] { (void)parse_tokenizer_json(doc.dump(), "t.json"); });
    };
    auto k = j;
    k["model"]["type"] = "WordPiece";
    EXPECT_EQ(err(k), "t.json: model.type: expected \"BPE\", found \"WordPiece\"");
    k = j;
    k["model"]["merges"][0] = 7;
    EXPECT_EQ(err(k), "t.json: model.merges[0]: expected \"left right\" or [\"left\", \"right\"], found number 7");
    k = j;
    k["model"]["merges"][0] = {"a", "zz"};
    EXPECT_NE(err(k).find("t.json: model.merges[0]: expected the right token"), std::string::npos);
    k = j;
    k["model"]["vocab"]["x"] = 1.5;
    EXPECT_EQ(err(k), "t.json: model.vocab[\"x\"]: expected an integer token id, found number 1.5");
    k = j;
    k["added_tokens"][0]["id"] = "259";
    EXPECT_EQ(err(k), "t.json: added_tokens[0].id: expected an integer token id, found string \"259\"");
    k = j;
    k["pre_tokenizer"] = {{"type", "Whitespace"}};
    EXPECT_EQ(err(k), "t.json: pre_tokenizer.type: expected ByteLevel, Split, Digits or Sequence, found \"Whitespace\"");
    k = j;
    k["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "("}}}, {"behavior", "Isolated"}};
    EXPECT_NE(err(k).find("t.json: pre_tokenizer: expected a ByteLevel step"), std::string::npos);
    k["pre_tokenizer"] = {{"type", "Sequence"},
                          {"pretokenizers", {{{"type", "Split"}, {"pattern", {{"Regex", "("}}}}, bl}}};
    EXPECT_NE(err(k).find("t.json: pre-tokenizer pattern does not compile"), std::string::npos);
    k = j;
    k.erase("model");
    EXPECT_EQ(err(k), "t.json: model: expected an object, found nothing");
    k = j;
    k["normalizer"] = {{"type", "Lowercase"}};
    EXPECT_NE(err(k).find("t.json: normalizer: expected null or NFC"), std::string::npos);
    EXPECT_EQ(error_of([] { (void)load_tokenizer_json("/nonexistent/tokenizer.json"); }),
              "/nonexistent/tokenizer.json: cannot open file for reading");
}

}  // namespace
}  // namespace ts
