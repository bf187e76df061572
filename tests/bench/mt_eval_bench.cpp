// Translation-evaluation benchmarks (single thread): the TF-IDF retrieval baseline (index build over 94k training
// sources, 1.9k queries: the sizes of the zh-en corpus) and corpus chrF / BLEU over 1.9k segments. Synthetic text
// with the corpus' shape (English-like words of 2-9 letters, ~7 words a message; Chinese-like strings of ~11
// characters from 3000 ideographs), or the real split when TS_PAIRS_DIR holds train.tsv and test.tsv.
#include "core/eval/mt_metrics.h"
#include "core/eval/retrieval.h"

#include <benchmark/benchmark.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

namespace {

struct Side {
    std::vector<std::string> train, test;
};

std::string synthetic_english(std::mt19937& rng) {
    static const char* const kSyllables[] = {"con", "fig", "ure", "file", "open", "save", "er", "ing", "ed", "s",
                                             "tion", "win", "dow", "se", "lect", "de", "lete", "print", "ad", "d"};
    std::string s;
    const int words = 3 + int(rng() % 9);
    for (int w = 0; w < words; ++w) {
        if (w) s += ' ';
        const int parts = 1 + int(rng() % 3);
        for (int p = 0; p < parts; ++p) s += kSyllables[rng() % 20];
    }
    return s;
}

std::string synthetic_chinese(std::mt19937& rng) {
    std::u32string u;
    const int n = 4 + int(rng() % 15);
    for (int i = 0; i < n; ++i) u.push_back(char32_t(0x4E00 + rng() % 3000));
    return ts::eval::u32_to_utf8(u);
}

/// side 0: English, 1: Chinese.
const Side& corpus(int side) {
    static const std::array<Side, 2> sides = [] {
        std::array<Side, 2> s;
        if (const char* dir = std::getenv("TS_PAIRS_DIR")) {
            for (const char* split : {"train", "test"}) {
                std::ifstream in(std::filesystem::path(dir) / (std::string(split) + ".tsv"));
                std::string line;
                while (std::getline(in, line)) {
                    const size_t tab = line.find('\t');
                    if (tab == std::string::npos) continue;
                    (split[1] == 'r' ? s[0].train : s[0].test).push_back(line.substr(0, tab));
                    (split[1] == 'r' ? s[1].train : s[1].test).push_back(line.substr(tab + 1));
                }
            }
            if (!s[0].train.empty()) return s;
        }
        std::mt19937 rng(7);
        for (int i = 0; i < 94000; ++i) s[0].train.push_back(synthetic_english(rng));
        for (int i = 0; i < 1950; ++i) s[0].test.push_back(synthetic_english(rng));
        for (int i = 0; i < 94000; ++i) s[1].train.push_back(synthetic_chinese(rng));
        for (int i = 0; i < 1950; ++i) s[1].test.push_back(synthetic_chinese(rng));
        return s;
    }();
    return sides[size_t(side)];
}

ts::eval::CharNgramOptions options(int side) {
    return side == 0 ? ts::eval::english_ngram_options() : ts::eval::chinese_ngram_options();
}

void BM_RetrievalIndexBuild(benchmark::State& state) {
    const Side& c = corpus(int(state.range(0)));
    for (auto _ : state) {
        const ts::eval::CharNgramIndex idx(c.train, options(int(state.range(0))));
        benchmark::DoNotOptimize(idx.n_postings());
    }
    state.SetLabel(state.range(0) == 0 ? "English 2-4-grams" : "Chinese 1-3-grams");
}
BENCHMARK(BM_RetrievalIndexBuild)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_RetrievalAllQueries(benchmark::State& state) {
    const Side& c = corpus(int(state.range(0)));
    const ts::eval::CharNgramIndex idx(c.train, options(int(state.range(0))));
    for (auto _ : state)
        for (const std::string& q : c.test) benchmark::DoNotOptimize(idx.best_match(q).doc);
    state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(c.test.size()));
    state.SetLabel(state.range(0) == 0 ? "English 2-4-grams" : "Chinese 1-3-grams");
}
BENCHMARK(BM_RetrievalAllQueries)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_CorpusChrfBleu(benchmark::State& state) {
    const Side& c = corpus(int(state.range(0)));
    const std::vector<std::string> hyps(c.train.begin(), c.train.begin() + long(c.test.size()));
    for (auto _ : state) {
        benchmark::DoNotOptimize(ts::eval::corpus_chrf(hyps, {c.test}));
        benchmark::DoNotOptimize(ts::eval::corpus_bleu(
            hyps, {c.test}, state.range(0) == 0 ? ts::eval::BleuTokenizer::Tok13a : ts::eval::BleuTokenizer::Zh));
    }
    state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(c.test.size()));
}
BENCHMARK(BM_CorpusChrfBleu)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
