// ForwardSpec: what a forward the app runs depends on, and the one rule that says whether two states run the same
// forward. The window's cache of its last forward, `render`, the Causal panel's analyses and the lessons' scans all
// build their forward from a ForwardSpec, so a knob means the same to each: the attention temperature and mask only
// with "apply to the model"; the target text, its language and the beam only for encoder–decoder models; only
// ablated heads the model has. GL-free.
#pragma once

#include "app/session/knobs.h"
#include "app/session/state.h"
#include "app/session/worker.h"
#include "core/interp/ablation.h"
#include "core/model/model.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ts::studio {

struct ForwardSpec {
    const Model* model = nullptr;        ///< identity only (set by the LoadedModel overload of forward_spec)
    std::string text;                    ///< the text (encoder–decoder: the source sentence)
    std::string target, to;              ///< encoder–decoder: the teacher-forced target text and target language
    int beam = 1;                        ///< encoder–decoder: Translate's beam width (1 = greedy)
    float temperature = 1.0f;            ///< attention softmax temperature (1 without apply_to_model)
    bool own_mask = true;                ///< the model's own mask (apply_to_model off); the fields below are then unset
    MaskChoice mask = MaskChoice::Causal;
    int window = 0;                      ///< mask Sliding: the band's width in keys
    int padding = 0;                     ///< mask Padding: how many trailing keys are padding
    std::vector<uint8_t> painted;        ///< mask Custom: the painted grid (painted_n² cells) as the state holds it
    int painted_n = 0;
    std::vector<std::array<int, 2>> ablated;  ///< (layer, head) ablated in the forward, only heads the model has
    interp::AblationKind ablation = interp::AblationKind::Zero;  ///< meaningful only with ablated heads
    bool logits = true;                  ///< the last position's logits (tabs that show no logits skip the LM head)
    bool lens = true;                    ///< the logit lens (one LM-head product per layer)
    /// The Attention tab, with a text of at least kAttentionOnlyMinBytes bytes: a long one records only what that
    /// tab shows (ForwardRequest::attention_only decides by its token count).
    bool attention_only = false;
    QuantActivations quant_activations = QuantActivations::Float;  ///< a GGUF file's Q4_0 / Q8_0 products
    bool operator==(const ForwardSpec&) const = default;
};

/// Texts shorter than this many bytes never ask for the Attention tab's long-text capture (they cannot reach
/// ForwardRequest::progressive_min_tokens tokens), so their tabs share forwards as before.
inline constexpr size_t kAttentionOnlyMinBytes = 1000;

/// The spec of the forward `st` asks of a model with config `c` for tab `panel` (nullopt = every output: logits and
/// the logit lens, as `render` and tests want). `model` is left null.
[[nodiscard]] ForwardSpec forward_spec(const UiState& st, const ModelConfig& c,
                                       std::optional<Panel> panel = std::nullopt);
/// As above for a loaded model (null model: a spec with no model, equal to no other model's).
[[nodiscard]] ForwardSpec forward_spec(const UiState& st, const LoadedModel& m,
                                       std::optional<Panel> panel = std::nullopt);

/// Whether changing UiState's numeric field `knob` can change the ForwardSpec (some model, some tab): such a knob
/// needs a new forward, so a lesson cannot scan it over one snapshot. Decided by changing the knob in states where
/// every forward knob is live, not by a list. False for unknown or non-numeric fields.
[[nodiscard]] bool knob_changes_forward(const std::string& knob);

/// Whether a tab's views read logits (Predictions, Causal, Lessons): the others get a forward without the LM head
/// (ForwardRequest::logits). For GPT-2 small the head is a third of the weights a forward reads.
[[nodiscard]] bool panel_reads_logits(Panel panel);
/// Whether a tab shows the logit lens (Predictions).
[[nodiscard]] bool panel_shows_lens(Panel panel);

