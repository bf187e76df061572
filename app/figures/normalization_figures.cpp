// Normalization figures: LayerNorm / RMSNorm / BatchNorm histograms before and after, on synthetic data and on
// the model's residual stream, with mean / variance / RMS in the note.
#include "app/i18n/tr.h"
#include "app/figures/figures.h"
#include "core/kernels/ops.h"

#include <cmath>
#include <cstdio>
#include <random>

namespace ts::figures {

namespace {

struct Stats {
    double mean = 0, var = 0, rms = 0;
};
Stats stats(const MatrixRM& x) {
    Stats s;
    const double n = double(x.size());
    if (n == 0) return s;
    s.mean = double(x.sum()) / n;
    s.var = double((x.array() - float(s.mean)).square().sum()) / n;
    s.rms = std::sqrt(double(x.array().square().sum()) / n);
    return s;
}

plot::Figure hist_figure(const char* title, const char* formula, const MatrixRM& before, const MatrixRM& after) {
    plot::Figure f;
    f.title = tr(title);
    f.formula = tr(formula);
    f.x.label = tr("value");
    f.view = "normalization";
    f.y.label = tr("density");
    f.y.unit = tr("1/value");
    plot::Series a = plot::histogram_series(std::span<const float>(before.data(), size_t(before.size())), 50, NAN, NAN, true);
    a.name = tr("before");
    a.color = plot::palette(0);
    a.color.a = 0.7f;
    plot::Series b = plot::histogram_series(std::span<const float>(after.data(), size_t(after.size())), 50, NAN, NAN, true);
    b.name = tr("after");
    b.color = plot::palette(1);
    b.color.a = 0.7f;
    f.series = {a, b};
    const Stats sb = stats(before), sa = stats(after);
    f.note = trf("before: mean %.3f  var %.3f  RMS %.3f\nafter:  mean %.3f  var %.3f  RMS %.3f", sb.mean, sb.var, sb.rms,
                 sa.mean, sa.var, sa.rms);
    return f;
}

}  // namespace

MatrixRM normalization_synthetic_batch(const UiState& st) {
    constexpr int N = 64, D = 128;
    MatrixRM x(N, D);
    std::mt19937 rng(5);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < D; ++j) x(i, j) = st.norm_mean + st.norm_std * nd(rng);
    x.row(0).array() += st.norm_outlier;  // one example unlike the others: BatchNorm's output for the rest moves
    return x;
}

std::vector<plot::Figure> normalization_synthetic_figures(const UiState& st) {
    const MatrixRM x = normalization_synthetic_batch(st);
    const int D = int(x.cols());
    std::vector<float> gamma(size_t(D), st.norm_gamma), beta(size_t(D), st.norm_beta);
    const MatrixRM ln = layer_norm(x, gamma, beta, st.norm_eps);
    const MatrixRM rms = rms_norm(x, gamma, st.norm_eps);
    BatchNormState bs;
    bs.running_mean = RowVectorF::Zero(D);
    bs.running_var = RowVectorF::Ones(D);
    const MatrixRM bn = batch_norm(x, gamma, beta, st.norm_eps, bs, true);
    std::vector<plot::Figure> out = {hist_figure(TS_N_("LayerNorm (per row, over features)"),
                        TS_N_("y = (x − mean_row) / √(var_row + ε) · γ + β  (torch.nn.LayerNorm); statistics over the 128 features of each row"),
                        x, ln),
            hist_figure(TS_N_("RMSNorm (per row, no centering)"),
                        TS_N_("y = x / √(mean_row(x²) + ε) · γ  (Zhang & Sennrich 2019): no mean subtraction, no β — a large mean stays"),
                        x, rms),
            hist_figure(TS_N_("BatchNorm (per feature, over the batch)"),
                        TS_N_("y = (x − mean_batch) / √(var_batch + ε) · γ + β  (torch.nn.BatchNorm1d, training mode): statistics over the 64 rows"),
                        x, bn)};
    if (st.norm_outlier != 0.0f) {
        // The batch dependence: rows 1..63 are the same data as before, yet BatchNorm maps them elsewhere.
        const int N = int(x.rows());
        for (size_t k = 0; k < 3; ++k) {
            const MatrixRM& y = k == 0 ? ln : k == 1 ? rms : bn;
            const Stats so = stats(MatrixRM(y.bottomRows(N - 1)));
            out[k].note += trf("\nthe other %d rows after: mean %.3f  var %.3f", N - 1, so.mean, so.var);
        }
    }
    return out;
}

std::vector<plot::Figure> normalization_model_figures(const UiState& st, const Snapshot& s, int layer, std::string* caption) {
    const Tensor* r = s.find(s.stack() + "." + std::to_string(layer) + ".resid_attn");
    if (!r) return {};
    const MatrixRM real = r->mat();
    std::vector<float> g2(size_t(real.cols()), st.norm_gamma), b2(size_t(real.cols()), st.norm_beta);
    if (caption) {
        *caption = trf("This model: residual stream after layer %d's attention (%lld tokens × d_model %lld), the input of its FFN norm",
                       layer, (long long)real.rows(), (long long)real.cols());
    }
    plot::Figure a = hist_figure(TS_N_("LayerNorm on the real residual stream"), TS_N_("the same LayerNorm, applied to each token's residual vector"),
                                 real, layer_norm(real, g2, b2, st.norm_eps));
    plot::Figure b = hist_figure(TS_N_("RMSNorm on the real residual stream"), TS_N_("the same RMSNorm, applied to each token's residual vector"),
                                 real, rms_norm(real, g2, st.norm_eps));
    a.title += trf(", layer %d", layer);
    a.view = b.view = "normalization-model";
    b.title += trf(", layer %d", layer);
    return {a, b};
}

}  // namespace ts::figures
