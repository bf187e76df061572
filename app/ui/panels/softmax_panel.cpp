// Softmax lab: one query row of the model's scaled attention scores (or typed logits) as bars, its softmax at a
// temperature with entropy and max-probability readouts, a live mask (none, causal, padding, sliding window), a
// switch that applies temperature and mask to the model itself, and the overflow demo of the naive formula.
#include "app/gfx/painter.h"
#include "app/plot/ticks.h"
#include "app/ui/panels/panels.h"
#include "core/ops.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ts::ui {

namespace {

std::vector<float> parse_logits(const std::string& s, std::string* error) {
    std::vector<float> out;
    std::string tok;
    std::stringstream ss(s);
    while (std::getline(ss, tok, ',')) {
        const size_t a = tok.find_first_not_of(" \t"), b = tok.find_last_not_of(" \t");
        if (a == std::string::npos) continue;
        tok = tok.substr(a, b - a + 1);
        try {
            size_t pos = 0;
            const float v = std::stof(tok, &pos);
            if (pos != tok.size()) throw std::invalid_argument("");
            out.push_back(v);
        } catch (...) {
            *error = "'" + tok + "' is not a number";
            return {};
        }
    }
    if (out.empty()) *error = "type numbers separated by commas, e.g. 2, 1, 0.1";
    return out;
}

/// 1 = may attend. Query position q over S keys.
std::vector<uint8_t> mask_row(const std::string& kind, int q, int S, int window, int padding) {
    std::vector<uint8_t> m(size_t(S), 1);
    for (int s = 0; s < S; ++s) {
        if (kind == "causal" && s > q) m[size_t(s)] = 0;
        if (kind == "sliding" && (s > q || s < q - window + 1)) m[size_t(s)] = 0;
        if (kind == "padding" && s >= S - padding) m[size_t(s)] = 0;
    }
    return m;
}

plot::Series bars(const std::vector<double>& y, plot::Rgba c, const std::string& name) {
    plot::Series s;
    s.kind = plot::SeriesKind::Bars;
    s.name = name;
    s.color = c;
    for (size_t i = 0; i < y.size(); ++i) {
        s.x.push_back(double(i));
        s.y.push_back(y[i]);
    }
    s.bar_width = 0.7;
    return s;
}

}  // namespace

