// Causal-analysis figures (the Causal panel and `render`): head-ablation sweep, activation patching heatmaps,
// direct logit attribution by layer and by head, attention rollout and attention flow. Built from core/interp
// results (app/session/interp_jobs.h) or, for rollout, from a snapshot's attention probabilities.
#include "app/i18n/tr.h"
#include "app/figures/figures.h"
#include "core/util/number.h"

#include "core/interp/attention_flow.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ts::figures {

namespace {

// snprintf rather than "L" + std::to_string(i): GCC 12 warns falsely (-Wrestrict) on that concatenation.
std::string label_of(const char* f, int a, int b = 0) {
    char buf[48];
    std::snprintf(buf, sizeof buf, f, a, b);
    return buf;
}

std::vector<std::string> numbered(const char* prefix, int n) {
    std::vector<std::string> v;
    for (int i = 0; i < n; ++i) v.push_back(std::string(prefix) + label_of("%d", i));
    return v;
}


/// A (rows, cols) heatmap figure from a row-major matrix, diverging around 0 (or viridis 0..1 when `unit`).
plot::Figure matrix_figure(const MatrixRM& m, std::vector<std::string> rows, std::vector<std::string> cols,
                           const std::string& row_name, const std::string& col_name, const std::string& value_label,
                           const std::string& unit, bool unit_range) {
    plot::Figure f;
    std::vector<float> v(m.data(), m.data() + m.size());
    f.heatmap = plot::make_heatmap(int(m.rows()), int(m.cols()), v, unit_range ? plot::Colormap::Viridis : plot::Colormap::Diverging,
                                   value_label, unit);
    if (unit_range) {
        f.heatmap->vmin = 0;
        f.heatmap->vmax = 1;
    }
    f.heatmap->row_name = row_name;
    f.heatmap->col_name = col_name;
    f.heatmap->annotate = m.rows() * m.cols() <= 256;
    f.y.label = row_name;
    f.x.label = col_name;
    f.y.categories = std::move(rows);
    f.x.categories = std::move(cols);
    f.legend = false;
    return f;
}

std::string ablated_note(const InterpInputs& in) {
    if (in.ablated.empty()) return "";
    std::string s = in.ablate_mode == interp::AblationKind::Mean ? tr("with mean-ablated heads:") : tr("with zero-ablated heads:");
    for (const auto& h : in.ablated) s += label_of(" L%dH%d", h.layer, h.head);
    return s;
}

}  // namespace

plot::Figure ablation_sweep_figure(const InterpResult& r) {
    const interp::AblationSweep& s = *r.sweep;
    plot::Figure f = matrix_figure(s.delta_log_prob, numbered("L", int(s.delta_log_prob.rows())),
                                   numbered("H", int(s.delta_log_prob.cols())), tr("layer"), tr("head"),
                                   tr("Δ log p(target)"), "nats", false);
    f.title = trf("Ablate each head in turn: change of log p(%s) at the last position", r.in.target_label.c_str());
    f.view = "ablation-sweep";
    f.formula = trf("Δ = log p(target | head h of layer l %s-ablated) − log p(target | clean), one forward per head. "
                    "Zero ablation sets the head's output (before W_O) to 0; mean ablation replaces it by its mean over "
                    "positions. Blue (negative): the head helps the prediction.", name_of(r.in.ablate_mode));
    f.note = trf("clean log p = %.3f nats", s.clean_log_prob) + (s.cancelled ? tr(" · cancelled (blank cells not run)") : "");
    return f;
}

