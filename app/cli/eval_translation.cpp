// `transformer-studio eval` for encoder–decoder translation models: per direction, held-out cross-entropy of the
// references (teacher forcing), chrF/BLEU of greedy and beam search, the translation-memory baseline, and how often
// cross-attention's arg-max lands on the IBM Model 1 reference alignment — the numbers behind the model card.
#include "app/cli/eval_translation.h"

#include "core/forward/decode.h"
#include "core/eval/alignment_hits.h"
#include "core/eval/mt_metrics.h"
#include "core/eval/retrieval.h"
#include "core/model/model.h"
#include "core/tokenizer/bpe.h"
#include "core/tokenizer/tokenizer_io.h"
#include "app/session/limits.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <optional>

namespace ts::cli {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Pair {
    int64_t line = 0;
    std::string en, zh;
};

/// "English<TAB>Chinese" lines with read_pair_tsv's rules (core/train/pair_data.cpp): a trailing CR dropped, empty
/// lines and lines without exactly one tab between two non-empty sides skipped, lines numbered from 0.
std::vector<Pair> read_pairs(const std::string& path, const char* what) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(std::string("cannot read ") + what + " " + path);
    std::vector<Pair> out;
    std::string line;
    for (int64_t no = 0; std::getline(in, line); ++no) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const size_t tab = line.find('\t');
        if (line.empty() || tab == std::string::npos || tab == 0 || tab + 1 == line.size() ||
            line.find('\t', tab + 1) != std::string::npos)
            continue;
        out.push_back({no, line.substr(0, tab), line.substr(tab + 1)});
    }
    if (out.empty())
        throw std::runtime_error(path + ": no \"English<TAB>Chinese\" pair in " + what);
    return out;
}

std::vector<int> to_int(const std::vector<int32_t>& v) { return {v.begin(), v.end()}; }

/// Cross-entropy (nats, summed) of tgt[t] under logits row t, for every row.
double summed_cross_entropy(const MatrixRM& logits, const std::vector<int>& tgt) {
    double sum = 0;
    for (size_t t = 0; t < tgt.size(); ++t) {
        const auto row = logits.row(Eigen::Index(t));
        const float mx = row.maxCoeff();
        sum += mx + std::log((row.array() - mx).exp().sum()) - row(tgt[t]);
    }
    return sum;
}

nlohmann::json bleu_json(const eval::BleuScore& b) {
    return {{"score", b.score},
            {"precisions", b.precisions},
            {"bp", b.bp},
            {"hyp_len", b.stats.hyp_len},
            {"ref_len", b.stats.ref_len}};
}

struct SystemResult {
    std::string name;
    std::vector<std::string> hyps;
    double seconds = 0;
    int64_t tokens = 0;   // produced target tokens (end tokens excluded)
    int64_t unfinished = 0;
};

nlohmann::json hit_json(const eval::AlignmentHitCounter& c) {
    nlohmann::json per = nlohmann::json::array(), avg = nlohmann::json::array();
    for (int l = 0; l < c.n_layers(); ++l) {
        nlohmann::json row = nlohmann::json::array();
        for (int h = 0; h < c.n_heads(); ++h) row.push_back(c.rate(l, h));
        per.push_back(row);
        avg.push_back(c.rate(l, -1));
    }
    const eval::HeadHitRate bh = c.best_head(), bl = c.best_layer_average();
    return {{"per_layer_head", per},
            {"per_layer_head_average", avg},
            {"best_head", {{"layer", bh.layer}, {"head", bh.head}, {"rate", bh.rate}}},
            {"best_layer_head_average", {{"layer", bl.layer}, {"rate", bl.rate}}}};
}

