// EGL headless context (see egl_context.h).
#include "app/gfx/egl_context.h"

#include "app/gfx/gl.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <cstring>

namespace ts::gfx {

namespace {
std::string egl_error_name(EGLint e) {
    switch (e) {
        case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
        case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
        case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
        case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
        case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
        case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
        case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
        case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
        default: return "EGL error " + std::to_string(e);
    }
}

bool has_extension(const char* list, const char* ext) {
    if (!list) return false;
    const size_t n = std::strlen(ext);
    for (const char* p = list; (p = std::strstr(p, ext)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) return true;
    return false;
}
}  // namespace

std::unique_ptr<HeadlessGl> HeadlessGl::create(std::string* error) {
    std::unique_ptr<HeadlessGl> g(new HeadlessGl());
    auto fail = [&](const std::string& why) -> std::unique_ptr<HeadlessGl> {
        if (error) *error = why;
        return nullptr;
    };
    EGLDisplay dpy = EGL_NO_DISPLAY;
    bool surfaceless = false;
    const char* client_ext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (has_extension(client_ext, "EGL_MESA_platform_surfaceless") && has_extension(client_ext, "EGL_EXT_platform_base")) {
        auto get_platform_display =
            reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
        if (get_platform_display) {
            dpy = get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
            surfaceless = dpy != EGL_NO_DISPLAY;
        }
    }
    EGLint major = 0, minor = 0;
    if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, &major, &minor)) {
        surfaceless = false;
        dpy = eglGetDisplay(EGL_DEFAULT_DISPLAY);
        if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, &major, &minor))
            return fail("no EGL display (install libegl1 and libgl1-mesa-dri): " + egl_error_name(eglGetError()));
    }
    g->m_display = dpy;
    if (!eglBindAPI(EGL_OPENGL_API)) return fail("EGL cannot bind the desktop OpenGL API: " + egl_error_name(eglGetError()));
    const EGLint cfg_attr[] = {EGL_SURFACE_TYPE, surfaceless ? 0 : EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                               EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_ALPHA_SIZE, 8, EGL_NONE};
    EGLConfig cfg = nullptr;
    EGLint n = 0;
    if (!eglChooseConfig(dpy, cfg_attr, &cfg, 1, &n) || n < 1) {
        // Some drivers list no config for surface type 0: ask for any OpenGL-renderable one.
        const EGLint any_attr[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
        if (!eglChooseConfig(dpy, any_attr, &cfg, 1, &n) || n < 1) return fail("no EGL config for desktop OpenGL");
    }
    const EGLint ctx_attr[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3, EGL_CONTEXT_OPENGL_PROFILE_MASK,
                               EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    EGLContext ctx = eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, ctx_attr);
    if (ctx == EGL_NO_CONTEXT) return fail("cannot create an OpenGL 3.3 core context: " + egl_error_name(eglGetError()));
    g->m_context = ctx;
    EGLSurface surf = EGL_NO_SURFACE;
    if (!surfaceless) {
        const EGLint pb_attr[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
        surf = eglCreatePbufferSurface(dpy, cfg, pb_attr);
        g->m_surface = surf;
    }
    if (!eglMakeCurrent(dpy, surf, surf, ctx)) return fail("cannot make the EGL context current: " + egl_error_name(eglGetError()));
    const char* r = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
    g->m_renderer = r ? r : "?";
    return g;
}

HeadlessGl::~HeadlessGl() {
    if (!m_display) return;
    eglMakeCurrent(m_display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (m_surface) eglDestroySurface(m_display, m_surface);
    if (m_context) eglDestroyContext(m_display, m_context);
    eglTerminate(m_display);
}

}  // namespace ts::gfx
