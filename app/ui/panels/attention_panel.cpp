// Attention panel: every layer × head as thumbnails (click to open), the selected head as a large heatmap (query
// tokens on rows, key tokens on columns), the step view QKᵀ → ÷√d_head → mask → softmax → ·V, and GQA sharing.
// Figures come from app/figures (shared with `render`).
#include "app/i18n/tr.h"
#include "app/gfx/painter.h"
#include "app/figures/figures.h"
#include "app/ui/panels/panels.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

namespace ts::ui {

namespace {
// Heatmaps side by side over the rest of the panel, all with the same query rows (the step view; A, B and B − A):
// the first labels the rows for the whole row and gets their width (at most `label_share` of the row) on top of an
// equal share; the others hide the labels and keep their width for the cells (hovering a cell still names its query
// token). A figure without a heatmap shows its note instead. `query` >= 0 outlines that query's row in each.
void draw_figure_row(std::vector<plot::Figure> figs, float label_share, const char* id, int query) {
    if (figs.empty()) return;
    const float avail_w = ImGui::GetContentRegionAvail().x, line_h = ImGui::GetTextLineHeight();
    float label_w = 0;
    for (const auto& t : figs[0].y.categories) label_w = std::max(label_w, ImGui::CalcTextSize(t.c_str()).x);
    label_w = std::min(label_w + line_h * 1.5f, avail_w * label_share);
    const float n = float(figs.size());
    const float w = (avail_w - (n - 1) * ImGui::GetStyle().ItemSpacing.x - label_w) / n;
    const float h = std::max(line_h * 8, ImGui::GetContentRegionAvail().y - 4);
    for (size_t k = 0; k < figs.size(); ++k) {
        if (k) ImGui::SameLine();
        const std::string fid = id + std::to_string(k);
        plot::Figure& f = figs[k];
        if (!f.heatmap) {
            ImGui::BeginChild(fid.c_str(), ImVec2(w, h));
            ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
            ImGui::TextWrapped("%s", f.note.c_str());  // within its slot: a long note was cut at the panel's edge
            ImGui::PopStyleColor();
            ImGui::EndChild();
            continue;
        }
        if (k > 0) f.y.show_labels = false;
        gfx::PaintOptions po;
        po.title_button = false;  // narrow: the title keeps the room; right-click exports
        if (query >= 0)
            po.highlight_row = f.heatmap->row_step > 1 ? query / f.heatmap->row_step : query - f.heatmap->row0;
        ImGui::BeginGroup();
        gfx::draw_figure(f, ImVec2(k == 0 ? w + label_w : w, h), po, fid.c_str());
        ImGui::EndGroup();
    }
}
}  // namespace

void draw_attention_panel(PanelContext& ctx) {
    if (!ctx.snap || !ctx.snap->trace) return empty_message(no_forward_message(ctx, tr("waiting for the first forward pass...")));
    const Snapshot& s = *ctx.snap;
    const ModelConfig& c = s.model->config();
    const AttnSource src = ctx.state.attn_source;
    const int L = std::max(1, attention_layers(s, src));
    const int layer = std::min(current_layer(ctx), L - 1), head = current_head(ctx);
    const int query = current_query(ctx);

    // Encoder–decoder: which attention to show.
    if (has_attention_sources(s)) {
        ImGui::TextUnformatted(tr("Show:"));
        const char* names[] = {tr("encoder self-attention"), tr("decoder self-attention (causal)"),
                               tr("cross-attention (decoder → encoder)")};
        const char* tips[] = {tr("enc.i.attn.probs: every source token reads every source token (no mask)"),
                              tr("dec.i.attn.probs: each target token reads the target tokens before it (causal mask)"),
                              tr("dec.i.cross_attn.probs: rows = decoder (target) tokens, columns = encoder (source) tokens; "
                                 "the queries come from the decoder, keys and values from the encoder output")};
        for (int k = 0; k < 3; ++k) {
            ImGui::SameLine();
            if (ImGui::RadioButton(names[k], src == kAttnSources[k])) ctx.state.attn_source = kAttnSources[k];
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tips[k]);
        }
        if (!s.source_tokens || s.source_tokens == s.tokens) {
            ImGui::SameLine();
            ImGui::TextDisabled("%s", tr("(the text is both source and target)"));
        }
    }

