// Model figures: parameters per component and the KV-cache size against context length for MHA / GQA / MQA.
#include "app/i18n/tr.h"
#include "app/plot/ticks.h"
#include "app/figures/figures.h"

#include <cmath>
#include <cstdio>
#include <map>

namespace ts::figures {

namespace {
std::string component_of(const std::string& name) {
    if (name.rfind("tok_emb", 0) == 0) return TS_N_("token embedding");
    if (name.rfind("pos_emb", 0) == 0 || name == "enc.pos_emb.weight") return TS_N_("position embedding");
    if (name.find("relative_attention_bias") != std::string::npos) return TS_N_("relative position bias");
    if (name.rfind("tok_type_emb", 0) == 0) return TS_N_("token-type embedding");
    if (name.rfind("mlm_head", 0) == 0) return TS_N_("MLM head");
    if (name.rfind("lm_head", 0) == 0 || name == "final_logits_bias") return TS_N_("LM head");
    if (name.find("cross_attn.") != std::string::npos) return TS_N_("cross-attention");
    if (name.find(".attn.") != std::string::npos) return TS_N_("attention");
    if (name.find(".ffn.") != std::string::npos) return TS_N_("FFN");
    if (name.find("norm") != std::string::npos) return TS_N_("norms");
    return TS_N_("other");
}
}  // namespace

const char* arch_label(Arch a) {
    switch (a) {
        case Arch::EncoderOnly: return tr("encoder-only");
        case Arch::DecoderOnly: return tr("decoder-only");
        case Arch::EncoderDecoder: return tr("encoder–decoder");
    }
    return "?";
}

const char* position_label(PositionKind p) {
    switch (p) {
        case PositionKind::None: return tr("no position encoding");
        case PositionKind::Sinusoidal: return tr("sinusoidal");
        case PositionKind::Learned: return tr("learned");
        case PositionKind::RoPE: return tr("RoPE");
    }
    return "?";
}

double ParameterCounts::get(const std::string& component) const {
    for (const auto& [k, v] : by_component)
        if (k == component) return v;
    return 0.0;
}

ParameterCounts parameter_counts(const Model& m) {
    std::map<std::string, double> counts;
    ParameterCounts out;
    for (const auto& [name, t] : m.stored_weights()) {  // counts only: no float32 copy of half-precision weights
        counts[component_of(name)] += double(t.numel());
        out.total += double(t.numel());
    }
    out.by_component.assign(counts.begin(), counts.end());
    return out;
}

std::string human_count(double v, const char* unit) {
    const char* prefixes[] = {"", "K", "M", "G", "T"};
    int p = 0;
    while (std::abs(v) >= 1000 && p < 4) { v /= 1000; ++p; }
    char buf[64];
    std::snprintf(buf, sizeof buf, p ? "%.2f %s%s" : "%.0f %s%s", v, prefixes[p], unit);
    return buf;
}

plot::Figure parameter_figure(const Model& m) {
    const ParameterCounts pc = parameter_counts(m);
    plot::Figure fp;
    fp.title = trf("Parameters per component (total %s)", human_count(pc.total, "").c_str());
    fp.formula = tr("Counted from the loaded weights: attention = W_q, W_k, W_v, W_o (+ biases) per layer; FFN = W_up, "
                 "W_gate, W_down; tied embeddings count once.");
    fp.y.label = tr("parameters");
    fp.x.label = tr("component");
    fp.view = "parameters";
    fp.y.min = 0;
    plot::Series bars;
    bars.kind = plot::SeriesKind::Bars;
    bars.color = plot::palette(0);
    int i = 0;
    for (const auto& [k, v] : pc.by_component) {
        fp.x.categories.push_back(tr(k.c_str()));  // the keys are the English names (TS_N_ above)
        bars.x.push_back(i++);
        bars.y.push_back(v);
        bars.point_labels.push_back(tr(k.c_str()) + (": " + human_count(v, "")) + " (" + plot::format_value(100 * v / pc.total) + "%)");
    }
    fp.series.push_back(bars);
    fp.legend = false;
    fp.note = m.config().name.empty() ? "" : trf("model: %s", m.config().name.c_str());
    return fp;
}

plot::Figure kv_cache_figure(const Model& m, int context) {
    const ModelConfig& c = m.config();
    auto kv_bytes = [&](int n_kv, double ctx_len, double bytes_per) {
        return 2.0 * c.n_layers * n_kv * c.d_head() * ctx_len * bytes_per;
    };
    plot::Figure fk;
    fk.title = tr("KV-cache size against context length (fp16)");
    fk.formula = tr("bytes = 2 · n_layers · n_kv_heads · d_head · T · 2; GQA/MQA shrink it by n_heads / n_kv_heads");
    fk.x.label = tr("context length T");
    fk.view = "kv-cache";
    fk.x.unit = tr("tokens");
    fk.x.log = true;
    fk.y.label = tr("KV cache");
    fk.y.unit = tr("bytes");
    fk.y.log = true;
    const int gqa_heads = c.n_kv_heads != c.n_heads && c.n_kv_heads != 1 ? c.n_kv_heads : std::max(1, c.n_heads / 4);
    const int variants[] = {c.n_heads, gqa_heads, 1};
    const char* vnames[] = {"MHA", "GQA", "MQA"};
    for (int v = 0; v < 3; ++v) {
        if (v == 1 && (gqa_heads == 1 || gqa_heads == c.n_heads)) continue;  // no distinct GQA variant
        plot::Series s;
        s.name = std::string(vnames[v]) + ", n_kv_heads = " + std::to_string(variants[v]);
        s.color = plot::palette(v);
        for (int e = 0; e <= 40; ++e) {
            const double t = std::pow(2.0, 17.0 * e / 40.0);
            s.x.push_back(t);
            s.y.push_back(kv_bytes(variants[v], t, 2));
        }
        fk.series.push_back(std::move(s));
    }
    fk.ref_lines.push_back({true, double(context), "T = " + std::to_string(context), plot::Rgba{0.9f, 0.3f, 0.3f, 1}});
    fk.note = trf("at T = %d: %s for this model (n_kv_heads %d)", context, human_bytes(kv_bytes(c.n_kv_heads, context, 2)).c_str(),
                  c.n_kv_heads);
    return fk;
}

}  // namespace ts::figures
