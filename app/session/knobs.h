// Typed knobs: settings that pick one of a few named kinds. Each has one table of names, used by the state file
// (UiState JSON), the CLI options, the lessons and the combo boxes, so the kinds and their order are written once.
// GL-free.
#pragma once

#include "app/plot/writers.h"
#include "core/interp/ablation.h"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace ts::studio {

/// The attention mask the Softmax lab shows and, with "apply to the model", the forward runs (mask_spec_for in
/// app/session/forward_spec.h says what each does). Listed in the order the mask combo shows them.
enum class MaskChoice { None, Causal, Padding, Sliding, Custom };
inline constexpr std::array<MaskChoice, 5> kMaskChoices{MaskChoice::None, MaskChoice::Causal, MaskChoice::Padding,
                                                       MaskChoice::Sliding, MaskChoice::Custom};
/// "none", "causal", "padding", "sliding", "custom": the name in state files, lessons and `--mask` / `--attn-mask`.
[[nodiscard]] const char* name_of(MaskChoice m);
/// The choice named `s` (exact, as name_of writes it); nullopt for any other text.
[[nodiscard]] std::optional<MaskChoice> parse_mask_choice(std::string_view s);

/// Head ablation (core/interp/ablation.h) by name: "zero" | "mean".
[[nodiscard]] const char* name_of(interp::AblationKind k);
[[nodiscard]] std::optional<interp::AblationKind> parse_ablation_kind(std::string_view s);

/// "none, causal, padding, sliding or custom": the names for an error message.
[[nodiscard]] std::string mask_choice_list();

/// Encoder–decoder models: which attention the Attention tab and its views show: Encoder (encoder self-attention,
/// enc.i.attn.*), Decoder (decoder self-attention, dec.i.attn.*) or Cross (dec.i.cross_attn.*: decoder queries ×
/// encoder keys). Ignored for decoder-only and encoder-only models. In the order the tab's radio buttons show them.
enum class AttnSource { Encoder, Decoder, Cross };
inline constexpr std::array<AttnSource, 3> kAttnSources{AttnSource::Encoder, AttnSource::Decoder, AttnSource::Cross};
/// "encoder", "decoder", "cross": the name in state files, lessons and `--attn-source`.
[[nodiscard]] const char* name_of(AttnSource s);
/// The source named `s` (exact); nullopt for any other text.
[[nodiscard]] std::optional<AttnSource> parse_attn_source(std::string_view s);
/// "encoder, decoder or cross": the names for an error message.
[[nodiscard]] std::string attn_source_list();

/// The window's tabs, in tab order. What a forward computes depends on the tab (forward_spec), and every view
/// belongs to one (app/figures/views.h).
enum class Panel {
    Tokens,
    Attention,
    Softmax,
    Activations,
    Neurons,
    Normalization,
    Positions,
    Predictions,
    Residual,
    Model,
    Training,
    Causal,
    Lessons
};
inline constexpr std::array<Panel, 13> kPanels{
    Panel::Tokens,        Panel::Attention, Panel::Softmax,     Panel::Activations, Panel::Neurons,
    Panel::Normalization, Panel::Positions, Panel::Predictions, Panel::Residual,    Panel::Model,
    Panel::Training,      Panel::Causal,    Panel::Lessons};
/// The tab's English label ("Attention"): its name in state files, frame stats and lessons, its ImGui ID, and the
/// msgid its translated label comes from.
[[nodiscard]] const char* name_of(Panel p);
/// The tab named `s`, in any case ("attention" for `--panel attention`); nullopt for any other text.
[[nodiscard]] std::optional<Panel> parse_panel(std::string_view s);
/// "Tokens, Attention, …, Causal or Lessons": the names for an error message.
[[nodiscard]] std::string panel_list();

}  // namespace ts::studio

// JSON as the name (state files, lessons, `--set attn_mask=sliding`); reading an unknown name throws
// nlohmann::json::type_error, so a state file's unknown value is reported and the default kept, like any wrong type.
namespace nlohmann {
template <>
struct adl_serializer<ts::studio::MaskChoice> {
    static void to_json(json& j, ts::studio::MaskChoice v);
    static void from_json(const json& j, ts::studio::MaskChoice& v);
};
template <>
struct adl_serializer<ts::studio::AttnSource> {
    static void to_json(json& j, ts::studio::AttnSource v);
    static void from_json(const json& j, ts::studio::AttnSource& v);
};
template <>
struct adl_serializer<ts::plot::ExportFormat> {
    static void to_json(json& j, ts::plot::ExportFormat v);
    static void from_json(const json& j, ts::plot::ExportFormat& v);
};
template <>
struct adl_serializer<ts::studio::Panel> {
    static void to_json(json& j, ts::studio::Panel v);
    static void from_json(const json& j, ts::studio::Panel& v);
};
template <>
struct adl_serializer<ts::interp::AblationKind> {
    static void to_json(json& j, ts::interp::AblationKind v);
    static void from_json(const json& j, ts::interp::AblationKind& v);
};
}  // namespace nlohmann
