// UiState JSON mapping and atomic persistence.
#include "app/session/state.h"
#include "core/kernels/quant_gemm.h"
#include "app/session/limits.h"
#include "core/interp/input_attribution.h"
#include "core/util/json.h"
#include "core/util/file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <fstream>
#include <limits>
#include <type_traits>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace ts::studio {

void UiState::remember_model(const std::string& path) {
    if (path.empty()) return;
    recent.erase(std::remove(recent.begin(), recent.end(), path), recent.end());
    recent.insert(recent.begin(), path);
    if (recent.size() > kMaxRecent) recent.resize(kMaxRecent);
    std::erase_if(ablated_heads, [](const std::array<int, 2>& h) { return h[0] < 0 || h[1] < 0 || h[0] > 4096 || h[1] > 4096; });
}

void UiState::clamp() {
    layer = std::max(0, layer);
    head = std::max(0, head);
    query = std::max(-1, query);
    // 0 = the monitor's scale; anything else within what ImGui can lay out (a scale of 0.01 aborts it).
    ui_scale = ui_scale > 0.0f ? std::clamp(ui_scale, kMinUiScale, kMaxUiScale) : 0.0f;
    attn_temperature = std::clamp(attn_temperature, kMinTemperature, kMaxTemperature);
    attn_window = std::clamp(attn_window, 1, 4096);
    attn_padding = std::clamp(attn_padding, 0, 4096);
    sm_temperature = std::clamp(sm_temperature, kMinTemperature, kMaxTemperature);
    sm_window = std::clamp(sm_window, 1, 4096);
    sm_padding = std::clamp(sm_padding, 0, 4096);
    if (translate_to != "auto" && translate_to != "en" && translate_to != "zh") translate_to = "auto";
    decode_beam = std::clamp(decode_beam, 1, kMaxBeam);
    sm_paint_n = std::clamp(sm_paint_n, 0, 4096);
    if (sm_paint.size() != size_t(sm_paint_n) * size_t(sm_paint_n)) { sm_paint.clear(); sm_paint_n = 0; }
    for (auto& c : sm_paint) c = c ? 1 : 0;
    act_leaky_alpha = std::clamp(act_leaky_alpha, 0.0f, 1.0f);
    act_swish_beta = std::clamp(act_swish_beta, 0.0f, 10.0f);
    act_range = std::clamp(act_range, 0.5f, 20.0f);
    norm_std = std::clamp(norm_std, 0.01f, 100.0f);
    norm_eps = std::clamp(norm_eps, 1e-12f, 1.0f);
    norm_outlier = std::clamp(norm_outlier, -100.0f, 100.0f);
    pe_d_model = std::clamp(pe_d_model / 2 * 2, 2, 1024);
    pe_base = std::clamp(pe_base, 2.0f, 1e7f);
    pe_positions = std::clamp(pe_positions, 2, 4096);
    detect_half = std::clamp(detect_half, 2, 512);
    if (!interp::parse_attribution_method(attr_method)) attr_method = "integrated-gradients";
    attr_steps = std::clamp(attr_steps, 1, 1024);
    attr_span = std::clamp(attr_span, 1, 16);
    if (!interp::parse_attribution_baseline(attr_baseline)) attr_baseline = "mean";
    if (!interp::parse_ig_rule(attr_ig_rule)) attr_ig_rule = "adaptive";
    if (!parse_quant_activations(quant_activations)) quant_activations = "float";
    neuron = std::max(-1, neuron);
    neuron_rows = std::clamp(neuron_rows, 4, 256);
    neuron_context = std::clamp(neuron_context, 8, 1024);
    if (resid_view != "norms" && resid_view != "embedding-map" && resid_view != "residual-map")
        resid_view = "embedding-map";
    rope_theta = std::clamp(rope_theta, 2.0f, 1e7f);
    sample_temperature = std::clamp(sample_temperature, kMinTemperature, kMaxTemperature);
    top_k = std::clamp(top_k, 0, 100000);
    top_p = std::clamp(top_p, 0.01f, 1.0f);
    generate_tokens = std::clamp(generate_tokens, 1, kMaxGenerateTokens);
    kv_context = std::clamp(kv_context, 1, 1 << 22);
    if (train_topic != "lab" && train_topic != "lr-schedule" && train_topic != "dropout" &&
        train_topic != "weight-decay" && train_topic != "label-smoothing")
        train_topic = "lab";
    train_warmup = std::clamp(train_warmup, 0, 1000000);
    train_d_model = std::clamp(train_d_model, 8, 65536);
    train_dropout = std::clamp(train_dropout, 0.0f, 0.95f);
    train_seed = std::clamp(train_seed, 0, 1 << 30);
    train_lr = std::clamp(train_lr, 1e-6f, 1.0f);
    train_weight_decay = std::clamp(train_weight_decay, 0.0f, 10.0f);
    train_grad = std::clamp(train_grad, -10.0f, 10.0f);
    train_label_smoothing = std::clamp(train_label_smoothing, 0.0f, 0.99f);
    lesson_step = std::max(0, lesson_step);
    export_width = std::clamp(export_width, 16, kMaxExportPixels);
    export_height = std::clamp(export_height, 16, kMaxExportPixels);
    export_scale = std::clamp(export_scale, kMinExportScale, kMaxExportScale);
    if (language != "en" && language != "zh") language.clear();
    if (recent.size() > kMaxRecent) recent.resize(kMaxRecent);
}

