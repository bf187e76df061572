// SentencePiece .model files through libsentencepiece, on tiny models trained here with libsentencepiece_train
// (Debian's libsentencepiece-dev ships the trainer): encode/decode round trips, spans, BOS/EOS settings, the
// Marian source.spm/target.spm + vocab.json pair; and our tokenizer.json Unigram (Viterbi) against
// SentencePiece's own unigram on the same pieces and scores.
#include "core/tokenizer/text_tokenizer.h"
#include "core/tokenizer/text_tokenizer_detail.h"
#include "tests/test_util.h"
#include "tests/tokenizer/tokenizer_test_util.h"

#include <nlohmann/json.hpp>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace ts {
namespace {

using nlohmann::json;
using Ids = std::vector<int32_t>;

const std::vector<std::string>& sample_texts() {
    static const std::vector<std::string> t = {
        "Hello world",
        "The Licensee may copy and distribute the Program.",
        "you must cause the modified files to carry prominent notices",
        "numbers 0 12 345 and code: f(x) = x*2;",
        "\xE6\x88\x91\xE7\x88\xB1\xE8\x87\xAA\xE7\x84\xB6\xE8\xAF\xAD\xE8\xA8\x80 and emoji \xF0\x9F\x98\x80",
        "caf\xC3\xA9 na\xC3\xAF" "ve",
        "a",
    };
    return t;
}

// A model trained on the licence texts; serialized ModelProto.
std::string train(const std::string& type, const std::string& normalization, int vocab_size) {
    test::TempDir dir("ts_spm_train");
    const std::string corpus = (dir.path / "corpus.txt").string();
    {
        std::ofstream f(corpus, std::ios::binary);
        f << test::license_text();
    }
    std::string proto;
    const auto st = sentencepiece::SentencePieceTrainer::Train(
        {{"input", corpus},
         {"model_type", type},
         {"vocab_size", std::to_string(vocab_size)},
         {"byte_fallback", "true"},
         {"character_coverage", "1.0"},
         {"normalization_rule_name", normalization},
         {"remove_extra_whitespaces", "false"},
         {"minloglevel", "2"},
         {"num_threads", "1"},
         {"input_sentence_size", "20000"}},
        nullptr, &proto);
    if (!st.ok()) throw std::runtime_error("sentencepiece training failed: " + std::string(st.message()));
    return proto;
}

const std::string& unigram_identity() {
    static const std::string p = train("unigram", "identity", 400);
    return p;
}
const std::string& bpe_nfkc() {
    static const std::string p = train("bpe", "nmt_nfkc", 400);
    return p;
}

TEST(SentencePieceModel, RoundTripsSpansAndBosEos) {
    for (const std::string* proto : {&unigram_identity(), &bpe_nfkc()}) {
        const auto tok = parse_sentencepiece_model(*proto, /*add_bos=*/true, /*add_eos=*/false);
        sentencepiece::SentencePieceProcessor sp;
        ASSERT_TRUE(sp.LoadFromSerializedProto(*proto).ok());
        for (const std::string& text : sample_texts()) {
            const TextEncoding e = tok->encode(text);
            ASSERT_FALSE(e.ids.empty());
            EXPECT_EQ(e.ids[0], sp.bos_id());
            EXPECT_EQ(e.special[0], 1);
            // ids agree with the library's own encode
            std::vector<int> want;
            ASSERT_TRUE(sp.Encode(text, &want).ok());
            EXPECT_EQ(Ids(e.ids.begin() + 1, e.ids.end()), Ids(want.begin(), want.end())) << text;
            EXPECT_EQ(tok->decode(Ids(e.ids.begin() + 1, e.ids.end())), text);
            EXPECT_EQ(tok->decode(e.ids, /*skip_special_tokens=*/true), text);
            // spans are ordered, inside the text and together cover every non-space byte
            test::expect_spans_cover(text, e.spans, [&](size_t k) { return text[k] != ' '; });
        }
        // "Hello world": a piece that is not a byte token spells the text it covers (▁ for the space)
        const std::string text = "The Program";
        const TextEncoding e = tok->encode(text, false);
        std::string joined;
        for (size_t i = 0; i < e.ids.size(); ++i) joined += e.pieces[i];
        EXPECT_EQ(joined, "\xE2\x96\x81The\xE2\x96\x81Program");
    }
    const auto t5 = parse_sentencepiece_model(unigram_identity(), false, true, "spiece.model");
    const TextEncoding e = t5->encode("Hello");
    EXPECT_EQ(e.ids.back(), *t5->special_token_id("eos"));
    EXPECT_EQ(e.spans.back().byte_begin, 5u);
    EXPECT_TRUE(t5->special_token_id("unk").has_value());
    EXPECT_NO_THROW((void)t5->encode("\xFF\xFE broken \xE4\xB8"));
    EXPECT_THROW((void)t5->decode(Ids{1 << 20}), std::out_of_range);
}

// Our Unigram (tokenizer.json) against SentencePiece's unigram on the same pieces and scores.
TEST(SentencePieceModel, TokenizerJsonUnigramMatchesSentencePiece) {
    sentencepiece::SentencePieceProcessor sp;
    ASSERT_TRUE(sp.LoadFromSerializedProto(unigram_identity()).ok());
    json vocab = json::array();
    for (int i = 0; i < sp.GetPieceSize(); ++i) vocab.push_back(json::array({sp.IdToPiece(i), sp.GetScore(i)}));
    json j;
    j["model"] = {{"type", "Unigram"}, {"unk_id", sp.unk_id()}, {"byte_fallback", true}, {"vocab", vocab}};
    j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "always"}, {"split", true}};
    j["decoder"] = {{"type", "Sequence"},
                    {"decoders", json::array({{{"type", "ByteFallback"}},
                                              {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "always"}}})}};
    const auto ours = parse_hf_tokenizer_json(j.dump());
    size_t compared = 0;
    for (const std::string& text : sample_texts()) {
        std::vector<int> want;
        ASSERT_TRUE(sp.Encode(text, &want).ok());
        EXPECT_EQ(ours->encode(text, false).ids, Ids(want.begin(), want.end())) << text;
        EXPECT_EQ(ours->decode(Ids(want.begin(), want.end())), text);
        ++compared;
    }
    // and on every licence-text line (thousands of words)
    std::istringstream lines(test::license_text());
    std::string line;
    size_t mismatches = 0;
    while (std::getline(lines, line) && compared < 1500) {
        // Runs of spaces and a leading space: SentencePiece adds its "▁" prefix even before a space, HF's Metaspace
        // does not prepend to text that already starts with "▁" (a known difference of the two libraries).
        if (line.empty() || line[0] == ' ' || line.find("  ") != std::string::npos) continue;
        std::vector<int> want;
        ASSERT_TRUE(sp.Encode(line, &want).ok());
        if (ours->encode(line, false).ids != Ids(want.begin(), want.end())) {
            if (mismatches < 3) {
                std::string a, b;
                for (int id : want) a += sp.IdToPiece(id) + " ";
                for (const auto& p : ours->encode(line, false).pieces) b += p + " ";
                ADD_FAILURE() << "line: " << line << "\n  spm:  " << a << "\n  ours: " << b;
            }
            ++mismatches;
        }
        ++compared;
    }
    EXPECT_GT(compared, 500u);
    EXPECT_EQ(mismatches, 0u);
}

