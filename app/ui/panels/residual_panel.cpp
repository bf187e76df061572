// Residual stream panel: the L2 norm of the residual stream after every sub-layer (per token and averaged), and
// pre-norm against post-norm at random initialisation with many layers (computed once off the UI thread).
#include "app/i18n/tr.h"
#include "app/gfx/painter.h"
#include "app/figures/figures.h"
#include "app/ui/panels/panels.h"

#include <imgui.h>

#include <chrono>
#include <future>

namespace ts::ui {

void draw_residual_panel(PanelContext& ctx) {
    const float line_h = ImGui::GetTextLineHeight();
    const float avail_w = ImGui::GetContentRegionAvail().x;
    const Snapshot* s = ctx.snap;
    const float top_h = std::max(line_h * 12, ImGui::GetContentRegionAvail().y * 0.5f);
    if (s && s->trace && s->tokens && !s->tokens->ids.empty()) {
        const plot::Figure f = residual_norm_figure(*s, current_query(ctx));
        gfx::draw_figure(f, ImVec2(avail_w, top_h), {}, "resid_norm");
    } else {
        empty_message(no_forward_message(ctx, tr("the residual stream of your text appears after the first forward pass")));
    }

    // Pre-norm vs post-norm at random init (computed once, off the UI thread).
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

}  // namespace ts::ui
