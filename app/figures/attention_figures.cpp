// Attention figures: the selected head's weights, thumbnails, head grids and the five-step view; plus the shared
// helpers (token labels, head slices, layer / head / query clamping).
#include "app/i18n/tr.h"
#include "app/figures/figures.h"

#include "app/plot/ticks.h"
#include "core/kernels/attention_rows.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace ts::figures {

namespace {
std::vector<std::string> piece_labels(const TokenizedText* t, bool with_index) {
    std::vector<std::string> out;
    if (!t) return out;
    for (size_t i = 0; i < t->pieces.size(); ++i) {
        const std::string& l = t->pieces[i].label;
        out.push_back(with_index ? std::to_string(i) + ":" + l : l);
    }
    return out;
}
}  // namespace

std::vector<std::string> snapshot_token_labels(const Snapshot& s, bool with_index) {
    return piece_labels(s.tokens.get(), with_index);
}
std::vector<std::string> snapshot_source_labels(const Snapshot& s, bool with_index) {
    return piece_labels(s.source_tokens ? s.source_tokens.get() : s.tokens.get(), with_index);
}

std::vector<float> tensor_head_slice(const Tensor* t, int head, int* rows, int* cols) {
    if (!t || t->rank() != 3 || head < 0 || head >= t->dim(0)) {
        *rows = *cols = 0;
        return {};
    }
    *rows = int(t->dim(1));
    *cols = int(t->dim(2));
    const size_t n = size_t(*rows) * size_t(*cols);
    return std::vector<float>(t->data.begin() + ptrdiff_t(n * size_t(head)), t->data.begin() + ptrdiff_t(n * size_t(head + 1)));
}

int clamp_layer(const UiState& st, const Model* m) {
    const int n = m ? m->config().n_layers : 1;
    return std::clamp(st.layer, 0, std::max(0, n - 1));
}
int clamp_head(const UiState& st, const Model* m) {
    const int n = m ? m->config().n_heads : 1;
    return std::clamp(st.head, 0, std::max(0, n - 1));
}
int resolve_query(const UiState& st, int T) {
    if (T <= 0) return 0;
    return st.query < 0 ? T - 1 : std::min(st.query, T - 1);
}

bool has_attention_sources(const Snapshot& s) { return s.model && s.model->config().arch == Arch::EncoderDecoder; }

std::string attention_prefix(const Snapshot& s, AttnSource source, int layer) {
    const std::string l = std::to_string(layer);
    if (has_attention_sources(s)) {
        if (source == AttnSource::Encoder) return "enc." + l + ".attn.";
        if (source == AttnSource::Cross) return "dec." + l + ".cross_attn.";
    }
    return s.stack() + "." + l + ".attn.";
}

int attention_layers(const Snapshot& s, AttnSource source) {
    if (!s.model) return 0;
    const ModelConfig& c = s.model->config();
    return has_attention_sources(s) && source == AttnSource::Encoder ? c.n_enc_layers : c.n_layers;
}

std::string attention_source_title(const Snapshot& s, AttnSource source) {
    if (!has_attention_sources(s)) return "";
    if (source == AttnSource::Encoder) return tr("encoder self-attention");
    if (source == AttnSource::Cross) return tr("cross-attention");
    return tr("decoder self-attention");
}

