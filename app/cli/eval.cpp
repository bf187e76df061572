// `transformer-studio eval`: the quality report behind a model card — held-out cross-entropy against the unigram
// baseline of the same tokenizer, the best induction and previous-token heads, and sample generations.
#include "app/cli/cli.h"
#include "app/cli/args.h"
#include "app/cli/eval_translation.h"
#include "app/plot/figure.h"
#include "app/plot/writers.h"
#include "app/session/text_codec.h"
#include "app/session/worker.h"
#include "core/forward/sample.h"
#include "core/util/random.h"
#include "core/kernels/threads.h"
#include "core/model/model.h"
#include "core/kernels/ops.h"
#include "core/util/json.h"
#include "app/session/limits.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <algorithm>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>

namespace ts::cli {

namespace {

struct HeadScore {
    int layer = 0, head = 0;
    double score = 0;
};

/// Mean cross-entropy (nats) of predicting ids[t+1] from logits row t, for t in [from, to).
double mean_next_token_loss(const MatrixRM& logits, const std::vector<int>& ids, int from, int to) {
    double sum = 0;
    for (int t = from; t < to; ++t) {
        const auto row = logits.row(t);
        const float mx = row.maxCoeff();
        const double lse = mx + std::log((row.array() - mx).exp().sum());
        sum += lse - row(ids[size_t(t) + 1]);
    }
    return sum / std::max(1, to - from);
}

CaptureFilter probs_filter(const ModelConfig& c) {
    std::vector<std::string> p;
    for (int l = 0; l < c.n_layers; ++l) p.push_back("dec." + std::to_string(l) + ".attn.probs");
    return CaptureFilter::prefixes(p);
}

/// score(l, h) = mean over query t in [t0, t1) of probs[h, t, t - back].
void accumulate_head_scores(const Trace& tr, const ModelConfig& c, int t0, int t1, int back,
                            std::vector<double>& acc) {
    for (int l = 0; l < c.n_layers; ++l) {
        const Tensor& p = tr.at("dec." + std::to_string(l) + ".attn.probs");
        const int64_t T = p.dim(1), S = p.dim(2);
        for (int h = 0; h < c.n_heads; ++h) {
            double s = 0;
            for (int t = t0; t < t1; ++t) s += p.data[size_t((h * T + t) * S + (t - back))];
            acc[size_t(l * c.n_heads + h)] += s / std::max(1, t1 - t0);
        }
    }
}

HeadScore best_head(const std::vector<double>& acc, int n_heads, double n) {
    HeadScore b;
    for (size_t i = 0; i < acc.size(); ++i)
        if (acc[i] / n > b.score) b = {int(i) / n_heads, int(i) % n_heads, acc[i] / n};
    return b;
}

std::string sample_text(const Model& m, const studio::TextCodec& codec, const std::string& prompt, int n_tokens,
                        float temperature, uint64_t seed) {
    std::vector<int> ids;
    std::vector<std::pair<size_t, size_t>> spans;
    codec.encode(prompt, ids, spans);
    GenerateOptions g;  // core/forward/sample.h: the same generation as the window's Generate
    g.max_new_tokens = std::max(0, std::min(n_tokens, m.config().max_seq_len - int(ids.size())));
    g.sampling.temperature = temperature;
    g.seed = seed;
    return prompt + codec.decode(generate(m, ids, g).ids);
}

/// The training curve (train and held-out loss per step from DIR/train_log.jsonl) with the unigram baseline (left
/// out when `unigram_nats` is NaN), as an SVG made by the project's own plotting layer. `formula` is the figure's
/// formula line (what the loss is).
void write_loss_curve(const std::string& model_dir, double unigram_nats, const std::string& out_svg,
                      const std::string& formula = "mean next-token cross-entropy -log p(x_{t+1} | x_{<=t}) in nats") {
    std::ifstream log(model_dir + "/train_log.jsonl");
    if (!log) throw std::runtime_error("no train_log.jsonl in " + model_dir + " for --loss-curve");
    plot::Series train, val;
    train.name = "train loss";
    val.name = "held-out loss";
    val.color = {0.85f, 0.33f, 0.1f, 1.0f};
    // Rows of a multi-stage log (assets/models/append_train_log.py) carry "stage" and "stage_name": each new stage
    // gets a dashed vertical line at the step where it started, labelled with its name.
    std::vector<plot::RefLine> stages;
    int stage = -1;
    double last_step = 0;
    std::string line;
    while (std::getline(log, line)) {
        nlohmann::json j;
        try {
            j = parse_json(line, "train_log.jsonl");
        } catch (const std::runtime_error&) {
            continue;  // a torn last line of a running or interrupted training
        }
        if (!j.is_object() || !j.contains("step") || !j["step"].is_number()) continue;
        const double step = j["step"].get<double>();
        const int row_stage = j.value("stage", 1);
        if (stage >= 0 && row_stage != stage)
            stages.push_back({true, last_step, j.value("stage_name", "stage " + std::to_string(row_stage)),
                              {0.45f, 0.45f, 0.45f, 1.0f}});
        stage = row_stage;
        last_step = step;
        if (j.contains("train_loss") && j["train_loss"].is_number()) {
            train.x.push_back(step);
            train.y.push_back(j["train_loss"].get<double>());
        }
        if (j.contains("val_loss") && j["val_loss"].is_number()) {
            val.x.push_back(step);
            val.y.push_back(j["val_loss"].get<double>());
        }
    }
    plot::Figure f;
    f.title = "Training curve";
    f.formula = formula;
    f.x.label = "optimizer step";
    f.y.label = "cross-entropy";
    f.y.unit = "nats";
    f.series = {train, val};
    f.legend_location = plot::LegendLocation::SouthWest;  // the top right holds the stage labels
    if (!std::isnan(unigram_nats))
        f.ref_lines.push_back({false, unigram_nats, "unigram baseline", {0.5f, 0.5f, 0.5f, 1.0f}});
    f.ref_lines.insert(f.ref_lines.end(), stages.begin(), stages.end());
    std::ofstream out(out_svg);
    if (!out) throw std::runtime_error("cannot write " + out_svg);
    out << plot::figure_to_svg(f, 800, 450);
}

}  // namespace

int run_eval(int argc, char** argv) {
    static const std::string kUsage =
        std::string(
            "usage: transformer-studio eval --model DIR [--data corpus.txt] [--val-fraction X] [--max-windows N]\n"
            "         [--seed S] [--samples N] [--sample-tokens N] [--temperature X] [--induction-seqs N]\n"
            "         [--json report.json] [--loss-curve curve.svg] [--threads N]\n"
            "  Quality report of a decoder-only model: held-out cross-entropy against the unigram baseline (the last\n"
            "  --val-fraction of the corpus, default 0.02), previous-token and induction heads, samples at\n"
            "  --temperature; --loss-curve draws DIR/train_log.jsonl.\n") +
        kTranslationEvalUsage;
    if (print_help_if_asked(argc, argv, 2, kUsage.c_str())) return 0;
    const Args args(
        argc, argv, 2,
        {"model",       "data",  "val-fraction",   "max-windows",    "seed",  "samples", "sample-tokens",
         "temperature", "json",  "induction-seqs", "loss-curve",     "pairs", "train",   "beam",
         "alignments",  "limit", "examples",       "length-penalty", "hyps",  "threads", "quant-activations"});
    apply_compute_options(args);
    const std::string model_dir = args.required("model");
    const studio::LoadedModel lm = studio::load_model_folder(model_dir, terminal_progress());
    print_warnings("eval", lm.weight_warnings);
    const Model& m = *lm.model;
    const ModelConfig& c = m.config();
    if (c.arch == Arch::EncoderDecoder) {
        if (!args.has("pairs"))
            throw std::invalid_argument(model_dir + " is an encoder-decoder model: evaluate it on pairs with --pairs "
                                        "TEST.tsv");
        if (args.has("loss-curve"))
            write_loss_curve(model_dir, std::nan(""), args.get("loss-curve"),
                             "target-token cross-entropy -log p(y_t | y_<t, x) in nats; the train loss is "
                             "label-smoothed (0.1) and measured with dropout");
        return run_translation_eval(args, model_dir, m);
    }
    if (args.has("pairs"))
        throw std::invalid_argument("--pairs evaluates translation models; " + model_dir + " is " +
                                    (c.arch == Arch::DecoderOnly ? "decoder-only" : "encoder-only") +
                                    ", not encoder-decoder");
    for (const char* o : {"train", "beam", "alignments", "limit", "examples", "length-penalty", "hyps"})
        if (args.has(o))
            throw std::invalid_argument(std::string("--") + o + " needs --pairs and an encoder-decoder model");
    if (c.arch != Arch::DecoderOnly)
        throw std::invalid_argument("eval supports decoder-only and encoder-decoder models");
    if (lm.codec->ids_only())
        throw std::invalid_argument(lm.tokenizer_warning.empty() ? std::string("model folder has no tokenizer.json")
                                                                 : lm.tokenizer_warning);
    const uint64_t seed = uint64_t(args.integer("seed", 1, 0, int64_t(1) << 53));
    std::mt19937_64 rng(seed);
    nlohmann::json report = {{"model", args.get("model")}, {"parameters", c.parameter_count()}};

    // --- held-out loss vs unigram baseline ---
    const std::string data_path = args.get("data", std::string(TS_SOURCE_DIR) + "/corpus/corpus.txt");
    std::ifstream in(data_path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read --data " + data_path + " (build it: transformer-studio corpus build)");
    std::stringstream ss;
    ss << in.rdbuf();
    std::vector<int> ids;
    std::vector<std::pair<size_t, size_t>> spans;
    lm.codec->encode(ss.str(), ids, spans);
    const size_t n_val = size_t(double(ids.size()) * args.real("val-fraction", 0.02, 0.0, 0.5));
    const size_t split = ids.size() - n_val;
    std::vector<double> unigram(size_t(c.vocab_size), 1.0);  // add-one smoothing
    for (size_t i = 0; i < split; ++i) unigram[size_t(ids[i])] += 1.0;
    const double total = double(split) + double(c.vocab_size);

    const int T = c.max_seq_len;
    const int max_windows = int(args.integer("max-windows", 64, 1, 1 << 20));
    double loss_sum = 0, uni_sum = 0;
    int64_t n_pred = 0;
    int windows = 0;
    std::vector<double> prev_acc(size_t(c.n_layers * c.n_heads), 0.0);
    for (size_t start = split; start + size_t(T) + 1 <= ids.size() && windows < max_windows; start += size_t(T)) {
        const std::vector<int> w(ids.begin() + long(start), ids.begin() + long(start) + T + 1);
        const std::vector<int> x(w.begin(), w.end() - 1);
        ForwardOptions opt;
        opt.capture = probs_filter(c);
        const ForwardResult r = forward(m, x, opt);
        loss_sum += mean_next_token_loss(r.logits, w, 0, T) * T;
        for (int t = 0; t < T; ++t) uni_sum += -std::log(unigram[size_t(w[size_t(t) + 1])] / total);
        n_pred += T;
        accumulate_head_scores(*r.trace, c, 1, T, 1, prev_acc);
        ++windows;
    }
    if (windows == 0) throw std::runtime_error("held-out split is shorter than one window of max_seq_len tokens");
    const double val_loss = loss_sum / double(n_pred), uni_loss = uni_sum / double(n_pred);
    const HeadScore prev = best_head(prev_acc, c.n_heads, windows);
    report["held_out"] = {{"tokens", n_pred},          {"windows", windows},
                          {"cross_entropy_nats", val_loss}, {"perplexity", std::exp(val_loss)},
                          {"unigram_cross_entropy_nats", uni_loss}, {"unigram_perplexity", std::exp(uni_loss)}};
    report["previous_token_head"] = {{"layer", prev.layer}, {"head", prev.head}, {"mean_attention_to_t_minus_1", prev.score}};

    // --- induction: 50 tokens repeated twice ---
    // Three kinds of first halves: uniform random ids over the whole vocabulary (the classic test), random ids among
    // the 2000 most frequent training tokens (ids the model has really learned), and a real held-out passage.
    const int n_seq = int(args.integer("induction-seqs", 20, 0, 100000));
    constexpr int kHalf = 50;
    std::vector<int> by_freq(size_t(c.vocab_size));
    std::iota(by_freq.begin(), by_freq.end(), 0);
    std::stable_sort(by_freq.begin(), by_freq.end(),
                     [&](int a, int b) { return unigram[size_t(a)] > unigram[size_t(b)]; });
    const int n_frequent = std::min(2000, c.vocab_size);
    nlohmann::json induction = nlohmann::json::object();
    for (const std::string kind : {"uniform_random", "frequent_random", "held_out_text"}) {
        std::vector<double> ind_acc(size_t(c.n_layers * c.n_heads), 0.0);
        double loss_first = 0, loss_second = 0;
        std::uniform_int_distribution<int> pick_uniform(256, c.vocab_size - 2);
        std::uniform_int_distribution<int> pick_frequent(0, n_frequent - 1);
        std::uniform_int_distribution<size_t> pick_start(split, ids.size() - kHalf - 1);
        for (int s = 0; s < n_seq; ++s) {
            std::vector<int> seq(kHalf);
            const size_t start = pick_start(rng);
            for (int i = 0; i < kHalf; ++i)
                seq[size_t(i)] = kind == "uniform_random"    ? pick_uniform(rng)
                                 : kind == "frequent_random" ? by_freq[size_t(pick_frequent(rng))]
                                                             : ids[start + size_t(i)];
            seq.insert(seq.end(), seq.begin(), seq.end());
            ForwardOptions opt;
            opt.capture = probs_filter(c);
            const ForwardResult r = forward(m, seq, opt);
            // query t in the second copy attends to t - 49: the token after the earlier occurrence of seq[t].
            accumulate_head_scores(*r.trace, c, kHalf, 2 * kHalf, kHalf - 1, ind_acc);
            loss_first += mean_next_token_loss(r.logits, seq, 0, kHalf - 1);
            loss_second += mean_next_token_loss(r.logits, seq, kHalf, 2 * kHalf - 1);
        }
        const HeadScore ind = best_head(ind_acc, c.n_heads, n_seq);
        induction[kind] = {{"sequences", n_seq},
                           {"best_layer", ind.layer},
                           {"best_head", ind.head},
                           {"mean_attention_to_token_after_earlier_occurrence", ind.score},
                           {"loss_first_copy_nats", loss_first / n_seq},
                           {"loss_second_copy_nats", loss_second / n_seq}};
        std::printf("induction (%s): layer %d head %d, mean attention to the token after the earlier occurrence = "
                    "%.3f; loss first copy %.3f, second copy %.3f nats\n",
                    kind.c_str(), ind.layer, ind.head, ind.score, loss_first / n_seq, loss_second / n_seq);
    }
    report["induction"] = induction;

    // --- samples ---
    const float temperature = float(args.real("temperature", 0.8, studio::kMinTemperature, studio::kMaxTemperature));
    const int n_samples = int(args.integer("samples", 5, 0, 1000));
    const int n_tokens = int(args.integer("sample-tokens", 40, 1, studio::kMaxGenerateTokens));
    const std::vector<std::string> prompts = {"It is a truth universally acknowledged", "She was",
                                              "The weather", "Mr. Darcy", "He looked at her and"};
    nlohmann::json samples = nlohmann::json::array();
    for (int i = 0; i < n_samples; ++i)
        samples.push_back(sample_text(m, *lm.codec, prompts[size_t(i) % prompts.size()], n_tokens, temperature,
                                      mix64(seed + uint64_t(i))));  // sample i: its own stream of core's generator
    report["samples"] = {{"temperature", temperature}, {"texts", samples}};

    std::printf("held-out cross-entropy %.4f nats (perplexity %.1f) over %lld tokens; unigram baseline %.4f nats "
                "(perplexity %.1f)\n",
                val_loss, std::exp(val_loss), static_cast<long long>(n_pred), uni_loss, std::exp(uni_loss));
    std::printf("previous-token head: layer %d head %d, mean attention to t-1 = %.3f\n", prev.layer, prev.head,
                prev.score);
    for (const auto& s : samples) std::printf("sample (T=%.1f): %s\n", temperature, s.get<std::string>().c_str());
    if (args.has("loss-curve")) write_loss_curve(args.get("model"), uni_loss, args.get("loss-curve"));
    if (args.has("json")) {
        std::ofstream out(args.get("json"));
        if (!out) throw std::runtime_error("cannot write " + args.get("json"));
        out << report.dump(2) << "\n";
    }
    return 0;
}

}  // namespace ts::cli
