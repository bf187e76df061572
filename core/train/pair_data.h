// Sentence pairs for encoder–decoder training: a pair corpus ("English<TAB>Chinese" lines, as written by
// `corpus build --parallel zh-en`) read into token-id examples for one direction or both (a target-language token
// first in the source, as in Johnson et al. 2017), and PairDataset, which cuts examples of similar length into
// batches within a token budget and shuffles the batch order every epoch (fairseq's batch_by_size), so little of a
// batch is padding.
#pragma once

#include "core/train/train_model.h"

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

namespace ts {
class Tokenizer;
}

namespace ts::train {

/// One training example. src: the whole encoder input; tgt: the target ending with the end token. The decoder
/// reads [start] + tgt[0..n-2] and predicts tgt[0..n-1].
struct PairExample {
    std::vector<int32_t> src, tgt;
    int64_t line = 0;   ///< 0-based line of the pair in its file (both directions of a pair share it)
};

enum class PairDirection { EnZh, ZhEn, Both };
[[nodiscard]] const char* to_string(PairDirection d);  // "en-zh" | "zh-en" | "both"
/// Throws std::invalid_argument naming the accepted values.
[[nodiscard]] PairDirection pair_direction_from_string(std::string_view s);

/// Token names of the pair format (every one a special token of the tokenizer).
inline constexpr const char* kPairEndToken = "<|endoftext|>";  ///< ends source and target; starts the decoder input
inline constexpr const char* kPairPadToken = "<pad>";          ///< fills padding positions
inline constexpr const char* kPairToEnToken = "<2en>";         ///< first source token of X -> English (Both)
inline constexpr const char* kPairToZhToken = "<2zh>";         ///< first source token of X -> Chinese (Both)

/// The pair format's token ids in one tokenizer; to_en / to_zh are -1 unless the direction is Both.
struct PairTokens {
    int32_t end = -1, pad = -1, to_en = -1, to_zh = -1;
};
/// Looks the tokens up. Throws std::invalid_argument naming the missing token and how to train a tokenizer with it
/// (`tokenizer train ... --special "<|endoftext|>,<pad>,<2en>,<2zh>"`).
[[nodiscard]] PairTokens find_pair_tokens(const Tokenizer& tok, PairDirection dir);

struct PairReadStats {
    int64_t lines = 0;       ///< non-empty lines read
    int64_t malformed = 0;   ///< lines without exactly one tab or with an empty side (skipped)
    int64_t too_long = 0;    ///< examples whose source or target exceeds max_len tokens (skipped)
    int64_t examples = 0;    ///< examples kept (two per line with Both)
};

/// Reads "English<TAB>Chinese" lines (UTF-8) and encodes both sides with special tokens in the text NOT matched.
/// For each kept pair and direction a -> b: src = [<2b>] (Both only) + encode(a) + [end], tgt = encode(b) + [end];
/// Both yields en -> zh then zh -> en for every line. Examples with more than max_len tokens on a side are skipped.
/// Throws std::runtime_error naming the file when it cannot be read or yields no example.
[[nodiscard]] std::vector<PairExample> read_pair_tsv(const std::filesystem::path& path, const Tokenizer& tok,
                                                     PairDirection dir, const PairTokens& ids, int max_len,
                                                     PairReadStats* stats = nullptr);

/// Batch limits: at most max_pairs pairs, and (when max_tokens > 0) at most max_tokens padded positions on the
/// longer side: B * max(S, T) <= max_tokens.
struct PairBatchOptions {
    int max_pairs = 64;
    int max_tokens = 0;
};

class PairDataset {
public:
    /// Sorts the train examples by (source length, target length), ties broken by a hash of (seed, index), and
    /// cuts them greedily into batches within `opt`; held-out examples likewise, without the random tie-break.
    /// Throws std::invalid_argument when train is empty, an example has an empty side or an id outside
    /// [0, vocab_size), pad_id or start_id is outside it, or max_pairs < 1.
    PairDataset(std::vector<PairExample> train, std::vector<PairExample> valid, int vocab_size, int32_t pad_id,
                int32_t start_id, PairBatchOptions opt, uint64_t seed);

    /// The batch of optimizer step `step`: epoch e = step / train_batches() visits every batch once, in an order
    /// shuffled by (seed, e) — a pure function of step, so resuming needs no iterator state. Right-padded with
    /// pad_id; targets -1 at padding.
    void train_batch(uint64_t step, PairBatch& out) const;
    /// Held-out batch i in [0, val_batches()), sorted by length.
    void val_batch(int i, PairBatch& out) const;

    [[nodiscard]] int train_batches() const { return int(m_train_batches.size()); }
    [[nodiscard]] int val_batches() const { return int(m_val_batches.size()); }
    [[nodiscard]] int64_t train_pairs() const { return int64_t(m_train.size()); }
    [[nodiscard]] int64_t val_pairs() const { return int64_t(m_valid.size()); }
    /// Tokens (source + target, no padding) in the train examples.
    [[nodiscard]] int64_t train_tokens() const { return m_train_tokens; }
    /// Longest source or target, in tokens (the model's max_seq_len must be at least this).
    [[nodiscard]] int max_len() const { return m_max_len; }
    /// Padding positions / all positions of the train batches, both sides together.
    [[nodiscard]] double padding_fraction() const { return m_padding_fraction; }
    /// FNV-1a hash of every example's ids (train and held-out), stored in checkpoints.
    [[nodiscard]] uint64_t fingerprint() const;

private:
    using Batch = std::vector<int32_t>;  // example indices
    std::vector<Batch> make_batches(const std::vector<PairExample>& ex, bool shuffle_ties) const;
    void fill(const std::vector<PairExample>& ex, const Batch& idx, PairBatch& out) const;

    std::vector<PairExample> m_train, m_valid;
    std::vector<Batch> m_train_batches, m_val_batches;
    int32_t m_pad = 0, m_start = 0;
    PairBatchOptions m_opt;
    uint64_t m_seed = 0;
    int64_t m_train_tokens = 0;
    int m_max_len = 0;
    double m_padding_fraction = 0;
};

}  // namespace ts::train