namespace {

// Axis names of a query × key heatmap for the source.
struct AxisNames {
    std::string rows, cols;
};
AxisNames axis_names(const Snapshot& s, AttnSource source, bool short_names) {
    if (has_attention_sources(s)) {
        if (source == AttnSource::Cross)
            return short_names ? AxisNames{tr("query (target)"), tr("key (source)")}
                               : AxisNames{tr("decoder (target) token, query"), tr("encoder (source) token, key")};
        if (source == AttnSource::Encoder)
            return short_names ? AxisNames{tr("query (source)"), tr("key (source)")}
                               : AxisNames{tr("encoder (source) token, query"), tr("encoder (source) token, key")};
        return short_names ? AxisNames{tr("query (target)"), tr("key (target)")}
                           : AxisNames{tr("decoder (target) token, query"), tr("decoder (target) token, key")};
    }
    return short_names ? AxisNames{tr("query"), tr("key")} : AxisNames{tr("query token"), tr("key token")};
}

// Query (row) and key (column) labels of the source's attention: encoder self-attention source × source,
// cross-attention target × source, decoder self-attention target × target.
struct AxisLabels {
    std::vector<std::string> rows, cols;
};
AxisLabels attention_labels(const Snapshot& s, AttnSource source) {
    AxisLabels a;
    const bool enc_dec = has_attention_sources(s);
    a.rows = enc_dec && source == AttnSource::Encoder ? snapshot_source_labels(s) : snapshot_token_labels(s);
    a.cols = enc_dec && source != AttnSource::Decoder ? snapshot_source_labels(s) : snapshot_token_labels(s);
    return a;
}

// Longest side of an attention heatmap drawn cell for cell; a longer sequence gets a pooled overview.
constexpr int kOverviewSide = 256;
// The layer x head grid's thumbnails of a longer sequence pool to this side: they are drawn at most about 5 text lines
// (under 100 px) wide, and each of the L x H overviews is kept as values, colours and a texture (#30: at 256 the
// thumbnails of a 24 x 14-head model held about 0.4 GB).
constexpr int kThumbSide = 96;
// An attention entry up to this size is built whole once and sliced by every frame.
constexpr size_t kKeepWholeBytes = size_t(32) << 20;

// One head of an attention entry (scores, scores_scaled, scores_masked or probs) as the figure shows it. With the
// block's AttentionRows (every forward that records attention keeps one) only this head is computed and the (H, T, S)
// entry never exists; above kOverviewSide positions, blocks of step × step cells are pooled (max), computed a few rows
// at a time. Masked cells come from the mask rule. Other entries (head_out) are sliced from the tensor.
struct HeadValues {
    std::vector<float> values;
    std::vector<uint8_t> masked;
    int rows = 0, cols = 0, row_step = 1, col_step = 1;
    int T = 0, S = 0;  ///< the full matrix's rows and columns
    int row0 = 0, col0 = 0;  ///< a zoom window's first row and column (0 otherwise)
};

// A full-resolution window of a long sequence: rows [row0, row0 + kOverviewSide) × cols [col0, …), clamped.
struct ZoomWindow {
    int row0 = -1, col0 = -1;
};

HeadValues head_values(const Snapshot& s, const std::string& name, int head, ZoomWindow zoom = {},
                       int side = kOverviewSide) {
    HeadValues hv;
    using Kind = AttentionRows::Kind;
    std::string block;
    const std::optional<Kind> kind = attention_entry_kind(name, &block);
    const std::shared_ptr<const AttentionRows> rows = kind && s.trace ? s.trace->attention(block) : nullptr;
    if (!rows || head < 0 || head >= rows->n_heads() || !s.trace->contains(name)) {
        hv.values = tensor_head_slice(s.find(name), head, &hv.rows, &hv.cols);
        return hv;
    }
    const int T = rows->n_queries(), S = rows->n_keys();
    hv.T = T;
    hv.S = S;
    // Weights the mask removed, for the cells [r0, r0 + hv.rows) × [c0, c0 + hv.cols) (from the mask rule).
    const auto mask_cells = [&](int r0, int c0) {
        if (*kind != Kind::Probs || !rows->mask().masks_anything()) return;
        hv.masked.resize(size_t(hv.rows) * hv.cols);
        for (int t = 0; t < hv.rows; ++t)
            rows->mask().masked_cells(r0 + t, c0, hv.cols, &hv.masked[size_t(t) * hv.cols]);
    };
    if ((T > kOverviewSide || S > kOverviewSide) && zoom.row0 >= 0 && zoom.col0 >= 0) {
        const int r0 = std::clamp(zoom.row0, 0, std::max(0, T - kOverviewSide)), r1 = std::min(T, r0 + kOverviewSide);
        const int c0 = std::clamp(zoom.col0, 0, std::max(0, S - kOverviewSide)), c1 = std::min(S, c0 + kOverviewSide);
        int n = 0, w = 0;
        const std::vector<float> band = trace_head_rows(*s.trace, name, head, &n, &w, r0, r1);
        if (n != r1 - r0 || w != S) return hv;
        hv.rows = n;
        hv.cols = c1 - c0;
        hv.values.reserve(size_t(hv.rows) * hv.cols);
        for (int t = 0; t < n; ++t)
            hv.values.insert(hv.values.end(), band.begin() + ptrdiff_t(size_t(t) * S + c0),
                             band.begin() + ptrdiff_t(size_t(t) * S + c1));
        mask_cells(r0, c0);
        hv.row0 = r0;
        hv.col0 = c0;
        return hv;
    }
    if (T <= kOverviewSide && S <= kOverviewSide) {
        // Small enough to keep: the entry is computed once (every head) and kept by the trace, so the frames that
        // redraw it read a slice; the on-demand path would recompute the head every frame.
        if (rows->full_bytes() <= kKeepWholeBytes)
            hv.values = tensor_head_slice(s.find(name), head, &hv.rows, &hv.cols);
        else
            hv.values = trace_head_rows(*s.trace, name, head, &hv.rows, &hv.cols);
        mask_cells(0, 0);
        return hv;
    }
    // Computed once per head (the block keeps it), then every frame copies the small overview.
    const std::shared_ptr<const AttentionRows::Pooled> pp =
        rows->pooled_cached(*kind, head, side, side, AttentionRows::Pool::Max);
    const AttentionRows::Pooled& p = *pp;
    hv.values = p.values;
    if (*kind == Kind::Probs && rows->mask().masks_anything()) hv.masked = p.masked;
    hv.rows = p.rows;
    hv.cols = p.cols;
    hv.row_step = p.row_step;
    hv.col_step = p.col_step;
    return hv;
}

plot::Figure head_figure(const Snapshot& s, const std::string& name, int head, const std::string& title,
                         plot::Colormap cmap, const std::string& value_label, bool zero_to_max, ZoomWindow zoom = {},
                         int side = kOverviewSide) {
    plot::Figure f;
    f.title = title;
    HeadValues hv = head_values(s, name, head, zoom, side);
    if (hv.rows == 0) return f;
    const bool pooled = hv.row_step > 1 || hv.col_step > 1;
    f.heatmap = plot::make_heatmap(hv.rows, hv.cols, hv.values,
                                   cmap, pooled ? trf("%s (block max)", value_label.c_str()) : value_label);
    if (zero_to_max) f.heatmap->vmin = 0.0f;
    f.heatmap->masked = std::move(hv.masked);  // masked weights: gray, not dark purple
    f.heatmap->row_name = pooled ? trf("query block (%d tokens)", hv.row_step) : tr("query");
    f.heatmap->col_name = pooled ? trf("key block (%d tokens)", hv.col_step) : tr("key");
    f.heatmap->row_step = hv.row_step;
    f.heatmap->col_step = hv.col_step;
    f.heatmap->row0 = hv.row0;
    f.heatmap->col0 = hv.col0;
    if (pooled)
        f.note = trf("overview of %d x %d tokens: each cell is the largest value in a block of %d x %d tokens", hv.T,
                     hv.S, hv.row_step, hv.col_step);
    else if (hv.row0 > 0 || hv.col0 > 0 || hv.rows < hv.T || hv.cols < hv.S)
        f.note = trf("full resolution: queries %d-%d, keys %d-%d of %d x %d", hv.row0, hv.row0 + hv.rows - 1, hv.col0,
                     hv.col0 + hv.cols - 1, hv.T, hv.S);
    return f;
}

// A pooled overview's axes count blocks, not tokens: say so (after the caller's own labels, which name tokens).
void overview_axes(plot::Figure& f) {
    if (!f.heatmap || (f.heatmap->row_step == 1 && f.heatmap->col_step == 1)) return;
    f.x.categories.clear();
    f.y.categories.clear();
    f.x.label = trf("key position / %d", f.heatmap->col_step);
    f.y.label = trf("query position / %d", f.heatmap->row_step);
}

std::string probs_name(const Snapshot& s, int layer, AttnSource source) {
    return attention_prefix(s, source, layer) + "probs";
}

}  // namespace

