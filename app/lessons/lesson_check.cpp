// The lesson checker: match, crossing (found by scanning the knob and bisecting), argmax / argmin over an integer
// knob, below / above a threshold; the measures themselves are in lesson_measures.cpp.
#include "app/lessons/lesson_check.h"

#include "app/figures/figures.h"
#include "app/session/forward_spec.h"
#include "app/i18n/tr.h"
#include "core/kernels/ops.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <stdexcept>

namespace ts::lessons {

namespace {

/// The knob's scan grid over [lo, hi].
std::vector<double> scan_grid(const LessonQuestion& q, double lo, double hi) {
    std::vector<double> g;
    if (q.integer && q.check != CheckKind::Crossing) {
        for (double v = std::ceil(lo); v <= hi + 1e-9; v += 1) g.push_back(v);
        return g;
    }
    const int n = 200;
    for (int i = 0; i <= n; ++i) {
        const double t = double(i) / n;
        g.push_back(q.log_scale ? lo * std::pow(hi / lo, t) : lo + (hi - lo) * t);
    }
    return g;
}

double measure_at(const LessonQuestion& q, UiState st, double k, const Snapshot* snap, const Model* model) {
    set_knob(st, q.knob, k);
    return evaluate_measure(q, st, snap, model);
}

/// What the checker remembers between frames: the scan does not depend on the student's knob, so moving it costs
/// one measure evaluation.
struct ScanCache {
    std::string key;
    std::vector<double> crossings;  ///< crossing: every knob value where measure − value changes sign
    double best_knob = 0, best_measure = 0;
    std::string error;
};

}  // namespace

std::string snapshot_fingerprint(const Snapshot* s) {
    if (!s) return "-";
    std::string f = std::to_string(uintptr_t(s->trace.get()));
    if (s->tokens)
        for (int id : s->tokens->ids) f += ',' + std::to_string(id);
    if (s->source_tokens)
        for (int id : s->source_tokens->ids) f += ';' + std::to_string(id);
    if (s->logits.size() > 0) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "|%.9g|%.9g", double(s->logits(0, 0)), double(s->logits(s->logits.rows() - 1, 0)));
        f += buf;
    }
    return f;
}

double knob_value(const UiState& st, const std::string& knob, double answer) {
    if (knob == "answer") return answer;
    const nlohmann::json j = st;
    auto it = j.find(knob);
    if (it == j.end() || !it->is_number()) throw std::invalid_argument("'" + knob + "' is not a numeric setting");
    return it->get<double>();
}

void set_knob(UiState& st, const std::string& knob, double v) {
    if (knob == "answer") return;
    nlohmann::json j = st;
    auto it = j.find(knob);
    if (it == j.end() || !it->is_number()) throw std::invalid_argument("'" + knob + "' is not a numeric setting");
    if (it->is_number_integer()) *it = (long long)std::llround(v);
    else *it = v;
    from_json(j, st);
    st.clamp();  // a lesson's knob (or claim) value beyond the setting's range, e.g. pe_d_model 1e9, stays in range
}

bool is_scannable_knob(const std::string& knob) {
    // Knobs that change the forward pass itself (forward_spec.h decides which) cannot be scanned on one snapshot;
    // the window's and the exports' sizes and the number of generated tokens are not lesson material.
    static const char* not_material[] = {"ui_scale", "export_width", "export_height", "export_scale", "generate_tokens"};
    for (const char* k : not_material)
        if (knob == k) return false;
    return knob != "answer" && !knob_changes_forward(knob);
}

void knob_range(const LessonQuestion& q, const Snapshot* snap, const Model* model, double* lo, double* hi,
                const UiState* st) {
    *lo = q.knob_min;
    *hi = q.knob_max;
    const Model* m = snap && snap->model ? snap->model.get() : model;
    if (q.knob == "layer") {
        const int L = snap && snap->trace ? figures::attention_layers(*snap, st ? st->attn_source : AttnSource::Decoder)
            : m                           ? m->config().n_layers
                                          : 1;
        *hi = std::min(*hi, double(L - 1));
    } else if (q.knob == "head") {
        if (m) *hi = std::min(*hi, double(m->config().n_heads - 1));
    } else if (q.knob == "neuron") {
        if (m) *hi = std::min(*hi, double(m->config().d_ff - 1));
    } else if (q.knob == "query") {
        if (snap && snap->tokens) *hi = std::min(*hi, double(int(snap->tokens->ids.size()) - 1));
    }
    if (*hi < *lo) *hi = *lo;
}

