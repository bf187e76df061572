// UiState: everything the app remembers between runs (model path, recent models, the typed text, open panel,
// layer/head and every panel knob), stored as JSON under $XDG_CONFIG_HOME/transformer-studio/state.json
// (or ~/.config/transformer-studio/state.json). GL-free so it can be tested without a display.
#pragma once

#include "app/session/knobs.h"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ts::studio {

struct UiState {
    std::string model_path;              ///< "" = the bundled default (or the random demo model)
    std::vector<std::string> recent;     ///< most recent first, at most kMaxRecent
    std::string text = "The quick brown fox jumps over the lazy dog.";
    Panel panel = Panel::Tokens;
    int layer = 0, head = 0, query = -1; ///< query = selected query position (-1 = last token)
    bool dark_theme = true;
    float ui_scale = 0.0f;               ///< 0 = from the monitor's content scale
    std::string language;                ///< interface language "en" | "zh"; "" = from the system locale (app/i18n)

    // Attention panel display.
    bool attn_unit_scale = false;        ///< color scale fixed to 0..1 instead of 0..row max
    bool attn_annotate = true;           ///< print weights in cells (when they fit)
    /// Long sequences (> 256 positions): the big attention heatmap shows the full-resolution 256 × 256 window whose
    /// top-left cell is (attn_zoom_row, attn_zoom_col); -1 = the pooled overview. Not saved.
    int attn_zoom_row = -1, attn_zoom_col = -1;
    AttnSource attn_source = AttnSource::Decoder;  ///< encoder–decoder models: which attention is shown (knobs.h)

    // Encoder–decoder models: `text` is the source sentence (encoder input); the decoder reads `target_text`
    // (teacher forcing) or what Translate decoded.
    std::string target_text;
    std::string translate_to = "auto";   ///< auto | en | zh (auto: English for text with CJK characters, else Chinese)
    int decode_beam = 1;                 ///< Translate: 1 = greedy, else the beam width

    // Attention knobs applied to the model's forward pass (Softmax lab "apply to model").
    bool apply_to_model = false;
    float attn_temperature = 1.0f;
    MaskChoice attn_mask = MaskChoice::Causal;  ///< custom: the Softmax lab's painted grid (sm_paint)
    int attn_window = 4;
    int attn_padding = 1;                ///< mask "padding": how many trailing keys are padding

    // Softmax lab.
    float sm_temperature = 1.0f;
    MaskChoice sm_mask = MaskChoice::Causal;
    /// "custom" mask painted in the Softmax lab: sm_paint_n × sm_paint_n cells, row-major, 1 = query row may attend
    /// key column. Empty or of another size than the current token count = not painted yet (starts causal).
    std::vector<uint8_t> sm_paint;
    int sm_paint_n = 0;
    int sm_window = 4;
    int sm_padding = 1;                  ///< how many trailing keys count as padding
    bool sm_use_typed = false;
    std::string sm_typed_logits = "2.0, 1.0, 0.1, -1.0";

    // Activations.
    float act_leaky_alpha = 0.1f;
    float act_swish_beta = 1.0f;
    float act_range = 4.0f;
    bool act_show_grad = true;
    bool act_overlay = true;             ///< histogram of the real FFN pre-activations behind the curves
    /// Which curves are shown: tanh, sigmoid, ReLU, LeakyReLU, GELU (erf), GELU (tanh), Swish, GLU, SwiGLU, GeGLU.
    std::array<bool, 10> act_shown{true, true, true, false, true, false, true, false, false, false};

    // Normalization.
    float norm_mean = 5.0f, norm_std = 2.0f;
    float norm_gamma = 1.0f, norm_beta = 0.0f, norm_eps = 1e-5f;
    float norm_outlier = 0.0f;           ///< added to every feature of row 0 of the batch (one unusual example)

    // Positions.
    int pe_d_model = 64;
    float pe_base = 10000.0f;
    int pe_positions = 100;
    float rope_theta = 10000.0f;
    bool rope_interleaved = false;

