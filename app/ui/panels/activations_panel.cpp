// Activations panel: curves of tanh, sigmoid, ReLU, LeakyReLU(α), GELU (erf and tanh), Swish(β) and the GLU family
// with their derivatives, the course's example points (x = −2, −0.5, 0, 0.5, 2) with exact values, and a histogram of
// the model's real FFN pre-activations at the selected layer.
#include "app/gfx/painter.h"
#include "app/plot/ticks.h"
#include "app/ui/panels/panels.h"
#include "core/ops.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <functional>

namespace ts::ui {

namespace {

struct Act {
    const char* name;
    const char* formula;
    std::function<float(float)> f, df;
};

constexpr float kExamples[] = {-2.0f, -0.5f, 0.0f, 0.5f, 2.0f};

}  // namespace

void draw_activations_panel(PanelContext& ctx) {
    UiState& st = ctx.state;
    const float line_h = ImGui::GetTextLineHeight();
    static bool shown[10] = {true, true, true, false, true, false, true, false, false, false};
    const float a = st.act_leaky_alpha, b = st.act_swish_beta;
    const std::vector<Act> acts = {
        {"tanh", "tanh(x) = (eˣ − e⁻ˣ)/(eˣ + e⁻ˣ); d/dx = 1 − tanh²(x)", [](float x) { return tanh_act(x); }, [](float x) { return tanh_grad(x); }},
        {"sigmoid", "σ(x) = 1/(1 + e⁻ˣ); d/dx = σ(x)(1 − σ(x))", [](float x) { return sigmoid(x); }, [](float x) { return sigmoid_grad(x); }},
        {"ReLU", "max(0, x); d/dx = 1 for x > 0 else 0", [](float x) { return relu(x); }, [](float x) { return relu_grad(x); }},
        {"LeakyReLU(α)", "x for x > 0 else αx", [a](float x) { return leaky_relu(x, a); }, [a](float x) { return leaky_relu_grad(x, a); }},
        {"GELU (erf)", "x·Φ(x), Φ = standard normal CDF", [](float x) { return gelu(x); }, [](float x) { return gelu_grad(x); }},
        {"GELU (tanh)", "0.5x(1 + tanh(√(2/π)(x + 0.044715x³)))", [](float x) { return gelu_tanh(x); }, [](float x) { return gelu_tanh_grad(x); }},
        {"Swish(β)", "x·σ(βx); β = 1 is SiLU", [b](float x) { return swish(x, b); }, [b](float x) { return swish_grad(x, b); }},
        {"GLU (gate = up = x)", "σ(x)·x: the gate σ(x W_gate) times the linear branch x W_up, here both = x",
         [](float x) { return sigmoid(x) * x; }, [](float x) { return sigmoid_grad(x) * x + sigmoid(x); }},
        {"SwiGLU (gate = up = x)", "SiLU(x)·x", [](float x) { return swish(x) * x; }, [](float x) { return swish_grad(x) * x + swish(x); }},
        {"GeGLU (gate = up = x)", "GELU(x)·x", [](float x) { return gelu(x) * x; }, [](float x) { return gelu_grad(x) * x + gelu(x); }},
    };

    // Knobs.
    for (size_t i = 0; i < acts.size(); ++i) {
        if (i) ImGui::SameLine();
        ImGui::PushStyleColor(ImGuiCol_CheckMark, ImGui::ColorConvertU32ToFloat4(gfx::to_u32(gfx::palette(int(i)))));
        ImGui::Checkbox(acts[i].name, &shown[i]);
        ImGui::PopStyleColor();
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", acts[i].formula);
        if (i == 4) ImGui::NewLine();
    }
    ImGui::SetNextItemWidth(line_h * 10);
    ImGui::SliderFloat("α (LeakyReLU)", &st.act_leaky_alpha, 0.0f, 0.5f, "%.3f");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(line_h * 10);
    ImGui::SliderFloat("β (Swish)", &st.act_swish_beta, 0.1f, 5.0f, "%.2f");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(line_h * 10);
    ImGui::SliderFloat("x range ±", &st.act_range, 1.0f, 10.0f, "%.1f");
    ImGui::SameLine();
    ImGui::Checkbox("derivatives", &st.act_show_grad);

    const float R = st.act_range;
    auto curves = [&](bool grad) {
        plot::Figure f;
        f.title = grad ? "Derivatives f′(x)" : "Activation functions f(x)";
        f.formula = grad ? "f′(x): how much a small change of the input moves the output (the gradient that flows back)"
                         : "Each curve maps one pre-activation x to the FFN's output; dots: the course's example points "
                           "x = −2, −0.5, 0, 0.5, 2 (hover for exact values)";
        f.x.label = "x (pre-activation)";
        f.y.label = grad ? "f′(x)" : "f(x)";
        f.x.min = -R;
        f.x.max = R;
        for (size_t i = 0; i < acts.size(); ++i) {
            if (!shown[i]) continue;
            plot::Series s;
            s.name = acts[i].name;
            s.color = gfx::palette(int(i));
            for (int k = 0; k <= 400; ++k) {
                const float x = -R + 2 * R * float(k) / 400.0f;
                s.x.push_back(x);
                s.y.push_back(grad ? acts[i].df(x) : acts[i].f(x));
            }
            f.series.push_back(std::move(s));
            plot::Series p;
            p.kind = plot::SeriesKind::Scatter;
            p.color = gfx::palette(int(i));
            p.marker = 4.5f;
            for (float x : kExamples) {
                p.x.push_back(x);
                p.y.push_back(grad ? acts[i].df(x) : acts[i].f(x));
                p.point_labels.push_back(std::string(acts[i].name) + (grad ? "′" : "") + "(" + plot::format_value(x) + ")");
            }
            f.series.push_back(std::move(p));
        }
        return f;
    };
    const float avail_w = ImGui::GetContentRegionAvail().x;
    const float top_h = std::max(line_h * 14, ImGui::GetContentRegionAvail().y * 0.55f);
    const float half = st.act_show_grad ? avail_w * 0.5f - 4 : avail_w;
    gfx::draw_figure(curves(false), ImVec2(half, top_h), {}, "act_f");
    if (st.act_show_grad) {
        ImGui::SameLine();
        gfx::draw_figure(curves(true), ImVec2(half, top_h), {}, "act_df");
    }

    // Real FFN pre-activations at the selected layer.
    const float bottom_h = std::max(line_h * 10, ImGui::GetContentRegionAvail().y);
    const Snapshot* s = ctx.snap;
    const int layer = current_layer(ctx);
    const Tensor* pre = s ? s->find(s->stack() + "." + std::to_string(layer) + ".ffn.pre_act") : nullptr;
    const Tensor* post = s ? s->find(s->stack() + "." + std::to_string(layer) + ".ffn.post_act") : nullptr;
    if (!pre) {
        ImGui::TextDisabled("FFN pre-activations appear here after the first forward pass.");
        return;
    }
    const ModelConfig& c = s->model->config();
    plot::Figure h;
    h.title = "This model's FFN pre-activations, layer " + std::to_string(layer) + " (" + to_string(c.activation) + ")";
    h.formula = is_gated(c.activation)
                    ? "Histogram of the gate branch x W_gateᵀ over all tokens × d_ff units; the FFN computes act(gate) · up"
                    : "Histogram of x W_upᵀ + b_up over all tokens × d_ff units: the inputs the activation really sees";
    h.x.label = "pre-activation value";
    h.y.label = "density";
    h.y.unit = "1/unit";
    plot::Series hs = plot::histogram_series(pre->data, 60, NAN, NAN, true);
    hs.name = "pre_act (" + std::to_string(pre->numel()) + " values)";
    hs.color = gfx::palette(4);
    hs.color.a = 0.8f;
    h.series.push_back(hs);
    if (post) {
        plot::Series ps = plot::histogram_series(post->data, 60, NAN, NAN, true);
        ps.name = "post_act";
        ps.color = gfx::palette(1);
        ps.color.a = 0.45f;
        h.series.push_back(ps);
    }
    size_t neg = 0;
    for (float v : pre->data) neg += v < 0 ? 1 : 0;
    char note[128];
    std::snprintf(note, sizeof note, "%.1f%% of pre-activations are negative (ReLU would zero them)",
                  100.0 * double(neg) / double(std::max<int64_t>(1, pre->numel())));
    h.note = note;
    ImGui::BeginGroup();
    gfx::draw_figure(h, ImVec2(avail_w * 0.6f, bottom_h - line_h * 1.5f), {}, "act_hist");
    ImGui::TextDisabled("%s", note);
    ImGui::EndGroup();
    ImGui::SameLine();

    // Example values table.
    ImGui::BeginChild("examples", ImVec2(0, bottom_h), true);
    ImGui::TextUnformatted("Example points");
    if (ImGui::BeginTable("ex", 6, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
        ImGui::TableSetupColumn("f");
        for (float x : kExamples) ImGui::TableSetupColumn(("x=" + plot::format_value(x)).c_str());
        ImGui::TableHeadersRow();
        for (size_t i = 0; i < acts.size(); ++i) {
            if (!shown[i]) continue;
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(acts[i].name);
            for (float x : kExamples) {
                ImGui::TableNextColumn();
                ImGui::Text("%.4f", acts[i].f(x));
            }
        }
        ImGui::EndTable();
    }
    ImGui::EndChild();
}

}  // namespace ts::ui