std::string base64(const std::string& in) {
    static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    size_t i = 0;
    for (; i + 2 < in.size(); i += 3) {
        const uint32_t v = (uint32_t((unsigned char)in[i]) << 16) | (uint32_t((unsigned char)in[i + 1]) << 8) | (unsigned char)in[i + 2];
        out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], t[v & 63]};
    }
    if (i + 1 == in.size()) {
        const uint32_t v = uint32_t((unsigned char)in[i]) << 16;
        out += {t[v >> 18], t[(v >> 12) & 63], '=', '='};
    } else if (i + 2 == in.size()) {
        const uint32_t v = (uint32_t((unsigned char)in[i]) << 16) | (uint32_t((unsigned char)in[i + 1]) << 8);
        out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], '='};
    }
    return out;
}

// T5's tokenizer.json: Precompiled (SentencePiece's nmt_nfkc character map) + Metaspace + Unigram. Our reading of
// the precompiled map (a darts-clone trie) against SentencePiece normalizing with the same map.
TEST(SentencePieceModel, PrecompiledCharsmapMatchesSentencePieceNmtNfkc) {
    static const std::string proto = train("unigram", "nmt_nfkc", 400);
    const std::string charsmap = test::proto_field(test::proto_field(proto, 3), 2);
    ASSERT_GT(charsmap.size(), 1000u) << "no precompiled_charsmap in the trained model";
    sentencepiece::SentencePieceProcessor sp;
    ASSERT_TRUE(sp.LoadFromSerializedProto(proto).ok());
    json vocab = json::array();
    for (int i = 0; i < sp.GetPieceSize(); ++i) vocab.push_back(json::array({sp.IdToPiece(i), sp.GetScore(i)}));
    json j;
    j["model"] = {{"type", "Unigram"}, {"unk_id", sp.unk_id()}, {"byte_fallback", true}, {"vocab", vocab}};
    j["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", base64(charsmap)}};
    j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "always"}, {"split", true}};
    const auto ours = parse_hf_tokenizer_json(j.dump());
    // fullwidth letters, ligature, circled digit, superscript, no-break space, zero-width space, Chinese, emoji
    const std::vector<std::string> texts = {
        "\xEF\xBC\xA6\xEF\xBD\x95\xEF\xBD\x8C\xEF\xBD\x8C width", "\xEF\xAC\x81le of the Program",
        "\xE2\x91\xA0 and x\xC2\xB2", "no\xC2\xA0" "break", "bad\xFF" "byte\x0B" "tab", "zero\xE2\x80\x8Bwidth", "plain ASCII, the License.",
        "\xE6\x88\x91\xE7\x88\xB1 caf\xC3\xA9 \xF0\x9F\x98\x80"};
    for (const std::string& text : texts) {
        std::vector<int> want;
        ASSERT_TRUE(sp.Encode(text, &want).ok());
        const TextEncoding e = ours->encode(text, false);
        EXPECT_EQ(e.ids, Ids(want.begin(), want.end())) << text;
        EXPECT_EQ(e.spans.back().byte_end, text.size()) << text;
    }
}