void print_hits(const char* label, const eval::AlignmentHitCounter& c) {
    const eval::HeadHitRate bh = c.best_head(), bl = c.best_layer_average();
    std::printf("    %s: best head L%d H%d %.3f; best layer head-average L%d %.3f\n", label, bh.layer, bh.head, bh.rate,
                bl.layer, bl.rate);
    std::printf("      %-6s", "layer");
    for (int h = 0; h < c.n_heads(); ++h) std::printf("   H%-3d", h);
    std::printf("   mean-attn\n");
    for (int l = 0; l < c.n_layers(); ++l) {
        std::printf("      L%-5d", l);
        for (int h = 0; h < c.n_heads(); ++h) std::printf("  %.3f", c.rate(l, h));
        std::printf("   %.3f\n", c.rate(l, -1));
    }
}

}  // namespace

int run_translation_eval(const Args& args, const std::string& model_dir, const Model& m) {
    const auto t_total = Clock::now();
    const ModelConfig& c = m.config();
    const auto tok = load_tokenizer(model_dir);
    const TranslationSpec spec = load_translation_spec(model_dir, *tok);
    const std::string pairs_path = args.required("pairs");
    std::vector<Pair> pairs = read_pairs(pairs_path, "--pairs");
    const int64_t limit = args.integer("limit", 0, 0, int64_t(1) << 40);  // 0 = all pairs
    if (limit > 0 && size_t(limit) < pairs.size()) pairs.resize(size_t(limit));
    const int beam = int(args.integer("beam", 4, 1, studio::kMaxBeam));  // 1 = greedy only
    const int n_examples = int(args.integer("examples", 20, 0, 100000));
    const float length_penalty = float(args.real("length-penalty", 1.0, -10.0, 10.0));

    std::optional<eval::AlignmentFile> align;
    if (args.has("alignments")) {
        align = eval::load_alignment_file(args.get("alignments"));
        const int want_prefix = spec.direction == "both" ? 1 : 0;
        if (align->source_prefix != want_prefix)
            throw std::runtime_error(args.get("alignments") + ": made for source_prefix " +
                                     std::to_string(align->source_prefix) + ", this model (direction " +
                                     spec.direction + ") needs " + std::to_string(want_prefix));
    }
    std::vector<Pair> train;
    if (args.has("train")) train = read_pairs(args.get("train"), "--train");

    EncodeOptions plain;
    plain.match_added_tokens = false;  // as in training: "<pad>" inside a message is text
    const auto decode_text = [&](const std::vector<int>& ids) {
        return tok->decode(std::vector<int32_t>(ids.begin(), ids.end()));
    };

    nlohmann::json report = {{"model", model_dir},
                             {"parameters", c.parameter_count()},
                             {"pairs_file", pairs_path},
                             {"pairs", pairs.size()},
                             {"beam", beam},
                             {"length_penalty", length_penalty},
                             {"metrics",
                              {{"chrF", "chrF2|nc:6|nw:0|space:no|eff:yes (sacreBLEU 2.x default, corpus statistics)"},
                               {"BLEU",
                                "BLEU|nrefs:1|case:mixed|eff:no|tok:zh (Chinese) or 13a (English)|smooth:exp"}}}};
    nlohmann::json directions = nlohmann::json::object();
    std::printf("eval %s: %zu pairs from %s, %lld parameters, beam %d\n", model_dir.c_str(), pairs.size(),
                pairs_path.c_str(), static_cast<long long>(c.parameter_count()), beam);
    std::fflush(stdout);

    std::vector<std::string> targets = target_languages(spec);
    std::sort(targets.begin(), targets.end(), std::greater<>());  // en-zh before zh-en
    const std::string hyps_dir = args.get("hyps");
    if (!hyps_dir.empty()) std::filesystem::create_directories(hyps_dir);
    const auto write_lines = [&](const std::string& name, const std::vector<std::string>& lines) {
        const std::string path = (std::filesystem::path(hyps_dir) / name).string();
        std::ofstream out(path, std::ios::binary);
        for (const std::string& l : lines) out << l << '\n';
        if (!out) throw std::runtime_error("cannot write " + path);
    };
    for (const std::string& to : targets) {
        const std::string from = to == "zh" ? "en" : "zh";
        const std::string dir = from + "-" + to;
        const eval::BleuTokenizer bleu_tok = to == "zh" ? eval::BleuTokenizer::Zh : eval::BleuTokenizer::Tok13a;
        const std::string to_arg = spec.direction == "both" ? to : "";
        const auto source_of = [&](const Pair& p) -> const std::string& { return from == "en" ? p.en : p.zh; };
        const auto target_of = [&](const Pair& p) -> const std::string& { return to == "en" ? p.en : p.zh; };

        std::vector<std::string> refs;
        SystemResult greedy{"greedy", {}, 0, 0, 0}, beamed{"beam " + std::to_string(beam), {}, 0, 0, 0};
        double ce_sum = 0, tf_seconds = 0;
        int64_t ce_tokens = 0, skipped = 0, align_missing = 0;
        eval::AlignmentHitCounter hits(c.n_layers, c.n_heads), hits_shift(c.n_layers, c.n_heads);
        std::vector<std::string> probe_names;
        for (int l = 0; l < c.n_layers; ++l) probe_names.push_back("dec." + std::to_string(l) + ".cross_attn.probs");
        std::vector<size_t> kept;  // index into pairs of every evaluated pair

        const auto t_dir = Clock::now();
        const size_t every = std::max<size_t>(1, pairs.size() / 10);
        for (size_t i = 0; i < pairs.size(); ++i) {
            const Pair& p = pairs[i];
            const std::vector<int> src_text = to_int(tok->encode_ids(source_of(p), plain));
            const std::vector<int> tgt_text = to_int(tok->encode_ids(target_of(p), plain));
            const std::vector<int> src = make_source_ids(spec, src_text, to_arg);
            if (int(src.size()) > c.max_seq_len || int(tgt_text.size()) + 1 > c.max_seq_len) {
                ++skipped;  // longer than the model can read (training skipped these too)
                continue;
            }
            kept.push_back(i);
            refs.push_back(target_of(p));

            // --- teacher forcing: loss of the reference, cross-attention for the alignment hits ---
            auto t0 = Clock::now();
            std::vector<int> dec_in{spec.decoder_start_id};
            dec_in.insert(dec_in.end(), tgt_text.begin(), tgt_text.end());
            std::vector<int> tgt_full(tgt_text);
            tgt_full.push_back(spec.target_end_id);
            ForwardOptions fo;
            const eval::AlignmentRecord* rec = nullptr;
            if (align) {
                const auto it = align->records.find({p.line, dir});
                if (it == align->records.end()) {
                    ++align_missing;
                } else {
                    rec = &it->second;
                    if (rec->src_len != int(src.size()) || rec->tgt_len != int(tgt_text.size()) ||
                        rec->src_fnv1a != eval::fnv1a_ids(src_text) || rec->tgt_fnv1a != eval::fnv1a_ids(tgt_text))
                        throw std::runtime_error(args.get("alignments") + ": line " + std::to_string(p.line) + " " +
                                                 dir + " was aligned on other tokens (lengths " +
                                                 std::to_string(rec->src_len) + "/" + std::to_string(rec->tgt_len) +
                                                 ", here " + std::to_string(src.size()) + "/" +
                                                 std::to_string(tgt_text.size()) +
                                                 "): made with another tokenizer or pair file?");
                    fo.capture = CaptureFilter::prefixes(probe_names);
                }
            }
            const ForwardResult fr = forward_seq2seq(m, src, dec_in, fo);
            ce_sum += summed_cross_entropy(fr.logits, tgt_full);
            ce_tokens += int64_t(tgt_full.size());
            if (rec) {
                std::vector<const Tensor*> probs;
                for (const std::string& n : probe_names) probs.push_back(&fr.trace->at(n));
                const eval::PairLinks links = eval::links_of(*rec);
                hits.add(probs, links, 0);
                hits_shift.add(probs, links, 1);
            }
            tf_seconds += seconds_since(t0);

            // --- decoding ---
            DecodeOptions dopt;
            dopt.top_k = 0;
            dopt.length_penalty = length_penalty;
            // Room for a target 3x the source plus 10 tokens: no reference in the corpus needs more, and an
            // undertrained model's loops stop early.
            dopt.max_len = std::min(c.max_seq_len, 3 * int(src_text.size()) + 10);
            const auto run = [&](SystemResult& r, int n_beam) {
                const auto t1 = Clock::now();
                dopt.beam = n_beam;
                const DecodeResult d = translate_ids(m, spec, src, dopt);
                r.seconds += seconds_since(t1);
                r.tokens += int64_t(d.ids.size());
                r.unfinished += d.finished ? 0 : 1;
                r.hyps.push_back(decode_text(d.ids));
            };
            run(greedy, 1);
            if (beam > 1) run(beamed, beam);
            if ((i + 1) % every == 0 || i + 1 == pairs.size())
                std::fprintf(stderr, "eval %s: %zu/%zu pairs (%.1f s)\n", dir.c_str(), i + 1, pairs.size(),
                             seconds_since(t_dir));
        }
        if (kept.empty()) throw std::runtime_error("no pair of " + pairs_path + " fits max_seq_len " +
                                                   std::to_string(c.max_seq_len));

        // --- retrieval baseline ---
        std::optional<SystemResult> retrieval;
        double mean_cosine = 0, index_seconds = 0;
        eval::CharNgramOptions ngram_opt = from == "en" ? eval::english_ngram_options() : eval::chinese_ngram_options();
        if (!train.empty()) {
            auto t0 = Clock::now();
            std::vector<std::string> docs;
            docs.reserve(train.size());
            for (const Pair& p : train) docs.push_back(source_of(p));
            const eval::CharNgramIndex index(docs, ngram_opt);
            index_seconds = seconds_since(t0);
            retrieval = SystemResult{"retrieval", {}, 0, 0, 0};
            t0 = Clock::now();
            for (const size_t i : kept) {
                const eval::RetrievalMatch mt = index.best_match(source_of(pairs[i]));
                retrieval->hyps.push_back(mt.doc >= 0 ? target_of(train[size_t(mt.doc)]) : std::string());
                mean_cosine += mt.cosine;
            }
            retrieval->seconds = seconds_since(t0);
            mean_cosine /= double(kept.size());
            std::fprintf(stderr, "eval %s: retrieval index of %zu training sources (%lld n-grams) %.1f s, %zu queries "
                                 "%.1f s\n",
                         dir.c_str(), docs.size(), static_cast<long long>(index.n_terms()), index_seconds, kept.size(),
                         retrieval->seconds);
        }

        // --- scores ---
        const double ce = ce_sum / double(ce_tokens);
        nlohmann::json dj = {{"pairs", kept.size()},
                             {"skipped_longer_than_max_seq_len", skipped},
                             {"bleu_tokenizer", to == "zh" ? "zh" : "13a"},
                             {"held_out",
                              {{"cross_entropy_nats", ce},
                               {"perplexity", std::exp(ce)},
                               {"tokens", ce_tokens},
                               {"end_token_included", true},
                               {"seconds", tf_seconds}}}};
        std::printf("\n%s (%zu pairs; BLEU tokenizer %s)\n", dir.c_str(), kept.size(), to == "zh" ? "zh" : "13a");
        std::printf("  held-out cross-entropy %.4f nats/token (perplexity %.2f) over %lld reference tokens (end token "
                    "included)\n",
                    ce, std::exp(ce), static_cast<long long>(ce_tokens));
        std::vector<const SystemResult*> systems{&greedy};
        if (beam > 1) systems.push_back(&beamed);
        if (retrieval) systems.push_back(&*retrieval);
        for (const SystemResult* s : systems) {
            const std::string key = s == &greedy ? "greedy" : s == &beamed ? "beam" : "retrieval";
            const double chrf = eval::corpus_chrf(s->hyps, {refs});
            const eval::BleuScore bleu = eval::corpus_bleu(s->hyps, {refs}, bleu_tok);
            nlohmann::json sj = {{"chrf", chrf}, {"bleu", bleu.score}, {"bleu_detail", bleu_json(bleu)},
                                 {"seconds", s->seconds}};
            std::printf("  %-10s chrF %6.2f  BLEU %6.2f", s->name.c_str(), chrf, bleu.score);
            if (key == "retrieval") {
                sj["ngram_range"] = {ngram_opt.min_n, ngram_opt.max_n};
                sj["word_boundaries"] = ngram_opt.word_boundaries;
                sj["mean_cosine"] = mean_cosine;
                sj["index_seconds"] = index_seconds;
                sj["train_pairs"] = train.size();
                std::printf("   (training translation of the nearest training source: character %d-%d-gram TF-IDF "
                            "cosine, mean %.3f)\n",
                            ngram_opt.min_n, ngram_opt.max_n, mean_cosine);
            } else {
                sj["target_tokens"] = s->tokens;
                sj["stopped_at_max_len"] = s->unfinished;
                sj["ms_per_sentence"] = 1000 * s->seconds / double(kept.size());
                if (key == "beam") sj["beam"] = beam;
                std::printf("   (%.1f s, %.1f ms/sentence, %lld cut at max length)\n", s->seconds,
                            1000 * s->seconds / double(kept.size()), static_cast<long long>(s->unfinished));
            }
            dj[key] = sj;
            if (!hyps_dir.empty()) write_lines(dir + "." + key + ".txt", s->hyps);
        }
        if (!hyps_dir.empty()) write_lines(dir + ".ref.txt", refs);
        if (align) {
            std::printf("  cross-attention alignment hits vs %s (%lld target tokens aligned to a source token; NULL-"
                        "aligned and end tokens not counted; chance %.3f):\n",
                        args.get("alignments").c_str(), static_cast<long long>(hits.counted()), hits.chance_rate());
            print_hits("query = step producing the token", hits);
            print_hits("query = step reading the token (shift 1)", hits_shift);
            if (align_missing)
                std::printf("    (%lld pairs had no alignment record)\n", static_cast<long long>(align_missing));
            dj["alignment_hits"] = {{"reference", args.get("alignments")},
                                    {"counted_tokens", hits.counted()},
                                    {"null_aligned_skipped", true},
                                    {"end_token_counted", false},
                                    {"chance_rate", hits.chance_rate()},
                                    {"pairs_without_record", align_missing},
                                    {"producing_step", hit_json(hits)},
                                    {"reading_step_shift1", hit_json(hits_shift)}};
        }
        // Held-out examples spread evenly over the evaluated pairs.
        nlohmann::json ex = nlohmann::json::array();
        const size_t n_ex = std::min(kept.size(), size_t(n_examples));
        for (size_t k = 0; k < n_ex; ++k) {
            const size_t at = k * kept.size() / n_ex;
            const Pair& p = pairs[kept[at]];
            nlohmann::json e = {{"line", p.line},
                                {"source", source_of(p)},
                                {"reference", target_of(p)},
                                {"greedy", greedy.hyps[at]}};
            if (beam > 1) e["beam"] = beamed.hyps[at];
            if (retrieval) e["retrieval"] = retrieval->hyps[at];
            ex.push_back(e);
        }
        dj["examples"] = ex;
        dj["seconds"] = seconds_since(t_dir);
        directions[dir] = dj;
        std::fflush(stdout);
    }
    report["directions"] = directions;
    report["seconds"] = seconds_since(t_total);
    std::printf("\ntotal %.1f s\n", seconds_since(t_total));
    if (args.has("json")) {
        std::ofstream out(args.get("json"));
        if (!out) throw std::runtime_error("cannot write " + args.get("json"));
        out << report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
    return 0;
}

}  // namespace ts::cli
