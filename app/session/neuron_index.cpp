// The corpus, cache and background job of the neurons' max-activating examples (see neuron_index.h).
#include "app/session/neuron_index.h"

#include "app/i18n/tr.h"
#include "app/session/text_codec.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace ts::studio {

namespace fs = std::filesystem;

namespace {

fs::path xdg_dir(const char* var, const char* fallback) {
    if (const char* x = std::getenv(var); x && *x) return fs::path(x) / "transformer-studio";
    if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / fallback / "transformer-studio";
    return fs::path(".transformer-studio");
}

bool writable_dir(const fs::path& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    return fs::is_directory(dir, ec) && ::access(dir.c_str(), W_OK) == 0;
}

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", s);
    return buf;
}

}  // namespace

fs::path user_data_dir() { return xdg_dir("XDG_DATA_HOME", ".local/share"); }

fs::path resolve_neuron_corpus(const UiState& st) { return resolve_corpus_file(st.neuron_corpus); }

fs::path resolve_corpus_file(const std::string& chosen) {
    std::error_code ec;
    if (!chosen.empty()) {
        const fs::path p(chosen);
        if (!fs::is_regular_file(p, ec)) throw std::runtime_error("corpus file " + chosen + " does not exist");
        return p;
    }
    const fs::path candidates[] = {fs::path("corpus") / "corpus.txt", fs::path(TS_SOURCE_DIR) / "corpus" / "corpus.txt",
                                   xdg_dir("XDG_DATA_HOME", ".local/share") / "corpus" / "corpus.txt"};
    for (const fs::path& c : candidates)
        if (fs::is_regular_file(c, ec)) return c;
    throw std::runtime_error(
        "no English corpus: build the default models' training text with "
        "'transformer-studio corpus build --out corpus/', or choose a text file");
}

fs::path resolve_pairs_file(const std::string& chosen) {
    std::error_code ec;
    if (!chosen.empty()) {
        if (!fs::is_regular_file(chosen, ec)) throw std::runtime_error("pairs file " + chosen + " does not exist");
        return chosen;
    }
    const fs::path rel = fs::path("corpus") / "zh-en" / "train.tsv";
    for (const fs::path& c : {rel, fs::path(TS_SOURCE_DIR) / rel, xdg_dir("XDG_DATA_HOME", ".local/share") / rel})
        if (fs::is_regular_file(c, ec)) return c;
    throw std::runtime_error(
        "no English-Chinese pairs: build them with 'transformer-studio corpus build --parallel zh-en --out "
        "corpus/zh-en', or choose a pairs file");
}

std::vector<int> read_corpus_tokens(const fs::path& file, const TextCodec& codec, const std::atomic<bool>* cancel) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read corpus file " + file.string());
    std::vector<int> ids, piece;
    std::vector<std::pair<size_t, size_t>> spans;
    std::string line;
    size_t bytes = 0;
    while (ids.size() < size_t(kNeuronCorpusTokens) && bytes < kNeuronCorpusBytes && std::getline(in, line)) {
        if (cancel && cancel->load()) break;
        bytes += line.size() + 1;
        line += '\n';
        if (!is_valid_utf8(line)) line = sanitize_utf8(line);
        piece.clear();
        codec.encode(line, piece, spans, false);
        ids.insert(ids.end(), piece.begin(), piece.end());
    }
    if (in.bad()) throw std::runtime_error("cannot read corpus file " + file.string());
    if (ids.size() > size_t(kNeuronCorpusTokens)) ids.resize(size_t(kNeuronCorpusTokens));
    if (ids.empty()) throw std::runtime_error("corpus file " + file.string() + " holds no text");
    return ids;
}

std::vector<fs::path> neuron_index_dirs(const LoadedModel& m) {
    std::vector<fs::path> dirs;
    if (!m.path.empty()) {
        std::error_code ec;
        const fs::path p(m.path);
        dirs.push_back((fs::is_directory(p, ec) ? p : p.parent_path()) / "neuron-index");
    }
    dirs.push_back(xdg_dir("XDG_CACHE_HOME", ".cache") / "neuron-index");
    return dirs;
}

