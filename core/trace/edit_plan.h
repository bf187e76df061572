// Internal to core: a forward request's ActivationEdits parsed once per call, checked against the model and the
// input, and grouped by (stack, layer, site), so the forward asks "any edits here?" with one index and applies
// them in place. Shared by core/forward/forward.cpp and core/kernels/attention.cpp.
#pragma once

#include "core/trace/intervention.h"
#include "core/model/model_config.h"
#include "core/model/tensor.h"

#include <span>
#include <string>
#include <vector>

namespace ts::detail {

/// Where in a layer an edit applies (in forward order).
enum class EditSite { AttnHeadOut, AttnOut, ResidAttn, CrossHeadOut, CrossOut, ResidCross, FfnPostAct, FfnOut, ResidFfn };
inline constexpr int kEditSites = 9;

using EditList = std::span<const ActivationEdit* const>;

/// The edits of one stack ("enc" or "dec") of one call: positions start_pos .. start_pos + T - 1.
struct StackEdits {
    int start_pos = 0;
    int T = 0;
    std::vector<const ActivationEdit*> embed;                 ///< embed.out (enc.embed.out for a seq2seq encoder)
    std::vector<std::vector<const ActivationEdit*>> sites;   ///< [layer * kEditSites + site]; empty when no edits

    [[nodiscard]] EditList at(int layer, EditSite site) const {
        if (sites.empty()) return {};
        return sites[size_t(layer) * kEditSites + size_t(site)];
    }
};

/// What a call runs: which stacks, with how many positions, and which embedding point feeds each one.
struct EditScope {
    bool has_enc = false, has_dec = false;
    int enc_T = 0, dec_T = 0, dec_start = 0;
    const char* enc_embed = nullptr;  ///< "embed.out" / "enc.embed.out" / nullptr (stack entry points: no embedding)
    const char* dec_embed = nullptr;
};

struct EditPlan {
    StackEdits enc, dec;
};

/// Parses and validates every edit against the config and scope. Throws std::invalid_argument naming the point
/// (unknown point, stack or layer not in the model or not run by this call, cross-attention without an encoder,
/// head out of range or on a point without heads, position outside the call, Set values of the wrong size,
/// values on a Zero/Mean edit).
[[nodiscard]] EditPlan plan_edits(const ModelConfig& c, const std::vector<ActivationEdit>& edits,
                                  const EditScope& scope);

/// x: (T, width) rows at positions start_pos.. (residual points, sub-layer outputs, FFN neurons); edits in order.
void apply_row_edits(EditList edits, int start_pos, MatrixRM& x);
/// x: head-major (H*T, D), head h in rows [h*T, (h+1)*T) (the attention workspace's head_out); edits in order.
void apply_head_edits(EditList edits, int start_pos, int H, int T, MatrixRM& x);

}  // namespace ts::detail
