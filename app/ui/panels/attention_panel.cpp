// Attention panel: every layer × head as thumbnails (click to open), the selected head as a large heatmap (query
// tokens on rows, key tokens on columns), the step view QKᵀ → ÷√d_head → mask → softmax → ·V, and GQA sharing.
#include "app/gfx/painter.h"
#include "app/ui/panels/panels.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

namespace ts::ui {

namespace {

plot::Figure head_figure(const Snapshot& s, const std::string& name, int head, const std::string& title,
                         plot::Colormap cmap, const std::string& value_label, bool zero_to_max) {
    plot::Figure f;
    f.title = title;
    int rows = 0, cols = 0;
    const std::vector<float> v = head_slice(s.find(name), head, &rows, &cols);
    if (rows == 0) return f;
    f.heatmap = plot::make_heatmap(rows, cols, v, cmap, value_label);
    if (zero_to_max) f.heatmap->vmin = 0.0f;
    f.heatmap->row_name = "query";
    f.heatmap->col_name = "key";
    return f;
}

}  // namespace

void draw_attention_panel(PanelContext& ctx) {
    if (!ctx.snap || !ctx.snap->trace) return empty_message(ctx.snap && !ctx.snap->error.empty()
                                                                ? ctx.snap->error.c_str()
                                                                : "waiting for the first forward pass...");
    const Snapshot& s = *ctx.snap;
    const ModelConfig& c = s.model->config();
    const std::string st = s.stack();
    const int layer = current_layer(ctx), head = current_head(ctx);
    const int query = current_query(ctx);
    const std::vector<std::string> labels = token_labels(s);
    const std::string pre = st + "." + std::to_string(layer) + ".attn.";
    static bool unit_scale = false, annotate = true;

    // GQA line.
    const int group = c.n_heads / std::max(1, c.n_kv_heads);
    const int kv = head / std::max(1, group);
    if (c.n_kv_heads == c.n_heads) {
        ImGui::Text("MHA: %d heads, each with its own keys and values (d_head = %d)", c.n_heads, c.d_head());
    } else {
        ImGui::Text("%s: %d query heads share %d KV head%s (groups of %d). Head %d reads KV head %d together with heads %d–%d.",
                    c.n_kv_heads == 1 ? "MQA" : "GQA", c.n_heads, c.n_kv_heads, c.n_kv_heads == 1 ? "" : "s", group,
                    head, kv, kv * group, kv * group + group - 1);
    }
    ImGui::Checkbox("color scale 0–1", &unit_scale);
    ImGui::SameLine();
    ImGui::Checkbox("print weights in cells", &annotate);
    ImGui::SameLine();
    ImGui::TextDisabled("(hover a cell for the exact weight; click a thumbnail to open it)");

    const float avail_w = ImGui::GetContentRegionAvail().x;
    const float avail_h = ImGui::GetContentRegionAvail().y;
    const float line_h = ImGui::GetTextLineHeight();

    // Thumbnail grid (left).
    const int L = c.n_layers, H = c.n_heads;
    const float thumb = std::clamp((avail_h * 0.55f) / float(L) - line_h * 0.4f, line_h * 2.0f, line_h * 5.0f);
    const float grid_w = line_h * 2.2f + H * (thumb + 4);
    ImGui::BeginChild("grid", ImVec2(grid_w, avail_h * 0.6f), false);
    ImGui::TextDisabled("   ");
    for (int h = 0; h < H; ++h) {
        ImGui::SameLine(line_h * 2.2f + h * (thumb + 4) + thumb * 0.3f);
        ImGui::Text("H%d", h);
    }
    for (int l = 0; l < L; ++l) {
        ImGui::Text("L%d", l);
        for (int h = 0; h < H; ++h) {
            ImGui::SameLine(line_h * 2.2f + h * (thumb + 4));
            plot::Figure f = head_figure(s, st + "." + std::to_string(l) + ".attn.probs", h, "", plot::Colormap::Viridis,
                                         "attention weight", true);
            if (!f.heatmap) continue;
            if (unit_scale) f.heatmap->vmax = 1.0f;
            gfx::PaintOptions o;
            o.compact = true;
            o.selected = (l == layer && h == head);
            const std::string id = "thumb" + std::to_string(l) + "_" + std::to_string(h);
            const auto r = gfx::draw_figure(f, ImVec2(thumb, thumb), o, id.c_str());
            if (r.clicked) {
                ctx.state.layer = l;
                ctx.state.head = h;
            }
        }
    }
    ImGui::EndChild();
    ImGui::SameLine();

    // Large heatmap (right).
    plot::Figure big = head_figure(s, pre + "probs", head, "Attention weights, layer " + std::to_string(layer) + ", head " +
                                                               std::to_string(head), plot::Colormap::Viridis,
                                   "attention weight", true);
    if (big.heatmap) {
        if (unit_scale) big.heatmap->vmax = 1.0f;
        big.heatmap->annotate = annotate;
        big.formula = "A = softmax(Q Kᵀ / √d_head + M) — row t holds how much query token t reads from each key token; "
                      "each row sums to 1. M is the mask (−∞ where attending is forbidden, shown grey).";
        big.x.label = "key token";
        big.y.label = "query token";
        big.x.categories = labels;
        big.y.categories = labels;
        if (s.temperature != 1.0f) big.note = "temperature " + std::to_string(s.temperature) + " applied";
        gfx::PaintOptions o;
        o.highlight_row = query;
        const auto r = gfx::draw_figure(big, ImVec2(0, avail_h * 0.6f), o, "big");
        if (r.clicked && r.row >= 0) ctx.state.query = r.row;
    } else {
        ImGui::TextDisabled("no attention probabilities recorded for %s", (pre + "probs").c_str());
    }

    // Step view (below): five small heatmaps side by side.
    ImGui::Separator();
    ImGui::Text("Step view, layer %d head %d (KV head %d): Q Kᵀ  →  ÷ √d_head (= %.3g)  →  + mask  →  softmax  →  · V",
                layer, head, kv, std::sqrt(double(c.d_head())));
    struct Step {
        const char* name;
        const char* title;
        const char* formula;
        plot::Colormap cmap;
        const char* value;
        bool labels_cols;
    };
    const Step steps[] = {
        {"scores", "1. Q Kᵀ", "scores[t, s] = q_t · k_s  (dot product of query t and key s; d_head terms)",
         plot::Colormap::Diverging, "score", true},
        {"scores_scaled", "2. ÷ √d_head", "scaled = scores / √d_head keeps the variance near 1 so softmax does not saturate",
         plot::Colormap::Diverging, "scaled score", true},
        {"scores_masked", "3. + mask", "masked = scaled + M, M = −∞ (grey) where key s is hidden from query t (causal: s > t)",
         plot::Colormap::Diverging, "masked score", true},
        {"probs", "4. softmax", "A[t, :] = softmax(masked[t, :] / temperature): exp, then divide by the row sum",
         plot::Colormap::Viridis, "weight", true},
        {"head_out", "5. · V", "head_out[t, :] = Σ_s A[t, s] v_s  (rows: query tokens, columns: d_head features)",
         plot::Colormap::Diverging, "value", false},
    };
    const float sw = (avail_w - 4 * ImGui::GetStyle().ItemSpacing.x) / 5.0f;
    const float sh = std::max(line_h * 8, ImGui::GetContentRegionAvail().y - 4);
    for (int k = 0; k < 5; ++k) {
        if (k) ImGui::SameLine();
        const Step& stp = steps[k];
        plot::Figure f = head_figure(s, pre + stp.name, head, stp.title, stp.cmap, stp.value, k == 3);
        if (!f.heatmap) {
            ImGui::BeginChild(stp.name, ImVec2(sw, sh));
            ImGui::TextDisabled("%s: not recorded", stp.name);
            ImGui::EndChild();
            continue;
        }
        f.formula = stp.formula;
        f.y.label = "query";
        f.x.label = stp.labels_cols ? "key" : "feature";
        f.heatmap->col_name = stp.labels_cols ? "key" : "feature";
        if (int(labels.size()) == f.heatmap->rows && labels.size() <= 24) f.y.categories = labels;
        if (stp.labels_cols && int(labels.size()) == f.heatmap->cols && labels.size() <= 24) f.x.categories = labels;
        ImGui::BeginGroup();
        gfx::draw_figure(f, ImVec2(sw, sh), {}, stp.name);
        ImGui::EndGroup();
    }
}

}  // namespace ts::ui
