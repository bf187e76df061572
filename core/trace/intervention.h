// Activation edits ("interventions"): a forward request may overwrite named trace points while it runs — zero a
// head, replace it by its mean over positions, or set a residual-stream row to values from another run. The
// forward applies them in place (no second code path), so everything downstream sees the edited values and the
// trace records them. Used by the analyses in core/interp (ablation, activation patching) and `trace --ablate`.
#pragma once

#include "core/model/model_config.h"
#include "core/model/tensor.h"

#include <string>
#include <vector>

namespace ts {

/// Zero: := 0. Mean: := the mean over this call's positions of the same point (per head for head_out; computed
/// from the values the forward produced, so it is a non-causal summary for causal models — TransformerLens's
/// mean ablation averages over a dataset instead). Set: := `values`.
enum class EditKind { Zero, Mean, Set };

/// One edit of one trace point. Editable points (s = enc | dec, i = layer; names exactly as in the trace):
///   embed.out, enc.embed.out (encoder of forward_seq2seq)     (T, d_model)  input of the first layer
///   s.i.resid_attn, dec.i.resid_cross, s.i.resid_ffn            (T, d_model)  residual stream after each sub-layer
///   s.i.attn.out, dec.i.cross_attn.out, s.i.ffn.out             (T, d_model)  sub-layer outputs before the residual add
///   s.i.attn.head_out, dec.i.cross_attn.head_out                (H, T, D)     per-head probs·V, before W_o
///                                                                             (TransformerLens hook_z)
///   s.i.ffn.post_act                                            (T, d_ff)     FFN neurons (TransformerLens hook_post)
/// The input of layer i ("resid_pre" in TransformerLens) is embed.out for i = 0 and s.(i-1).resid_ffn otherwise.
/// Selection: `head` (head_out points only; -1 = every head) × `position` (absolute position, i.e. with a KV cache
/// n_past + row; -1 = every position of this call). Set `values` are the selected slice row-major:
/// (heads selected, positions selected, width) with width = D, d_ff or d_model.
/// forward() throws std::invalid_argument naming the point for an unknown point, a stack/layer/head/position the
/// model or input does not have, a head on a point without heads, or `values` of the wrong size.
struct ActivationEdit {
    std::string point;
    int head = -1;
    int position = -1;
    EditKind kind = EditKind::Zero;
    std::vector<float> values;

    [[nodiscard]] static ActivationEdit zero(std::string point, int head = -1, int position = -1) {
        return {std::move(point), head, position, EditKind::Zero, {}};
    }
    [[nodiscard]] static ActivationEdit mean(std::string point, int head = -1, int position = -1) {
        return {std::move(point), head, position, EditKind::Mean, {}};
    }
    [[nodiscard]] static ActivationEdit set(std::string point, std::vector<float> values, int head = -1,
                                            int position = -1) {
        return {std::move(point), head, position, EditKind::Set, std::move(values)};
    }
};

/// One line for logs and the CLI, e.g. "dec.3.attn.head_out head 2 := 0 (all positions)".
[[nodiscard]] std::string describe(const ActivationEdit& e);

/// Trace name of layer `layer`'s input (TransformerLens resid_pre): "embed.out" for layer 0, else
/// "<stack>.<layer-1>.resid_ffn"; layer == n_layers gives the last layer's output.
[[nodiscard]] std::string resid_pre_point(const std::string& stack, int layer);

}  // namespace ts
