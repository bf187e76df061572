// Font atlas construction (see fonts.h).
#include "app/gfx/fonts.h"

#include "app/i18n/tr.h"
#include "app/gfx/astral.h"

#include <imgui.h>
#include <imgui_internal.h>  // ImTextCharFromUtf8

#include <stb/stb_truetype.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>
#include <set>
#include <string_view>

namespace ts::gfx {

namespace {
const char* kLatinFont = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
const char* kCjkFonts[] = {"/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
                           "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"};
// Glyphs for characters beyond 16-bit ImWchar (emoji; astral.h), drawn from the first of these that exists.
const char* kSymbolFonts[] = {"/usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf",
                              "/usr/share/fonts/truetype/ancient-scripts/Symbola.ttf"};
bool g_have_cjk = false;
ImVector<ImWchar> g_ranges;  // must outlive the atlas build
size_t g_stand_ins_built = 0;  // stand-ins (astral.h) the current atlas draws

bool exists(const char* p) {
    std::error_code ec;
    return std::filesystem::exists(p, ec);
}

// The symbol font for stand-in glyphs, read once (empty when no such font is installed).
struct SymbolFont {
    std::vector<unsigned char> bytes;
    stbtt_fontinfo info{};
    bool ok = false;
};
const SymbolFont& symbol_font() {
    static const SymbolFont f = [] {
        SymbolFont s;
        for (const char* p : kSymbolFonts) {
            std::ifstream in(p, std::ios::binary);
            if (!in) continue;
            s.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
            s.ok = !s.bytes.empty() && stbtt_InitFont(&s.info, s.bytes.data(), stbtt_GetFontOffsetForIndex(s.bytes.data(), 0));
            if (s.ok) break;
        }
        return s;
    }();
    return f;
}

struct StandInGlyph {
    int rect = -1;      // custom rect index in the atlas
    int glyph = 0;      // glyph index in the symbol font, 0 = none: an outlined box stands in
    int x0 = 0, y0 = 0;  // bitmap box relative to the baseline (pixels)
};

// Reserves an atlas rect for each stand-in of astral.h, sized from the symbol font's glyph of the character it
// stands for, or for a box when the font lacks it (a clear "not shown" mark, never U+FFFD).
std::vector<StandInGlyph> reserve_stand_in_glyphs(ImFontAtlas* atlas, ImFont* font, float pixel_size) {
    std::vector<StandInGlyph> out;
    const SymbolFont& sf = symbol_font();
    const float scale = sf.ok ? stbtt_ScaleForMappingEmToPixels(&sf.info, pixel_size) : 0.0f;
    for (const auto& [slot, cp] : stand_ins()) {
        StandInGlyph g;
        int w = 0, h = 0;
        float advance = 0;
        if (sf.ok && cp > 0xFFFF) g.glyph = stbtt_FindGlyphIndex(&sf.info, int(cp));
        if (g.glyph > 0) {
            int adv = 0, lsb = 0, x1 = 0, y1 = 0;
            stbtt_GetGlyphHMetrics(&sf.info, g.glyph, &adv, &lsb);
            stbtt_GetGlyphBitmapBox(&sf.info, g.glyph, scale, scale, &g.x0, &g.y0, &x1, &y1);
            w = std::max(1, x1 - g.x0);
            h = std::max(1, y1 - g.y0);
            advance = std::round(float(adv) * scale);
        } else {
            w = std::max(3, int(std::round(pixel_size * 0.55f)));
            h = std::max(4, int(std::round(pixel_size * 0.7f)));
            g.x0 = std::max(1, int(std::round(pixel_size * 0.1f)));
            g.y0 = -h;
            advance = float(w + 2 * g.x0);
        }
        g.rect = atlas->AddCustomRectFontGlyph(font, ImWchar(slot), w, h, advance, ImVec2(float(g.x0), float(g.y0)));
        out.push_back(g);
    }
    return out;
}

// Draws the reserved stand-in glyphs into the built atlas (before the backend reads it) and moves them from
// baseline-relative to line-relative placement, as ImGui places its own glyphs (the font's ascent above).
void draw_stand_in_glyphs(ImFontAtlas* atlas, ImFont* font, const std::vector<StandInGlyph>& glyphs, float pixel_size) {
    unsigned char* px = nullptr;
    int tw = 0, th = 0;
    atlas->GetTexDataAsAlpha8(&px, &tw, &th);
    if (!px) return;
    const SymbolFont& sf = symbol_font();
    const float scale = sf.ok ? stbtt_ScaleForMappingEmToPixels(&sf.info, pixel_size) : 0.0f;
    const auto slots = stand_ins();
    for (size_t i = 0; i < glyphs.size() && i < slots.size(); ++i) {
        const ImFontAtlasCustomRect* r = atlas->GetCustomRectByIndex(glyphs[i].rect);
        if (!r || !r->IsPacked()) continue;
        unsigned char* at = px + size_t(r->Y) * size_t(tw) + r->X;
        if (glyphs[i].glyph > 0) {
            stbtt_MakeGlyphBitmap(&sf.info, at, r->Width, r->Height, tw, scale, scale, glyphs[i].glyph);
        } else {
            for (int y = 0; y < r->Height; ++y)
                for (int x = 0; x < r->Width; ++x)
                    at[size_t(y) * size_t(tw) + x] =
                        (x == 0 || y == 0 || x == r->Width - 1 || y == r->Height - 1) ? 255 : 0;
        }
    }
    const char32_t first = slots.empty() ? 0 : slots.front().first;
    const char32_t last = first + char32_t(glyphs.size());
    for (ImFontGlyph& g : font->Glyphs) {
        if (g.Codepoint < first || g.Codepoint >= last) continue;
        g.Y0 += font->Ascent;
        g.Y1 += font->Ascent;
    }
}
}  // namespace

FontStatus build_fonts(float pixel_size, const std::string& text, bool cjk_common) {
    FontStatus st;
    ImGuiIO& io = ImGui::GetIO();
    io.Fonts->Clear();
    ImFontGlyphRangesBuilder b;
    b.AddRanges(io.Fonts->GetGlyphRangesDefault());
    static const ImWchar extra[] = {0x0100, 0x024F,  // Latin extended (GPT-2's byte spelling "Ġ", "Ċ")
                                    0x0370, 0x03FF,  // Greek
                                    0x1D00, 0x1D7F,  // phonetic extensions (ᵀ)
                                    0x2000, 0x206F,  // punctuation (– — · …)
                                    0x2070, 0x209F,  // super/subscripts
                                    0x2190, 0x21FF,  // arrows
                                    0x2200, 0x22FF,  // math operators (√ ∑ ∞ ≈)
                                    0x2500, 0x25FF,  // box drawing, shapes
                                    0x3000, 0x303F,  // CJK punctuation
                                    0xFF00, 0xFFEF,  // full-width forms
                                    0xFFFD, 0xFFFD, 0};
    b.AddRanges(extra);
    b.AddText(text.c_str(), text.c_str() + text.size());
    if (cjk_common) {
        b.AddText("注意力机制变换器模型语言中文你好世界我们");
        // Every character of the interface catalogs, so switching to Chinese needs no new glyphs.
        static const std::string catalog = i18n::catalog_text("zh");
        b.AddText(catalog.c_str(), catalog.c_str() + catalog.size());
    }
    std::string cjk_path;
    for (const char* p : kCjkFonts)
        if (exists(p)) { cjk_path = p; break; }
    if (!cjk_path.empty() && cjk_common) b.AddRanges(io.Fonts->GetGlyphRangesChineseSimplifiedCommon());
    g_ranges.clear();
    b.BuildRanges(&g_ranges);

    ImFontConfig cfg;
    cfg.OversampleH = 2;
    cfg.OversampleV = 1;
    if (exists(kLatinFont)) {
        io.Fonts->AddFontFromFileTTF(kLatinFont, pixel_size, &cfg, g_ranges.Data);
        st.latin = true;
    } else {
        ImFontConfig d;
        d.SizePixels = pixel_size;
        io.Fonts->AddFontDefault(&d);
        st.notice = trf("font %s not found (install fonts-dejavu-core); using ImGui's built-in font. ", kLatinFont);
    }
    if (!cjk_path.empty()) {
        ImFontConfig m;
        m.MergeMode = true;
        m.OversampleH = 1;
        m.OversampleV = 1;
        m.FontNo = 0;
        io.Fonts->AddFontFromFileTTF(cjk_path.c_str(), pixel_size, &m, g_ranges.Data);
        st.cjk = true;
    } else {
        st.notice += tr("no CJK font found (install fonts-wqy-microhei): Chinese text shows as '?'.");
    }
    g_have_cjk = st.cjk;
    ImFont* main_font = io.Fonts->Fonts.empty() ? nullptr : io.Fonts->Fonts[0];
    const std::vector<StandInGlyph> stand_in_glyphs =
        main_font ? reserve_stand_in_glyphs(io.Fonts, main_font, pixel_size) : std::vector<StandInGlyph>{};
    g_stand_ins_built = stand_in_glyphs.size();
    if (!io.Fonts->Build()) {
        std::fprintf(stderr, "[warn] font atlas build failed; falling back to the built-in font\n");
        io.Fonts->Clear();
        io.Fonts->AddFontDefault();
        io.Fonts->Build();
        st.notice = tr("font atlas could not be built; using the built-in font");
        g_stand_ins_built = 0;
    } else if (main_font) {
        draw_stand_in_glyphs(io.Fonts, main_font, stand_in_glyphs, pixel_size);
    }
    return st;
}

namespace {
std::string g_requested;         // characters to add at the next rebuild (UTF-8)
std::set<unsigned> g_requested_set;

// Calls on_missing(codepoint, utf8 bytes) for each character of `text` the atlas lacks but the CJK font could
// supply, until it returns false. Characters below U+2E80 are always in the atlas's fixed ranges.
template <typename Fn>
void for_each_missing_glyph(const std::string& text, Fn&& on_missing) {
    if (!g_have_cjk || text.empty()) return;
    ImFont* f = ImGui::GetIO().Fonts->Fonts.empty() ? nullptr : ImGui::GetIO().Fonts->Fonts[0];
    if (!f) return;
    const char* p = text.c_str();
    const char* end = p + text.size();
    while (p < end) {
        unsigned int c = 0;
        const int n = ImTextCharFromUtf8(&c, p, end);
        if (n <= 0) break;
        if (c >= 0x2E80 && c < 0x10000 && c != 0xFFFD && !f->FindGlyphNoFallback(ImWchar(c)) &&
            !on_missing(c, std::string_view(p, size_t(n))))
            return;
        p += n;
    }
}
}  // namespace

void request_glyphs(const std::string& text) {
    for_each_missing_glyph(text, [](unsigned c, std::string_view bytes) {
        if (g_requested_set.insert(c).second) g_requested.append(bytes);
        return true;
    });
}

std::string take_glyph_requests() {
    std::string out;
    out.swap(g_requested);
    g_requested_set.clear();
    return out;
}

bool stand_in_glyphs_missing() { return stand_ins().size() > g_stand_ins_built; }

bool fonts_need_rebuild(const std::string& text) {
    (void)shown(text);  // allocates the stand-ins its characters need
    if (stand_in_glyphs_missing()) return true;
    bool missing = false;
    for_each_missing_glyph(text, [&](unsigned, std::string_view) { return !(missing = true); });
    return missing;
}

}  // namespace ts::gfx
