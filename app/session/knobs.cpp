// Name tables of the typed knobs (see knobs.h).
#include "app/session/knobs.h"

#include "app/i18n/tr.h"

#include <nlohmann/json.hpp>

#include <cctype>

namespace ts::studio {

namespace {
constexpr std::array<const char*, 5> kMaskNames{"none", "causal", "padding", "sliding", "custom"};
static_assert(kMaskNames.size() == kMaskChoices.size());
constexpr std::array<const char*, 3> kAttnSourceNames{"encoder", "decoder", "cross"};
static_assert(kAttnSourceNames.size() == kAttnSources.size());
// Marked for the catalog: the window shows each tab as tr(name_of(p)).
constexpr std::array<const char*, 13> kPanelNames{
    TS_N_("Tokens"),        TS_N_("Attention"), TS_N_("Softmax"),     TS_N_("Activations"), TS_N_("Neurons"),
    TS_N_("Normalization"), TS_N_("Positions"), TS_N_("Predictions"), TS_N_("Residual"),    TS_N_("Model"),
    TS_N_("Training"),      TS_N_("Causal"),    TS_N_("Lessons")};
static_assert(kPanelNames.size() == kPanels.size());

bool same_ignoring_case(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

// The one lookup and the one listing over a kind's table (every enum here lists its values in declaration order).
template <typename E, size_t N>
std::optional<E> parse_by_name(const std::array<E, N>& all, std::string_view s, bool any_case = false) {
    for (E e : all)
        if (any_case ? same_ignoring_case(s, name_of(e)) : s == name_of(e)) return e;
    return std::nullopt;
}

template <typename E, size_t N>
std::string list_names(const std::array<E, N>& all) {
    std::string out;
    for (size_t i = 0; i < N; ++i) {
        if (i > 0) out += i + 1 == N ? " or " : ", ";
        out += name_of(all[i]);
    }
    return out;
}
}  // namespace

const char* name_of(MaskChoice m) { return kMaskNames[static_cast<size_t>(m)]; }
std::optional<MaskChoice> parse_mask_choice(std::string_view s) { return parse_by_name(kMaskChoices, s); }
std::string mask_choice_list() { return list_names(kMaskChoices); }

const char* name_of(AttnSource s) { return kAttnSourceNames[static_cast<size_t>(s)]; }
std::optional<AttnSource> parse_attn_source(std::string_view s) { return parse_by_name(kAttnSources, s); }
std::string attn_source_list() { return list_names(kAttnSources); }

const char* name_of(Panel p) { return kPanelNames[static_cast<size_t>(p)]; }
std::optional<Panel> parse_panel(std::string_view s) { return parse_by_name(kPanels, s, true); }
std::string panel_list() { return list_names(kPanels); }

const char* name_of(interp::AblationKind k) { return k == interp::AblationKind::Mean ? "mean" : "zero"; }

std::optional<interp::AblationKind> parse_ablation_kind(std::string_view s) {
    if (s == "zero") return interp::AblationKind::Zero;
    if (s == "mean") return interp::AblationKind::Mean;
    return std::nullopt;
}

}  // namespace ts::studio

namespace nlohmann {

void adl_serializer<ts::studio::MaskChoice>::to_json(json& j, ts::studio::MaskChoice v) { j = ts::studio::name_of(v); }

void adl_serializer<ts::studio::MaskChoice>::from_json(const json& j, ts::studio::MaskChoice& v) {
    const auto m = j.is_string() ? ts::studio::parse_mask_choice(j.get_ref<const std::string&>()) : std::nullopt;
    if (!m) throw json::type_error::create(302, "a mask must be " + ts::studio::mask_choice_list(), nullptr);
    v = *m;
}

void adl_serializer<ts::studio::AttnSource>::to_json(json& j, ts::studio::AttnSource v) { j = ts::studio::name_of(v); }

void adl_serializer<ts::studio::AttnSource>::from_json(const json& j, ts::studio::AttnSource& v) {
    const auto s = j.is_string() ? ts::studio::parse_attn_source(j.get_ref<const std::string&>()) : std::nullopt;
    if (!s)
        throw json::type_error::create(302, "an attention source must be " + ts::studio::attn_source_list(), nullptr);
    v = *s;
}

void adl_serializer<ts::plot::ExportFormat>::to_json(json& j, ts::plot::ExportFormat v) { j = ts::plot::to_string(v); }

void adl_serializer<ts::plot::ExportFormat>::from_json(const json& j, ts::plot::ExportFormat& v) {
    const auto f = j.is_string() ? ts::plot::parse_export_format(j.get_ref<const std::string&>()) : std::nullopt;
    if (!f) throw json::type_error::create(302, "an export format must be png, svg or csv", nullptr);
    v = *f;
}

void adl_serializer<ts::studio::Panel>::to_json(json& j, ts::studio::Panel v) { j = ts::studio::name_of(v); }

void adl_serializer<ts::studio::Panel>::from_json(const json& j, ts::studio::Panel& v) {
    const auto p = j.is_string() ? ts::studio::parse_panel(j.get_ref<const std::string&>()) : std::nullopt;
    if (!p) throw json::type_error::create(302, "a panel must be " + ts::studio::panel_list(), nullptr);
    v = *p;
}

void adl_serializer<ts::interp::AblationKind>::to_json(json& j, ts::interp::AblationKind v) {
    j = ts::studio::name_of(v);
}

void adl_serializer<ts::interp::AblationKind>::from_json(const json& j, ts::interp::AblationKind& v) {
    const auto k = j.is_string() ? ts::studio::parse_ablation_kind(j.get_ref<const std::string&>()) : std::nullopt;
    if (!k) throw json::type_error::create(302, "an ablation must be zero or mean", nullptr);
    v = *k;
}

}  // namespace nlohmann
