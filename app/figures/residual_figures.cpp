// Residual-stream figures: the L2 norm of the residual stream after every sub-layer (per token and averaged) and
// pre-norm against post-norm at random initialisation with 16 layers.
#include "app/i18n/tr.h"
#include "app/figures/figures.h"

#include <algorithm>
#include <cmath>

namespace ts::figures {

plot::Figure residual_norm_figure(const Snapshot& s, int q) {
    plot::Figure f;
    f.title = tr("Residual stream norm after each sub-layer");
    f.view = "residual";
    if (!s.trace || !s.tokens || s.tokens->ids.empty()) return f;
    const std::string st = s.stack();
    std::vector<std::string> names = {"embed.out"}, cats = {"embed"};
    for (int l = 0; l < s.n_layers(); ++l) {
        names.push_back(st + "." + std::to_string(l) + ".resid_attn");
        cats.push_back(std::to_string(l) + " attn");
        names.push_back(st + "." + std::to_string(l) + ".resid_ffn");
        cats.push_back(std::to_string(l) + " ffn");
    }
    const auto labels = snapshot_token_labels(s);
    const int T = int(s.tokens->ids.size());
    q = std::clamp(q, 0, T - 1);
    f.formula = tr("‖x_t‖₂ of the residual stream x after the embedding and after each attention / FFN sub-layer "
                "(x ← x + sublayer(norm(x)) in pre-norm models). Thin lines: every token; thick: mean; red: the "
                "selected query token.");
    f.x.label = tr("after sub-layer");
    f.x.categories = cats;
    f.y.label = tr("L2 norm");
    std::vector<double> mean(names.size(), 0.0);
    for (int t = 0; t < T; ++t) {
        plot::Series line;
        line.color = t == q ? plot::Rgba{0.9f, 0.3f, 0.3f, 1} : plot::Rgba{0.5f, 0.6f, 0.8f, 0.25f};
        line.width = t == q ? 2.5f : 1.0f;
        line.name = t == q ? trf("token %d '%s'", q, labels[size_t(q)].c_str()) : "";
        for (size_t k = 0; k < names.size(); ++k) {
            const Tensor* x = s.find(names[k]);
            const double n = x && t < x->rows() ? double(x->mat().row(t).norm()) : NAN;
            line.x.push_back(double(k));
            line.y.push_back(n);
            line.point_labels.push_back(trf("%s after %s", labels[size_t(t)].c_str(), cats[k].c_str()));
            if (std::isfinite(n)) mean[k] += n / T;
        }
        f.series.push_back(std::move(line));
    }
    std::rotate(f.series.begin(), f.series.begin() + q, f.series.begin() + q + 1);  // keep the red line on top
    std::rotate(f.series.begin(), f.series.begin() + 1, f.series.end());
    plot::Series m;
    m.name = tr("mean over tokens");
    m.color = plot::palette(1);
    m.width = 3.0f;
    for (size_t k = 0; k < names.size(); ++k) {
        m.x.push_back(double(k));
        m.y.push_back(mean[k]);
    }
    f.series.push_back(m);
    return f;
}

NormCurves random_init_curves() {
    NormCurves out;
    try {
        for (int v = 0; v < 2; ++v) {
            ModelConfig c;
            c.d_model = 64;
            c.n_heads = 4;
            c.n_kv_heads = 4;
            c.d_ff = 256;
            c.n_layers = 16;
            c.max_seq_len = 64;
            c.norm_placement = v == 0 ? NormPlacement::Pre : NormPlacement::Post;
            const Model m(c, init_weights(c, 99));
            std::vector<int> ids;
            for (int i = 0; i < 32; ++i) ids.push_back((i * 37 + 11) % 256);
            ForwardOptions opt;
            opt.capture = CaptureFilter::prefixes({"embed.out", "dec."});
            const ForwardResult r = forward(m, ids, opt);
            auto mean_norm = [](const Tensor* t) -> double {
                if (!t) return NAN;
                return double(t->mat().rowwise().norm().mean());
            };
            std::vector<double>& dst = v == 0 ? out.pre : out.post;
            dst.push_back(mean_norm(r.trace->find("embed.out")));
            if (v == 0) out.names.push_back("embed");
            for (int l = 0; l < c.n_layers; ++l) {
                for (const char* part : {"resid_attn", "resid_ffn"}) {
                    dst.push_back(mean_norm(r.trace->find("dec." + std::to_string(l) + "." + part)));
                    if (v == 0) out.names.push_back(std::to_string(l) + (part[6] == 'a' ? " attn" : " ffn"));
                }
            }
        }
    } catch (const std::exception& e) {
        out.error = e.what();
    }
    return out;
}

std::vector<plot::Figure> prepost_norm_figures(const NormCurves& nc) {
    std::vector<plot::Figure> out;
    // One y range for both panels, side by side: different axes would make a four-fold growth and a flat line look
    // alike. Log scale: the pre-norm stream's growth stays visible below the post-norm's √d_model.
    double top = 0, bottom = INFINITY;
    for (const auto* v : {&nc.pre, &nc.post})
        for (double y : *v)
            if (y > 0) {
                top = std::max(top, y);
                bottom = std::min(bottom, y);
            }
    for (int v = 0; v < 2; ++v) {
        plot::Figure f;
        f.title = v == 0 ? tr("Pre-norm, random init (16 layers)") : tr("Post-norm, random init (16 layers)");
        f.formula = v == 0 ? tr("x ← x + sublayer(LayerNorm(x)): the residual stream is never normalized, so its norm "
                                "grows with depth while each sub-layer sees unit-scale input")
                           : tr("x ← LayerNorm(x + sublayer(x)) (original Transformer): every sub-layer output is "
                                "re-normalized, so the norm stays at √d_model ≈ 8");
        f.x.label = tr("after sub-layer");
        f.x.categories = nc.names;
        f.y.label = tr("mean L2 norm");
        plot::Series sr;
        sr.name = v == 0 ? tr("pre-norm") : tr("post-norm");
        sr.color = plot::palette(v == 0 ? 0 : 3);
        sr.width = 2.5f;
        const auto& y = v == 0 ? nc.pre : nc.post;
        for (size_t k = 0; k < y.size(); ++k) {
            sr.x.push_back(double(k));
            sr.y.push_back(y[k]);
        }
        f.series.push_back(sr);
        f.legend = false;
        f.view = "prepost-norm";
        if (top > 0) {
            f.y.log = true;
            f.y.min = bottom / 1.3;
            f.y.max = top * 1.3;
        } else {
            f.y.min = 0;
        }
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace ts::figures
