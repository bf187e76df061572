// GPU heatmap textures: R32F values + colormap LUT -> RGBA8 through an offscreen framebuffer.
#include "app/gfx/heatmap_texture.h"

#include "app/gfx/gl.h"
#include "app/gfx/heatmap_colors.h"
#include "embedded_shaders.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <unordered_map>
#include <vector>

namespace ts::gfx {

namespace {

struct Entry {
    GLuint values = 0, color = 0, fbo = 0;
    int rows = 0, cols = 0;
    HeatmapColorKey key;
    int unused_frames = 0;
};

struct Gpu {
    bool init_tried = false, ok = false;
    GLuint program = 0, vao = 0;
    GLuint lut[4] = {0, 0, 0, 0};
    std::unordered_map<ImGuiID, Entry> entries;
};
Gpu g;

GLuint compile(GLenum type, const char* src) {
    const GLuint s = glCreateShader(type);
    glShaderSource(s, 1, &src, nullptr);
    glCompileShader(s);
    GLint ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[1024];
        glGetShaderInfoLog(s, sizeof log, nullptr, log);
        std::fprintf(stderr, "[error] heatmap shader compile failed: %s\n", log);
        glDeleteShader(s);
        return 0;
    }
    return s;
}

bool init() {
    if (g.init_tried) return g.ok;
    g.init_tried = true;
    const GLuint vs = compile(GL_VERTEX_SHADER, kShader_heatmap_vs), fs = compile(GL_FRAGMENT_SHADER, kShader_heatmap_fs);
    if (!vs || !fs) return false;
    g.program = glCreateProgram();
    glAttachShader(g.program, vs);
    glAttachShader(g.program, fs);
    glLinkProgram(g.program);
    glDeleteShader(vs);
    glDeleteShader(fs);
    GLint ok = 0;
    glGetProgramiv(g.program, GL_LINK_STATUS, &ok);
    if (!ok) {
        std::fprintf(stderr, "[error] heatmap shader link failed\n");
        return false;
    }
    glGenVertexArrays(1, &g.vao);
    g.ok = true;
    return true;
}

GLuint lut_texture(plot::Colormap c) {
    GLuint& t = g.lut[int(c) & 3];
    if (t) return t;
    const std::vector<unsigned char> lut = plot::colormap_lut(c, 256);
    glGenTextures(1, &t);
    glBindTexture(GL_TEXTURE_2D, t);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, 256, 1, 0, GL_RGBA, GL_UNSIGNED_BYTE, lut.data());
    return t;
}

void free_entry(Entry& e) {
    if (e.values) glDeleteTextures(1, &e.values);
    if (e.color) glDeleteTextures(1, &e.color);
    if (e.fbo) glDeleteFramebuffers(1, &e.fbo);
    e = Entry{};
}

}  // namespace

ImTextureID heatmap_texture(ImGuiID id, const plot::Heatmap& h) {
    if (h.rows <= 0 || h.cols <= 0 || !init()) return nullptr;
    GLint max_size = 0;
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_size);
    if (h.rows > max_size || h.cols > max_size) return nullptr;
    Entry& e = g.entries[id];
    e.unused_frames = 0;
    if (e.color && e.key.same(h)) return (ImTextureID)(intptr_t)e.color;
    if (e.rows != h.rows || e.cols != h.cols) free_entry(e);
    e.rows = h.rows;
    e.cols = h.cols;
    e.key.take(h);

    GLint prev_fbo = 0, prev_tex = 0, prev_prog = 0, prev_vao = 0, prev_active = 0, vp[4];
    glGetIntegerv(GL_FRAMEBUFFER_BINDING, &prev_fbo);
    glGetIntegerv(GL_ACTIVE_TEXTURE, &prev_active);
    glActiveTexture(GL_TEXTURE0);
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &prev_tex);
    glGetIntegerv(GL_CURRENT_PROGRAM, &prev_prog);
    glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &prev_vao);
    glGetIntegerv(GL_VIEWPORT, vp);
    const GLboolean blend = glIsEnabled(GL_BLEND), scissor = glIsEnabled(GL_SCISSOR_TEST);

    // Values: non-finite cells become a sentinel the shader paints as masked.
    std::vector<float> vals(h.values);
    for (size_t i = 0; i < vals.size(); ++i)
        if (!std::isfinite(vals[i]) || (!h.masked.empty() && h.masked[i])) vals[i] = -1e30f;
    if (!e.values) {
        glGenTextures(1, &e.values);
        glBindTexture(GL_TEXTURE_2D, e.values);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    }
    glBindTexture(GL_TEXTURE_2D, e.values);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, h.cols, h.rows, 0, GL_RED, GL_FLOAT, vals.data());
    if (!e.color) {
        glGenTextures(1, &e.color);
        glBindTexture(GL_TEXTURE_2D, e.color);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, h.cols, h.rows, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
        glGenFramebuffers(1, &e.fbo);
        glBindFramebuffer(GL_FRAMEBUFFER, e.fbo);
        glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, e.color, 0);
        if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) {
            std::fprintf(stderr, "[error] heatmap framebuffer incomplete\n");
            glBindFramebuffer(GL_FRAMEBUFFER, GLuint(prev_fbo));
            free_entry(e);
            return nullptr;
        }
    }
    glBindFramebuffer(GL_FRAMEBUFFER, e.fbo);
    glViewport(0, 0, h.cols, h.rows);
    glDisable(GL_BLEND);
    glDisable(GL_SCISSOR_TEST);
    glUseProgram(g.program);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, e.values);
    glActiveTexture(GL_TEXTURE1);
    glBindTexture(GL_TEXTURE_2D, lut_texture(h.cmap));
    glUniform1i(glGetUniformLocation(g.program, "u_values"), 0);
    glUniform1i(glGetUniformLocation(g.program, "u_lut"), 1);
    glUniform1f(glGetUniformLocation(g.program, "u_vmin"), h.vmin);
    glUniform1f(glGetUniformLocation(g.program, "u_vmax"), h.vmax);
    const plot::Rgba m = plot::masked_color();
    glUniform4f(glGetUniformLocation(g.program, "u_masked"), m.r, m.g, m.b, 1.0f);
    glBindVertexArray(g.vao);
    glDrawArrays(GL_TRIANGLES, 0, 3);

    // Restore what ImGui's renderer and the rest of the frame expect.
    glBindTexture(GL_TEXTURE_2D, 0);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, GLuint(prev_tex));
    glActiveTexture(GLenum(prev_active));
    glBindVertexArray(GLuint(prev_vao));
    glUseProgram(GLuint(prev_prog));
    glBindFramebuffer(GL_FRAMEBUFFER, GLuint(prev_fbo));
    glViewport(vp[0], vp[1], vp[2], vp[3]);
    if (blend) glEnable(GL_BLEND);
    if (scissor) glEnable(GL_SCISSOR_TEST);
    return (ImTextureID)(intptr_t)e.color;
}

void heatmap_textures_collect() {
    for (auto it = g.entries.begin(); it != g.entries.end();) {
        if (++it->second.unused_frames > 120) {
            free_entry(it->second);
            it = g.entries.erase(it);
        } else {
            ++it;
        }
    }
}

void heatmap_textures_shutdown() {
    for (auto& [id, e] : g.entries) free_entry(e);
    g.entries.clear();
    for (GLuint& t : g.lut)
        if (t) { glDeleteTextures(1, &t); t = 0; }
    if (g.vao) glDeleteVertexArrays(1, &g.vao);
    if (g.program) glDeleteProgram(g.program);
    g = Gpu{};
}

}  // namespace ts::gfx
