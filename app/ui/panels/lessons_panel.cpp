// Lessons panel: a guided lesson (assets/lessons/*.json, or the user's own folder) shown one step at a time above
// the panel the step needs. Entering a step sets up the app (model, text, knobs); the step's question is checked
// live against the model's numbers (app/lessons/lesson_check.h) while the student moves the knob.
#include "app/i18n/language.h"
#include "app/i18n/tr.h"
#include "app/lessons/lesson.h"
#include "app/lessons/lesson_check.h"
#include "app/ui/panels/panels.h"
#include "app/figures/views.h"
#include "app/gfx/painter.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

namespace ts::ui {

using namespace ts::lessons;  // the lesson files, checks and runs (app/lessons) this panel presents

namespace {

struct LessonsUi {
    std::string applied;                   ///< "<lesson id>#<step>" last set up
    double start_knob = NAN;               ///< the knob's value right after the set-up
    bool touched = false;                  ///< the student moved the knob since (before: no verdict yet)
    bool reload = false;                   ///< "Reload lessons" was pressed
    std::map<std::string, double> answers; ///< the "answer" slider of each step, by "<lesson id>#<step>"
    /// The model that was current when the lesson's model was last asked for: ask again only once it has changed
    /// (a load was refused while another one ran), never in a loop when the folder cannot be loaded.
    std::string asked_with = "\x01";
};

LessonsUi& ui() {
    static LessonsUi u;
    return u;
}

std::string fmt_num(double v) {
    char buf[64];
    if (v != 0 && (std::fabs(v) >= 1e6 || std::fabs(v) < 1e-3)) std::snprintf(buf, sizeof buf, "%.4g", v);
    else if (std::fabs(v - std::round(v)) < 1e-9) std::snprintf(buf, sizeof buf, "%.0f", v);
    else std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

/// What the student sees for a knob: the name the panels give the setting, else the setting's key.
std::string knob_label(const std::string& knob) {
    static const std::map<std::string, const char*> names = {
        {"answer", TS_N_("your answer")},          {"sm_temperature", TS_N_("temperature T")},
        {"act_swish_beta", TS_N_("β (Swish)")},    {"act_leaky_alpha", TS_N_("α (LeakyReLU)")},
        {"norm_eps", TS_N_("ε")},                  {"norm_beta", TS_N_("β (shift)")},
        {"norm_gamma", TS_N_("γ (scale)")},        {"norm_mean", TS_N_("data mean")},
        {"norm_std", TS_N_("data std")},           {"rope_theta", TS_N_("rope_theta θ")},
        {"pe_d_model", TS_N_("d_model")},          {"pe_base", TS_N_("base")},
        {"kv_context", TS_N_("context length")},   {"layer", TS_N_("layer")},
        {"head", TS_N_("head")},                   {"query", TS_N_("query")},
        {"sample_temperature", TS_N_("sampling temperature")}, {"norm_outlier", TS_N_("shift of row 0")},
        {"train_warmup", TS_N_("warm-up steps")},  {"train_dropout", TS_N_("dropout p")},
        {"train_lr", TS_N_("learning rate η")},    {"train_weight_decay", TS_N_("weight decay λ")},
        {"train_grad", TS_N_("gradient g")},       {"train_label_smoothing", TS_N_("label smoothing ε")}};
    auto it = names.find(knob);
    return it == names.end() ? knob : tr(it->second);
}

bool is_encoder_decoder(const PanelContext& ctx) {
    return ctx.model && ctx.model->model && ctx.model->model->config().arch == Arch::EncoderDecoder;
}

/// The slider of the question's knob: the app setting itself, or the step's own "answer" value.
void knob_control(PanelContext& ctx, const LessonQuestion& q, double& answer) {
    const float line_h = ImGui::GetTextLineHeight();
    double lo = q.knob_min, hi = q.knob_max;
    knob_range(q, ctx.snap, ctx.model ? ctx.model->model.get() : nullptr, &lo, &hi, &ctx.state);
    const std::string label = knob_label(q.knob);
    ImGui::SetNextItemWidth(line_h * 18);
    double v = 0;
    try {
        v = knob_value(ctx.state, q.knob, answer);
    } catch (const std::exception&) {
        return;
    }
    bool changed = false;
    if (q.integer) {
        int iv = int(std::lround(v));
        changed = ImGui::SliderInt(label.c_str(), &iv, int(lo), int(hi));
        ImGui::SameLine();
        ImGui::SetNextItemWidth(line_h * 7);
        changed |= ImGui::InputInt("##exact", &iv);
        v = std::clamp(double(iv), lo, hi);
    } else {
        float fv = float(v);
        changed = ImGui::SliderFloat(label.c_str(), &fv, float(lo), float(hi), "%.4g",
                                     q.log_scale ? ImGuiSliderFlags_Logarithmic : 0);
        ImGui::SameLine();
        ImGui::SetNextItemWidth(line_h * 7);
        double dv = fv;
        if (ImGui::InputDouble("##exact", &dv, 0, 0, "%.6g")) {
            fv = float(dv);
            changed = true;
        }
        v = std::clamp(double(fv), lo, hi);
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr("type an exact value"));
    if (changed) {
        if (q.knob == "answer") answer = v;
        else set_knob(ctx.state, q.knob, v);
    }
}

void feedback(const PanelContext& ctx, const LessonQuestion& q, const CheckResult& r, const std::string& lang) {
    const std::string unit = q.unit.empty() ? "" : " " + q.unit;
    const std::string what = q.label.in(lang);
    if (r.status == CheckResult::Status::Unavailable) {
        ImGui::TextColored(ImVec4(0.6f, 0.6f, 0.65f, 1), "%s %s", tr("Cannot check yet:"), r.error.c_str());
        return;
    }
    if (r.status == CheckResult::Status::Correct) {
        ImGui::TextColored(ImVec4(0.35f, 0.8f, 0.4f, 1), "%s", tr("Correct!"));
    } else {
        ImGui::TextColored(ImVec4(0.95f, 0.6f, 0.25f, 1), "%s", tr("Not yet."));
    }
    ImGui::SameLine();
    std::string line;
    switch (q.check) {
        case CheckKind::Match:  // the number itself is the answer: shown only once it is found
            if (r.status == CheckResult::Status::Correct) line = what + " = " + fmt_num(r.measured) + unit;
            else line = r.too_high ? trf("%s: too high", (fmt_num(r.knob) + unit).c_str())
                                   : trf("%s: too low", (fmt_num(r.knob) + unit).c_str());
            break;
        case CheckKind::Crossing:
            line = trf("%s = %s at %s = %s (target %s)", what.c_str(), (fmt_num(r.measured) + unit).c_str(),
                       knob_label(q.knob).c_str(), fmt_num(r.knob).c_str(), (fmt_num(q.value) + unit).c_str());
            if (r.status == CheckResult::Status::NotYet)
                line += std::string("; ") + (r.too_high ? tr("move the knob down") : tr("move the knob up"));
            else
                line += "; " + trf("it crosses at %s", fmt_num(r.expected).c_str());
            break;
        case CheckKind::Argmax:
        case CheckKind::Argmin:
            line = trf("%s = %s at %s %s", what.c_str(), (fmt_num(r.measured) + unit).c_str(), knob_label(q.knob).c_str(),
                       fmt_num(r.knob).c_str());
            if (r.status == CheckResult::Status::NotYet)
                line += std::string("; ") + (q.check == CheckKind::Argmax ? tr("another one is larger") : tr("another one is smaller"));
            break;
        case CheckKind::Below:
        case CheckKind::Above:
            line = q.check == CheckKind::Below
                       ? trf("%s = %s (should be below %s)", what.c_str(), (fmt_num(r.measured) + unit).c_str(),
                             (fmt_num(q.value) + unit).c_str())
                       : trf("%s = %s (should be above %s)", what.c_str(), (fmt_num(r.measured) + unit).c_str(),
                             (fmt_num(q.value) + unit).c_str());
            break;
    }
    text_wrapped(line);
    if (r.status == CheckResult::Status::NotYet && !q.hint.empty())
        text_wrapped(std::string(tr("Hint:")) + " " + q.hint.in(lang));
    (void)ctx;
}

}  // namespace

void lessons_panel_entered() {
    ui().applied.clear();
    ui().asked_with = "\x01";
}

void draw_lessons_panel(PanelContext& ctx) {
    LessonsUi& u = ui();
    UiState& st = ctx.state;
    const std::string lang = ui_language();
    if (u.reload) {  // between frames: nothing of the old library is referenced any more
        (void)app_lesson_library(true);
        u.applied.clear();
        u.reload = false;
    }
    const LessonLibrary& lib = app_lesson_library();
    auto reload_button = [&u] {
        if (ImGui::Button(tr("Reload lessons"))) u.reload = true;
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s", tr("Read the lesson files again (assets/lessons and ~/.config/transformer-studio/lessons)"));
    };
    for (const auto& e : lib.errors) ImGui::TextColored(ImVec4(0.95f, 0.4f, 0.3f, 1), "%s", e.c_str());
    if (lib.lessons.empty()) {
        reload_button();
        return empty_message(tr("No lessons found."));
    }

    // --- lesson and step pickers ---
    int li = 0;
    for (size_t i = 0; i < lib.lessons.size(); ++i)
        if (lib.lessons[i].id == st.lesson) li = int(i);
    const float line_h = ImGui::GetTextLineHeight();
    ImGui::SetNextItemWidth(line_h * 26);
    if (ImGui::BeginCombo(tr("lesson"), lib.lessons[size_t(li)].title.in(lang).c_str())) {
        for (size_t i = 0; i < lib.lessons.size(); ++i) {
            const std::string name = std::to_string(i + 1) + ". " + lib.lessons[i].title.in(lang);
            if (ImGui::Selectable(name.c_str(), int(i) == li)) {
                li = int(i);
                st.lesson_step = 0;
            }
            if (ImGui::IsItemHovered() && !lib.lessons[i].summary.empty())
                ImGui::SetTooltip("%s", lib.lessons[i].summary.in(lang).c_str());
        }
        ImGui::EndCombo();
    }
    const Lesson& lesson = lib.lessons[size_t(li)];
    if (st.lesson != lesson.id) {
        st.lesson = lesson.id;
        st.lesson_step = 0;
    }
    const int n_steps = int(lesson.steps.size());
    st.lesson_step = std::clamp(st.lesson_step, 0, n_steps - 1);
    ImGui::SameLine();
    ImGui::BeginDisabled(st.lesson_step == 0);
    if (ImGui::Button(tr("< Back"))) --st.lesson_step;
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::Text(tr("step %d of %d"), st.lesson_step + 1, n_steps);
    ImGui::SameLine();
    ImGui::BeginDisabled(st.lesson_step + 1 >= n_steps);
    if (ImGui::Button(tr("Next >"))) ++st.lesson_step;
    ImGui::EndDisabled();
    ImGui::SameLine();
    const bool redo = ImGui::Button(tr("Set up again"));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr("Put the model, text and knobs back as this step wants them"));
    ImGui::SameLine();
    reload_button();