    // Predictions.
    float sample_temperature = 1.0f;
    int top_k = 10;
    float top_p = 1.0f;
    int generate_tokens = 20;

    // Model panel.
    int kv_context = 2048;

    // Training panel (formulas of training, and dropout on the model's own activations).
    std::string train_topic =
        "lab";  ///< the view it shows: lab | lr-schedule | dropout | weight-decay | label-smoothing
    int train_warmup = 4000;             ///< warm-up steps of the learning-rate schedule (0 = none)
    int train_d_model = 512;             ///< d_model of that schedule (the original Transformer's)
    float train_dropout = 0.1f;          ///< dropout probability p
    int train_seed = 1;                  ///< seed of the dropout mask shown
    float train_lr = 0.01f;              ///< learning rate η of the weight-decay figure
    float train_weight_decay = 0.1f;     ///< weight decay λ
    float train_grad = 0.0f;             ///< a constant loss gradient on that weight (0: the loss ignores it)
    float train_label_smoothing = 0.1f;  ///< label smoothing ε

    // Causal panel (interventions, core/interp): heads ablated in every forward the app runs, and the analyses'
    // inputs. Token fields hold text; its first token is used ("" = the clean run's top prediction).
    std::vector<std::array<int, 2>> ablated_heads;  ///< (layer, head) pairs
    interp::AblationKind ablate_mode = interp::AblationKind::Zero;
    std::string interp_target;                       ///< token whose log-probability / logit is explained
    std::string interp_minus;                        ///< optional second token: logit difference target − minus
    std::string interp_corrupt = "When Mary and John went to the store, Mary gave a drink to";
    std::string interp_answer = " Mary", interp_wrong = " John";
    // Head detectors (Causal panel, view head-detectors; core/interp/head_detectors.h)
    bool detect_random = false;           ///< on repeated random tokens (the induction probe), else on the text
    int detect_half = 25;                 ///< random tokens per half of the probe (2..512)
    bool detect_exclude_bos = false;      ///< leave out the attention on the first token (TransformerLens exclude_bos)
    bool detect_exclude_current = false;  ///< leave out the attention on the query itself (exclude_current_token)
    // Input attribution (Causal panel, view input-attribution; core/interp/input_attribution.h). Explains the
    // interp_target token (interp_minus: the contrast) at the last position.
    std::string attr_method = "integrated-gradients";  ///< interp::name_of(AttributionMethod)
    int attr_steps = 50;                               ///< integrated gradients: points on the path (1..1024)
    int attr_span = 1;                                 ///< occlusion: tokens hidden at once (1..16)
    std::string attr_baseline = "mean";                ///< interp::name_of(AttributionBaseline): "mean" or "zero"
    std::string attr_ig_rule = "adaptive";             ///< interp::name_of(IgRule): "adaptive" or "midpoint"
    /// Products with a GGUF file's Q4_0 / Q8_0 weights: "float" (the exact product of the stored weights) or
    /// "int8" (llama.cpp's arithmetic: activations rounded to 8 bits; core/kernels/quant_gemm.h).
    std::string quant_activations = "float";
    /// The Model panel's quantization lens: the reference model's path, or "float-twin" (this GGUF file's weights in
    /// float32; app/session/compare_job.h).
    std::string compare_reference = "float-twin";

