// The sidebar: model picker with recent models and loading progress, the soft-wrapped text box with samples,
// layer/head/query sliders, the attention knobs and status lines (App, app_window.h).
#include "app/ui/app_window.h"
#include "app/i18n/tr.h"

#include "app/i18n/language.h"
#include "app/ui/export_menu.h"
#include "app/ui/panels/panels.h"
#include "app/figures/figures.h"
#include "app/plot/colormap.h"
#include "app/gfx/astral.h"
#include "app/ui/theme.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <string_view>

namespace ts::ui::detail {

namespace {
const char* kSamples[][2] = {
    {TS_N_("English"), "The quick brown fox jumps over the lazy dog."},
    {TS_N_("Austen"), "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife."},
    {"中文", "注意力机制让模型关注句子中的重要部分。"},
    {TS_N_("Mixed"), "Attention 注意力 is all you need!"},
};
}  // namespace

void App::sidebar() {
    const float line_h = ImGui::GetTextLineHeight();
    ImGui::TextUnformatted(tr("Transformer Studio"));
    const char* theme_label = m_state.dark_theme ? tr("Light") : tr("Dark");
    ImGui::SameLine(ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize(theme_label).x -
                    2 * ImGui::GetStyle().FramePadding.x);
    if (ImGui::SmallButton(theme_label)) {
        m_state.dark_theme = !m_state.dark_theme;
        apply_theme(m_state.dark_theme, m_scale);
    }
    // Interface language: the names are written in their own language, never translated.
    ImGui::TextDisabled("%s", tr("Language"));
    const std::string cur = i18n::language();
    for (const auto& [code, name] : {std::pair<const char*, const char*>{"en", "English"}, {"zh", "中文"}}) {
        ImGui::SameLine();
        if (ImGui::RadioButton(name, cur == code) && cur != code) {
            m_state.language = code;
            apply_language(code);
        }
        if (!m_opt.frame_stats.empty()) record_rect(std::string("lang:") + code);
    }
    // Text and control size (classroom projectors at 1024 x 700 up to 4K screens); saved as ui_scale.
    ImGui::TextDisabled("%s", tr("Text size"));
    const auto set_scale = [&](float s) {
        s = std::clamp(std::round(s * 8.0f) / 8.0f, kMinUiScale, kMaxUiScale);
        if (s == m_scale) return;
        m_scale = m_state.ui_scale = s;
        apply_theme(m_state.dark_theme, m_scale);
        m_fonts_dirty = true;
    };
    ImGui::SameLine();
    if (ImGui::SmallButton("A-")) set_scale(m_scale - 0.125f);
    ImGui::SameLine();
    ImGui::Text("%d%%", int(std::lround(m_scale * 100.0f)));
    ImGui::SameLine();
    if (ImGui::SmallButton("A+")) set_scale(m_scale + 0.125f);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", tr("larger or smaller text and controls (50% to 400%); figure exports keep their own scale"));
    ImGui::Separator();

    // Model.
    ImGui::TextDisabled("%s", tr("MODEL"));
    ImGui::TextWrapped("%s", m_model.display_name.c_str());
    if (m_model.model) {
        const ModelConfig& c = m_model.model->config();
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
        if (c.arch == Arch::EncoderDecoder)
            ImGui::TextWrapped(
                tr("%s · %d + %d layers (encoder + decoder) · d_model %d · %d heads (%d KV) · vocab %d · "
                   "max_seq_len %d"),
                arch_label(c.arch), c.n_enc_layers, c.n_layers, c.d_model, c.n_heads, c.n_kv_heads, c.vocab_size,
                c.max_seq_len);
        else
            ImGui::TextWrapped(tr("%s · %d layers · d_model %d · %d heads (%d KV) · vocab %d · max_seq_len %d"),
                               arch_label(c.arch), c.n_layers, c.d_model, c.n_heads, c.n_kv_heads, c.vocab_size,
                               c.max_seq_len);
        ImGui::PopStyleColor();
    }
    if (!m_model.weight_warnings.empty()) {
        // Broken checkpoints still open (people inspect them); say which weights are not finite.
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.55f, 0.1f, 1.0f));
        const size_t shown = std::min<size_t>(m_model.weight_warnings.size(), 3);
        for (size_t i = 0; i < shown; ++i) ImGui::TextWrapped("%s", m_model.weight_warnings[i].c_str());
        if (m_model.weight_warnings.size() > shown)
            ImGui::TextWrapped(tr("... and %zu more tensors with NaN/Inf"), m_model.weight_warnings.size() - shown);
        ImGui::PopStyleColor();
    }
    if (!m_model.tokenizer_warning.empty()) {  // e.g. a malformed tokenizer.model: the model runs in ids-only mode
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.55f, 0.1f, 1.0f));
        ImGui::TextWrapped("%s", m_model.tokenizer_warning.c_str());
        ImGui::PopStyleColor();
    }
    if (m_model.random_weights) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.55f, 0.1f, 1.0f));
        ImGui::TextWrapped("%s", tr("random weights — attention teaches nothing (no bundled model found; load a trained model folder)"));
        ImGui::PopStyleColor();
    }
    ImGui::SetNextItemWidth(-line_h * 3.2f);
    const bool enter = ImGui::InputTextWithHint("##path", tr("model folder, GGUF file or Ollama name"), &m_path_edit,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    if ((ImGui::Button(tr("Load")) || enter) && !m_path_edit.empty()) start_load(m_path_edit);
    if (m_loader.busy()) {
        ImGui::TextDisabled(tr("loading %s ..."), m_loader.loading_path().c_str());
        ImGui::ProgressBar(m_loader.progress(), ImVec2(-1, 0));
    }
    if (!m_load_error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.95f, 0.3f, 0.3f, 1.0f));
        ImGui::TextWrapped("%s", m_load_error.c_str());
        ImGui::PopStyleColor();
    }
    if (!m_bundled.empty() && ImGui::TreeNode(tr("Bundled models"))) {
        for (size_t i = 0; i < m_bundled.size(); ++i) {
            ImGui::PushID(int(i) + 1000);
            const std::string name = std::filesystem::path(m_bundled[i]).filename().string();
            if (ImGui::Selectable(name.c_str(), m_bundled[i] == m_model.path)) {
                m_path_edit = m_bundled[i];
                start_load(m_bundled[i]);
            }
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", m_bundled[i].c_str());
            ImGui::PopID();
        }
        ImGui::TreePop();
    }
    if (!m_ollama.empty() && ImGui::TreeNode(tr("Ollama models"))) {
        for (size_t i = 0; i < m_ollama.size(); ++i) {
            ImGui::PushID(int(i) + 2000);
            if (ImGui::Selectable(m_ollama[i].c_str(), m_ollama[i] == m_model.path)) {
                m_path_edit = m_ollama[i];
                start_load(m_ollama[i]);
            }
            ImGui::PopID();
        }
        ImGui::TreePop();
    }
    if (!m_state.recent.empty() && ImGui::TreeNode(tr("Recent models"))) {
        for (size_t i = 0; i < m_state.recent.size(); ++i) {
            ImGui::PushID(int(i));
            if (ImGui::Selectable(m_state.recent[i].c_str(), m_state.recent[i] == m_model.path)) {
                m_path_edit = m_state.recent[i];
                start_load(m_state.recent[i]);
            }
            ImGui::PopID();
        }
        ImGui::TreePop();
    }
    ImGui::Separator();

    // Text (encoder–decoder models: the source, then the target and Translate).
    const bool enc_dec = m_model.model && m_model.model->config().arch == Arch::EncoderDecoder;
    ImGui::TextDisabled("%s", enc_dec ? tr("SOURCE (encoder input)") : tr("TEXT"));
    text_box("##text", m_state.text, m_text_box, line_h);
    if (enc_dec) {
        translation_section(line_h);
    } else {
        ImGui::TextDisabled("%s", tr("samples:"));
        for (const auto& smp : kSamples) {
            ImGui::SameLine();
            if (ImGui::SmallButton(tr(smp[0]))) m_state.text = smp[1];
        }
    }
    for (const auto* t : {m_source_tokens.get(), m_tokens.get()}) {
        if (!t) continue;
        for (const auto& n : t->notices) {
            ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.95f, 0.65f, 0.2f, 1.0f));
            ImGui::TextWrapped("%s", n.c_str());
            ImGui::PopStyleColor();
        }
    }
    ImGui::Separator();

    // Layer, head, query.
    ImGui::TextDisabled("%s", tr("VIEW"));
    if (m_model.model) {
        const ModelConfig& c = m_model.model->config();
        m_state.layer = std::clamp(m_state.layer, 0, c.n_layers - 1);
        m_state.head = std::clamp(m_state.head, 0, c.n_heads - 1);
        ImGui::SliderInt(tr("layer"), &m_state.layer, 0, c.n_layers - 1);
        ImGui::SliderInt(tr("head"), &m_state.head, 0, c.n_heads - 1);
        const int T = m_tokens ? int(m_tokens->ids.size()) : 0;
        if (T > 0) {
            m_state.query = std::clamp(m_state.query, -1, T - 1);
            const int q = m_state.query < 0 ? T - 1 : m_state.query;
            const std::string lbl = gfx::shown(m_tokens->pieces[size_t(q)].label);
            ImGui::SliderInt(tr("query"), &m_state.query, -1, T - 1, m_state.query < 0 ? (tr("last: ") + lbl).c_str() : ("%d: " + lbl).c_str());
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr("query token for the Softmax lab and Predictions (-1 = last token)"));
        }
    }
    ImGui::Separator();

    // Attention knobs applied to the model.
    ImGui::TextDisabled("%s", tr("ATTENTION KNOBS"));
    ImGui::Checkbox(tr("apply to the model's attention"), &m_state.apply_to_model);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", tr("Re-runs the forward pass with softmax(scores / temperature) and this mask in every layer."));
    ImGui::BeginDisabled(!m_state.apply_to_model);
    slider_log(tr("temperature"), &m_state.attn_temperature, 0.05f, 10.0f);
    mask_combo(m_state.attn_mask);
    if (m_state.attn_mask == MaskChoice::Custom && ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", tr("custom: the mask painted in the Softmax lab (click cells of its mask grid)"));
    if (m_state.attn_mask == MaskChoice::Sliding) ImGui::SliderInt(tr("window w"), &m_state.attn_window, 1, 64);
    if (m_state.attn_mask == MaskChoice::Padding) ImGui::SliderInt(tr("padded keys"), &m_state.attn_padding, 0, 64);
    ImGui::EndDisabled();
    if (!m_state.apply_to_model && m_model.model && m_model.model->config().arch == Arch::EncoderOnly)
    {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("%s", ts::tr("encoder: every token attends to every token (no mask)"));
        ImGui::PopStyleColor();
    }
    ImGui::Separator();

    // Status.
    if (m_snap) {
        if (!m_snap->error.empty()) {
            ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.95f, 0.3f, 0.3f, 1.0f));
            ImGui::TextWrapped(tr("forward failed: %s"), m_snap->error.c_str());
            ImGui::PopStyleColor();
        }
        ImGui::PushTextWrapPos(0.0f);  // the arithmetic's note makes the line longer than the sidebar
        ImGui::TextDisabled(tr("forward: %.1f ms · %zu tokens%s%s"), m_snap->compute_ms,
                            m_snap->tokens ? m_snap->tokens->ids.size() : size_t(0),
                            m_snap->int8_activations ? tr(" · 8-bit activations (llama.cpp)") : "",
                            m_worker->busy() ? tr(" · computing...") : "");
        ImGui::PopTextWrapPos();
    }
    if (m_progress) {  // a long forward still running (shown on every panel, adopted or not)
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextDisabled(tr("a long text: %d of %d layers done, the rest follows"), m_progress->layers_done,
                            m_progress->n_layers());
        ImGui::PopTextWrapPos();
    }
    draw_export_status();
    if (!m_fonts.notice.empty()) ImGui::TextDisabled("%s", m_fonts.notice.c_str());
    if (!m_state_warning.empty()) ImGui::TextWrapped("%s", m_state_warning.c_str());
}

