// `transformer-studio tokenizer train|encode`: trains a byte-level BPE tokenizer on text files and writes
// tokenizer.json, or encodes a text and prints ids with byte and character spans.
#include "app/cli/cli.h"
#include "app/cli/args.h"
#include "core/tokenizer/bpe_train.h"
#include "core/tokenizer/text_tokenizer.h"
#include "core/tokenizer/tokenizer_io.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ts::cli {
namespace {

const char* const kTokenizerUsage =
        "usage: transformer-studio tokenizer train --input FILE... --vocab-size N --out DIR\n"
        "                                          [--min-frequency N] [--special TOKEN...] [--progress-every N]\n"
        "                                          [--pattern REGEX...]\n"
        "         Trains byte-level BPE on the files; writes DIR/tokenizer.json. The pre-tokenizer is GPT-2's regex\n"
        "         unless --pattern gives a pipeline of PCRE2 regexes (e.g. a Llama-3 style pattern).\n"
        "         Special tokens default to <|endoftext|> (last ids); --special replaces them, as several values or\n"
        "         one comma-separated list, e.g. --special \"<|endoftext|>,<pad>,<2en>,<2zh>\" for translation pairs.\n"
        "         --min-frequency defaults to 2.\n"
        "       transformer-studio tokenizer encode --tokenizer FILE_OR_DIR --text T [--json] [--no-special]\n"
        "         Prints ids and, per token, its byte span [b,e), character span [b,e) and text. FILE_OR_DIR: a model\n"
        "         folder or tokenizer.json, vocab.json (+ merges.txt), tokenizer.model / spiece.model, vocab.txt.\n"
        "         Pipelines other than byte-level BPE add their special tokens ([CLS] ... [SEP], <s>) unless\n"
        "         --no-special.\n"
        "       transformer-studio tokenizer encode --tokenizer FILE_OR_DIR --lines FILE [--no-special]\n"
        "         Bulk mode: encodes the bytes of every line of FILE on its own (without its \\n; a \\r is text) and\n"
        "         prints its ids space-separated, one output line per input line (an empty line for an empty one).\n";

int run_train_tokenizer(int argc, char** argv) {
    const Args args(argc, argv, 3, {"vocab-size", "out", "min-frequency", "progress-every"}, {},
                    {"input", "special", "pattern"});
    const auto& inputs = args.all("input");
    if (inputs.empty()) throw std::invalid_argument("missing required option --input FILE...");
    const std::string out_dir = args.required("out");
    BpeTrainOptions opt;
    const double vs = args.number("vocab-size", -1);
    if (vs < 0) throw std::invalid_argument("missing required option --vocab-size N");
    opt.vocab_size = int32_t(vs);
    opt.min_frequency = int64_t(args.number("min-frequency", 2));
    opt.progress_every = size_t(args.number("progress-every", 500));
    if (args.has("special")) {
        opt.special_tokens.clear();
        for (const std::string& v : args.all("special")) {  // "a,b,c" and "a b c" alike
            size_t begin = 0;
            while (begin <= v.size()) {
                const size_t end = std::min(v.find(',', begin), v.size());
                if (end > begin) opt.special_tokens.push_back(v.substr(begin, end - begin));
                begin = end + 1;
            }
        }
        if (opt.special_tokens.empty()) throw std::invalid_argument("--special needs at least one token");
    }
    if (args.has("pattern")) opt.patterns = args.all("pattern");
    opt.on_progress = [](const BpeTrainProgress& p) {
        std::fprintf(stderr, "  merges %zu/%zu  last: %-16s count %lld  (%.1f s)\n", p.merges_done, p.merges_target,
                     p.last_token.c_str(), static_cast<long long>(p.last_count), p.seconds);
    };

    const auto t0 = std::chrono::steady_clock::now();
    BpeTrainer trainer(opt);
    size_t total_bytes = 0;
    for (const std::string& path : inputs) {
        std::ifstream f(path, std::ios::binary);
        if (!f) throw std::runtime_error(path + ": cannot open input file");
        std::ostringstream ss;
        ss << f.rdbuf();
        const std::string text = ss.str();
        total_bytes += text.size();
        trainer.add_text(text);
    }
    std::fprintf(stderr, "tokenizer train: %zu file(s), %.2f MB, %llu words (%zu distinct); learning %d tokens\n",
                 inputs.size(), double(total_bytes) / 1e6, static_cast<unsigned long long>(trainer.total_words()),
                 trainer.unique_words(), opt.vocab_size);
    const auto tok = trainer.train();
    std::filesystem::create_directories(out_dir);
    const std::string out_path = (std::filesystem::path(out_dir) / "tokenizer.json").string();
    save_tokenizer_json(*tok, out_path);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("wrote %s: vocab_size %zu (%zu merges, %zu special), %.1f s\n", out_path.c_str(), tok->vocab_size(),
                tok->merges().size(), tok->added_tokens().size(), secs);
    if (int64_t(tok->vocab_size()) < opt.vocab_size)
        std::fprintf(stderr, "note: stopped at %zu tokens: no pair occurs --min-frequency %lld times\n",
                     tok->vocab_size(), static_cast<long long>(opt.min_frequency));
    return 0;
}

/// --lines FILE: one line of space-separated ids per input line, written through one buffered stdout.
int encode_lines(const Tokenizer& tok, const std::string& path, const EncodeOptions& opt) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot open --lines file");
    std::string line, out;
    while (std::getline(in, line)) {
        out.clear();
        for (const int32_t id : tok.encode_ids(line, opt)) {
            if (!out.empty()) out += ' ';
            out += std::to_string(id);
        }
        out += '\n';
        std::fwrite(out.data(), 1, out.size(), stdout);
    }
    return std::fflush(stdout) == 0 ? 0 : 1;
}

