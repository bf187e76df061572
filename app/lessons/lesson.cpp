// Lesson files: parsing, validation (every error names the file, the step and the field), the lesson folders,
// and applying a step's set-up to the UI state.
#include "app/lessons/lesson.h"

#include "app/figures/views.h"
#include "app/lessons/lesson_check.h"
#include "app/i18n/tr.h"
#include "app/session/worker.h"  // asset_roots
#include "core/util/json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

namespace ts::lessons {

namespace {

namespace fs = std::filesystem;

/// Where an error is: "file: step 3: question.knob".
struct Where {
    std::string file;
    int step = 0;  ///< 1-based; 0 = the lesson itself
    [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
        std::string m = file + ": ";
        if (step > 0) m += "step " + std::to_string(step) + ": ";
        if (!field.empty()) m += field + ": ";
        throw LessonError(m + problem);
    }
};

std::string type_name(const nlohmann::json& v) { return v.type_name(); }

void check_keys(const nlohmann::json& obj, const std::set<std::string>& allowed, const Where& w,
                const std::string& prefix) {
    for (auto it = obj.begin(); it != obj.end(); ++it)
        if (!allowed.count(it.key())) {
            std::string list;
            for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
            w.fail(prefix + it.key(), "unknown field (expected one of: " + list + ")");
        }
}

const nlohmann::json* find(const nlohmann::json& obj, const char* key) {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
}

std::string get_string(const nlohmann::json& obj, const char* key, const Where& w, const std::string& prefix,
                       bool required) {
    const nlohmann::json* v = find(obj, key);
    if (!v) {
        if (required) w.fail(prefix + key, "missing (a string is required)");
        return "";
    }
    if (!v->is_string()) w.fail(prefix + key, "expected a string, found " + type_name(*v));
    return v->get<std::string>();
}

double get_number(const nlohmann::json& obj, const char* key, const Where& w, const std::string& prefix,
                  bool required, double def) {
    const nlohmann::json* v = find(obj, key);
    if (!v) {
        if (required) w.fail(prefix + key, "missing (a number is required)");
        return def;
    }
    if (!v->is_number()) w.fail(prefix + key, "expected a number, found " + type_name(*v));
    const double d = v->get<double>();
    if (!std::isfinite(d)) w.fail(prefix + key, "must be finite");
    return d;
}

bool get_bool(const nlohmann::json& obj, const char* key, const Where& w, const std::string& prefix, bool def) {
    const nlohmann::json* v = find(obj, key);
    if (!v) return def;
    if (!v->is_boolean()) w.fail(prefix + key, "expected true or false, found " + type_name(*v));
    return v->get<bool>();
}

/// A text: "English only" or {"en": "...", "zh": "..."}.
LocalText get_text(const nlohmann::json& obj, const char* key, const Where& w, const std::string& prefix, bool required) {
    LocalText t;
    const nlohmann::json* v = find(obj, key);
    const std::string field = prefix + key;
    if (!v) {
        if (required) w.fail(field, "missing (a text {\"en\": ..., \"zh\": ...} is required)");
        return t;
    }
    if (v->is_string()) {
        t.en = v->get<std::string>();
    } else if (v->is_object()) {
        check_keys(*v, {"en", "zh"}, w, field + ".");
        t.en = get_string(*v, "en", w, field + ".", true);
        t.zh = get_string(*v, "zh", w, field + ".", false);
    } else {
        w.fail(field, "expected a text (a string or {\"en\": ..., \"zh\": ...}), found " + type_name(*v));
    }
    if (t.en.empty()) w.fail(field + ".en", "is empty");
    for (const auto& [lang, text] : {std::pair{"en", &t.en}, std::pair{"zh", &t.zh}}) {
        try {
            (void)ui_placeholders(*text);
        } catch (const std::exception& e) {
            w.fail(field + (v->is_object() ? std::string(".") + lang : std::string()), e.what());
        }
    }
    return t;
}

/// A measure name and its params (shared by questions and claims); `p` is the field prefix ("question.").
const MeasureInfo& parse_measure(const nlohmann::json& obj, const Where& w, const std::string& p, std::string* name,
                                 nlohmann::json* params) {
    *name = get_string(obj, "measure", w, p, true);
    const MeasureInfo* mi = find_measure(*name);
    if (!mi) {
        std::string list;
        for (const auto& m : lesson_measures()) list += (list.empty() ? "" : ", ") + m.name;
        w.fail(p + "measure", "unknown measure '" + *name + "' (one of: " + list + ")");
    }
    if (const nlohmann::json* pj = find(obj, "params")) {
        if (!pj->is_object()) w.fail(p + "params", "expected an object, found " + type_name(*pj));
        for (auto it = pj->begin(); it != pj->end(); ++it) {
            if (std::find(mi->params.begin(), mi->params.end(), it.key()) == mi->params.end()) {
                std::string list;
                for (const auto& a : mi->params) list += (list.empty() ? "" : ", ") + a;
                w.fail(p + "params." + it.key(), "not a parameter of measure '" + *name + "' (" +
                                                     (list.empty() ? std::string("it takes none") : "it takes: " + list) + ")");
            }
            if (!it->is_number() && !it->is_string() && !it->is_boolean())
                w.fail(p + "params." + it.key(), "expected a number, string or boolean");
            if (it->is_number() && std::abs(it->get<double>()) > 1e9)
                w.fail(p + "params." + it.key(), "beyond ±1e9");
        }
        *params = *pj;
    }
    return *mi;
}

/// A list of finite numbers (question.accepts / rejects).
std::vector<double> get_number_list(const nlohmann::json& obj, const char* key, const Where& w, const std::string& prefix) {
    std::vector<double> out;
    const nlohmann::json* v = find(obj, key);
    if (!v) return out;
    if (!v->is_array() || v->size() > 64) w.fail(prefix + key, "expected a list of at most 64 numbers");
    for (const auto& x : *v) {
        if (!x.is_number() || !std::isfinite(x.get<double>()) || std::abs(x.get<double>()) > 1e12)
            w.fail(prefix + key, "expected finite numbers, found " + x.dump());
        out.push_back(x.get<double>());
    }
    return out;
}

const nlohmann::json& default_state_json() {
    static const nlohmann::json j = UiState{};
    return j;
}

LessonQuestion parse_question(const nlohmann::json& q, const Where& w) {
    const std::string p = "question.";
    if (!q.is_object()) w.fail("question", "expected an object, found " + type_name(q));
    check_keys(q, {"prompt", "hint", "label", "unit", "knob", "range", "log", "integer", "start", "measure", "params",
                   "check", "value", "direction", "tolerance", "relative", "accept_within", "accepts", "rejects"},
               w, p);
    LessonQuestion r;
    r.prompt = get_text(q, "prompt", w, p, true);
    r.hint = get_text(q, "hint", w, p, false);
    r.label = get_text(q, "label", w, p, true);
    r.unit = get_string(q, "unit", w, p, false);

    // The knob: "answer" or a numeric setting of the app.
    r.knob = get_string(q, "knob", w, p, true);
    const nlohmann::json& sj = default_state_json();
    const bool state_knob = r.knob != "answer";
    // Numeric settings that are not lesson material (window, export, bookkeeping).
    static const std::set<std::string> not_knobs = {"version", "lesson_step", "ui_scale", "export_width",
                                                    "export_height", "export_scale", "sm_paint_n"};
    if (state_knob && (!sj.contains(r.knob) || !sj[r.knob].is_number() || not_knobs.count(r.knob))) {
        std::string list;
        for (auto it = sj.begin(); it != sj.end(); ++it)
            if (it->is_number() && !not_knobs.count(it.key())) list += (list.empty() ? "" : ", ") + it.key();
        w.fail(p + "knob", "'" + r.knob + "' is not a numeric setting (use \"answer\" or one of: " + list + ")");
    }
    const bool int_field = state_knob && sj[r.knob].is_number_integer();
    r.integer = get_bool(q, "integer", w, p, int_field);
    if (int_field && !r.integer) w.fail(p + "integer", "'" + r.knob + "' is an integer setting");
    r.log_scale = get_bool(q, "log", w, p, false);
    // An integer knob's answer is found by trying every whole value of its range: keep that a short scan.
    constexpr double kMaxIntegerScan = 4096;

    const bool auto_range = r.knob == "layer" || r.knob == "head" || r.knob == "query";
    if (const nlohmann::json* rg = find(q, "range")) {
        if (!rg->is_array() || rg->size() != 2 || !(*rg)[0].is_number() || !(*rg)[1].is_number())
            w.fail(p + "range", "expected [min, max] (two numbers)");
        r.knob_min = (*rg)[0].get<double>();
        r.knob_max = (*rg)[1].get<double>();
        if (!(r.knob_min < r.knob_max)) w.fail(p + "range", "min must be below max");
        if (std::abs(r.knob_min) > 1e9 || std::abs(r.knob_max) > 1e9) w.fail(p + "range", "beyond ±1e9");
    } else if (auto_range) {
        r.knob_min = 0;
        r.knob_max = 1e9;  // clamped to the model / text by knob_range()
    } else {
        w.fail(p + "range", "missing ([min, max] of the knob's slider)");
    }
    if (r.log_scale && r.knob_min <= 0) w.fail(p + "log", "a log-scale knob needs range min > 0");

    r.start = get_number(q, "start", w, p, false, NAN);
    if (std::isfinite(r.start) && (r.start < r.knob_min || r.start > r.knob_max))
        w.fail(p + "start", "outside the range");

    (void)parse_measure(q, w, p, &r.measure, &r.params);

    static const std::map<std::string, CheckKind> kinds = {
        {"match", CheckKind::Match},   {"crossing", CheckKind::Crossing}, {"argmax", CheckKind::Argmax},
        {"argmin", CheckKind::Argmin}, {"below", CheckKind::Below},       {"above", CheckKind::Above}};
    const std::string check = get_string(q, "check", w, p, true);
    auto k = kinds.find(check);
    if (k == kinds.end()) w.fail(p + "check", "'" + check + "' is not one of: match, crossing, argmax, argmin, below, above");
    r.check = k->second;
    if (r.integer && r.check != CheckKind::Crossing && !auto_range && r.knob_max - r.knob_min > kMaxIntegerScan)
        w.fail(p + "range", "an integer knob's range spans at most 4096 values here (the checker tries each)");
    const bool needs_value = r.check == CheckKind::Crossing || r.check == CheckKind::Below || r.check == CheckKind::Above;
    r.value = get_number(q, "value", w, p, needs_value, 0.0);
    r.direction = get_string(q, "direction", w, p, false);
    if (r.direction.empty()) r.direction = "below";
    if (r.direction != "below" && r.direction != "above") w.fail(p + "direction", "expected \"below\" or \"above\"");
    r.tolerance = get_number(q, "tolerance", w, p, false, 0.05);
    if (!(r.tolerance >= 0)) w.fail(p + "tolerance", "must be ≥ 0");
    r.relative = get_bool(q, "relative", w, p, true);

    if (r.check == CheckKind::Argmax || r.check == CheckKind::Argmin || r.check == CheckKind::Crossing) {
        if (!state_knob) w.fail(p + "knob", "a " + check + " question needs a setting of the app as its knob, not \"answer\"");
        if (!is_scannable_knob(r.knob))
            w.fail(p + "knob", "'" + r.knob + "' needs a new forward pass, so a " + check + " question cannot scan it");
    }
    if ((r.check == CheckKind::Argmax || r.check == CheckKind::Argmin) && !r.integer)
        w.fail(p + "knob", "an " + check + " question needs an integer knob (layer, head, query, …)");
    r.accept_within = get_number(q, "accept_within", w, p, false, 0.0);
    if (!(r.accept_within >= 0)) w.fail(p + "accept_within", "must be ≥ 0");
    if (r.accept_within > 0 && r.check != CheckKind::Argmax && r.check != CheckKind::Argmin)
        w.fail(p + "accept_within", "only argmax / argmin questions accept a margin (match uses tolerance)");
    r.accepts = get_number_list(q, "accepts", w, p);
    r.rejects = get_number_list(q, "rejects", w, p);
    for (const char* key : {"accepts", "rejects"})
        for (double v : key[0] == 'a' ? r.accepts : r.rejects)
            if (v < r.knob_min || v > r.knob_max) w.fail(p + key, "a value outside the knob's range: " + std::to_string(v));
    return r;
}

LessonClaim parse_claim(const nlohmann::json& c, const Where& w, const std::string& p) {
    if (!c.is_object()) w.fail(p.substr(0, p.size() - 1), "expected an object, found " + type_name(c));
    check_keys(c, {"about", "measure", "params", "set", "min", "max"}, w, p);
    LessonClaim r;
    r.about = get_string(c, "about", w, p, true);
    if (r.about.empty()) w.fail(p + "about", "is empty (say what the figure shows)");
    (void)parse_measure(c, w, p, &r.measure, &r.params);
    if (const nlohmann::json* set = find(c, "set")) {
        if (!set->is_object()) w.fail(p + "set", "expected an object of settings, found " + type_name(*set));
        const nlohmann::json& sj = default_state_json();
        for (auto it = set->begin(); it != set->end(); ++it) {
            if (!sj.contains(it.key()) || !sj[it.key()].is_number() || !is_scannable_knob(it.key()) || !it->is_number())
                w.fail(p + "set." + it.key(), "a claim may only change a numeric setting that needs no new forward pass "
                                              "(layer, head, query, the panels' own knobs)");
            if (std::abs(it->get<double>()) > 1e9) w.fail(p + "set." + it.key(), "beyond ±1e9");
        }
        r.set = *set;
    }
    r.min = get_number(c, "min", w, p, false, -INFINITY);
    r.max = get_number(c, "max", w, p, false, INFINITY);
    if (!find(c, "min") && !find(c, "max")) w.fail(p + "min", "a claim needs a bound: min, max or both");
    if (r.min > r.max) w.fail(p + "max", "below min");
    return r;
}

LessonStep parse_step(const nlohmann::json& s, const Where& w) {
    if (!s.is_object()) w.fail("", "expected an object, found " + type_name(s));
    check_keys(s, {"title", "body", "formula", "model", "text", "target", "view", "set", "requires", "question", "claims"}, w, "");
    LessonStep st;
    st.title = get_text(s, "title", w, "", true);
    st.body = get_text(s, "body", w, "", true);
    st.formula = get_string(s, "formula", w, "", false);
    st.model = get_string(s, "model", w, "", false);
    if (find(s, "text")) st.text = get_string(s, "text", w, "", true);
    if (find(s, "target")) st.target_text = get_string(s, "target", w, "", true);
    st.view = get_string(s, "view", w, "", true);
    if (!figures::find_view(st.view))
        w.fail("view", "unknown view '" + st.view + "' (see `transformer-studio render --view list`)");
    if (const nlohmann::json* set = find(s, "set")) {
        if (!set->is_object()) w.fail("set", "expected an object of settings, found " + type_name(*set));
        UiState scratch;
        for (auto it = set->begin(); it != set->end(); ++it) {
            if (it.key() == "model_path" || it.key() == "recent" || it.key() == "text" || it.key() == "target_text" ||
                it.key() == "panel" || it.key() == "view")
                w.fail("set." + it.key(), "set it with the step's own field (model, text, target, view), not in \"set\"");
            try {
                figures::set_state_field(scratch,
                                         it.key() + "=" + (it->is_string() ? it->get<std::string>() : it->dump()));
            } catch (const std::exception& e) {
                std::string msg = e.what();  // set_state_field speaks of "--set key: ...": drop that prefix
                for (const std::string& pre : {std::string("--set: "), "--set " + it.key() + ": "})
                    if (msg.rfind(pre, 0) == 0) msg = msg.substr(pre.size());
                w.fail("set." + it.key(), msg);
            }
        }
        st.set = *set;
    }
    st.requires_arch = get_string(s, "requires", w, "", false);
    if (!st.requires_arch.empty() && st.requires_arch != "encoder_decoder")
        w.fail("requires", "expected \"encoder_decoder\"");
    if (const nlohmann::json* q = find(s, "question")) st.question = parse_question(*q, w);
    if (const nlohmann::json* cl = find(s, "claims")) {
        if (!cl->is_array() || cl->size() > 32) w.fail("claims", "expected a list of at most 32 claims");
        for (size_t i = 0; i < cl->size(); ++i)
            st.claims.push_back(parse_claim((*cl)[i], w, "claims[" + std::to_string(i) + "]."));
    }
    return st;
}

}  // namespace

std::vector<std::string> ui_placeholders(const std::string& text) {
    std::vector<std::string> out;
    static const std::string open = "{ui:";
    for (size_t at = text.find(open); at != std::string::npos; at = text.find(open, at)) {
        const size_t close = text.find('}', at);
        if (close == std::string::npos) throw std::invalid_argument("a {ui:…} placeholder is not closed");
        std::string id = text.substr(at + open.size(), close - at - open.size());
        if (id.empty() || id.find('{') != std::string::npos)
            throw std::invalid_argument("a {ui:…} placeholder needs an interface string, e.g. {ui:head}");
        out.push_back(std::move(id));
        at = close + 1;
    }
    return out;
}

std::string fill_ui_placeholders(const std::string& text) {
    static const std::string open = "{ui:";
    if (text.find(open) == std::string::npos) return text;
    std::string out;
    size_t from = 0;
    for (size_t at = text.find(open); at != std::string::npos; at = text.find(open, from)) {
        const size_t close = text.find('}', at);
        if (close == std::string::npos) throw std::invalid_argument("a {ui:…} placeholder is not closed");
        out.append(text, from, at - from);
        out += tr(text.substr(at + open.size(), close - at - open.size()).c_str());
        from = close + 1;
    }
    out.append(text, from, std::string::npos);
    return out;
}

std::string LocalText::in(const std::string& lang) const {
    const std::string& t = lang == "zh" && !zh.empty() ? zh : en;
    try {
        return fill_ui_placeholders(t);
    } catch (const std::invalid_argument&) {
        return t;  // a validated lesson cannot get here
    }
}

const char* check_kind_name(CheckKind k) {
    switch (k) {
        case CheckKind::Match: return "match";
        case CheckKind::Crossing: return "crossing";
        case CheckKind::Argmax: return "argmax";
        case CheckKind::Argmin: return "argmin";
        case CheckKind::Below: return "below";
        case CheckKind::Above: return "above";
    }
    return "?";
}

Lesson parse_lesson(const nlohmann::json& j, const std::string& file) {
    Where w{file, 0};
    if (!j.is_object()) w.fail("", "a lesson file holds one JSON object, found " + type_name(j));
    check_keys(j, {"format", "id", "order", "title", "summary", "model", "fallback_model", "missing_model", "steps"}, w, "");
    const double format = get_number(j, "format", w, "", false, 1);
    if (format != 1) {
        char said[32];
        std::snprintf(said, sizeof said, "%g", format);  // any finite number, never cast to int (UB when huge)
        w.fail("format", std::string("this app reads lesson format 1, the file says ") + said);
    }
    Lesson l;
    l.file = file;
    l.id = get_string(j, "id", w, "", true);
    if (l.id.empty() || !std::all_of(l.id.begin(), l.id.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
        }))
        w.fail("id", "'" + l.id + "' must be non-empty lower-case letters, digits, - or _");
    const double order = get_number(j, "order", w, "", false, 1000);
    if (!(std::abs(order) <= 1e6)) w.fail("order", "expected a number from -1e6 to 1e6");
    l.order = int(order);
    l.title = get_text(j, "title", w, "", true);
    l.summary = get_text(j, "summary", w, "", false);
    l.model = get_string(j, "model", w, "", false);
    l.fallback_model = get_string(j, "fallback_model", w, "", false);
    l.missing_model = get_text(j, "missing_model", w, "", false);
    const nlohmann::json* steps = find(j, "steps");
    if (!steps) w.fail("steps", "missing (a list of steps is required)");
    if (!steps->is_array() || steps->empty()) w.fail("steps", "expected a non-empty list of steps");
    for (size_t i = 0; i < steps->size(); ++i) l.steps.push_back(parse_step((*steps)[i], Where{file, int(i) + 1}));
    return l;
}