/// The one rule from mask knobs to a ts::MaskSpec over T keys, for the model's forward and the Softmax lab's rows
/// (the lab builds them with core's mask_table), so the lab shows what the model runs: None; Causal; Sliding (a
/// causal band of `window` keys, window >= 1); Padding (the model's own mask — causal when `causal_model`, else
/// none — with the last `padding` keys as padding, never attended; at most T - 1 of them, so a query keeps a key);
/// Custom (the painted grid, painted_mask_spec, with the state's painted cells as painted_cells gives them).
[[nodiscard]] MaskSpec mask_spec_for(MaskChoice kind, int window, int padding, const std::vector<uint8_t>& painted,
                                     int painted_n, int T, bool causal_model);
/// The self-attention mask of `s` at T tokens (encoder-only models: the encoder's): the model's own with own_mask,
/// else mask_spec_for of its knobs.
[[nodiscard]] MaskSpec attention_mask(const ForwardSpec& s, const ModelConfig& c, int T);
/// The activation edits that ablate s.ablated with s.ablation (core/interp/ablation.h); none when no head is.
[[nodiscard]] std::vector<ActivationEdit> ablation_edits(const ForwardSpec& s, const ModelConfig& c);
/// Temperature, mask (decoder self-attention; encoder-only: encoder) and edits of `s` at T tokens: the options the
/// analyses start from (app/session/interp_jobs.h), as the window's forward runs them.
[[nodiscard]] ForwardOptions forward_options(const ForwardSpec& s, const ModelConfig& c, int T);

/// The request for `s` (`text_tokens`: s.text tokenized; encoder–decoder models tokenize source and target
/// themselves): temperature, mask, edits, decoding, logits and lens from the spec.
[[nodiscard]] ForwardRequest make_forward_request(const ForwardSpec& s, const LoadedModel& m,
                                                  std::shared_ptr<const TokenizedText> text_tokens);
/// make_forward_request(forward_spec(st, m), m, text_tokens): every output, as `render` and the benchmarks run it.
[[nodiscard]] ForwardRequest make_forward_request(const UiState& st, const LoadedModel& m,
                                                  std::shared_ptr<const TokenizedText> text_tokens);

/// The state's shortcuts: attention_mask / ablation_edits of forward_spec(st, c), and the ablated heads that exist
/// in this model (none for encoder–decoder models: the analyses run decoder-only / encoder-only stacks).
[[nodiscard]] MaskSpec attention_mask_for(const UiState& st, const ModelConfig& c, int T);
[[nodiscard]] std::vector<ActivationEdit> ablation_edits_for(const UiState& st, const ModelConfig& c);
[[nodiscard]] std::vector<interp::HeadRef> ablated_heads_for(const UiState& st, const ModelConfig& c);

// --- the painted mask (Softmax lab "custom") ----------------------------------------------------------------------
/// The painted "custom" mask grid for n tokens: st.sm_paint when it was painted for n tokens (sm_paint_n == n),
/// else causal (row q sees keys 0..q). n × n row-major, 1 = query row may attend key column.
[[nodiscard]] std::vector<uint8_t> painted_cells(const std::vector<uint8_t>& sm_paint, int sm_paint_n, int n);
[[nodiscard]] std::vector<uint8_t> painted_cells(const UiState& st, int n);
/// Sets cell (row, col) of the painted grid for n tokens to `visible` (starting from painted_cells(st, n), so a
/// changed token count resets the grid to causal first). Out-of-range cells are ignored.
void paint_cell(UiState& st, int n, int row, int col, bool visible);
/// Painted cells (n × n row-major, 1 = may attend) -> ts::MaskSpec{MaskKind::Custom, 0, custom (T, S)} for T
/// queries × S keys: cell (t, s) of the grid when inside it, else causal (s <= t). Throws std::invalid_argument
/// when cells.size() != n² or T, S < 0.
[[nodiscard]] MaskSpec painted_mask_spec(const std::vector<uint8_t>& cells, int n, int T, int S);

}  // namespace ts::studio
