// `transformer-studio lessons`: list the lessons the app would show, or check lesson files before class: each file
// is validated, then every step is set up on its model, its figures are built and its question is checked against
// the model's numbers (the answer it expects is printed, for the teacher).
#include "app/cli/args.h"
#include "app/cli/cli.h"
#include "app/lessons/lesson_run.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

namespace ts::cli {

namespace {

const char* const kUsage =
    "usage: transformer-studio lessons list                 the lessons the app shows (bundled + your own folder)\n"
    "       transformer-studio lessons check FILE.json...   validate lesson files and run every step headless\n"
    "  Lesson files: docs/lessons.md. Your own: ~/.config/transformer-studio/lessons/*.json\n";

std::string fmt(double v) {
    char b[48];
    std::snprintf(b, sizeof b, "%.6g", v);
    return b;
}

/// Runs every lesson; problems are printed on stdout with their step and summed up in one stderr line.
int check_lessons(const std::vector<lessons::Lesson>& lessons, std::vector<std::string> problems) {
    const std::vector<std::string> bundled = studio::list_bundled_model_dirs("");
    const std::string def = studio::find_default_model_dir("");
    lessons::ModelCache cache;
    for (const lessons::Lesson& l : lessons) {
        std::printf("%s (%s): %zu steps\n", l.id.c_str(), l.file.c_str(), l.steps.size());
        for (const lessons::StepRun& r : lessons::run_lesson_headless(l, bundled, def, cache)) {
            const lessons::LessonStep& s = l.steps[r.step];
            std::string line = "  step " + std::to_string(r.step + 1) + " [" + s.view + " on " +
                               (r.model.empty() ? std::string("?") : r.model) + "]";
            if (r.model_missing) line += " (lesson model missing: fallback)";
            std::vector<std::string> step_problems;
            if (!r.error.empty()) {
                line += " ERROR: " + r.error;
                problems.push_back(l.file + ": step " + std::to_string(r.step + 1) + ": " + r.error);
            } else if (r.skipped) {
                line += " skipped (needs an encoder-decoder model)";
            } else {
                line += ' ';  // (appending piecewise: GCC 12 warns falsely on " " + std::to_string(...))
                line += std::to_string(r.figures);
                line += " figure(s)";
                if (r.has_question) {
                    const lessons::LessonQuestion& q = *s.question;
                    line += std::string("; ") + lessons::check_kind_name(q.check) + " " + q.measure + ": " + q.knob +
                        " = " + fmt(r.check.expected) + " expected";
                    if (std::isfinite(r.runner_up_gap)) {
                        line += " (next best " + fmt(r.runner_up_gap) + " away)";
                        if (r.runner_up_gap < lessons::kMinArgmaxGap * std::fabs(r.check.best_measure))
                            step_problems.push_back("question: the best " + q.knob + " (" + fmt(r.check.best_measure) +
                                                    ") is within " + fmt(r.runner_up_gap) +
                                                    " of a wrong one: too close to tell apart by eye");
                    }
                    for (const std::string& p : r.answer_problems) step_problems.push_back("question: " + p);
                }
            }
            std::printf("%s\n", line.c_str());
            if (r.model_missing && !s.claims.empty())
                std::printf("    %zu claim(s) not checked: they are about the lesson's own model\n", s.claims.size());
            for (size_t c = 0; c < r.claims.size() && c < s.claims.size(); ++c) {
                const lessons::ClaimResult& cr = r.claims[c];
                const std::string verdict = !cr.error.empty() ? "ERROR: " + cr.error : cr.holds ? "holds" : "FALSE";
                std::printf("    claim \"%s\": %s = %s (%s): %s\n", s.claims[c].about.c_str(),
                            s.claims[c].measure.c_str(), fmt(cr.value).c_str(),
                            lessons::claim_bounds(s.claims[c]).c_str(), verdict.c_str());
                if (!cr.holds) step_problems.push_back("claim \"" + s.claims[c].about + "\" " + verdict);
            }
            for (const std::string& p : step_problems) {
                std::printf("    PROBLEM: %s\n", p.c_str());
                problems.push_back(l.file + ": step " + std::to_string(r.step + 1) + ": " + p);
            }
        }
    }
    if (problems.empty()) return 0;
    std::string msg = problems.front();
    if (problems.size() > 1) msg += " (and " + std::to_string(problems.size() - 1) + " more problem(s), listed above)";
    std::fprintf(stderr, "transformer-studio lessons: %s\n", msg.c_str());
    return 1;
}

}  // namespace

int run_lessons(int argc, char** argv) {
    if (print_help_if_asked(argc, argv, 2, kUsage)) return 0;
    const Args args(argc, argv, 2, {}, {});
    const auto& pos = args.positional();
    if (pos.empty()) throw std::invalid_argument("expected list or check FILE... (see --help)");
    if (pos[0] == "list") {
        const lessons::LessonLibrary lib = lessons::load_lesson_library(lessons::lesson_dirs());
        for (const auto& e : lib.errors) std::fprintf(stderr, "transformer-studio lessons: %s\n", e.c_str());
        for (const lessons::Lesson& l : lib.lessons)
            std::printf("%-22s %2zu steps  %s  (%s)\n", l.id.c_str(), l.steps.size(), l.title.en.c_str(), l.file.c_str());
        return lib.errors.empty() ? 0 : 1;
    }
    if (pos[0] != "check") throw std::invalid_argument("unknown action '" + pos[0] + "' (expected list or check)");
    if (pos.size() < 2) throw std::invalid_argument("check expects one or more lesson files");
    std::vector<lessons::Lesson> lessons;
    std::vector<std::string> problems;
    for (size_t i = 1; i < pos.size(); ++i) {
        try {
            lessons.push_back(lessons::load_lesson_file(pos[i]));
        } catch (const std::exception& e) {
            std::printf("ERROR: %s\n", e.what());
            problems.push_back(e.what());
        }
    }
    return check_lessons(lessons, problems);
}

}  // namespace ts::cli