    // GQA line.
    const int group = c.n_heads / std::max(1, c.n_kv_heads);
    const int kv = head / std::max(1, group);
    if (c.n_kv_heads == c.n_heads) {
        ImGui::Text(tr("MHA: %d heads, each with its own keys and values (d_head = %d)"), c.n_heads, c.d_head());
    } else {
        if (c.n_kv_heads == 1)
            ImGui::Text(tr("MQA: %d query heads share one KV head. Head %d reads it together with heads %d–%d."),
                        c.n_heads, head, 0, c.n_heads - 1);
        else
            ImGui::Text(tr("GQA: %d query heads share %d KV heads (groups of %d). Head %d reads KV head %d together with heads %d–%d."),
                        c.n_heads, c.n_kv_heads, group, head, kv, kv * group, kv * group + group - 1);
    }
    ImGui::Checkbox(tr("color scale 0–1"), &ctx.state.attn_unit_scale);
    ImGui::SameLine();
    ImGui::Checkbox(tr("print weights in cells"), &ctx.state.attn_annotate);
    // A / B: keep this forward as A, change a setting, and compare the selected head under both (#33).
    AttentionPin* pin = ctx.attn_pin;
    if (pin && pin->snap && (!s.model || pin->snap->model != s.model)) pin->snap.reset();  // another model: gone
    if (pin) {
        ImGui::SameLine();
        if (!pin->snap) {
            if (ImGui::SmallButton(tr("pin these settings as A")) && ctx.snap_shared) {
                pin->snap = ctx.snap_shared;
                pin->label = forward_settings_label(ctx.state);
            }
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip("%s",
                                  tr("Keep this forward as A. Then change the temperature or the mask (Softmax "
                                     "lab, apply to the model) or ablate heads (Causal panel): below, the "
                                     "selected head is drawn under A, under the current settings (B), and B − A."));
        } else if (ImGui::SmallButton(tr("unpin A"))) {
            pin->snap.reset();
        }
    }
    // The hint on the same row when it fits there, else wrapped on its own (the pin button takes room at 1024 px).
    const char* hint =
        tr("(hover a cell for the exact weight; click a thumbnail to open it; right-click a plot to export)");
    ImGui::SameLine();
    if (ImGui::CalcTextSize(hint).x > ImGui::GetContentRegionAvail().x) ImGui::NewLine();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
    ImGui::TextWrapped("%s", hint);
    ImGui::PopStyleColor();

    const float avail_w = ImGui::GetContentRegionAvail().x;
    const float avail_h = ImGui::GetContentRegionAvail().y;
    const float line_h = ImGui::GetTextLineHeight();