    const LessonStep& step = lesson.steps[size_t(st.lesson_step)];
    const std::string step_key = lesson.id + "#" + std::to_string(st.lesson_step);
    const ResolvedModel rm = resolve_lesson_model(lesson, step, ctx.bundled_models ? *ctx.bundled_models : std::vector<std::string>{});

    // --- set up the step once when it is entered ---
    if (u.applied != step_key || redo) {
        u.applied = step_key;
        try {
            apply_lesson_setup(lesson, size_t(st.lesson_step), st);
        } catch (const std::exception& e) {
            ImGui::TextColored(ImVec4(0.95f, 0.4f, 0.3f, 1), "%s", e.what());
        }
        if (step.question && step.question->knob == "answer" && (!u.answers.count(step_key) || redo))
            u.answers[step_key] = std::isfinite(step.question->start) ? step.question->start : step.question->knob_min;
        u.touched = false;
        u.start_knob = NAN;
        if (step.question) {
            try {
                u.start_knob = knob_value(st, step.question->knob, u.answers[step_key]);
            } catch (const std::exception&) {
            }
        }
        u.asked_with = "\x01";
        if (ctx.rerun) ctx.rerun();
    }
    if (!rm.path.empty() && ctx.model && ctx.model->path != rm.path && ctx.load_model && u.asked_with != ctx.model->path) {
        u.asked_with = ctx.model->path;
        ctx.load_model(rm.path);
    }

