// The Causal panel's analyses (core/interp) run off the UI thread, one at a time, beside the forward worker so that
// typing stays live while a sweep runs: head-ablation sweep, activation patching (residual stream and head
// outputs), direct logit attribution, attention flow and the head detectors. Results are immutable and kept per kind until replaced.
// GL-free.
#pragma once

#include "app/session/state.h"
#include "app/session/worker.h"
#include "core/interp/ablation.h"
#include "core/interp/attention_flow.h"
#include "core/interp/head_detectors.h"
#include "core/interp/input_attribution.h"
#include "core/interp/logit_attribution.h"
#include "core/interp/patching.h"

#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ts::studio {

/// The inputs an analysis was run on, resolved to ids (for titles and notes).
struct InterpInputs {
    std::vector<int> ids, corrupt_ids;
    std::vector<std::string> labels;     ///< token labels of `ids`
    int target = -1, minus = -1;         ///< token ids (target: the explained token; minus: -1 = none)
    int answer = -1, wrong = -1;         ///< patching metric tokens
    std::string target_label, minus_label, answer_label, wrong_label;
    std::vector<interp::HeadRef> ablated;  ///< heads ablated in every run (the state's)
    interp::AblationKind ablate_mode = interp::AblationKind::Zero;
};

/// One finished analysis. Exactly one of the optional results is set, or `error` is non-empty.
struct InterpResult {
    enum class Kind { Sweep, Patching, Attribution, Flow, Heads, Inputs };
    Kind kind = Kind::Sweep;
    InterpInputs in;
    std::optional<interp::AblationSweep> sweep;
    std::optional<interp::PatchingBaseline> baseline;
    std::optional<interp::PatchingResult> patch_resid, patch_heads;
    std::optional<interp::LogitAttribution> attribution;
    MatrixRM attr_heads;                 ///< (n_layers, n_heads) head terms of the attribution (NaN when absent)
    std::optional<interp::AttentionFlow> flow;
    /// Heads: each head's score for each kind of interp::kHeadKinds, (n_layers, n_heads) each, on `in.ids` (the
    /// text, or repeated random tokens when `heads_on_random`).
    std::vector<MatrixRM> head_scores;
    bool heads_on_random = false;
    interp::DetectOptions heads_options;  ///< the exclusions the scores were computed with
    /// Inputs: input attribution of the target (minus: the contrast) predicted after the state's query token (-1:
    /// the last); the forward's knobs
    /// (temperature, masks, ablations) are not applied, and `inputs_note` says so when some were set.
    std::optional<interp::Attribution> inputs;
    interp::AttributionOptions inputs_options;  ///< the options it ran with (without progress and cancel)
    /// Inputs on an encoder–decoder: every generated token's attribution to the source and earlier target tokens
    /// (the text's translation, or the typed target), the cross-attention over the same pairs (mean over decoder
    /// layers and heads, (T, S)), and per row the Spearman correlation of |source attribution| with it.
    std::optional<interp::Seq2SeqAttribution> inputs_seq2seq;
    MatrixRM cross_attn_mean;
    int cross_attn_layers = 0, cross_attn_heads = 0;  ///< what cross_attn_mean averages
    std::vector<float> rank_corr;
    std::vector<std::string> source_labels, output_labels;
    std::string inputs_note;
    std::string error;
    double seconds = 0;
};

/// The analyses' names on the command line (`--analyses`): sweep, patching, attribution, flow, heads, inputs.
inline constexpr std::pair<InterpResult::Kind, const char*> kInterpKindNames[] = {
    {InterpResult::Kind::Sweep, "sweep"},
    {InterpResult::Kind::Patching, "patching"},
    {InterpResult::Kind::Attribution, "attribution"},
    {InterpResult::Kind::Flow, "flow"},
    {InterpResult::Kind::Heads, "heads"},
    {InterpResult::Kind::Inputs, "inputs"}};
