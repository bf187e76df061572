// Font atlas construction (see fonts.h).
#include "app/ui/fonts.h"

#include "app/i18n/tr.h"

#include <imgui.h>
#include <imgui_internal.h>  // ImTextCharFromUtf8

#include <cstdio>
#include <filesystem>
#include <set>
#include <string_view>

namespace ts::ui {

namespace {
const char* kLatinFont = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
const char* kCjkFonts[] = {"/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
                           "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"};
bool g_have_cjk = false;
ImVector<ImWchar> g_ranges;  // must outlive the atlas build

bool exists(const char* p) {
    std::error_code ec;
    return std::filesystem::exists(p, ec);
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
    if (!io.Fonts->Build()) {
        std::fprintf(stderr, "[warn] font atlas build failed; falling back to the built-in font\n");
        io.Fonts->Clear();
        io.Fonts->AddFontDefault();
        io.Fonts->Build();
        st.notice = tr("font atlas could not be built; using the built-in font");
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

bool fonts_need_rebuild(const std::string& text) {
    bool missing = false;
    for_each_missing_glyph(text, [&](unsigned, std::string_view) { return !(missing = true); });
    return missing;
}

}  // namespace ts::ui
