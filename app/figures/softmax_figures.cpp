// Softmax lab figures: a query row of scaled scores (or typed logits) with a mask, its softmax at a temperature
// against T = 1, and the entropy against temperature.
#include "app/i18n/tr.h"
#include "app/plot/ticks.h"
#include "app/figures/figures.h"
#include "core/kernels/attention_rows.h"
#include "app/figures/views.h"
#include "core/kernels/ops.h"
#include "core/util/json.h"
#include "core/util/number.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

namespace ts::figures {

namespace {
constexpr size_t kMaxTypedLogits = 1024;  // a (n, n) mask figure of 1024 keys is 4 MB; 20,000 was 3.2 GB
}  // namespace

std::vector<float> parse_logits(const std::string& s, std::string* error) {
    std::vector<float> out;
    std::string tok;
    std::stringstream ss(s);
    while (std::getline(ss, tok, ',')) {
        const size_t a = tok.find_first_not_of(" \t"), b = tok.find_last_not_of(" \t");
        if (a == std::string::npos) continue;
        tok = tok.substr(a, b - a + 1);
        if (out.size() == kMaxTypedLogits) {
            *error = "at most " + std::to_string(kMaxTypedLogits) + " logits (the figures draw one column each)";
            return {};
        }
        const std::optional<double> v = parse_real(tok);
        if (!v) {
            // A number too large for a double (1e999) is a number that overflows, not "not a number".
            const bool overflows = tok.find_first_not_of("+-.0123456789eE") == std::string::npos &&
                                   tok.find_first_of("0123456789") != std::string::npos;
            *error = quote_value(tok) + (overflows ? " overflows (beyond ±1.8e308)" : " is not a number");
            return {};
        }
        if (std::abs(*v) > double(std::numeric_limits<float>::max())) {
            *error = quote_value(tok) + " overflows float32 (largest ±3.4e38)";
            return {};
        }
        out.push_back(float(*v));
    }
    if (out.empty()) *error = "type numbers separated by commas, e.g. 2, 1, 0.1";
    return out;
}

namespace {
plot::Series bars(const std::vector<double>& y, plot::Rgba c, const std::string& name) {
    plot::Series s;
    s.kind = plot::SeriesKind::Bars;
    s.name = name;
    s.color = c;
    for (size_t i = 0; i < y.size(); ++i) {
        s.x.push_back(double(i));
        s.y.push_back(y[i]);
    }
    s.bar_width = 0.7;
    return s;
}
}  // namespace

SoftmaxLab softmax_lab(const UiState& st, const Snapshot* snap) {
    SoftmaxLab lab;
    const bool have_model_row = snap && snap->trace;
    lab.typed = st.sm_use_typed || !have_model_row;
    const Model* m = snap && snap->model ? snap->model.get() : nullptr;
    const int layer = clamp_layer(st, m), head = clamp_head(st, m);
    if (lab.typed) {
        lab.logits = parse_logits(st.sm_typed_logits, &lab.error);
        for (size_t i = 0; i < lab.logits.size(); ++i) lab.labels.push_back(std::to_string(i));
        lab.source = tr("typed logits");
    } else {
        const std::vector<std::string> all = snapshot_token_labels(*snap);
        const int q = resolve_query(st, int(all.size()));
        int rows = 0, cols = 0;
        // Row q alone: with attention on demand no other row (nor head) is computed.
        std::vector<float> scaled;
        if (q >= 0)
            scaled = trace_head_rows(*snap->trace, snap->stack() + "." + std::to_string(layer) + ".attn.scores_scaled",
                                     head, &rows, &cols, q, q + 1);
        if (rows == 1) {
            lab.logits = std::move(scaled);
            lab.labels = all;
            lab.labels.resize(size_t(cols));
        }
        lab.source = trf("layer %d, head %d, query %d", layer, head, q) +
                     (q < int(all.size()) ? " '" + all[size_t(q)] + "'" : "");
        lab.qpos = q;
    }
    if (!lab.error.empty()) return lab;
    if (lab.logits.empty()) {
        lab.error = tr("no scores recorded yet");
        return lab;
    }
    const int S = int(lab.logits.size());
    if (lab.typed) lab.qpos = S - 1;

    const bool custom = st.sm_mask == MaskChoice::Custom;
    // The rows come from core's mask_table over the spec the model would run (forward_spec.h mask_spec_for): typed logits
    // and decoder rows get the causal base of "padding", an encoder's rows none.
    const bool causal_model = lab.typed || !m || m->config().arch != Arch::EncoderOnly;
    const std::vector<uint8_t> table = mask_table(
        mask_spec_for(st.sm_mask, st.sm_window, st.sm_padding, st.sm_paint, st.sm_paint_n, S, causal_model), S, S);
    auto mask_row = [&](int q) {
        return std::vector<uint8_t>(table.begin() + ptrdiff_t(size_t(q) * size_t(S)),
                                    table.begin() + ptrdiff_t(size_t(q + 1) * size_t(S)));
    };
    lab.mask = mask_row(std::clamp(lab.qpos, 0, S - 1));
    MatrixRM row(1, S);
    for (int s = 0; s < S; ++s) row(0, s) = lab.mask[size_t(s)] ? lab.logits[size_t(s)] : -INFINITY;
    const MatrixRM p = softmax_rows(row, st.sm_temperature);
    const MatrixRM p1 = softmax_rows(row, 1.0f);
    lab.probs.assign(p.data(), p.data() + S);
    lab.probs_t1.assign(p1.data(), p1.data() + S);
    lab.entropy = entropy_nats(std::span<const float>(p.data(), size_t(S)));
    for (int s = 0; s < S; ++s) {
        if (p(0, s) > lab.pmax) { lab.pmax = p(0, s); lab.amax = s; }
        lab.n_visible += lab.mask[size_t(s)];
    }

    const bool show_cats = S <= 40;
    std::vector<double> lv(static_cast<size_t>(S)), pv(static_cast<size_t>(S)), p1v(static_cast<size_t>(S));
    for (int s = 0; s < S; ++s) {
        lv[size_t(s)] = lab.mask[size_t(s)] ? lab.logits[size_t(s)] : NAN;
        pv[size_t(s)] = p(0, s);
        p1v[size_t(s)] = p1(0, s);
    }
    plot::Figure fl;
    fl.title = tr("Scores (logits) z_s");
    fl.view = "softmax-scores";
    fl.formula = lab.typed ? tr("z: the typed logits") : tr("z_s = q·k_s / √d_head for the selected query (before mask and softmax)");
    fl.x.label = tr("key");
    fl.y.label = tr("score z");
    if (show_cats) fl.x.categories = lab.labels;
    fl.series.push_back(bars(lv, plot::palette(0), ""));
    fl.series.back().point_labels = lab.labels;
    bool any_masked = false;
    for (int s = 0; s < S; ++s)
        if (!lab.mask[size_t(s)]) {
            fl.annotations.push_back({double(s) - 0.3, 0.0, "×", plot::Rgba{0.9f, 0.3f, 0.3f, 1}});
            any_masked = true;
        }
    fl.note = (any_masked ? tr("× = masked key (−∞ before softmax); ") : "") + lab.source;
    lab.figures.push_back(std::move(fl));

    plot::Figure fp;
    fp.title = tr("softmax(z / T), T = ") + plot::format_value(st.sm_temperature);
    fp.formula = tr("p_s = exp((z_s − max z) / T) / Σ_j exp((z_j − max z) / T) over visible keys; masked keys get 0. "
                 "T < 1 sharpens, T > 1 flattens; dots: T = 1.");
    fp.x.label = tr("key");
    fp.y.label = tr("probability");
    fp.view = "softmax";
    fp.y.min = 0;
    double ptop = 0;
    for (int s = 0; s < S; ++s) ptop = std::max({ptop, pv[size_t(s)], p1v[size_t(s)]});
    fp.y.max = std::min(1.05, std::max(0.02, ptop * 1.15));
    if (show_cats) fp.x.categories = lab.labels;
    fp.series.push_back(bars(pv, plot::palette(2), "T = " + plot::format_value(st.sm_temperature)));
    fp.series.back().point_labels = lab.labels;
    plot::Series d;
    d.kind = plot::SeriesKind::Scatter;
    d.name = tr("T = 1 (reference)");  // the bars are "T = 1" too when the slider sits at 1
    d.color = plot::palette(1);
    for (int s = 0; s < S; ++s) {
        d.x.push_back(s);
        d.y.push_back(p1v[size_t(s)]);
    }
    fp.series.push_back(d);
    char note[160];
    std::snprintf(note, sizeof note, tr("entropy H = %.4f nats, max probability %.4f at key %d"), lab.entropy, lab.pmax, lab.amax);
    fp.note = note;
    lab.figures.push_back(std::move(fp));

    plot::Figure fe;
    fe.title = tr("Entropy against temperature");
    fe.view = "softmax-entropy";
    fe.formula = tr("H(T) = −Σ p_s ln p_s with p = softmax(z / T): 0 for one-hot (T → 0), ln(#visible) for uniform (T → ∞)");
    fe.x.label = tr("temperature T");
    fe.x.log = true;
    fe.y.label = tr("entropy H");
    fe.y.unit = tr("nats");
    // H(T) rises from the bottom left to ln(#visible) at the top right: the bottom right stays empty, and the top
    // left holds the ln(#visible) label.
    fe.legend_location = plot::LegendLocation::SouthEast;
    plot::Series ce;
    ce.name = tr("H(T)");
    ce.color = plot::palette(4);
    for (int i = 0; i <= 80; ++i) {
        const float t = 0.05f * std::pow(200.0f, float(i) / 80.0f);
        const MatrixRM pt = softmax_rows(row, t);
        ce.x.push_back(t);
        ce.y.push_back(entropy_nats(std::span<const float>(pt.data(), size_t(S))));
    }
    fe.series.push_back(ce);
    plot::Series cur;
    cur.kind = plot::SeriesKind::Scatter;
    cur.name = tr("current T");
    cur.color = plot::Rgba{0.9f, 0.3f, 0.3f, 1};
    cur.marker = 6;
    cur.x = {st.sm_temperature};
    cur.y = {lab.entropy};
    fe.series.push_back(cur);
    if (lab.n_visible > 0)
        fe.ref_lines.push_back({false, std::log(double(lab.n_visible)), "ln(#visible)", plot::Rgba{0.5f, 0.5f, 0.5f, 1}});
    lab.figures.push_back(std::move(fe));

    // The mask of every query row.
    plot::Figure fm;
    fm.title = custom ? tr("Mask: custom (click / drag cells to paint)") : trf("Mask: %s (grey = masked)", tr(name_of(st.sm_mask)));
    fm.view = "softmax-mask";
    fm.formula = tr("Row q: which keys query q may attend (1 = visible, grey = −∞ before softmax). A row with no visible "
                 "key gets all-zero weights.");
    fm.x.label = tr("key");
    fm.y.label = tr("query");
    std::vector<float> mv(size_t(S) * size_t(S));
    for (int q = 0; q < S; ++q) {
        const std::vector<uint8_t> r = mask_row(q);
        for (int k = 0; k < S; ++k) mv[size_t(q) * size_t(S) + size_t(k)] = r[size_t(k)] ? 1.0f : NAN;
    }
    fm.heatmap = plot::make_heatmap(S, S, mv, plot::Colormap::Viridis, tr("visible"));
    fm.heatmap->vmin = 0.0f;
    fm.heatmap->vmax = 1.8f;  // visible cells in a calm teal (viridis ≈ 0.55), masked ones grey
    fm.colorbar = false;
    fm.heatmap->row_name = tr("query");
    fm.heatmap->col_name = tr("key");
    fm.heatmap->annotate = false;
    if (show_cats) {
        fm.x.categories = lab.labels;
        fm.y.categories = lab.labels;
    }
    lab.mask_figure = std::move(fm);
    return lab;
}

}  // namespace ts::figures