namespace {
/// The picker's heading for an examples.tsv domain.
const char* example_domain_label(const std::string& domain) {
    if (domain == "ui") return tr("software menus and messages (held out)");
    if (domain == "programs") return tr("programs and games (held out)");
    if (domain == "manuals") return tr("manuals (held out)");
    if (domain == "everyday") return tr("everyday sentences (never trained on)");
    return tr("held-out pairs");
}
}  // namespace

void App::target_probability_strip(float line_h) {
    const Snapshot* snap = m_snap.get();
    if (!snap || !snap->tokens || !m_model.codec || snap->tokens->text != m_state.target_text || !snap->error.empty())
        return;
    if (m_target_probs_of != snap->id || snap->id == 0) {  // by id: a new snapshot may reuse a freed address
        m_target_probs = snap->next_token_probs();
        m_target_probs_of = snap->id;
    }
    const std::vector<float>& probs = m_target_probs;
    if (probs.empty()) return;
    ImGui::TextDisabled("%s", tr("p(token | source, tokens before it):"));
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", tr("how likely the model finds each target token, given the source and the target tokens\n"
                                  "before it (teacher forcing). Dark: the model is unsure; -log p is that token's loss."));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float pad = 3.0f, gap = 3.0f;
    const float right = ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x;
    const float left = ImGui::GetCursorScreenPos().x;
    float x = left, y = ImGui::GetCursorScreenPos().y;
    const auto& pieces = snap->tokens->pieces;
    for (size_t i = 0; i < probs.size() && i + 1 < pieces.size(); ++i) {
        const std::string label = gfx::shown(m_model.codec->label(pieces[i + 1].id));
        gfx::request_glyphs(label);
        const ImVec2 ts = ImGui::CalcTextSize(label.c_str());
        const float w = ts.x + 2 * pad, h = line_h + 2;
        if (x > left && x + w > right) x = left, y += h + gap;
        const plot::Rgba c = plot::colormap_sample(plot::Colormap::Viridis, probs[i]);
        const ImU32 bg = ImGui::ColorConvertFloat4ToU32(ImVec4(c.r, c.g, c.b, 1.0f));
        const float luma = 0.299f * c.r + 0.587f * c.g + 0.114f * c.b;
        const ImU32 fg = luma > 0.5f ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255);
        const ImVec2 a(x, y), b(x + w, y + h);
        dl->AddRectFilled(a, b, bg, 3.0f);
        dl->AddText(ImVec2(x + pad, y + (h - ts.y) * 0.5f), fg, label.c_str());
        if (ImGui::IsMouseHoveringRect(a, b))
            ImGui::SetTooltip(tr("%s  p = %.3f  (loss %.2f nats)"), label.c_str(), probs[i],
                              -std::log(std::max(probs[i], 1e-30f)));
        x += w + gap;
    }
    ImGui::Dummy(ImVec2(right - left, y + line_h + 2 - ImGui::GetCursorScreenPos().y));
}

