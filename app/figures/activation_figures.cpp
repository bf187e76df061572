// Activation figures: curves and derivatives of tanh, sigmoid, ReLU, LeakyReLU, GELU, Swish and the GLU family with
// the course's example points, and a histogram of the model's real FFN pre-activations.
#include "app/i18n/tr.h"
#include "app/plot/ticks.h"
#include "app/figures/figures.h"
#include "core/kernels/ops.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ts::figures {

std::vector<ActivationDef> activation_defs(float a, float b) {
    return {
        {"tanh", "tanh(x) = (eˣ − e⁻ˣ)/(eˣ + e⁻ˣ); d/dx = 1 − tanh²(x)", [](float x) { return tanh_act(x); }, [](float x) { return tanh_grad(x); }},
        {"sigmoid", "σ(x) = 1/(1 + e⁻ˣ); d/dx = σ(x)(1 − σ(x))", [](float x) { return sigmoid(x); }, [](float x) { return sigmoid_grad(x); }},
        {"ReLU", TS_N_("max(0, x); d/dx = 1 for x > 0 else 0"), [](float x) { return relu(x); }, [](float x) { return relu_grad(x); }},
        {"LeakyReLU(α)", TS_N_("x for x > 0 else αx"), [a](float x) { return leaky_relu(x, a); }, [a](float x) { return leaky_relu_grad(x, a); }},
        {"GELU (erf)", TS_N_("x·Φ(x), Φ = standard normal CDF"), [](float x) { return gelu(x); }, [](float x) { return gelu_grad(x); }},
        {"GELU (tanh)", "0.5x(1 + tanh(√(2/π)(x + 0.044715x³)))", [](float x) { return gelu_tanh(x); }, [](float x) { return gelu_tanh_grad(x); }},
        {"Swish(β)", TS_N_("x·σ(βx); β = 1 is SiLU"), [b](float x) { return swish(x, b); }, [b](float x) { return swish_grad(x, b); }},
        {"GLU (gate = up = x)", TS_N_("σ(x)·x: the gate σ(x W_gate) times the linear branch x W_up, here both = x"),
         [](float x) { return sigmoid(x) * x; }, [](float x) { return sigmoid_grad(x) * x + sigmoid(x); }},
        {"SwiGLU (gate = up = x)", "SiLU(x)·x", [](float x) { return swish(x) * x; }, [](float x) { return swish_grad(x) * x + swish(x); }},
        {"GeGLU (gate = up = x)", "GELU(x)·x", [](float x) { return gelu(x) * x; }, [](float x) { return gelu_grad(x) * x + gelu(x); }},
    };
}

const std::vector<float>& activation_examples() {
    static const std::vector<float> x = {-2.0f, -0.5f, 0.0f, 0.5f, 2.0f};
    return x;
}

plot::Figure activation_curves(const UiState& st, bool grad) {
    const std::vector<ActivationDef> acts = activation_defs(st.act_leaky_alpha, st.act_swish_beta);
    const float R = st.act_range;
    plot::Figure f;
    f.title = grad ? tr("Derivatives f′(x)") : tr("Activation functions f(x)");
    f.view = grad ? "activations-grad" : "activations";
    f.formula = grad ? tr("f′(x): how much a small change of the input moves the output (the gradient that flows back)")
                     : tr("Each curve maps one pre-activation x to the FFN's output; dots: the course's example points "
                          "x = −2, −0.5, 0, 0.5, 2 (hover for exact values)");
    f.x.label = tr("x (pre-activation)");
    f.y.label = grad ? "f′(x)" : "f(x)";
    f.x.min = -R;
    f.x.max = R;
    for (size_t i = 0; i < acts.size(); ++i) {
        if (!st.act_shown[i]) continue;
        plot::Series s;
        s.name = acts[i].name;
        s.color = plot::palette(int(i));
        for (int k = 0; k <= 400; ++k) {
            const float x = -R + 2 * R * float(k) / 400.0f;
            s.x.push_back(x);
            s.y.push_back(grad ? acts[i].df(x) : acts[i].f(x));
        }
        f.series.push_back(std::move(s));
        plot::Series p;
        p.kind = plot::SeriesKind::Scatter;
        p.color = plot::palette(int(i));
        p.marker = 4.5f;
        for (float x : activation_examples()) {
            p.x.push_back(x);
            p.y.push_back(grad ? acts[i].df(x) : acts[i].f(x));
            p.point_labels.push_back(std::string(acts[i].name) + (grad ? "′" : "") + "(" + plot::format_value(x) + ")");
        }
        f.series.push_back(std::move(p));
    }
    if (st.act_shown[3]) f.note = "LeakyReLU α = " + plot::format_value(st.act_leaky_alpha);
    if (st.act_shown[6]) f.note += (f.note.empty() ? "" : ", ") + std::string("Swish β = ") + plot::format_value(st.act_swish_beta);
    return f;
}

