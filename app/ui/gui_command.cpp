// `transformer-studio` with no subcommand: opens the desktop app. Options:
//   --model DIR  --text TEXT  --theme light|dark  --panel NAME  --size WxH  --no-state  --lang en|zh
//   --screenshot-dir DIR [--frames N] [--panel NAME|all]   render, save one PNG per panel, exit (tests)
//   --frame-stats FILE [--bench-edits N] [--max-frames N]  per-frame times as JSON (tests/bench/ui_frame_bench.sh)
//   --slow-frame-ms N   sleep N ms in every frame (tests: no click or keystroke is lost when frames are slow); each
//                       frame says "[frame] K drawn" on stderr before its sleep, the tests' clock
#include "app/cli/cli.h"
#include "app/cli/args.h"
#include "app/i18n/tr.h"
#include "app/session/interp_jobs.h"
#include "app/session/worker.h"
#include "app/ui/app.h"
#include "core/model/memory_budget.h"
#include "core/kernels/threads.h"
#include "app/session/limits.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace ts::cli {

const char* const kAppUsage =
    "usage: transformer-studio [--model DIR] [--text TEXT] [--theme light|dark] [--panel NAME] [--size WxH]\n"
    "                          [--no-state] [--threads N] [--lang en|zh]      open the desktop app\n"
    "         (--threads: compute threads for the model, default max(1, cores - 1))\n"
    "         [--memory-budget SIZE]  refuse a text whose forward would need more (4G, 512M, or a fraction such as "
    "0.5\n"
    "                                 of available memory; default 0.8): the window says so and keeps running\n"
    "         test and benchmark modes: --screenshot-dir DIR [--frames N] [--panel NAME|all]; --frame-stats FILE\n"
    "         [--bench-edits N] [--max-frames N] [--slow-frame-ms N] [--analyses "
    "sweep,patching,attribution,flow,heads,inputs]\n"
    "         encoder-decoder models: [--target TEXT] [--translate] [--to auto|en|zh] [--beam N]\n"
    "         [--attn-source decoder|encoder|cross]   (--text is the source)\n"
    "         lessons: [--lesson ID[:STEP]]   open the Lessons tab on that lesson and step\n"
    "         training lab: [--lab SETTINGS.json [--lab-out DIR]]   start a lab run on the Training tab (screenshot\n"
    "                                 mode waits for it to finish)\n"
    "       transformer-studio trace --model DIR (--text T | --ids 1,2,3) --out FILE.safetensors\n"
    "       transformer-studio trace --model DIR --source T (--target T | --translate) --out FILE.safetensors\n"
    "       transformer-studio translate --model DIR [--text T] [--to en|zh] [--beam N]   translation models\n"
    "       transformer-studio tokenizer train --input FILE... --vocab-size N --out DIR\n"
    "       transformer-studio tokenizer encode --tokenizer FILE --text T\n"
    "       transformer-studio eval --model DIR [--data corpus.txt]       quality report (loss, heads, samples)\n"
    "       transformer-studio corpus build --out DIR [--parallel zh-en]\n"
    "       transformer-studio train --config FILE --tokenizer FILE --data TEXT... --out DIR [...]\n"
    "       transformer-studio render --model DIR --text T --view NAME --out FILE.(png|svg|csv)\n"
    "       transformer-studio render --view list\n"
    "       transformer-studio lessons list | check FILE.json...   guided lessons: list, or check a lesson file\n"
    "       transformer-studio compare --model A --reference B (--text T | --ids 1,2,3)   what quantization cost\n"
    "  Every subcommand answers --help (or -h) with its own usage.\n";

