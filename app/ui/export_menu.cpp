// Export menu (see export_menu.h).
#include "app/i18n/tr.h"
#include "app/ui/export_menu.h"

#include "app/gfx/raster.h"
#include "app/plot/writers.h"
#include "app/figures/figures.h"
#include "app/figures/views.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

namespace ts::ui {

using namespace ts::figures;  // the views an export writes (app/figures)

namespace {

ExportMenuContext g_ctx;
struct Status {
    std::string text;
    bool error = false;
};
Status g_status;
std::string g_file_name, g_file_for;  // file name field, and the figure title it was made for

plot::ExportOptions options_from(const UiState& st) {
    plot::ExportOptions o;
    o.width = st.export_width;
    o.height = st.export_height;
    o.scale = st.export_scale;
    o.dark = !st.export_light;
    o.transparent = st.export_transparent;
    return o;
}

std::filesystem::path export_dir(const UiState& st) {
    return st.export_dir.empty() ? std::filesystem::path(default_export_dir()) : std::filesystem::path(st.export_dir);
}

void report(const std::string& text, bool error) {
    g_status = {text, error};
    std::fprintf(stderr, "[%s] %s\n", error ? "error" : "info", text.c_str());
}

/// One figure file, or a folder with one file per figure plus a grid image of all of them.
void export_folder(const std::string& view, const UiState& st) {
    try {
        UiState s = st;
        const ViewFigures vf = build_view(view, s, g_ctx.snap, g_ctx.model);
        const std::string ext = "." + std::string(plot::to_string(st.export_format));
        const std::string folder_name = view == "attention-layer" ? "attention_layer" + std::to_string(clamp_layer(st, g_ctx.model ? g_ctx.model->model.get() : nullptr))
                                                                  : file_stem(view);
        const std::filesystem::path dir = export_dir(st) / folder_name;
        plot::ExportOptions one = options_from(st);
        for (size_t i = 0; i < vf.figures.size(); ++i) gfx::write_figures({vf.figures[i]}, one, dir / (vf.names[i] + ext));
        plot::ExportOptions grid = one;
        grid.columns = vf.columns;
        // The grid gets a cell per figure of about the single-figure size / columns, at least 1920 pixels wide.
        const int cols = plot::grid_columns(int(vf.figures.size()), vf.columns, grid.width, grid.height);
        const int rows = (int(vf.figures.size()) + cols - 1) / cols;
        grid.width = std::max(1920, std::min(16384, cols * 480));
        grid.height = std::min(16384, rows * std::max(240, grid.width / cols * 2 / 3));
        gfx::write_figures(vf.figures, grid, dir / ("grid" + ext));
        UiState session = st;
        session.view = view;
        save_session(dir / "session.json", session);
        report(trf("wrote %zu figures + grid%s to %s", vf.figures.size(), ext.c_str(), dir.string().c_str()), false);
    } catch (const std::exception& e) {
        report(trf("export failed: %s", e.what()), true);
    }
}

}  // namespace

void set_export_menu_context(const ExportMenuContext& ctx) { g_ctx = ctx; }

std::string default_export_dir() {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (const char* home = std::getenv("HOME"); home && *home) {
        const fs::path pics = fs::path(home) / "Pictures";
        if (fs::is_directory(pics, ec)) return (pics / "transformer-studio").string();
    }
    return fs::current_path(ec).string();
}

std::string file_stem(const std::string& title) {
    std::string out;
    for (unsigned char c : title) {
        if (std::isalnum(c)) out.push_back(char(std::tolower(c)));
        else if ((c == ' ' || c == ',' || c == '-' || c == '_' || c == '.' || c == '(' || c == '/') && !out.empty() && out.back() != '_')
            out.push_back('_');
    }
    while (!out.empty() && out.back() == '_') out.pop_back();
    return out.empty() ? "figure" : out.substr(0, 80);
}

void draw_export_menu(const plot::Figure& f) {
    if (!g_ctx.state) {
        ImGui::TextDisabled("%s", tr("export is not available here"));
        return;
    }
    UiState& st = *g_ctx.state;
    const float line_h = ImGui::GetTextLineHeight();
    if (g_file_for != f.title + f.view) {
        g_file_for = f.title + f.view;
        g_file_name = file_stem(f.title.empty() ? f.view : f.title);
    }
    ImGui::TextDisabled(tr("Export \"%s\""), f.title.c_str());
    ImGui::Separator();
    for (const plot::ExportFormat f : plot::kExportFormats) {
        if (f != plot::kExportFormats[0]) ImGui::SameLine();
        if (ImGui::RadioButton(plot::to_string(f), st.export_format == f)) st.export_format = f;
    }
    if (st.export_format != plot::ExportFormat::Csv) {
        ImGui::SetNextItemWidth(line_h * 5);
        ImGui::InputInt(tr("width"), &st.export_width, 0);
        ImGui::SameLine();
        ImGui::SetNextItemWidth(line_h * 5);
        ImGui::InputInt(tr("height px"), &st.export_height, 0);
        st.export_width = std::clamp(st.export_width, 16, 16384);
        st.export_height = std::clamp(st.export_height, 16, 16384);
        ImGui::SameLine();
        if (ImGui::SmallButton("1080p")) { st.export_width = 1920; st.export_height = 1080; }
        ImGui::SameLine();
        if (ImGui::SmallButton("4K")) { st.export_width = 3840; st.export_height = 2160; st.export_scale = std::max(st.export_scale, 2.0f); }
        ImGui::SetNextItemWidth(line_h * 8);
        ImGui::SliderFloat(tr("scale (text and lines)"), &st.export_scale, 0.5f, 4.0f, "%.2f");
        ImGui::Checkbox(tr("light theme (print)"), &st.export_light);
        ImGui::SameLine();
        ImGui::Checkbox(tr("transparent background"), &st.export_transparent);
    }
    if (st.export_dir.empty()) st.export_dir = default_export_dir();
    ImGui::SetNextItemWidth(line_h * 22);
    ImGui::InputText(tr("folder"), &st.export_dir);
    ImGui::SetNextItemWidth(line_h * 22);
    ImGui::InputText(tr("file name"), &g_file_name);
    const std::filesystem::path path = export_dir(st) / (g_file_name + "." + plot::to_string(st.export_format));
    ImGui::TextDisabled("→ %s", path.string().c_str());
    if (ImGui::Button(tr("Export"))) {
        try {
            gfx::write_figures({f}, options_from(st), path);
            report(trf("wrote %s", path.string().c_str()), false);
        } catch (const std::exception& e) {
            report(trf("export failed: %s", e.what()), true);
        }
        ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button(tr("Save session"))) {
        try {
            UiState s = st;
            s.view = f.view;
            const std::filesystem::path sp = export_dir(st) / (g_file_name + ".session.json");
            save_session(sp, s);
            report(trf("saved session %s (transformer-studio render --session FILE --out fig.png reproduces it)", sp.string().c_str()), false);
        } catch (const std::exception& e) {
            report(trf("saving the session failed: %s", e.what()), true);
        }
        ImGui::CloseCurrentPopup();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr("model, text, panel, layer/head and every knob as JSON, for `render --session`"));
    if (f.view.rfind("attention", 0) == 0 && g_ctx.snap) {
        ImGui::Separator();
        if (ImGui::Button(tr("Export all heads of this layer"))) {
            export_folder("attention-layer", st);
            ImGui::CloseCurrentPopup();
        }
        ImGui::SameLine();
        if (ImGui::Button(tr("Export all layers × heads"))) {
            export_folder("attention-grid", st);
            ImGui::CloseCurrentPopup();
        }
    }
    ImGui::Separator();
    if (ImGui::Selectable(tr("Copy values as CSV"))) ImGui::SetClipboardText(plot::figure_to_csv(f).c_str());
    if (ImGui::Selectable(tr("Copy as SVG"))) {
        plot::ExportOptions o = options_from(st);
        try {
            ImGui::SetClipboardText(plot::figures_to_svg({f}, o).c_str());
        } catch (const std::exception& e) {
            report(e.what(), true);
        }
    }
}

void draw_export_status() {
    if (g_status.text.empty()) return;
    ImGui::PushStyleColor(ImGuiCol_Text, g_status.error ? ImVec4(0.95f, 0.3f, 0.3f, 1.0f) : ImVec4(0.3f, 0.75f, 0.4f, 1.0f));
    ImGui::TextWrapped("%s", g_status.text.c_str());
    ImGui::PopStyleColor();
    ImGui::SameLine();
    if (ImGui::SmallButton(tr("ok##export_status"))) g_status = {};
}

}  // namespace ts::ui
