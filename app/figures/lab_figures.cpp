// The training lab's live curves (Training panel, topic "lab"; render --lab-run DIR): losses, learning rate,
// gradient norms per layer, the largest logit, attention entropy per head and the induction / previous-token
// scores, all against the optimizer step, from a LabHistory (app/session/training_lab.h).
#include "app/figures/figures.h"
#include "app/i18n/tr.h"
#include "app/plot/colormap.h"
#include "app/plot/ticks.h"

#include <algorithm>
#include <cmath>

namespace ts::figures {

namespace {

plot::Figure base(const char* title, const char* y_label, const char* y_unit, const std::string& view) {
    plot::Figure f;
    f.view = view;
    f.title = tr(title);
    f.x.label = tr("training step");
    f.y.label = tr(y_label);
    f.y.unit = y_unit ? tr(y_unit) : "";
    f.x.min = 0;
    return f;
}

void add_marker(plot::Figure& f, int64_t marker) {
    if (marker >= 0) f.ref_lines.push_back({true, double(marker), "", plot::Rgba{0.85f, 0.3f, 0.3f, 0.9f}});
}

/// Mean of the last `k` values at every point (a trailing window), so a noisy per-step curve reads as a trend.
std::vector<double> trailing_mean(const std::vector<double>& v, int k) {
    std::vector<double> out(v.size());
    double sum = 0;
    int n = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        sum += v[i];
        ++n;
        if (i >= size_t(k)) {
            sum -= v[i - size_t(k)];
            --n;
        }
        out[i] = sum / n;
    }
    return out;
}

/// Every k-th point (and the last) so that at most kMaxPoints are drawn: a 20000-step run stays quick to redraw.
constexpr size_t kMaxPoints = 1500;
void decimate(plot::Series& s) {
    if (s.x.size() <= kMaxPoints) return;
    const size_t k = (s.x.size() + kMaxPoints - 1) / kMaxPoints;
    std::vector<double> x, y;
    for (size_t i = 0; i < s.x.size(); i += k) x.push_back(s.x[i]), y.push_back(s.y[i]);
    if ((s.x.size() - 1) % k) x.push_back(s.x.back()), y.push_back(s.y.back());
    s.x = std::move(x);
    s.y = std::move(y);
}

std::string head_name(int l, int h) { return "L" + std::to_string(l) + "H" + std::to_string(h); }

}  // namespace

const std::vector<std::string>& lab_figure_names() {
    static const std::vector<std::string> names = {"loss", "lr", "grad-norm", "logits", "entropy", "heads"};
    return names;
}

