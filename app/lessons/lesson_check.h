// Live checking of lesson questions: named measures computed from the current UI state and Snapshot (the model's
// own numbers, the same ones the figures show), and the checker that compares the student's knob with them.
// Nothing is hard-coded: crossings and arg-maxes are found by re-evaluating the measure over the knob's range.
// GL-free.
#pragma once

#include "app/lessons/lesson.h"
#include "app/session/worker.h"

#include <string>
#include <vector>

namespace ts::lessons {

using namespace ts::studio;  // the session layer (app/session) below: state, ForwardSpec, worker, snapshots

struct MeasureInfo {
    std::string name;
    bool needs_snapshot;                 ///< needs a forward pass (the softmax measures need one only for a model row)
    std::vector<std::string> params;     ///< parameter names it accepts
    std::string description;
};
/// Every measure a lesson may name.
[[nodiscard]] const std::vector<MeasureInfo>& lesson_measures();
[[nodiscard]] const MeasureInfo* find_measure(const std::string& name);

/// The knob's current value in the state (or `answer` for the knob "answer"). Throws std::invalid_argument when
/// the knob is not a numeric UiState field.
/// Tells snapshots apart even when an address and an id repeat (snapshots made outside the worker all have id 0):
/// the trace's address, the token ids and a few logits. "-" for null.
[[nodiscard]] std::string snapshot_fingerprint(const Snapshot* s);
[[nodiscard]] double knob_value(const UiState& st, const std::string& knob, double answer);
/// Sets a numeric knob (rounded for integer fields, then clamped to the setting's range like a loaded state:
/// a lesson cannot ask for a 1e9-wide position table); "answer" is not a state field and is ignored.
void set_knob(UiState& st, const std::string& knob, double v);
/// True for numeric UiState fields a question may scan without a new forward pass.
[[nodiscard]] bool is_scannable_knob(const std::string& knob);

/// The measure of question `q` at the state `st` (the knob "answer" does not change a measure).
/// Throws std::runtime_error naming what is missing (no forward yet, tensor not recorded, no such layer…).
[[nodiscard]] double evaluate_measure(const LessonQuestion& q, const UiState& st, const Snapshot* snap,
                                      const Model* model);
/// A measure by name with its parameters (what evaluate_measure does for a question). Throws as evaluate_measure.
[[nodiscard]] double evaluate_named_measure(const std::string& measure, const nlohmann::json& params, const UiState& st,
                                            const Snapshot* snap, const Model* model);

struct ClaimResult {
    bool holds = false;
    double value = 0;        ///< the measure (NaN when it could not be computed)
    std::string error;       ///< why the measure could not be computed ("" = it was)
};
/// Evaluates a step's claim at the step's state `st` with the claim's own `set` knobs applied.
[[nodiscard]] ClaimResult evaluate_claim(const LessonClaim& c, const UiState& st, const Snapshot* snap, const Model* model);
/// "0.45 ≤ x", "x ≤ 0.1", "0.2 ≤ x ≤ 0.3": a claim's bounds, for messages.
[[nodiscard]] std::string claim_bounds(const LessonClaim& c);

struct CheckResult {
    enum class Status { Correct, NotYet, Unavailable };
    Status status = Status::Unavailable;
    double knob = 0;          ///< the student's value
    double measured = 0;      ///< the measure at the student's knob
    double expected = 0;      ///< the value the knob should have (match: the measure; crossing: where it crosses;
                              ///< argmax/argmin: the best knob; below/above: the threshold)
    double best_measure = 0;  ///< argmax/argmin: the measure at the best knob
    bool too_high = false;    ///< NotYet for match/crossing: the knob is above the expected value
    std::string error;        ///< Unavailable: why (no forward yet, no crossing in the knob range, …)
};
/// Checks the student's answer: the knob's value in `st` (or `answer` for the knob "answer").
[[nodiscard]] CheckResult check_question(const LessonQuestion& q, const UiState& st, const Snapshot* snap,
                                         const Model* model, double answer);
/// The knob range actually scanned: [knob_min, knob_max], clamped for layer / head / query to the model and text
/// (layer: the layers of st->attn_source's stack on encoder–decoder models).
void knob_range(const LessonQuestion& q, const Snapshot* snap, const Model* model, double* lo, double* hi,
                const UiState* st = nullptr);

}  // namespace ts::lessons