plot::Figure attention_head_figure(const Snapshot& s, int layer, int head, const UiState& st) {
    AttnSource src = st.attn_source;
    const std::string what = attention_source_title(s, src);
    plot::Figure big = head_figure(s, probs_name(s, layer, src), head,
                                   what.empty() ? trf("Attention weights, layer %d, head %d", layer, head)
                                                : trf("Attention weights (%s), layer %d, head %d", what.c_str(), layer, head),
                                   plot::Colormap::Viridis, tr("attention weight"), true,
                                   ZoomWindow{st.attn_zoom_row, st.attn_zoom_col});
    if (!big.heatmap) return big;
    AxisLabels labels = attention_labels(s, src);
    const auto window = [](std::vector<std::string>& v, int first, int n) {  // a zoom window's tokens
        if (first + n <= int(v.size())) v = std::vector<std::string>(v.begin() + first, v.begin() + first + n);
    };
    if (big.heatmap->row_step == 1 && int(labels.rows.size()) > big.heatmap->rows)
        window(labels.rows, big.heatmap->row0, big.heatmap->rows);
    if (big.heatmap->col_step == 1 && int(labels.cols.size()) > big.heatmap->cols)
        window(labels.cols, big.heatmap->col0, big.heatmap->cols);
    if (st.attn_unit_scale) big.heatmap->vmax = 1.0f;
    big.heatmap->annotate = st.attn_annotate;
    big.view = "attention";
    big.formula = tr("A = softmax(Q Kᵀ / √d_head + M) — row t holds how much query token t reads from each key token; "
                  "each row sums to 1. M is the mask (−∞ where attending is forbidden): those weights are exactly 0 and drawn "
                  "grey, so a masked key and one the head learned to ignore look different.");
    const AxisNames ax = axis_names(s, src, false);
    big.x.label = ax.cols;
    big.y.label = ax.rows;
    if (int(labels.cols.size()) == big.heatmap->cols) big.x.categories = labels.cols;
    if (int(labels.rows.size()) == big.heatmap->rows) big.y.categories = labels.rows;
    if (has_attention_sources(s) && src == AttnSource::Cross)
        big.formula = tr("A = softmax(Q_dec K_encᵀ / √d_head) — row t: how much decoder (target) token t reads from each "
                      "encoder (source) token; each row sums to 1. No causal mask: every target token sees the whole "
                      "source.");
    if (s.temperature != 1.0f)
        big.note += (big.note.empty() ? "" : " · ") + trf("temperature %s applied", plot::format_value(s.temperature).c_str());
    if (!big.heatmap->masked.empty())
        big.note += (big.note.empty() ? "" : " · ") + std::string(tr("grey: masked (weight exactly 0)"));
    overview_axes(big);
    return big;
}