std::vector<plot::Figure> patching_figures(const InterpResult& r) {
    std::vector<plot::Figure> out;
    const interp::PatchingBaseline& b = *r.baseline;
    const std::string metric = "logit(" + r.in.answer_label + ") − logit(" + r.in.wrong_label + ")";
    // Normalised by (m_clean − m_corrupt): when the two runs barely differ, the ratio amplifies noise into values far
    // outside ±1 (the IOI example on a small model gave 25 and −33), so say so where the values are shown.
    const float gap = std::abs(b.clean_metric - b.corrupt_metric);
    const bool weak = gap < 0.25f || gap < 0.1f * std::max(std::abs(b.clean_metric), std::abs(b.corrupt_metric));
    const std::string note = trf("clean %.3f, corrupted %.3f (logit units)", b.clean_metric, b.corrupt_metric) +
                             (weak ? " · " + trf("they differ by only %.3f: values far outside ±1 are noise divided by "
                                                 "that small difference; choose prompts whose answers differ more", gap)
                                   : std::string()) +
                             (r.in.ablated.empty() ? "" : " · " + ablated_note(r.in));
    const std::string formula = trf("Run the corrupted prompt, paste one activation from the clean run, and measure how "
                                    "much of the clean %s comes back: (m_patched − m_corrupt) / (m_clean − m_corrupt), so "
                                    "clean = 1 and corrupted = 0 (Wang et al. 2022; TransformerLens get_act_patch_*).",
                                    metric.c_str());
    auto add = [&](const interp::PatchingResult& p, std::vector<std::string> cols, const char* col_name, const char* title,
                   const char* view) {
        plot::Figure f = matrix_figure(p.normalized, numbered("L", int(p.normalized.rows())), std::move(cols),
                                       view == std::string("patching-resid") ? tr("layer (input of)") : tr("layer"), tr(col_name),
                                       tr("restored metric"), "", false);
        f.heatmap->vmin = -1;
        f.heatmap->vmax = 1;
        f.title = tr(title);
        f.view = view;
        f.formula = formula;
        f.note = note;
        out.push_back(std::move(f));
    };
    if (r.patch_resid)
        add(*r.patch_resid, r.in.labels, TS_N_("position"), TS_N_("Patching the residual stream (resid_pre) by layer and position"),
            "patching-resid");
    if (r.patch_heads)
        add(*r.patch_heads, numbered("H", int(r.patch_heads->normalized.cols())), TS_N_("head"),
            TS_N_("Patching head outputs (all positions) by layer and head"), "patching-heads");
    return out;
}

std::vector<plot::Figure> logit_attribution_figures(const InterpResult& r, int n_layers) {
    std::vector<plot::Figure> out;
    const interp::LogitAttribution& a = *r.attribution;
    const std::string what = r.in.minus >= 0 ? "logit(" + r.in.target_label + ") − logit(" + r.in.minus_label + ")"
                                             : "logit(" + r.in.target_label + ")";
    const std::string formula = tr("The final residual stream is a sum of components (embeddings, each head's output "
                                "through its slice of W_O, each MLP output). Each is passed through the final norm "
                                "with the run's own scale and projected on the unembedding direction: the bars sum "
                                "to the logit (Elhage et al. 2021; TransformerLens apply_ln_to_stack).");
    const std::string check = trf("Σ components = %.4f, actual %.4f", a.total, a.logit) +
                              (r.in.ablated.empty() ? "" : " · " + ablated_note(r.in));
    // By layer: embeddings, then attention (sum over heads and bias) and MLP of every layer.
    plot::Figure f;
    f.title = trf("Direct logit attribution of %s at the last position, by layer", what.c_str());
    f.view = "logit-attribution";
    f.formula = formula;
    f.note = check;
    f.x.label = tr("component");
    f.y.label = tr("contribution");
    f.y.unit = tr("logit");
    plot::Series bars;
    bars.kind = plot::SeriesKind::Bars;
    bars.color = plot::palette(0);
    auto add = [&](const std::string& name, double v) {
        bars.x.push_back(double(bars.x.size()));
        bars.y.push_back(v);
        f.x.categories.push_back(name);
    };
    double emb = 0, bias = 0;
    std::vector<double> attn(size_t(std::max(0, n_layers)), 0.0), mlp(size_t(std::max(0, n_layers)), 0.0);
    for (size_t i = 0; i < a.names.size(); ++i) {
        const std::string& n = a.names[i];
        const double v = a.values[i];
        if (n == "tok_emb.out" || n == "pos.out") { emb += v; continue; }
        const size_t d1 = n.find('.'), d2 = n.find('.', d1 + 1);
        if (d1 == std::string::npos || d2 == std::string::npos) { bias += v; continue; }
        const int64_t l = parse_int(std::string_view(n).substr(d1 + 1, d2 - d1 - 1)).value_or(-1);
        if (l < 0 || l >= n_layers) { bias += v; continue; }
        if (n.compare(d2 + 1, 4, "attn") == 0) attn[size_t(l)] += v;
        else mlp[size_t(l)] += v;
    }
    add("embed", emb);
    for (int l = 0; l < n_layers; ++l) {
        add(label_of("L%d attn", l), attn[size_t(l)]);
        add(label_of("L%d MLP", l), mlp[size_t(l)]);
    }
    if (bias != 0) add(tr("norm bias"), bias);
    f.series.push_back(std::move(bars));
    f.legend = false;
    out.push_back(std::move(f));
    // By head.
    plot::Figure h = matrix_figure(r.attr_heads, numbered("L", int(r.attr_heads.rows())), numbered("H", int(r.attr_heads.cols())),
                                   tr("layer"), tr("head"), tr("contribution"), "logit", false);
    h.title = trf("Direct logit attribution of %s, by head", what.c_str());
    h.view = "logit-attribution-heads";
    h.formula = formula;
    h.note = check;
    out.push_back(std::move(h));
    return out;
}