Lesson load_lesson_file(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw LessonError(file.string() + ": cannot be read");
    std::stringstream ss;
    ss << in.rdbuf();
    nlohmann::json j;
    try {
        j = parse_json(ss.str(), file.string());  // names the file and line; bounded nesting
    } catch (const std::runtime_error& e) {
        throw LessonError(e.what());
    }
    return parse_lesson(j, file.string());
}

LessonLibrary load_lesson_library(const std::vector<fs::path>& dirs) {
    LessonLibrary lib;
    std::map<std::string, Lesson> by_id;
    for (const auto& d : dirs) {
        std::error_code ec;
        if (!fs::is_directory(d, ec)) continue;
        std::vector<fs::path> files;
        for (const auto& e : fs::directory_iterator(d, ec))
            if (e.path().extension() == ".json") files.push_back(e.path());
        std::sort(files.begin(), files.end());
        for (const auto& f : files) {
            try {
                Lesson l = load_lesson_file(f);
                by_id[l.id] = std::move(l);
            } catch (const std::exception& e) {
                lib.errors.push_back(e.what());
            }
        }
    }
    for (auto& [id, l] : by_id) lib.lessons.push_back(std::move(l));
    std::stable_sort(lib.lessons.begin(), lib.lessons.end(), [](const Lesson& a, const Lesson& b) {
        return a.order != b.order ? a.order < b.order : a.id < b.id;
    });
    return lib;
}

