// Residual stream panel: the L2 norm of the residual stream after every sub-layer (per token and averaged); below it
// a choice of the token-embedding map (PCA of the embedding matrix, the text's tokens labelled), each token's path
// through the layers (PCA of the residual stream), or pre-norm against post-norm at random initialisation with many
// layers. The slow parts (PCA of a large vocabulary, the random-init runs) are computed off the UI thread.
#include "app/i18n/tr.h"
#include "app/gfx/painter.h"
#include "app/figures/figures.h"
#include "app/ui/panels/panels.h"

#include <imgui.h>

#include <chrono>
#include <future>

namespace ts::ui {

namespace {

void draw_prepost(PanelContext& ctx, float avail_w) {
    const float line_h = ImGui::GetTextLineHeight();
    static std::shared_future<NormCurves> fut;
    if (!fut.valid()) fut = std::async(std::launch::async, random_init_curves).share();
    if (fut.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        if (ctx.keep_drawing) ctx.keep_drawing();
        return empty_message(tr("computing the random-init comparison..."));
    }
    const NormCurves& nc = fut.get();
    if (!nc.error.empty()) return empty_message(nc.error.c_str());
    const float h2 = std::max(line_h * 10, ImGui::GetContentRegionAvail().y);
    const std::vector<plot::Figure> figs = prepost_norm_figures(nc);
    for (int v = 0; v < 2; ++v) {
        if (v) ImGui::SameLine();
        gfx::draw_figure(figs[size_t(v)], ImVec2(avail_w * 0.5f - 4, h2), {}, v == 0 ? "prenorm" : "postnorm");
    }
}

// The map figures, rebuilt only for a new snapshot (the embedding map's nearest neighbours scan the vocabulary).
void draw_map(PanelContext& ctx, bool embeddings) {
    const Snapshot* s = ctx.snap;
    if (!s || !s->trace || !s->model || !ctx.model || !ctx.model->codec)
        return empty_message(no_forward_message(ctx, tr("the map appears after the first forward pass")));
    static std::shared_future<std::shared_ptr<const interp::Pca>> pca;
    static const Model* pca_of = nullptr;
    static struct {
        uint64_t snap = 0;
        bool embeddings = false;
        plot::Figure fig;
        std::string error;
    } cache;
    try {
        if (embeddings) {
            if (pca_of != s->model.get() || !pca.valid()) {
                pca_of = s->model.get();
                pca = std::async(std::launch::async, [m = s->model] { return embedding_pca(m); }).share();
                cache.snap = 0;
            }
            if (pca.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
                if (ctx.keep_drawing) ctx.keep_drawing();
                return empty_message(tr("computing the principal components of the token embeddings..."));
            }
        }
        if (cache.snap != s->id || cache.embeddings != embeddings) {
            cache.snap = s->id;
            cache.embeddings = embeddings;
            cache.error.clear();
            try {
                cache.fig =
                    embeddings ? embedding_map_figure(*s, *ctx.model->codec, *pca.get()) : residual_map_figure(*s);
            } catch (const std::exception& e) {
                cache.error = e.what();
            }
        }
    } catch (const std::exception& e) {
        return empty_message(e.what());
    }
    if (!cache.error.empty()) return empty_message(cache.error.c_str());
    gfx::draw_figure(cache.fig, ImVec2(0, std::max(ImGui::GetTextLineHeight() * 12, ImGui::GetContentRegionAvail().y)),
                     {}, embeddings ? "embedding_map" : "residual_map");
}

}  // namespace

void draw_residual_panel(PanelContext& ctx) {
    const float line_h = ImGui::GetTextLineHeight();
    const float avail_w = ImGui::GetContentRegionAvail().x;
    const Snapshot* s = ctx.snap;
    const float top_h = std::max(line_h * 12, ImGui::GetContentRegionAvail().y * 0.42f);
    if (s && s->trace && s->tokens && !s->tokens->ids.empty()) {
        const plot::Figure f = residual_norm_figure(*s, current_query(ctx));
        gfx::draw_figure(f, ImVec2(avail_w, top_h), {}, "resid_norm");
    } else {
        empty_message(
            no_forward_message(ctx, tr("the residual stream of your text appears after the first forward pass")));
    }
    std::string& v = ctx.state.resid_view;
    const std::pair<const char*, const char*> choices[] = {
        {"embedding-map", TS_N_("token embeddings (PCA)")},
        {"residual-map", TS_N_("each token through the layers (PCA)")},
        {"norms", TS_N_("pre-norm vs post-norm at random init")}};
    for (size_t i = 0; i < 3; ++i) {
        if (i) ImGui::SameLine();
        if (ImGui::RadioButton(tr(choices[i].second), v == choices[i].first)) v = choices[i].first;
    }
    if (v == "norms") draw_prepost(ctx, avail_w);
    else draw_map(ctx, v == "embedding-map");
}

}  // namespace ts::ui
