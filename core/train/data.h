// Token streams for training: the binary token file (our cache of a tokenized corpus), a train/held-out split
// (the held-out part is the tail of the stream) and seeded random windows per batch element.
//
// Token file format (DIR/tokens.bin, little-endian): 8 bytes magic "TSTOKENS", uint32 version (1), uint32 bytes per
// id (2 = uint16, 4 = int32), then the ids. A file without the magic is read as raw uint16 ids (nanoGPT's .bin).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

namespace ts::train {

/// Writes ids (uint16 when every id < 65536, else int32) atomically (temp file + rename). Throws
/// std::runtime_error on I/O failure, std::invalid_argument on a negative id.
void save_tokens(const std::filesystem::path& path, std::span<const int32_t> ids);
/// Reads a token file (see format above). Throws std::runtime_error naming the path and the problem.
[[nodiscard]] std::vector<int32_t> load_tokens(const std::filesystem::path& path);

/// A token stream split into train (head) and held-out (tail: the last val_fraction of tokens) parts.
class TokenDataset {
public:
    /// Throws std::invalid_argument when the train part holds fewer than seq_len + 1 tokens, or an id is outside
    /// [0, vocab_size).
    TokenDataset(std::vector<int32_t> tokens, int vocab_size, int seq_len, double val_fraction);

    /// Batch for optimizer step `step`: B windows of T + 1 tokens at uniform random offsets of the train part
    /// (a pure function of seed and step). inputs/targets: (B, T) row-major, targets = inputs shifted by one.
    /// With probability repeat_fraction a window is a real-text span of `repeat_period` tokens repeated until the
    /// window is full: a repeated passage, where every later copy is predictable by copying — the training signal
    /// that makes induction heads form (Olsson et al. 2022) within a small token budget. repeat_period 0 draws the
    /// span length per window uniformly from [8, ceil((T+1)/2)], so that copying cannot be learned as a fixed
    /// positional offset and must match content (an induction head). A share repeat_random of those repeated spans
    /// are i.i.d. tokens drawn from the train stream instead of a passage.
    void sample_batch(uint64_t seed, uint64_t step, int B, std::vector<int>& inputs, std::vector<int>& targets,
                      double repeat_fraction = 0.0, int repeat_period = 0, double repeat_random = 0.0) const;
    /// Held-out windows: consecutive non-overlapping windows of T + 1 tokens from the tail. Returns the number of
    /// windows placed (rows of inputs/targets), at most B, starting at window first_window.
    int val_batch(int first_window, int B, std::vector<int>& inputs, std::vector<int>& targets) const;
    [[nodiscard]] int val_windows() const;

    [[nodiscard]] int seq_len() const { return m_T; }
    [[nodiscard]] int64_t size() const { return int64_t(m_tokens.size()); }
    [[nodiscard]] int64_t train_size() const { return m_n_train; }
    [[nodiscard]] int64_t val_size() const { return size() - m_n_train; }
    /// FNV-1a hash of the ids, stored in checkpoints to refuse resuming on different data.
    [[nodiscard]] uint64_t fingerprint() const;

private:
    std::vector<int32_t> m_tokens;
    int64_t m_n_train = 0;
    int m_T = 0;
};

}  // namespace ts::train
