// Max-activating examples in the app and `render`: which corpus, where its index is cached, and the index built on a
// background thread with progress and cancel (core/interp/neurons.h builds it). GL-free.
#pragma once

#include "app/session/state.h"
#include "app/session/worker.h"
#include "core/interp/neurons.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

namespace ts::studio {

/// Contexts kept per neuron.
inline constexpr int kNeuronExamples = 16;
/// Tokens of a corpus the index reads at most (the first ones of the file).
inline constexpr int kNeuronCorpusTokens = 1'000'000;
/// Bytes of a corpus file read at most (enough for kNeuronCorpusTokens of English or Chinese).
inline constexpr size_t kNeuronCorpusBytes = size_t(16) << 20;

/// The corpus file of the examples: st.neuron_corpus when set; else the default models' training text where
/// `transformer-studio corpus build --out corpus/` puts it: corpus/corpus.txt under the current folder, under the
/// source tree of this build, or under $XDG_DATA_HOME/transformer-studio (~/.local/share). Throws
/// std::runtime_error saying how to get one when none exists, or that the chosen file does not.
[[nodiscard]] std::filesystem::path resolve_neuron_corpus(const UiState& st);
/// The same rule for any chooser: `chosen` when non-empty (it must exist), else the default corpus/corpus.txt.
[[nodiscard]] std::filesystem::path resolve_corpus_file(const std::string& chosen);
/// The English–Chinese pairs file: `chosen` when given (std::runtime_error when it does not exist), else
/// corpus/zh-en/train.tsv under the working folder, the source tree or $XDG_DATA_HOME; std::runtime_error saying how
/// to build it when none exists.
[[nodiscard]] std::filesystem::path resolve_pairs_file(const std::string& chosen);
/// $XDG_DATA_HOME/transformer-studio (~/.local/share/transformer-studio; ./.transformer-studio without a home).
[[nodiscard]] std::filesystem::path user_data_dir();

/// The first kNeuronCorpusTokens tokens of `file` (at most kNeuronCorpusBytes read, line by line, invalid UTF-8
/// replaced by U+FFFD), encoded without special tokens. Throws std::runtime_error naming the file when it cannot be
/// read or holds no token.
[[nodiscard]] std::vector<int> read_corpus_tokens(const std::filesystem::path& file, const TextCodec& codec,
                                                  const std::atomic<bool>* cancel = nullptr);

/// Where an index is cached: "<model folder>/neuron-index/" (a GGUF file: its folder) when that folder can be
/// written, else "$XDG_CACHE_HOME/transformer-studio/neuron-index/" (~/.cache); for the in-memory demo always the
/// latter.
[[nodiscard]] std::vector<std::filesystem::path> neuron_index_dirs(const LoadedModel& m);

/// An index and how it was obtained.
struct NeuronIndexResult {
    std::shared_ptr<const interp::NeuronIndex> index;
    std::string corpus;  ///< the corpus file
    std::string status;  ///< "read from <file>" / "built in 73 s over 1000000 tokens, saved to <file>"
    std::string error;   ///< non-empty when there is no index
    double seconds = 0;
};

/// Finds the cached index of (model, corpus, st.neuron_context) or, when `build`, builds and caches it. Never
/// throws: errors go to `error` (a cancelled build is not cached and says so). Without `build` and without a cached
/// index, `index` is null, `error` empty and `status` says how to build one. progress(fraction) in [0, 1].
[[nodiscard]] NeuronIndexResult obtain_neuron_index(const UiState& st, const LoadedModel& m,
                                                    const std::function<void(float)>& progress = {},
                                                    const std::atomic<bool>* cancel = nullptr, bool build = true);

/// One index job at a time on a background thread; poll() every frame.
class NeuronIndexJob {
public:
    ~NeuronIndexJob();
    /// Starts obtain_neuron_index with copies of the state and model (ignored, false, while one runs); `build`: may
    /// build the index (minutes), else only a cached one is read. `on_done` runs on the job thread at the end (the
    /// app: glfwPostEmptyEvent).
    bool start(const UiState& st, const LoadedModel& m, bool build, std::function<void()> on_done = {});
    [[nodiscard]] bool busy() const { return m_future.valid(); }
    [[nodiscard]] float progress() const { return m_progress ? m_progress->load() : 0.0f; }
    void cancel() {
        if (m_cancel) m_cancel->store(true);
    }
    /// Takes a finished result; true when one arrived this call.
    bool poll();
    /// The newest result (nullptr before the first).
    [[nodiscard]] std::shared_ptr<const NeuronIndexResult> latest() const { return m_latest; }
    void clear() { m_latest.reset(); }

private:
    std::future<NeuronIndexResult> m_future;
    std::shared_ptr<std::atomic<float>> m_progress;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    std::shared_ptr<const NeuronIndexResult> m_latest;
};

}  // namespace ts::studio