    // Neurons panel (FFN neurons at the selected layer; core/interp/neurons.h).
    int neuron = -1;            ///< the neuron shown over the text and with its examples (-1: the most
                                ///< active one at the selected token)
    int neuron_rows = 32;       ///< neurons in the neuron × token heatmap, the most active ones (4..256)
    std::string neuron_corpus;  ///< text file of the max-activating examples ("" = the training text)
    std::string lab_run;        ///< render's lab-curves: a training-lab run folder
    std::string
        lab_compare;    ///< lab-compare and the Training tab: a second run folder (B) beside lab_run / the live run
    int lab_step = -1;  ///< lab-curves: the step marked on every curve, the Training tab's timeline (-1: none)
    /// attention-ab: how forward A differs from B, the current settings, as `--set` assignments ("key=value");
    /// empty: A is the model as trained (no attention knobs applied, no heads ablated).
    std::vector<std::string> ab_set;
    int neuron_context = 64;  ///< tokens per corpus chunk of the examples' index (8..1024)
    // Residual panel: what its lower half shows: "norms" (pre- vs post-norm at random init), "embedding-map" (PCA of
    // the token embeddings) or "residual-map" (PCA of the text's residual stream through the layers).
    std::string resid_view = "embedding-map";

    // Lessons panel: the open lesson (its id) and step (0-based).
    std::string lesson;
    int lesson_step = 0;

    // Export (figure files and `render --session`).
    std::string view;                    ///< the view a session file reproduces ("" = the panel's main view)
    std::string export_dir;              ///< "" = ~/Pictures/transformer-studio (or the current folder)
    plot::ExportFormat export_format = plot::ExportFormat::Png;
    int export_width = 1600, export_height = 1000;
    float export_scale = 1.0f;
    bool export_light = true;            ///< light theme for print (false: the dark theme)
    bool export_transparent = false;

    static constexpr size_t kMaxRecent = 8;
    /// Moves `path` to the front of `recent` (deduplicated, capped at kMaxRecent).
    void remember_model(const std::string& path);
    /// Clamps every knob into its valid range (after loading a hand-edited file).
    void clamp();
};

/// The attention knobs the Softmax lab and the model's forward share while "apply to the model" is on.
struct AttentionKnobs {
    float temperature = 1.0f;
    MaskChoice mask = MaskChoice::Causal;
    int window = 4;
    int padding = 1;
    bool operator==(const AttentionKnobs&) const = default;
};
/// One knob, one value (#28): while `apply_to_model` is on, the Softmax lab's temperature / mask / window / padding and the
/// model's (the sidebar's) are the same setting. Called once per frame: whichever side changed since the last call
/// (`last`) is copied to the other; on switching it on, the lab's values are applied to the model. Off: `last` is
/// cleared and the two are independent.
void link_attention_knobs(UiState& st, std::optional<AttentionKnobs>& last);

/// The window's UI scale range (the `ui_scale` setting and the sidebar's control; 0 = the monitor's scale).
inline constexpr float kMinUiScale = 0.5f, kMaxUiScale = 4.0f;

void to_json(nlohmann::json& j, const UiState& s);
/// Missing keys keep their defaults; keys of the wrong type are ignored (a hand-edited file never fails a start).
void from_json(const nlohmann::json& j, UiState& s);
/// from_json that also lists the keys it ignored because their value had the wrong type (null: don't list).
void read_state_fields(const nlohmann::json& j, UiState& s, std::vector<std::string>* ignored);
/// The text of a state or session file: throws std::runtime_error naming `what` when it is not JSON or not an
/// object; fields of the wrong type keep their defaults and are named in `*warning`. Knobs are clamped.
[[nodiscard]] UiState parse_state_text(std::string_view text, const std::string& what, std::string* warning = nullptr);

/// $XDG_CONFIG_HOME/transformer-studio, else $HOME/.config/transformer-studio, else ./.transformer-studio.
[[nodiscard]] std::filesystem::path config_dir();

/// Reads the state; a missing file gives defaults; unreadable or broken JSON gives defaults and a warning in
/// `*warning` (the broken file is kept as state.json.broken so nothing the user had is silently lost).
[[nodiscard]] UiState load_state(const std::filesystem::path& file, std::string* warning = nullptr);

/// Writes atomically (temp file in the same folder + rename), creating the folder. Throws std::runtime_error
/// naming the path when it cannot be written.
void save_state(const std::filesystem::path& file, const UiState& s);

}  // namespace ts::studio
