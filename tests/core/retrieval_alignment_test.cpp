// The translation-memory baseline (character n-gram TF-IDF cosine) on a hand-made corpus, and the cross-attention
// alignment hit rate on hand-made attention tensors.
#include "core/eval/alignment_hits.h"
#include "core/eval/retrieval.h"

#include <gtest/gtest.h>

#include "tests/test_util.h"

#include <cmath>
#include <fstream>
#include <map>

namespace ts::eval {
namespace {

// --- retrieval ----------------------------------------------------------------------------------------------------

TEST(CharNgrams, WordBoundariesAndWhitespace) {
    EXPECT_EQ(char_ngrams("Ab  c", {2, 2, true, true}), (std::vector<std::string>{" a", "ab", "b ", " c", "c "}));
    EXPECT_EQ(char_ngrams("打开 文件", {1, 2, true, false}),
              (std::vector<std::string>{"打", "开", "文", "件", "打开", "开文", "文件"}));
    EXPECT_TRUE(char_ngrams("   ", english_ngram_options()).empty());
    EXPECT_THROW((void)char_ngrams("x", {0, 2, true, true}), std::invalid_argument);
}

TEST(Retrieval, FindsTheMostSimilarSourceEnglish) {
    const std::vector<std::string> docs = {"Open file", "Save file", "Close the window", "Open a new window",
                                           "Print document"};
    const CharNgramIndex idx(docs, english_ngram_options());
    EXPECT_EQ(idx.n_docs(), 5);
    EXPECT_EQ(idx.best_match("Open the file").doc, 0);
    EXPECT_EQ(idx.best_match("close window").doc, 2);
    EXPECT_EQ(idx.best_match("PRINT DOCUMENTS").doc, 4);  // case-folded
    const RetrievalMatch same = idx.best_match("Save file");
    EXPECT_EQ(same.doc, 1);
    EXPECT_NEAR(same.cosine, 1.0, 1e-6);
    EXPECT_EQ(idx.best_match("zzz").doc, -1);  // nothing shared
    EXPECT_EQ(idx.best_match("").doc, -1);
}

TEST(Retrieval, IdfPrefersRareSharedNgrams) {
    // "file" is in three documents, "printer" in one: a query sharing "file" with doc 0..2 and "printer" with doc 3
    // goes to doc 3 although it shares as many characters with the others.
    const std::vector<std::string> docs = {"file a", "file b", "file c", "printer"};
    const CharNgramIndex idx(docs, {1, 3, true, false});
    EXPECT_EQ(idx.best_match("fileprinter").doc, 3);
    EXPECT_EQ(idx.best_match("打开").doc, -1);
}

TEST(Retrieval, CosineMatchesABruteForceTfIdf) {
    const std::vector<std::string> docs = {"打开文件", "保存文件", "关闭窗口", "打开新窗口", "文件文件打印"};
    const CharNgramOptions opt = chinese_ngram_options();
    const CharNgramIndex idx(docs, opt);
    // Brute force with the documented formulas.
    const double n = double(docs.size());
    std::map<std::string, int> df;
    std::vector<std::map<std::string, int>> tf(docs.size());
    for (size_t d = 0; d < docs.size(); ++d) {
        for (const std::string& g : char_ngrams(docs[d], opt)) ++tf[d][g];
        for (const auto& [g, c] : tf[d]) ++df[g];
    }
    const auto idf = [&](const std::string& g) {
        const auto it = df.find(g);
        return std::log((1 + n) / (1 + (it == df.end() ? 0 : it->second))) + 1;
    };
    const std::string query = "打开文件窗口";
    std::map<std::string, int> qtf;
    for (const std::string& g : char_ngrams(query, opt)) ++qtf[g];
    double best = -1;
    int best_doc = -1;
    for (size_t d = 0; d < docs.size(); ++d) {
        double dot = 0, nd = 0, nq = 0;
        for (const auto& [g, c] : tf[d]) nd += std::pow(c * idf(g), 2);
        for (const auto& [g, c] : qtf) {
            nq += std::pow(c * idf(g), 2);
            if (tf[d].count(g)) dot += c * idf(g) * tf[d].at(g) * idf(g);
        }
        const double cos = dot / std::sqrt(nd * nq);
        if (cos > best) best = cos, best_doc = int(d);
    }
    const RetrievalMatch m = idx.best_match(query);
    EXPECT_EQ(m.doc, best_doc);
    EXPECT_NEAR(m.cosine, best, 1e-6);
}

// --- alignment hits -----------------------------------------------------------------------------------------------

/// (n_heads, T, S) with every row one-hot at argmax[h][t] (weight 0.7, the rest spread evenly).
Tensor one_hot_probs(const std::vector<std::vector<int>>& argmax, int S) {
    const int H = int(argmax.size()), T = int(argmax[0].size());
    Tensor p({H, T, S});
    for (int h = 0; h < H; ++h)
        for (int t = 0; t < T; ++t)
            for (int s = 0; s < S; ++s)
                p.data[size_t((h * T + t) * S + s)] = s == argmax[size_t(h)][size_t(t)] ? 0.7f : 0.3f / float(S - 1);
    return p;
}

TEST(AlignmentHits, CountsArgmaxInLinksPerHeadAndLayerAverage) {
    // S = 5 source positions, T = 4 decoder positions (3 target tokens + the end token's step).
    // Links: token 0 -> {1}, token 1 -> NULL (skipped), token 2 -> {2, 3}. The end token (j = 3) has no entry.
    const PairLinks links = {{1}, {}, {2, 3}};
    // Layer 0: heads 0 and 2 hit both counted tokens (token 2 at position 2), head 1 only token 2 (3 is a link too).
    const Tensor l0 = one_hot_probs({{1, 4, 2, 0}, {0, 1, 3, 0}, {1, 1, 2, 0}}, 5);
    // Layer 1: every head looks at position 4 (the end token) except head 1 on token 0.
    const Tensor l1 = one_hot_probs({{4, 4, 4, 4}, {1, 4, 4, 4}, {4, 4, 4, 4}}, 5);
    AlignmentHitCounter c(2, 3);
    c.add({&l0, &l1}, links);
    EXPECT_EQ(c.counted(), 2);
    EXPECT_DOUBLE_EQ(c.rate(0, 0), 1.0);
    EXPECT_DOUBLE_EQ(c.rate(0, 1), 0.5);
    EXPECT_DOUBLE_EQ(c.rate(0, 2), 1.0);
    EXPECT_DOUBLE_EQ(c.rate(1, 0), 0.0);
    EXPECT_DOUBLE_EQ(c.rate(1, 1), 0.5);
    // Head averages: layer 0 peaks at 1 (token 0) and 2 (token 2), two heads each: hits; layer 1 at 4: misses.
    EXPECT_DOUBLE_EQ(c.rate(0, -1), 1.0);
    EXPECT_DOUBLE_EQ(c.rate(1, -1), 0.0);
    EXPECT_EQ(c.best_head().layer, 0);
    EXPECT_EQ(c.best_head().head, 0);
    EXPECT_EQ(c.best_layer_average().layer, 0);
    EXPECT_NEAR(c.chance_rate(), (1.0 / 5 + 2.0 / 5) / 2, 1e-12);

    // Shift 1 reads token j at query j + 1: token 0 at t = 1, token 2 at t = 3.
    AlignmentHitCounter shifted(2, 3);
    shifted.add({&l0, &l1}, links, 1);
    EXPECT_EQ(shifted.counted(), 2);
    EXPECT_DOUBLE_EQ(shifted.rate(0, 1), 0.5);  // t = 1 -> 1 (hit), t = 3 -> 0 (miss)
    EXPECT_DOUBLE_EQ(shifted.rate(0, 0), 0.0);  // t = 1 -> 4, t = 3 -> 0
    EXPECT_DOUBLE_EQ(shifted.rate(0, 2), 0.5);

    // A second pair accumulates.
    c.add({&l0, &l1}, {{0}}, 0);  // at t = 0 head 0 looks at 1, head 1 at 0
    EXPECT_EQ(c.counted(), 3);
    EXPECT_DOUBLE_EQ(c.rate(0, 0), 2.0 / 3);
    EXPECT_DOUBLE_EQ(c.rate(0, 1), 2.0 / 3);
}

TEST(AlignmentHits, HeadAverageTieGoesToTheLowestPosition) {
    const Tensor p = one_hot_probs({{2}, {1}}, 3);  // mean over the two heads: positions 1 and 2 tie
    AlignmentHitCounter to1(1, 2), to2(1, 2);
    to1.add({&p}, {{1}});
    to2.add({&p}, {{2}});
    EXPECT_DOUBLE_EQ(to1.rate(0, -1), 1.0);
    EXPECT_DOUBLE_EQ(to2.rate(0, -1), 0.0);
    EXPECT_DOUBLE_EQ(to2.rate(0, 0), 1.0);
}

TEST(AlignmentHits, RefusesMismatchedInput) {
    const Tensor a = one_hot_probs({{0, 1}, {1, 0}}, 3);
    const Tensor b = one_hot_probs({{0, 1, 2}, {1, 0, 0}}, 3);
    AlignmentHitCounter c(2, 2);
    EXPECT_THROW(c.add({&a}, {{0}}), std::invalid_argument);          // one layer missing
    EXPECT_THROW(c.add({&a, &b}, {{0}}), std::invalid_argument);      // T differs
    EXPECT_THROW(c.add({&a, &a}, {{3}}), std::invalid_argument);      // link outside [0, S)
    EXPECT_THROW(AlignmentHitCounter(0, 2), std::invalid_argument);
    EXPECT_THROW((void)c.rate(2, 0), std::out_of_range);
}

// --- alignment files ----------------------------------------------------------------------------------------------

// Values printed by assets/corpus/ibm1_align.py's fnv1a() (ids as little-endian int32 bytes, 64-bit FNV-1a).
TEST(AlignmentFile, HashMatchesTheScript) {
    EXPECT_EQ(fnv1a_ids({1, 2, 3}), 0xfd1f0f4381eb0395ull);
    EXPECT_EQ(fnv1a_ids({}), 0xcbf29ce484222325ull);
    EXPECT_EQ(fnv1a_ids({8191, 300}), 0x58247809b44e989cull);
}

void write_file(const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
}

TEST(AlignmentFile, ReadsRecordsAndRefusesBadOnes) {
    const test::TempDir dir("ts_align_file");
    const std::string header = R"({"format": "ts-ibm1-alignments-1", "source_prefix": 1})" "\n";
    const std::filesystem::path good = dir.path / "good.jsonl";
    write_file(good, header +
                         R"({"line":4,"direction":"en-zh","src_len":5,"tgt_len":3,"src_fnv1a":"fd1f0f4381eb0395",)"
                         R"("tgt_fnv1a":"cbf29ce484222325","align":[1,-1,3]})" "\n");
    const AlignmentFile f = load_alignment_file(good);
    EXPECT_EQ(f.source_prefix, 1);
    ASSERT_EQ(f.records.size(), 1u);
    const AlignmentRecord& r = f.records.at({4, "en-zh"});
    EXPECT_EQ(r.src_fnv1a, 0xfd1f0f4381eb0395ull);
    EXPECT_EQ(r.align, (std::vector<int>{1, -1, 3}));
    EXPECT_EQ(links_of(r), (PairLinks{{1}, {}, {3}}));

    const auto refuses = [&](const std::string& text, const std::string& needle) {
        const std::filesystem::path p = dir.path / "bad.jsonl";
        write_file(p, text);
        try {
            (void)load_alignment_file(p);
            ADD_FAILURE() << "accepted: " << text;
        } catch (const std::runtime_error& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    refuses(R"({"format": "other"})" "\n", "ts-ibm1-alignments-1");
    refuses(header + R"({"line":0,"direction":"en-zh","src_len":2,"tgt_len":1,"src_fnv1a":"0","tgt_fnv1a":"0",)"
                     R"("align":[2]})" "\n", "outside [-1, 2)");
    refuses(header + R"({"line":0,"direction":"en-zh","src_len":2,"tgt_len":2,"src_fnv1a":"0","tgt_fnv1a":"0",)"
                     R"("align":[1]})" "\n", "tgt_len is 2");
    refuses(header + "not json\n", ":2: not a JSON object");
    refuses(header + R"({"line":0})" "\n", "bad record");
    refuses("", "is empty");
    EXPECT_THROW((void)load_alignment_file(dir.path / "missing.jsonl"), std::runtime_error);
}

}  // namespace
}  // namespace ts::eval
