// `transformer-studio trace`: runs one forward pass with full capture and writes every recorded tensor to a
// safetensors file (plus token ids), for analysis outside the app (numpy, torch, safetensors readers). With
// --ablate / --patch the forward carries activation edits (core/intervention.h): heads zero- or mean-ablated, or
// trace points set to the values of an earlier trace file; the trace then holds the edited values and stderr
// compares the last position's logits with an unedited run (and with the patch source's). Encoder-decoder models take
// the source and the target separately (--source / --target, or --translate to decode the target first).
#include "app/cli/cli.h"
#include "app/cli/args.h"
#include "app/cli/translation_model.h"
#include "app/session/text_codec.h"
#include "app/session/worker.h"
#include "core/threads.h"
#include "core/model.h"
#include "core/safetensors.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace ts::cli {

namespace {
std::vector<int> parse_ids(const std::string& s) {
    std::vector<int> ids;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        try {
            size_t pos = 0;
            const int v = std::stoi(item, &pos);
            if (pos != item.size()) throw std::invalid_argument("");
            ids.push_back(v);
        } catch (...) {
            throw std::invalid_argument("--ids expects comma-separated integers, got '" + item + "'");
        }
    }
    return ids;
}
// "L.H[,L.H...]" -> head_out edits of the model's self-attention stack (dec, or enc for encoder-only models).
std::vector<ActivationEdit> parse_ablate(const std::string& s, const std::string& mode, const ModelConfig& c) {
    if (mode != "zero" && mode != "mean")
        throw std::invalid_argument("--ablate-mode expects zero or mean, got '" + mode + "'");
    const std::string stack = c.arch == Arch::EncoderOnly ? "enc" : "dec";
    std::vector<ActivationEdit> edits;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        int layer = -1, head = -1;
        char dot = 0, extra = 0;
        if (std::sscanf(item.c_str(), "%d%c%d%c", &layer, &dot, &head, &extra) != 3 || dot != '.' || layer < 0 ||
            head < 0)
            throw std::invalid_argument("--ablate expects LAYER.HEAD[,LAYER.HEAD...], got '" + item + "'");
        const std::string point = stack + "." + std::to_string(layer) + ".attn.head_out";
        edits.push_back(mode == "zero" ? ActivationEdit::zero(point, head) : ActivationEdit::mean(point, head));
    }
    return edits;
}

// "POINT[@POS]" with values from a trace file: the whole tensor, or row POS of each head / of the matrix.
ActivationEdit parse_patch(const std::string& spec, const WeightMap& source, const std::string& source_path) {
    const size_t at = spec.find('@');
    const std::string point = spec.substr(0, at);
    const auto it = source.find(point);
    if (it == source.end())
        throw std::invalid_argument("--patch " + spec + ": " + source_path + " has no tensor '" + point + "'");
    const Tensor& t = it->second;
    if (at == std::string::npos) return ActivationEdit::set(point, t.data);
    int pos = -1;
    try {
        size_t used = 0;
        pos = std::stoi(spec.substr(at + 1), &used);
        if (used != spec.size() - at - 1 || pos < 0) throw std::invalid_argument("");
    } catch (...) {
        throw std::invalid_argument("--patch expects POINT[@POSITION], got '" + spec + "'");
    }
    // (T, W) matrices, or (H, T, D) head outputs: one row per head.
    const int64_t heads = t.rank() == 3 ? t.shape[0] : 1, rows = t.rank() == 3 ? t.shape[1] : t.rows(), w = t.cols();
    if (pos >= rows)
        throw std::invalid_argument("--patch " + spec + ": " + source_path + " holds " + std::to_string(rows) +
                                    " positions of '" + point + "'");
    std::vector<float> values;
    for (int64_t h = 0; h < heads; ++h)
        values.insert(values.end(), t.data.begin() + (h * rows + pos) * w, t.data.begin() + (h * rows + pos + 1) * w);
    return ActivationEdit::set(point, std::move(values), -1, pos);
}