std::vector<plot::Figure> lab_figures(const LabHistory& h, int64_t marker) {
    std::vector<plot::Figure> out;
    const double x_max = std::max(1, h.total_steps);
    std::vector<double> steps;
    for (const auto& s : h.steps) steps.push_back(double(s.step + 1));
    const auto per_step = [&](auto get) {
        std::vector<double> v;
        for (const auto& s : h.steps) v.push_back(get(s));
        return v;
    };

    // [0] losses
    {
        plot::Figure f = base(TS_N_("Loss"), TS_N_("cross-entropy"), TS_N_("nats/token"), "lab-loss");
        plot::Series raw, mean, val;
        raw.x = steps;
        raw.y = per_step([](const train::StepStats& s) { return double(s.loss); });
        raw.color = plot::palette(0);
        raw.color.a = 0.3f;
        raw.width = 1.0f;
        mean.name = tr("train (20-step mean)");
        mean.x = steps;
        mean.y = trailing_mean(raw.y, 20);
        mean.color = plot::palette(0);
        val.name = tr("held-out");
        val.color = plot::palette(1);
        for (const auto& [step, v] : h.val) {
            val.x.push_back(double(step));
            val.y.push_back(v);
        }
        f.series = {raw, mean, val};
        if (std::isfinite(h.uniform_loss))
            f.ref_lines.push_back({false, h.uniform_loss, trf("ln %d: each letter guessed", h.alphabet),
                                   plot::Rgba{0.5f, 0.5f, 0.5f, 1}});
        if (!h.val.empty())
            f.note = trf("held-out loss %s nats/token at step %lld", plot::format_value(h.val.back().second).c_str(),
                         (long long)h.val.back().first);
        out.push_back(std::move(f));
    }
    // [1] learning rate
    {
        plot::Figure f = base(TS_N_("Learning rate"), TS_N_("learning rate"), nullptr, "lab-lr");
        plot::Series s;
        s.x = steps;
        s.y = per_step([](const train::StepStats& st) { return double(st.lr); });
        s.color = plot::palette(2);
        f.series = {s};
        f.legend = false;
        out.push_back(std::move(f));
    }
    // [2] gradient norms per layer
    {
        plot::Figure f = base(TS_N_("Gradient norm before clipping"), TS_N_("L2 norm"), nullptr, "lab-grad-norm");
        f.y.log = true;
        const size_t n_layers = h.steps.empty() ? 0 : h.steps.back().layer_grad_norms.size();
        const int dec_layers = h.config.n_layers;
        for (size_t l = 0; l < n_layers; ++l) {
            plot::Series s;
            s.name = int(l) < dec_layers ? trf("layer %d", int(l)) : trf("encoder layer %d", int(l) - dec_layers);
            s.x = steps;
            const auto raw = per_step([l](const train::StepStats& st) {
                return l < st.layer_grad_norms.size() ? std::max(1e-12, st.layer_grad_norms[l]) : NAN;
            });
            s.y = trailing_mean(raw, 10);
            s.color = plot::palette(int(l));
            s.width = 1.5f;
            f.series.push_back(std::move(s));
        }
        plot::Series total;
        total.name = tr("all parameters");
        total.x = steps;
        total.y = trailing_mean(per_step([](const train::StepStats& st) { return std::max(1e-12, st.grad_norm); }), 10);
        total.color = plot::Rgba{0.45f, 0.45f, 0.45f, 1};
        total.dashed = true;
        f.series.push_back(std::move(total));
        f.note = tr("10-step means; the update uses the clipped gradient");
        out.push_back(std::move(f));
    }
    // [3] largest logit and log Z
    {
        plot::Figure f = base(TS_N_("Largest logit of the batch"), TS_N_("logit"), nullptr, "lab-logits");
        plot::Series logit, lse;
        logit.name = tr("largest logit");
        logit.x = steps;
        logit.y = per_step([](const train::StepStats& s) { return double(s.max_logit); });
        logit.color = plot::palette(4);
        lse.name = tr("largest log Z (what z-loss penalises)");
        lse.x = steps;
        lse.y = per_step([](const train::StepStats& s) { return double(s.max_logsumexp); });
        lse.color = plot::palette(5);
        lse.dashed = true;
        f.series = {logit, lse};
        out.push_back(std::move(f));
    }
    // [4] attention entropy per head
    {
        plot::Figure f = base(TS_N_("Attention entropy on the probe"), TS_N_("entropy"), TS_N_("nats"), "lab-entropy");
        const int L = h.config.n_layers, H = h.config.n_heads;
        for (int l = 0; l < L && !h.probes.empty(); ++l)
            for (int hd = 0; hd < H; ++hd) {
                plot::Series s;
                s.name = head_name(l, hd);
                for (const auto& p : h.probes) {
                    s.x.push_back(double(p.step));
                    s.y.push_back(p.entropy(l, hd));
                }
                s.color = plot::palette(l * H + hd);
                s.dashed = l % 2 == 1;
                s.width = 1.5f;
                f.series.push_back(std::move(s));
            }
        f.y.min = 0;
        // Headroom above the highest curve: early in training every head sits near the uniform entropy, and a
        // curve drawn on the frame's top edge is hidden by it.
        double top = 0;
        for (const auto& s : f.series)
            for (double v : s.y)
                if (std::isfinite(v)) top = std::max(top, v);
        if (top > 0) f.y.max = top * 1.1;
        f.note = tr("mean over the probe's queries; uniform attention over the probe would be about 3");
        out.push_back(std::move(f));
    }
    // [5] best induction and previous-token scores
    {
        plot::Figure f = base(TS_N_("Induction and previous-token heads"), TS_N_("score"), nullptr, "lab-heads");
        plot::Series ind, prev;
        ind.name = tr("best induction score");
        ind.color = plot::palette(1);
        prev.name = tr("best previous-token score");
        prev.color = plot::palette(2);
        int best_l = 0, best_h = 0;
        for (const auto& p : h.probes) {
            ind.x.push_back(double(p.step));
            ind.y.push_back(p.induction.maxCoeff(&best_l, &best_h));
            prev.x.push_back(double(p.step));
            prev.y.push_back(p.prev_token.maxCoeff());
        }
        f.series = {ind, prev};
        f.y.min = 0;
        f.y.max = 1;
        f.ref_lines.push_back({false, 0.5, "0.5", plot::Rgba{0.5f, 0.5f, 0.5f, 1}});
        if (!h.probes.empty()) {
            const int64_t first = h.first_induction_step(0.5f);
            const std::string now = trf("best induction head now: %s, %s", head_name(best_l, best_h).c_str(),
                                        plot::format_value(ind.y.back()).c_str());
            f.note =
                first >= 0 ? trf("induction score ≥ 0.5 first at step %lld; %s", (long long)first, now.c_str()) : now;
        }
        out.push_back(std::move(f));
    }
    for (auto& f : out) {
        for (auto& se : f.series) decimate(se);
        f.x.max = x_max;
        add_marker(f, marker);
        if (h.steps.empty() && f.note.empty()) f.note = tr("the run has not taken a step yet");
    }
    return out;
}

