// Name tables of the typed knobs (see knobs.h).
#include "app/session/knobs.h"

#include <nlohmann/json.hpp>

namespace ts::studio {

namespace {
constexpr std::array<const char*, 5> kMaskNames{"none", "causal", "padding", "sliding", "custom"};
static_assert(kMaskNames.size() == kMaskChoices.size());
}  // namespace

const char* name_of(MaskChoice m) {
    for (size_t i = 0; i < kMaskChoices.size(); ++i)
        if (kMaskChoices[i] == m) return kMaskNames[i];
    return "causal";
}

std::optional<MaskChoice> parse_mask_choice(std::string_view s) {
    for (size_t i = 0; i < kMaskChoices.size(); ++i)
        if (s == kMaskNames[i]) return kMaskChoices[i];
    return std::nullopt;
}

std::string mask_choice_list() {
    std::string out;
    for (size_t i = 0; i < kMaskNames.size(); ++i) {
        if (i > 0) out += i + 1 == kMaskNames.size() ? " or " : ", ";
        out += kMaskNames[i];
    }
    return out;
}

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

void adl_serializer<ts::interp::AblationKind>::to_json(json& j, ts::interp::AblationKind v) {
    j = ts::studio::name_of(v);
}

void adl_serializer<ts::interp::AblationKind>::from_json(const json& j, ts::interp::AblationKind& v) {
    const auto k = j.is_string() ? ts::studio::parse_ablation_kind(j.get_ref<const std::string&>()) : std::nullopt;
    if (!k) throw json::type_error::create(302, "an ablation must be zero or mean", nullptr);
    v = *k;
}

}  // namespace nlohmann
