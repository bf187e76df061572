// Running a lesson without a window: every step set up on its model, its figures built and its question checked,
// as the Lessons panel would. For `transformer-studio lessons check` (a teacher's file, before class) and tests.
#pragma once

#include "app/lessons/lesson.h"
#include "app/lessons/lesson_check.h"
#include "app/session/worker.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ts::lessons {

using namespace ts::studio;  // the session layer (app/session) below: state, ForwardSpec, worker, snapshots

struct StepRun {
    size_t step = 0;             ///< 0-based
    std::string model;           ///< the model's config name it ran on
    bool model_missing = false;  ///< the lesson's model is not installed (ran on the fallback)
    bool skipped = false;        ///< needs an encoder–decoder model and the model is not one
    size_t figures = 0;          ///< figures of the step's view
    std::string error;           ///< set-up, forward, view or check failure ("" = fine)
    bool has_question = false;
    CheckResult check;           ///< the check at the question's start; check.expected is the answer
    /// argmax / argmin: how far the best wrong knob's measure is from the best one (NaN: every knob is right). A
    /// question a class can answer by looking needs a visible gap (the tests ask for 10 % of the best).
    double runner_up_gap = NAN;
    std::vector<std::string> answer_problems;  ///< a listed `accepts` value refused or a `rejects` value accepted
    std::vector<ClaimResult> claims;           ///< one per step claim, in order (none on a fallback model)
};

/// An argmax / argmin question's best knob must beat every wrong one by this share of its measure (10 %): a class
/// cannot tell 0.327 from 0.297 on a heatmap.
inline constexpr double kMinArgmaxGap = 0.10;

/// Models loaded by folder, kept for the next lesson.
using ModelCache = std::map<std::string, std::shared_ptr<LoadedModel>>;

/// Walks the steps in order on their models (found among `bundled_dirs`; a lesson without a model, or whose model
/// and fallback are missing, runs on `default_dir`). Never throws: problems go to StepRun::error.
[[nodiscard]] std::vector<StepRun> run_lesson_headless(const Lesson& lesson, const std::vector<std::string>& bundled_dirs,
                                                       const std::string& default_dir, ModelCache& cache);

}  // namespace ts::lessons
