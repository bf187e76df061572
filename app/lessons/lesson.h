// Guided lessons: the lesson file format (JSON, one lesson per file, English and Chinese text side by side), its
// loader with validation that names the file, the step and the field at fault, and the step set-up applied to the
// UI state. GL-free: the Lessons panel and the tests share it. The format is documented in docs/lessons.md.
#pragma once

#include "app/session/state.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ts::lessons {

using namespace ts::studio;  // the session layer (app/session) below: state, ForwardSpec, worker, snapshots

/// A text in both interface languages. `zh` may be empty (then the English text is shown).
/// Texts may name the interface's own labels with placeholders, `{ui:head}`, `{ui:Model}`, `{ui:context length T}`:
/// the braces hold an English interface string (a msgid of po/), shown as the interface shows it (tr()), so a
/// lesson's Chinese says 头 where the slider says 头. Other braces are literal.
struct LocalText {
    std::string en, zh;
    /// The text in `lang` ("en" | "zh"), falling back to English, placeholders filled in by tr() (the current
    /// interface language, which is the one shown).
    [[nodiscard]] std::string in(const std::string& lang) const;
    [[nodiscard]] bool empty() const { return en.empty(); }
};

/// Fills the `{ui:…}` placeholders of a lesson text with tr(msgid). Throws std::invalid_argument on an unclosed or
/// empty placeholder (the loader reports it with the field).
[[nodiscard]] std::string fill_ui_placeholders(const std::string& text);
/// The msgids named by the `{ui:…}` placeholders of a text, in order (for tests and `lessons check`).
[[nodiscard]] std::vector<std::string> ui_placeholders(const std::string& text);

/// How a question is checked against the measure (see lesson_check.h):
///   match    — the knob must equal the measure (the student reads a number off the model and sets it);
///   crossing — the knob must sit where the measure, as a function of the knob, crosses `value` (first crossing
///              scanning the knob range from its `direction` side);
///   argmax / argmin — the knob (an integer: layer, head, query…) must pick where the measure is largest / smallest;
///   below / above — the measure at the current knobs must be below / above `value`.
enum class CheckKind { Match, Crossing, Argmax, Argmin, Below, Above };

struct LessonQuestion {
    LocalText prompt;        ///< the question the student answers by moving the knob
    LocalText hint;          ///< shown with "not yet"
    LocalText label;         ///< what the measure is ("entropy of the row"), for the feedback line
    std::string unit;        ///< unit of the measure ("nats", "bytes", ""), shown after numbers
    std::string knob;        ///< a numeric UiState field (e.g. "sm_temperature", "head") or "answer" (a slider of its own)
    double knob_min = 0, knob_max = 1;  ///< slider / scan range; for layer, head, query: clamped to the model
    bool log_scale = false;  ///< slider and scan on a log scale (knob_min > 0)
    bool integer = false;    ///< integer knob (layer, head, …; argmax / argmin need it)
    double start = NAN;      ///< the knob's value when the step is set up (NaN: unchanged; "answer": knob_min)
    std::string measure;     ///< a name from lesson_measures() (lesson_check.h)
    nlohmann::json params = nlohmann::json::object();  ///< the measure's parameters
    CheckKind check = CheckKind::Match;
    double value = 0;        ///< crossing / below / above: the threshold (in the measure's unit)
    std::string direction = "below";  ///< crossing: "below" (the measure falls below value) | "above"
    double tolerance = 0.05; ///< match: |knob − measure| ≤ tolerance (· |measure| when `relative`); crossing: on the knob
    bool relative = true;
    /// argmax / argmin: a knob whose measure is within this (absolute, in the measure's unit) of the best one is right
    /// too — two heads of 0.848 and 0.875 that both do the job (default 0: ties only).
    double accept_within = 0;
    std::vector<double> accepts;  ///< knob values a student may give that must count as right (checked by tests)
    std::vector<double> rejects;  ///< plausible wrong answers that must be refused (e.g. a count without biases)
};

/// A statement a step's text makes about the model or its figure, as a number with bounds: "head 3 of cross
/// layer 0 is sharp" = attention_sharpness at {layer 0, head 3} ≥ 0.45. Checked by `lessons check` and the tests,
/// so a retrained model that breaks a lesson's story fails a test instead of misleading a class.
struct LessonClaim {
    std::string about;       ///< the statement, in English (for the teacher's check output)
    std::string measure;     ///< as LessonQuestion::measure
    nlohmann::json params = nlohmann::json::object();
    nlohmann::json set = nlohmann::json::object();  ///< knobs changed for this claim only (no new forward pass)
    double min = -INFINITY, max = INFINITY;  ///< the claim holds when min ≤ measure ≤ max
};

