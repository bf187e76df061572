// Model panel: architecture summary, parameter counts per component, FLOPs per token at a context length, and the
// KV-cache size for MHA / GQA / MQA variants of this model.
#include "app/i18n/tr.h"
#include "app/gfx/painter.h"
#include "app/plot/ticks.h"
#include "app/figures/figures.h"
#include "app/i18n/tr.h"
#include "app/ui/panels/panels.h"
#include "core/formats/gguf.h"
#include "core/kernels/quant_gemm.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <cmath>

namespace ts::ui {

namespace {
std::string human(double v, const char* unit) { return human_count(v, unit); }

/// A two-column table of the Model panel: the key column fits its longest key (a config name or its translation),
/// the value column takes the rest. Rows go through row(); EndTable when it returns true.
bool begin_key_value_table(const char* id) {
    if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders)) return false;
    ImGui::TableSetupColumn("##key", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize("n_heads / n_kv_heads").x);
    ImGui::TableSetupColumn("##value", ImGuiTableColumnFlags_WidthStretch);
    return true;
}

void row(const char* k, const std::string& v) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(k);
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", v.c_str());
}

/// Bytes the model's weights take as stored (float32, half bits, panels).
double stored_bytes(const Model& m) {
    double b = 0.0;
    for (const auto& [name, t] : m.stored_weights())
        b += t.is_ggml() ? double(ggml_row_bytes(t.ggml_type, t.shape.at(1)) * t.shape.at(0))
                         : double(t.half.size()) * 2.0 + double(t.data.size() + t.panels.size()) * 4.0;
    return b;
}
// What the panel asks of the model's weights, found once per model (not every frame): whether some matrix is
// block-quantized (the float twin can be made) and whether some is Q4_0 / Q8_0 (the 8-bit arithmetic applies).
struct QuantFacts {
    bool quantized = false, int8 = false;
};
const QuantFacts& quant_facts(const std::shared_ptr<const Model>& m) {
    static std::weak_ptr<const Model> of;  // weak: another model at the same address is not taken for this one
    static QuantFacts facts;
    if (of.lock() != m) {
        of = m;
        facts = {has_quantized_matrices(*m), has_int8_products(*m)};
    }
    return facts;
}

// Parameters per component, FLOPs and the KV cache (the Model panel's first tab).
void draw_size_views(PanelContext& ctx, const Model& m, float right_w) {
    const ModelConfig& c = m.config();
    const float line_h = ImGui::GetTextLineHeight();
    const ParameterCounts pc = parameter_counts(m);
    const double total = pc.total;
    gfx::draw_figure(parameter_figure(m),
                     ImVec2(right_w, std::max(line_h * 12, ImGui::GetContentRegionAvail().y * 0.45f)), {}, "params");

    // FLOPs and KV cache.
    ImGui::SetNextItemWidth(line_h * 12);
    ImGui::SliderInt(tr("context length T"), &ctx.state.kv_context, 1, 131072, "%d", ImGuiSliderFlags_Logarithmic);
    const double T = ctx.state.kv_context;
    const double emb = pc.get("token embedding") + pc.get("position embedding");
    const double matmul_params = total - emb - pc.get("norms") + (c.tie_embeddings ? pc.get("token embedding") : 0.0);
    const double flops = 2.0 * matmul_params + 2.0 * 2.0 * c.n_layers * T * c.d_model;
    ImGui::TextWrapped(tr("forward FLOPs per token ≈ 2 · %s matmul weights + 4 · n_layers · T · d_model = %s"),
                       human(matmul_params, "").c_str(), human(flops, "FLOP").c_str());
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "%s",
            tr("Each weight is one multiply-add (2 FLOPs) per token; attention adds QKᵀ and A·V: 2 · 2 · T · d_model "
               "per layer for the T cached positions (Kaplan et al. 2020, Table 1)."));
    auto kv_bytes = [&](int n_kv, double ctx_len, double bytes_per) {
        return 2.0 * c.n_layers * n_kv * c.d_head() * ctx_len * bytes_per;
    };
    if (ImGui::BeginTable("kv", 4, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg)) {
        ImGui::TableSetupColumn(tr("variant"));
        ImGui::TableSetupColumn(tr("n_kv_heads"));
        ImGui::TableSetupColumn(tr("KV cache (fp32)"));
        ImGui::TableSetupColumn(tr("KV cache (fp16)"));
        ImGui::TableHeadersRow();
        const int gqa = c.n_kv_heads != c.n_heads && c.n_kv_heads != 1 ? c.n_kv_heads : std::max(1, c.n_heads / 4);
        const std::pair<const char*, int> rows[] = {{"MHA", c.n_heads}, {"GQA", gqa}, {"MQA", 1}};
        for (const auto& [name, n] : rows) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::Text("%s%s", name, n == c.n_kv_heads ? tr(" (this model)") : "");
            ImGui::TableNextColumn();
            ImGui::Text("%d", n);
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(human_bytes(kv_bytes(n, T, 4)).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(human_bytes(kv_bytes(n, T, 2)).c_str());
        }
        ImGui::EndTable();
    }
    ImGui::TextDisabled("%s", tr("KV cache = 2 (K and V) · n_layers · n_kv_heads · d_head · T · bytes per value"));
    const plot::Figure fk = kv_cache_figure(m, ctx.state.kv_context);
    gfx::draw_figure(fk, ImVec2(right_w, std::max(line_h * 10, ImGui::GetContentRegionAvail().y)), {}, "kv");
}

