// Neuron and embedding-map figures (the Neurons panel, the Residual panel's map, `render`): the neuron × token heatmap
// of a layer, the top neurons at a token, one neuron over the text, its max-activating examples from a corpus, and
// PCA maps of the token embeddings and of the text's residual stream through the layers.
#include "app/i18n/tr.h"
#include "app/figures/figures.h"
#include "app/session/text_codec.h"
#include "core/interp/embedding_map.h"
#include "core/interp/neurons.h"
#include "core/util/utf8.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>

namespace ts::figures {

namespace {

std::string neuron_label(int layer, int neuron) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "L%d N%d", layer, neuron);
    return buf;
}

std::string value_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

// The activations of the neurons' stack at `layer` (clamped to it) in the snapshot, with the labels of its tokens.
struct LayerActs {
    const Tensor* acts = nullptr;
    std::vector<std::string> labels;
    int layer = 0;
    std::string stack;
};

LayerActs layer_acts(const Snapshot& s, int layer) {
    if (!s.model) throw std::runtime_error("no model");
    const ModelConfig& c = s.model->config();
    LayerActs a;
    a.stack = interp::neuron_stack(c);
    const int n = c.arch == Arch::EncoderDecoder ? c.n_enc_layers : c.n_layers;
    a.layer = std::clamp(layer, 0, std::max(0, n - 1));
    a.acts = &interp::neuron_activations(*s.trace, a.stack, a.layer, c.d_ff);
    a.labels = c.arch == Arch::EncoderDecoder ? snapshot_source_labels(s) : snapshot_token_labels(s);
    a.labels.resize(size_t(a.acts->rows()));
    return a;
}

std::string stack_words(const Snapshot& s) {
    return s.model && s.model->config().arch == Arch::EncoderDecoder ? tr(" (encoder)") : "";
}

// Latin-script, Chinese, or other: how the embedding map colours a token.
int script_of(const std::string& label) {
    bool latin = false;
    for (size_t i = 0; i < label.size();) {
        const Utf8Char ch = utf8_char_at(label, i);
        i += ch.len;
        if (!ch.valid()) continue;
        if ((ch.cp >= 0x4E00 && ch.cp <= 0x9FFF) || (ch.cp >= 0x3400 && ch.cp <= 0x4DBF)) return 1;
        if ((ch.cp >= 'a' && ch.cp <= 'z') || (ch.cp >= 'A' && ch.cp <= 'Z')) latin = true;
    }
    return latin ? 0 : 2;
}

}  // namespace

int selected_neuron(const UiState& st, const Snapshot& s, int layer, int position) {
    const LayerActs a = layer_acts(s, layer);
    if (st.neuron >= 0 && st.neuron < a.acts->cols()) return st.neuron;
    const int T = int(a.acts->rows());
    return interp::top_neurons_at(*a.acts, std::clamp(position, 0, T - 1), 1).front().neuron;
}