NeuronIndexResult obtain_neuron_index(const UiState& st, const LoadedModel& m,
                                      const std::function<void(float)>& progress, const std::atomic<bool>* cancel,
                                      bool build) {
    NeuronIndexResult r;
    const auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    try {
        if (!m.model || !m.codec) throw std::runtime_error("no model loaded");
        if (m.codec->ids_only()) throw std::runtime_error("this model has no tokenizer to read a corpus with");
        const fs::path corpus = resolve_neuron_corpus(st);
        r.corpus = corpus.string();
        const std::vector<int> ids = read_corpus_tokens(corpus, *m.codec, cancel);
        if (cancel && cancel->load()) throw std::runtime_error("cancelled");
        interp::NeuronIndexOptions opt;
        opt.context = st.neuron_context;
        opt.top_k = kNeuronExamples;
        const std::string name =
            interp::neuron_index_file_name(interp::model_fingerprint(*m.model), interp::tokens_fingerprint(ids), opt);
        std::error_code ec;
        for (const fs::path& dir : neuron_index_dirs(m)) {
            const fs::path file = dir / name;
            if (!fs::is_regular_file(file, ec)) continue;
            try {
                r.index = std::make_shared<const interp::NeuronIndex>(interp::load_neuron_index(file));
                r.status = trf("read from %s", file.string().c_str());
                r.seconds = elapsed();
                return r;
            } catch (const std::exception&) {
                // unreadable: rebuilt below and written over
            }
        }
        if (!build) {
            r.status =
                tr("no index of this corpus for this model yet: \"Build the index\" runs every chunk through the "
                   "model once (a few minutes for a million tokens on two cores)");
            r.seconds = elapsed();
            return r;
        }
        opt.cancel = cancel;
        opt.progress = [&](int done, int total) {
            if (progress && total > 0) progress(float(done) / float(total));
        };
        auto ix = std::make_shared<interp::NeuronIndex>(interp::build_neuron_index(*m.model, ids, opt));
        if (ix->cancelled)
            throw std::runtime_error("cancelled after " + std::to_string(ix->chunks_done) + " of " +
                                     std::to_string(ix->n_chunks()) + " chunks");
        r.seconds = elapsed();
        r.status = trf("built in %s over %d tokens", seconds_text(r.seconds).c_str(), int(ix->tokens.size()));
        std::string why_not;
        bool saved = false;
        for (const fs::path& dir : neuron_index_dirs(m)) {
            if (!writable_dir(dir)) continue;
            try {
                interp::save_neuron_index(dir / name, *ix);
                r.status += trf(", saved to %s", (dir / name).string().c_str());
                saved = true;
                break;
            } catch (const std::exception& e) {
                why_not = e.what();
            }
        }
        if (!saved) r.status += std::string(tr(", not cached")) + (why_not.empty() ? std::string() : ": " + why_not);
        r.index = std::move(ix);
    } catch (const std::exception& e) {
        r.error = e.what();
    }
    r.seconds = elapsed();
    return r;
}

NeuronIndexJob::~NeuronIndexJob() {
    cancel();
    if (m_future.valid()) m_future.wait();
}

bool NeuronIndexJob::start(const UiState& st, const LoadedModel& m, bool build, std::function<void()> on_done) {
    if (busy()) return false;
    m_progress = std::make_shared<std::atomic<float>>(0.0f);
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_future = std::async(std::launch::async,
                          [st, m, build, prog = m_progress, cancel = m_cancel, on_done = std::move(on_done)] {
                              NeuronIndexResult r = obtain_neuron_index(
                                  st, m, [prog](float f) { prog->store(f); }, cancel.get(), build);
                              if (on_done) on_done();
                              return r;
                          });
    return true;
}

bool NeuronIndexJob::poll() {
    if (!m_future.valid() || m_future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
    m_latest = std::make_shared<const NeuronIndexResult>(m_future.get());
    return true;
}

}  // namespace ts::studio