void link_attention_knobs(UiState& st, std::optional<AttentionKnobs>& last) {
    if (!st.apply_to_model) {
        last.reset();
        return;
    }
    const AttentionKnobs lab{st.sm_temperature, st.sm_mask, st.sm_window, st.sm_padding};
    const AttentionKnobs model{st.attn_temperature, st.attn_mask, st.attn_window, st.attn_padding};
    AttentionKnobs now = lab;                          // just switched on: the lab's values go to the model
    if (last && model != *last) now = model;           // the sidebar (or a session) moved the model's knobs
    else if (last && lab != *last) now = lab;          // the lab moved
    else if (last) now = model;                        // nothing moved
    st.sm_temperature = st.attn_temperature = now.temperature;
    st.sm_mask = st.attn_mask = now.mask;
    st.sm_window = st.attn_window = now.window;
    st.sm_padding = st.attn_padding = now.padding;
    last = now;
}

// One field list for the state file; laid out by hand (clang-format reflows this macro differently on each pass).
// clang-format off
#define TS_STATE_FIELDS(X) \
    X(model_path) X(recent) X(text) X(panel) X(layer) X(head) X(query) X(dark_theme) X(ui_scale)             \
    X(apply_to_model) X(attn_temperature) X(attn_mask) X(attn_window) X(attn_padding) X(sm_temperature)      \
    X(sm_mask) X(sm_window) X(sm_padding) X(sm_use_typed) X(sm_typed_logits) X(act_leaky_alpha)              \
    X(act_swish_beta) X(act_range) X(act_show_grad) X(act_overlay) X(norm_mean) X(norm_std) X(norm_gamma)    \
    X(norm_beta) X(norm_eps) X(norm_outlier) X(pe_d_model) X(pe_base) X(pe_positions) X(rope_theta)          \
    X(rope_interleaved) X(sample_temperature) X(top_k) X(top_p) X(generate_tokens) X(kv_context)             \
    X(attn_unit_scale) X(attn_annotate) X(attn_source) X(sm_paint) X(sm_paint_n) X(act_shown) X(view)        \
    X(export_dir) X(export_format) X(export_width) X(export_height) X(export_scale) X(export_light)          \
    X(export_transparent) X(ablated_heads) X(ablate_mode) X(interp_target) X(interp_minus) X(interp_corrupt) \
    X(interp_answer) X(interp_wrong) X(detect_random) X(detect_half) X(detect_exclude_bos)                   \
    X(detect_exclude_current) X(attr_method) X(attr_steps) X(attr_span) X(attr_baseline) X(attr_ig_rule) X(target_text)      \
    X(translate_to) X(decode_beam) X(language) X(lesson) X(lesson_step) X(train_topic) X(train_warmup)       \
    X(train_d_model) X(train_dropout) X(train_seed) X(train_lr) X(train_weight_decay) X(train_grad)          \
    X(train_label_smoothing) X(neuron) X(neuron_rows) X(neuron_corpus) X(neuron_context) X(lab_run) X(lab_compare) X(lab_step) X(ab_set) X(resid_view) X(quant_activations) X(compare_reference)
// clang-format on

void to_json(nlohmann::json& j, const UiState& s) {
    j = nlohmann::json::object();
#define TS_PUT(f) j[#f] = s.f;
    TS_STATE_FIELDS(TS_PUT)
#undef TS_PUT
    j["version"] = 1;
}

