// Prediction figures: the next-token distribution under temperature / top-k / top-p against plain softmax, the
// fill-mask candidates of a masked-LM head (BERT), and the logit lens (argmax token after each layer at each position).
#include "app/plot/ticks.h"
#include "app/figures/figures.h"
#include "app/i18n/tr.h"
#include "core/kernels/ops.h"
#include "core/tokenizer/bpe.h"

#include <algorithm>
#include <numeric>

namespace ts::figures {

plot::Figure next_token_figure(const Snapshot& s, const UiState& st, int q) {
    plot::Figure f;
    const int T = s.logits_positions(), V = int(s.logits.cols());
    if (T == 0 || V == 0) return f;
    q = std::clamp(q, 0, T - 1);
    const auto labels = snapshot_token_labels(s);
    auto id_label = [&](int id) { return s.codec ? s.codec->label(id) : std::to_string(id); };
    const std::span<const float> row = s.logits_row(q);  // computed here when the forward kept the last row only
    if (row.size() != size_t(V)) return f;
    const std::vector<float> raw = sampling_distribution(row, {1.0f, 0, 1.0f});
    const std::vector<float> p = sampling_distribution(row, {st.sample_temperature, st.top_k, st.top_p});
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

int mask_token_id(const Snapshot& s) {
    const auto tok = s.codec ? s.codec->tokenizer() : nullptr;
    if (!tok) return -1;
    for (const char* m : {"[MASK]", "<mask>"})
        if (const auto id = tok->token_id(m)) return int(*id);
    return -1;
}

bool has_fill_mask(const Snapshot& s) {
    return s.model && s.model->config().mlm_head && s.tokens && s.logits.rows() == int64_t(s.tokens->ids.size()) &&
           s.logits.rows() > 0;
}

std::vector<int> mask_positions(const Snapshot& s) {
    std::vector<int> out;
    const int mask = mask_token_id(s);
    if (mask < 0 || !s.tokens) return out;
    for (size_t t = 0; t < s.tokens->ids.size(); ++t)
        if (s.tokens->ids[t] == mask) out.push_back(int(t));
    return out;
}

std::vector<plot::Figure> fill_mask_figures(const Snapshot& s, int top) {
    std::vector<plot::Figure> out;
    if (!has_fill_mask(s)) return out;
    const int V = int(s.logits.cols());
    const int K = std::clamp(top, 1, V);
    auto id_label = [&](int id) { return s.codec ? s.codec->label(id) : std::to_string(id); };
    for (const int q : mask_positions(s)) {
        const MatrixRM probs = softmax_rows(s.logits.middleRows(q, 1));
        std::vector<int> order(static_cast<size_t>(V));
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + K, order.end(),
                          [&](int a, int b) { return probs(0, a) > probs(0, b); });
        plot::Figure f;
        f.title = ts::trf("Fill-mask: candidates for the mask at position %d", q);
        f.formula = ts::tr("p = softmax(logits) at the mask position. The masked-LM head maps the last layer's hidden "
                           "state h through dense → activation → LayerNorm, then multiplies by the token embeddings "
                           "(tied decoder) and adds a bias: logits = LN(act(h W_dᵀ + b_d)) Eᵀ + b. Every token sees "
                           "the whole sentence (bidirectional attention), so words after the mask count too.");
        f.x.label = ts::trf("candidate token (top %d)", K);
        f.y.label = ts::tr("probability");
        f.y.min = 0;
        f.view = "fill-mask";
        f.legend = false;
        plot::Series b;
        b.kind = plot::SeriesKind::Bars;
        b.color = plot::palette(2);
        b.name = ts::tr("probability");
        double ymax = 0;
        for (int i = 0; i < K; ++i) {
            const int id = order[size_t(i)];
            const float p = probs(0, id);
            f.x.categories.push_back(id_label(id));
            b.x.push_back(i);
            b.y.push_back(p);
            b.point_labels.push_back("id " + std::to_string(id) + " '" + id_label(id) + "', p = " + plot::format_value(p) +
                                     ", logit " + plot::format_value(s.logits(q, id)));
            f.annotations.push_back({double(i), double(p), plot::format_value(100.0 * p) + "%", {}});
            ymax = std::max(ymax, double(p));
        }
        f.y.max = std::min(1.0, ymax * 1.18 + 1e-6);  // room for the percentages above the bars
        f.series = {b};
        const int best = order[0];
        f.note = ts::trf("top-1: '%s' (p = %s)", id_label(best).c_str(), plot::format_value(probs(0, best)).c_str());
        out.push_back(std::move(f));
    }
    return out;
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
    const bool mlm = s.model && s.model->config().mlm_head;
    fl.title = mlm ? tr("Logit lens: most likely token at each position after each layer (masked-LM head)")
                   : tr("Logit lens: most likely next token after each layer");
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

}  // namespace ts::figures
