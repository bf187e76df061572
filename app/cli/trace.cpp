// `transformer-studio trace`: runs one forward pass with full capture and writes every recorded tensor to a
// safetensors file (plus token ids), for analysis outside the app (numpy, torch, safetensors readers). With
// --ablate / --patch the forward carries activation edits (core/trace/intervention.h): heads zero- or mean-ablated, or
// trace points set to the values of an earlier trace file; the trace then holds the edited values and stderr
// compares the last position's logits with an unedited run (and with the patch source's). Encoder-decoder models take
// the source and the target separately (--source / --target, or --translate to decode the target first).
#include "app/cli/cli.h"
#include "app/cli/args.h"
#include "app/cli/translation_model.h"
#include "app/session/text_codec.h"
#include "app/session/worker.h"
#include "core/kernels/attention_rows.h"
#include "core/model/memory_budget.h"
#include "core/kernels/threads.h"
#include "core/model/model.h"
#include "core/formats/safetensors.h"
#include "core/util/json.h"
#include "core/util/number.h"

#include <climits>
#include <limits>
#include <cmath>
#include <fnmatch.h>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace ts::cli {

namespace {
// "L.H[,L.H...]" -> head_out edits of the model's self-attention stack (dec, or enc for encoder-only models).
std::vector<ActivationEdit> parse_ablate(const std::string& s, const std::string& mode, const ModelConfig& c) {
    if (mode != "zero" && mode != "mean")
        throw std::invalid_argument("--ablate-mode expects zero or mean, got '" + mode + "'");
    const std::string stack = c.arch == Arch::EncoderOnly ? "enc" : "dec";
    std::vector<ActivationEdit> edits;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        const auto lh = parse_int_pair(item, '.');
        if (!lh || lh->first < 0 || lh->second < 0)
            throw std::invalid_argument("--ablate expects LAYER.HEAD[,LAYER.HEAD...], got " + quote_value(item));
        const int layer = lh->first, head = lh->second;
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
    const auto parsed = parse_int(std::string_view(spec).substr(at + 1));
    if (!parsed || *parsed < 0 || *parsed > std::numeric_limits<int>::max())
        throw std::invalid_argument("--patch expects POINT[@POSITION], got " + quote_value(spec));
    const int pos = int(*parsed);
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

Seq2SeqInput seq2seq_input(const Args& args, const studio::LoadedModel& lm) {
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

// Which trace names the file gets: --only (or --filter) patterns, --exclude patterns, --layers A-B. A pattern with
// *, ? or [ is a shell glob over the whole name (fnmatch); any other is a prefix ("dec.1.attn.").
struct NameSelection {
    std::vector<std::string> only, exclude;
    int lo = 0, hi = INT_MAX;

    static bool matches(const std::string& pattern, const std::string& name) {
        if (pattern.find_first_of("*?[") != std::string::npos) return ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
        return name.compare(0, pattern.size(), pattern) == 0;
    }
    // "enc.3.ffn.out" -> 3; -1 for names outside the layers (embeddings, logits).
    static int layer_of(const std::string& name) {
        const size_t a = name.find('.');
        if (a == std::string::npos) return -1;
        size_t b = a + 1;
        while (b < name.size() && std::isdigit(static_cast<unsigned char>(name[b]))) ++b;
        if (b == a + 1 || b >= name.size() || name[b] != '.' || b - a > 7) return -1;
        return int(parse_int(std::string_view(name).substr(a + 1, b - a - 1)).value_or(-1));
    }
    [[nodiscard]] bool keeps(const std::string& name) const {
        if (!only.empty() && std::none_of(only.begin(), only.end(), [&](const auto& p) { return matches(p, name); }))
            return false;
        if (std::any_of(exclude.begin(), exclude.end(), [&](const auto& p) { return matches(p, name); })) return false;
        const int l = layer_of(name);
        return l < 0 || (l >= lo && l <= hi);
    }
    // The capture filter: exactly the names the file gets, plus `also` (prefixes the --head entries need), so a
    // subset of a long text is never recorded whole first (a trace of 8k tokens of a 0.5B model is ~18 GB).
    [[nodiscard]] CaptureFilter capture(const std::vector<std::string>& also) const {
        if (only.empty() && exclude.empty() && lo == 0 && hi == INT_MAX) return CaptureFilter::all();
        std::string key = "only=";
        for (const auto& p : only) key += p + ";";
        key += " exclude=";
        for (const auto& p : exclude) key += p + ";";
        key += " layers=" + std::to_string(lo) + "-" + std::to_string(hi) + " also=";
        for (const auto& p : also) key += p + ";";
        return CaptureFilter::custom(
            [sel = *this, also](std::string_view name) {
                const std::string n(name);
                return sel.keeps(n) ||
                    std::any_of(also.begin(), also.end(), [&](const auto& p) { return n.starts_with(p); });
            },
            key);
    }
};

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

NameSelection parse_selection(const Args& args) {
    NameSelection sel;
    if (args.has("filter") && args.has("only")) throw std::invalid_argument("--filter and --only: give one of them");
    if (args.has("filter")) sel.only = {args.get("filter")};
    if (args.has("only")) sel.only = split_list(args.get("only"));
    if (args.has("exclude")) sel.exclude = split_list(args.get("exclude"));
    if (args.has("only") && sel.only.empty()) throw std::invalid_argument("--only needs at least one name or pattern");
    if (args.has("layers")) {
        const std::string t = args.get("layers");
        const size_t dash = t.find('-');
        const std::string_view tv(t);
        const auto lo = parse_int(tv.substr(0, dash));
        const auto hi = dash == std::string::npos ? lo : parse_int(tv.substr(dash + 1));
        constexpr int64_t kMax = std::numeric_limits<int>::max();
        if (!lo || !hi || *lo < -kMax || *lo > kMax || *hi < -kMax || *hi > kMax)
            throw std::invalid_argument("--layers expects A or A-B (layer indices), got " + quote_value(t));
        sel.lo = int(*lo);
        sel.hi = int(*hi);
        if (sel.lo < 0 || sel.hi < sel.lo)
            throw std::invalid_argument("--layers expects 0 <= A <= B, got '" + t + "'");
    }
    return sel;
}

// --head NAME:H — one head of an attention entry (NAME ends in attn.probs, .scores, .scores_scaled or
// .scores_masked), written as "NAME.head<H>" (T, S) without the other heads ever existing.
struct HeadRequest {
    std::string name, block;
    AttentionRows::Kind kind;
    int head;
};

HeadRequest parse_head(const std::string& spec) {
    const size_t colon = spec.rfind(':');
    const auto bad = [&] {
        return std::invalid_argument("--head expects NAME:HEAD with NAME an attention entry (e.g. dec.1.attn.probs:3), "
                                     "got '" + spec + "'");
    };
    if (colon == std::string::npos || colon + 1 >= spec.size()) throw bad();
    HeadRequest r;
    r.name = spec.substr(0, colon);
    const auto head = parse_int(std::string_view(spec).substr(colon + 1));
    if (!head || *head < 0 || *head > std::numeric_limits<int>::max()) throw bad();
    r.head = int(*head);
    const std::optional<AttentionRows::Kind> kind = attention_entry_kind(r.name, &r.block);
    if (!kind) throw bad();
    r.kind = *kind;
    return r;
}

// Streams rows [0, T) of one head of an attention block, kRows at a time.
void put_head_rows(const AttentionRows& rows, AttentionRows::Kind kind, int h,
                   const std::function<void(const float*, size_t)>& put) {
    constexpr int kRows = 256;
    std::vector<float> buf;
    for (int r0 = 0; r0 < rows.n_queries(); r0 += kRows) {
        rows.rows(kind, h, r0, std::min(rows.n_queries(), r0 + kRows), buf);
        put(buf.data(), buf.size());
    }
}

}  // namespace

int run_trace(int argc, char** argv) {
    static const char* const kUsage =
        "usage: transformer-studio trace --model DIR (--text T | --ids 1,2,3) --out FILE.safetensors\n"
        "         [--temperature X] [--only NAMES] [--exclude NAMES] [--layers A-B] [--head NAME:H]...\n"
        "         [--last-logits-only] [--threads N] [--memory-budget SIZE]\n"
        "         [--ablate L.H[,L.H...] [--ablate-mode zero|mean]] [--patch-from TRACE.safetensors --patch POINT[@POS]...]\n"
        "  Runs one forward pass and writes every recorded intermediate (docs/models.md: Trace names) plus input_ids to\n"
        "  one safetensors file. --temperature scales the attention softmax. --only NAMES keeps the names matching one\n"
        "  of a comma-separated list (a prefix such as dec.1.attn., or a glob such as '*.attn.q_rot'; --filter PREFIX\n"
        "  is one prefix); --exclude NAMES drops matches (e.g. '*.scores*,*.probs' leaves out every T x T matrix);\n"
        "  --layers A-B keeps layers A..B of each stack; --head dec.1.attn.probs:3 also writes that head alone as\n"
        "  dec.1.attn.probs.head3 (T, S). Attention matrices are computed head by head as they are written.\n"
        "  --last-logits-only computes logits for the last position only; --threads N runs matrix products and heads\n"
        "  on N threads (default 1). --memory-budget (4G, 512M, or a fraction such as 0.5 of available memory; default\n"
        "  0.8) refuses, before running, a trace that would need more.\n"
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
                    {"model",      "text",        "ids",        "out",           "temperature",      "filter",
                     "ablate",     "ablate-mode", "patch-from", "source",        "target",           "source-ids",
                     "target-ids", "to",          "beam",       "max-len",       "length-penalty",   "threads",
                     "only",       "exclude",     "layers",     "memory-budget", "quant-activations"},
                    {"last-logits-only", "translate"}, {"patch", "head"});
    const std::string out = args.required("out");
    const NameSelection sel = parse_selection(args);
    std::vector<HeadRequest> heads;
    for (const auto& spec : args.all("head")) heads.push_back(parse_head(spec));
    apply_compute_options(args);
    const studio::LoadedModel lm = studio::load_model_folder(args.required("model"), terminal_progress());
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
        const studio::TokenizedText tt =
            studio::tokenize_text(args.get("text"), *lm.codec, lm.model->config().max_seq_len);
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
    std::vector<std::string> head_names;
    for (const HeadRequest& h : heads) head_names.push_back(h.name);
    opt.capture = sel.capture(head_names);
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
    // --- the memory budget: refuse in one line rather than be killed by the kernel -------------------------------
    const size_t budget = args.has("memory-budget")
                              ? parse_memory_budget(args.get("memory-budget"), available_memory_bytes())
                              : default_memory_budget();
    {
        const ForwardMemoryFit fit = fit_forward_memory(*lm.model, opt);
        const int T = seq2seq ? int(s2s.tgt.size()) : int(ids.size());
        size_t need = fit.bytes(T, seq2seq ? int(s2s.src.size()) : 0) * (opt.edits.empty() ? 1 : 2);
        need += size_t(256) * size_t(std::max<size_t>(ids.size(), std::max(s2s.src.size(), s2s.tgt.size()))) * 4;
        const std::string why = memory_refusal(
            "trace of " + std::to_string(seq2seq ? s2s.src.size() + s2s.tgt.size() : ids.size()) + " tokens", need,
            budget, "use a shorter text, record fewer tensors (--layers A-B, --only, --exclude), or raise "
                    "--memory-budget");
        if (!why.empty()) throw std::runtime_error(why);
    }

    const ForwardResult r = run(opt);
    if (!opt.edits.empty()) report_edits(run, opt, r, args.has("patch-from") ? &patch_source : nullptr);

    // --- written as it is read: attention entries stream from their sources head by head, never whole ------------
    const Trace& tr = *r.trace;
    std::map<std::string, StreamedTensor> tensors;
    std::string order;
    const auto add = [&](const std::string& name, std::vector<int64_t> shape,
                         std::function<void(const std::function<void(const float*, size_t)>&)> write) {
        tensors.emplace(name, StreamedTensor{std::move(shape), std::move(write)});
        order += (order.empty() ? "" : ",") + name;
    };
    for (const auto& name : tr.names()) {
        if (!sel.keeps(name)) continue;
        std::string block;
        const std::optional<AttentionRows::Kind> kind = attention_entry_kind(name, &block);
        if (const auto rows = kind && tr.is_pending(name) ? tr.attention(block) : nullptr) {
            add(name, {rows->n_heads(), rows->n_queries(), rows->n_keys()}, [rows, k = *kind](const auto& put) {
                for (int h = 0; h < rows->n_heads(); ++h) put_head_rows(*rows, k, h, put);
            });
            continue;
        }
            const Tensor* t = &tr.at(name);
        add(name, t->shape, [t](const auto& put) { put(t->data.data(), t->data.size()); });
    }
    for (const HeadRequest& h : heads) {
        const auto rows = tr.attention(h.block);
        if (!rows) throw std::invalid_argument("--head " + h.name + ": the trace has no attention block '" + h.block + "'");
        if (h.head >= rows->n_heads())
            throw std::invalid_argument("--head " + h.name + ":" + std::to_string(h.head) + ": the block has " +
                                        std::to_string(rows->n_heads()) + " heads (0.." +
                                        std::to_string(rows->n_heads() - 1) + ")");
        add(h.name + ".head" + std::to_string(h.head), {rows->n_queries(), rows->n_keys()},
            [rows, h](const auto& put) { put_head_rows(*rows, h.kind, h.head, put); });
    }
    std::map<std::string, std::string> meta{{"model", args.get("model")}};
    const auto add_ids = [&](const std::string& name, const std::vector<int>& v) {
        auto t = std::make_shared<Tensor>(ids_tensor(v));
        tensors.emplace(name, StreamedTensor{t->shape, [t](const auto& put) { put(t->data.data(), t->data.size()); }});
    };
    if (seq2seq) {
        add_ids("source_ids", s2s.src);
        add_ids("target_ids", s2s.tgt);
        if (args.flag("translate")) meta["translation"] = s2s.translation;
    } else {
        add_ids("input_ids", ids);
    }
    meta["trace_order"] = order;
    save_safetensors_streamed(out, tensors, meta);
    if (seq2seq)
        std::fprintf(stderr, "wrote %zu tensors for %zu source and %zu target tokens to %s\n", tensors.size(),
                     s2s.src.size(), s2s.tgt.size(), out.c_str());
    else
        std::fprintf(stderr, "wrote %zu tensors for %zu tokens to %s\n", tensors.size(), ids.size(), out.c_str());
    return 0;
}

}  // namespace ts::cli