float max_abs_diff(const MatrixRM& a, const float* b) {
    float m = 0.0f;
    for (Eigen::Index j = 0; j < a.cols(); ++j) m = std::max(m, std::abs(a(a.rows() - 1, j) - b[j]));
    return m;
}

// One line per edit, then the last position's top token and how far the edits moved its logits. `run` is the
// same forward (forward or forward_seq2seq on the same ids) under other options.
void report_edits(const std::function<ForwardResult(const ForwardOptions&)>& run, const ForwardOptions& opt,
                  const ForwardResult& r, const WeightMap* patch_source) {
    for (const auto& e : opt.edits) std::fprintf(stderr, "edit: %s\n", describe(e).c_str());
    if (r.logits.size() == 0) return;
    ForwardOptions plain = opt;
    plain.edits.clear();
    plain.capture = CaptureFilter::none();
    plain.all_logits = false;
    const ForwardResult base = run(plain);
    const Eigen::Index last = r.logits.rows() - 1;
    Eigen::Index top = 0, base_top = 0;
    r.logits.row(last).maxCoeff(&top);
    base.logits.row(0).maxCoeff(&base_top);
    std::fprintf(stderr, "last position: top token %ld (logit %.4f), unedited run: top token %ld (logit %.4f); "
                 "edits moved the last position's logits by max |dlogit| = %.6g\n",
                 long(top), r.logits(last, top), long(base_top), base.logits(0, base_top),
                 max_abs_diff(r.logits, base.logits.data()));
    if (patch_source) {
        const auto it = patch_source->find("logits");
        if (it != patch_source->end() && it->second.cols() == r.logits.cols()) {
            const Tensor& src = it->second;
            const float* src_last = src.data.data() + (src.rows() - 1) * src.cols();
            std::fprintf(stderr, "vs --patch-from logits at their last position: max |dlogit| = %.6g\n",
                         max_abs_diff(r.logits, src_last));
        }
    }
}

Tensor ids_tensor(const std::vector<int>& ids) {
    Tensor t({int64_t(ids.size())});
    for (size_t i = 0; i < ids.size(); ++i) t.data[i] = float(ids[i]);
    return t;
}

// The encoder and decoder inputs of an encoder-decoder trace (--source/--source-ids, --target/--target-ids/
// --translate). The translation model (tokenizer + translation.json) is opened only when text or --translate
// needs it.
struct Seq2SeqInput {
    std::vector<int> src, tgt;
    std::string translation;  ///< --translate: the decoded text
};

Seq2SeqInput seq2seq_input(const Args& args, const ui::LoadedModel& lm) {
    const int n_src = int(args.has("source")) + int(args.has("source-ids"));
    const int n_tgt = int(args.has("target")) + int(args.has("target-ids")) + int(args.flag("translate"));
    if (args.has("text") || args.has("ids"))
        throw std::invalid_argument("model '" + lm.model->config().name +
                                    "' is encoder-decoder: give --source or --source-ids, and --target, --target-ids "
                                    "or --translate (instead of --text / --ids)");
    if (n_src != 1) throw std::invalid_argument("give exactly one of --source TEXT and --source-ids LIST");
    if (n_tgt != 1) throw std::invalid_argument("give exactly one of --target TEXT, --target-ids LIST and --translate");
    if (!args.flag("translate") && (args.has("beam") || args.has("max-len") || args.has("length-penalty")))
        throw std::invalid_argument("--beam, --max-len and --length-penalty go with --translate");
    if (args.has("to") && !args.has("source")) throw std::invalid_argument("--to goes with --source TEXT");

    std::optional<TranslationModel> tm;
    if (args.has("source") || args.has("target") || args.flag("translate")) tm = open_translation_model(lm);
    Seq2SeqInput in;
    if (args.has("source")) {
        std::string note;
        in.src = source_ids_for_text(*tm, args.get("source"), args.get("to"), nullptr, &note);
        if (!note.empty()) std::fprintf(stderr, "note: %s\n", note.c_str());
    } else {
        in.src = parse_ids(args.get("source-ids"));
    }
    if (args.has("target-ids")) {
        in.tgt = parse_ids(args.get("target-ids"));
    } else {
        std::vector<int> target;
        if (args.has("target")) {
            target = target_ids_for_text(*tm, args.get("target"));
        } else {
            const DecodeResult r = translate_ids(*lm.model, tm->spec, in.src, decode_options_from(args));
            target = r.ids;
            in.translation = decode_target(*tm, r.ids);
            std::fprintf(stderr, "translation (%zu tokens, %s, log p = %.4f): %s\n", r.ids.size(),
                         r.finished ? "finished" : "cut at --max-len", r.log_prob, in.translation.c_str());
        }
        in.tgt.push_back(tm->spec.decoder_start_id);
        in.tgt.insert(in.tgt.end(), target.begin(), target.end());
    }
    return in;
}

}  // namespace

