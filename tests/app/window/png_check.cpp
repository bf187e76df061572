// Checks that screenshots are not blank: each PNG must load, have the expected size range, show many distinct
// colors and real contrast. Usage: ts_png_check FILE.png... (exit 1 naming the first bad file).
#include <stb_image.h>

#include <cmath>
#include <cstdio>
#include <set>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: ts_png_check FILE.png...\n");
        return 2;
    }
    int bad = 0;
    for (int i = 1; i < argc; ++i) {
        int w = 0, h = 0, n = 0;
        unsigned char* px = stbi_load(argv[i], &w, &h, &n, 3);
        if (!px) {
            std::fprintf(stderr, "%s: cannot be read as an image\n", argv[i]);
            ++bad;
            continue;
        }
        std::set<unsigned> colors;
        double sum = 0, sum2 = 0;
        const size_t count = size_t(w) * size_t(h);
        for (size_t k = 0; k < count; ++k) {
            const unsigned char* p = px + 3 * k;
            colors.insert((unsigned(p[0] >> 3) << 10) | (unsigned(p[1] >> 3) << 5) | unsigned(p[2] >> 3));
            const double y = 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
            sum += y;
            sum2 += y * y;
        }
        stbi_image_free(px);
        const double mean = sum / double(count), sd = std::sqrt(std::max(0.0, sum2 / double(count) - mean * mean));
        const bool ok = w >= 200 && h >= 200 && colors.size() >= 64 && sd >= 8.0;
        std::printf("%s: %dx%d, %zu distinct colors, luminance sd %.1f: %s\n", argv[i], w, h, colors.size(), sd,
                    ok ? "ok" : "BLANK or nearly blank");
        if (!ok) ++bad;
    }
    return bad ? 1 : 0;
}
