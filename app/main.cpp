// Entry point: dispatches `transformer-studio [SUBCOMMAND] ...`; no subcommand opens the desktop app.
#include "app/cli/cli.h"

#include <malloc.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>


#if defined(__SANITIZE_ADDRESS__)
#include <dlfcn.h>
namespace {
// Sanitizer builds only (the asan preset): keep Mesa's software GL driver mapped after EGL / GLX let it go, so
// LeakSanitizer can name the library of the ~112 bytes the driver keeps until exit (tests/asan/lsan.supp suppresses
// them by library name). Once unmapped its frames read "<unknown module>", which no suppression can tell from ours.
void pin_mesa_driver() {
    for (const char* p : {"/usr/lib/x86_64-linux-gnu/dri/swrast_dri.so", "/usr/lib/aarch64-linux-gnu/dri/swrast_dri.so",
                          "/usr/lib/dri/swrast_dri.so"})
        if (dlopen(p, RTLD_LAZY | RTLD_NODELETE)) return;
}
}  // namespace
#endif

int main(int argc, char** argv) {
#if defined(__SANITIZE_ADDRESS__)
    pin_mesa_driver();
#endif
    // Keep multi-MB trace/logits buffers in the heap between forwards: with glibc's defaults they are returned to
    // the OS after each pass and page-faulted back in (~0.75 ms of a 3 ms default-model forward).
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    const std::string cmd = argc > 1 ? argv[1] : "";
    try {
        if (cmd == "help") { std::fputs(ts::cli::kAppUsage, stdout); return 0; }
        if (cmd == "--version" || cmd == "version") {
            std::printf("transformer-studio %s\n", TS_VERSION);
            return 0;
        }
        if (cmd == "trace") return ts::cli::run_trace(argc, argv);
        if (cmd == "tokenizer") return ts::cli::run_tokenizer(argc, argv);
        if (cmd == "train") return ts::cli::run_train(argc, argv);
        if (cmd == "corpus") return ts::cli::run_corpus(argc, argv);
        if (cmd == "render") return ts::cli::run_render(argc, argv);
        if (cmd == "eval") return ts::cli::run_eval(argc, argv);
        if (cmd == "translate") return ts::cli::run_translate(argc, argv);
        if (cmd == "lessons") return ts::cli::run_lessons(argc, argv);
        if (cmd == "compare") return ts::cli::run_compare(argc, argv);
        if (!cmd.empty() && cmd[0] != '-') {
            std::fprintf(stderr, "transformer-studio: unknown subcommand '%s' (try --help)\n", cmd.c_str());
            return 2;
        }
        return ts::cli::run_gui(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "transformer-studio %s: %s\n", cmd.empty() ? "app" : cmd.c_str(), e.what());
        return 1;
    }
}
