// Running a lesson without a window: every step set up on its model, its figures built and its question checked,
// as the Lessons panel would. For `transformer-studio lessons check` (a teacher's file, before class) and tests.
#pragma once

#include "app/session/lesson.h"
#include "app/session/lesson_check.h"
#include "app/session/worker.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ts::ui {

struct StepRun {
    size_t step = 0;             ///< 0-based
    std::string model;           ///< the model's config name it ran on
    bool model_missing = false;  ///< the lesson's model is not installed (ran on the fallback)
    bool skipped = false;        ///< needs an encoder–decoder model and the model is not one
    size_t figures = 0;          ///< figures of the step's view
    std::string error;           ///< set-up, forward, view or check failure ("" = fine)
    bool has_question = false;
    CheckResult check;           ///< the check at the question's start; check.expected is the answer
};

/// Models loaded by folder, kept for the next lesson.
using ModelCache = std::map<std::string, std::shared_ptr<LoadedModel>>;

/// Walks the steps in order on their models (found among `bundled_dirs`; a lesson without a model, or whose model
/// and fallback are missing, runs on `default_dir`). Never throws: problems go to StepRun::error.
[[nodiscard]] std::vector<StepRun> run_lesson_headless(const Lesson& lesson, const std::vector<std::string>& bundled_dirs,
                                                       const std::string& default_dir, ModelCache& cache);

}  // namespace ts::ui
