// GPT-2 pre-tokenization with PCRE2: the pieces of known strings, contiguous coverage, invalid UTF-8.
#include "core/tokenizer/pretokenize.h"

#include <gtest/gtest.h>

#include <random>

namespace ts {
namespace {

std::vector<std::string> pieces(const PreTokenizer& p, std::string_view text) {
    std::vector<ByteSpan> spans;
    p.split(text, spans);
    std::vector<std::string> out;
    size_t pos = 0;
    for (const auto& [b, e] : spans) {
        EXPECT_EQ(b, pos) << "pieces must be contiguous";
        EXPECT_LT(b, e) << "pieces must be non-empty";
        out.emplace_back(text.substr(b, e - b));
        pos = e;
    }
    EXPECT_EQ(pos, text.size());
    return out;
}

using V = std::vector<std::string>;

TEST(PreTokenize, Gpt2PatternSplitsWordsNumbersPunctuation) {
    const PreTokenizer p;
    EXPECT_EQ(pieces(p, "Hello world, it's 2024!"), (V{"Hello", " world", ",", " it", "'s", " 2024", "!"}));
    EXPECT_EQ(pieces(p, "they'll we've I'm"), (V{"they", "'ll", " we", "'ve", " I", "'m"}));
    // \s+(?!\S): the last space of a run attaches to the next word
    EXPECT_EQ(pieces(p, "a   b"), (V{"a", "  ", " b"}));
    EXPECT_EQ(pieces(p, "end  \n"), (V{"end", "  \n"}));
    EXPECT_EQ(pieces(p, "x\n\ny"), (V{"x", "\n", "\n", "y"}));
    EXPECT_EQ(pieces(p, " \xE4\xB8\x96\xE7\x95\x8C!"), (V{" \xE4\xB8\x96\xE7\x95\x8C", "!"}));  // " 世界!"
    EXPECT_TRUE(pieces(p, "").empty());
}

TEST(PreTokenize, InvalidUtf8BecomesItsOwnPiece) {
    const PreTokenizer p;
    EXPECT_EQ(pieces(p, "ab\xFF" "cd"), (V{"ab", "\xFF", "cd"}));
    EXPECT_EQ(pieces(p, "\xC3"), (V{"\xC3"}));
    EXPECT_EQ(pieces(p, "x\xE4\xB8 y"), (V{"x", "\xE4\xB8", " y"}));
}

TEST(PreTokenize, RandomBytesAreCoveredContiguously) {
    const PreTokenizer p;
    std::mt19937 rng(7);
    for (int trial = 0; trial < 200; ++trial) {
        std::string s(size_t(rng() % 300), '\0');
        for (char& c : s) c = char(rng() & 0xFF);
        (void)pieces(p, s);  // asserts coverage inside
    }
}

TEST(PreTokenize, PipelineSplitsPiecesFurther) {
    const PreTokenizer p({"[0-9]", kGpt2Pattern});  // HF Digits(individual_digits) then ByteLevel
    EXPECT_EQ(pieces(p, "ab 123c"), (V{"ab", " ", "1", "2", "3", "c"}));
}

TEST(PreTokenize, BadPatternThrowsInvalidArgument) {
    EXPECT_THROW(PreTokenizer({"(unclosed"}), std::invalid_argument);
    EXPECT_THROW(PreTokenizer(std::vector<std::string>{}), std::invalid_argument);
}

}  // namespace
}  // namespace ts
