// libFuzzer target for lesson files: bytes -> parse_json -> parse_lesson -> every step's set-up applied to a state,
// every claim evaluated and every text shown, and every question checked without a model (measures that need one must say so with std::runtime_error).
// A malformed lesson must give LessonError / std::runtime_error (or std::invalid_argument from a set-up), nothing
// else: no crash, no other exception, no unbounded allocation or time.
#include "app/lessons/lesson.h"
#include "app/lessons/lesson_check.h"
#include "app/session/state.h"
#include "core/util/json.h"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    ts::lessons::Lesson lesson;
    try {
        lesson = ts::lessons::parse_lesson(ts::parse_json(text, "fuzz.json"), "fuzz.json");
    } catch (const std::runtime_error&) {
        return 0;  // LessonError is a runtime_error
    }
    if (lesson.steps.empty()) __builtin_trap();  // a validated lesson has steps
    ts::studio::UiState st;
    for (size_t i = 0; i < lesson.steps.size() && i < 16; ++i) {
        try {
            ts::lessons::apply_lesson_setup(lesson, i, st);
        } catch (const std::invalid_argument&) {
            continue;
        }
        // Texts with their {ui:…} placeholders filled, and the claims (they report errors, never throw).
        (void)lesson.steps[i].body.in("zh");
        (void)lesson.steps[i].title.in("en");
        for (const auto& c : lesson.steps[i].claims) (void)ts::lessons::evaluate_claim(c, st, nullptr, nullptr);
        const auto& q = lesson.steps[i].question;
        if (!q) continue;
        try {
            (void)ts::lessons::check_question(*q, st, nullptr, nullptr, 0.5);
        } catch (const std::runtime_error&) {
        } catch (const std::invalid_argument&) {
        }
    }
    return 0;
}