std::vector<fs::path> lesson_dirs() {
    std::vector<fs::path> out;
    std::vector<fs::path> candidates;  // beside the executable first (an installed copy uses its own), then the source tree
    for (const auto& r : asset_roots()) candidates.push_back(r / "lessons");
    std::error_code ec;
    std::set<std::string> seen;
    bool have_bundled = false;
    for (const auto& c : candidates) {
        if (have_bundled || !fs::is_directory(c, ec)) continue;
        const std::string canon = fs::weakly_canonical(c, ec).string();
        if (seen.insert(canon).second) out.push_back(canon);
        have_bundled = true;  // the first bundled folder found wins (a build tree and its source tree hold the same)
    }
    out.push_back(config_dir() / "lessons");
    return out;
}

const LessonLibrary& app_lesson_library(bool reload) {
    static LessonLibrary lib;
    static bool loaded = false;
    if (!loaded || reload) {
        lib = load_lesson_library(lesson_dirs());
        loaded = true;
    }
    return lib;
}

std::string lesson_font_text() {
    std::string s;
    auto add = [&s](const LocalText& t) { s += t.en + t.zh; };
    for (const Lesson& l : app_lesson_library().lessons) {
        add(l.title);
        add(l.summary);
        add(l.missing_model);
        for (const LessonStep& st : l.steps) {
            add(st.title);
            add(st.body);
            s += st.formula;
            if (st.question) {
                add(st.question->prompt);
                add(st.question->hint);
                add(st.question->label);
                s += st.question->unit;
            }
        }
    }
    return s;
}