plot::Figure neuron_heatmap_figure(const Snapshot& s, int layer, int rows, std::vector<int>* row_neurons) {
    const LayerActs a = layer_acts(s, layer);
    const int T = int(a.acts->rows());
    // The first token has no context and, in many models, activations far beyond the others' (it serves as an
    // attention sink): it neither picks the rows nor sets the colour scale, where it may saturate.
    const int first = T >= 2 ? 1 : 0;
    std::vector<interp::NeuronValue> top = interp::most_active_neurons(*a.acts, rows, first);
    // With ReLU most neurons stay at 0 on a short text: rows that never fire would only fill the map.
    const size_t firing = size_t(std::count_if(top.begin(), top.end(), [](const auto& n) { return n.activation > 0; }));
    const bool dropped = firing > 0 && firing < top.size();
    if (dropped) top.resize(firing);
    std::vector<float> v;
    std::vector<std::string> names;
    if (row_neurons) row_neurons->clear();
    for (const interp::NeuronValue& n : top) {
        for (int t = 0; t < T; ++t) v.push_back(a.acts->mat()(t, n.neuron));
        names.push_back("N" + std::to_string(n.neuron));
        if (row_neurons) row_neurons->push_back(n.neuron);
    }
    plot::Figure f;
    f.title = trf("FFN neurons of layer %d%s: the %d most active on the text", a.layer, stack_words(s).c_str(),
                  int(top.size()));
    f.view = "neuron-heatmap";
    f.formula =
        tr("Each row is one neuron (a column of the FFN's hidden layer, the input of W_down): act(x W_upᵀ + b_up), "
           "or act(x W_gateᵀ)·(x W_upᵀ + b_up) when gated. Rows: the neurons whose largest activation on this text "
           "is largest. Click a cell to follow that neuron.");
    f.heatmap = plot::make_heatmap(int(top.size()), T, v, plot::Colormap::Diverging, tr("neuron activation"));
    float range = 0;
    for (size_t r = 0; r < top.size(); ++r)
        for (int t = first; t < T; ++t)
            if (std::isfinite(v[r * size_t(T) + size_t(t)]))
                range = std::max(range, std::abs(v[r * size_t(T) + size_t(t)]));
    if (range > 0) {
        f.heatmap->vmin = -range;
        f.heatmap->vmax = range;
    }
    f.heatmap->row_name = tr("neuron");
    f.heatmap->col_name = tr("token");
    f.y.label = tr("neuron");
    f.x.label = tr("token");
    f.y.categories = std::move(names);
    f.x.categories = a.labels;
    f.legend = false;
    f.note = trf("%d of d_ff = %d neurons shown", int(top.size()), int(a.acts->cols()));
    if (dropped) f.note += tr("; the others never rise above 0 on this text");
    if (first)
        f.note += tr("; rows and colour scale from tokens 1…T−1 (the first token, often an outlier, may saturate)");
    return f;
}

plot::Figure neuron_top_figure(const Snapshot& s, int layer, int position, int k) {
    const LayerActs a = layer_acts(s, layer);
    const int T = int(a.acts->rows());
    position = std::clamp(position, 0, T - 1);
    const std::vector<interp::NeuronValue> top = interp::top_neurons_at(*a.acts, position, k);
    plot::Figure f;
    f.title = trf("Top neurons of layer %d at token %d %s", a.layer, position,
                  quoted_token(a.labels[size_t(position)]).c_str());
    f.view = "neuron-top";
    f.formula = tr("The neurons with the largest activation at the selected token, largest first.");
    plot::Series bars;
    bars.kind = plot::SeriesKind::Bars;
    bars.color = plot::palette(4);
    for (size_t i = 0; i < top.size(); ++i) {
        bars.x.push_back(double(i));
        bars.y.push_back(top[i].activation);
        f.x.categories.push_back("N" + std::to_string(top[i].neuron));
        bars.point_labels.push_back(neuron_label(a.layer, top[i].neuron) + ": " + value_text(top[i].activation));
    }
    f.series.push_back(std::move(bars));
    f.x.label = tr("neuron");
    f.y.label = tr("neuron activation");
    f.legend = false;
    return f;
}

plot::Figure neuron_text_figure(const Snapshot& s, int layer, int neuron) {
    const LayerActs a = layer_acts(s, layer);
    if (neuron < 0 || neuron >= a.acts->cols())
        throw std::runtime_error("neuron " + std::to_string(neuron) +
                                 " outside [0, d_ff = " + std::to_string(a.acts->cols()) + ")");
    plot::Figure f;
    f.title = trf("Neuron %s over the text", neuron_label(a.layer, neuron).c_str());
    f.view = "neuron-text";
    f.formula =
        tr("The neuron's activation at every token of the text (each token sees only the tokens before it in a "
           "decoder).");
    plot::Series bars;
    bars.kind = plot::SeriesKind::Bars;
    for (int t = 0; t < a.acts->rows(); ++t) {
        const float v = a.acts->mat()(t, neuron);
        bars.x.push_back(t);
        bars.y.push_back(v);
        bars.point_labels.push_back(quoted_token(a.labels[size_t(t)]) + ": " + value_text(v));
    }
    bars.color = plot::palette(5);
    f.series.push_back(std::move(bars));
    f.x.categories = a.labels;
    f.x.label = tr("token");
    f.y.label = tr("neuron activation");
    f.legend = false;
    return f;
}

