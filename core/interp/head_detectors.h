// Head detectors: a score per attention head for how much of its attention goes where a head of a known kind looks
// (TransformerLens head_detector.detect_head with error_measure "mul"; Olsson et al. 2022 for induction heads; Xiao
// et al. 2023 for attention sinks). Scores are shares of attention, 0..1, one per (layer, head).
#pragma once

#include "core/interp/interp_common.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ts {
class Trace;
}

namespace ts::interp {

/// The kinds of head the detector scores.
///   PreviousToken   query i attends to key i − 1
///   DuplicateToken  query i attends to an earlier key j < i holding the same token
///   Induction       query i attends to the key just after an earlier copy of its token (key j, ids[j − 1] = ids[i])
///   FirstToken      query i attends to key 0 (an "attention sink")
enum class HeadKind { PreviousToken, DuplicateToken, Induction, FirstToken };
inline constexpr std::array<HeadKind, 4> kHeadKinds = {HeadKind::PreviousToken, HeadKind::DuplicateToken,
                                                       HeadKind::Induction, HeadKind::FirstToken};
/// "previous-token", "duplicate-token", "induction", "first-token".
[[nodiscard]] std::string_view name_of(HeadKind kind);
/// The kind named `name` (name_of's spelling); nullopt for another name.
[[nodiscard]] std::optional<HeadKind> parse_head_kind(std::string_view name);

/// The (T, T) 0/1 detection pattern of a kind for the token ids of a text (T = ids.size()), lower triangular:
/// TransformerLens get_previous_token / get_duplicate_token / get_induction_head_detection_pattern; FirstToken has
/// column 0 set in rows 1..T−1.
[[nodiscard]] MatrixRM detection_pattern(HeadKind kind, const std::vector<int>& ids);

struct DetectOptions {
    bool exclude_bos = false;            ///< zero the attention on key 0 first (TransformerLens exclude_bos)
    bool exclude_current_token = false;  ///< zero the attention on the query's own key first (exclude_current_token)
};

/// One head's score: sum(A ∘ P) / sum(A) over its (T, T) attention A after the exclusions (TransformerLens
/// compute_head_attention_similarity_score, "mul"); 0 when nothing is left of A. For FirstToken the exclusions do
/// not apply and the score is the mean of A[i, 0] over queries i = 1..T−1 (query 0 can attend to nothing else).
/// Throws std::invalid_argument when A or P is not (T, T) for one T.
[[nodiscard]] float head_score(const Eigen::Ref<const MatrixRM>& attn, HeadKind kind, const MatrixRM& pattern,
                               const DetectOptions& opt = {});

/// Scores of every head, (n_layers, n_heads), from a trace holding "<stack>.<l>.attn.probs" (H, T, T) of the
/// forward of `ids`. Throws std::invalid_argument naming the tensor when one is missing or not (H, T, T) with
/// T = ids.size(), and when T < 2.
[[nodiscard]] MatrixRM detect_heads(const Trace& trace, const std::string& stack, int n_layers,
                                    const std::vector<int>& ids, HeadKind kind, const DetectOptions& opt = {});

/// The usual probe for induction heads: `half` token ids drawn uniformly from [0, vocab_size) (splitmix64 from
/// `seed`) and the same ids again, after `first` when given (a BOS token): 2·half (+1) ids. Throws
/// std::invalid_argument when half < 1 or vocab_size < 2.
[[nodiscard]] std::vector<int> repeated_random_tokens(int vocab_size, int half, uint64_t seed,
                                                      std::optional<int> first = std::nullopt);

}  // namespace ts::interp
