// Offscreen rendering of figures (see raster.h).
#include "app/gfx/raster.h"

#include "app/gfx/gl.h"
#include "app/gfx/painter.h"
#include "app/gfx/fonts.h"
#include "core/util/utf8.h"

#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

namespace ts::gfx {

namespace {

/// The export ImGui context, kept between exports of the same scale so repeated exports skip the atlas build.
struct ExportContext {
    ImGuiContext* ctx = nullptr;
    float font_px = 0;
    std::set<unsigned> glyphs;           ///< characters the atlas was built for
};
ExportContext g_export;

std::set<unsigned> codepoints(const std::string& s) {
    std::set<unsigned> out;
    for (size_t i = 0; i < s.size();) {
        const Utf8Char c = utf8_char_at(s, i);  // core/util/utf8.h
        if (c.valid() && c.cp >= 0x2E80 && c.cp < 0x10000) out.insert(unsigned(c.cp));  // below: always in the atlas
        i += c.len;
    }
    return out;
}

void destroy_export_context() {
    if (!g_export.ctx) return;
    ImGuiContext* prev = ImGui::GetCurrentContext();
    ImGui::SetCurrentContext(g_export.ctx);
    ImGui_ImplOpenGL3_Shutdown();
    ImGui::DestroyContext(g_export.ctx);
    ImGui::SetCurrentContext(prev == g_export.ctx ? nullptr : prev);
    g_export = {};
}

/// Makes the export context current, (re)building it when the scale changed or a character is missing.
void use_export_context(float font_px, const std::string& text) {
    std::set<unsigned> need = codepoints(text);
    bool ok = g_export.ctx && g_export.font_px == font_px;
    if (ok)
        for (unsigned c : need)
            if (!g_export.glyphs.count(c)) { ok = false; break; }
    if (ok) {
        ImGui::SetCurrentContext(g_export.ctx);
        return;
    }
    if (g_export.ctx) {
        need.insert(g_export.glyphs.begin(), g_export.glyphs.end());
        destroy_export_context();
    }
    g_export.ctx = ImGui::CreateContext();
    ImGui::SetCurrentContext(g_export.ctx);
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.LogFilename = nullptr;
    std::string chars;
    for (unsigned c : need) append_utf8(chars, char32_t(c));
    build_fonts(font_px, chars, false);
    if (!ImGui_ImplOpenGL3_Init("#version 330 core")) throw std::runtime_error("the ImGui OpenGL 3 renderer did not start");
    g_export.font_px = font_px;
    g_export.glyphs = std::move(need);
}

ImVec4 v4(const plot::Rgba& c) { return ImVec4(c.r, c.g, c.b, c.a); }

void apply_export_style(const plot::Theme& th, float scale) {
    ImGuiStyle style;
    if (th.dark) ImGui::StyleColorsDark(&style);
    else ImGui::StyleColorsLight(&style);
    style.WindowPadding = ImVec2(0, 0);
    style.WindowBorderSize = 0;
    style.AntiAliasedLines = style.AntiAliasedFill = true;
    style.Colors[ImGuiCol_WindowBg] = ImVec4(0, 0, 0, 0);
    style.Colors[ImGuiCol_FrameBg] = v4(th.plot_background);
    style.Colors[ImGuiCol_Text] = v4(th.text);
    style.Colors[ImGuiCol_TextDisabled] = v4(th.text_dim);
    style.Colors[ImGuiCol_PopupBg] = v4(th.legend_background);
    style.ScaleAllSizes(scale);
    ImGui::GetStyle() = style;
}

struct GlState {
    GLint fbo = 0, viewport[4] = {0, 0, 0, 0};
    GLfloat clear[4] = {0, 0, 0, 0};
    void save() {
        glGetIntegerv(GL_FRAMEBUFFER_BINDING, &fbo);
        glGetIntegerv(GL_VIEWPORT, viewport);
        glGetFloatv(GL_COLOR_CLEAR_VALUE, clear);
    }
    void restore() const {
        glBindFramebuffer(GL_FRAMEBUFFER, GLuint(fbo));
        glViewport(viewport[0], viewport[1], viewport[2], viewport[3]);
        glClearColor(clear[0], clear[1], clear[2], clear[3]);
    }
};

}  // namespace

Image render_figures(const std::vector<plot::Figure>& figs, const plot::ExportOptions& opt) {
    if (opt.width < 16 || opt.height < 16 || opt.width > 16384 || opt.height > 16384)
        throw std::invalid_argument("PNG size must be 16..16384 pixels per side, got " + std::to_string(opt.width) + "x" +
                                    std::to_string(opt.height));
    if (!(opt.scale >= 0.25f && opt.scale <= 8.0f))
        throw std::invalid_argument("scale must be in [0.25, 8], got " + std::to_string(opt.scale));
    if (figs.empty()) throw std::invalid_argument("nothing to render: no figures");
    GLint max_size = 0;
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_size);
    if (max_size > 0 && (opt.width > max_size || opt.height > max_size))
        throw std::invalid_argument("this GL driver renders at most " + std::to_string(max_size) + " pixels per side");