std::string forward_settings_label(const UiState& st) {
    std::vector<std::string> parts;
    if (st.apply_to_model) {
        if (st.attn_temperature != 1.0f)
            parts.push_back(trf("temperature %s", plot::format_value(st.attn_temperature).c_str()));
        switch (st.attn_mask) {
        case MaskChoice::Causal: break;
        case MaskChoice::None: parts.push_back(tr("no mask")); break;
        case MaskChoice::Padding: parts.push_back(trf("padding mask (%d)", st.attn_padding)); break;
        case MaskChoice::Sliding: parts.push_back(trf("sliding-window mask (%d)", st.attn_window)); break;
        case MaskChoice::Custom: parts.push_back(tr("painted mask")); break;
        }
    }
    const char* how = tr(name_of(st.ablate_mode));  // as the window's ablation banner names it
    if (!st.ablated_heads.empty())
        parts.push_back(st.ablated_heads.size() == 1
                            ? trf("L%d H%d ablated (%s)", st.ablated_heads[0][0], st.ablated_heads[0][1], how)
                            : trf("%d heads ablated (%s)", int(st.ablated_heads.size()), how));
    if (parts.empty()) return tr("the model as trained");
    std::string out = parts[0];
    for (size_t i = 1; i < parts.size(); ++i) out += " · " + parts[i];
    return out;
}

