// Normalization panel: LayerNorm, RMSNorm and BatchNorm side by side on synthetic data (batch 64 × 128 features,
// adjustable mean and std) and LayerNorm / RMSNorm on the model's real residual stream at the selected layer, with
// mean / variance / RMS readouts and γ, β, ε sliders.
#include "app/gfx/painter.h"
#include "app/plot/ticks.h"
#include "app/ui/panels/panels.h"
#include "core/ops.h"

#include <imgui.h>

#include <cmath>
#include <random>

namespace ts::ui {

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

void hist_figure(const char* title, const char* formula, const MatrixRM& before, const MatrixRM& after, ImVec2 size,
                 const char* id) {
    plot::Figure f;
    f.title = title;
    f.formula = formula;
    f.x.label = "value";
    f.y.label = "density";
    f.y.unit = "1/value";
    plot::Series a = plot::histogram_series(std::span<const float>(before.data(), size_t(before.size())), 50, NAN, NAN, true);
    a.name = "before";
    a.color = gfx::palette(0);
    a.color.a = 0.7f;
    plot::Series b = plot::histogram_series(std::span<const float>(after.data(), size_t(after.size())), 50, NAN, NAN, true);
    b.name = "after";
    b.color = gfx::palette(1);
    b.color.a = 0.7f;
    f.series = {a, b};
    const Stats sb = stats(before), sa = stats(after);
    char note[200];
    std::snprintf(note, sizeof note, "before: mean %.3f  var %.3f  RMS %.3f\nafter:  mean %.3f  var %.3f  RMS %.3f", sb.mean,
                  sb.var, sb.rms, sa.mean, sa.var, sa.rms);
    f.note = note;
    ImGui::BeginGroup();
    gfx::draw_figure(f, ImVec2(size.x, size.y - ImGui::GetTextLineHeightWithSpacing() * 2), {}, id);
    ImGui::TextUnformatted(note);
    ImGui::EndGroup();
}

}  // namespace

void draw_normalization_panel(PanelContext& ctx) {
    UiState& st = ctx.state;
    const float line_h = ImGui::GetTextLineHeight();
    ImGui::SetNextItemWidth(line_h * 8);
    ImGui::SliderFloat("data mean", &st.norm_mean, -10.0f, 10.0f, "%.2f");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(line_h * 8);
    ImGui::SliderFloat("data std", &st.norm_std, 0.1f, 10.0f, "%.2f");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(line_h * 8);
    ImGui::SliderFloat("γ (scale)", &st.norm_gamma, 0.0f, 3.0f, "%.2f");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(line_h * 8);
    ImGui::SliderFloat("β (shift)", &st.norm_beta, -3.0f, 3.0f, "%.2f");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(line_h * 8);
    ImGui::SliderFloat("ε", &st.norm_eps, 1e-8f, 1.0f, "%.1e", ImGuiSliderFlags_Logarithmic);

    // Synthetic batch: 64 rows × 128 features ~ N(mean, std), fixed seed.
    constexpr int N = 64, D = 128;
    MatrixRM x(N, D);
    std::mt19937 rng(5);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < D; ++j) x(i, j) = st.norm_mean + st.norm_std * nd(rng);
    std::vector<float> gamma(size_t(D), st.norm_gamma), beta(size_t(D), st.norm_beta);
    const MatrixRM ln = layer_norm(x, gamma, beta, st.norm_eps);
    const MatrixRM rms = rms_norm(x, gamma, st.norm_eps);
    BatchNormState bs;
    bs.running_mean = RowVectorF::Zero(D);
    bs.running_var = RowVectorF::Ones(D);
    const MatrixRM bn = batch_norm(x, gamma, beta, st.norm_eps, bs, true);

    const float avail_w = ImGui::GetContentRegionAvail().x;
    const float row_h = std::max(line_h * 14, ImGui::GetContentRegionAvail().y * 0.5f);
    const float third = avail_w / 3.0f - 6;
    ImGui::TextDisabled("Synthetic data: batch 64 × 128 features drawn from N(mean, std²)");
    hist_figure("LayerNorm (per row, over features)",
                "y = (x − mean_row) / √(var_row + ε) · γ + β  (torch.nn.LayerNorm); statistics over the 128 features of each row",
                x, ln, ImVec2(third, row_h), "syn_ln");
    ImGui::SameLine();
    hist_figure("RMSNorm (per row, no centering)",
                "y = x / √(mean_row(x²) + ε) · γ  (Zhang & Sennrich 2019): no mean subtraction, no β — a large mean stays",
                x, rms, ImVec2(third, row_h), "syn_rms");
    ImGui::SameLine();
    hist_figure("BatchNorm (per feature, over the batch)",
                "y = (x − mean_batch) / √(var_batch + ε) · γ + β  (torch.nn.BatchNorm1d, training mode): statistics over the 64 rows",
                x, bn, ImVec2(third, row_h), "syn_bn");

    // Real residual stream.
    const Snapshot* s = ctx.snap;
    const int layer = current_layer(ctx);
    const Tensor* r = s ? s->find(s->stack() + "." + std::to_string(layer) + ".resid_attn") : nullptr;
    if (!r) return empty_message("the model's residual stream appears here after the first forward pass");
    const MatrixRM real = r->mat();
    std::vector<float> g2(size_t(real.cols()), st.norm_gamma), b2(size_t(real.cols()), st.norm_beta);
    const float h2 = std::max(line_h * 12, ImGui::GetContentRegionAvail().y - line_h * 1.5f);
    ImGui::TextDisabled("This model: residual stream after layer %d's attention (%lld tokens × d_model %lld), the input of its FFN norm",
                        layer, (long long)real.rows(), (long long)real.cols());
    hist_figure("LayerNorm on the real residual stream", "the same LayerNorm, applied to each token's residual vector",
                real, layer_norm(real, g2, b2, st.norm_eps), ImVec2(avail_w * 0.5f - 4, h2), "real_ln");
    ImGui::SameLine();
    hist_figure("RMSNorm on the real residual stream", "the same RMSNorm, applied to each token's residual vector", real,
                rms_norm(real, g2, st.norm_eps), ImVec2(avail_w * 0.5f - 4, h2), "real_rms");
}

}  // namespace ts::ui
