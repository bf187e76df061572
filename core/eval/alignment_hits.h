// How well cross-attention points at the source token a target token translates: the "alignment hit rate" of each
// decoder layer and head, the fraction of target tokens whose cross-attention arg-max over source positions is one
// of the reference-aligned source positions (for an IBM Model 1 reference: Brown et al. 1993; attention-as-alignment
// as evaluated by Garg et al. 2019 "Jointly Learning to Align and Translate with Transformer Models", and with the
// query shifted by one step as in Chen et al. 2020 "Accurate Word Alignment Induction from Neural Machine
// Translation").
#pragma once

#include "core/util/hash.h"

#include "core/model/tensor.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ts::eval {

/// links[j] for target token j (index into the target ids the decoder predicts, the end token excluded): the
/// positions in the encoder input (the model's own source sequence, <2xx> at 0 for "both" models) aligned to it;
/// empty = aligned to NULL (such tokens are skipped).
using PairLinks = std::vector<std::vector<int>>;

struct HeadHitRate {
    int layer = -1, head = -1;   ///< head == -1: the layer's head-averaged attention
    double rate = 0;             ///< hits / counted target tokens, in [0, 1]
};

/// Accumulates hits over sentence pairs. Per layer l, the counter keeps n_heads per-head counts and one for the
/// head-averaged attention of the layer (mean over heads of the probabilities, then the arg-max).
class AlignmentHitCounter {
public:
    /// Throws std::invalid_argument unless n_layers >= 1 and n_heads >= 1.
    AlignmentHitCounter(int n_layers, int n_heads);

    /// cross_probs[l]: decoder layer l's cross-attention probabilities (n_heads, T, S) of a teacher-forced forward
    /// whose decoder input is [start] + target[0 .. T-2], so query t predicts target[t] (trace name
    /// "dec.<l>.cross_attn.probs"). Target token j is read at query j + shift: shift 0 is the step that produces
    /// token j, shift 1 the step that reads it as input (Chen et al.'s Shift-Att). Tokens whose query falls outside
    /// [0, T) are skipped. Arg-max ties go to the lowest source position.
    /// Throws std::invalid_argument when cross_probs does not hold n_layers tensors of one shape (n_heads, T, S) or a
    /// link is outside [0, S).
    void add(const std::vector<const Tensor*>& cross_probs, const PairLinks& links, int shift = 0);

    [[nodiscard]] int64_t counted() const { return m_counted; }   ///< target tokens scored (non-NULL, in range)
    [[nodiscard]] double rate(int layer, int head) const;          ///< head = -1: the layer's head-averaged attention
    /// The expected rate of an arg-max drawn uniformly over the S source positions: mean of |links[j]| / S.
    [[nodiscard]] double chance_rate() const { return m_counted ? m_chance / double(m_counted) : 0.0; }
    [[nodiscard]] HeadHitRate best_head() const;          ///< over single heads (the first on ties)
    [[nodiscard]] HeadHitRate best_layer_average() const;  ///< over the layers' head-averaged attention
    [[nodiscard]] int n_layers() const { return m_n_layers; }
    [[nodiscard]] int n_heads() const { return m_n_heads; }

private:
    int m_n_layers, m_n_heads;
    std::vector<int64_t> m_hits;  // (n_layers, n_heads + 1): the last column is the head average
    int64_t m_counted = 0;
    double m_chance = 0;
};

// --- reference alignment files (assets/corpus/ibm1_align.py, format "ts-ibm1-alignments-1") -----------------------

/// One record: a test pair in one direction, positions already in the model's encoder input.
struct AlignmentRecord {
    int src_len = 0;          ///< whole encoder input length ([<2xx>] + source tokens + [end])
    int tgt_len = 0;          ///< target text tokens (the end token is not aligned)
    uint64_t src_fnv1a = 0, tgt_fnv1a = 0;  ///< of the source / target text ids (fnv1a_ids)
    std::vector<int> align;   ///< per target token: encoder-input position, or -1 (NULL)
};

struct AlignmentFile {
    int source_prefix = 0;
    /// (0-based line in the pair file, direction "en-zh" | "zh-en") -> record
    std::map<std::pair<int64_t, std::string>, AlignmentRecord> records;
};

/// Reads a JSON-lines alignment file. Throws std::runtime_error naming the file and line when it cannot be read, the
/// header is not format "ts-ibm1-alignments-1", or a record is malformed (align of another length than tgt_len, a
/// position outside [-1, src_len)).
[[nodiscard]] AlignmentFile load_alignment_file(const std::filesystem::path& path);

/// 64-bit FNV-1a of token ids as little-endian int32 bytes (what ibm1_align.py stores to detect another tokenizer).
using ts::fnv1a_ids;  // core/util/hash.h

/// The record's links in PairLinks form (one link or none per target token).
[[nodiscard]] PairLinks links_of(const AlignmentRecord& r);

}  // namespace ts::eval
