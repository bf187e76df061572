// Headless lesson runs (see lesson_run.h).
#include "app/lessons/lesson_run.h"

#include "app/figures/views.h"

#include <cmath>
#include <cstdio>

namespace ts::lessons {

namespace {

std::string number(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.6g", v);
    return b;
}

/// The listed right and wrong answers, and how clearly the best knob of an argmax / argmin question stands out.
void audit_question(const LessonQuestion& q, const UiState& st, const Snapshot* snap, const Model* model, StepRun& r) {
    auto status_at = [&](double v) {
        UiState s2 = st;
        if (q.knob != "answer") set_knob(s2, q.knob, v);
        return check_question(q, s2, snap, model, v);
    };
    for (double v : q.accepts) {
        const CheckResult c = status_at(v);
        if (c.status != CheckResult::Status::Correct)
            r.answer_problems.push_back("the right answer " + number(v) + " is refused (expected " + number(c.expected) + ")");
    }
    for (double v : q.rejects) {
        const CheckResult c = status_at(v);
        if (c.status == CheckResult::Status::Correct)
            r.answer_problems.push_back("the wrong answer " + number(v) + " is accepted");
    }
    if (q.check != CheckKind::Argmax && q.check != CheckKind::Argmin) return;
    double lo = 0, hi = 0;
    knob_range(q, snap, model, &lo, &hi, &st);
    for (double k = lo; k <= hi; k += 1) {
        const CheckResult c = status_at(k);
        if (c.status == CheckResult::Status::NotYet) {
            const double gap = std::fabs(c.measured - c.best_measure);
            if (!(gap >= r.runner_up_gap)) r.runner_up_gap = gap;
        }
    }
}

}  // namespace

std::vector<StepRun> run_lesson_headless(const Lesson& lesson, const std::vector<std::string>& bundled_dirs,
                                         const std::string& default_dir, ModelCache& cache) {
    std::vector<StepRun> out;
    auto load = [&cache](const std::string& dir) -> std::shared_ptr<LoadedModel> {
        auto it = cache.find(dir);
        if (it == cache.end()) it = cache.emplace(dir, std::make_shared<LoadedModel>(load_model_folder(dir))).first;
        return it->second;
    };
    std::string current_dir = default_dir;
    for (size_t i = 0; i < lesson.steps.size(); ++i) {
        const LessonStep& step = lesson.steps[i];
        StepRun r;
        r.step = i;
        try {
            const ResolvedModel rm = resolve_lesson_model(lesson, step, bundled_dirs);
            r.model_missing = rm.missing;
            if (!rm.path.empty()) current_dir = rm.path;
            if (current_dir.empty()) throw std::runtime_error("no model folder to run on");
            const std::shared_ptr<LoadedModel> lm = load(current_dir);
            r.model = lm->model->config().name;
            UiState st;
            apply_lesson_setup(lesson, i, st);
            r.skipped = step.requires_arch == "encoder_decoder" && lm->model->config().arch != Arch::EncoderDecoder;
            if (!r.skipped) {
                const std::shared_ptr<const Snapshot> snap = figures::run_forward_now(st, *lm);
                if (!snap->error.empty()) throw std::runtime_error("forward pass: " + snap->error);
                r.figures = figures::build_view(step.view, st, snap.get(), lm.get()).figures.size();
                if (step.question) {
                    const LessonQuestion& q = *step.question;
                    r.has_question = true;
                    r.check = check_question(q, st, snap.get(), lm->model.get(), std::isfinite(q.start) ? q.start : q.knob_min);
                    if (r.check.status == CheckResult::Status::Unavailable) r.error = "question: " + r.check.error;
                    else audit_question(q, st, snap.get(), lm->model.get(), r);
                }
                // Claims are about the lesson's own model: on a fallback they are not checked (and not false).
                if (!r.model_missing)
                    for (const LessonClaim& c : step.claims) r.claims.push_back(evaluate_claim(c, st, snap.get(), lm->model.get()));
            }
        } catch (const std::exception& e) {
            r.error = e.what();
        }
        out.push_back(r);
    }
    return out;
}

}  // namespace ts::lessons