plot::Figure neuron_examples_figure(const interp::NeuronIndex& ix, const Model& m, const TextCodec& codec, int layer,
                                    int neuron, int before, int after) {
    if (layer < 0 || layer >= ix.n_layers || neuron < 0 || neuron >= ix.d_ff)
        throw std::runtime_error("neuron " + neuron_label(layer, neuron) + " is outside the index");
    const auto ex = ix.examples_of(layer, neuron);
    const int cols = before + 1 + after;
    std::vector<float> v;
    std::vector<std::string> text, rows;
    float vmax = 0;
    for (size_t i = 0; i < ex.size(); ++i) {
        const std::vector<int> ids = ix.chunk_ids(ex[i].chunk);
        // The chunk up to the shown window's end: the same activations the index ranked (a decoder's positions see
        // only what is before them, so the rest of the chunk changes nothing).
        const int end = std::min(int(ids.size()), ex[i].position + after + 1);
        const std::vector<int> head(ids.begin(), ids.begin() + end);
        const std::vector<float> acts =
            interp::neuron_activation_over(m, m.config().arch == Arch::DecoderOnly ? head : ids, layer, neuron);
        for (int c = 0; c < cols; ++c) {
            const int p = ex[i].position - before + c;
            if (p < 0 || p >= end) {
                v.push_back(NAN);
                text.emplace_back();
                continue;
            }
            v.push_back(acts[size_t(p)]);
            vmax = std::max(vmax, acts[size_t(p)]);
            text.push_back(printable_label(codec.label(ids[size_t(p)])));
        }
        rows.push_back("#" + std::to_string(i + 1) + "  " + value_text(ex[i].activation));
    }
    plot::Figure f;
    f.title = trf("Neuron %s: the %d contexts of the corpus where it fires most", neuron_label(layer, neuron).c_str(),
                  int(ex.size()));
    f.view = "neuron-examples";
    f.formula =
        trf("The corpus cut into chunks of %d tokens, one forward pass each; for every neuron the chunks with its "
            "largest activation (one per chunk; the first %d tokens of a chunk, with too little context, not "
            "ranked). Each row: the tokens around that peak (centre column), shaded by the neuron's activation.",
            ix.context, ix.min_position);
    plot::Heatmap h = plot::make_heatmap(int(ex.size()), cols, v, plot::Colormap::Magma, tr("neuron activation"));
    h.vmin = 0;
    h.vmax = vmax > 0 ? vmax : 1;
    h.cell_text = std::move(text);
    h.row_name = tr("example");
    h.col_name = tr("offset from the peak");
    f.heatmap = std::move(h);
    for (int c = 0; c < cols; ++c)
        f.x.categories.push_back(c == before ? "0" : (c < before ? "" : "+") + std::to_string(c - before));
    f.x.label = tr("offset from the peak");
    f.x.unit = tr("tokens");
    f.y.label = tr("example (peak activation)");
    f.y.categories = std::move(rows);
    f.legend = false;
    f.note = trf("%d chunks of %d tokens indexed", ix.n_chunks(), ix.context);
    return f;
}

// --- embedding maps ---------------------------------------------------------------------------------------------------

namespace {

struct EmbeddingPcaCache {
    std::mutex mu;
    std::map<const Model*, std::pair<std::weak_ptr<const Model>, std::shared_ptr<const interp::Pca>>> by_model;
};

std::string pc_axis(int i, double ratio) { return trf("PC%d (%.1f%% of variance)", i + 1, 100.0 * ratio); }

}  // namespace

