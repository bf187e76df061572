// ForwardSpec (#29): the one "same forward?" rule, and the typed mask / ablation knobs.
#include "app/figures/views.h"
#include "app/session/forward_spec.h"
#include "app/lessons/lesson_check.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace ts;
using namespace ts::figures;
using namespace ts::lessons;
using namespace ts::studio;

namespace {
ModelConfig config_of(Arch arch) {
    ModelConfig c;
    c.arch = arch;
    c.n_layers = c.n_enc_layers = 2;
    c.n_heads = 2;
    return c;
}
}  // namespace

// Knobs the forward does not read leave the spec equal: attention knobs without "apply to the model", the target
// text of a decoder-only model, heads the model does not have, the ablation kind with no head ablated.
TEST(ForwardSpec, KnobsTheForwardIgnoresLeaveItEqual) {
    const ModelConfig dec = config_of(Arch::DecoderOnly);
    UiState a;
    UiState b = a;
    b.attn_temperature = 3;
    b.attn_mask = MaskChoice::Sliding;
    b.attn_window = 2;
    b.target_text = "ignored";
    b.decode_beam = 4;
    b.ablated_heads = {{5, 0}, {0, 7}};  // no such heads
    b.ablate_mode = interp::AblationKind::Mean;
    b.layer = 1;
    b.sm_temperature = 0.2f;
    EXPECT_EQ(forward_spec(a, dec), forward_spec(b, dec));
    // ... and once applied, each of them is a different forward.
    a.apply_to_model = b.apply_to_model = true;
    EXPECT_NE(forward_spec(a, dec), forward_spec(b, dec));
    b = a;
    b.attn_temperature = 0.5f;
    EXPECT_NE(forward_spec(a, dec), forward_spec(b, dec));
    // The window counts only for the sliding mask, the padding count only for the padding mask.
    b = a;
    b.attn_window = 9;
    b.attn_padding = 3;
    EXPECT_EQ(forward_spec(a, dec), forward_spec(b, dec));
    a.attn_mask = b.attn_mask = MaskChoice::Padding;
    EXPECT_NE(forward_spec(a, dec), forward_spec(b, dec));
}

TEST(ForwardSpec, EncoderDecoderReadsTargetLanguageAndBeam) {
    const ModelConfig ed = config_of(Arch::EncoderDecoder);
    UiState a;
    for (auto change : {+[](UiState& s) { s.target_text = "x"; }, +[](UiState& s) { s.translate_to = "zh"; },
                        +[](UiState& s) { s.decode_beam = 3; }}) {
        UiState b = a;
        change(b);
        EXPECT_NE(forward_spec(a, ed), forward_spec(b, ed));
    }
    // Ablations are not run on encoder–decoder stacks.
    UiState b = a;
    b.ablated_heads = {{0, 0}};
    EXPECT_EQ(forward_spec(a, ed), forward_spec(b, ed));
}

TEST(ForwardSpec, TabsDecideLogitsAndLens) {
    const ModelConfig dec = config_of(Arch::DecoderOnly);
    const UiState st;
    EXPECT_TRUE(forward_spec(st, dec, Panel::Predictions).lens);
    EXPECT_TRUE(forward_spec(st, dec, Panel::Predictions).logits);
    EXPECT_FALSE(forward_spec(st, dec, Panel::Attention).logits);
    EXPECT_FALSE(forward_spec(st, dec, Panel::Causal).lens);
    EXPECT_TRUE(forward_spec(st, dec, Panel::Causal).logits);
    EXPECT_NE(forward_spec(st, dec, Panel::Attention), forward_spec(st, dec, Panel::Predictions));
    // A short text: the Attention and Tokens tabs share one forward.
    EXPECT_FALSE(forward_spec(st, dec, Panel::Attention).attention_only);
    EXPECT_EQ(forward_spec(st, dec, Panel::Attention), forward_spec(st, dec, Panel::Tokens));
    // A text that may be long: the Attention tab asks for its attention only (ForwardRequest::attention_only), so
    // switching to Tokens runs it again with everything.
    UiState long_text;
    long_text.text = std::string(kAttentionOnlyMinBytes, 'a');
    EXPECT_TRUE(forward_spec(long_text, dec, Panel::Attention).attention_only);
    EXPECT_FALSE(forward_spec(long_text, dec, Panel::Tokens).attention_only);
    EXPECT_FALSE(forward_spec(long_text, dec).attention_only);
    EXPECT_NE(forward_spec(long_text, dec, Panel::Attention), forward_spec(long_text, dec, Panel::Tokens));
    long_text.text.pop_back();
    EXPECT_FALSE(forward_spec(long_text, dec, Panel::Attention).attention_only);
    // "" (render, tests): every output.
    EXPECT_TRUE(forward_spec(st, dec).lens);
    EXPECT_TRUE(forward_spec(st, dec).logits);
}