std::vector<plot::Figure> attention_ab_figures(const Snapshot& a, const Snapshot& b, int layer, int head,
                                               const UiState& st, const std::string& label_a,
                                               const std::string& label_b) {
    const auto ids = [](const std::shared_ptr<const TokenizedText>& t) { return t ? t->ids : std::vector<int>{}; };
    if (a.model != b.model) throw std::invalid_argument(tr("A and B are forwards of different models"));
    if (ids(a.tokens) != ids(b.tokens) || ids(a.source_tokens) != ids(b.source_tokens))
        throw std::invalid_argument(tr("A and B are forwards of different texts"));
    UiState shown = st;
    shown.attn_annotate = false;  // three heatmaps side by side: too narrow for numbers
    plot::Figure fa = attention_head_figure(a, layer, head, shown), fb = attention_head_figure(b, layer, head, shown);
    if (!fa.heatmap || !fb.heatmap || fa.heatmap->values.size() != fb.heatmap->values.size())
        throw std::invalid_argument(trf("no attention weights of layer %d head %d in both forwards", layer, head));
    plot::Heatmap& ha = *fa.heatmap;
    plot::Heatmap& hb = *fb.heatmap;
    const float vmax = std::max(ha.vmax, hb.vmax);  // one range, so equal colours mean equal weights
    ha.vmax = hb.vmax = vmax;
    ha.vmin = hb.vmin = 0;
    plot::Figure fd = fb;
    plot::Heatmap& hd = *fd.heatmap;
    float big = 0;
    for (size_t k = 0; k < hd.values.size(); ++k) {
        hd.values[k] = hb.values[k] - ha.values[k];
        if (std::isfinite(hd.values[k])) big = std::max(big, std::abs(hd.values[k]));
    }
    hd.masked.clear();
    if (!ha.masked.empty() && !hb.masked.empty()) {
        hd.masked.resize(hd.values.size());
        for (size_t k = 0; k < hd.masked.size(); ++k) hd.masked[k] = uint8_t(ha.masked[k] && hb.masked[k]);
    }
    hd.cmap = plot::Colormap::Diverging;
    // At least ±0.01, so rounding noise (1e-8) between equal settings stays white; a hair more, so the colorbar's
    // ±0.01 ticks fall inside the range (0.01f is just below the tick's 0.01).
    big = std::max(big, 0.0101f);
    hd.vmin = -big;
    hd.vmax = big;
    hd.value_label = tr("weight difference");
    fa.title = trf("A: %s", label_a.c_str());
    fb.title = trf("B: %s", label_b.c_str());
    fd.title = trf("B − A, layer %d head %d", layer, head);
    fd.formula =
        tr("B − A: red where the weight grew under B's settings, blue where it shrank; each row of A and of "
           "B sums to 1, so each row of B − A sums to 0.");
    fd.note = tr("grey: masked in both");
    if (hd.row_step > 1 || hd.col_step > 1)
        fd.note += " · " +
            std::string(tr("overview: the difference of A's and B's block maxima; click a block in the "
                           "big heatmap for exact cells"));
    for (plot::Figure* f : {&fa, &fb, &fd}) f->view = "attention-ab";
    return {fa, fb, fd};
}

bool attention_overview_pooled(const Snapshot& s, int layer, AttnSource source) {
    const std::shared_ptr<const AttentionRows> rows =
        s.trace ? s.trace->attention(attention_prefix(s, source, layer)) : nullptr;
    return rows && (rows->n_queries() > kOverviewSide || rows->n_keys() > kOverviewSide);
}

