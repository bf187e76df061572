// The options of `render` and `--set` mapped onto the state (apply_view_option, set_state_field), and session files
// (see views.h).
#include "app/figures/views.h"

#include "app/figures/figures.h"
#include "app/plot/ticks.h"
#include "app/plot/writers.h"
#include "app/session/limits.h"
#include "core/util/json.h"
#include "core/util/number.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace ts::figures {

namespace {
// The activation curves `--curves` may name (activation_curves' keys).
const char* kActivationKeys[] = {"tanh",      "sigmoid", "relu", "leaky_relu", "gelu",
                                 "gelu_tanh", "swish",   "glu",  "swiglu",     "geglu"};
}  // namespace

// --- options ----------------------------------------------------------------------------------------------------------

std::vector<std::string> view_value_options() {
    std::set<std::string> all;
    for (const auto& v : all_views())
        for (const auto& o : v.options) all.insert(o);
    for (const auto& f : view_flag_options()) all.erase(f);
    for (const auto& m : view_multi_options()) all.erase(m);
    return {all.begin(), all.end()};
}

std::vector<std::string> view_multi_options() { return {"ab-set"}; }

std::vector<std::string> view_flag_options() {
    return {"unit-scale", "no-annotate", "interleaved", "random-tokens", "exclude-bos", "exclude-current"};
}

namespace {

double to_number(const std::string& option, const std::string& value) {
    if (const auto v = parse_real(value)) return *v;  // core/util/number.h: the whole value, finite
    throw std::invalid_argument("option --" + option + " expects a number, got " + quote_value(value));
}
int to_int(const std::string& option, const std::string& value) {
    const double v = to_number(option, value);
    if (v != std::floor(v) || std::abs(v) > 1e9)
        throw std::invalid_argument("option --" + option + " expects an integer, got '" + value + "'");
    return int(v);
}
float in_range(const std::string& option, const std::string& value, double lo, double hi) {
    const double v = to_number(option, value);
    if (v < lo || v > hi)
        throw std::invalid_argument("option --" + option + " must be in [" + plot::format_value(lo) + ", " +
                                    plot::format_value(hi) + "], got " + value);
    return float(v);
}
int int_in_range(const std::string& option, const std::string& value, int lo, int hi) {
    const int v = to_int(option, value);
    if (v < lo || v > hi)
        throw std::invalid_argument("option --" + option + " must be a whole number from " + std::to_string(lo) +
                                    " to " + std::to_string(hi) + ", got " + quote_value(value));
    return v;
}
MaskChoice mask_kind(const std::string& option, const std::string& value) {
    if (const auto m = parse_mask_choice(value)) return *m;
    throw std::invalid_argument("option --" + option + " expects " + mask_choice_list() + ", got '" + value + "'");
}

}  // namespace

