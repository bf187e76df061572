// Figure -> CSV (the plotted numbers, for spreadsheets) and Figure -> SVG (a true vector image of the same plot:
// text as <text>, lines as paths, heatmaps as <rect>s or, when large, one embedded PNG <image>). GL-free; the
// on-screen painter, the PNG exporter and these writers share layout_figure(), axis_ticks() and the themes.
// Also the file side of exporting: format from the extension, grids of figures, atomic writes.
#pragma once

#include "app/plot/figure.h"
#include "core/util/file.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ts::plot {

/// How an export looks. width/height: whole image in pixels (SVG: user units = CSS px). scale multiplies font
/// size, line widths and margins (2 = a HiDPI / print figure with the same layout as scale 1 at half the size).
struct ExportOptions {
    int width = 1200, height = 800;
    float scale = 1.0f;
    bool dark = false;                   ///< false: light theme (white paper, for print and slides)
    bool transparent = false;            ///< no background fill outside the plot areas
    int columns = 0;                     ///< figures per row in a grid (0: automatic)
    size_t svg_image_cells = 64 * 64;    ///< SVG: heatmaps with more cells become one embedded PNG <image>
};

enum class ExportFormat { Png, Svg, Csv };
inline constexpr ExportFormat kExportFormats[] = {ExportFormat::Png, ExportFormat::Svg, ExportFormat::Csv};
/// From the file extension (.png, .svg, .csv; case-insensitive). Throws std::invalid_argument naming the path.
[[nodiscard]] ExportFormat export_format_from_path(const std::filesystem::path& path);
/// "png", "svg", "csv": the name in state files and the Export menu, and the file extension without its dot.
[[nodiscard]] const char* to_string(ExportFormat f);
/// The format named `s` (exact, as to_string writes it); nullopt for any other text.
[[nodiscard]] std::optional<ExportFormat> parse_export_format(std::string_view s);

/// One figure's numbers with a header row.
///  Heatmap: "row\\col,<col labels...>" then "<row label>,v,v,..." (masked cells written as -inf); with per-cell
///  text (logit lens) one line per cell "<row name>,<col name>,<value label>,text".
///  Series: one table "series,<x title>[,<x> name],<y title>[,label]", one line per point.
/// Fields with commas or quotes are quoted (RFC 4180). Numbers print with 9 significant digits (float exact).
[[nodiscard]] std::string figure_to_csv(const Figure& f);

/// Several figures in one long table: all heatmaps -> "figure,row,row_label,col,col_label,value"; all series ->
/// "figure,series,x,y,label"; a single figure -> figure_to_csv. Throws std::invalid_argument when heatmap and
/// series figures are mixed (export them one by one).
[[nodiscard]] std::string figures_to_csv(const std::vector<Figure>& figs);

/// A standalone SVG document of one figure (light theme, scale 1).
[[nodiscard]] std::string figure_to_svg(const Figure& f, int width = 800, int height = 500);

/// A standalone SVG of figures in a grid (ExportOptions::columns), each in its own cell of the image.
[[nodiscard]] std::string figures_to_svg(const std::vector<Figure>& figs, const ExportOptions& opt);

/// Columns and cell rectangles of a grid of n figures in width × height pixels (columns 0: about square cells).
[[nodiscard]] int grid_columns(int n, int columns, int width, int height);
[[nodiscard]] std::vector<Rect> grid_cells(int n, int columns, int width, int height);

/// Where a grid export puts its figures. When there are two or more figures and all are heatmaps on one color scale
/// (same colormap, range, value label and unit, e.g. every head of a layer), one colorbar in a strip at the right
/// serves them all and the cells fill the rest (their own colorbars are then not drawn).
struct GridLayout {
    std::vector<Rect> cells;
    std::optional<Rect> colorbar;        ///< the shared bar (ticks and title go to its right)
    std::vector<Figure> without_bars;    ///< with a shared bar: the figures minus their own bars; else empty
    /// Figure i as the grid draws it (figs: the figures the layout was made for).
    [[nodiscard]] const Figure& figure(const std::vector<Figure>& figs, size_t i) const {
        return colorbar ? without_bars[i] : figs[i];
    }
};
/// `text_width` measures a string in pixels at the export's font size; `line_h` is its line height.
[[nodiscard]] GridLayout layout_grid(const std::vector<Figure>& figs, const ExportOptions& opt,
                                     const std::function<float(const std::string&)>& text_width, float line_h);
/// True when figs can share one colorbar (see GridLayout).
[[nodiscard]] bool shares_colorbar(const std::vector<Figure>& figs);

/// Every string the figures draw (titles, labels, categories, cell text, legend names, notes), concatenated, so
/// a rasterizer can make sure its font has every glyph.
[[nodiscard]] std::string figure_text(const std::vector<Figure>& figs);
[[nodiscard]] std::string figure_text(const Figure& f);

/// RGBA8 image with one pixel per heatmap cell (row 0 at the top), colored like the painters do.
[[nodiscard]] std::vector<uint8_t> heatmap_rgba(const Heatmap& h);
/// PNG file bytes of an RGBA8 image (stb_image_write). Throws std::runtime_error when encoding fails.
[[nodiscard]] std::vector<uint8_t> encode_png(const uint8_t* rgba, int width, int height);
[[nodiscard]] std::string base64(const uint8_t* data, size_t n);

/// Writes `data` to `path` atomically (core/util/file.h): a failed write never leaves a half file. Throws
/// std::runtime_error "cannot write <path>: <reason>" (read-only folder, disk full, ...).
using ts::write_file_atomic;

}  // namespace ts::plot