void warm_attention_overview(const Snapshot& s, int layer, int head, AttnSource source, bool step_kinds) {
    const std::shared_ptr<const AttentionRows> rows =
        s.trace ? s.trace->attention(attention_prefix(s, source, layer)) : nullptr;
    if (!rows || head < 0 || head >= rows->n_heads() || !attention_overview_pooled(s, layer, source)) return;
    // The same requests as head_values' overviews, so that the figures find them in the cache: the thumbnail's, and
    // for the selected head the big heatmap's and the step view's.
    (void)rows->pooled_cached(AttentionRows::Kind::Probs, head, kThumbSide, kThumbSide, AttentionRows::Pool::Max);
    if (step_kinds)
        for (const auto& [suffix, kind] : kAttentionEntries)
            (void)rows->pooled_cached(kind, head, kOverviewSide, kOverviewSide, AttentionRows::Pool::Max);
}

plot::Figure attention_thumb_figure(const Snapshot& s, int layer, int head, bool unit_scale, AttnSource source) {
    plot::Figure f = head_figure(s, probs_name(s, layer, source), head, "", plot::Colormap::Viridis,
                                 tr("attention weight"), true, {}, kThumbSide);
    if (f.heatmap && unit_scale) f.heatmap->vmax = 1.0f;
    f.view = "attention";
    if (f.heatmap) {  // hovering a thumbnail names the tokens, not only their positions
        const AxisLabels labels = attention_labels(s, source);
        if (int(labels.cols.size()) == f.heatmap->cols) f.x.categories = labels.cols;
        if (int(labels.rows.size()) == f.heatmap->rows) f.y.categories = labels.rows;
    }
    overview_axes(f);
    return f;
}

std::vector<plot::Figure> attention_head_grid(const Snapshot& s, int layer, bool grid_all, AttnSource source) {
    std::vector<plot::Figure> out;
    if (!s.model) return out;
    const ModelConfig& c = s.model->config();
    const AxisLabels labels = attention_labels(s, source);
    const AxisNames ax = axis_names(s, source, true);
    const int l0 = grid_all ? 0 : layer, l1 = grid_all ? attention_layers(s, source) : layer + 1;
    for (int l = l0; l < l1; ++l)
        for (int h = 0; h < c.n_heads; ++h) {
            plot::Figure f = head_figure(s, probs_name(s, l, source), h, trf("layer %d, head %d", l, h),
                                         plot::Colormap::Viridis, tr("attention weight"), true);
            if (!f.heatmap) continue;
            f.heatmap->vmax = 1.0f;  // one color scale for every head so they compare
            f.view = grid_all ? "attention-grid" : "attention-layer";
            f.formula = tr("A = softmax(Q Kᵀ / √d_head + M); rows: query tokens, columns: key tokens");
            f.square_cells = true;
            if (int(labels.rows.size()) == f.heatmap->rows) f.y.categories = labels.rows;
            size_t longest = 0;
            for (const auto& c : labels.cols) longest = std::max(longest, c.size());
            if (grid_all && (labels.cols.size() > 12 || longest > 8)) {
                // Many or long tokens in small cells: key positions (numbers) along the bottom, so the heatmaps keep
                // their size; short sentences get their tokens, as the single heatmap does.
                f.x.label = tr("key position");
            } else {
                f.x.label = ax.cols;
                f.y.label = ax.rows;
                if (int(labels.cols.size()) == f.heatmap->cols) f.x.categories = labels.cols;
            }
            overview_axes(f);
            out.push_back(std::move(f));
        }
    return out;
}