struct LessonStep {
    LocalText title, body;   ///< body: two or three sentences on what to look at and why
    std::string formula;     ///< the formula involved (Unicode math; language-neutral)
    std::string model;       ///< model folder name under assets/models ("" = the lesson's model)
    std::optional<std::string> text;        ///< the sentence to run ("" keeps the current text)
    std::optional<std::string> target_text; ///< encoder–decoder models: the teacher-forced target
    std::string view;        ///< a view name of `render --view list`; its panel is shown under the lesson
    nlohmann::json set = nlohmann::json::object();  ///< UiState fields to set (session-file keys)
    std::string requires_arch;  ///< "encoder_decoder": the step needs such a model (skipped otherwise)
    std::optional<LessonQuestion> question;
    std::vector<LessonClaim> claims;
};

struct Lesson {
    std::string file;        ///< where it was loaded from
    std::string id;          ///< unique, e.g. "07-positions"
    int order = 0;           ///< position in the lesson list (course order)
    LocalText title, summary;
    std::string model;       ///< model folder name under assets/models (e.g. "austen-gpt", "zh-en-transformer")
    std::string fallback_model;  ///< used when `model` is not installed ("" = none: the current model)
    LocalText missing_model; ///< shown when `model` is absent (why, and what the fallback does)
    std::vector<LessonStep> steps;
};

/// A lesson file that is not valid. what() = "<file>: step <k>: <field>: <problem>" (step and field when known).
class LessonError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Parses and validates one lesson. `file` names it in errors. Throws LessonError.
[[nodiscard]] Lesson parse_lesson(const nlohmann::json& j, const std::string& file);
/// Reads and parses a lesson file (JSON). Throws LessonError (unreadable, not JSON, invalid).
[[nodiscard]] Lesson load_lesson_file(const std::filesystem::path& file);

struct LessonLibrary {
    std::vector<Lesson> lessons;      ///< sorted by (order, id); a later folder's lesson replaces one with its id
    std::vector<std::string> errors;  ///< one line per file that failed to load (the others still load)
};
/// Loads every *.json of the folders in order (missing folders are skipped).
[[nodiscard]] LessonLibrary load_lesson_library(const std::vector<std::filesystem::path>& dirs);
/// The library the app uses: load_lesson_library(lesson_dirs()), read once (again when `reload`). Not thread-safe:
/// the UI thread's.
[[nodiscard]] const LessonLibrary& app_lesson_library(bool reload = false);
/// Every character of every text of the app's lessons, for the font atlas (Chinese glyphs outside the common set,
/// such as 熵, must be in it).
[[nodiscard]] std::string lesson_font_text();
/// The bundled lessons (assets/lessons, found like the bundled models) and the user's own
/// (config_dir()/lessons, e.g. ~/.config/transformer-studio/lessons), in that order.
[[nodiscard]] std::vector<std::filesystem::path> lesson_dirs();

/// The panel of a step's view (Softmax for "softmax-lab"); nullopt for a view that does not exist.
[[nodiscard]] std::optional<Panel> step_panel(const LessonStep& step);
/// Applies the set-ups of steps 0..`step` in order, so a step entered directly (or set up again) finds the
/// sentence and settings earlier steps established. Throws as apply_step_setup.
void apply_lesson_setup(const Lesson& lesson, size_t step, UiState& st);
/// Applies a step's set-up to the state: text, target, `set` fields, and the question's start value.
/// The model is the caller's business (resolve_lesson_model). Throws std::invalid_argument on a bad field
/// (cannot happen for a validated lesson).
void apply_step_setup(const LessonStep& step, UiState& st);

struct ResolvedModel {
    std::string path;        ///< folder to load ("" = keep the current model)
    std::string wanted;      ///< the folder name the lesson / step asks for
    bool missing = false;    ///< `wanted` is not installed: `path` is the fallback (or "")
};
/// Finds the step's model (step.model, else lesson.model) among the bundled model folders (full paths, e.g. from
/// list_bundled_model_dirs); falls back to lesson.fallback_model.
[[nodiscard]] ResolvedModel resolve_lesson_model(const Lesson& lesson, const LessonStep& step,
                                                 const std::vector<std::string>& bundled_dirs);

[[nodiscard]] const char* check_kind_name(CheckKind k);

}  // namespace ts::lessons