void apply_view_option(UiState& st, const std::string& view, const std::string& option, const std::string& value) {
    const ViewInfo* v = find_view(view);
    if (!v) throw std::invalid_argument("unknown view '" + view + "' (see --view list)");
    if (std::find(v->options.begin(), v->options.end(), option) == v->options.end()) {
        std::string opts;
        for (const auto& o : v->options) opts += " --" + o;
        throw std::invalid_argument("option --" + option + " does not apply to view " + view +
                                    (opts.empty() ? " (it has no options)" : " (its options:" + opts + ")"));
    }
    const bool softmax = view.rfind("softmax", 0) == 0;
    // Out-of-range values are refused, never clamped: a figure titled "layer 3" must be the layer asked for.
    // Upper bounds depend on the model: check_view_knobs checks them once it is loaded.
    if (option == "layer") st.layer = int_in_range(option, value, 0, 1 << 14);
    else if (option == "head") st.head = int_in_range(option, value, 0, 1 << 14);
    else if (option == "query") st.query = int_in_range(option, value, -1, 1 << 24);
    else if (option == "attn-temperature") {
        st.attn_temperature = in_range(option, value, kMinTemperature, kMaxTemperature);
        st.apply_to_model = true;
    } else if (option == "attn-mask") {
        st.attn_mask = mask_kind(option, value);
        st.apply_to_model = true;
    } else if (option == "attn-window") {
        st.attn_window = std::max(1, to_int(option, value));
        st.apply_to_model = true;
    } else if (option == "attn-padding") {
        st.attn_padding = std::max(0, to_int(option, value));
        st.apply_to_model = true;
    } else if (option == "attn-source") {
        const std::optional<AttnSource> s = parse_attn_source(value);
        if (!s)
            throw std::invalid_argument("option --attn-source expects " + attn_source_list() + ", got '" + value + "'");
        st.attn_source = *s;
    } else if (option == "unit-scale") st.attn_unit_scale = true;
    else if (option == "no-annotate") st.attn_annotate = false;
    else if (option == "temperature" && softmax)
        st.sm_temperature = in_range(option, value, kMinTemperature, kMaxTemperature);
    else if (option == "temperature") st.sample_temperature = in_range(option, value, kMinTemperature, kMaxTemperature);
    else if (option == "mask") st.sm_mask = mask_kind(option, value);
    else if (option == "window") st.sm_window = std::max(1, to_int(option, value));
    else if (option == "padding") st.sm_padding = std::max(0, to_int(option, value));
    else if (option == "logits") {
        std::string err;
        (void)parse_logits(value, &err);
        if (!err.empty()) throw std::invalid_argument("option --logits: " + err);
        st.sm_typed_logits = value;
        st.sm_use_typed = true;
    } else if (option == "alpha") st.act_leaky_alpha = in_range(option, value, 0, 1);
    else if (option == "beta") st.act_swish_beta = in_range(option, value, 0, 10);
    else if (option == "range") st.act_range = in_range(option, value, 0.5, 20);
    else if (option == "curves") {
        std::array<bool, 10> shown{};
        std::stringstream ss(value);
        std::string name;
        bool any = false;
        while (std::getline(ss, name, ',')) {
            if (name.empty()) continue;
            std::transform(name.begin(), name.end(), name.begin(),
                           [](unsigned char c) { return char(std::tolower(c)); });
            bool found = false;
            for (int i = 0; i < 10; ++i)
                if (name == kActivationKeys[i]) {
                    shown[size_t(i)] = true;
                    found = any = true;
                }
            if (!found) {
                std::string names;
                for (const char* k : kActivationKeys) names += std::string(" ") + k;
                throw std::invalid_argument("option --curves: unknown activation '" + name + "' (expected:" + names +
                                            ")");
            }
        }
        if (!any) throw std::invalid_argument("option --curves needs at least one activation name");
        st.act_shown = shown;
    } else if (option == "mean") st.norm_mean = in_range(option, value, -100, 100);
    else if (option == "std") st.norm_std = in_range(option, value, 0.01, 100);
    else if (option == "gamma") st.norm_gamma = in_range(option, value, -10, 10);
    else if (option == "shift") st.norm_beta = in_range(option, value, -10, 10);
    else if (option == "eps") st.norm_eps = in_range(option, value, 1e-12, 1);
    else if (option == "d-model") {
        const int d = to_int(option, value);
        if (d < 2 || d > 1024 || d % 2)
            throw std::invalid_argument("option --d-model expects an even number in [2, 1024], got " + value);
        st.pe_d_model = d;
    } else if (option == "base") st.pe_base = in_range(option, value, 2, 1e7);
    else if (option == "positions") st.pe_positions = int(in_range(option, value, 2, 4096));
    else if (option == "rope-theta") st.rope_theta = in_range(option, value, 2, 1e7);
    else if (option == "interleaved") st.rope_interleaved = true;
    else if (option == "random-tokens") st.detect_random = true;
    else if (option == "random-length") st.detect_half = int(in_range(option, value, 2, 512));
    else if (option == "exclude-bos") st.detect_exclude_bos = true;
    else if (option == "exclude-current") st.detect_exclude_current = true;
    else if (option == "method") {
        if (!interp::parse_attribution_method(value))
            throw std::invalid_argument("--method expects grad-x-input, integrated-gradients or occlusion, got '" +
                                        value + "'");
        st.attr_method = value;
    } else if (option == "baseline") {
        if (!interp::parse_attribution_baseline(value))
            throw std::invalid_argument("--baseline expects mean or zero, got '" + value + "'");
        st.attr_baseline = value;
    } else if (option == "ig-rule") {
        if (!interp::parse_ig_rule(value))
            throw std::invalid_argument("--ig-rule expects adaptive or midpoint, got '" + value + "'");
        st.attr_ig_rule = value;
    } else if (option == "steps") st.attr_steps = int(in_range(option, value, 1, 1024));
    else if (option == "span") st.attr_span = int(in_range(option, value, 1, 16));
    else if (option == "neuron") st.neuron = int(in_range(option, value, 0, 1 << 24));
    else if (option == "neuron-rows") st.neuron_rows = int(in_range(option, value, 4, 256));
    else if (option == "lab-run") {
        if (value.empty()) throw std::invalid_argument("option --lab-run expects a training-lab run folder");
        st.lab_run = value;
    } else if (option == "lab-compare") {
        if (value.empty()) throw std::invalid_argument("option --lab-compare expects a second training-lab run folder");
        st.lab_compare = value;
    } else if (option == "ab-set") {
        UiState probe = st;  // checked now, so a typo is named before any forward runs
        set_state_field(probe, value);
        st.ab_set.push_back(value);
    } else if (option == "lab-step") {
        st.lab_step = to_int(option, value);
        if (st.lab_step < -1) throw std::invalid_argument("option --lab-step must be >= -1, got " + value);
    } else if (option == "reference") {
        if (value.empty()) throw std::invalid_argument("option --reference expects a model path or float-twin");
        st.compare_reference = value;
    } else if (option == "corpus") {
        if (value.empty()) throw std::invalid_argument("option --corpus expects a text file");
        st.neuron_corpus = value;
    } else if (option == "chunk") st.neuron_context = int(in_range(option, value, 8, 1024));
    else if (option == "top-k") st.top_k = int(in_range(option, value, 0, 100000));
    else if (option == "top-p") st.top_p = in_range(option, value, 0.01, 1);
    else if (option == "context") st.kv_context = int(in_range(option, value, 1, 1 << 22));
    else if (option == "ablate") {
        st.ablated_heads.clear();
        std::stringstream ss(value);
        std::string item;
        while (std::getline(ss, item, ',')) {
            const auto lh = parse_int_pair(item, '.');
            if (!lh || lh->first < 0 || lh->second < 0)
                throw std::invalid_argument("--ablate expects LAYER.HEAD[,LAYER.HEAD...], got " + quote_value(item));
            st.ablated_heads.push_back({lh->first, lh->second});
        }
    } else if (option == "ablate-mode") {
        const auto k = parse_ablation_kind(value);
        if (!k) throw std::invalid_argument("--ablate-mode expects zero or mean, got '" + value + "'");
        st.ablate_mode = *k;
    } else if (option == "target") st.interp_target = value;
    else if (option == "minus") st.interp_minus = value;
    else if (option == "corrupt") st.interp_corrupt = value;
    else if (option == "answer") st.interp_answer = value;
    else if (option == "wrong") st.interp_wrong = value;
    else throw std::invalid_argument("option --" + option + " is not handled for view " + view);
}

