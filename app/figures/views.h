// Named views: every plot of every panel under a stable name ("attention", "softmax", "positions-table", ...) with
// the options that change it, built from a UiState + Snapshot by the same builders the panels use. The headless
// `render` command, the app's Export menu and session files all go through here. GL-free.
#pragma once

#include "app/plot/figure.h"
#include "app/session/forward_spec.h"
#include "app/session/state.h"
#include "app/session/worker.h"
#include "core/interp/ablation.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace ts::figures {

using namespace ts::studio;  // the session layer (app/session) below: state, ForwardSpec, worker, snapshots

struct ViewBuild;  // views.cpp: what a builder reads (state, snapshot, model, layer and head) and the figures it adds

struct ViewInfo {
    std::string name;                    ///< "attention-grid"
    Panel panel = Panel::Tokens;         ///< the app tab it comes from
    std::string description;
    std::vector<std::string> options;    ///< CLI options that change it (without "--")
    bool needs_forward = true;           ///< needs a forward pass of the text (false: synthetic / formula only)
    void (*build)(ViewBuild&) = nullptr;  ///< makes its figures (build_view)
};
/// Every view, grouped by panel in tab order.
[[nodiscard]] const std::vector<ViewInfo>& all_views();
/// nullptr when unknown.
[[nodiscard]] const ViewInfo* find_view(const std::string& name);
/// The main view of a panel (Attention -> "attention"); "" for Lessons, which has none of its own.
[[nodiscard]] std::string default_view_for_panel(Panel panel);
/// Multi-line listing for `render --view list`.
[[nodiscard]] std::string describe_views();

struct ViewFigures {
    std::vector<plot::Figure> figures;
    int columns = 0;                     ///< grid columns for a one-image export (0: automatic)
    std::vector<std::string> names;      ///< a file stem per figure ("layer1_head3")
};

/// Builds a view. `snap` may be null for views with needs_forward = false; `model` may be null for views that do
/// not need one. Throws std::invalid_argument for an unknown view and std::runtime_error when the data it needs
/// is missing (no forward pass, tensor not recorded, model without an LM head).
[[nodiscard]] ViewFigures build_view(const std::string& view, const UiState& st, const Snapshot* snap,
                                     const LoadedModel* model);

/// Sets one CLI option of `view` in the state (e.g. "temperature" -> sm_temperature for softmax views,
/// sample_temperature for predictions). Flags pass value "true". Throws std::invalid_argument when the option
/// does not apply to the view or the value is invalid.
void apply_view_option(UiState& st, const std::string& view, const std::string& option, const std::string& value);
/// Every option name any view accepts (for the argument parser); flags are listed by view_flag_options().
[[nodiscard]] std::vector<std::string> view_value_options();
[[nodiscard]] std::vector<std::string> view_flag_options();
/// Options that may be given more than once, each value applied in turn (like --set): "ab-set". Not in
/// view_value_options().
[[nodiscard]] std::vector<std::string> view_multi_options();
/// `--set key=value`: sets any UiState JSON field (value parsed as JSON, else taken as a string). Throws
/// std::invalid_argument for an unknown key or a value of the wrong type.
void set_state_field(UiState& st, const std::string& assignment);

/// Refuses knobs the model cannot honour, before a figure silently clamps them: `layer` / `head` (when the view
/// reads them) outside the stack `attn_source` selects, and ablated heads outside the model. Throws
/// std::invalid_argument naming the option, the value and the model's range.
void check_view_knobs(const UiState& st, const std::string& view, const ModelConfig& c);
/// Tokenizes st.text and runs the forward pass on this thread (what the worker would publish). With `panel`, only
/// what that tab's views read (panel_reads_logits, panel_shows_lens); nullopt: logits and the logit lens too.
[[nodiscard]] std::shared_ptr<const Snapshot> run_forward_now(const UiState& st, const LoadedModel& m,
                                                              bool translate = false,
                                                              std::optional<Panel> panel = std::nullopt);

/// A session file is a UiState JSON (same keys as state.json). load_session throws std::runtime_error naming the
/// file when it cannot be read or is not a JSON object; unknown keys are ignored, bad values repaired (clamp()).
[[nodiscard]] UiState load_session(const std::filesystem::path& file);
/// Atomic write (temp file + rename); throws std::runtime_error naming the path.
void save_session(const std::filesystem::path& file, const UiState& st);

}  // namespace ts::figures