const std::vector<std::string>& lab_compare_figure_names() {
    static const std::vector<std::string> names = {"val-loss", "val-loss-diff", "grad-norm", "logits", "induction"};
    return names;
}

namespace {

/// y of the piecewise-linear curve (xs, ys) at x; NaN outside [xs.front(), xs.back()].
double interpolate(const std::vector<double>& xs, const std::vector<double>& ys, double x) {
    if (xs.empty() || x < xs.front() || x > xs.back()) return NAN;
    const size_t i = size_t(std::lower_bound(xs.begin(), xs.end(), x) - xs.begin());
    if (xs[i] == x || i == 0) return ys[i];
    const double t = (x - xs[i - 1]) / (xs[i] - xs[i - 1]);
    return ys[i - 1] + t * (ys[i] - ys[i - 1]);
}

/// One run's curve of a comparison: A solid, B dashed, each in its own colour.
plot::Series run_series(const std::string& name, bool b, std::vector<double> x, std::vector<double> y) {
    plot::Series s;
    s.name = name;
    s.x = std::move(x);
    s.y = std::move(y);
    s.color = plot::palette(b ? 1 : 0);
    s.dashed = b;
    s.width = 2.0f;
    decimate(s);
    return s;
}

}  // namespace

std::vector<plot::Figure> lab_compare_attention_figures(const ProbeAttention& a, const ProbeAttention& b,
                                                        const std::string& name_a, const std::string& name_b, int layer,
                                                        int head) {
    if (a.T != b.T || a.probs.size() != b.probs.size() || a.probs.size() != size_t(a.T) * size_t(a.T))
        throw std::invalid_argument("lab_compare_attention_figures: the two probes differ in length");
    const int T = a.T;
    std::vector<std::string> letters;
    for (int id : lab_probe_ids()) letters.emplace_back(1, char(id));
    std::vector<float> diff(a.probs.size());
    for (size_t k = 0; k < diff.size(); ++k) diff[k] = b.probs[k] - a.probs[k];
    const auto make = [&](const std::string& title, const std::vector<float>& v, plot::Colormap cmap,
                          const std::string& value_label) {
        plot::Figure f;
        f.view = "lab-compare-attention";
        f.title = title;
        f.heatmap = plot::make_heatmap(T, T, v, cmap, value_label);
        if (cmap != plot::Colormap::Diverging) f.heatmap->vmin = 0, f.heatmap->vmax = 1;
        f.heatmap->row_name = tr("query");
        f.heatmap->col_name = tr("key");
        f.x.label = tr("key");
        f.y.label = tr("query");
        f.x.categories = letters;
        f.y.categories = letters;
        f.square_cells = true;
        return f;
    };
    std::vector<plot::Figure> out;
    out.push_back(make(trf("A: %s, layer %d head %d, step %lld", name_a.c_str(), layer, head, (long long)a.step),
                       a.probs, plot::Colormap::Viridis, tr("attention weight")));
    out.push_back(make(trf("B: %s, layer %d head %d, step %lld", name_b.c_str(), layer, head, (long long)b.step),
                       b.probs, plot::Colormap::Viridis, tr("attention weight")));
    out.push_back(make(tr("B − A on the probe"), diff, plot::Colormap::Diverging, tr("weight difference")));
    out.back().note =
        tr("the probe: 24 random letters written twice; an induction head lights the diagonal one "
           "letter past the earlier copy");
    return out;
}

