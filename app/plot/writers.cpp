// Export formats, atomic file writes and PNG encoding of heatmap cells (see writers.h); the CSV and SVG writers
// are csv_writer.cpp and svg_writer.cpp.
#include "app/plot/writers.h"

#include "app/plot/ticks.h"

#include <stb_image_write.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include <unistd.h>

namespace ts::plot {

// --- formats and files ----------------------------------------------------------------------------------------------

ExportFormat export_format_from_path(const std::filesystem::path& path) {
    std::string ext = path.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (ext == ".png") return ExportFormat::Png;
    if (ext == ".svg") return ExportFormat::Svg;
    if (ext == ".csv") return ExportFormat::Csv;
    throw std::invalid_argument("cannot tell the format of '" + path.string() + "': expected a .png, .svg or .csv file name");
}

const char* to_string(ExportFormat f) {
    switch (f) {
        case ExportFormat::Png: return "png";
        case ExportFormat::Svg: return "svg";
        case ExportFormat::Csv: return "csv";
    }
    return "?";
}

std::optional<ExportFormat> parse_export_format(std::string_view s) {
    for (ExportFormat f : kExportFormats)
        if (s == to_string(f)) return f;
    return std::nullopt;
}

// --- PNG ------------------------------------------------------------------------------------------------------------

std::vector<uint8_t> heatmap_rgba(const Heatmap& h) {
    std::vector<uint8_t> px(size_t(h.rows) * size_t(h.cols) * 4);
    for (int r = 0; r < h.rows; ++r)
        for (int c = 0; c < h.cols; ++c) {
            const Rgba col = colormap_sample(h.cmap, h.shade(r, c));
            uint8_t* p = &px[(size_t(r) * size_t(h.cols) + size_t(c)) * 4];
            p[0] = uint8_t(std::lround(col.r * 255));
            p[1] = uint8_t(std::lround(col.g * 255));
            p[2] = uint8_t(std::lround(col.b * 255));
            p[3] = 255;
        }
    return px;
}

std::vector<uint8_t> encode_png(const uint8_t* rgba, int width, int height) {
    std::vector<uint8_t> out;
    auto sink = [](void* ctx, void* data, int size) {
        auto* v = static_cast<std::vector<uint8_t>*>(ctx);
        v->insert(v->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
    };
    stbi_flip_vertically_on_write(0);
    if (!stbi_write_png_to_func(sink, &out, width, height, 4, rgba, width * 4) || out.empty())
        throw std::runtime_error("PNG encoding failed for a " + std::to_string(width) + "x" + std::to_string(height) + " image");
    return out;
}

std::string base64(const uint8_t* data, size_t n) {
    static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((n + 2) / 3 * 4);
    for (size_t i = 0; i < n; i += 3) {
        const uint32_t v = (uint32_t(data[i]) << 16) | (i + 1 < n ? uint32_t(data[i + 1]) << 8 : 0) | (i + 2 < n ? data[i + 2] : 0);
        out.push_back(k[(v >> 18) & 63]);
        out.push_back(k[(v >> 12) & 63]);
        out.push_back(i + 1 < n ? k[(v >> 6) & 63] : '=');
        out.push_back(i + 2 < n ? k[v & 63] : '=');
    }
    return out;
}

}  // namespace ts::plot