    // Thumbnail grid (left).
    const int H = c.n_heads;
    // Thumbnails fit the height, and leave the big heatmap at least 45 % of the width (a long sequence's overview
    // and its full-resolution windows need room; a few layers of 8 heads used to squeeze it to a strip).
    const float thumb = std::max(line_h * 1.5f, std::min(std::clamp((avail_h * 0.55f) / float(L) - line_h * 0.4f,
                                                                    line_h * 2.0f, line_h * 5.0f),
                                                         (avail_w * 0.55f - line_h * 2.2f) / float(c.n_heads) - 4));
    // Many heads (a 1B Llama has 32): the thumbnails keep their smallest size and the grid scrolls sideways, so the
    // big heatmap still gets its 45 % (it was squeezed to a strip whose colorbar read "1 0 0 0 0").
    const float grid_full_w = line_h * 2.2f + H * (thumb + 4);
    const float grid_w = std::min(grid_full_w, std::max(avail_w * 0.55f, line_h * 2.2f + thumb + 4));
    ImGui::BeginChild("grid", ImVec2(grid_w, avail_h * 0.6f), false,
                      grid_full_w > grid_w ? ImGuiWindowFlags_HorizontalScrollbar : 0);
    ImGui::TextDisabled("   ");
    // Head labels wider than a thumbnail: every k-th head is labelled (H0, H2, ...), so they never run together.
    const int label_every = std::max(1, int(std::ceil((ImGui::CalcTextSize("H00").x + 4) / std::max(1.0f, thumb + 4))));
    for (int h = 0; h < H; h += label_every) {
        ImGui::SameLine(line_h * 2.2f + h * (thumb + 4) + thumb * 0.3f);
        ImGui::Text("H%d", h);
    }
    // The thumbnails change only with the forward, the attention source and the colour scale: built once for them,
    // not every frame (L x H figures with their token labels were half of a GPT-2-small frame). A long forward's
    // progressive snapshots (same id) share their finished layers' attention rows: only the new layers are built
    // (each overview of a long text reads its whole head).
    static struct {
        const Snapshot* snap = nullptr;  // with its id: a new snapshot at a reused address is still new
        uint64_t snap_id = 0;
        int layers_done = -1;
        AttnSource src = AttnSource::Decoder;
        bool unit_scale = false;
        std::string language;                    // the hover readout's words
        std::vector<plot::Figure> figs;          // layer-major, L x H
        std::vector<uint8_t> built;              // figs[k] is built (a long text's: once its overview was ready)
        std::vector<const AttentionRows*> rows;  // per layer: what its figures were built from
    } thumbs;
    const auto rows_of = [&](int l) {
        return s.trace ? s.trace->attention(attention_prefix(s, src, l)).get() : nullptr;
    };
    const bool same_forward = thumbs.snap_id == s.id && thumbs.src == src &&
        thumbs.unit_scale == ctx.state.attn_unit_scale && thumbs.language == i18n::language() &&
        thumbs.figs.size() == size_t(L) * size_t(H) && thumbs.rows.size() == size_t(L);
    if (!same_forward || thumbs.snap != &s || thumbs.layers_done != s.layers_done) {
        if (!same_forward) {
            thumbs.figs.assign(size_t(L) * size_t(H), plot::Figure{});
            thumbs.built.assign(size_t(L) * size_t(H), 0);
            thumbs.rows.assign(size_t(L), nullptr);
        }
        thumbs.snap = &s;
        thumbs.snap_id = s.id;
        thumbs.layers_done = s.layers_done;
        thumbs.src = src;
        thumbs.unit_scale = ctx.state.attn_unit_scale;
        thumbs.language = i18n::language();
        for (int l = 0; l < L; ++l) {
            const AttentionRows* rows = rows_of(l);
            if (same_forward && rows && rows == thumbs.rows[size_t(l)]) continue;  // the same finished layer
            thumbs.rows[size_t(l)] = rows;
            for (int h = 0; h < H; ++h) thumbs.built[size_t(l) * size_t(H) + size_t(h)] = 0;
        }
    }
    // A long text's overviews are computed off the UI thread (ctx.overviews): a thumbnail is built when its head's
    // is ready, the others wait with a placeholder. Without the jobs (benchmarks, tests) they are built here.
    for (int l = 0; l < L && !(s.layers_done > 0 && l >= s.layers_done); ++l)
        for (int h = 0; h < H; ++h) {
            const size_t k = size_t(l) * size_t(H) + size_t(h);
            if (thumbs.built[k]) continue;
            if (ctx.overviews && !ctx.overviews->ready(ctx.snap_shared, src, l, h)) continue;
            thumbs.figs[k] = attention_thumb_figure(s, l, h, thumbs.unit_scale, src);
            thumbs.built[k] = 1;
        }
    for (int l = 0; l < L; ++l) {
        if (s.layers_done > 0 && l >= s.layers_done) {  // a long forward still running: one line for the rest
            ImGui::TextDisabled(tr("L%d–L%d: being computed"), l, L - 1);
            break;
        }
        const float row_y = ImGui::GetCursorPosY();
        ImGui::Text("L%d", l);
        for (int h = 0; h < H; ++h) {
            ImGui::SameLine(line_h * 2.2f + h * (thumb + 4));
            ImGui::SetCursorPosY(row_y);  // thumbnails lower than a text line would otherwise step down one by one
            const plot::Figure& f = thumbs.figs[size_t(l) * size_t(H) + size_t(h)];
            if (!thumbs.built[size_t(l) * size_t(H) + size_t(h)]) {  // its overview is being computed
                const ImVec2 p = ImGui::GetCursorScreenPos();
                ImGui::GetWindowDrawList()->AddRect(p, ImVec2(p.x + thumb, p.y + thumb),
                                                    ImGui::GetColorU32(ImGuiCol_TextDisabled));
                ImGui::Dummy(ImVec2(thumb, thumb));
                if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr("computing this head's overview…"));
                continue;
            }
            if (!f.heatmap) continue;
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

    // Large heatmap (right). A long text's overview of the selected head is computed off the UI thread first.
    const bool big_ready = !ctx.overviews || (s.layers_done > 0 && layer >= s.layers_done) ||
        ctx.state.attn_zoom_row >= 0 || ctx.overviews->ready(ctx.snap_shared, src, layer, head, true);
    const plot::Figure big = big_ready ? attention_head_figure(s, layer, head, ctx.state) : plot::Figure{};
    if (!big_ready) {
        ImGui::TextDisabled(tr("computing the overview of layer %d, head %d…"), layer, head);
        if (ctx.keep_drawing) ctx.keep_drawing();
    } else if (big.heatmap) {
        const plot::Heatmap& hm = *big.heatmap;
        const bool overview = hm.row_step > 1 || hm.col_step > 1;
        const bool zoomed = !overview && (hm.row0 > 0 || hm.col0 > 0 || ctx.state.attn_zoom_row >= 0);
        float top = 0;
        if (zoomed || overview) {  // a long sequence: how to get in (click a block) and back out
            ImGui::BeginGroup();
            if (zoomed) {
                if (ImGui::SmallButton(tr("back to the overview")))
                    ctx.state.attn_zoom_row = ctx.state.attn_zoom_col = -1;
            } else {
                ImGui::TextDisabled("%s", tr("click a block to see its tokens at full resolution"));
            }
            top = ImGui::GetFrameHeightWithSpacing();
        }
        gfx::PaintOptions o;
        o.highlight_row = overview ? query / hm.row_step : query - hm.row0;
        const auto r = gfx::draw_figure(big, ImVec2(0, avail_h * 0.6f - top), o, "big");
        if (zoomed || overview) ImGui::EndGroup();
        if (r.clicked && r.row >= 0) {
            if (overview) {  // open the clicked block at full resolution, centred on it
                ctx.state.attn_zoom_row = std::max(0, r.row * hm.row_step + hm.row_step / 2 - 128);
                ctx.state.attn_zoom_col = std::max(0, std::max(r.col, 0) * hm.col_step + hm.col_step / 2 - 128);
                ctx.state.query = r.row * hm.row_step;
            } else {
                ctx.state.query = hm.row0 + r.row;
            }
        }
    } else if (s.layers_done > 0 && layer >= s.layers_done) {  // a long forward still running
        ImGui::TextWrapped(
            tr("Layer %d is still being computed (%d of %d layers done); click a thumbnail of a finished "
               "layer, or wait."),
            layer, s.layers_done, s.n_layers());
        return;
    } else {
        ImGui::TextDisabled(tr("no attention probabilities recorded for layer %d"), layer);
    }

    // A / B (below, in place of the step view while A is pinned): the selected head under two settings.
    ImGui::Separator();
    if (s.layers_done > 0) {  // a progressive snapshot holds the heads' weights only
        ImGui::TextDisabled("%s", tr("The step view follows when the whole model has run on this text."));
        return;
    }
    if (!big_ready) return;  // its score overviews are computed with the big heatmap's
    if (pin && pin->snap) {
        // Built when A, B, the head or what the figures show changes, not every frame (as the thumbnails).
        static struct {
            uint64_t a_id = 0, b_id = 0;
            const Snapshot *a = nullptr, *b = nullptr;
            int layer = -1, head = -1, zoom_row = -1, zoom_col = -1;
            AttnSource src = AttnSource::Decoder;
            bool unit_scale = false;
            std::string labels, language;
            std::vector<plot::Figure> figs;
            std::string why;
        } ab_cache;
        auto& k = ab_cache;
        const std::string label_b = forward_settings_label(ctx.state), labels = pin->label + "\n" + label_b;
        if (k.a != pin->snap.get() || k.a_id != pin->snap->id || k.b != &s || k.b_id != s.id || k.layer != layer ||
            k.head != head || k.zoom_row != ctx.state.attn_zoom_row || k.zoom_col != ctx.state.attn_zoom_col ||
            k.src != src || k.unit_scale != ctx.state.attn_unit_scale || k.labels != labels ||
            k.language != i18n::language()) {
            k.a = pin->snap.get(), k.a_id = pin->snap->id, k.b = &s, k.b_id = s.id, k.layer = layer, k.head = head;
            k.zoom_row = ctx.state.attn_zoom_row, k.zoom_col = ctx.state.attn_zoom_col, k.src = src;
            k.unit_scale = ctx.state.attn_unit_scale, k.labels = labels, k.language = i18n::language();
            k.figs.clear();
            k.why.clear();
            try {
                k.figs = attention_ab_figures(*pin->snap, s, layer, head, ctx.state, pin->label, label_b);
            } catch (const std::invalid_argument& e) {
                k.why = e.what();
            }
        }
        const std::vector<plot::Figure>& ab = k.figs;
        const std::string& why = k.why;
        ImGui::TextUnformatted(
            tr("A / B: one text, two settings of the model. Change a setting to see what it does to "
               "this head; the step view returns when A is unpinned."));
        if (!why.empty()) {
            ImGui::TextDisabled("%s — %s", why.c_str(), tr("pin A again on this text"));
        } else {
            draw_figure_row(ab, 0.15f, "ab", query);
            return;
        }
    }

    // Step view (below): five small heatmaps side by side.
    // The chain of steps this model computes: T5 adds a relative-position bias (self-attention) and never scales.
    std::string chain = trf("Step view, layer %d head %d (KV head %d): Q Kᵀ", layer, head, kv);
    if (s.trace && s.trace->find(attention_prefix(s, src, layer) + "position_bias"))
        chain += std::string("  →  ") + tr("+ relative position bias");
    else if (c.scale_attn) chain += "  →  " + trf("÷ √d_head (= %.3g)", std::sqrt(double(c.d_head())));
    chain += "  →  + mask  →  softmax  →  · V";
    ImGui::TextUnformatted(chain.c_str());
    draw_figure_row(attention_step_figures(s, layer, head, src), 0.2f, "step", -1);
}

}  // namespace ts::ui