CheckResult check_question(const LessonQuestion& q, const UiState& st, const Snapshot* snap, const Model* model,
                           double answer) {
    CheckResult r;
    try {
        r.knob = knob_value(st, q.knob, answer);
        r.measured = evaluate_measure(q, st, snap, model);
    } catch (const std::exception& e) {
        r.error = e.what();
        return r;
    }
    auto close = [&](double a, double b) {
        const double tol = q.relative ? q.tolerance * std::max(std::fabs(b), 1e-12) : q.tolerance;
        return std::fabs(a - b) <= tol + 1e-12;
    };
    switch (q.check) {
        case CheckKind::Match:
            r.expected = r.measured;
            r.status = close(r.knob, r.expected) ? CheckResult::Status::Correct : CheckResult::Status::NotYet;
            r.too_high = r.knob > r.expected;
            return r;
        case CheckKind::Below:
        case CheckKind::Above:
            r.expected = q.value;
            r.status = (q.check == CheckKind::Below ? r.measured < q.value : r.measured > q.value)
                           ? CheckResult::Status::Correct : CheckResult::Status::NotYet;
            return r;
        case CheckKind::Crossing:
        case CheckKind::Argmax:
        case CheckKind::Argmin: break;
    }

    // Scans: cached per question, snapshot and state other than the knob.
    static thread_local ScanCache cache;
    UiState base = st;
    set_knob(base, q.knob, q.knob_min);
    const std::string key = q.measure + '|' + q.params.dump() + '|' + q.knob + '|' + check_kind_name(q.check) + '|' +
                            std::to_string(q.value) + '|' + std::to_string(q.knob_min) + '|' +
                            std::to_string(q.knob_max) + '|' + std::to_string(uintptr_t(snap)) + '|' +
                            std::to_string(snap ? snap->id : 0) + '|' + std::to_string(uintptr_t(model)) + '|' +
                            snapshot_fingerprint(snap) + '|' + nlohmann::json(base).dump() + '|' +
                            i18n::language();  // the cached error is worded in the interface language
    if (cache.key != key) {
        cache = ScanCache{};
        cache.key = key;
        try {
            double lo = 0, hi = 0;
            knob_range(q, snap, model, &lo, &hi, &st);
            const std::vector<double> grid = scan_grid(q, lo, hi);
            std::vector<double> f;
            for (double k : grid) f.push_back(measure_at(q, base, k, snap, model));
            if (q.check == CheckKind::Crossing) {
                for (size_t i = 0; i + 1 < grid.size(); ++i) {
                    const double a = f[i] - q.value, b = f[i + 1] - q.value;
                    if (a == 0) cache.crossings.push_back(grid[i]);
                    if ((a < 0) == (b < 0) || b == 0) continue;
                    double x0 = grid[i], x1 = grid[i + 1], f0 = a;
                    for (int it = 0; it < 40; ++it) {
                        const double xm = q.log_scale ? std::sqrt(x0 * x1) : 0.5 * (x0 + x1);
                        const double fm = measure_at(q, base, xm, snap, model) - q.value;
                        if ((fm < 0) == (f0 < 0)) { x0 = xm; f0 = fm; } else x1 = xm;
                    }
                    cache.crossings.push_back(0.5 * (x0 + x1));
                }
                if (!f.empty() && f.back() == q.value) cache.crossings.push_back(grid.back());
                if (cache.crossings.empty()) {
                    cache.error = trf("the measure stays between %.4g and %.4g over the knob's range: it never "
                                      "reaches %.4g here",
                                      *std::min_element(f.begin(), f.end()), *std::max_element(f.begin(), f.end()), q.value);
                }
            } else {
                size_t best = 0;
                for (size_t i = 1; i < f.size(); ++i)
                    if (q.check == CheckKind::Argmax ? f[i] > f[best] : f[i] < f[best]) best = i;
                if (f.empty()) cache.error = tr("nothing to compare");
                else {
                    cache.best_knob = grid[best];
                    cache.best_measure = f[best];
                }
            }
        } catch (const std::exception& e) {
            cache.error = e.what();
        }
    }
    if (!cache.error.empty()) {
        r.error = cache.error;
        return r;
    }
    if (q.check == CheckKind::Crossing) {
        r.expected = cache.crossings.front();
        for (double c : cache.crossings)
            if (std::fabs(c - r.knob) < std::fabs(r.expected - r.knob)) r.expected = c;
        r.status = close(r.knob, r.expected) ? CheckResult::Status::Correct : CheckResult::Status::NotYet;
        r.too_high = r.knob > r.expected;
    } else {
        r.expected = cache.best_knob;
        r.best_measure = cache.best_measure;
        // Ties count: any knob whose measure equals the best one is right, and with accept_within any knob that
        // close to it (two heads that both do the job).
        const double tol = 1e-9 * std::max(1.0, std::fabs(cache.best_measure)) + q.accept_within;
        r.status = std::fabs(r.measured - cache.best_measure) <= tol ? CheckResult::Status::Correct : CheckResult::Status::NotYet;
        r.too_high = r.knob > r.expected;
    }
    return r;
}

}  // namespace ts::lessons