// Encoder–decoder models: target language, held-out example pairs, the target box (teacher forcing), Translate
// (greedy or beam) and the decoding steps with each step's top candidates.
void App::translation_section(float line_h) {
    const TranslationSpec* spec = m_model.translation.get();
    if (!spec) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
        ImGui::TextWrapped("%s", m_model.translation_warning.empty()
                                     ? tr("no translation.json in this folder: the text feeds both the encoder and the decoder")
                                     : m_model.translation_warning.c_str());
        ImGui::PopStyleColor();
        return;
    }
    if (spec->direction == "both") {
        ImGui::TextUnformatted(tr("into"));
        static const char* kTo[][2] = {{"auto", TS_N_("auto")}, {"en", "English"}, {"zh", "中文"}};
        for (const auto& t : kTo) {
            ImGui::SameLine();
            if (ImGui::RadioButton(tr(t[1]), m_state.translate_to == t[0])) m_state.translate_to = t[0];
        }
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s", tr("the target-language token <2en> / <2zh> the encoder reads first (Johnson et al. 2017);\n"
                              "auto: English when the source has a Chinese character, else Chinese"));
    }
    if (!spec->trained_on.empty()) {
        // What the model knows, in one line: a student should know a software-menu model before typing a poem.
        const auto it = spec->trained_on.find(ui_language());
        const std::string& line = it != spec->trained_on.end() ? it->second : spec->trained_on.begin()->second;
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
        text_wrapped(line);
        ImGui::PopStyleColor();
    }
    if (!m_examples.empty()) {
        ImGui::SetNextItemWidth(-1);
        if (ImGui::BeginCombo("##examples", tr("held-out example pairs..."), ImGuiComboFlags_HeightLarge)) {
            const bool to_en = m_state.translate_to == "en";
            const std::string* group = nullptr;
            for (size_t i = 0; i < m_examples.size(); ++i) {
                const ExamplePair& p = m_examples[i];
                const std::string& src = to_en ? p.zh : p.en;
                const std::string& ref = to_en ? p.en : p.zh;
                if (!group || *group != p.domain) {  // a heading where the domain changes (the file groups them)
                    group = &p.domain;
                    if (i > 0) ImGui::Spacing();
                    ImGui::TextDisabled("%s", example_domain_label(p.domain));
                    ImGui::Separator();
                }
                ImGui::PushID(int(i));
                if (ImGui::Selectable(gfx::shown(src + "  →  " + ref).c_str())) {
                    m_state.text = src;
                    m_state.target_text = ref;
                    m_reference = ref;
                }
                ImGui::PopID();
            }
            ImGui::EndCombo();
        }
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s", tr("pairs the model never saw in training; picking one teacher-forces the human translation"));
    }
    ImGui::TextDisabled("%s", tr("TARGET (decoder input)"));
    gfx::request_glyphs(m_state.target_text);  // a translation fills it with characters nobody typed
    text_box("##target", m_state.target_text, m_target_box, line_h, tr("type a translation, or press Translate"));
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", tr("teacher forcing: the decoder reads <start> + these tokens and predicts each next one"));
    if (!m_reference.empty() && m_reference == m_state.target_text) ImGui::TextDisabled("%s", tr("(the human reference translation)"));
    target_probability_strip(line_h);
    const bool busy = m_translate_id != 0;
    ImGui::BeginDisabled(busy || m_state.text.empty());
    if (ImGui::Button(busy ? tr("Translating...###translate") : tr("Translate###translate"))) translate_now();
    ImGui::EndDisabled();
    ImGui::SameLine();
    bool beam = m_state.decode_beam > 1;
    if (ImGui::Checkbox(tr("beam"), &beam)) m_state.decode_beam = beam ? 4 : 1;
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", tr("off: greedy decoding (the top token each step); on: beam search keeps the best partial\n"
                          "translations and returns the one with the highest log-probability / length"));
    if (beam) {
        ImGui::SameLine();
        ImGui::SetNextItemWidth(-1);
        ImGui::SliderInt("##beam", &m_state.decode_beam, 2, 8, tr("width %d"));
    }
    const Snapshot* done = m_translated.get();
    if (done && done->translation && done->tokens && done->tokens->text == m_state.target_text && m_model.codec) {
        const DecodeResult& d = *done->translation;
        ImGui::TextDisabled(tr("%s · %zu tokens · log p = %.2f"), m_state.decode_beam > 1 ? tr("beam") : tr("greedy"), d.ids.size(),
                            d.log_prob);
        if (ImGui::TreeNodeEx(tr("decoding steps: top candidates"), ImGuiTreeNodeFlags_DefaultOpen)) {
            const float h = std::min(float(d.steps.size() + 1), 10.0f) * (line_h + 4) + 4;
            if (ImGui::BeginTable("steps", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY,
                                  ImVec2(0, h))) {
                ImGui::TableSetupScrollFreeze(0, 1);
                ImGui::TableSetupColumn(tr("step"), ImGuiTableColumnFlags_WidthFixed, line_h * 2);
                ImGui::TableSetupColumn(tr("chosen"), ImGuiTableColumnFlags_WidthFixed, line_h * 6);
                ImGui::TableSetupColumn(tr("other candidates"));
                ImGui::TableHeadersRow();
                for (size_t i = 0; i < d.steps.size(); ++i) {
                    const DecodeStep& stp = d.steps[i];
                    ImGui::TableNextRow();
                    ImGui::TableNextColumn();
                    ImGui::Text("%zu", i + 1);
                    ImGui::TableNextColumn();
                    gfx::request_glyphs(m_model.codec->label(stp.id));
                    for (const auto& cand : stp.top) gfx::request_glyphs(m_model.codec->label(cand.first));
                    ImGui::Text("%s %.2f", gfx::shown(m_model.codec->label(stp.id)).c_str(), stp.prob);
                    ImGui::TableNextColumn();
                    // Flowed across lines at the column's width, never splitting a candidate (a narrow sidebar
                    // showed only the first two; Chinese has no spaces to wrap at), all of them one per line on hover.
                    std::string lines;
                    bool first = true, hovered = false;
                    const float right = ImGui::GetCursorPosX() + ImGui::GetContentRegionAvail().x;
                    for (const auto& [id, p] : stp.top) {
                        if (id == stp.id) continue;
                        char buf[32];
                        std::snprintf(buf, sizeof buf, " %.2f", p);
                        const std::string cand = gfx::shown(m_model.codec->label(id)) + buf;
                        if (!first) {
                            const float gap = line_h * 0.8f;
                            ImGui::SameLine(0, gap);
                            if (ImGui::GetCursorPosX() + ImGui::CalcTextSize(cand.c_str()).x > right) ImGui::NewLine();
                            lines += '\n';
                        }
                        first = false;
                        ImGui::TextUnformatted(cand.c_str());
                        hovered = hovered || ImGui::IsItemHovered();
                        lines += cand;
                    }
                    if (hovered) ImGui::SetTooltip("%s", lines.c_str());
                }
                ImGui::EndTable();
            }
            ImGui::TreePop();
        }
    }
}

