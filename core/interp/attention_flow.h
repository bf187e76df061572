// Attention rollout and attention flow (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers"): how
// much each input token feeds each output position through a stack of attention layers, treating the residual
// connection as an extra half of attention to oneself. Each layer contributes Â = rownorm(0.5·Ā + 0.5·I), Ā the
// attention probabilities averaged over heads (their §3, and their reference code's compute_joint_attention /
// get_adjmat / compute_flows).
#pragma once

#include "core/interp/interp_common.h"

#include <vector>

namespace ts::interp {

/// Flow is exact max-flow per (output, input) pair: refused beyond this many positions (cost below).
inline constexpr int kMaxFlowPositions = 64;

/// Ā per layer from a trace holding "<stack>.<l>.<part>.probs" (H, T, K): the mean over heads, (T, K) each, layer 0
/// first. part "attn" (self-attention; K must equal T) or "cross_attn" (an encoder–decoder's decoder: K = S source
/// tokens; stack "dec"). Throws std::invalid_argument naming the tensor when one is missing, is not rank 3, or (self-
/// attention) is not square (a KV-cached call attends to more keys than it has queries).
[[nodiscard]] std::vector<MatrixRM> head_mean_attention(const Trace& trace, const std::string& stack, int n_layers,
                                                        const std::string& part = "attn");

/// The element-wise mean of equally shaped matrices (e.g. head_mean_attention's layers: the mean over layers and
/// heads). Throws std::invalid_argument on an empty list or differing shapes.
[[nodiscard]] MatrixRM mean_of(const std::vector<MatrixRM>& ms);

/// a (T, T) -> rownorm(0.5·a + 0.5·I). Rows of a that sum to 1 stay summed to 1; a fully masked (zero) row gives I's.
[[nodiscard]] MatrixRM residual_augmented(const MatrixRM& a);

/// Rollout Â_L · … · Â_1 (Abnar & Zuidema eq. 1), (T, T): row i = output position after the last layer, column j
/// = input token; rows sum to 1. attn: Ā per layer, layer 0 first (as head_mean_attention returns). Computed in
/// double. Throws std::invalid_argument on an empty list or matrices that are not all (T, T).
[[nodiscard]] MatrixRM attention_rollout(const std::vector<MatrixRM>& attn);

struct AttentionFlow {
    MatrixRM flow;        ///< (T, T) max-flow value from output position i (last layer) to input token j, in [0, 1]
    MatrixRM normalized;  ///< each row of `flow` divided by its sum (as the paper's code reports flows)
    bool cancelled = false;
};

/// Attention flow: the layered graph has nodes (layer 0..L) × T positions and, for layer l = 1..L, an edge from
/// (l, i) to (l − 1, j) with capacity Â_l[i, j]; flow[i, j] is the maximum flow from (L, i) to (0, j). Solved
/// exactly with Edmonds–Karp (BFS augmenting paths on the dense residual graph, double precision). Cost: T² max-flow
/// problems, each O(paths · L · T²); T ≤ kMaxFlowPositions (measured, L = 4: T = 32 in 26–52 ms, T = 64 in
/// 0.8–2.2 s on one core of a loaded 2-core AMD EPYC; tests/bench/interp_bench.cpp). `progress` is called per output row; `cancel` is checked per (i, j) pair (rows not
/// finished stay NaN). Throws std::invalid_argument on an empty list, non-square or unequal matrices, or T > 64.
[[nodiscard]] AttentionFlow attention_flow(const std::vector<MatrixRM>& attn, const Progress& progress = {},
                                           const std::atomic<bool>* cancel = nullptr);

}  // namespace ts::interp