TEST(SentencePieceModel, FolderWithTokenizerModelAndConfig) {
    test::TempDir dir("ts_spm_folder");
    {
        std::ofstream f(dir.path / "tokenizer.model", std::ios::binary);
        f << bpe_nfkc();
    }
    auto tok = find_text_tokenizer(dir.path.string());
    ASSERT_TRUE(tok);
    EXPECT_EQ(tok->encode("Hi").ids.front(), *tok->special_token_id("bos"));  // Llama default: add_bos_token
    {
        std::ofstream f(dir.path / "tokenizer_config.json");
        f << R"({"add_bos_token": false, "add_eos_token": true, "tokenizer_class": "LlamaTokenizer"})";
    }
    tok = find_text_tokenizer(dir.path.string());
    EXPECT_NE(tok->encode("Hi").ids.front(), *tok->special_token_id("bos"));
    EXPECT_EQ(tok->encode("Hi").ids.back(), *tok->special_token_id("eos"));
    EXPECT_NE(tok->description().find("SentencePiece"), std::string::npos);
}

TEST(SentencePieceModel, MarianSourceTargetAndSharedVocab) {
    test::TempDir dir("ts_marian");
    sentencepiece::SentencePieceProcessor sp;
    ASSERT_TRUE(sp.LoadFromSerializedProto(bpe_nfkc()).ok());
    // shared vocabulary: </s> 0, <unk> 1, <pad> 2, then the .spm's pieces except its control/unknown ones
    json vocab = {{"</s>", 0}, {"<unk>", 1}, {"<pad>", 2}};
    int next = 3;
    for (int i = 0; i < sp.GetPieceSize(); ++i)
        if (!sp.IsControl(i) && !sp.IsUnknown(i)) vocab[sp.IdToPiece(i)] = next++;
    for (const char* f : {"source.spm", "target.spm"}) {
        std::ofstream o(dir.path / f, std::ios::binary);
        o << bpe_nfkc();
    }
    {
        std::ofstream o(dir.path / "vocab.json");
        o << vocab.dump();
    }
    const TokenizerPair pair = find_tokenizer_pair(dir.path.string());
    ASSERT_TRUE(pair.source && pair.target);
    EXPECT_NE(pair.source.get(), pair.target.get());
    const std::string text = "The Program is free software";
    const TextEncoding e = pair.source->encode(text);
    EXPECT_EQ(e.ids.back(), 0);  // </s> appended, as MarianTokenizer does
    for (size_t i = 0; i + 1 < e.ids.size(); ++i) EXPECT_EQ(e.ids[i], vocab.at(e.pieces[i]).get<int>()) << e.pieces[i];
    EXPECT_EQ(pair.target->decode(e.ids, true), text);
    EXPECT_EQ(pair.target->decode(e.ids), text + "</s>");
    EXPECT_EQ(pair.source->special_token_id("eos"), 0);
    EXPECT_EQ(pair.source->special_token_id("pad"), 2);
    // find_text_tokenizer gives the source side
    EXPECT_EQ(find_text_tokenizer(dir.path.string())->encode(text).ids, e.ids);
    // a broken vocab.json is named
    {
        std::ofstream o(dir.path / "vocab.json");
        o << "{\"a\": \"x\"}";
    }
    try {
        (void)find_tokenizer_pair(dir.path.string());
        ADD_FAILURE() << "expected an error";
    } catch (const std::runtime_error& ex) {
        EXPECT_NE(std::string(ex.what()).find("vocab.json: entry \"a\""), std::string::npos) << ex.what();
    }
}

}  // namespace
}  // namespace ts