void draw_softmax_panel(PanelContext& ctx) {
    UiState& st = ctx.state;
    const float line_h = ImGui::GetTextLineHeight();
    const Snapshot* snap = ctx.snap;
    const int layer = current_layer(ctx), head = current_head(ctx), q = current_query(ctx);

    // --- source row ---
    std::vector<float> logits;
    std::vector<std::string> labels;
    std::string source, parse_error;
    const bool have_model_row = snap && snap->trace;
    bool typed = st.sm_use_typed || !have_model_row;
    if (ImGui::RadioButton("query row from the model", !typed) && have_model_row) st.sm_use_typed = false;
    ImGui::SameLine();
    if (ImGui::RadioButton("typed logits", typed)) st.sm_use_typed = true;
    typed = st.sm_use_typed || !have_model_row;
    if (typed) {
        ImGui::SameLine();
        ImGui::SetNextItemWidth(line_h * 20);
        ImGui::InputText("##logits", &st.sm_typed_logits);
        logits = parse_logits(st.sm_typed_logits, &parse_error);
        for (size_t i = 0; i < logits.size(); ++i) labels.push_back(std::to_string(i));
        source = "typed logits";
    } else {
        int rows = 0, cols = 0;
        const std::vector<float> scaled = head_slice(snap->find(snap->stack() + "." + std::to_string(layer) + ".attn.scores_scaled"),
                                                     head, &rows, &cols);
        if (rows > 0 && q < rows) {
            logits.assign(scaled.begin() + ptrdiff_t(size_t(q) * size_t(cols)), scaled.begin() + ptrdiff_t(size_t(q + 1) * size_t(cols)));
            labels = token_labels(*snap);
            labels.resize(size_t(cols));
        }
        source = "layer " + std::to_string(layer) + ", head " + std::to_string(head) + ", query " + std::to_string(q) +
                 (q < int(token_labels(*snap).size()) ? " '" + token_labels(*snap)[size_t(q)] + "'" : "");
        ImGui::SameLine();
        ImGui::TextDisabled("(%s; pick layer/head/query in the sidebar)", source.c_str());
    }
    if (!parse_error.empty()) {
        ImGui::TextColored(ImVec4(0.95f, 0.4f, 0.3f, 1), "%s", parse_error.c_str());
        return;
    }
    if (logits.empty()) return empty_message("no scores recorded yet");
    const int S = int(logits.size());
    const int qpos = typed ? S - 1 : q;

    // --- knobs ---
    ImGui::SetNextItemWidth(line_h * 14);
    slider_log("temperature T", &st.sm_temperature, 0.05f, 10.0f, "%.3g");
    ImGui::SameLine();
    const char* masks[] = {"none", "causal", "padding", "sliding"};
    int mi = 0;
    for (int i = 0; i < 4; ++i)
        if (st.sm_mask == masks[i]) mi = i;
    ImGui::SetNextItemWidth(line_h * 7);
    if (ImGui::Combo("mask", &mi, masks, 4)) st.sm_mask = masks[mi];
    if (st.sm_mask == "sliding") {
        ImGui::SameLine();
        ImGui::SetNextItemWidth(line_h * 8);
        ImGui::SliderInt("window w", &st.sm_window, 1, std::max(1, S));
    }
    if (st.sm_mask == "padding") {
        ImGui::SameLine();
        ImGui::SetNextItemWidth(line_h * 8);
        ImGui::SliderInt("padded keys", &st.sm_padding, 0, std::max(0, S - 1));
    }
    ImGui::SameLine();
    bool apply = st.apply_to_model;
    if (ImGui::Checkbox("apply to the model", &apply)) st.apply_to_model = apply;
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Re-run the forward pass with this temperature and mask in every attention layer.");
    if (st.apply_to_model) {
        st.attn_temperature = st.sm_temperature;
        st.attn_mask = st.sm_mask;
        st.attn_window = st.sm_window;
    }

    // --- softmax with mask and temperature ---
    const std::vector<uint8_t> m = mask_row(st.sm_mask, qpos, S, st.sm_window, st.sm_padding);
    MatrixRM row(1, S), row1(1, S);
    for (int s = 0; s < S; ++s) row(0, s) = m[size_t(s)] ? logits[size_t(s)] : -INFINITY;
    const MatrixRM p = softmax_rows(row, st.sm_temperature);
    const MatrixRM p1 = softmax_rows(row, 1.0f);
    const float H = entropy_nats(std::span<const float>(p.data(), size_t(S)));
    float pmax = 0;
    int amax = 0;
    int n_visible = 0;
    for (int s = 0; s < S; ++s) {
        if (p(0, s) > pmax) { pmax = p(0, s); amax = s; }
        n_visible += m[size_t(s)];
    }
    ImGui::Text("entropy H = %.4f nats (uniform over %d visible keys: %.4f)   ·   max probability %.4f at key %d '%s'", H,
                n_visible, n_visible > 0 ? std::log(double(n_visible)) : 0.0, pmax, amax,
                amax < int(labels.size()) ? labels[size_t(amax)].c_str() : "");

    const float avail_w = ImGui::GetContentRegionAvail().x;
    const float plot_h = std::max(line_h * 12, (ImGui::GetContentRegionAvail().y - line_h * 9) * 0.5f);
    const bool show_cats = S <= 40;

    std::vector<double> lv(static_cast<size_t>(S)), pv(static_cast<size_t>(S)), p1v(static_cast<size_t>(S));
    for (int s = 0; s < S; ++s) {
        lv[size_t(s)] = m[size_t(s)] ? logits[size_t(s)] : NAN;
        pv[size_t(s)] = p(0, s);
        p1v[size_t(s)] = p1(0, s);
    }
    plot::Figure fl;
    fl.title = "Scores (logits) z_s";
    fl.formula = typed ? "z: the typed logits" : "z_s = q·k_s / √d_head for the selected query (before mask and softmax)";
    fl.x.label = "key";
    fl.y.label = "score z";
    if (show_cats) fl.x.categories = labels;
    fl.series.push_back(bars(lv, gfx::palette(0), ""));
    fl.series.back().point_labels = labels;
    for (int s = 0; s < S; ++s)
        if (!m[size_t(s)]) fl.annotations.push_back({double(s) - 0.3, 0.0, "×", plot::Rgba{0.9f, 0.3f, 0.3f, 1}});
    fl.note = "× = masked key (−∞ before softmax)";
    gfx::draw_figure(fl, ImVec2(avail_w * 0.5f - 4, plot_h), {}, "sm_logits");
    ImGui::SameLine();

    plot::Figure fp;
    char title[96];
    std::snprintf(title, sizeof title, "softmax(z / T), T = %.3g", st.sm_temperature);
    fp.title = title;
    fp.formula = "p_s = exp((z_s − max z) / T) / Σ_j exp((z_j − max z) / T) over visible keys; masked keys get 0. "
                 "T < 1 sharpens, T > 1 flattens; dots: T = 1.";
    fp.x.label = "key";
    fp.y.label = "probability";
    fp.y.min = 0;
    double ptop = 0;
    for (int s = 0; s < S; ++s) ptop = std::max({ptop, pv[size_t(s)], p1v[size_t(s)]});
    fp.y.max = std::min(1.05, std::max(0.02, ptop * 1.15));
    if (show_cats) fp.x.categories = labels;
    fp.series.push_back(bars(pv, gfx::palette(2), "T = " + plot::format_value(st.sm_temperature)));
    fp.series.back().point_labels = labels;
    plot::Series d;
    d.kind = plot::SeriesKind::Scatter;
    d.name = "T = 1";
    d.color = gfx::palette(1);
    for (int s = 0; s < S; ++s) {
        d.x.push_back(s);
        d.y.push_back(p1v[size_t(s)]);
    }
    fp.series.push_back(d);
    gfx::draw_figure(fp, ImVec2(avail_w * 0.5f - 4, plot_h), {}, "sm_probs");

    // Entropy against temperature.
    plot::Figure fe;
    fe.title = "Entropy against temperature";
    fe.formula = "H(T) = −Σ p_s ln p_s with p = softmax(z / T): 0 for one-hot (T → 0), ln(#visible) for uniform (T → ∞)";
    fe.x.label = "temperature T";
    fe.x.log = true;
    fe.y.label = "entropy H";
    fe.y.unit = "nats";
    plot::Series ce;
    ce.color = gfx::palette(4);
    for (int i = 0; i <= 80; ++i) {
        const float t = 0.05f * std::pow(200.0f, float(i) / 80.0f);
        const MatrixRM pt = softmax_rows(row, t);
        ce.x.push_back(t);
        ce.y.push_back(entropy_nats(std::span<const float>(pt.data(), size_t(S))));
    }
    fe.series.push_back(ce);
    plot::Series cur;
    cur.kind = plot::SeriesKind::Scatter;
    cur.color = plot::Rgba{0.9f, 0.3f, 0.3f, 1};
    cur.marker = 6;
    cur.x = {st.sm_temperature};
    cur.y = {H};
    fe.series.push_back(cur);
    if (n_visible > 0) fe.ref_lines.push_back({false, std::log(double(n_visible)), "ln(#visible)", plot::Rgba{0.5f, 0.5f, 0.5f, 1}});
    gfx::draw_figure(fe, ImVec2(avail_w * 0.5f - 4, std::max(line_h * 10, ImGui::GetContentRegionAvail().y)), {}, "sm_entropy");
    ImGui::SameLine();

    // Stable-softmax demo.
    ImGui::BeginChild("stable", ImVec2(0, 0), true);
    ImGui::TextUnformatted("Why subtract the max? softmax([1000, 1001, 2000])");
    MatrixRM demo(1, 3);
    demo << 1000.0f, 1001.0f, 2000.0f;
    const MatrixRM naive = naive_softmax_rows(demo);
    const MatrixRM stable = softmax_rows(demo);
    if (ImGui::BeginTable("stable_tbl", 4, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg)) {
        ImGui::TableSetupColumn("x");
        ImGui::TableSetupColumn("exp(x) (float32)");
        ImGui::TableSetupColumn("naive exp(x)/Σexp");
        ImGui::TableSetupColumn("stable exp(x−max)/Σ");
        ImGui::TableHeadersRow();
        for (int i = 0; i < 3; ++i) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::Text("%.0f", demo(0, i));
            ImGui::TableNextColumn();
            ImGui::Text("%s", plot::format_value(std::exp(demo(0, i))).c_str());
            ImGui::TableNextColumn();
            ImGui::Text("%s", plot::format_value(naive(0, i)).c_str());
            ImGui::TableNextColumn();
            ImGui::Text("%s", plot::format_value(stable(0, i)).c_str());
        }
        ImGui::EndTable();
    }
    ImGui::TextWrapped("float32 overflows past exp(88.7) ≈ 3.4e38: the naive formula divides inf by inf and gets NaN. "
                       "Subtracting the row max first (x − 2000 → −1000, −999, 0) gives the same probabilities without "
                       "overflow: softmax(x) = softmax(x − c) for any constant c.");
    ImGui::Separator();
    ImGui::TextUnformatted("The current row, both ways:");
    const MatrixRM nr = naive_softmax_rows(row);
    int n_nan = 0;
    for (int s = 0; s < S; ++s) n_nan += std::isnan(nr(0, s)) ? 1 : 0;
    ImGui::Text("naive: %d NaN of %d   ·   stable: sums to %.6f", n_nan, S, double(p.sum()));
    ImGui::EndChild();
}

}  // namespace ts::ui
