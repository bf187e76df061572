// Position figures: the sinusoidal table, a few dimensions against position, PE(pos)·PE(pos+k), RoPE's rotation
// angle per pair and ⟨RoPE(q, m), RoPE(k, n)⟩ against m − n.
#include "app/i18n/tr.h"
#include "app/figures/figures.h"
#include "core/kernels/ops.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace ts::figures {

std::vector<plot::Figure> position_figures(const UiState& st) {
    const int N = st.pe_positions, D = st.pe_d_model;
    const MatrixRM pe = sinusoidal_table(N, D, st.pe_base);
    std::vector<plot::Figure> out;

    plot::Figure ft;
    ft.title = tr("Sinusoidal table PE (position × dimension)");
    ft.formula = tr("PE[p, 2i] = sin(p / base^(2i/d_model)), PE[p, 2i+1] = cos(p / base^(2i/d_model))  (Vaswani et al. §3.5). "
                 "Low dimensions oscillate fast, high ones slowly.");
    ft.heatmap = plot::make_heatmap(N, D, std::span<const float>(pe.data(), size_t(pe.size())), plot::Colormap::Diverging, tr("PE value"));
    ft.heatmap->vmin = -1;
    ft.heatmap->vmax = 1;
    ft.heatmap->row_name = tr("position");
    ft.heatmap->col_name = tr("dimension");
    ft.x.label = tr("dimension");
    ft.y.label = tr("position");
    ft.note = trf("d_model %d, base %d, %d positions", D, int(st.pe_base), N);
    out.push_back(std::move(ft));

    plot::Figure fc;
    fc.title = tr("Chosen dimensions against position");
    fc.formula = tr("PE[p, d] for a few d: wavelength 2π·base^(2i/d_model) grows geometrically with the pair index i");
    fc.x.label = tr("position p");
    fc.y.label = tr("PE[p, d]");
    // Pairs whose wavelength spans several integer positions (d = 0 turns 1 rad per position and only aliases on
    // an integer grid), then ever slower ones: the geometric ladder of wavelengths is the point of the plot.
    const int dims[] = {std::min(D - 2, 2), std::min(D - 1, 3), std::min(D - 2, 10), std::min(D - 2, 24),
                        std::min(D - 2, D / 2 / 2 * 2)};
    for (int k = 0; k < 5; ++k) {
        if (k > 0 && dims[k] == dims[k - 1]) continue;
        plot::Series s;
        s.name = "d = " + std::to_string(dims[k]) + (dims[k] % 2 ? " (cos)" : " (sin)");
        s.color = plot::palette(k);
        for (int p = 0; p < N; ++p) {
            s.x.push_back(p);
            s.y.push_back(pe(p, dims[k]));
        }
        fc.series.push_back(std::move(s));
    }
    out.push_back(std::move(fc));

    plot::Figure fs;
    fs.title = tr("Similarity PE(pos) · PE(pos + k)");
    fs.formula = tr("PE(pos)·PE(pos+k) = Σ_i cos(k / base^(2i/d_model)): the same for every pos, so it only depends on the "
                 "offset k (lines for pos = 0 and pos = N/4 coincide)");
    fs.x.label = tr("offset k");
    fs.x.unit = tr("positions");
    fs.y.label = tr("dot product");
    for (int v = 0; v < 2; ++v) {
        const int pos = v == 0 ? 0 : N / 4;
        plot::Series s;
        s.name = "pos = " + std::to_string(pos);
        s.color = plot::palette(v);
        s.dashed = v == 1;
        for (int k = 0; pos + k < N; ++k) {
            s.x.push_back(k);
            s.y.push_back(pe.row(pos).dot(pe.row(pos + k)));
        }
        fs.series.push_back(std::move(s));
    }
    out.push_back(std::move(fs));

    // --- RoPE ---
    const int d_head = std::max(4, D);
    const RopeLayout rl = st.rope_interleaved ? RopeLayout::Interleaved : RopeLayout::HalfSplit;
    plot::Figure fa;
    fa.title = tr("RoPE rotation angle per pair");
    fa.formula = tr("pair i is rotated by m·θ_i radians at position m, θ_i = rope_theta^(−2i/d_head) (RoFormer eq. 34); "
                 "log scale: pair 0 turns 1 rad per position, the last pair barely moves");
    fa.x.label = tr("position m");
    fa.y.label = tr("angle m·θ_i");
    fa.y.unit = tr("rad");
    fa.y.log = true;
    const int pairs[] = {0, d_head / 8, d_head / 4, d_head / 2 - 1};
    for (int k = 0; k < 4; ++k) {
        if (k > 0 && pairs[k] == pairs[k - 1]) continue;
        const double theta = std::pow(double(st.rope_theta), -2.0 * pairs[k] / d_head);
        plot::Series s;
        s.name = trf("pair i = %d", pairs[k]);
        s.color = plot::palette(k);
        for (int m = 1; m < N; ++m) {
            s.x.push_back(m);
            s.y.push_back(m * theta);
        }
        fa.series.push_back(std::move(s));
    }
    fa.ref_lines.push_back({false, 2 * M_PI, tr("one full turn (2π)"), plot::Rgba{0.6f, 0.6f, 0.6f, 1}});
    fa.note = "rope_theta " + std::to_string(int(st.rope_theta)) + ", d_head " + std::to_string(d_head);
    out.push_back(std::move(fa));

    // Relative-position property with a fixed random q and k.
    std::vector<float> qk(size_t(2 * d_head));
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (float& v : qk) v = nd(rng);
    plot::Figure fd;
    fd.title = tr("<RoPE(q, m), RoPE(k, n)> against m − n");
    fd.formula = tr("Rotating q by its position m and k by n makes their dot product a function of m − n only: the curves "
                 "for n = 0 and n = N/4 lie on top of each other (fixed random q, k; d_head = d_model slider)");
    fd.x.label = tr("offset m − n");
    fd.x.unit = tr("positions");
    fd.y.label = tr("q·k after RoPE");
    for (int v = 0; v < 2; ++v) {
        const int n = v == 0 ? 0 : N / 4;
        MatrixRM k(1, d_head);
        for (int j = 0; j < d_head; ++j) k(0, j) = qk[size_t(d_head + j)];
        apply_rope(k, n, st.rope_theta, rl);
        plot::Series s;
        s.name = "n = " + std::to_string(n);
        s.color = plot::palette(v + 2);
        s.dashed = v == 1;
        s.width = v == 1 ? 2.5f : 2.0f;
        for (int m = n; m < n + N; ++m) {
            MatrixRM q(1, d_head);
            for (int j = 0; j < d_head; ++j) q(0, j) = qk[size_t(j)];
            apply_rope(q, m, st.rope_theta, rl);
            s.x.push_back(m - n);
            s.y.push_back(q.row(0).dot(k.row(0)));
        }
        fd.series.push_back(std::move(s));
    }
    fd.note = std::string(st.rope_interleaved ? tr("interleaved pairs (2i, 2i+1)") : tr("half-split pairs (i, i + d/2)")) +
              ", rope_theta " + std::to_string(int(st.rope_theta));
    out.push_back(std::move(fd));
    const char* views[] = {"positions-table", "positions-curves", "positions-similarity", "rope-angle", "rope-dot"};
    for (size_t i = 0; i < out.size(); ++i) out[i].view = views[i];
    return out;
}

}  // namespace ts::figures