    ImGuiContext* prev = ImGui::GetCurrentContext();
    GlState gl;
    gl.save();
    Image img;
    try {
        use_export_context(std::round(16.0f * opt.scale), plot::figure_text(figs));
        const plot::Theme th = plot::export_theme(opt.dark, opt.transparent);
        apply_export_style(th, opt.scale);
        ImGuiIO& io = ImGui::GetIO();
        io.DisplaySize = ImVec2(float(opt.width), float(opt.height));
        io.DisplayFramebufferScale = ImVec2(1, 1);
        io.DeltaTime = 1.0f / 60.0f;
        io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
        ImGui_ImplOpenGL3_NewFrame();
        ImGui::NewFrame();
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(io.DisplaySize);
        ImGui::Begin("##export", nullptr,
                     ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoInputs |
                         ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_NoBackground);
        const plot::GridLayout g = plot::layout_grid(
            figs, opt, [](const std::string& s) { return ImGui::CalcTextSize(s.c_str()).x; }, ImGui::GetTextLineHeight());
        PaintOptions po;
        po.export_button = false;
        po.show_note = true;
        po.theme = &th;  // the SVG writer's colours exactly
        for (size_t i = 0; i < figs.size(); ++i) {
            const plot::Rect& c = g.cells[i];
            ImGui::SetCursorScreenPos(ImVec2(std::floor(c.x0), std::floor(c.y0)));
            const std::string id = "fig" + std::to_string(i);
            draw_figure(g.figure(figs, i), ImVec2(std::floor(c.x1) - std::floor(c.x0), std::floor(c.y1) - std::floor(c.y0)), po,
                        id.c_str());
        }
        if (g.colorbar) draw_colorbar(ImGui::GetWindowDrawList(), *figs.front().heatmap, *g.colorbar, &th);
        ImGui::End();
        ImGui::Render();

        GLuint tex = 0, fbo = 0;
        glGenTextures(1, &tex);
        glBindTexture(GL_TEXTURE_2D, tex);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, opt.width, opt.height, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
        glGenFramebuffers(1, &fbo);
        glBindFramebuffer(GL_FRAMEBUFFER, fbo);
        glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
        const GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
        if (status != GL_FRAMEBUFFER_COMPLETE) {
            glDeleteFramebuffers(1, &fbo);
            glDeleteTextures(1, &tex);
            throw std::runtime_error("cannot create a " + std::to_string(opt.width) + "x" + std::to_string(opt.height) +
                                     " framebuffer (out of GPU memory?)");
        }
        glViewport(0, 0, opt.width, opt.height);
        glClearColor(th.background.r, th.background.g, th.background.b, th.background.a);
        glClear(GL_COLOR_BUFFER_BIT);
        ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
        img.width = opt.width;
        img.height = opt.height;
        img.rgba.resize(size_t(opt.width) * size_t(opt.height) * 4);
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        glReadPixels(0, 0, opt.width, opt.height, GL_RGBA, GL_UNSIGNED_BYTE, img.rgba.data());
        glDeleteFramebuffers(1, &fbo);
        glDeleteTextures(1, &tex);
        // GL's row 0 is the bottom row.
        const size_t stride = size_t(opt.width) * 4;
        std::vector<uint8_t> tmp(stride);
        for (int y = 0; y < opt.height / 2; ++y) {
            uint8_t* a = img.rgba.data() + size_t(y) * stride;
            uint8_t* b = img.rgba.data() + size_t(opt.height - 1 - y) * stride;
            std::copy(a, a + stride, tmp.data());
            std::copy(b, b + stride, a);
            std::copy(tmp.data(), tmp.data() + stride, b);
        }
    } catch (...) {
        ImGui::SetCurrentContext(prev);
        gl.restore();
        throw;
    }
    ImGui::SetCurrentContext(prev);
    gl.restore();
    return img;
}

void release_raster_resources() { destroy_export_context(); }

void write_figures(const std::vector<plot::Figure>& figs, const plot::ExportOptions& opt, const std::filesystem::path& path) {
    switch (plot::export_format_from_path(path)) {
        case plot::ExportFormat::Csv: plot::write_file_atomic(path, plot::figures_to_csv(figs)); return;
        case plot::ExportFormat::Svg: plot::write_file_atomic(path, plot::figures_to_svg(figs, opt)); return;
        case plot::ExportFormat::Png: {
            const Image img = render_figures(figs, opt);
            const std::vector<uint8_t> png = plot::encode_png(img.rgba.data(), img.width, img.height);
            plot::write_file_atomic(path, std::string_view(reinterpret_cast<const char*>(png.data()), png.size()));
            return;
        }
    }
}

}  // namespace ts::gfx