    // --- the lesson card ---
    // The card is as tall as its text was last frame (ImGui 1.86 children do not size to their content), within
    // limits that leave the panel below most of the height.
    static float card_content_h = line_h * 10;
    const float card_h = std::clamp(card_content_h + ImGui::GetStyle().WindowPadding.y * 2, line_h * 6,
                                    std::max(line_h * 6, ImGui::GetContentRegionAvail().y * 0.45f));
    ImGui::BeginChild("lesson_card", ImVec2(0, card_h), true);
    const float card_top = ImGui::GetCursorPosY();
    ImGui::TextColored(ImVec4(0.45f, 0.7f, 1.0f, 1), "%s  ·  %s", lesson.title.in(lang).c_str(), step.title.in(lang).c_str());
    const bool model_ready = ctx.model && ctx.model->model && (rm.path.empty() || ctx.model->path == rm.path);
    if (rm.missing) {
        const std::string note = trf("This lesson is made for the model '%s', which is not installed (assets/models/%s).",
                                     rm.wanted.c_str(), rm.wanted.c_str());
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.95f, 0.6f, 0.25f, 1));
        text_wrapped(note);
        ImGui::PopStyleColor();
        if (!lesson.missing_model.empty()) text_wrapped(lesson.missing_model.in(lang));
    }
    const bool skipped = step.requires_arch == "encoder_decoder" && model_ready && !is_encoder_decoder(ctx);
    text_wrapped(step.body.in(lang));
    if (!step.formula.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.85f, 0.5f, 1));
        text_wrapped(step.formula);
        ImGui::PopStyleColor();
    }
    if (skipped) {
        ImGui::TextColored(ImVec4(0.95f, 0.6f, 0.25f, 1), "%s",
                           tr("This step needs an encoder–decoder model; the current model is not one, so its question "
                              "is skipped. Go on with Next."));
    } else if (step.question) {
        const LessonQuestion& q = *step.question;
        ImGui::Separator();
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.8f, 0.8f, 1.0f, 1));
        text_wrapped(std::string(tr("Question:")) + " " + q.prompt.in(lang));
        ImGui::PopStyleColor();
        double& answer = u.answers[step_key];
        knob_control(ctx, q, answer);
        const bool fresh = ctx.snap && ctx.model && ctx.snap->model == ctx.model->model;
        if (!u.touched) {
            try {
                u.touched = knob_value(st, q.knob, answer) != u.start_knob;
            } catch (const std::exception&) {
            }
        }
        if (!model_ready) {
            ImGui::TextDisabled("%s", tr("Loading the lesson's model…"));
        } else if (!u.touched) {
            ImGui::TextDisabled("%s", tr("Move the knob to answer; the app checks it against the model's numbers as you go."));
        } else {
            const CheckResult r = check_question(q, st, fresh ? ctx.snap : nullptr, ctx.model->model.get(), answer);
            feedback(ctx, q, r, lang);
        }
    }
    card_content_h = ImGui::GetCursorPosY() - card_top;
    ImGui::EndChild();

    // --- a Causal view's figure: the Causal panel computes its analyses on request, so the step's figure is built
    // here (once per forward) and shown above the panel ---
    const figures::ViewInfo* view = figures::find_view(step.view);
    if (view && view->panel == Panel::Causal && ctx.snap && ctx.model && model_ready) {
        static struct {
            uint64_t snap_id = 0;
            std::string view;
            figures::ViewFigures vf;
            std::string error;
        } cache;
        if (cache.snap_id != ctx.snap->id || cache.view != step.view) {
            cache.snap_id = ctx.snap->id;
            cache.view = step.view;
            cache.error.clear();
            try {
                cache.vf = figures::build_view(step.view, st, ctx.snap, ctx.model);
            } catch (const std::exception& e) {
                cache.vf = {};
                cache.error = e.what();
            }
        }
        if (!cache.error.empty()) ImGui::TextWrapped("%s", cache.error.c_str());
        const float fig_w = ImGui::GetContentRegionAvail().x / float(std::max<size_t>(1, cache.vf.figures.size()));
        const float fig_h = std::max(ImGui::GetTextLineHeight() * 12, ImGui::GetContentRegionAvail().y * 0.45f);
        for (size_t k = 0; k < cache.vf.figures.size(); ++k) {
            if (k > 0) ImGui::SameLine();
            ImGui::PushID(int(k));
            gfx::draw_figure(cache.vf.figures[k], ImVec2(fig_w - 6, fig_h), {}, "lesson_view");
            ImGui::PopID();
        }
    }

    // --- the panel the step works with ---
    const std::optional<Panel> panel = step_panel(step);
    for (const auto& p : all_panels()) {
        if (panel != p.panel) continue;
        ImGui::TextDisabled("%s", trf("Panel: %s", tr(name_of(p.panel))).c_str());
        ImGui::BeginChild("lesson_panel", ImVec2(0, 0), false);
        p.draw(ctx);
        ImGui::EndChild();
    }
}

}  // namespace ts::ui