int run_gui(int argc, char** argv) {
    if (print_help_if_asked(argc, argv, 1, kAppUsage)) return 0;
    const Args args(argc, argv, 1, {"model",         "text",     "theme",       "panel",       "screenshot-dir",
                                    "frames",        "size",     "frame-stats", "bench-edits", "max-frames",
                                    "slow-frame-ms", "analyses", "target",      "to",          "beam",
                                    "attn-source",   "threads",  "lang",        "lesson",      "memory-budget",
                                    "lab",           "lab-out"},
                    {"no-state", "translate"});
    // The compute worker's threads: max(1, cores - 1) so the UI thread keeps a core (issue #14).
    set_compute_threads(args.has("threads") ? parse_thread_count(args.get("threads")) : default_worker_threads());
    if (args.has("memory-budget"))
        studio::set_forward_memory_budget(parse_memory_budget(args.get("memory-budget"), available_memory_bytes()));
    ui::AppOptions o;
    o.exe_path = argc > 0 ? argv[0] : "";
    o.model_dir = args.get("model");
    o.has_text = args.has("text");
    o.text = args.get("text");
    o.has_target = args.has("target");
    o.target = args.get("target");
    o.translate = args.flag("translate");
    o.translate_to = args.get("to");
    if (!o.translate_to.empty() && o.translate_to != "auto" && o.translate_to != "en" && o.translate_to != "zh")
        throw std::invalid_argument("--to expects auto, en or zh, got '" + o.translate_to + "'");
    o.beam = int(args.integer("beam", 0, 1, studio::kMaxBeam));  // 0 (absent) = the saved setting
    if (const std::string a = args.get("attn-source"); !a.empty()) {
        o.attn_source = studio::parse_attn_source(a);
        if (!o.attn_source)
            throw std::invalid_argument("--attn-source expects " + studio::attn_source_list() + ", got '" + a + "'");
    }
    o.theme = args.get("theme");
    if (!o.theme.empty() && o.theme != "light" && o.theme != "dark")
        throw std::invalid_argument("--theme expects light or dark, got '" + o.theme + "'");
    o.lang = args.get("lang");
    if (!o.lang.empty() && i18n::normalize_language(o.lang).empty())
        throw std::invalid_argument("--lang expects en or zh, got '" + o.lang + "'");
    o.panel = args.get("panel");
    if (args.has("lesson")) {  // --lesson ID[:STEP] (STEP counts from 1): open the Lessons tab there
        const std::string v = args.get("lesson");
        const size_t colon = v.find(':');
        o.lesson = v.substr(0, colon);
        o.lesson_step = colon == std::string::npos ? 1 : std::atoi(v.c_str() + colon + 1);
        if (o.lesson.empty() || o.lesson_step < 1) throw std::invalid_argument("--lesson expects ID or ID:STEP (STEP from 1)");
        if (o.panel.empty()) o.panel = "lessons";
    }
    o.lab_settings = args.get("lab");
    o.lab_out = args.get("lab-out");
    if (!o.lab_out.empty() && o.lab_settings.empty())
        throw std::invalid_argument("--lab-out goes with --lab SETTINGS.json");
    if (!o.lab_settings.empty() && o.panel.empty()) o.panel = "training";
    o.screenshot_dir = args.get("screenshot-dir");
    o.frames = int(args.integer("frames", 5, 1, 1000000));
    o.persist = !args.flag("no-state");
    o.frame_stats = args.get("frame-stats");
    o.bench_edits = int(args.integer("bench-edits", 0, 0, 1000000));
    o.max_frames = int(args.integer("max-frames", 0, 0, 100000000));
    o.slow_frame_ms = int(args.integer("slow-frame-ms", 0, 0, 60000));
    if (args.has("analyses")) {
        std::string list = args.get("analyses"), item;
        for (size_t a = 0; a <= list.size();) {
            size_t b = list.find(',', a);
            if (b == std::string::npos) b = list.size();
            item = list.substr(a, b - a);
            if (!studio::parse_interp_kind(item)) {
                std::string names;
                for (const auto& [kind, name] : studio::kInterpKindNames)
                    names += std::string(names.empty() ? "" : ",") + name;
                throw std::invalid_argument("--analyses expects " + names + "; got '" + item + "'");
            }
            o.analyses.push_back(item);
            a = b + 1;
        }
    }
    if (o.slow_frame_ms < 0 || o.slow_frame_ms > 10000)
        throw std::invalid_argument("--slow-frame-ms expects 0..10000 milliseconds");
    if (o.bench_edits < 0 || o.max_frames < 0)
        throw std::invalid_argument("--bench-edits and --max-frames expect a count >= 0");
    if (args.has("size")) {
        const auto wh = parse_int_pair(args.get("size"), 'x');
        if (!wh || wh->first < 200 || wh->second < 200 || wh->first > 16384 || wh->second > 16384)
            throw std::invalid_argument("--size expects WxH (200x200 to 16384x16384), got " +
                                        quote_value(args.get("size")));
        o.width = wh->first;
        o.height = wh->second;
    }
    if (!args.positional().empty())
        throw std::invalid_argument("unexpected argument '" + args.positional().front() + "'");
    return ui::run_app(o);
}

}  // namespace ts::cli