plot::Figure attention_rollout_figure(const Snapshot& s) {
    const std::string title = tr("Attention rollout: how much each input token feeds each position");
    const std::string formula =
        tr("Â_l = rownorm(0.5·Ā_l + 0.5·I) with Ā_l the attention of layer l averaged over heads (the residual "
        "connection as half of the attention to oneself); rollout = Â_L · … · Â_1 (Abnar & Zuidema 2020, eq. 1). "
        "Rows sum to 1.");
    plot::Figure f;
    if (!s.model || !s.trace || s.model->config().arch == Arch::EncoderDecoder) {
        f.note = tr("rollout needs the attention of a decoder-only or encoder-only model");
    } else {
        const MatrixRM roll = interp::attention_rollout(interp::head_mean_attention(*s.trace, s.stack(), s.n_layers()));
        const auto labels = snapshot_token_labels(s);
        f = matrix_figure(roll, labels, labels, tr("output position"), tr("input token"), tr("share"), "", true);
        f.heatmap->annotate = roll.rows() <= 16;
    }
    f.title = title;
    f.view = "attention-rollout";
    f.formula = formula;
    return f;
}

plot::Figure attention_flow_figure(const InterpResult& r) {
    const MatrixRM& m = r.flow->normalized;
    plot::Figure f = matrix_figure(m, r.in.labels, r.in.labels, tr("output position"), tr("input token"), tr("share of flow"), "", true);
    f.title = tr("Attention flow: max-flow from each position to each input token");
    f.view = "attention-flow";
    f.heatmap->annotate = m.rows() <= 16;
    f.formula = tr("The layers form a graph with edge capacities Â_l[i, j] = rownorm(0.5·Ā_l + 0.5·I); flow[i, j] is "
                "the maximum flow from position i after the last layer to input token j (Abnar & Zuidema 2020, §3), "
                "each row divided by its sum. Exact (Edmonds–Karp), at most 64 tokens.");
    f.note = ablated_note(r.in) + (r.flow->cancelled ? tr(" · cancelled") : "");
    return f;
}