bool overlay_ffn_pre_activations(plot::Figure& f, const Snapshot& s, int layer) {
    const Tensor* pre = s.find(s.stack() + "." + std::to_string(layer) + ".ffn.pre_act");
    if (!pre || pre->data.empty()) return false;
    const double lo = std::isfinite(f.x.min) ? f.x.min : -4.0, hi = std::isfinite(f.x.max) ? f.x.max : 4.0;
    double ylo = INFINITY, yhi = -INFINITY;
    for (const plot::Series& c : f.series)
        for (double y : c.y)
            if (std::isfinite(y)) { ylo = std::min(ylo, y); yhi = std::max(yhi, y); }
    if (!std::isfinite(ylo)) { ylo = 0; yhi = 1; }
    if (!(yhi > ylo)) yhi = ylo + 1;
    plot::Series h = plot::histogram_series(pre->data, 60, lo, hi, true);
    double dmax = 0;
    for (double d : h.y) dmax = std::max(dmax, d);
    if (dmax <= 0) dmax = 1;
    const double k = 0.9 * (yhi - ylo) / dmax;
    for (size_t i = 0; i < h.y.size(); ++i) {
        h.point_labels.push_back(trf("density %s at x ≈ %s", plot::format_value(h.y[i]).c_str(), plot::format_value(h.x[i]).c_str()));
        h.y[i] = ylo + h.y[i] * k;
    }
    h.bar_base = ylo;
    h.name = trf("real pre-activations (layer %d, density scaled)", layer);
    h.color = plot::Rgba{0.55f, 0.55f, 0.6f, 0.35f};
    f.series.insert(f.series.begin(), std::move(h));
    size_t outside = 0;
    for (float v : pre->data) outside += (v < lo || v > hi) ? 1 : 0;
    const std::string note = trf("grey bars: %lld real FFN pre-activations of layer %d (%.1f%% outside ±%s)",
                                 static_cast<long long>(pre->numel()), layer, 100.0 * double(outside) / double(pre->data.size()),
                                 plot::format_value(hi).c_str());
    f.note = f.note.empty() ? note : f.note + "; " + note;
    return true;
}

std::optional<plot::Figure> ffn_histogram(const Snapshot& s, int layer) {
    const Tensor* pre = s.find(s.stack() + "." + std::to_string(layer) + ".ffn.pre_act");
    const Tensor* post = s.find(s.stack() + "." + std::to_string(layer) + ".ffn.post_act");
    if (!pre || !s.model) return std::nullopt;
    const ModelConfig& c = s.model->config();
    plot::Figure h;
    h.title = trf("This model's FFN pre-activations, layer %d (%s)", layer, to_string(c.activation));
    h.formula = is_gated(c.activation)
                    ? tr("Histogram of the gate branch x W_gateᵀ over all tokens × d_ff units; the FFN computes act(gate) · up")
                    : tr("Histogram of x W_upᵀ + b_up over all tokens × d_ff units: the inputs the activation really sees");
    h.x.label = tr("pre-activation value");
    h.view = "ffn-histogram";
    h.y.label = tr("density");
    h.y.unit = tr("1/unit");
    plot::Series hs = plot::histogram_series(pre->data, 60, NAN, NAN, true);
    hs.name = trf("pre_act (%lld values)", static_cast<long long>(pre->numel()));
    hs.color = plot::palette(4);
    hs.color.a = 0.8f;
    h.series.push_back(hs);
    if (post) {
        plot::Series ps = plot::histogram_series(post->data, 60, NAN, NAN, true);
        ps.name = tr("post_act");
        ps.color = plot::palette(1);
        ps.color.a = 0.45f;
        h.series.push_back(ps);
    }
    size_t neg = 0;
    for (float v : pre->data) neg += v < 0 ? 1 : 0;
    h.note = trf("%.1f%% of pre-activations are negative (ReLU would zero them)",
                 100.0 * double(neg) / double(std::max<int64_t>(1, pre->numel())));
    return h;
}

}  // namespace ts::figures
