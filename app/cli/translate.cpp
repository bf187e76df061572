// `transformer-studio translate`: translates text with an encoder-decoder model folder (greedy or beam search,
// core/forward/decode.h), one output line per input line, optionally with every step's top candidates.
#include "app/cli/args.h"
#include "app/cli/cli.h"
#include "app/cli/translation_model.h"
#include "app/session/text_codec.h"

#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>

namespace ts::cli {

namespace {

std::string token_text(const TranslationModel& tm, int id) {
    return studio::printable_label(decode_target(tm, {id}), false);
}

// One indented line per step: "  step 3: 'cat' p=0.8123   top: 'cat' 0.8123 | 'dog' 0.0712 | ..."
void print_steps(const TranslationModel& tm, const DecodeResult& r) {
    for (size_t i = 0; i < r.steps.size(); ++i) {
        const DecodeStep& s = r.steps[i];
        std::string line = "  step " + std::to_string(i + 1) + ": '" + token_text(tm, s.id) + "' p=";
        char num[32];
        std::snprintf(num, sizeof num, "%.4f", s.prob);
        line += num;
        line += "   top:";
        for (size_t k = 0; k < s.top.size(); ++k) {
            std::snprintf(num, sizeof num, "%.4f", s.top[k].second);
            line += (k ? " | '" : " '") + token_text(tm, s.top[k].first) + "' " + num;
        }
        std::printf("%s\n", line.c_str());
    }
    std::printf("  %s, log p = %.4f, score = %.4f\n", r.finished ? "finished" : "cut at --max-len", r.log_prob,
                r.score);
}

}  // namespace

int run_translate(int argc, char** argv) {
    static const char* const kUsage =
        "usage: transformer-studio translate --model DIR [--text TEXT] [--to en|zh] [--beam N] [--max-len N]\n"
        "         [--length-penalty A] [--show-steps]\n"
        "  Translates with an encoder-decoder model folder: this project's (config.json, model.safetensors,\n"
        "  tokenizer.json and translation.json, as `train --pairs` writes them), a Hugging Face T5, Marian or BART\n"
        "  folder with its tokenizer files, or a T5 GGUF file (the checkpoint fixes the direction; T5 wants its task\n"
        "  prefix in the text, e.g. \"translate English to German: ...\"). Prints one line per input line: the lines\n"
        "  of --text, or of stdin when --text is absent (an empty line gives an empty line).\n"
        "  --to: target language; without it each line goes into en when it holds CJK characters, else into zh\n"
        "  (this project's models; ignored by Hugging Face folders and GGUF files).\n"
        "  --beam N: beam search keeping N hypotheses (default 1: greedy). --length-penalty A (default 1): beam\n"
        "  hypotheses are ranked by log p / length^A, length counting the end token. --max-len N (default 128, at\n"
        "  most the model's max_seq_len): target tokens produced at most, end token included.\n"
        "  --show-steps: after each translation, one indented line per decoded token with its probability and the\n"
        "  five most probable tokens of that step, then the log-probability and score.\n";
    if (print_help_if_asked(argc, argv, 2, kUsage)) return 0;
    const Args args(argc, argv, 2, {"model", "text", "to", "beam", "max-len", "length-penalty"}, {"show-steps"});
    if (!args.positional().empty())
        throw std::invalid_argument("unexpected argument '" + args.positional().front() + "' (text goes in --text)");
    DecodeOptions opt = decode_options_from(args);
    const std::string to = args.get("to");
    const std::string model_dir = args.required("model");
    const TranslationModel tm = open_translation_model(studio::load_model_folder(model_dir, terminal_progress()));
    print_warnings("translate", tm.lm.weight_warnings);
    if (!to.empty() && tm.spec.direction == "model")
        std::fprintf(stderr, "transformer-studio translate: note: --to is ignored: a Hugging Face checkpoint translates "
                             "in its own direction\n");
    else if (!to.empty()) (void)make_source_ids(tm.spec, {}, to);  // throws, naming the languages of this model
    const bool show_steps = args.flag("show-steps");

    const auto translate_line = [&](std::string line, int64_t line_no) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) {
            std::printf("\n");
            return;
        }
        std::string note;
        const std::vector<int> src = source_ids_for_text(tm, line, to, nullptr, &note);
        if (!note.empty()) std::fprintf(stderr, "transformer-studio translate: line %lld: %s\n", (long long)line_no,
                                        note.c_str());
        const DecodeResult r = translate_ids(*tm.lm.model, tm.spec, src, opt);
        std::string out = decode_target(tm, r.ids);
        for (char& ch : out)
            if (ch == '\n' || ch == '\r') ch = ' ';  // one output line per input line, whatever the model says
        std::printf("%s\n", out.c_str());
        if (show_steps) print_steps(tm, r);
        std::fflush(stdout);
    };

    int64_t line_no = 0;
    if (args.has("text")) {
        const std::string text = args.get("text");
        size_t a = 0;
        while (true) {
            const size_t b = text.find('\n', a);
            translate_line(text.substr(a, b == std::string::npos ? std::string::npos : b - a), ++line_no);
            if (b == std::string::npos) break;
            a = b + 1;
        }
    } else {
        std::string line;
        while (std::getline(std::cin, line)) translate_line(line, ++line_no);
    }
    return 0;
}

}  // namespace ts::cli
