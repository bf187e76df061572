// chrF and BLEU against sacreBLEU 2.x's own expected values (github.com/mjpost/sacrebleu, test/test_chrf.py,
// test/test_bleu.py, test/test_sentence_bleu.py at commit f615c72, v2.6.0), plus the tokenizers' rules worked out
// by hand from sacrebleu/tokenizers/tokenizer_{13a,re,zh}.py (sacreBLEU's own tests give no zh tokenizer numbers).
#include "core/eval/mt_metrics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ts::eval {
namespace {

using Strings = std::vector<std::string>;

double chrf(const Strings& hyps, const Strings& refs, double beta, bool eps_smoothing, bool whitespace = false) {
    ChrfOptions o;
    o.beta = beta;
    o.eps_smoothing = eps_smoothing;
    o.whitespace = whitespace;
    return corpus_chrf(hyps, {refs}, o);
}

// --- chrF ---------------------------------------------------------------------------------------------------------

struct ChrfCase {
    Strings hyps, refs;
    double expected;
};

// test_chrf.py test_cases_effective_order: corpus_chrf(..., char_order=6, word_order=0, beta=3, eps_smoothing=False),
// i.e. sacreBLEU 2.x's default averaging (our default). "a b c" vs "abc" = 100 only when whitespace is removed.
TEST(Chrf, SacrebleuEffectiveOrderCases) {
    const std::vector<ChrfCase> cases = {
        {{"a"}, {"a"}, 100.0},          {{""}, {"reference"}, 0.0},   {{"a b c"}, {"a b c"}, 100.0},
        {{"a b c"}, {"abc"}, 100.0},    {{""}, {"c"}, 0.0},           {{"a", "b"}, {"a", "c"}, 50.0},
        {{"aa"}, {"ab"}, 25.0},
    };
    for (const ChrfCase& c : cases)
        EXPECT_NEAR(chrf(c.hyps, c.refs, 3, false), c.expected, 1e-4) << c.hyps[0] << " | " << c.refs[0];
}

// test_chrf.py test_cases: the same metric with eps_smoothing=True (chrF++.py / NLTK style).
TEST(Chrf, SacrebleuEpsSmoothingCases) {
    const std::vector<ChrfCase> cases = {
        {{"abcdefg"}, {"hijklmnop"}, 0.0},
        {{"a"}, {"b"}, 0.0},
        {{""}, {"b"}, 0.0},
        {{""}, {"ref"}, 0.0},
        {{""}, {"reference"}, 0.0},
        {{"aa"}, {"ab"}, 8.3333},
        {{"a", "b"}, {"a", "c"}, 8.3333},
        {{"a"}, {"a"}, 16.6667},
        {{"a b c"}, {"a b c"}, 50.0},
        {{"a b c"}, {"abc"}, 50.0},
        {{" risk assessment must be made of those who are qualified and expertise in the sector - these are the "
          "scientists ."},
         {"risk assessment has to be undertaken by those who are qualified and expert in that area - that is the "
          "scientists ."},
         63.361730},
        {{" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. "},
         {"Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."},
         64.1302698},
        {{"Niemand hat die Absicht, eine Mauer zu errichten"}, {"Niemand hat die Absicht, eine Mauer zu errichten"},
         100.0},
    };
    for (const ChrfCase& c : cases)
        EXPECT_NEAR(chrf(c.hyps, c.refs, 3, true), c.expected, 1e-4) << c.hyps[0] << " | " << c.refs[0];
}

// test_chrf.py test_cases_keep_whitespace: remove_whitespace=False, beta=3, default averaging.
TEST(Chrf, SacrebleuKeepWhitespaceCases) {
    EXPECT_NEAR(chrf({"Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich."},
                     {"Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."}, 3, false, true),
                67.3481606, 1e-4);
    EXPECT_NEAR(chrf({"risk assessment must be made of those who are qualified and expertise in the sector - these "
                      "are the scientists ."},
                     {"risk assessment has to be undertaken by those who are qualified and expert in that area - that "
                      "is the scientists ."},
                     3, false, true),
                65.2414427, 1e-4);
}

// test_chrf.py test_sentence_level_chrf: sentence_chrf(hyp, refs, eps_smoothing=True) with the default beta = 2
// (a one-segment corpus). Non-ASCII letters count as one character each.
TEST(Chrf, SacrebleuSentenceLevelBeta2) {
    const std::vector<ChrfCase> cases = {
        {{"Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře."},
         {"Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře."},
         39.14078509},
        {{"Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři."},
         {"A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři."},
         31.22557079},
        {{"Lapali po dechu, jejich životy skončily dřív, než skutečně začaly."},
         {"Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli."},
         57.15704367},
    };
    for (const ChrfCase& c : cases) EXPECT_NEAR(chrf(c.hyps, c.refs, 2, true), c.expected, 1e-4) << c.hyps[0];
}

// Corpus statistics are summed before the F-score, not F-scores averaged: one perfect and one disjoint segment of
// different lengths give the summed-count score, not 50.
TEST(Chrf, SumsStatisticsOverTheCorpus) {
    const double corpus = chrf({"abcdefgh", "x"}, {"abcdefgh", "y"}, 2, false);
    // Order 1: hyp 9, ref 9, match 8; orders 2..6 only from the first segment (the second has none): all match.
    const double p1 = 8.0 / 9.0, p = (p1 + 5) / 6;  // precision = recall at every order
    EXPECT_NEAR(corpus, 100 * p, 1e-9);
    EXPECT_GT(std::abs(corpus - 50.0), 10.0);
}

// Whitespace of every kind Python's str.split() knows (tab, ideographic space U+3000, NBSP) is removed; Chinese
// characters are single code points, not bytes.
TEST(Chrf, RemovesUnicodeWhitespaceAndCountsCodePoints) {
    EXPECT_NEAR(chrf({"打开\u3000文件"}, {"打开文件"}, 2, false), 100.0, 1e-9);
    EXPECT_NEAR(chrf({"a\tb\u00a0c"}, {"abc"}, 2, false), 100.0, 1e-9);
    // {hyp, ref, match} per order of "打开文" against "打开文件".
    const ChrfStats st = chrf_segment_stats("打开文", {"打开文件"});
    ASSERT_EQ(st.per_order.size(), 6u);
    EXPECT_EQ(st.per_order[0], (std::array<int64_t, 3>{3, 4, 3}));
    EXPECT_EQ(st.per_order[3], (std::array<int64_t, 3>{0, 1, 0}));  // a 4-gram only in the reference
    EXPECT_EQ(st.per_order[4], (std::array<int64_t, 3>{0, 0, 0}));
}

TEST(Chrf, RefusesBadArguments) {
    EXPECT_THROW((void)corpus_chrf({"a"}, {}), std::invalid_argument);
    EXPECT_THROW((void)corpus_chrf({"a", "b"}, {{"a"}}), std::invalid_argument);
    ChrfOptions o;
    o.char_order = 0;
    EXPECT_THROW((void)corpus_chrf({"a"}, {{"a"}}, o), std::invalid_argument);
}

// --- BLEU ---------------------------------------------------------------------------------------------------------

const Strings kHyps = {"The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."};
const std::vector<Strings> kRefs = {
    {"The dog bit the man.", "It was not unexpected.", "The man bit him first."},
    {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."},
};

// test_bleu.py test_corpus_bleu_cases: default settings (13a, exp smoothing) and tokenize='none'.
TEST(Bleu, SacrebleuCorpusCases) {
    EXPECT_NEAR(corpus_bleu(kHyps, kRefs).score, 48.530827, 1e-6);
    EXPECT_NEAR(corpus_bleu(kHyps, kRefs, BleuTokenizer::Tok13a).score, 48.530827, 1e-6);
    EXPECT_NEAR(corpus_bleu(kHyps, kRefs, BleuTokenizer::None).score, 49.1919566, 1e-6);
    EXPECT_EQ(corpus_bleu({"", "", ""}, kRefs).score, 0.0);  // empty hypotheses are kept, not dropped
    // test_raw_bleu_cases: no n-gram matches at all gives 0 (sacreBLEU issue #141).
    EXPECT_EQ(corpus_bleu({"this is a test", "another test"}, {{"ref1", "ref2"}}).score, 0.0);
}

// test_bleu.py test_statistics: clipped counts and totals per order.
TEST(Bleu, SacrebleuStatistics) {
    const BleuStats st = bleu_segment_stats("am I am a character sequence", {"I am a symbol string sequence a a"});
    EXPECT_EQ(st.correct, (std::array<int64_t, 4>{4, 2, 1, 0}));
    EXPECT_EQ(st.total, (std::array<int64_t, 4>{6, 5, 4, 3}));
    EXPECT_EQ(st.hyp_len, 6);
    EXPECT_EQ(st.ref_len, 8);
}

// test_bleu.py test_scoring: compute_bleu([9,7,5,3], [10,8,6,4], sys_len=11, ref_len=11) = 0.8375922397.
TEST(Bleu, SacrebleuScoringFromStatistics) {
    BleuStats st;
    st.correct = {9, 7, 5, 3};
    st.total = {10, 8, 6, 4};
    st.hyp_len = st.ref_len = 11;
    EXPECT_NEAR(bleu_from_stats(st).score / 100, 0.8375922397, 1e-8);
}

// test_sentence_bleu.py: 'exp' smoothing on a sentence with no matching 3- and 4-grams = 8.493 (13a). The same
// sentence scores 0 without smoothing, 4.51688 with 'floor', so this pins the smoothing down.
TEST(Bleu, SacrebleuExpSmoothing) {
    const std::string ref = "producţia de zahăr brut se exprimă în zahăr alb;";
    const std::string sys = "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;";
    const BleuScore s = corpus_bleu({sys}, {{ref}});
    EXPECT_NEAR(s.score, 8.493, 1e-3);
    EXPECT_EQ(s.stats.correct[3], 0);  // the smoothed order really is zero
    // By hand: zero orders get 100 / (2^k * total), k = 1, 2, ... in order.
    EXPECT_NEAR(s.precisions[2], 100.0 / (2.0 * double(s.stats.total[2])), 1e-12);
    EXPECT_NEAR(s.precisions[3], 100.0 / (4.0 * double(s.stats.total[3])), 1e-12);
    // Brevity penalty: a shorter hypothesis is penalised by exp(1 - r/c).
    const BleuScore short_hyp = corpus_bleu({"the cat"}, {{"the cat sat on the mat"}});
    EXPECT_NEAR(short_hyp.bp, std::exp(1.0 - 6.0 / 2.0), 1e-12);
}

// --- tokenizers ---------------------------------------------------------------------------------------------------

TEST(Tokenize13a, SeparatesPunctuationLikeMteval) {
    EXPECT_EQ(tokenize_13a("It wasn't surprising."), (Strings{"It", "wasn't", "surprising", "."}));
    EXPECT_EQ(tokenize_13a("version 3.2, build 1,000."), (Strings{"version", "3.2", ",", "build", "1,000", "."}));
    EXPECT_EQ(tokenize_13a("pages 10-20 (see \"A&amp;B\")"),
              (Strings{"pages", "10", "-", "20", "(", "see", "\"", "A", "&", "B", "\"", ")"}));
    EXPECT_EQ(tokenize_13a("x<skipped>y"), (Strings{"xy"}));
    EXPECT_EQ(tokenize_13a("e-mail"), (Strings{"e-mail"}));  // a dash after a letter stays
}

TEST(TokenizeZh, EveryChineseCharacterIsAToken) {
    EXPECT_EQ(tokenize_zh("打开文件。"), (Strings{"打", "开", "文", "件", "。"}));
    EXPECT_EQ(tokenize_zh("GNOME 桌面，版本 3.2."), (Strings{"GNOME", "桌", "面", "，", "版", "本", "3.2."}));
    // 13a pads the line with spaces, so a final period after a digit is separated there but not in zh.
    EXPECT_EQ(tokenize_13a("version 3.2."), (Strings{"version", "3.2", "."}));
}

// sacreBLEU's table has '\u20000' and '\u2f800', which Python reads as two characters: its "Extension B" row really
// covers U+2001..U+2A6D (em dash, curly quotes, arrows) and Extension B (U+20000) is not split.
TEST(TokenizeZh, ReproducesSacrebleuRangeQuirk) {
    EXPECT_EQ(tokenize_zh("a—b"), (Strings{"a", "—", "b"}));
    EXPECT_EQ(tokenize_13a("a—b"), (Strings{"a—b"}));
    EXPECT_EQ(tokenize_zh("a\U00020000b"), (Strings{"a\U00020000b"}));
    EXPECT_FALSE(is_zh_tokenizer_char(0x2000));
    EXPECT_TRUE(is_zh_tokenizer_char(0x2001));
    EXPECT_TRUE(is_zh_tokenizer_char(0x2A6D));
    EXPECT_FALSE(is_zh_tokenizer_char(0x2A6E));
    EXPECT_FALSE(is_zh_tokenizer_char(0x20000));
}

TEST(Bleu, ChineseTokenizerScoresCharacters) {
    // Character 1..4-grams: "打开 文件" vs "打开文件" is perfect under zh, zero matches as whole words under 13a.
    EXPECT_NEAR(corpus_bleu({"打开 文件"}, {{"打开文件"}}, BleuTokenizer::Zh).score, 100.0, 1e-9);
    EXPECT_EQ(corpus_bleu({"打开 文件"}, {{"打开文件"}}, BleuTokenizer::Tok13a).score, 0.0);
}

TEST(Utf8, InvalidBytesBecomeOneReplacementPerMaximalSubpart) {
    EXPECT_EQ(utf8_to_u32("a\xe4\xb8z"), (std::u32string{U'a', 0xFFFD, U'z'}));  // truncated 3-byte sequence
    EXPECT_EQ(utf8_to_u32("\xff\x80"), (std::u32string{0xFFFD, 0xFFFD}));
    EXPECT_EQ(utf8_to_u32("中"), (std::u32string{0x4E2D}));
    EXPECT_EQ(u32_to_utf8(utf8_to_u32("中\U00020000")), "中\U00020000");
}

}  // namespace
}  // namespace ts::eval