/// The kind named `name` in kInterpKindNames; nullopt for another name.
[[nodiscard]] inline std::optional<InterpResult::Kind> parse_interp_kind(std::string_view name) {
    for (const auto& [kind, n] : kInterpKindNames)
        if (name == n) return kind;
    return std::nullopt;
}

/// First token of `text` under the codec, or -1 for "" (the caller's fallback applies). Throws
/// std::invalid_argument "<what> '<text>' encodes to no token".
[[nodiscard]] int first_token(const TextCodec& codec, const std::string& text, const char* what);
/// The snapshot's top next-token prediction at the last position (-1 without logits).
[[nodiscard]] int top_prediction(const Snapshot* s);

/// "'label'": a token label as titles quote it.
[[nodiscard]] std::string quoted_token(const std::string& label);

/// Resolves the state's analysis inputs against the model: tokenizes text / corrupted text with the codec, picks
/// the first token of each token field ("" target = `fallback_target`, usually the clean top prediction). Throws
/// std::invalid_argument with a message for the panel (empty text, a token field that encodes to nothing, clean
/// and corrupted prompts of different token lengths when `need_corrupt`).
[[nodiscard]] InterpInputs resolve_interp_inputs(const UiState& st, const LoadedModel& m, bool need_corrupt,
                                                 int fallback_target);

/// The seed of the head detectors' random-token probe: the same probe on every run, so scores can be compared.
inline constexpr uint64_t kDetectSeed = 7;
/// Patching sweeps of a Patching run (bit mask): the residual stream, the head outputs.
inline constexpr int kPatchResid = 1, kPatchHeads = 2;

/// The input-attribution options the state asks for (method, steps, span, baseline; no progress or cancel), as
/// the Causal panel, `render` and the lessons' measures run them.
[[nodiscard]] interp::AttributionOptions attribution_options(const UiState& st);

/// Runs one analysis on this thread (the job body; also what `render` calls). Never throws: errors go to
/// InterpResult::error. `progress(done, total)` and `cancel` as in core/interp; `patch_parts` picks the patching
/// sweeps (render needs one per view).
[[nodiscard]] InterpResult run_interp(InterpResult::Kind kind, const UiState& st, const LoadedModel& m,
                                      int fallback_target, const interp::Progress& progress = {},
                                      const std::atomic<bool>* cancel = nullptr,
                                      int patch_parts = kPatchResid | kPatchHeads);

/// One background analysis at a time; poll() every frame.
class InterpJobs {
public:
    ~InterpJobs();
    /// Runs on the job thread when any job finishes, unless start() got its own (the app: glfwPostEmptyEvent).
    void set_on_done(std::function<void()> fn) { m_on_done = std::move(fn); }
    /// Starts `kind` with a copy of the state and model. Ignored (false) while another job runs. `on_done` runs on
    /// the job thread when it finishes (e.g. glfwPostEmptyEvent).
    bool start(InterpResult::Kind kind, const UiState& st, const LoadedModel& m, int fallback_target,
               std::function<void()> on_done = {});
    [[nodiscard]] bool busy() const { return m_future.valid(); }
    [[nodiscard]] InterpResult::Kind running_kind() const { return m_kind; }
    /// Fraction done in [0, 1].
    [[nodiscard]] float progress() const { return m_progress ? m_progress->load() : 0.0f; }
    void cancel() { if (m_cancel) m_cancel->store(true); }
    /// Moves a finished result into its slot; true when one arrived this call.
    bool poll();
    /// Newest result of a kind (nullptr before the first).
    [[nodiscard]] std::shared_ptr<const InterpResult> latest(InterpResult::Kind kind) const;
    /// Forget results (a new model).
    void clear();

private:
    std::future<InterpResult> m_future;
    InterpResult::Kind m_kind = InterpResult::Kind::Sweep;
    std::shared_ptr<std::atomic<float>> m_progress;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    std::shared_ptr<const InterpResult> m_latest[6];
    std::function<void()> m_on_done;
};

}  // namespace ts::studio