// The quantization lens (core/interp/model_diff.h): this model against a reference on the text's tokens, run by the
// app's CompareJob; the figures are compare_figures', as `render --view quant-lens` draws them.
void draw_quant_lens(PanelContext& ctx, float right_w) {
    UiState& st = ctx.state;
    const LoadedModel& lm = *ctx.model;
    const float line_h = ImGui::GetTextLineHeight();
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("%s",
                        tr("Run the text through this model and a reference of the same shape (the file a "
                           "quantized model was made from, or another checkpoint) and see where they part: "
                           "per token, per layer, per head."));
    ImGui::PopTextWrapPos();
    const bool can_widen = lm.gguf && quant_facts(lm.model).quantized;
    const bool twin = st.compare_reference == kFloatTwin;
    if (ImGui::RadioButton(tr("this file's weights in float32"), twin && can_widen)) st.compare_reference = kFloatTwin;
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s",
                          tr("The same weights widened to float32: with llama.cpp's arithmetic on, the difference "
                             "is what rounding the activations to 8 bits costs. Quantized GGUF files only."));
    ImGui::SameLine();
    if (ImGui::RadioButton(tr("another model:"), !twin || !can_widen) && twin) st.compare_reference.clear();
    ImGui::SameLine();
    ImGui::SetNextItemWidth(std::max(line_h * 8, ImGui::GetContentRegionAvail().x));
    std::string path = twin ? std::string() : st.compare_reference;
    if (ImGui::InputTextWithHint("##reference", tr("folder or .gguf file"), &path)) st.compare_reference = path;
    const std::string reference = twin && !can_widen ? std::string() : st.compare_reference;
    const QuantActivations arithmetic = parse_quant_activations(st.quant_activations).value_or(QuantActivations::Float);
    const std::vector<int>* ids = ctx.snap && ctx.snap->tokens ? &ctx.snap->tokens->ids : nullptr;
    const bool busy = ctx.compare->busy();
    ImGui::BeginDisabled(busy || !ids || ids->empty() || reference.empty());
    if (ImGui::Button(tr("Compare on the text")))
        ctx.compare->start(lm, reference, *ids, arithmetic);  // the app polls while it is busy
    ImGui::EndDisabled();
    ImGui::SameLine();
    const auto r = ctx.compare->latest();
    if (busy) {
        ImGui::TextDisabled("%s", tr("comparing…"));
        if (ctx.keep_drawing) ctx.keep_drawing();
    } else if (r && r->error.empty()) {
        const bool stale = !ids || r->ids != *ids || r->arithmetic != arithmetic;
        ImGui::TextDisabled("%s",
                            (trf("mean KL %.3g nats · top-1 agreement %d / %d · %.2f s", r->diff.mean_kl,
                                 r->diff.top1_agreements, r->diff.T, r->seconds) +
                             (stale ? tr(" · for an earlier text or setting: compare again") : ""))
                                .c_str());
    }
    if (twin && can_widen && arithmetic == QuantActivations::Float) {
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextDisabled("%s",
                            tr("With exact float32 products this file and its float32 weights compute the same "
                               "numbers: tick llama.cpp's arithmetic (left) to see what 8-bit activations cost, "
                               "or name the original file."));
        ImGui::PopTextWrapPos();
    }
    if (!r) return;
    if (!r->error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.95f, 0.3f, 0.3f, 1.0f));
        ImGui::TextWrapped("%s", r->error.c_str());
        ImGui::PopStyleColor();
        return;
    }
    // Built once per result and language, not every frame (a weak pointer: the result's traces are not kept alive).
    static std::weak_ptr<const CompareResult> figs_of;
    static std::string figs_language;
    static std::vector<plot::Figure> figs;
    if (figs_of.lock() != r || figs_language != i18n::language()) {
        figs_of = r;
        figs_language = i18n::language();
        figs = compare_figures(*r);
    }
    if (figs.size() < 3) return;
    const float h = ImGui::GetContentRegionAvail().y;
    gfx::draw_figure(figs[0], ImVec2(right_w, std::max(line_h * 10, h * 0.48f)), {}, "lens_kl");
    const float w2 = (right_w - ImGui::GetStyle().ItemSpacing.x) * 0.5f;
    const float h2 = std::max(line_h * 10, ImGui::GetContentRegionAvail().y);
    gfx::draw_figure(figs[1], ImVec2(w2, h2), {}, "lens_resid");
    ImGui::SameLine();
    gfx::draw_figure(figs[2], ImVec2(w2, h2), {}, "lens_heads");
}
}  // namespace