void apply_lesson_setup(const Lesson& lesson, size_t step, UiState& st) {
    for (size_t i = 0; i <= step && i < lesson.steps.size(); ++i) apply_step_setup(lesson.steps[i], st);
}

std::optional<Panel> step_panel(const LessonStep& step) {
    const figures::ViewInfo* v = figures::find_view(step.view);
    return v ? std::optional<Panel>(v->panel) : std::nullopt;
}

void apply_step_setup(const LessonStep& step, UiState& st) {
    if (step_panel(step) == Panel::Training)  // the panel shows one topic at a time; both lab views are the lab's
        st.train_topic = step.view == "lab-curves" || step.view == "lab-compare" ? "lab" : step.view;
    if (step.text) st.text = *step.text;
    if (step.target_text) st.target_text = *step.target_text;
    for (auto it = step.set.begin(); it != step.set.end(); ++it)
        figures::set_state_field(st, it.key() + "=" + (it->is_string() ? it->get<std::string>() : it->dump()));
    if (step.question && step.question->knob != "answer" && std::isfinite(step.question->start))
        set_knob(st, step.question->knob, step.question->start);
}

ResolvedModel resolve_lesson_model(const Lesson& lesson, const LessonStep& step,
                                   const std::vector<std::string>& bundled_dirs) {
    ResolvedModel r;
    r.wanted = step.model.empty() ? lesson.model : step.model;
    if (r.wanted.empty()) return r;
    auto find_dir = [&](const std::string& name) -> std::string {
        for (const auto& d : bundled_dirs)
            if (fs::path(d).filename() == name) return d;
        return "";
    };
    r.path = find_dir(r.wanted);
    if (r.path.empty()) {
        r.missing = true;
        if (!lesson.fallback_model.empty()) r.path = find_dir(lesson.fallback_model);
    }
    return r;
}

}  // namespace ts::lessons
