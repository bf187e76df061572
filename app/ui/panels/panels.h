// The app's panels. Each reads the newest Snapshot and the UI state (never owns model state), builds Figures and
// draws them; actions that need the model (re-run, generate) go through PanelContext.
#pragma once

#include "app/figures/figures.h"
#include "app/session/state.h"
#include "app/session/compare_job.h"
#include "app/session/interp_jobs.h"
#include "app/session/neuron_index.h"
#include "app/figures/overview_jobs.h"
#include "app/session/training_lab.h"
#include "app/session/worker.h"

#include <functional>
#include <string>
#include <vector>

struct ImGuiInputTextCallbackData;

namespace ts::ui {

using namespace ts::studio;   // the session layer (app/session) below
using namespace ts::figures;  // the figure builders and views (app/figures) the panels draw

/// The Attention panel's forward A ("pin these settings as A"): kept while the student changes temperature, mask or
/// ablations, so the panel can show A, B and B − A of the selected head on the same text.
struct AttentionPin {
    std::shared_ptr<const Snapshot> snap;
    std::string label;  ///< forward_settings_label at the time of pinning
};

struct PanelContext {
    UiState& state;
    const Snapshot* snap = nullptr;      ///< newest result; nullptr until the first forward finished
    const LoadedModel* model = nullptr;  ///< the current model (also while a forward is still running)
    std::function<void()> rerun;         ///< ask for a new forward with the current knobs
    std::function<void()> generate;      ///< sample a continuation on the worker
    std::shared_ptr<const Snapshot> generation;  ///< newest Generate result
    /// Background analyses of the Causal panel (owned by the app); nullptr in benchmarks.
    InterpJobs* interp = nullptr;
    /// Ask for more frames while something the panel waits for is under way (the idle window otherwise sleeps
    /// until input arrives); cheap: the loop then wakes every 50 ms, not every frame.
    std::function<void()> keep_drawing;
    /// Load another model folder (the Lessons panel's steps name their model); unset in benchmarks.
    std::function<void(const std::string& path)> load_model;
    /// The bundled model folders (full paths); nullptr when unknown.
    const std::vector<std::string>* bundled_models = nullptr;
    /// The Neurons panel's max-activating-examples index (owned by the app); nullptr in benchmarks.
    NeuronIndexJob* neuron_index = nullptr;
    /// The Training panel's live training lab (owned by the app); nullptr in benchmarks.
    TrainingLab* lab = nullptr;
    /// The current snapshot, shared (what "pin as A" keeps); null when `snap` is.
    std::shared_ptr<const Snapshot> snap_shared;
    /// The Attention panel's pinned forward (owned by the app); nullptr in benchmarks (no pin button).
    AttentionPin* attn_pin = nullptr;
    /// The Model panel's quantization lens (owned by the app); nullptr in benchmarks (the lens is then not offered).
    CompareJob* compare = nullptr;
    /// The Attention panel's overviews of a long text, computed off the UI thread (owned by the app); nullptr in
    /// benchmarks and tests: the panel then computes them itself.
    OverviewJobs* overviews = nullptr;
};

struct PanelInfo {
    Panel panel;  ///< its label is tr(name_of(panel))
    void (*draw)(PanelContext&);
};
/// All panels in tab order.
[[nodiscard]] const std::vector<PanelInfo>& all_panels();

void draw_tokens_panel(PanelContext& ctx);
void draw_attention_panel(PanelContext& ctx);
void draw_softmax_panel(PanelContext& ctx);
void draw_activations_panel(PanelContext& ctx);
void draw_neurons_panel(PanelContext& ctx);
void draw_normalization_panel(PanelContext& ctx);
void draw_positions_panel(PanelContext& ctx);
void draw_predictions_panel(PanelContext& ctx);
void draw_residual_panel(PanelContext& ctx);
void draw_model_panel(PanelContext& ctx);
void draw_training_panel(PanelContext& ctx);
void draw_causal_panel(PanelContext& ctx);
void draw_lessons_panel(PanelContext& ctx);
/// The Lessons tab was (re)entered: its step is set up again and its model asked for again (a student who loaded
/// another model meanwhile is not left on "loading the lesson's model…").
void lessons_panel_entered();

// --- helpers shared by panels ---------------------------------------------------------------------------------------
/// Token labels of the snapshot ("3:cat" style when `with_index`), one per position.
[[nodiscard]] std::vector<std::string> token_labels(const Snapshot& s, bool with_index = false);
/// Selected layer / head / query clamped to the snapshot's model.
[[nodiscard]] int current_layer(const PanelContext& ctx);
[[nodiscard]] int current_head(const PanelContext& ctx);
[[nodiscard]] int current_query(const PanelContext& ctx);
/// One head's (rows, cols) slice of a (H, rows, cols) tensor (copy). Empty when absent.
[[nodiscard]] std::vector<float> head_slice(const Tensor* t, int head, int* rows, int* cols);
/// A centred grey message for panels that have nothing to show yet.
void empty_message(const char* text);
/// Text wrapped at the available width the way mixed Chinese and English is set: between CJK characters as well as
/// at spaces (ImGui 1.86's TextWrapped breaks only at spaces, so a Chinese sentence jumped whole to the next line).
void text_wrapped(const std::string& text, float width = 0);  ///< width 0: the available width
/// The attention-mask combo of the Softmax lab and the sidebar: one list of kinds (none, causal, padding, sliding
/// window, custom) in one order. Returns true when the user picked another.
bool mask_combo(MaskChoice& kind);
/// A one-line text field (ImGui::InputTextWithHint) that keeps emoji and other characters beyond U+FFFF: it edits
/// their stand-ins (app/gfx/astral.h) and writes the real text back. Returns true when the text changed.
bool text_field(const char* label, const char* hint, std::string& text);
/// In an ImGuiInputTextFlags_CallbackAlways callback: inserts the emoji typed this frame (astral.h's queue) at the
/// cursor, replacing a selection. Every text box calls it, so typing an emoji works in each.
void insert_typed_emoji(ImGuiInputTextCallbackData* d);
/// `text` with '\n' inserted where text_wrapped would break it at `width` pixels.
[[nodiscard]] std::string wrap_for_width(const std::string& text, float width);
/// ImGui::SameLine() when an item `width` pixels wide still fits on the current row, else nothing (a new row): knob
/// rows wrap on a 1024-pixel window instead of running off its right edge.
void same_line_if_fits(float width);
/// Width of a labelled widget: the item, the inner spacing and its label (up to "##").
[[nodiscard]] float labeled_width(const char* label, float item_w);
/// What a panel without a forward pass should say: "type some text…" when the text is empty (no forward will come),
/// the forward's error when it failed, else `waiting` (translated by the caller).
[[nodiscard]] const char* no_forward_message(const PanelContext& ctx, const char* waiting);
/// "" unless the snapshot's trace left the FFN intermediates out for a long text (Snapshot::ffn_skipped_need); then
/// one translated line saying so, with the bytes and the budget.
[[nodiscard]] std::string ffn_not_recorded_message(const Snapshot& s);
/// Slider for a float on a log scale.
bool slider_log(const char* label, float* v, float lo, float hi, const char* fmt = "%.3g");

}  // namespace ts::ui