// The text box: a multi-line box whose lines wrap at its width (soft '\n' in a display copy, app/ui/soft_wrap.h)
// and which grows with the text, from 3 to 12 lines, so the whole sentence stays in sight.
void App::text_box(const char* id, std::string& text, WrapBox& box, float line_h, const char* hint) {
    ImFont* font = ImGui::GetFont();
    const ImGuiStyle& st = ImGui::GetStyle();
    const float wrap_w = std::max(line_h, ImGui::GetContentRegionAvail().x - 2 * st.FramePadding.x - st.ScrollbarSize - 2);
    const float scale = ImGui::GetFontSize() / font->FontSize;
    box.text = &text;
    // Breaks between CJK characters too (ImFont::CalcWordWrapPositionA breaks only at spaces: typed Chinese ran on).
    box.breaker = cjk_line_breaker(
        [font, scale](std::string_view s) {
            return font->CalcTextSizeA(font->FontSize * scale, FLT_MAX, 0.0f, s.data(), s.data() + s.size()).x;
        },
        wrap_w);
    std::string seen = gfx::shown(text);  // emoji as their stand-ins (astral.h); box.src and the wrap hold this form
    if (box.src != seen || box.width != wrap_w) {
        box.wrap = soft_wrap(seen, box.breaker);
        box.src = std::move(seen);
        box.width = wrap_w;
    }
    const int lines = 1 + int(std::count(box.wrap.display.begin(), box.wrap.display.end(), '\n'));
    const float h = float(std::clamp(lines + 1, 3, 12)) * line_h + 2 * st.FramePadding.y;
    std::string buf = box.wrap.display;
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImGui::InputTextMultiline(id, &buf, ImVec2(-1, h), ImGuiInputTextFlags_CallbackAlways,
                              [](ImGuiInputTextCallbackData* d) {
                                  WrapBox* b = static_cast<WrapBox*>(d->UserData);
                                  insert_typed_emoji(d);  // emoji typed this frame
                                  const std::string_view cur(d->Buf, size_t(d->BufTextLen));
                                  if (cur == b->wrap.display) return 0;
                                  size_t c = size_t(d->CursorPos), s0 = size_t(d->SelectionStart), s1 = size_t(d->SelectionEnd);
                                  std::string real = soft_unwrap(b->wrap, cur, {&c, &s0, &s1});
                                  Wrapped w = soft_wrap(real, b->breaker);
                                  if (w.display != cur) {
                                      d->DeleteChars(0, d->BufTextLen);
                                      d->InsertChars(0, w.display.data(), w.display.data() + w.display.size());
                                  }
                                  d->CursorPos = int(real_to_soft(w.soft, c));
                                  d->SelectionStart = int(real_to_soft(w.soft, s0));
                                  d->SelectionEnd = int(real_to_soft(w.soft, s1));
                                  b->wrap = std::move(w);
                                  *b->text = gfx::typed(real);
                                  b->src = std::move(real);
                                  return 0;
                              },
                              &box);
    if (hint && text.empty() && !ImGui::IsItemActive())  // 1.86's multi-line box has no hint of its own
        ImGui::GetWindowDrawList()->AddText(ImVec2(at.x + st.FramePadding.x, at.y + st.FramePadding.y),
                                            ImGui::GetColorU32(ImGuiCol_TextDisabled), hint);
    if (!m_opt.frame_stats.empty()) record_rect(std::string_view(id) == "##text" ? "text_box" : std::string(id).substr(2));
}

void App::record_rect(const std::string& name) {
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    m_stats.rects[name] = {a.x, a.y, b.x, b.y};
}

}  // namespace ts::ui::detail