// The request carries what the spec says; the analyses start from the same options.
TEST(ForwardSpec, RequestAndAnalysisOptionsFollowTheSpec) {
    const LoadedModel lm = make_demo_model();
    UiState st;
    st.text = "abcdef";
    st.apply_to_model = true;
    st.attn_temperature = 2.5f;
    st.attn_mask = MaskChoice::Sliding;
    st.attn_window = 2;
    st.ablated_heads = {{1, 0}};
    const ForwardSpec s = forward_spec(st, lm, Panel::Attention);
    EXPECT_EQ(s.model, lm.model.get());
    auto tokens = std::make_shared<const TokenizedText>(tokenize_text(st.text, *lm.codec, 64));
    const ForwardRequest r = make_forward_request(s, lm, tokens);
    EXPECT_FLOAT_EQ(r.temperature, 2.5f);
    EXPECT_EQ(r.mask.kind, MaskKind::SlidingWindow);
    EXPECT_EQ(r.mask.window, 2);
    EXPECT_FALSE(r.logits);
    EXPECT_FALSE(r.logit_lens);
    ASSERT_EQ(r.edits.size(), 1u);
    const ForwardOptions o = forward_options(s, lm.model->config(), int(tokens->ids.size()));
    EXPECT_FLOAT_EQ(o.temperature, r.temperature);
    EXPECT_EQ(o.self_mask.kind, r.mask.kind);
    EXPECT_EQ(o.self_mask.window, r.mask.window);
    ASSERT_EQ(o.edits.size(), r.edits.size());
    EXPECT_EQ(o.edits[0].point, r.edits[0].point);
    EXPECT_EQ(o.edits[0].head, r.edits[0].head);
    // Without apply: temperature 1 and the model's own (causal) mask, whatever the knobs say.
    st.apply_to_model = false;
    const ForwardRequest own = make_forward_request(forward_spec(st, lm), lm, tokens);
    EXPECT_FLOAT_EQ(own.temperature, 1.0f);
    EXPECT_EQ(own.mask.kind, MaskKind::Causal);
}

// Which knobs need a new forward is derived from the spec, not listed: the lessons' scan rule follows it.
TEST(ForwardSpec, KnobsThatChangeTheForwardAreFound) {
    for (const char* k : {"attn_temperature", "attn_window", "attn_padding", "decode_beam", "sm_paint_n"}) {
        EXPECT_TRUE(knob_changes_forward(k)) << k;
        EXPECT_FALSE(is_scannable_knob(k)) << k;
    }
    for (const char* k : {"layer", "head", "query", "sm_temperature", "sm_window", "top_k", "sample_temperature",
                          "pe_d_model", "norm_eps", "kv_context"}) {
        EXPECT_FALSE(knob_changes_forward(k)) << k;
        EXPECT_TRUE(is_scannable_knob(k)) << k;
    }
    EXPECT_FALSE(knob_changes_forward("no_such_knob"));
    EXPECT_FALSE(knob_changes_forward("text"));  // not numeric
}

