// decode(encode(x)) == x byte-exactly for any bytes (random, CJK, emoji, combining marks, invalid UTF-8), spans
// tile the input, and character spans follow the documented rule for tokens that split a character.
#include "tests/tokenizer/tokenizer_test_util.h"

#include "core/tokenizer/byte_level.h"

#include <random>
#include <thread>

namespace ts {
namespace {

std::vector<std::string> tricky_texts() {
    return {
        "",
        "Hello, world!",
        "\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C\xE3\x80\x82",  // 你好，世界。
        "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xAE\xE3\x83\x86\xE3\x82\xAD\xE3\x82\xB9\xE3\x83\x88",  // 日本語のテキスト
        "emoji \xF0\x9F\x8E\x89\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB flags \xF0\x9F\x87\xA9\xF0\x9F\x87\xAA",
        "combining e\xCC\x81 a\xCC\x8A\xCC\x81 Zalgo Z\xCD\x91\xCD\x97\xCD\x8A",
        "invalid \xFF\xFE bytes \xC3( truncated \xE4\xB8 end\xF0\x9F",
        "\xC0\xAF overlong, \xED\xA0\x80 surrogate",
        "   leading spaces and trailing   ",
        "tabs\tand\nnewlines\r\n\n\nend",
        "<|endoftext|>special<|endoftext|><|endoftext|>",
        std::string("nul\0byte", 8),
        std::string(5000, 'a'),
        std::string(3000, ' ') + "x",
    };
}

void check_roundtrip(const Tokenizer& tok, const std::string& text) {
    const Encoding enc = tok.encode(text);
    EXPECT_EQ(tok.decode(enc.ids), text) << "text of " << text.size() << " bytes";
    EXPECT_TRUE(test::spans_tile(enc, text));
    if (!enc.spans.empty()) {
        EXPECT_EQ(enc.spans.back().char_end, utf8_char_count(text));
    }
    for (size_t i = 0; i < enc.ids.size(); ++i) {
        const TokenSpan& s = enc.spans[i];
        EXPECT_EQ(text.substr(s.byte_begin, s.byte_end - s.byte_begin), tok.token_bytes(enc.ids[i]));
    }
}

TEST(EncodeRoundTrip, TrickyTextsTrainedTokenizer) {
    const auto tok = test::small_trained_tokenizer();
    for (const std::string& t : tricky_texts()) check_roundtrip(*tok, t);
}

TEST(EncodeRoundTrip, TrickyTextsGpt2) {
    TS_REQUIRE_GPT2(tok);
    for (const std::string& t : tricky_texts()) check_roundtrip(*tok, t);
}

TEST(EncodeRoundTrip, RandomBytesAndRandomUnicode) {
    const auto tok = test::small_trained_tokenizer();
    std::mt19937 rng(1234);
    for (int trial = 0; trial < 300; ++trial) {
        std::string s;
        const size_t n = rng() % 200;
        for (size_t i = 0; i < n; ++i) {
            switch (rng() % 4) {
                case 0: s += char(rng() & 0xFF); break;                     // any byte
                case 1: s += char('a' + rng() % 26); break;                 // letters
                case 2: s += ' '; break;
                default: append_utf8(s, char32_t(0x80 + rng() % 0x2FF80)); break;  // BMP and beyond
            }
        }
        check_roundtrip(*tok, s);
    }
}

TEST(EncodeRoundTrip, CharSpansOfTokensSplittingACharacter) {
    TS_REQUIRE_GPT2(tok);
    // "日" (3 bytes) is two GPT-2 tokens: both touch character 1 of " 日x" -> both get char span [1, 2).
    const std::string text = "a\xE6\x97\xA5x";
    const Encoding enc = tok->encode(text);
    ASSERT_TRUE(test::spans_tile(enc, text));
    size_t split_tokens = 0;
    for (const TokenSpan& s : enc.spans) {
        if (s.byte_begin >= 1 && s.byte_end <= 4 && s.byte_end - s.byte_begin < 3) {
            EXPECT_EQ(s.char_begin, 1u);
            EXPECT_EQ(s.char_end, 2u);
            ++split_tokens;
        }
    }
    EXPECT_GE(split_tokens, 2u) << "expected GPT-2 to split the character into several tokens";
    EXPECT_EQ(enc.spans.back().char_begin, 2u);  // "x"
}

TEST(EncodeRoundTrip, ConcurrentEncodesAgree) {
    const auto tok = test::small_trained_tokenizer();
    const std::string text = test::license_text().substr(0, 40000);
    const auto expected = tok->encode_ids(text);
    std::vector<std::vector<int32_t>> got(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) threads.emplace_back([&, t] { got[size_t(t)] = tok->encode_ids(text); });
    for (auto& th : threads) th.join();
    for (const auto& g : got) EXPECT_EQ(g, expected);
}

TEST(EncodeRoundTrip, DecodeRejectsBadIds) {
    const auto tok = test::small_trained_tokenizer();
    const std::vector<int32_t> bad{1, -1};
    EXPECT_THROW((void)tok->decode(bad), std::out_of_range);
    const std::vector<int32_t> too_big{int32_t(tok->vocab_size())};
    EXPECT_THROW((void)tok->decode(too_big), std::out_of_range);
}

}  // namespace
}  // namespace ts