void draw_model_panel(PanelContext& ctx) {
    if (!ctx.model || !ctx.model->model) return empty_message(tr("no model loaded"));
    const Model& m = *ctx.model->model;
    const ModelConfig& c = m.config();
    const float avail_w = ImGui::GetContentRegionAvail().x;

    // Summary table.
    ImGui::BeginChild("summary", ImVec2(avail_w * 0.34f, 0), true);
    ImGui::Text("%s", ctx.model->display_name.c_str());
    if (!ctx.model->path.empty()) ImGui::TextDisabled("%s", ctx.model->path.c_str());
    if (begin_key_value_table("cfg")) {
        row(tr("architecture"), arch_label(c.arch));
        row("n_layers", std::to_string(c.n_layers) + (c.n_enc_layers ? " (+" + std::to_string(c.n_enc_layers) + " enc)" : ""));
        row("d_model", std::to_string(c.d_model));
        row("n_heads / n_kv_heads", std::to_string(c.n_heads) + " / " + std::to_string(c.n_kv_heads) +
                                        (c.n_kv_heads == c.n_heads ? " (MHA)" : c.n_kv_heads == 1 ? " (MQA)" : " (GQA)"));
        row("d_head", std::to_string(c.d_head()) +
                          (c.head_dim > 0 && int64_t(c.head_dim) * c.n_heads != c.d_model
                               ? " " + ts::trf("(explicit head_dim; d_model / n_heads would be %s)",
                                               plot::format_value(double(c.d_model) / c.n_heads).c_str())
                               : ""));
        row("d_ff", std::to_string(c.d_ff));
        row("vocab_size", std::to_string(c.vocab_size));
        row("max_seq_len", std::to_string(c.max_seq_len));
        row(tr("norm"), std::string(to_string(c.norm)) + ", " + to_string(c.norm_placement) + "-norm, eps " + plot::format_value(c.norm_eps));
        row(tr("activation"), to_string(c.activation));
        row(tr("position encoding"), std::string(position_label(c.position)) +
                             (c.position == PositionKind::RoPE ? ", theta " + plot::format_value(c.rope_theta) + ", " + to_string(c.rope_layout) : "") +
                             (c.position == PositionKind::Sinusoidal ? std::string(", ") + to_string(c.sinusoidal_layout) : "") +
                             (c.enc_pos_emb ? tr(", encoder has its own table") : ""));
        if (c.relative_attention_bias)
            row(tr("relative position bias"), trf("%d buckets, max distance %d tokens, one table per stack (T5)",
                                                  c.relative_attention_num_buckets, c.relative_attention_max_distance));
        row(tr("score scaling"), c.scale_attn ? "1/sqrt(d_head)" : tr("none (T5)"));
        if (c.sliding_window > 0)
            row("sliding_window", trf("each query sees its %d most recent tokens (itself included), in layers %d to %d",
                                      c.sliding_window, c.sliding_window_from_layer, c.n_layers - 1));
        if (c.position == PositionKind::RoPE && c.rotary_dim > 0)
            row("rotary_dim", std::to_string(c.rotary_dim) + " / " + std::to_string(c.d_head()) + " (rotary_pct " +
                                  plot::format_value(double(c.rotary_dim) / c.d_head()) + "): " +
                                  ts::tr("RoPE turns only these features of each head; the rest carry no position"));
        row("parallel_residual", c.parallel_residual ? ts::tr("yes: x + attn(norm1(x)) + ffn(norm2(x)), both read the same x")
                                                     : c.norm_placement == NormPlacement::Pre
                                                           ? ts::tr("no: x + attn(norm(x)), then + ffn(norm(x))")
                                                           : ts::tr("no: norm(x + attn(x)), then norm(x + ffn(x)) (post-norm)"));
        std::string emb = ts::tr("token");
        if (c.position == PositionKind::Learned) emb += std::string(" + ") + ts::tr("learned position");
        if (c.type_vocab_size > 0)
            emb += " + " + ts::trf("token type (type_vocab_size %d, all segment 0)", c.type_vocab_size);
        if (c.scale_embeddings) emb += std::string(" × √d_model");
        if (c.embed_norm) emb += std::string(", ") + ts::tr("then a norm (embed_norm)");
        row(tr("embeddings"), emb);
        row(tr("output head"), c.mlm_head ? ts::tr("masked-LM (mlm_head): dense → act → norm → tied decoder + bias")
                           : c.tie_embeddings ? ts::tr("LM head tied to tok_emb") : ts::tr("separate lm_head"));
        row(tr("biases"), std::string("qkv ") + (c.attn_qkv_bias ? tr("yes") : tr("no")) + ", out " + (c.attn_out_bias ? tr("yes") : tr("no")) +
                          ", ffn " + (c.ffn_bias ? tr("yes") : tr("no")));
        row(tr("tied embeddings"), std::string(c.tie_embeddings ? tr("yes") : tr("no")) +
                                   (c.scale_lm_head ? std::string(", ") + tr("LM head input × d_model^-0.5") : std::string()));
        if (c.final_logits_bias) row("final_logits_bias", tr("yes (added to the logits)"));
        row("qk-norm", c.qk_norm ? tr("yes") : tr("no"));
        ImGui::EndTable();
    }
    if (const GgufSummary* g = ctx.model->gguf.get()) {
        // What the file is: its tensor types (a quantized model mixes several), bits per weight, the tokenizer its
        // metadata carries, and the chat template it ships.
        ImGui::Spacing();
        ImGui::TextUnformatted(tr("GGUF file"));
        if (begin_key_value_table("gguf")) {
            if (!g->name.empty()) row(tr("name"), g->name);
            row(tr("format"), "GGUF v" + std::to_string(g->version) + ", " + human_bytes(double(g->file_bytes)));
            std::string types;
            for (const auto& [type, n] : g->types) types += (types.empty() ? "" : ", ") + type + " × " + std::to_string(n);
            row(tr("tensor types"), types);
            row(tr("bits per weight"), plot::format_value(g->bits_per_weight));
            row(tr("in memory"), trf("%s (quantized matrices stay quantized: the products dequantize a few rows at a time)",
                                     human_bytes(stored_bytes(m)).c_str()));
            row(tr("tokenizer"), g->tokenizer.empty() ? std::string(tr("none (ids only)")) : g->tokenizer);
            ImGui::EndTable();
        }
        if (quant_facts(ctx.model->model).int8) {
            // The products' arithmetic (core/kernels/quant_gemm.h): every forward of the session follows it.
            bool int8 = ctx.state.quant_activations == "int8";
            if (ImGui::Checkbox(tr("llama.cpp's arithmetic (8-bit activations)"), &int8))
                ctx.state.quant_activations = int8 ? "int8" : "float";
            ImGui::PushTextWrapPos(0.0f);
            ImGui::TextDisabled("%s",
                                int8
                                    ? tr("Q4_0 / Q8_0 products round each activation block to 8 bits and multiply in "
                                         "integers, as llama.cpp does: faster, and what llama.cpp would compute.")
                                    : tr("Q4_0 / Q8_0 products multiply the stored weights exactly in float32. "
                                         "Tick to compute as llama.cpp does (faster; activations rounded to 8 bits)."));
            ImGui::PopTextWrapPos();
        }
        if (!g->chat_template.empty() && ImGui::CollapsingHeader(tr("chat template"))) {
            ImGui::PushTextWrapPos(0.0f);
            ImGui::TextDisabled("%s", g->chat_template.c_str());
            ImGui::PopTextWrapPos();
        }
    }
    ImGui::EndChild();
    ImGui::SameLine();

    ImGui::BeginGroup();
    const float right_w = ImGui::GetContentRegionAvail().x;
    if (!ctx.compare || !ImGui::BeginTabBar("model_views")) {
        draw_size_views(ctx, m, right_w);
    } else {
        if (ImGui::BeginTabItem(tr("Size and memory"))) {
            draw_size_views(ctx, m, right_w);
            ImGui::EndTabItem();
        }
        if (ImGui::BeginTabItem(tr("Quantization lens"))) {
            draw_quant_lens(ctx, right_w);
            ImGui::EndTabItem();
        }
        ImGui::EndTabBar();
    }
    ImGui::EndGroup();
}

}  // namespace ts::ui