namespace ts {
namespace {

// Trust (#27): libsentencepiece walks the character map's trie without bounds checks, so a .model whose map is
// corrupt crashed the app while normalising. The map of every trained model passes our check; the same model with
// its trie overwritten, or with a replacement offset past the pool, is refused with the file named, before the
// library sees it.
TEST(SentencePieceModel, CorruptCharsmapIsRefusedBeforeTheLibraryWalksIt) {
    const std::string& proto = bpe_nfkc();
    const std::string charsmap = test::proto_field(test::proto_field(proto, 3), 2);
    ASSERT_GT(charsmap.size(), 1000u);
    EXPECT_NO_THROW(detail::check_precompiled_charsmap(charsmap, "ok.model"));
    EXPECT_NO_THROW((void)parse_sentencepiece_model(proto, true, true, "ok.model"));
    const size_t at = proto.find(charsmap);
    ASSERT_NE(at, std::string::npos);
    std::string corrupt = proto;
    for (size_t i = 4; i < 4 + 4096 && i < charsmap.size(); ++i) corrupt[at + i] = char(0xA5 ^ int(i));
    std::string err = "(no error)";
    try {
        (void)parse_sentencepiece_model(corrupt, true, true, "bad.model");
    } catch (const std::runtime_error& e) {
        err = e.what();
    }
    EXPECT_NE(err.find("bad.model: precompiled_charsmap is corrupt"), std::string::npos) << err;
    std::string huge_size = charsmap;
    huge_size[3] = char(0x7F);
    EXPECT_THROW(detail::check_precompiled_charsmap(huge_size, "m"), std::runtime_error);
    EXPECT_NO_THROW(detail::check_precompiled_charsmap("", "empty"));
}

}  // namespace
}  // namespace ts
