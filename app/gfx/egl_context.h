// A headless OpenGL 3.3 core context through EGL (Mesa's surfaceless platform, else the default display with a
// 1×1 pbuffer), for `render` without an X server. Rendering goes into framebuffer objects (app/gfx/raster.h).
#pragma once

#include <memory>
#include <string>

namespace ts::gfx {

class HeadlessGl {
public:
    /// Creates and makes current a GL 3.3 core context. Returns nullptr with a one-line reason in *error when EGL
    /// or a GL 3.3 driver is not available.
    [[nodiscard]] static std::unique_ptr<HeadlessGl> create(std::string* error);
    ~HeadlessGl();
    HeadlessGl(const HeadlessGl&) = delete;
    HeadlessGl& operator=(const HeadlessGl&) = delete;
    [[nodiscard]] const std::string& renderer() const { return m_renderer; }

private:
    HeadlessGl() = default;
    void* m_display = nullptr;
    void* m_context = nullptr;
    void* m_surface = nullptr;
    std::string m_renderer;
};

}  // namespace ts::gfx
