// Byte-level BPE training (Sennrich et al. 2016 applied to bytes as in GPT-2; what Hugging Face's BpeTrainer does):
// start from the 256 bytes, count pre-tokenized words, repeatedly merge the most frequent adjacent pair.
// Pair counts are updated incrementally (only words containing the merged pair are touched) with a max-heap whose
// stale entries are re-queued lazily, so an 8192-token vocabulary on a few MB of text takes seconds.
#pragma once

#include "core/tokenizer/bpe.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ts {

struct BpeTrainProgress {
    size_t merges_done = 0;      // merges learned so far
    size_t merges_target = 0;    // merges needed to reach vocab_size
    int64_t last_count = 0;      // occurrences (weighted by word frequency) of the pair merged last
    std::string last_token;      // the token made by the last merge, byte-level spelling ("Ġthe")
    double seconds = 0.0;        // since train() started
};

struct BpeTrainOptions {
    /// Final vocabulary size: 256 byte tokens + merges + special tokens. Must be >= 256 + special_tokens.size().
    int32_t vocab_size = 8192;
    /// A pair must occur at least this often (summed over the corpus) to be merged; training stops earlier
    /// (smaller vocabulary) when no pair is frequent enough.
    int64_t min_frequency = 2;
    /// Added tokens, cut out of the training text before counting and given the last ids, in this order.
    std::vector<std::string> special_tokens{"<|endoftext|>"};
    /// Pre-tokenizer pipeline (see PreTokenizer); GPT-2's pattern by default.
    std::vector<std::string> patterns{kGpt2Pattern};
    /// on_progress is called every `progress_every` merges and once at the end (0 = only at the end).
    size_t progress_every = 1000;
    std::function<void(const BpeTrainProgress&)> on_progress;
};

/// Token ids of a trained tokenizer: 0..255 are the single bytes, ordered by their GPT-2 byte-level character
/// (so id 0 is "!", as in GPT-2); 256.. are merges in the order learned; then the special tokens.
/// Tie rule: among pairs with the same count, the one whose (left token bytes, right token bytes) sorts first
/// (unsigned byte-wise, left compared before right) is merged. Training is deterministic.
class BpeTrainer {
public:
    /// Throws std::invalid_argument for a vocab_size too small, an empty or repeated special token, a bad pattern.
    explicit BpeTrainer(BpeTrainOptions opt);

    /// Counts the words of one text (a document or a file's content); may be called many times.
    void add_text(std::string_view text);

    [[nodiscard]] size_t unique_words() const { return m_word_counts.size(); }
    [[nodiscard]] uint64_t total_words() const { return m_total_words; }

    /// Learns the merges from everything added so far.
    [[nodiscard]] std::shared_ptr<const Tokenizer> train() const;

private:
    BpeTrainOptions m_opt;
    PreTokenizer m_pretok;
    std::unordered_map<std::string, int64_t> m_word_counts;
    uint64_t m_total_words = 0;
};

/// Convenience: a BpeTrainer fed with every text, then trained.
[[nodiscard]] std::shared_ptr<const Tokenizer> train_bpe(std::span<const std::string> texts,
                                                         const BpeTrainOptions& opt);

}  // namespace ts