namespace {
template <typename T>
struct is_std_vector : std::false_type {};
template <typename E, typename A>
struct is_std_vector<std::vector<E, A>> : std::true_type {};
template <typename T>
struct is_std_array : std::false_type {};
template <typename E, size_t N>
struct is_std_array<std::array<E, N>> : std::true_type {};

// True when every number `v` holds fits where nlohmann would convert it: numbers only for arithmetic fields
// (nlohmann turns true into 1) and within the type's range, element by element for lists. Converting 1e20 to an
// int (or 1e125 to a byte of sm_paint, as the state fuzzer found) is undefined behaviour, so such a value is a wrong
// value, not a clamp.
template <typename T>
bool numbers_fit(const nlohmann::json& v) {
    if constexpr (std::is_same_v<T, bool>) {
        return v.is_boolean();
    } else if constexpr (std::is_arithmetic_v<T>) {
        if (!v.is_number()) return false;
        if (!v.is_number_float()) {
            if constexpr (std::is_floating_point_v<T>) return true;
            // nlohmann's integers are int64 / uint64: narrowing them is defined (modular), but say so anyway.
            return v.is_number_unsigned() ? v.template get<uint64_t>() <= uint64_t(std::numeric_limits<T>::max())
                                          : v.template get<int64_t>() >= int64_t(std::numeric_limits<T>::lowest()) &&
                                                v.template get<int64_t>() <= int64_t(std::numeric_limits<T>::max());
        }
        const double d = v.template get<double>();
        return std::abs(d) <= double(std::numeric_limits<T>::max()) &&
               (std::is_floating_point_v<T> || d >= double(std::numeric_limits<T>::lowest()));
    } else if constexpr (is_std_vector<T>::value || is_std_array<T>::value) {
        if (!v.is_array()) return false;
        for (const auto& e : v)
            if (!numbers_fit<typename T::value_type>(e)) return false;
        return true;
    } else {
        return true;  // strings and the like: nlohmann's type_error covers them
    }
}

template <typename T>
void get_if(const nlohmann::json& j, const char* key, T& out, std::vector<std::string>* ignored) {
    auto it = j.find(key);
    if (it == j.end()) return;
    if (!numbers_fit<T>(*it)) {
        if (ignored) ignored->push_back(key);
        return;
    }
    try {
        T v = it->template get<T>();
        out = std::move(v);
    } catch (const nlohmann::json::exception&) {
        if (ignored) ignored->push_back(key);  // wrong type: keep the default
    }
}
}  // namespace

void from_json(const nlohmann::json& j, UiState& s) { read_state_fields(j, s, nullptr); }

void read_state_fields(const nlohmann::json& j, UiState& s, std::vector<std::string>* ignored) {
    if (!j.is_object()) return;
#define TS_GET(f) get_if(j, #f, s.f, ignored);
    TS_STATE_FIELDS(TS_GET)
#undef TS_GET
    s.clamp();
}

std::filesystem::path config_dir() {
    if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return std::filesystem::path(x) / "transformer-studio";
    if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".config" / "transformer-studio";
    return std::filesystem::path(".transformer-studio");
}

UiState load_state(const std::filesystem::path& file, std::string* warning) {
    UiState s;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) return s;
    std::ifstream in(file, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    if (!in.good() && !in.eof()) {
        if (warning) *warning = "could not read " + file.string() + "; using defaults";
        return s;
    }
    try {
        return parse_state_text(buf.str(), file.string(), warning);
    } catch (const std::exception& e) {
        std::filesystem::path broken = file;
        broken += ".broken";
        std::filesystem::copy_file(file, broken, std::filesystem::copy_options::overwrite_existing, ec);
        if (warning)
            *warning = "settings file cannot be used (" + std::string(e.what()) + "); using defaults (old file kept as " +
                       broken.filename().string() + ")";
        return UiState{};
    }
}

UiState parse_state_text(std::string_view text, const std::string& what, std::string* warning) {
    const nlohmann::json j = parse_json(text, what);
    if (!j.is_object())
        throw std::runtime_error(what + ": expected a JSON object of settings, found " + std::string(j.type_name()));
    UiState s;
    std::vector<std::string> ignored;
    read_state_fields(j, s, &ignored);
    if (warning && !ignored.empty()) {
        std::string keys;
        for (const std::string& k : ignored) keys += (keys.empty() ? "" : ", ") + k;
        *warning = what + ": ignored settings of the wrong type (kept their defaults): " + keys;
    }
    return s;
}

void save_state(const std::filesystem::path& file, const UiState& s) {
    const nlohmann::json j = s;
    write_file_atomic(file, j.dump(2) + "\n");  // core/util/file.h: never a half-written settings file
}

}  // namespace ts::studio