std::shared_ptr<const interp::Pca> embedding_pca(const std::shared_ptr<const Model>& m) {
    static EmbeddingPcaCache cache;
    {
        std::lock_guard<std::mutex> lock(cache.mu);
        const auto it = cache.by_model.find(m.get());
        if (it != cache.by_model.end() && !it->second.first.expired()) return it->second.second;
    }
    auto p = std::make_shared<const interp::Pca>(interp::fit_pca(m->weight("tok_emb.weight").mat(), 2));
    std::lock_guard<std::mutex> lock(cache.mu);
    for (auto it = cache.by_model.begin(); it != cache.by_model.end();)
        it = it->second.first.expired() ? cache.by_model.erase(it) : std::next(it);
    cache.by_model[m.get()] = {m, p};
    return p;
}

plot::Figure embedding_map_figure(const Snapshot& s, const TextCodec& codec, const interp::Pca& p) {
    if (!s.model) throw std::runtime_error("no model");
    const Model& m = *s.model;
    const MatrixRM& emb = m.weight("tok_emb.weight").mat();
    const int V = int(emb.rows());
    plot::Figure f;
    f.title = trf("Token embeddings of %s on their first two principal components", m.config().name.c_str());
    f.view = "embedding-map";
    f.formula =
        tr("PCA of the token embedding matrix (vocab × d_model, rows centred): each dot is one token; tokens "
           "of the text are labelled. Hover a labelled token for its nearest neighbours by cosine similarity in "
           "the full d_model space (the 2-D map keeps only part of the distances).");
    // Every token, by script, at most ~6000 drawn (an even stride through the vocabulary).
    const int stride = std::max(1, V / 6000);
    const char* script_names[] = {TS_N_("Latin-script tokens"), TS_N_("Chinese tokens"), TS_N_("other tokens")};
    const plot::Rgba script_colors[] = {plot::palette(4), plot::palette(5), plot::Rgba{0.55f, 0.55f, 0.6f, 0.6f}};
    plot::Series by_script[3];
    int counts[3] = {0, 0, 0};
    for (int id = 0; id < V; id += stride) {
        const std::string label = printable_label(codec.label(id));
        const int sc = script_of(label);
        ++counts[sc];
        by_script[sc].x.push_back(p.projected(id, 0));
        by_script[sc].y.push_back(p.projected(id, 1));
        by_script[sc].point_labels.push_back(quoted_token(label) + " (id " + std::to_string(id) + ")");
    }
    for (int sc : {2, 0, 1}) {
        if (!counts[sc]) continue;
        plot::Series& se = by_script[sc];
        se.kind = plot::SeriesKind::Scatter;
        se.marker = 1.6f;
        se.color = script_colors[sc];
        if (sc != 2) se.color.a = 0.45f;
        se.name = trf("%s (%d)", tr(script_names[sc]), counts[sc]);
        f.series.push_back(std::move(se));
    }
    // The text's tokens, labelled, with their neighbours on hover.
    const TokenizedText* tt = s.source_tokens ? s.source_tokens.get() : s.tokens.get();
    if (tt) {
        plot::Series mine;
        mine.kind = plot::SeriesKind::Scatter;
        mine.marker = 5.0f;
        mine.color = plot::palette(1);
        mine.name = tr("tokens of the text");
        std::vector<int> seen;
        for (size_t i = 0; i < tt->ids.size() && seen.size() < 48; ++i) {
            const int id = tt->ids[i];
            if (id < 0 || id >= V || std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
            seen.push_back(id);
            const std::string label = printable_label(codec.label(id));
            std::string hover = quoted_token(label) + " — " + tr("nearest by cosine:");
            for (const interp::Neighbour& n : interp::nearest_by_cosine(emb, emb.row(id), 5, id))
                hover += " " + quoted_token(printable_label(codec.label(n.row))) + " " + value_text(n.cosine);
            mine.x.push_back(p.projected(id, 0));
            mine.y.push_back(p.projected(id, 1));
            mine.point_labels.push_back(std::move(hover));
            f.annotations.push_back({p.projected(id, 0), p.projected(id, 1), label});
        }
        if (!mine.x.empty()) f.series.push_back(std::move(mine));
    }
    f.x.label = pc_axis(0, p.explained_ratio[0]);
    f.y.label = pc_axis(1, p.explained_ratio[1]);
    f.note = stride > 1 ? trf("every %d-th of %d tokens drawn; the text's tokens always", stride, V) : "";
    return f;
}

plot::Figure residual_map_figure(const Snapshot& s) {
    if (!s.model || !s.trace) throw std::runtime_error("no forward pass");
    const ModelConfig& c = s.model->config();
    const std::string stack = interp::neuron_stack(c);
    const int L = c.arch == Arch::EncoderDecoder ? c.n_enc_layers : c.n_layers;
    const MatrixRM all = interp::residual_stack(*s.trace, stack, L);
    const int T_all = int(all.rows()) / (L + 1);
    // The first token's residual stream is usually an outlier (an attention sink, norms tens of times the others'):
    // left in, it takes the first component by itself and squeezes every other path into a line.
    const int first = T_all >= 3 ? 1 : 0;
    const int T = T_all - first;
    if (T * (L + 1) < 2) throw std::runtime_error("the residual-stream map needs at least two points");
    MatrixRM x(Eigen::Index(T) * (L + 1), all.cols());
    for (int l = 0; l <= L; ++l)
        x.middleRows(Eigen::Index(l) * T, T) = all.middleRows(Eigen::Index(l) * T_all + first, T);
    const interp::Pca p = interp::fit_pca(x, std::min<int>(2, int(x.cols())));
    const std::vector<std::string> labels =
        c.arch == Arch::EncoderDecoder ? snapshot_source_labels(s) : snapshot_token_labels(s);
    plot::Figure f;
    f.title = trf("Each token's residual stream through the %d layers%s (PCA)", L, stack_words(s).c_str());
    f.view = "residual-map";
    f.formula =
        tr("The residual stream of every token after the embedding (layer 0, small dot) and after each layer, "
           "all on the first two principal components of these (L + 1)·T vectors; a line joins one token's "
           "points in layer order, the big dot is the last layer.");
    for (int t = 0; t < T; ++t) {
        plot::Series line;
        line.color = plot::palette(t % 8);
        line.width = 1.5f;
        plot::Series end;
        end.kind = plot::SeriesKind::Scatter;
        end.color = line.color;
        end.marker = 4.5f;
        const std::string tok = t + first < int(labels.size()) ? labels[size_t(t + first)] : std::to_string(t + first);
        for (int l = 0; l <= L; ++l) {
            const double px = p.projected(l * T + t, 0), py = p.projected(l * T + t, 1);
            line.x.push_back(px);
            line.y.push_back(py);
            line.point_labels.push_back(quoted_token(tok) + " " +
                                        (l == 0 ? tr("embedding") : trf("after layer %d", l - 1)));
        }
        end.x.push_back(line.x.back());
        end.y.push_back(line.y.back());
        end.point_labels.push_back(line.point_labels.back());
        f.annotations.push_back({line.x.back(), line.y.back(), tok});
        plot::Series start;
        start.kind = plot::SeriesKind::Scatter;
        start.color = line.color;
        start.marker = 2.0f;
        start.x.push_back(line.x.front());
        start.y.push_back(line.y.front());
        start.point_labels.push_back(line.point_labels.front());
        f.series.push_back(std::move(line));
        f.series.push_back(std::move(start));
        f.series.push_back(std::move(end));
    }
    f.legend = false;
    f.x.label = pc_axis(0, p.explained_ratio[0]);
    f.y.label = pc_axis(1, p.explained_ratio[1]);
    if (first)
        f.note = trf("the first token %s is left out: its residual stream is an outlier that would take PC1 alone",
                     quoted_token(labels.empty() ? "" : labels[0]).c_str());
    return f;
}

}  // namespace ts::figures