std::vector<plot::Figure> head_detector_figures(const InterpResult& r) {
    // Title, what the pattern marks, and the view of each kind, in kHeadKinds' order.
    struct KindText {
        const char* title;
        const char* marks;
        const char* view;
    };
    static const KindText kText[] = {
        {TS_N_("Previous-token heads: attention on the token just before"), TS_N_("key i − 1"), "heads-previous-token"},
        {TS_N_("Duplicate-token heads: attention on earlier copies of the same token"),
         TS_N_("earlier keys holding the query's token"), "heads-duplicate-token"},
        {TS_N_("Induction heads: attention on the token after an earlier copy"),
         TS_N_("keys right after an earlier copy of the query's token"), "heads-induction"},
        {TS_N_("Attention sinks: attention on the first token"), TS_N_("key 0"), "heads-first-token"},
    };
    const int T = int(r.in.ids.size());
    std::string on = r.heads_on_random ? trf("on %d random tokens said twice (the induction probe)", T / 2)
                                       : trf("on the text (%d tokens)", T);
    if (r.heads_options.exclude_bos) on += std::string(" · ") + tr("attention on the first token left out");
    if (r.heads_options.exclude_current_token) on += std::string(" · ") + tr("attention on the query itself left out");
    if (!r.in.ablated.empty()) on += " · " + ablated_note(r.in);
    std::vector<plot::Figure> out;
    for (size_t k = 0; k < r.head_scores.size() && k < std::size(kText); ++k) {
        const MatrixRM& s = r.head_scores[k];
        plot::Figure f = matrix_figure(s, numbered("L", int(s.rows())), numbered("H", int(s.cols())), tr("layer"),
                                       tr("head"), tr("share of attention"), "", true);
        f.title = tr(kText[k].title);
        f.view = kText[k].view;
        Eigen::Index tl = 0, th = 0;
        const float best = s.size() ? s.maxCoeff(&tl, &th) : 0.0f;
        f.note = trf("top: L%d H%d (%.2f)", int(tl), int(th), best) + " · " + on;
        f.formula = k == 3
            ? tr("score = mean of A[i, 0] over queries i ≥ 1: how much each head rests on the first token "
                 "(an attention sink, Xiao et al. 2023).")
            : trf("score = Σ A∘P / Σ A over the head's attention A, P = 1 on %s (TransformerLens "
                  "detect_head, \"mul\"; Olsson et al. 2022 for induction heads).",
                  tr(kText[k].marks));
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace ts::figures

namespace ts::figures {

namespace {

// The method's name as titles use it, and its formula.
std::string method_title(interp::AttributionMethod m) {
    switch (m) {
    case interp::AttributionMethod::GradientTimesInput: return tr("Gradient × input");
    case interp::AttributionMethod::IntegratedGradients: return tr("Integrated gradients");
    case interp::AttributionMethod::Occlusion: return tr("Occlusion");
    }
    return "";
}

// Encoder–decoder: every generated token's attribution to the source beside the cross-attention of the same pairs.
std::vector<plot::Figure> translation_attribution_figures(const InterpResult& r) {
    const interp::Seq2SeqAttribution& a = *r.inputs_seq2seq;
    std::vector<plot::Figure> out;
    // Each row's ρ beside its token: which rows agree with attention is the figure's point.
    std::vector<std::string> rows = r.output_labels;
    for (size_t t = 0; t < rows.size() && t < r.rank_corr.size(); ++t)
        rows[t] += std::isnan(r.rank_corr[t]) ? std::string("  ρ –") : "  " + trf("ρ %.2f", double(r.rank_corr[t]));
    plot::Figure f = matrix_figure(a.source, rows, r.source_labels, tr("generated token"), tr("source token"),
                                   tr("attribution"), "nats", false);
    f.title = trf("%s: how each source token moves log p(generated token)", method_title(a.method).c_str());
    f.view = "input-attribution";
    double corr = 0;
    int n = 0;
    for (float v : r.rank_corr)
        if (!std::isnan(v)) {
            corr += v;
            ++n;
        }
    std::string note = n ? trf("ρ(|attribution|, attention): mean %.2f over %d rows", corr / n, n)
                         : std::string(tr("ρ undefined (constant rows)"));
    if (a.method == interp::AttributionMethod::IntegratedGradients) {
        float worst = 0;
        for (float g : a.completeness_gap) worst = std::max(worst, std::abs(g));
        note += " · " + trf("largest completeness gap %.3g nats", worst);
    }
    f.note = note;
    f.formula =
        tr("Each row explains one generated token; its source-token scores sit beside the cross-attention of "
           "the same row. Where attention and attribution rank the source tokens alike, ρ is near 1 "
           "(Jain & Wallace 2019; Wiegreffe & Pinter 2019).");
    out.push_back(std::move(f));
    plot::Figure g = matrix_figure(r.cross_attn_mean, r.output_labels, r.source_labels, tr("generated token"),
                                   tr("source token"), tr("share of attention"), "", true);
    g.title = tr("Cross-attention, mean over decoder layers and heads");
    g.view = "input-attribution";
    g.note = trf("mean of %d decoder layers × %d heads", r.cross_attn_layers, r.cross_attn_heads);
    out.push_back(std::move(g));
    return out;
}

}  // namespace

std::vector<plot::Figure> input_attribution_figures(const InterpResult& r) {
    if (r.inputs_seq2seq) return translation_attribution_figures(r);
    return {input_attribution_figure(r)};
}

plot::Figure input_attribution_figure(const InterpResult& r) {
    const interp::Attribution& a = *r.inputs;
    const bool contrast = a.target.contrast >= 0;
    const std::string what = contrast ? "logit(" + r.in.target_label + ") − logit(" + r.in.minus_label + ")"
                                      : "log p(" + r.in.target_label + ")";
    const char* unit = contrast ? "logit" : "nats";
    const int q = a.target.position;
    const std::string at =
        q >= 0 && q < int(r.in.labels.size()) ? quoted_token(r.in.labels[size_t(q)]) : std::string("?");
    plot::Figure f;
    f.view = "input-attribution";
    switch (a.method) {
    case interp::AttributionMethod::GradientTimesInput:
        f.title = trf("Gradient × input: how each input token moves %s after token %d %s", what.c_str(), q, at.c_str());
        f.formula =
            tr("score_i = Σ_d (x − b)_id · ∂f/∂x_id over token i's embedding x_i and the baseline b: the first-order "
               "share of each token (Shrikumar et al. 2016; Captum InputXGradient).");
        break;
    case interp::AttributionMethod::IntegratedGradients:
        f.title =
            trf("Integrated gradients: how each input token moves %s after token %d %s", what.c_str(), q, at.c_str());
        f.formula =
            trf("score_i = Σ_d (x − b)_id · mean of ∂f/∂x_id along the straight path from the baseline b to x "
                "(%d midpoint steps; Sundararajan et al. 2017). The scores sum to f(x) − f(b) up to the "
                "completeness gap.",
                r.inputs_options.steps);
        break;
    case interp::AttributionMethod::Occlusion:
        f.title = trf("Occlusion: how much %s after token %d %s drops when each input token is hidden", what.c_str(), q,
                      at.c_str());
        f.formula =
            trf("score_i = f(x) − f(x with token i's embedding replaced by the baseline b, positions kept), "
                "averaged over the %d-token windows that hide it (Zeiler & Fergus 2014; Captum Occlusion).",
                r.inputs_options.span);
        break;
    }
    std::string note = trf("f(x) = %.3f %s", a.value, unit) + " · " +
        (r.inputs_options.baseline == interp::AttributionBaseline::Zero ? tr("b = zero embeddings")
                                                                        : tr("b = mean token embedding"));
    if (a.method != interp::AttributionMethod::Occlusion) note += " · " + trf("f(b) = %.3f", a.baseline_value);
    if (a.method == interp::AttributionMethod::IntegratedGradients) {
        const float span = std::abs(a.value - a.baseline_value);
        note += " · " +
            trf("completeness gap %.3g (%.1f %% of f(x) − f(b))", a.completeness_gap,
                span > 0 ? 100.0f * std::abs(a.completeness_gap) / span : 0.0f);
    }
    if (!r.inputs_note.empty()) note += std::string(" · ") + tr(r.inputs_note.c_str());
    f.note = note;
    f.x.label = tr("input token");
    f.y.label = tr("attribution");
    f.y.unit = unit;
    plot::Series up, down;
    up.kind = down.kind = plot::SeriesKind::Bars;
    up.color = plot::palette(0);
    down.color = plot::palette(3);
    up.name = tr("raises f");
    down.name = tr("lowers f");
    for (size_t i = 0; i < a.scores.size(); ++i) {
        const double v = a.scores[i];
        (v >= 0 ? up : down).x.push_back(double(i));
        (v >= 0 ? up : down).y.push_back(v);
        f.x.categories.push_back(i < r.in.labels.size() ? r.in.labels[i] : std::to_string(i));
    }
    f.series.push_back(std::move(up));
    f.series.push_back(std::move(down));
    f.legend = true;
    return f;
}

}  // namespace ts::figures
