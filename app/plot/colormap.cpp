// Colormap anchor tables and interpolation (see colormap.h).
#include "app/plot/colormap.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ts::plot {
namespace {

struct Anchor {
    unsigned char r, g, b;
};
// 9 evenly spaced samples of matplotlib's viridis and magma (t = 0, 1/8, ..., 1).
constexpr Anchor kViridis[] = {{68, 1, 84},    {72, 40, 120},  {62, 73, 137},  {49, 104, 142}, {38, 130, 142},
                               {31, 158, 137}, {53, 183, 121}, {110, 206, 88}, {253, 231, 37}};
constexpr Anchor kMagma[] = {{0, 0, 4},      {28, 16, 68},   {79, 18, 123},  {129, 37, 129}, {181, 54, 122},
                             {229, 89, 100}, {251, 135, 97}, {254, 194, 135}, {252, 253, 191}};
// ColorBrewer RdBu, 11 classes, reversed so negative = blue, zero = near white, positive = red.
constexpr Anchor kDiverging[] = {{5, 48, 97},    {33, 102, 172}, {67, 147, 195}, {146, 197, 222},
                                 {209, 229, 240}, {247, 247, 247}, {253, 219, 199}, {244, 165, 130},
                                 {214, 96, 77},   {178, 24, 43},   {103, 0, 31}};
constexpr Anchor kGray[] = {{0, 0, 0}, {255, 255, 255}};

template <size_t N>
Rgba interpolate(const Anchor (&a)[N], float t) {
    const float x = t * float(N - 1);
    const int i = std::clamp(int(std::floor(x)), 0, int(N) - 2);
    const float f = std::clamp(x - float(i), 0.0f, 1.0f);
    auto mix = [f](unsigned char p, unsigned char q) { return (float(p) + (float(q) - float(p)) * f) / 255.0f; };
    return {mix(a[i].r, a[i + 1].r), mix(a[i].g, a[i + 1].g), mix(a[i].b, a[i + 1].b), 1.0f};
}

}  // namespace

const char* to_string(Colormap c) {
    switch (c) {
        case Colormap::Viridis: return "viridis";
        case Colormap::Magma: return "magma";
        case Colormap::Diverging: return "diverging";
        case Colormap::Gray: return "gray";
    }
    return "?";
}

Colormap colormap_from_string(std::string_view name) {
    for (Colormap c : {Colormap::Viridis, Colormap::Magma, Colormap::Diverging, Colormap::Gray})
        if (name == to_string(c)) return c;
    throw std::invalid_argument("unknown colormap '" + std::string(name) +
                                "' (expected viridis, magma, diverging or gray)");
}

Rgba masked_color() { return {0.55f, 0.55f, 0.58f, 1.0f}; }

Rgba colormap_sample(Colormap c, float t) {
    if (std::isnan(t)) return masked_color();
    t = std::clamp(t, 0.0f, 1.0f);
    switch (c) {
        case Colormap::Viridis: return interpolate(kViridis, t);
        case Colormap::Magma: return interpolate(kMagma, t);
        case Colormap::Diverging: return interpolate(kDiverging, t);
        case Colormap::Gray: return interpolate(kGray, t);
    }
    return masked_color();
}

std::vector<unsigned char> colormap_lut(Colormap c, int n_entries) {
    if (n_entries < 2) throw std::invalid_argument("colormap_lut: need at least 2 entries, got " + std::to_string(n_entries));
    std::vector<unsigned char> out(size_t(n_entries) * 4);
    for (int i = 0; i < n_entries; ++i) {
        const Rgba col = colormap_sample(c, float(i) / float(n_entries - 1));
        out[i * 4 + 0] = (unsigned char)std::lround(col.r * 255.0f);
        out[i * 4 + 1] = (unsigned char)std::lround(col.g * 255.0f);
        out[i * 4 + 2] = (unsigned char)std::lround(col.b * 255.0f);
        out[i * 4 + 3] = 255;
    }
    return out;
}

float normalize_value(float v, float vmin, float vmax) {
    if (std::isnan(v) || std::isinf(v)) return NAN;
    if (!(vmax > vmin)) return 0.5f;
    return std::clamp((v - vmin) / (vmax - vmin), 0.0f, 1.0f);
}

Rgba palette(int i) {
    static const Rgba p[] = {{0.00f, 0.45f, 0.70f, 1}, {0.90f, 0.62f, 0.00f, 1}, {0.00f, 0.62f, 0.45f, 1},
                             {0.80f, 0.40f, 0.00f, 1}, {0.34f, 0.71f, 0.91f, 1}, {0.80f, 0.47f, 0.65f, 1},
                             {0.60f, 0.60f, 0.20f, 1}, {0.55f, 0.35f, 0.75f, 1}};
    return p[((i % 8) + 8) % 8];
}

}  // namespace ts::plot
