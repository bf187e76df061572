// Two models of the same shape on the same tokens, compared where it matters: what a quantized file costs against
// its higher-precision twin (or any two checkpoints of one architecture, e.g. two training steps). The "quantization
// lens": per position, KL(reference || model) of the next-token distributions and whether their top-1 tokens agree;
// per layer, how far the model's residual stream has drifted from the reference's (relative L2 error, growing with
// depth as errors compound); per layer and head, the mean |difference| of the attention probabilities (and any head's
// full difference map on request, from the traces).
#pragma once

#include "core/model/model.h"

#include <string>
#include <vector>

namespace ts::interp {

struct ModelDiff {
    int T = 0;
    /// KL(p_ref || p_model) of position t's next-token distribution, nats: sum_v p_ref log(p_ref / p_model),
    /// computed in float64 from log-softmaxes (torch.nn.functional.kl_div(log_softmax(model), log_softmax(ref),
    /// log_target=True, reduction="sum") per row). (T)
    std::vector<double> kl;
    std::vector<char> top1_agree;  ///< argmax of both logits rows equal (T)
    int top1_agreements = 0;
    double mean_kl = 0.0;
    /// Residual stream after each layer (`s.i.resid_ffn`; index 0 is the embeddings, `embed.out`), relative L2
    /// error ||h_model - h_ref|| / ||h_ref|| over all positions; n_layers + 1 values.
    std::vector<double> resid_rel_error;
    /// Per-position relative error of the last layer's residual stream (T).
    std::vector<double> last_resid_rel_error;
    /// Mean |probs_model - probs_ref| over a head's allowed cells, per layer and head: (n_layers, n_heads).
    MatrixRM attn_mean_abs_diff;
    /// The traces behind it (attention of any head on demand: Trace::attention / trace_head_rows).
    std::shared_ptr<const Trace> model_trace, reference_trace;
};

/// Runs both models on `ids` (decoder-only or encoder-only models of equal config shapes: d_model, n_layers,
/// n_heads, vocab_size) and compares them. Throws std::invalid_argument naming the first shape that differs.
[[nodiscard]] ModelDiff diff_models(const Model& model, const Model& reference, const std::vector<int>& ids);

}  // namespace ts::interp
