// Entry point: dispatches `transformer-studio [SUBCOMMAND] ...`; no subcommand opens the desktop app.
#include "app/cli/cli.h"

#include <malloc.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>


int main(int argc, char** argv) {
    // Keep multi-MB trace/logits buffers in the heap between forwards: with glibc's defaults they are returned to
    // the OS after each pass and page-faulted back in (~0.75 ms of a 3 ms default-model forward).
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    const std::string cmd = argc > 1 ? argv[1] : "";
    try {
        if (cmd == "help") { std::fputs(ts::cli::kAppUsage, stdout); return 0; }
        if (cmd == "trace") return ts::cli::run_trace(argc, argv);
        if (cmd == "tokenizer") return ts::cli::run_tokenizer(argc, argv);
        if (cmd == "train") return ts::cli::run_train(argc, argv);
        if (cmd == "corpus") return ts::cli::run_corpus(argc, argv);
        if (cmd == "render") return ts::cli::run_render(argc, argv);
        if (cmd == "eval") return ts::cli::run_eval(argc, argv);
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
