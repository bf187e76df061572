// Entry point: dispatches `transformer-studio [SUBCOMMAND] ...`; no subcommand opens the desktop app.
#include "app/cli/cli.h"

#include <malloc.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

namespace {
void print_usage() {
    std::puts(
        "usage: transformer-studio [--model DIR] [--text TEXT]      open the desktop app\n"
        "         [--frame-stats FILE] [--bench-edits N] [--max-frames N]  per-frame times as JSON; N text edits; exit\n"
        "       transformer-studio trace --model DIR (--text T | --ids 1,2,3) --out FILE.safetensors\n"
        "       transformer-studio tokenizer train --input FILE... --vocab-size N --out DIR\n"
        "       transformer-studio tokenizer encode --tokenizer FILE --text T\n"
        "       transformer-studio eval --model DIR [--data corpus.txt]       quality report (loss, heads, samples)\n"
        "       transformer-studio corpus build --out DIR [--parallel zh-en]\n"
        "       transformer-studio train --config FILE --tokenizer FILE --data TEXT... --out DIR [...]\n"
        "       transformer-studio render --model DIR --text T --view NAME --out FILE.(png|svg|csv)\n"
        "       transformer-studio render --view list");
}
}  // namespace

int main(int argc, char** argv) {
    // Keep multi-MB trace/logits buffers in the heap between forwards: with glibc's defaults they are returned to
    // the OS after each pass and page-faulted back in (~0.75 ms of a 3 ms default-model forward).
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    const std::string cmd = argc > 1 ? argv[1] : "";
    try {
        if (cmd == "-h" || cmd == "--help" || cmd == "help") { print_usage(); return 0; }
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