void set_state_field(UiState& st, const std::string& assignment) {
    const size_t eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
        throw std::invalid_argument("--set expects key=value, got '" + assignment + "'");
    const std::string key = assignment.substr(0, eq), value = assignment.substr(eq + 1);
    nlohmann::json j = st;
    if (!j.contains(key) || key == "version")
        throw std::invalid_argument("--set: unknown key '" + key + "' (the keys of a session file)");
    nlohmann::json v;
    try {
        v = parse_json(value, "--set " + key);
    } catch (const std::runtime_error&) {
        v = value;
    }
    if (j[key].is_string() && !v.is_string()) v = value;
    const bool same = (j[key].is_number() && v.is_number()) || j[key].type() == v.type();
    if (!same)
        throw std::invalid_argument("--set " + key + ": expected a value like " + j[key].dump() + ", got '" + value +
                                    "'");
    j[key] = v;
    from_json(j, st);
}

// --- sessions ---------------------------------------------------------------------------------------------------------

UiState load_session(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read session file " + file.string());
    std::stringstream buf;
    buf << in.rdbuf();
    return parse_state_text(buf.str(), "session file " + file.string());
}

void save_session(const std::filesystem::path& file, const UiState& st) {
    const nlohmann::json j = st;
    plot::write_file_atomic(file, j.dump(2) + "\n");
}

}  // namespace ts::figures
