// Training figures (the Training panel): the warm-up learning-rate schedule of the original Transformer, inverted
// dropout on one of the model's own residual vectors, weight decay on one weight over many steps, and label
// smoothing's target and loss. Formula-driven except the dropout figure, which reads the Snapshot.
#include "app/figures/figures.h"
#include "app/i18n/tr.h"
#include "app/plot/colormap.h"
#include "app/plot/ticks.h"
#include "core/kernels/ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>

namespace ts::figures {

double noam_lr(double step, double d_model, double warmup) {
    if (!(step >= 1) || !(d_model > 0)) throw std::invalid_argument("noam_lr: step ≥ 1 and d_model > 0");
    const double ramp = warmup > 0 ? step * std::pow(warmup, -1.5) : INFINITY;
    return std::pow(d_model, -0.5) * std::min(std::pow(step, -0.5), ramp);
}

double weight_after_decay(double w, double lr, double lambda, double grad, int steps) {
    for (int i = 0; i < steps; ++i) w -= lr * (grad + lambda * w);
    return w;
}

double smoothed_cross_entropy(std::span<const float> logits, int target, double eps) {
    if (logits.empty() || target < 0 || size_t(target) >= logits.size())
        throw std::invalid_argument("smoothed_cross_entropy: target outside the logits");
    if (!(eps >= 0 && eps <= 1)) throw std::invalid_argument("smoothed_cross_entropy: eps must be in [0, 1]");
    const MatrixRM row = Eigen::Map<const MatrixRM>(logits.data(), 1, Eigen::Index(logits.size()));
    const int t[1] = {target};
    return double(cross_entropy(row, t, float(eps)));  // the trainer's loss (checked against torch in ops_golden_test)
}

std::vector<uint8_t> dropout_mask(size_t n, double p, uint64_t seed) {
    std::mt19937_64 gen(seed);
    std::vector<uint8_t> keep(n);
    for (auto& k : keep) k = double(gen() >> 11) * 0x1.0p-53 >= p ? 1 : 0;  // uniform in [0, 1): drop below p
    return keep;
}

plot::Figure lr_schedule_figure(const UiState& st) {
    const double d = st.train_d_model, w = st.train_warmup;
    plot::Figure f;
    f.view = "lr-schedule";
    f.title = trf("Warm-up schedule, d_model = %d", st.train_d_model);
    f.legend_location = plot::LegendLocation::SouthEast;
    f.formula = "lr = d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)   (Vaswani et al. 2017, eq. 3)";
    f.x.label = tr("training step");
    f.x.log = true;
    f.y.label = tr("learning rate");
    f.y.log = true;
    const double last = std::max(100000.0, 25.0 * w);
    plot::Series with, without;
    with.name = trf("warm-up over %d steps", st.train_warmup);
    with.color = plot::palette(0);
    without.name = tr("no warm-up: step^-0.5 from the first step");
    without.color = plot::palette(1);
    without.dashed = true;
    for (int i = 0; i <= 200; ++i) {
        const double s = std::pow(last, i / 200.0);
        with.x.push_back(s);
        with.y.push_back(noam_lr(s, d, w));
        without.x.push_back(s);
        without.y.push_back(noam_lr(s, d, 0));
    }
    f.series.push_back(std::move(without));
    if (w >= 1) f.series.push_back(std::move(with));  // warm-up 0: the schedule is the dashed curve itself
    if (w >= 1) {
        f.ref_lines.push_back({true, w, tr("peak"), plot::Rgba{0.9f, 0.3f, 0.3f, 1}});
        f.note = trf("peak learning rate %s at step %d; the same schedule without warm-up starts %s times higher",
                     plot::format_value(noam_lr(w, d, w)).c_str(), st.train_warmup,
                     plot::format_value(noam_lr(1, d, 0) / noam_lr(1, d, w)).c_str());
    }
    return f;
}

std::vector<plot::Figure> dropout_figures(const UiState& st, const Snapshot& s) {
    const int L = s.n_layers();
    if (L <= 0 || !s.tokens) throw std::runtime_error(tr("waiting for the model's forward pass"));
    const int layer = std::clamp(st.layer, 0, L - 1);
    const Tensor* t = s.find(s.stack() + "." + std::to_string(layer) + ".resid_ffn");
    if (!t || t->data.empty()) throw std::runtime_error(tr("the residual stream was not recorded"));
    const MatrixRM x = t->mat();
    const int q = resolve_query(st, int(x.rows()));
    const int n = int(std::min<Eigen::Index>(x.cols(), 48));  // the first features: bars a class can read
    const double p = st.train_dropout;
    const std::vector<uint8_t> keep = dropout_mask(size_t(n), p, uint64_t(st.train_seed));
    const std::vector<std::string> labels = snapshot_token_labels(s);
    const std::string tok = q < int(labels.size()) ? labels[size_t(q)] : "";

    plot::Figure f;
    f.view = "dropout";
    f.title = trf("Dropout on one token's features, p = %s", plot::format_value(p).c_str());
    f.formula = "training: y = m ⊙ x / (1 − p),  m_k ~ Bernoulli(1 − p);   inference: y = x";
    f.x.label = tr("feature");
    f.y.label = tr("activation value");
    plot::Series before, after;
    before.kind = after.kind = plot::SeriesKind::Bars;
    before.name = tr("x (inference: unchanged)");
    after.name = tr("y in training (dropped: 0, kept: x / (1 − p))");
    before.color = plot::palette(0);
    after.color = plot::palette(1);
    before.bar_width = after.bar_width = 0.4;
    int kept = 0;
    for (int k = 0; k < n; ++k) {
        const double v = x(q, k);
        const double y = keep[size_t(k)] ? v / (1 - p) : 0.0;
        kept += keep[size_t(k)];
        before.x.push_back(k - 0.2);
        before.y.push_back(v);
        after.x.push_back(k + 0.2);
        after.y.push_back(y);
    }
    f.series.push_back(std::move(before));
    f.series.push_back(std::move(after));
    f.note = trf("token '%s' after layer %d, its first %d of %d features: kept %d (expected %s); mask seed %d", tok.c_str(),
                 layer, n, int(x.cols()), kept, plot::format_value(n * (1 - p)).c_str(), st.train_seed);

    // The expectation: the mean of many masks gives x back, feature by feature.
    plot::Figure g;
    g.view = "dropout";
    g.title = trf("Mean of %d masks", 1000);
    g.legend_location = plot::LegendLocation::NorthWest;
    g.formula = "E[y_k] = (1 − p) · x_k / (1 − p) = x_k";
    g.x.label = tr("x (the activation without dropout)");
    g.y.label = tr("mean of y");
    plot::Series pts, diag;
    pts.kind = plot::SeriesKind::Scatter;
    pts.name = tr("features of this token");
    pts.color = plot::palette(1);
    // At most 256 features: 1000 masks × d_model draws run every frame the tab is shown (GPT-2: d_model 768).
    const Eigen::Index nm = std::min<Eigen::Index>(x.cols(), 256);
    std::vector<double> mean(size_t(nm), 0.0);
    for (int m = 0; m < 1000; ++m) {
        const std::vector<uint8_t> km = dropout_mask(size_t(nm), p, uint64_t(st.train_seed) * 1000003u + uint64_t(m) + 1);
        for (Eigen::Index k = 0; k < nm; ++k) mean[size_t(k)] += km[size_t(k)] ? x(q, k) / (1 - p) : 0.0;
    }
    double lo = 0, hi = 0, worst = 0;
    for (Eigen::Index k = 0; k < nm; ++k) {
        mean[size_t(k)] /= 1000;
        pts.x.push_back(x(q, k));
        pts.y.push_back(mean[size_t(k)]);
        lo = std::min(lo, double(x(q, k)));
        hi = std::max(hi, double(x(q, k)));
        worst = std::max(worst, std::fabs(mean[size_t(k)] - x(q, k)));
    }
    diag.name = "y = x";
    diag.color = plot::Rgba{0.5f, 0.5f, 0.5f, 1};
    diag.dashed = true;
    diag.x = {lo, hi};
    diag.y = {lo, hi};
    g.series.push_back(std::move(diag));
    g.series.push_back(std::move(pts));
    g.note = trf("%d features; largest |mean − x| = %s (shrinks like 1/√masks)", int(nm),
                 plot::format_value(worst).c_str());
    return {std::move(f), std::move(g)};
}

plot::Figure weight_decay_figure(const UiState& st) {
    const double lr = st.train_lr, lam = st.train_weight_decay, g = st.train_grad;
    const double rate = lr * lam;
    const int steps = rate > 0 ? int(std::clamp(std::ceil(5.0 / rate), 10.0, 100000.0)) : 1000;
    plot::Figure f;
    f.view = "weight-decay";
    f.title = trf("Weight decay, η = %s, λ = %s", plot::format_value(lr).c_str(), plot::format_value(lam).c_str());
    f.formula = "w ← w − η (∂L/∂w + λ w);   gradient 0: w_n = w_0 (1 − ηλ)^n;   constant gradient g: w → −g / λ";
    f.x.label = tr("step");
    f.y.label = tr("weight w");
    plot::Series none, decay, pulled;
    none.name = tr("no decay, gradient 0 (stays)");
    none.color = plot::Rgba{0.5f, 0.5f, 0.5f, 1};
    none.dashed = true;
    decay.name = tr("decay, gradient 0: shrinks towards 0");
    decay.color = plot::palette(0);
    pulled.name = trf("decay, constant gradient %s: settles at −g/λ", plot::format_value(g).c_str());
    pulled.color = plot::palette(1);
    double w0 = 1.0, w1 = 1.0;
    const int every = std::max(1, steps / 400);
    for (int n = 0; n <= steps; ++n) {
        if (n % every == 0 || n == steps) {
            none.x.push_back(n);
            none.y.push_back(1.0);
            decay.x.push_back(n);
            decay.y.push_back(w0);
            pulled.x.push_back(n);
            pulled.y.push_back(w1);
        }
        w0 -= lr * (lam * w0);
        w1 -= lr * (g + lam * w1);
    }
    f.series.push_back(std::move(none));
    f.series.push_back(std::move(decay));
    if (g != 0) f.series.push_back(std::move(pulled));
    if (rate > 0) {
        f.ref_lines.push_back({true, 1.0 / rate, "n = 1/(ηλ)", plot::Rgba{0.9f, 0.3f, 0.3f, 1}});
        f.note = trf("after 1/(ηλ) = %s steps a weight the loss ignores keeps %s of its value (≈ 1/e)",
                     plot::format_value(1.0 / rate).c_str(),
                     plot::format_value(std::pow(1.0 - rate, std::round(1.0 / rate))).c_str());  // closed form: 1/rate may be 1e15
        if (g != 0) f.ref_lines.push_back({false, -g / lam, "−g/λ", plot::Rgba{0.3f, 0.6f, 0.3f, 1}});
    }
    return f;
}

std::vector<plot::Figure> label_smoothing_figures(const UiState& st) {
    const double eps = st.train_label_smoothing;
    constexpr int V = 10;  // a toy vocabulary a class can read; the real one has thousands of entries
    plot::Figure t;
    t.view = "label-smoothing";
    t.title = trf("Target, ε = %s", plot::format_value(eps).c_str());
    t.legend_location = plot::LegendLocation::NorthEast;
    t.formula = "q_j = (1 − ε) · [j = y] + ε / V";
    t.x.label = tr("token id (a 10-token vocabulary)");
    t.y.label = tr("target probability");
    t.y.min = 0;
    t.y.max = 1.4;  // room for the legend above the bars
    plot::Series hard, soft;
    hard.kind = soft.kind = plot::SeriesKind::Bars;
    hard.name = tr("one-hot (ε = 0)");
    soft.name = trf("smoothed (ε = %s)", plot::format_value(eps).c_str());
    hard.color = plot::Rgba{0.6f, 0.6f, 0.6f, 1};
    soft.color = plot::palette(0);
    hard.bar_width = soft.bar_width = 0.4;
    for (int j = 0; j < V; ++j) {
        hard.x.push_back(j - 0.2);
        hard.y.push_back(j == 3 ? 1.0 : 0.0);
        soft.x.push_back(j + 0.2);
        soft.y.push_back((j == 3 ? 1 - eps : 0.0) + eps / V);
    }
    t.series.push_back(std::move(hard));
    t.series.push_back(std::move(soft));
    t.note = trf("correct token: %s, every other: %s", plot::format_value(1 - eps + eps / V).c_str(),
                 plot::format_value(eps / V).c_str());

    // The loss when the model gives the correct token probability p and spreads 1 − p evenly over the rest.
    plot::Figure l;
    l.view = "label-smoothing";
    l.title = trf("Loss against p(correct), %d tokens", V);
    l.legend_location = plot::LegendLocation::SouthWest;
    l.formula = "L = (1 − ε) · (−log p_y) + ε · mean_j(−log p_j)   (PyTorch CrossEntropyLoss(label_smoothing = ε))";
    l.x.label = tr("probability of the correct token p_y");
    l.y.label = tr("loss");
    l.y.unit = tr("nats");
    plot::Series ce, ls;
    ce.name = tr("cross-entropy (ε = 0)");
    ce.color = plot::Rgba{0.6f, 0.6f, 0.6f, 1};
    ce.dashed = true;
    ls.name = trf("with label smoothing ε = %s", plot::format_value(eps).c_str());
    ls.color = plot::palette(0);
    double best_p = 0, best_l = INFINITY;
    for (int i = 1; i <= 400; ++i) {
        const double py = 0.05 + 0.95 * i / 400.0 - 1e-6 * (i == 400);  // up to just below 1 (the rest > 0)
        std::vector<float> logits(V, float(std::log((1 - py) / (V - 1))));
        logits[3] = float(std::log(py));
        ce.x.push_back(py);
        ce.y.push_back(smoothed_cross_entropy(logits, 3, 0));
        const double v = smoothed_cross_entropy(logits, 3, eps);
        ls.x.push_back(py);
        ls.y.push_back(v);
        if (v < best_l) { best_l = v; best_p = py; }
    }
    l.series.push_back(std::move(ce));
    l.series.push_back(std::move(ls));
    if (eps > 0) {
        l.ref_lines.push_back({true, 1 - eps + eps / V, "1−ε+ε/V",
                               plot::Rgba{0.9f, 0.3f, 0.3f, 1}});
        l.note = trf("with smoothing the loss is smallest at p_y ≈ %s, not at 1: the model is not pushed to certainty",
                     plot::format_value(best_p).c_str());
    }
    return {std::move(t), std::move(l)};
}

}  // namespace ts::figures