std::vector<plot::Figure> attention_step_figures(const Snapshot& s, int layer, int head, AttnSource source) {
    struct Step {
        const char* name;
        const char* title;
        const char* formula;
        plot::Colormap cmap;
        const char* value;
        bool labels_cols;
    };
    static const Step steps[] = {
        {"scores", "1. Q Kᵀ", TS_N_("scores[t, s] = q_t · k_s  (dot product of query t and key s; d_head terms)"),
         plot::Colormap::Diverging, TS_N_("score"), true},
        {"scores_scaled", "2. ÷ √d_head", TS_N_("scaled = scores / √d_head keeps the variance near 1 so softmax does not saturate"),
         plot::Colormap::Diverging, TS_N_("scaled score"), true},
        {"scores_masked", TS_N_("3. + mask"), TS_N_("masked = scaled + M, M = −∞ (grey) where key s is hidden from query t (causal: s > t)"),
         plot::Colormap::Diverging, TS_N_("masked score"), true},
        {"probs", "4. softmax", TS_N_("A[t, :] = softmax(masked[t, :] / temperature): exp, then divide by the row sum"),
         plot::Colormap::Viridis, TS_N_("weight"), true},
        {"head_out", "5. · V", TS_N_("head_out[t, :] = Σ_s A[t, s] v_s  (rows: query tokens, columns: d_head features)"),
         plot::Colormap::Diverging, TS_N_("value"), false},
    };
    const AxisLabels labels = attention_labels(s, source);
    const std::string pre = attention_prefix(s, source, layer);
    const AxisNames ax = axis_names(s, source, true);
    std::vector<plot::Figure> out;
    for (int k = 0; k < 5; ++k) {
        const Step& stp = steps[k];
        plot::Figure f = head_figure(s, pre + stp.name, head, tr(stp.title), stp.cmap, tr(stp.value), k == 3);
        f.formula = tr(stp.formula);
        if (k == 1 && s.trace && s.trace->find(pre + "position_bias")) {  // T5: no scaling, a bias per (j − i, head)
            f.title = tr("2. + relative position bias");
            f.formula = tr("scaled = scores + b_h[bucket(s − t)]: T5 adds a learned bias per head and relative distance "
                           "(shared by the stack's layers) and does not divide by √d_head");
            if (f.heatmap) f.heatmap->value_label = tr("score + bias");
        } else if (k == 1 && s.model && !s.model->config().scale_attn) {  // T5's cross-attention
            f.title = tr("2. not scaled");
            f.formula =
                tr("scaled = scores: T5 does not divide by √d_head (its query weights are initialised smaller "
                   "instead)");
        }
        f.view = "attention-steps";
        if (f.heatmap) {
            f.y.label = ax.rows;
            f.x.label = stp.labels_cols ? ax.cols : tr("feature");
            f.heatmap->col_name = stp.labels_cols ? tr("key") : tr("feature");
            if (int(labels.rows.size()) == f.heatmap->rows && labels.rows.size() <= 24) f.y.categories = labels.rows;
            if (stp.labels_cols && int(labels.cols.size()) == f.heatmap->cols && labels.cols.size() <= 24)
                f.x.categories = labels.cols;
        } else {
            f.note = s.attention_only ? trf("%s: not kept (long text)", stp.name) : trf("%s: not recorded", stp.name);
        }
        overview_axes(f);
        out.push_back(std::move(f));
    }
    return out;
}

plot::Figure tokens_figure(const Snapshot& s, bool source) {
    plot::Figure f;
    const TokenizedText* tt = source && s.source_tokens ? s.source_tokens.get() : s.tokens.get();
    f.title = source && s.source_tokens ? tr("Tokens of the source (encoder input): bytes per token")
                                        : tr("Tokens of the text: bytes per token");
    f.view = "tokens";
    f.formula = tr("The tokenizer splits the UTF-8 bytes of the text into tokens; each bar is one token (its id below the "
                "label on hover). Common words become one token; rare words and CJK characters (3 bytes each in UTF-8) "
                "split into several.");
    f.x.label = tr("token");
    f.y.label = tr("bytes");
    f.y.min = 0;
    plot::Series b;
    b.kind = plot::SeriesKind::Bars;
    b.color = plot::palette(0);
    b.bar_width = 0.75;
    if (tt) {
        for (size_t i = 0; i < tt->pieces.size(); ++i) {
            const TokenPiece& p = tt->pieces[i];
            f.x.categories.push_back(p.label);
            b.x.push_back(double(i));
            b.y.push_back(double(p.byte_end - p.byte_begin));
            b.point_labels.push_back("id " + std::to_string(p.id));
        }
        f.note = s.codec ? trf("%zu tokens, %zu bytes, tokenizer: %s", tt->ids.size(), tt->text.size(), s.codec->name().c_str())
                         : trf("%zu tokens, %zu bytes", tt->ids.size(), tt->text.size());
    }
    f.series.push_back(std::move(b));
    f.legend = false;
    return f;
}

}  // namespace ts::figures
