// The window's heatmap cells (#29): app/gfx/painter.cpp draws a heatmap of up to 64 × 64 cells as one rectangle per
// cell with colours kept between frames (app/gfx/heatmap_colors.h). These tests draw a figure into a real ImGui draw
// list (no GL: the font atlas is built on the CPU) and check that the vertices carry exactly the colours the shared
// painter asks for (colormap_sample of each cell's shade, masked cells grey), in row-major order, and that new values,
// a new range or a new mask recolour the cells on the next frame instead of showing the kept colours.
#include "app/gfx/heatmap_colors.h"
#include "app/gfx/heatmap_texture.h"
#include "app/gfx/painter.h"
#include "app/plot/colormap.h"
#include "app/plot/figure.h"

#include <gtest/gtest.h>
#include <imgui.h>

#include <algorithm>
#include <vector>

// No GL here: large heatmaps would be textures; these tests stay below the texture threshold.
namespace ts::gfx {
ImTextureID heatmap_texture(ImGuiID, const plot::Heatmap&) { return nullptr; }
void heatmap_textures_collect() {}
void heatmap_textures_shutdown() {}
}  // namespace ts::gfx

namespace {

using namespace ts;

struct ImGuiFrame {
    ImGuiFrame() {
        ImGui::CreateContext();
        ImGuiIO& io = ImGui::GetIO();
        io.DisplaySize = ImVec2(900, 700);
        io.IniFilename = nullptr;
        unsigned char* px = nullptr;
        int w = 0, h = 0;
        io.Fonts->AddFontDefault();
        io.Fonts->GetTexDataAsRGBA32(&px, &w, &h);
    }
    ~ImGuiFrame() { ImGui::DestroyContext(); }
    /// Draws `f` in one frame and returns the colours of the window's vertices, in order.
    std::vector<ImU32> draw(const plot::Figure& f) {
        ImGui::GetIO().DeltaTime = 1.0f / 60.0f;
        ImGui::NewFrame();
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(ImVec2(880, 680));
        ImGui::Begin("figure");
        (void)gfx::draw_figure(f, ImVec2(600, 500), {}, "cells");
        std::vector<ImU32> cols;
        for (const ImDrawVert& v : ImGui::GetWindowDrawList()->VtxBuffer) cols.push_back(v.col);
        ImGui::End();
        ImGui::Render();
        gfx::heatmap_cell_colors_collect();
        return cols;
    }
};

plot::Figure heatmap_figure(int rows, int cols, float scale) {
    plot::Figure f;
    f.title = "cells";
    plot::Heatmap h;
    h.rows = rows;
    h.cols = cols;
    for (int i = 0; i < rows * cols; ++i) h.values.push_back(scale * float(i) / float(rows * cols - 1));
    f.heatmap = h;
    return f;
}

// The colours the shared painter gives each cell (Canvas::heatmap_cells), each repeated for a rectangle's 4 vertices.
std::vector<ImU32> expected_cells(const plot::Heatmap& h) {
    std::vector<ImU32> out;
    for (int r = 0; r < h.rows; ++r)
        for (int c = 0; c < h.cols; ++c) {
            const plot::Rgba s = plot::colormap_sample(h.cmap, h.shade(r, c));
            out.insert(out.end(), 4, ImGui::ColorConvertFloat4ToU32(ImVec4(s.r, s.g, s.b, s.a)));
        }
    return out;
}

bool contains_run(const std::vector<ImU32>& hay, const std::vector<ImU32>& run) {
    return std::search(hay.begin(), hay.end(), run.begin(), run.end()) != hay.end();
}

TEST(HeatmapCells, VerticesCarryThePaintersColoursInRowMajorOrder) {
    ImGuiFrame ui;
    const plot::Figure f = heatmap_figure(6, 9, 1.0f);
    const std::vector<ImU32> verts = ui.draw(f);
    EXPECT_TRUE(contains_run(verts, expected_cells(*f.heatmap)));
    // Drawn again unchanged (now from the kept colours): the same cells (the window's frame around them differs
    // between a first and a second frame).
    EXPECT_TRUE(contains_run(ui.draw(f), expected_cells(*f.heatmap)));
}

TEST(HeatmapCells, NewValuesRangeOrMaskRecolourTheCells) {
    ImGuiFrame ui;
    plot::Figure f = heatmap_figure(5, 5, 1.0f);
    (void)ui.draw(f);
    const std::vector<ImU32> before = expected_cells(*f.heatmap);

    std::reverse(f.heatmap->values.begin(), f.heatmap->values.end());  // same bytes in another order
    std::vector<ImU32> verts = ui.draw(f);
    EXPECT_TRUE(contains_run(verts, expected_cells(*f.heatmap)));
    EXPECT_FALSE(contains_run(verts, before));

    f.heatmap->vmax = 2.0f;  // the range alone
    verts = ui.draw(f);
    EXPECT_TRUE(contains_run(verts, expected_cells(*f.heatmap)));

    f.heatmap->masked.assign(25, 0);
    f.heatmap->masked[3] = 1;  // one masked cell: grey
    verts = ui.draw(f);
    const std::vector<ImU32> masked = expected_cells(*f.heatmap);
    EXPECT_TRUE(contains_run(verts, masked));
    const plot::Rgba grey = plot::colormap_sample(f.heatmap->cmap, NAN);
    EXPECT_EQ(masked[12], ImGui::ColorConvertFloat4ToU32(ImVec4(grey.r, grey.g, grey.b, grey.a)));

    f.heatmap->cmap = plot::Colormap::Magma;
    verts = ui.draw(f);
    EXPECT_TRUE(contains_run(verts, expected_cells(*f.heatmap)));
}

TEST(HeatmapCells, ColourKeyComparesEveryByte) {
    plot::Heatmap a;
    a.rows = 1;
    a.cols = 3;
    a.values = {0.1f, 0.2f, 0.3f};
    gfx::HeatmapColorKey key;
    EXPECT_FALSE(key.same(a));
    key.take(a);
    EXPECT_TRUE(key.same(a));
    plot::Heatmap b = a;
    b.values[2] = std::nextafter(0.3f, 1.0f);  // one ulp
    EXPECT_FALSE(key.same(b));
    b = a;
    b.vmin = -1;
    EXPECT_FALSE(key.same(b));
    b = a;
    b.masked = {0, 0, 0};
    EXPECT_FALSE(key.same(b));
    b = a;
    b.rows = 3;
    b.cols = 1;
    EXPECT_FALSE(key.same(b));
}

}  // namespace
