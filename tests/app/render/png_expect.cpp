// Checks a rendered PNG: its size, pixels at known places and colors that must appear somewhere.
// Usage: ts_png_expect FILE [--size WxH] [--pixel x,y,r,g,b,a,tol]... [--contains r,g,b,tol]... [--min-colors N]
// Exit 1 naming the first failed check.
#include <stb_image.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: ts_png_expect FILE [--size WxH] [--pixel x,y,r,g,b,a,tol] [--contains r,g,b,tol] [--min-colors N]\n");
        return 2;
    }
    int w = 0, h = 0, n = 0;
    unsigned char* px = stbi_load(argv[1], &w, &h, &n, 4);
    if (!px) {
        std::fprintf(stderr, "%s: cannot be read as an image\n", argv[1]);
        return 1;
    }
    int bad = 0;
    for (int i = 2; i < argc; ++i) {
        const std::string opt = argv[i];
        const char* v = i + 1 < argc ? argv[++i] : "";
        if (opt == "--size") {
            int ew = 0, eh = 0;
            std::sscanf(v, "%dx%d", &ew, &eh);
            if (ew != w || eh != h) { std::fprintf(stderr, "%s: size %dx%d, expected %s\n", argv[1], w, h, v); ++bad; }
        } else if (opt == "--pixel") {
            int x, y, r, g, b, a, tol;
            if (std::sscanf(v, "%d,%d,%d,%d,%d,%d,%d", &x, &y, &r, &g, &b, &a, &tol) != 7 || x < 0 || y < 0 || x >= w || y >= h) {
                std::fprintf(stderr, "bad --pixel %s\n", v);
                return 2;
            }
            const unsigned char* p = px + (size_t(y) * size_t(w) + size_t(x)) * 4;
            if (std::abs(p[0] - r) > tol || std::abs(p[1] - g) > tol || std::abs(p[2] - b) > tol || std::abs(p[3] - a) > tol) {
                std::fprintf(stderr, "%s: pixel (%d,%d) is %d,%d,%d,%d, expected %d,%d,%d,%d ±%d\n", argv[1], x, y, p[0], p[1], p[2],
                             p[3], r, g, b, a, tol);
                ++bad;
            }
        } else if (opt == "--contains") {
            int r, g, b, tol;
            if (std::sscanf(v, "%d,%d,%d,%d", &r, &g, &b, &tol) != 4) { std::fprintf(stderr, "bad --contains %s\n", v); return 2; }
            size_t hits = 0;
            for (size_t k = 0; k < size_t(w) * size_t(h); ++k) {
                const unsigned char* p = px + k * 4;
                hits += std::abs(p[0] - r) <= tol && std::abs(p[1] - g) <= tol && std::abs(p[2] - b) <= tol && p[3] > 200;
            }
            if (hits < 20) { std::fprintf(stderr, "%s: color %d,%d,%d (±%d) appears in %zu pixels, expected a patch\n", argv[1], r, g, b, tol, hits); ++bad; }
        } else if (opt == "--min-colors") {
            std::set<unsigned> colors;
            for (size_t k = 0; k < size_t(w) * size_t(h); ++k) {
                const unsigned char* p = px + k * 4;
                colors.insert((unsigned(p[0] >> 3) << 10) | (unsigned(p[1] >> 3) << 5) | unsigned(p[2] >> 3));
            }
            if (int(colors.size()) < std::atoi(v)) { std::fprintf(stderr, "%s: only %zu distinct colors\n", argv[1], colors.size()); ++bad; }
        } else {
            std::fprintf(stderr, "unknown option %s\n", opt.c_str());
            return 2;
        }
    }
    stbi_image_free(px);
    if (!bad) std::printf("%s: %dx%d ok\n", argv[1], w, h);
    return bad ? 1 : 0;
}