std::vector<plot::Figure> lab_compare_figures(const LabHistory& a, const LabHistory& b, const std::string& name_a,
                                              const std::string& name_b) {
    const std::string la = "A: " + name_a, lb = "B: " + name_b;
    const LabHistory* runs[2] = {&a, &b};
    const std::string* names[2] = {&la, &lb};
    std::vector<plot::Figure> out;
    const auto val_of = [](const LabHistory& h, std::vector<double>& x, std::vector<double>& y) {
        for (const auto& [step, v] : h.val) {
            x.push_back(double(step));
            y.push_back(v);
        }
    };
    // [0] held-out loss of both
    {
        plot::Figure f = base(TS_N_("Held-out loss of two runs"), TS_N_("cross-entropy"), TS_N_("nats/token"),
                              "lab-compare-val-loss");
        for (int r = 0; r < 2; ++r) {
            std::vector<double> x, y;
            val_of(*runs[r], x, y);
            f.series.push_back(run_series(*names[r], r == 1, x, y));
        }
        if (std::isfinite(a.uniform_loss))
            f.ref_lines.push_back({false, a.uniform_loss, trf("ln %d: each letter guessed", a.alphabet),
                                   plot::Rgba{0.5f, 0.5f, 0.5f, 1}});
        out.push_back(std::move(f));
    }
    // [1] their difference, B − A, at A's evaluation steps (B's curve interpolated linearly)
    {
        plot::Figure f = base(TS_N_("Held-out loss, B − A"), TS_N_("loss difference"), TS_N_("nats/token"),
                              "lab-compare-val-loss-diff");
        std::vector<double> ax, ay, bx, by, dx, dy;
        val_of(a, ax, ay);
        val_of(b, bx, by);
        for (size_t i = 0; i < ax.size(); ++i) {
            const double v = interpolate(bx, by, ax[i]);
            if (std::isfinite(v)) {
                dx.push_back(ax[i]);
                dy.push_back(v - ay[i]);
            }
        }
        plot::Series d = run_series(tr("B − A"), false, dx, dy);
        d.color = plot::palette(2);
        d.dashed = false;
        f.series = {d};
        f.legend = false;
        f.ref_lines.push_back({false, 0.0, "", plot::Rgba{0.5f, 0.5f, 0.5f, 1}});
        f.note = dy.empty() ? std::string(tr("the runs share no evaluated steps yet"))
                            : trf("below 0: B is ahead; at step %lld B − A = %s nats/token", (long long)dx.back(),
                                  plot::format_value(dy.back()).c_str());
        out.push_back(std::move(f));
    }
    // [2] gradient norm of all parameters, [3] the largest logit
    {
        plot::Figure g =
            base(TS_N_("Gradient norm before clipping, two runs"), TS_N_("L2 norm"), nullptr, "lab-compare-grad-norm");
        g.y.log = true;
        plot::Figure l =
            base(TS_N_("Largest logit of the batch, two runs"), TS_N_("logit"), nullptr, "lab-compare-logits");
        for (int r = 0; r < 2; ++r) {
            std::vector<double> x, gn, lg;
            for (const auto& st : runs[r]->steps) {
                x.push_back(double(st.step + 1));
                gn.push_back(std::max(1e-12, st.grad_norm));
                lg.push_back(double(st.max_logit));
            }
            g.series.push_back(run_series(*names[r], r == 1, x, trailing_mean(gn, 10)));
            l.series.push_back(run_series(*names[r], r == 1, x, lg));
        }
        g.note = tr("10-step means");
        out.push_back(std::move(g));
        out.push_back(std::move(l));
    }
    // [4] best induction score
    {
        plot::Figure f =
            base(TS_N_("Best induction score, two runs"), TS_N_("score"), nullptr, "lab-compare-induction");
        std::string note;
        for (int r = 0; r < 2; ++r) {
            std::vector<double> x, y;
            for (const auto& p : runs[r]->probes) {
                x.push_back(double(p.step));
                y.push_back(p.induction.size() ? double(p.induction.maxCoeff()) : NAN);
            }
            f.series.push_back(run_series(*names[r], r == 1, x, y));
            const int64_t first = runs[r]->first_induction_step(0.5f);
            note += (r ? "; " : "") +
                (first >= 0 ? trf("%s: ≥ 0.5 first at step %lld", r ? "B" : "A", (long long)first)
                            : trf("%s: not yet ≥ 0.5", r ? "B" : "A"));
        }
        f.y.min = 0;
        f.y.max = 1;
        f.ref_lines.push_back({false, 0.5, "0.5", plot::Rgba{0.5f, 0.5f, 0.5f, 1}});
        f.note = note;
        out.push_back(std::move(f));
    }
    const double x_max = std::max({1, a.total_steps, b.total_steps});
    for (auto& f : out) f.x.max = x_max;
    return out;
}

}  // namespace ts::figures