TEST(TypedKnobs, NamesRoundTripAndUnknownNamesAreRefused) {
    for (const MaskChoice m : kMaskChoices) {
        EXPECT_EQ(parse_mask_choice(name_of(m)), m);
        EXPECT_EQ(nlohmann::json(m).get<MaskChoice>(), m);
    }
    EXPECT_FALSE(parse_mask_choice("Causal"));
    EXPECT_FALSE(parse_mask_choice(""));
    EXPECT_EQ(mask_choice_list(), "none, causal, padding, sliding or custom");
    EXPECT_EQ(nlohmann::json(interp::AblationKind::Mean), "mean");
    EXPECT_THROW((void)nlohmann::json("half").get<interp::AblationKind>(), nlohmann::json::type_error);
    // A state file's unknown mask keeps the default and is reported, like any value of the wrong type.
    std::vector<std::string> ignored;
    UiState st;
    st.sm_mask = MaskChoice::None;
    read_state_fields(nlohmann::json{{"attn_mask", "diagonal"}, {"sm_mask", "sliding"}, {"ablate_mode", 3}}, st, &ignored);
    EXPECT_EQ(st.attn_mask, MaskChoice::Causal);
    EXPECT_EQ(st.sm_mask, MaskChoice::Sliding);
    EXPECT_EQ(st.ablate_mode, interp::AblationKind::Zero);
    EXPECT_EQ(ignored, (std::vector<std::string>{"attn_mask", "ablate_mode"}));
    // The CLI option names the kinds.
    try {
        apply_view_option(st, "softmax", "mask", "diagonal");
        ADD_FAILURE() << "no error";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("none, causal, padding, sliding or custom"), std::string::npos) << e.what();
    }
}

// Tabs are a typed knob too (#29): one name table for the state file, `--panel`, the tab labels and the views.
TEST(TypedKnobs, PanelsHaveOneNameTable) {
    for (const Panel p : kPanels) {
        EXPECT_EQ(parse_panel(name_of(p)), p);
        EXPECT_EQ(nlohmann::json(p).get<Panel>(), p);
    }
    EXPECT_EQ(parse_panel("attention"), Panel::Attention);  // `--panel attention`
    EXPECT_EQ(parse_panel("LESSONS"), Panel::Lessons);
    EXPECT_FALSE(parse_panel("Attentio"));
    EXPECT_FALSE(parse_panel(""));
    EXPECT_EQ(nlohmann::json(Panel::Normalization), "Normalization");
    EXPECT_EQ(panel_list().substr(0, 18), "Tokens, Attention,");
    EXPECT_EQ(panel_list().substr(panel_list().size() - 17), "Causal or Lessons");
    // An unknown tab (or attention source) in a state file keeps the default and is reported.
    std::vector<std::string> ignored;
    UiState st;
    read_state_fields(nlohmann::json{{"panel", "Heads"}, {"layer", 2}, {"attn_source", "self"}}, st, &ignored);
    EXPECT_EQ(st.panel, UiState{}.panel);
    EXPECT_EQ(st.attn_source, AttnSource::Decoder);
    EXPECT_EQ(st.layer, 2);
    EXPECT_EQ(ignored, (std::vector<std::string>{"panel", "attn_source"}));
    for (const AttnSource a : kAttnSources) EXPECT_EQ(nlohmann::json(a).get<AttnSource>(), a);
    EXPECT_EQ(parse_attn_source("cross"), AttnSource::Cross);
    EXPECT_FALSE(parse_attn_source("Cross"));
    for (const plot::ExportFormat f : plot::kExportFormats) EXPECT_EQ(nlohmann::json(f).get<plot::ExportFormat>(), f);
    EXPECT_EQ(nlohmann::json(plot::ExportFormat::Svg), "svg");
    EXPECT_FALSE(plot::parse_export_format("SVG"));
    read_state_fields(nlohmann::json{{"export_format", "pdf"}}, st, &ignored);
    EXPECT_EQ(st.export_format, plot::ExportFormat::Png);
    EXPECT_EQ(ignored.back(), "export_format");
    set_state_field(st, "attn_source=encoder");  // lessons set it by name
    EXPECT_EQ(st.attn_source, AttnSource::Encoder);
    // Every tab but Lessons has a main view of its own, and the views of a tab come together in tab order.
    for (const Panel p : kPanels) EXPECT_EQ(default_view_for_panel(p).empty(), p == Panel::Lessons) << name_of(p);
    std::optional<Panel> prev;
    for (const ViewInfo& v : all_views()) {
        if (prev) EXPECT_LE(int(*prev), int(v.panel)) << v.name << " is out of tab order";
        prev = v.panel;
    }
}
