// Prediction figures: the next-token distribution under temperature / top-k / top-p against plain softmax, and
// the logit lens (argmax token after each layer at each position).
#include "app/i18n/tr.h"
#include "app/plot/ticks.h"
#include "app/figures/figures.h"

#include <algorithm>
#include <numeric>

namespace ts::ui {

plot::Figure next_token_figure(const Snapshot& s, const UiState& st, int q) {
    plot::Figure f;
    const int T = int(s.logits.rows()), V = int(s.logits.cols());
    if (T == 0 || V == 0) return f;
    q = std::clamp(q, 0, T - 1);
    const auto labels = snapshot_token_labels(s);
    auto id_label = [&](int id) { return s.codec ? s.codec->label(id) : std::to_string(id); };
    const auto row = s.logits.row(q);
    const std::vector<float> raw = sampling_distribution(row.data(), V, {1.0f, 0, 1.0f});
    const std::vector<float> p = sampling_distribution(row.data(), V, {st.sample_temperature, st.top_k, st.top_p});
    std::vector<int> order(static_cast<size_t>(V));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return row[a] > row[b]; });
    const int K = std::min(V, 20);
    int kept = 0;
    for (float v : p) kept += v > 0 ? 1 : 0;

    f.title = trf("Next token after position %d '%s'", q, q < int(labels.size()) ? labels[size_t(q)].c_str() : "");
    f.formula = tr("p = softmax(logits / T), then keep the k most likely (top-k) and the smallest set whose mass reaches p "
                "(top-p), renormalized. Bars: sampling distribution; dots: plain softmax (T = 1, no filtering).");
    f.x.label = tr("candidate token (top 20 by logit)");
    f.view = "predictions";
    f.y.label = tr("probability");
    f.y.min = 0;
    plot::Series b, d;
    b.kind = plot::SeriesKind::Bars;
    b.name = trf("sampled from (%d tokens kept)", int(kept));
    b.color = plot::palette(2);
    d.kind = plot::SeriesKind::Scatter;
    d.name = tr("softmax, T = 1");
    d.color = plot::palette(1);
    for (int i = 0; i < K; ++i) {
        const int id = order[size_t(i)];
        f.x.categories.push_back(id_label(id));
        b.x.push_back(i);
        b.y.push_back(p[size_t(id)]);
        d.x.push_back(i);
        d.y.push_back(raw[size_t(id)]);
        b.point_labels.push_back("id " + std::to_string(id) + " '" + id_label(id) + "', logit " + plot::format_value(row[id]));
        d.point_labels.push_back(b.point_labels.back());
    }
    f.series = {b, d};
    f.note = trf("temperature %s, top-k %s, top-p %s", plot::format_value(st.sample_temperature).c_str(),
                 st.top_k > 0 ? std::to_string(st.top_k).c_str() : tr("off"), plot::format_value(st.top_p).c_str());
    return f;
}

std::optional<plot::Figure> logit_lens_figure(const Snapshot& s) {
    if (s.lens_argmax.empty() || !s.tokens) return std::nullopt;
    const int T = int(s.tokens->ids.size());
    const int L = int(s.lens_argmax.size());
    const int cols = std::min(T, 48);
    const int first = T - cols;
    if (cols <= 0) return std::nullopt;
    const auto labels = snapshot_token_labels(s);
    auto id_label = [&](int id) { return s.codec ? s.codec->label(id) : std::to_string(id); };
    plot::Figure fl;
    fl.title = tr("Logit lens: most likely next token after each layer");
    fl.formula = tr("For layer ℓ and position t: argmax softmax(final_norm(resid_ffn[ℓ, t]) · W_headᵀ) — what the model "
                 "would predict if it stopped after layer ℓ. Color: that token's probability.");
    plot::Heatmap h;
    h.rows = L;
    h.cols = cols;
    h.cmap = plot::Colormap::Viridis;
    h.vmin = 0;
    h.vmax = 1;
    h.value_label = tr("probability");
    h.row_name = tr("after layer");
    h.col_name = tr("position");
    for (int l = 0; l < L; ++l)
        for (int t = first; t < T; ++t) {
            h.values.push_back(s.lens_prob[size_t(l)][size_t(t)]);
            h.cell_text.push_back(id_label(s.lens_argmax[size_t(l)][size_t(t)]));
        }
    fl.heatmap = h;
    for (int l = 0; l < L; ++l) fl.y.categories.push_back(std::string(1, 'L').append(std::to_string(l)));  // not "L" + s: GCC 12 -Wrestrict false positive
    for (int t = first; t < T; ++t) fl.x.categories.push_back(labels[size_t(t)]);
    fl.x.label = tr("input token (position)");
    fl.view = "logit-lens";
    fl.y.label = tr("layer");
    if (first > 0) fl.note = tr("showing the last 48 positions");
    return fl;
}

}  // namespace ts::ui
