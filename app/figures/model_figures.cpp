// Model figures: parameters per component and the KV-cache size against context length for MHA / GQA / MQA.
#include "app/i18n/tr.h"
#include "app/plot/ticks.h"
#include "app/figures/figures.h"

#include <algorithm>
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

std::vector<plot::Figure> compare_figures(const studio::CompareResult& r) {
    std::vector<plot::Figure> out;
    if (!r.error.empty()) return out;
    const interp::ModelDiff& d = r.diff;
    const std::string who = trf("%s against %s", r.model_name.c_str(), r.reference_name.c_str());
    const std::string arithmetic = r.arithmetic == QuantActivations::Int8
        ? tr("products on 8-bit activations (llama.cpp's arithmetic)")
        : tr("exact float32 products of the stored weights");

    // Per position: KL bars, top-1 disagreements in the second colour.
    plot::Figure kl;
    kl.title = tr("KL(reference ‖ model) of the next token, per position");
    kl.view = "quant-lens";
    kl.formula =
        tr("KL(p_ref ‖ p) = Σ_v p_ref(v) · log(p_ref(v) / p(v)) of the two models' next-token distributions "
           "after each token (0: the same prediction). A bar in the second colour: the top-1 tokens differ.");
    kl.note = trf("mean KL %.3g nats · top-1 agreement %d / %d", d.mean_kl, d.top1_agreements, d.T);
    kl.x.label = tr("position (token)");
    kl.y.label = tr("KL");
    kl.y.unit = "nats";
    kl.y.min = 0;
    plot::Series same, differ;
    same.kind = differ.kind = plot::SeriesKind::Bars;
    same.name = tr("top-1 the same");
    differ.name = tr("top-1 differs");
    same.color = plot::palette(0);
    differ.color = plot::palette(1);
    for (int t = 0; t < d.T && t < int(d.kl.size()); ++t) {
        plot::Series& s = d.top1_agree[size_t(t)] ? same : differ;
        s.x.push_back(t);
        s.y.push_back(d.kl[size_t(t)]);
        kl.x.categories.push_back(size_t(t) < r.labels.size() ? r.labels[size_t(t)] : std::to_string(t));
    }
    kl.series.push_back(std::move(same));
    if (!differ.x.empty()) kl.series.push_back(std::move(differ));
    out.push_back(std::move(kl));

    // Per layer: the residual stream's drift.
    plot::Figure res;
    res.title = tr("Residual stream drift per layer");
    res.view = "quant-lens";
    res.formula =
        tr("‖h − h_ref‖ / ‖h_ref‖: the relative L2 error of the model's residual stream against the "
           "reference's over all positions, after the embeddings and after each layer (how the difference "
           "grows with depth).");
    res.x.label = tr("layer");
    res.y.label = tr("relative L2 error");
    plot::Series line;
    line.kind = plot::SeriesKind::Line;
    line.color = plot::palette(0);
    line.marker = 3.0f;
    bool positive = true;
    for (size_t l = 0; l < d.resid_rel_error.size(); ++l) {
        line.x.push_back(double(l));
        line.y.push_back(d.resid_rel_error[l]);
        positive = positive && d.resid_rel_error[l] > 0;
        res.x.categories.push_back(l == 0 ? std::string("embed") : "L" + std::to_string(l - 1));
    }
    res.y.log = positive && !line.y.empty();  // identical embeddings (error 0) keep a linear axis
    res.legend = false;
    res.series.push_back(std::move(line));
    res.note = arithmetic;
    out.push_back(std::move(res));

    // Per head: mean |Δ attention|.
    plot::Figure heads;
    const MatrixRM& m = d.attn_mean_abs_diff;
    std::vector<float> v(m.data(), m.data() + m.size());
    float vmax = 0.0f;
    for (const float x : v)
        if (std::isfinite(x)) vmax = std::max(vmax, x);
    heads.heatmap =
        plot::make_heatmap(int(m.rows()), int(m.cols()), v, plot::Colormap::Viridis, tr("mean |Δ attention|"), "");
    heads.heatmap->vmin = 0;
    heads.heatmap->vmax = vmax > 0 ? vmax : 1;
    heads.heatmap->row_name = tr("layer");
    heads.heatmap->col_name = tr("head");
    heads.heatmap->annotate = false;  // values of 1e-4 would all print as 0.00; the readout gives them
    for (int l = 0; l < int(m.rows()); ++l) heads.y.categories.push_back("L" + std::to_string(l));
    for (int h = 0; h < int(m.cols()); ++h) heads.x.categories.push_back("H" + std::to_string(h));
    heads.y.label = tr("layer");
    heads.x.label = tr("head");
    heads.legend = false;
    heads.title = tr("Attention change per head");
    heads.view = "quant-lens";
    heads.formula =
        tr("mean |p − p_ref|: for each layer and head, the mean absolute difference of the two models' "
           "attention probabilities over the cells the mask allows (0: the same pattern).");
    heads.note = who;
    out.push_back(std::move(heads));
    return out;
}

}  // namespace ts::figures
