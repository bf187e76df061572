// Tokens panel: the text split into tokens (alternating chips with ids), each token's byte span, and on hover the
// BPE merge steps that produced it.
#include "app/i18n/tr.h"
#include "app/gfx/painter.h"
#include "app/figures/figures.h"
#include "app/gfx/astral.h"
#include "app/ui/panels/panels.h"

#include <imgui.h>

#include <cstdio>

namespace ts::ui {

namespace {

void merge_tooltip(const Snapshot& s, const TokenizedText& tt, size_t i) {
    const TokenPiece& p = tt.pieces[i];
    const std::string bytes = tt.text.substr(p.byte_begin, p.byte_end - p.byte_begin);
    ImGui::BeginTooltip();
    ImGui::Text(tr("token %zu: id %d"), i, p.id);
    ImGui::Text(tr("label: %s"), gfx::shown(p.label).c_str());
    ImGui::Text(tr("bytes [%zu, %zu) of the text"), p.byte_begin, p.byte_end);
    std::string hex;
    char buf[8];
    for (unsigned char c : bytes) {
        std::snprintf(buf, sizeof buf, "%02X ", c);
        hex += buf;
    }
    ImGui::Text(tr("UTF-8: %s"), hex.c_str());
    if (s.codec) {
        const auto steps = s.codec->merge_steps(bytes);
        if (!steps.empty()) {
            ImGui::Separator();
            ImGui::TextUnformatted(tr("BPE merges (bytes, then one merge per line):"));
            for (size_t k = 0; k < steps.size() && k < 24; ++k) {
                std::string line;
                for (const auto& piece : steps[k]) {
                    line += '[';
                    line += printable_label(piece);
                    line += "] ";
                }
                ImGui::Text("%2zu  %s", k, line.c_str());
            }
            if (steps.size() > 24) ImGui::TextDisabled(tr("... %zu more steps"), steps.size() - 24);
        } else if (tt.ids_only) {
            ImGui::Separator();
            ImGui::TextDisabled("%s", tr("ids-only mode: each byte is one token (no merges)"));
        }
    }
    ImGui::EndTooltip();
}

/// The characters a token's bytes belong to; "中 (byte 2 of 3)" when the token covers part of one character.
std::string covered_text(const std::string& text, size_t b, size_t e) {
    const std::string piece = text.substr(b, e - b);
    if (is_valid_utf8(piece)) return piece;
    auto cont = [&](size_t i) { return i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80; };
    size_t cb = b;
    while (cb > 0 && cont(cb) && b - cb < 3) --cb;
    size_t ce = std::max(e, cb + 1);
    while (ce < text.size() && cont(ce) && ce - cb < 4) ++ce;
    const std::string ch = text.substr(cb, ce - cb);
    if (!is_valid_utf8(ch)) return sanitize_utf8(piece);
    if (ce - cb == e - b) return ch;
    return ch + "  " + (e - b > 1 ? trf("(bytes %zu–%zu of %zu)", b - cb + 1, e - cb, ce - cb)
                                  : trf("(byte %zu of %zu)", b - cb + 1, ce - cb));
}

// Chips of one token sequence, wrapped to the panel width: the token's text on top, its id below.
void token_chips(const Snapshot& s, const TokenizedText& tt, const char* id) {
    ImGui::PushID(id);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float line_h = ImGui::GetTextLineHeight();
    const float pad = line_h * 0.3f;
    const float avail = ImGui::GetContentRegionAvail().x;
    const ImVec2 start = ImGui::GetCursorScreenPos();
    float x = 0, y = 0;
    const ImU32 bg[2] = {ImGui::GetColorU32(ImVec4(0.30f, 0.55f, 0.85f, 0.35f)),
                         ImGui::GetColorU32(ImVec4(0.95f, 0.65f, 0.20f, 0.35f))};
    const float chip_h = line_h * 2 + pad * 3;
    for (size_t i = 0; i < tt.pieces.size(); ++i) {
        const TokenPiece& p = tt.pieces[i];
        char idbuf[32];
        std::snprintf(idbuf, sizeof idbuf, "%d", p.id);
        const std::string label = gfx::shown(p.label);
        const float w = std::max(ImGui::CalcTextSize(label.c_str()).x, ImGui::CalcTextSize(idbuf).x) + pad * 2;
        if (x > 0 && x + w > avail) {
            x = 0;
            y += chip_h + pad;
        }
        const ImVec2 a(start.x + x, start.y + y), b(a.x + w, a.y + chip_h);
        ImGui::SetCursorScreenPos(a);
        ImGui::PushID(int(i));
        ImGui::InvisibleButton("chip", ImVec2(w, chip_h));
        const bool hov = ImGui::IsItemHovered();
        ImGui::PopID();
        dl->AddRectFilled(a, b, bg[i % 2], 4.0f);
        if (hov) dl->AddRect(a, b, ImGui::GetColorU32(ImGuiCol_Text), 4.0f, 0, 2.0f);
        dl->AddText(ImVec2(a.x + pad, a.y + pad), ImGui::GetColorU32(ImGuiCol_Text), label.c_str());
        dl->AddText(ImVec2(a.x + pad, a.y + pad * 2 + line_h), ImGui::GetColorU32(ImGuiCol_TextDisabled), idbuf);
        if (hov) merge_tooltip(s, tt, i);
        x += w + pad;
    }
    ImGui::SetCursorScreenPos(ImVec2(start.x, start.y + y + chip_h + pad * 2));
    ImGui::Dummy(ImVec2(avail, 0));
    ImGui::PopID();
}

// Table of one token sequence: position, id, label, span, text.
void token_table(const Snapshot& s, const TokenizedText& tt, const char* id, float height) {
    const float line_h = ImGui::GetTextLineHeight();
    if (ImGui::BeginTable(id, 5, ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY |
                                     ImGuiTableFlags_SizingFixedFit,
                          ImVec2(0, std::max(line_h * 6, height)))) {
        ImGui::TableSetupScrollFreeze(0, 1);
        ImGui::TableSetupColumn(tr("position"));
        ImGui::TableSetupColumn(tr("id"));
        ImGui::TableSetupColumn(tr("token"));
        ImGui::TableSetupColumn(tr("bytes [begin, end)"));
        ImGui::TableSetupColumn(tr("text it covers"), ImGuiTableColumnFlags_WidthStretch);
        ImGui::TableHeadersRow();
        for (size_t i = 0; i < tt.pieces.size(); ++i) {
            const TokenPiece& p = tt.pieces[i];
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::Text("%zu", i);
            ImGui::TableNextColumn();
            ImGui::Text("%d", p.id);
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(gfx::shown(p.label).c_str());
            if (ImGui::IsItemHovered()) merge_tooltip(s, tt, i);
            ImGui::TableNextColumn();
            ImGui::Text("[%zu, %zu)", p.byte_begin, p.byte_end);
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(p.byte_end > p.byte_begin
                                       ? gfx::shown(covered_text(tt.text, p.byte_begin, p.byte_end)).c_str()
                                       : tr("(special token)"));
        }
        ImGui::EndTable();
    }
}

}  // namespace

void draw_tokens_panel(PanelContext& ctx) {
    if (!ctx.snap || !ctx.snap->tokens) return empty_message(no_forward_message(ctx, tr("waiting for the first forward pass...")));
    const Snapshot& s = *ctx.snap;
    const TokenizedText& tt = *s.tokens;
    const TokenizedText* src = s.source_tokens && s.source_tokens != s.tokens ? s.source_tokens.get() : nullptr;
    const float line_h = ImGui::GetTextLineHeight();
    const float avail = ImGui::GetContentRegionAvail().x;
    if (src) {
        // Encoder–decoder: both sequences, each with its own spans (special tokens have none).
        ImGui::Text(tr("Source (encoder input): %zu tokens  ·  %zu bytes  ·  tokenizer: %s"), src->ids.size(), src->text.size(),
                    s.codec ? s.codec->name().c_str() : "?");
        token_chips(s, *src, "source");
        ImGui::Text(tr("Target (decoder input, teacher-forced): %zu tokens  ·  %zu bytes"), tt.ids.size(), tt.text.size());
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s", tr("The decoder reads the start token and the target so far; position t predicts token t+1."));
        token_chips(s, tt, "target");
        ImGui::Separator();
        gfx::draw_figure(tokens_figure(s, true), ImVec2(avail, std::max(line_h * 10, ImGui::GetContentRegionAvail().y * 0.35f)),
                         {}, "tokens_bytes");
        const float h = (ImGui::GetContentRegionAvail().y - line_h) * 0.5f;
        token_table(s, *src, "source_tokens", h);
        token_table(s, tt, "target_tokens", ImGui::GetContentRegionAvail().y);
        return;
    }
    ImGui::Text(tr("%zu tokens  ·  %zu bytes  ·  tokenizer: %s"), tt.ids.size(), tt.text.size(),
                s.codec ? s.codec->name().c_str() : "?");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", tr("Each chip is one token: its text on top, its id below. Spans tile the input bytes."));
    if (tt.ids.empty()) return empty_message(tr("the text is empty: nothing to tokenize"));
    ImGui::Separator();
    token_chips(s, tt, "text");
    ImGui::Separator();

    // Bytes per token (the exportable figure of this panel).
    gfx::draw_figure(tokens_figure(s), ImVec2(avail, std::max(line_h * 10, ImGui::GetContentRegionAvail().y * 0.4f)), {}, "tokens_bytes");
    token_table(s, tt, "tokens", ImGui::GetContentRegionAvail().y);
}

}  // namespace ts::ui