// Any other pipeline (SentencePiece, WordPiece, Unigram, BPE with byte fallback): ids, pieces and spans.
// One row of the encode table: index, id, [byte) and [char) spans, token.
// snprintf, not "[" + std::to_string(...): GCC 12 warns falsely (-Wrestrict) on the concatenation.
void print_token_row(size_t i, int id, const TokenSpan& s, const std::string& token) {
    char b[48], c[48];
    std::snprintf(b, sizeof b, "[%lld,%lld)", (long long)s.byte_begin, (long long)s.byte_end);
    std::snprintf(c, sizeof c, "[%lld,%lld)", (long long)s.char_begin, (long long)s.char_end);
    std::printf("%5zu %8d %14s %14s  %s\n", i, id, b, c, token.c_str());
}

int encode_pipeline(const TextTokenizer& tok, const Args& args) {
    const bool add_special = !args.flag("no-special");
    if (args.has("lines")) {
        if (args.has("text") || args.flag("json"))
            throw std::invalid_argument("--lines does not combine with --text or --json");
        std::ifstream in(args.get("lines"), std::ios::binary);
        if (!in) throw std::runtime_error(args.get("lines") + ": cannot open --lines file");
        std::string line;
        while (std::getline(in, line)) {
            std::string out;
            for (const int32_t id : tok.encode(line, add_special).ids) {
                if (!out.empty()) out += ' ';
                out += std::to_string(id);
            }
            std::printf("%s\n", out.c_str());
        }
        return std::fflush(stdout) == 0 ? 0 : 1;
    }
    const std::string text = args.required("text");
    const TextEncoding enc = tok.encode(text, add_special);
    if (args.flag("json")) {
        nlohmann::json toks = nlohmann::json::array();
        for (size_t i = 0; i < enc.ids.size(); ++i) {
            const TokenSpan& s = enc.spans[i];
            toks.push_back({{"id", enc.ids[i]},
                            {"token", enc.pieces[i]},
                            {"bytes", {s.byte_begin, s.byte_end}},
                            {"chars", {s.char_begin, s.char_end}}});
        }
        nlohmann::json j;
        j["ids"] = enc.ids;
        j["tokens"] = toks;
        j["tokenizer"] = tok.description();
        std::puts(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        return 0;
    }
    std::printf("%s\n", tok.description().c_str());
    std::printf("%5s %8s %14s %14s  %s\n", "i", "id", "bytes", "chars", "token");
    for (size_t i = 0; i < enc.ids.size(); ++i) print_token_row(i, enc.ids[i], enc.spans[i], enc.pieces[i]);
    return 0;
}

int run_encode(int argc, char** argv) {
    const Args args(argc, argv, 3, {"tokenizer", "text", "lines"}, {"json", "no-special"});
    const auto any = load_text_tokenizer(args.required("tokenizer"));
    const auto tok = any->byte_level_bpe();
    if (!tok) return encode_pipeline(*any, args);
    EncodeOptions opt;
    opt.match_added_tokens = !args.flag("no-special");
    if (args.has("lines")) {
        if (args.has("text") || args.flag("json"))
            throw std::invalid_argument("--lines does not combine with --text or --json");
        return encode_lines(*tok, args.get("lines"), opt);
    }
    const std::string text = args.required("text");
    const Encoding enc = tok->encode(text, opt);
    if (args.flag("json")) {
        nlohmann::json j;
        j["ids"] = enc.ids;
        nlohmann::json toks = nlohmann::json::array();
        for (size_t i = 0; i < enc.ids.size(); ++i) {
            const TokenSpan& s = enc.spans[i];
            toks.push_back({{"id", enc.ids[i]},
                            {"token", tok->display_token(enc.ids[i])},
                            {"bytes", {s.byte_begin, s.byte_end}},
                            {"chars", {s.char_begin, s.char_end}}});
        }
        j["tokens"] = toks;
        std::puts(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        return 0;
    }
    std::string ids = "[";
    for (size_t i = 0; i < enc.ids.size(); ++i) ids += (i ? ", " : "") + std::to_string(enc.ids[i]);
    std::printf("ids (%zu): %s]\n", enc.ids.size(), ids.c_str());
    std::printf("%5s %8s %14s %14s  %s\n", "i", "id", "bytes", "chars", "token");
    for (size_t i = 0; i < enc.ids.size(); ++i)
        print_token_row(i, enc.ids[i], enc.spans[i], tok->display_token(enc.ids[i]));
    return 0;
}

}  // namespace

int run_tokenizer(int argc, char** argv) {
    if (print_help_if_asked(argc, argv, 2, kTokenizerUsage)) return 0;
    const std::string action = argc > 2 ? argv[2] : "";
    if (action == "train") return run_train_tokenizer(argc, argv);
    if (action == "encode") return run_encode(argc, argv);
    if (action == "help") {
        std::fputs(kTokenizerUsage, stdout);
        return 0;
    }
    if (action.empty()) throw std::invalid_argument("expected an action: train or encode (see tokenizer --help)");
    throw std::invalid_argument("unknown action '" + action + "' (expected train or encode)");
}

}  // namespace ts::cli