int run_trace(int argc, char** argv) {
    static const char* const kUsage =
        "usage: transformer-studio trace --model DIR (--text T | --ids 1,2,3) --out FILE.safetensors\n"
        "         [--temperature X] [--filter PREFIX] [--last-logits-only] [--threads N]\n"
        "         [--ablate L.H[,L.H...] [--ablate-mode zero|mean]] [--patch-from TRACE.safetensors --patch POINT[@POS]...]\n"
        "  Runs one forward pass and writes every recorded intermediate (docs/models.md: Trace names) plus input_ids to\n"
        "  one safetensors file. --temperature scales the attention softmax; --filter keeps names starting with\n"
        "  PREFIX (e.g. dec.1.attn.); --last-logits-only computes logits for the last position only; --threads N\n"
        "  runs matrix products and heads on N threads (default 1).\n"
        "  --ablate zero- (or mean-) ablates heads' outputs; --patch sets a trace point (e.g. dec.2.resid_ffn@5) to\n"
        "  its values in an earlier trace file. stderr reports how far the edits moved the last position's logits.\n"
        "Encoder-decoder models take the source and the target separately:\n"
        "       transformer-studio trace --model DIR (--source T [--to en|zh] | --source-ids 1,2,3)\n"
        "         (--target T | --target-ids 1,2,3 | --translate [--beam N] [--max-len N] [--length-penalty A])\n"
        "         --out FILE.safetensors [the options above]\n"
        "  --source TEXT becomes the encoder input of translation.json ([<2to>] + tokens + <|endoftext|>; --to as in\n"
        "  `translate`, guessed when absent); --source-ids is the whole encoder input as given. --target TEXT feeds\n"
        "  the decoder <|endoftext|> + tokens (its last position predicts the end token); --target-ids is the whole\n"
        "  decoder input as given; --translate decodes the source first (greedy, or beam search with --beam) and\n"
        "  traces the translation the same way. The file holds source_ids and target_ids (the decoder input).\n";
    if (print_help_if_asked(argc, argv, 2, kUsage)) return 0;
    const Args args(argc, argv, 2,
                    {"model", "text", "ids", "out", "temperature", "filter", "ablate", "ablate-mode", "patch-from",
                     "source", "target", "source-ids", "target-ids", "to", "beam", "max-len", "length-penalty",
                     "threads"},
                    {"last-logits-only", "translate"}, {"patch"});
    const std::string out = args.required("out");
    if (args.has("threads")) set_compute_threads(parse_thread_count(args.get("threads")));
    const ui::LoadedModel lm = ui::load_model_folder(args.required("model"), terminal_progress());
    print_warnings("trace", lm.weight_warnings);
    const bool seq2seq = lm.model->config().arch == Arch::EncoderDecoder;
    if (!seq2seq) {
        for (const char* k : {"source", "target", "source-ids", "target-ids", "to", "beam", "max-len",
                              "length-penalty"})
            if (args.has(k))
                throw std::invalid_argument(std::string("--") + k + " is for encoder-decoder models; model '" +
                                            lm.model->config().name + "' is " + arch_words(lm.model->config().arch) +
                                            ": use --text or --ids");
        if (args.flag("translate"))
            throw std::invalid_argument("--translate needs an encoder-decoder model; model '" +
                                        lm.model->config().name + "' is " + arch_words(lm.model->config().arch));
    }
    Seq2SeqInput s2s;
    if (seq2seq) s2s = seq2seq_input(args, lm);

    std::vector<int> ids;
    if (seq2seq) {
        // the inputs are in s2s
    } else if (args.has("ids")) {
        ids = parse_ids(args.get("ids"));
    } else if (args.has("text")) {
        if (lm.codec->ids_only())
            throw std::invalid_argument(lm.tokenizer_warning.empty()
                                            ? "model folder has no tokenizer (tokenizer.json, tokenizer.model, vocab.txt, ...): "
                                              "pass token ids with --ids"
                                            : "no tokenizer: " + lm.tokenizer_warning + "; pass token ids with --ids");
        const ui::TokenizedText tt = ui::tokenize_text(args.get("text"), *lm.codec, lm.model->config().max_seq_len);
        for (const auto& n : tt.notices) std::fprintf(stderr, "note: %s\n", n.c_str());
        ids = tt.ids;
    } else {
        throw std::invalid_argument("give --text or --ids");
    }
    if (!seq2seq && ids.empty()) throw std::invalid_argument("no tokens to trace (empty text)");
    if (seq2seq && s2s.src.empty()) throw std::invalid_argument("no source tokens to trace (empty --source-ids)");
    if (seq2seq && s2s.tgt.empty()) throw std::invalid_argument("no target tokens to trace (empty --target-ids)");

    ForwardOptions opt;
    opt.temperature = float(args.number("temperature", 1.0));
    opt.capture = args.has("filter") ? CaptureFilter::prefixes({args.get("filter")}) : CaptureFilter::all();
    opt.all_logits = !args.flag("last-logits-only");
    if (args.has("ablate-mode") && !args.has("ablate")) throw std::invalid_argument("--ablate-mode needs --ablate");
    if (args.has("ablate"))
        opt.edits = parse_ablate(args.get("ablate"), args.get("ablate-mode", "zero"), lm.model->config());
    WeightMap patch_source;
    if (args.has("patch") != args.has("patch-from"))
        throw std::invalid_argument("--patch POINT[@POS] and --patch-from FILE go together");
    if (args.has("patch-from")) {
        patch_source = load_safetensors(args.get("patch-from"));
        for (const auto& spec : args.all("patch"))
            opt.edits.push_back(parse_patch(spec, patch_source, args.get("patch-from")));
    }
    const std::function<ForwardResult(const ForwardOptions&)> run = [&](const ForwardOptions& o) {
        return seq2seq ? forward_seq2seq(*lm.model, s2s.src, s2s.tgt, o) : forward(*lm.model, ids, o);
    };
    const ForwardResult r = run(opt);
    if (!opt.edits.empty()) report_edits(run, opt, r, args.has("patch-from") ? &patch_source : nullptr);

    WeightMap tensors;
    for (const auto& name : r.trace->names()) tensors.emplace(name, r.trace->at(name));
    std::map<std::string, std::string> meta{{"model", args.get("model")}};
    if (seq2seq) {
        tensors.emplace("source_ids", ids_tensor(s2s.src));
        tensors.emplace("target_ids", ids_tensor(s2s.tgt));
        if (args.flag("translate")) meta["translation"] = s2s.translation;
    } else {
        tensors.emplace("input_ids", ids_tensor(ids));
    }
    std::string order;
    for (const auto& name : r.trace->names()) order += (order.empty() ? "" : ",") + name;
    meta["trace_order"] = order;
    save_safetensors(out, tensors, meta);
    if (seq2seq)
        std::fprintf(stderr, "wrote %zu tensors for %zu source and %zu target tokens to %s\n", tensors.size(),
                     s2s.src.size(), s2s.tgt.size(), out.c_str());
    else
        std::fprintf(stderr, "wrote %zu tensors for %zu tokens to %s\n", tensors.size(), ids.size(), out.c_str());
    return 0;
}

}  // namespace ts::cli
