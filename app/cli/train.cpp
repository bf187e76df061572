// `transformer-studio train`: a decoder-only model on a text corpus (tokenized once, cached as DIR/tokens.bin) or an
// encoder–decoder on a sentence-pair corpus (--pairs TSV, --direction), with the core/train trainer; writes the model
// folder DIR/{config.json, model.safetensors, tokenizer.json[, translation.json]} plus DIR/train_log.jsonl and
// DIR/checkpoint/.
#include "app/cli/cli.h"
#include "app/cli/args.h"
#include "app/session/training_lab.h"
#include "core/kernels/threads.h"
#include "core/model/model.h"
#include "core/formats/safetensors.h"
#include "core/tokenizer/tokenizer_io.h"
#include "core/train/data.h"
#include "core/train/pair_data.h"
#include "core/train/train_init.h"
#include "core/train/trainer.h"
#include "core/util/json.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace ts::cli {

namespace {
constexpr int64_t kIntMax = 2147483647;  // options stored as int
}  // namespace
namespace {

namespace fs = std::filesystem;

const char* const kTrainUsage =
    "usage: transformer-studio train --config CONFIG.json --out DIR\n"
    "         (--tokenizer tokenizer.json --data TEXT... | --tokens TOKENS.bin              decoder-only\n"
    "          | --tokenizer tokenizer.json --pairs TRAIN.tsv [--valid VALID.tsv]        encoder-decoder\n"
    "            --direction en-zh|zh-en|both [--batch-tokens N])\n"
    "         [--steps N] [--batch B] [--seq-len T] [--schedule cosine|inverse-sqrt] [--lr X] [--min-lr X]\n"
    "         [--lr-factor X] [--warmup N] [--weight-decay X] [--beta1 X] [--beta2 X] [--adam-eps X]\n"
    "         [--grad-clip X] [--label-smoothing X] [--z-loss X] [--dropout X]\n"
    "         [--attn-dropout X] [--eval-every N] [--eval-batches N] [--ckpt-every N] [--log-every N]\n"
    "         [--seed S] [--val-fraction X] [--decay-embeddings] [--resume]\n"
    "         [--repeat-fraction X] [--repeat-period N] [--repeat-random X]\n"
    "         [--init-from MODEL_DIR] [--threads N] [--keep-checkpoints N] [--average-last N]\n"
    "         [--snapshot-every N]\n"
    "       transformer-studio train --lab SETTINGS.json --out DIR [--steps N] [--threads N]\n"
    "  Text files are tokenized once into DIR/tokens.bin (reused while the files and tokenizer are unchanged);\n"
    "  the last --val-fraction (default 0.02) of the stream is held out. --resume continues from\n"
    "  DIR/checkpoint/ exactly as an uninterrupted run would. --keep-checkpoints N also keeps the weights of the\n"
    "  last N checkpoints (DIR/checkpoints/step-S.safetensors); --average-last N then makes the final\n"
    "  DIR/model.safetensors their element-wise mean (paper §6.1), the last weights in DIR/last.safetensors.\n"
    "  --snapshot-every N writes a model folder every N steps (DIR/snapshots/step-00000100/ ...).\n"
    "  --lab SETTINGS.json runs a training-lab run headless (the settings.json the window's Training tab writes\n"
    "  into its run folder): the same steps, probes and snapshots, so a lecture's run can be reproduced and its\n"
    "  figures rendered (render --model DIR/snapshots/step-...).\n"
    "  Pairs: \"English<TAB>Chinese\" lines (corpus build --parallel zh-en); --direction both trains one model for\n"
    "  both ways with <2en>/<2zh> first in the source. The tokenizer needs the special tokens <|endoftext|>, <pad>\n"
    "  (and <2en>, <2zh> for both). Batches hold pairs of similar length: at most --batch pairs (default 256) and\n"
    "  --batch-tokens padded positions (default 2048). Without --valid, every 1/--val-fraction-th line is held\n"
    "  out. Defaults follow \"Attention Is All You Need\" §5.3-5.4: --schedule inverse-sqrt (eq. 3), --warmup\n"
    "  4000, Adam beta2 0.98, eps 1e-9, no weight decay, --label-smoothing 0.1, --dropout 0.1.\n";

// Identity of the tokenization inputs, stored next to the cache as DIR/tokens.json.
nlohmann::json token_sources(const std::vector<std::string>& data, const std::string& tokenizer_path) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& p : data) {
        const auto t = fs::last_write_time(p).time_since_epoch().count();
        j.push_back({{"path", fs::absolute(p).string()}, {"bytes", fs::file_size(p)}, {"mtime", int64_t(t)}});
    }
    nlohmann::json tok{{"path", fs::absolute(tokenizer_path).string()}};
    if (fs::is_regular_file(tokenizer_path)) {
        tok["bytes"] = fs::file_size(tokenizer_path);
        tok["mtime"] = int64_t(fs::last_write_time(tokenizer_path).time_since_epoch().count());
    }
    return {{"data", j}, {"tokenizer", tok}};
}

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot read " + path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// Tokens for training: --tokens FILE, else the cache DIR/tokens.bin when its sources match, else tokenize --data.
std::vector<int32_t> training_tokens(const Args& args, const fs::path& dir, const Tokenizer* tok) {
    if (args.has("tokens")) return train::load_tokens(args.get("tokens"));
    const fs::path cache = dir / "tokens.bin", cache_info = dir / "tokens.json";
    const auto& data = args.all("data");
    if (data.empty()) {
        if (args.flag("resume") && fs::exists(cache)) return train::load_tokens(cache);
        throw std::invalid_argument("missing --data TEXT... (or --tokens FILE)");
    }
    if (!tok) throw std::invalid_argument("--data needs --tokenizer tokenizer.json");
    const nlohmann::json sources = token_sources(data, args.get("tokenizer"));
    if (fs::exists(cache) && fs::exists(cache_info)) {
        nlohmann::json info;
        try {
            info = parse_json(read_file(cache_info.string()), cache_info.string());
        } catch (const std::runtime_error&) {
            // unreadable cache description: rebuild the cache
        }
        if (info.is_object() && info.value("sources", nlohmann::json()) == sources) {
            std::fprintf(stderr, "using cached tokens %s\n", cache.string().c_str());
            return train::load_tokens(cache);
        }
    }
    std::vector<int32_t> ids;
    const auto eot = tok->token_id("<|endoftext|>");
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < data.size(); ++i) {
        const std::string text = read_file(data[i]);
        const std::vector<int32_t> part = tok->encode_ids(text);
        if (i > 0 && eot) ids.push_back(*eot);  // document boundary between files
        ids.insert(ids.end(), part.begin(), part.end());
        std::fprintf(stderr, "tokenized %s: %zu bytes -> %zu tokens\n", data[i].c_str(), text.size(), part.size());
    }
    std::fprintf(stderr, "tokenized %zu tokens in %.1f s\n", ids.size(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    train::save_tokens(cache, ids);
    std::ofstream(cache_info) << nlohmann::json{{"sources", sources}, {"n_tokens", ids.size()}}.dump(2) << "\n";
    return ids;
}

// Pair examples of the TSV files for the config's max_seq_len; without --valid every k-th line is held out.
std::shared_ptr<const train::PairDataset> pair_dataset(const Args& args, const Tokenizer& tok, const ModelConfig& c,
                                                      const train::TrainOptions& opt) {
    const train::PairDirection dir = train::pair_direction_from_string(args.required("direction"));
    const train::PairTokens ids = train::find_pair_tokens(tok, dir);
    train::PairReadStats st;
    std::vector<train::PairExample> examples =
        train::read_pair_tsv(args.get("pairs"), tok, dir, ids, c.max_seq_len, &st);
    std::fprintf(stderr, "pairs %s: %lld lines -> %lld examples (%s; %lld longer than max_seq_len %d, %lld malformed)\n",
                 args.get("pairs").c_str(), (long long)st.lines, (long long)st.examples, train::to_string(dir),
                 (long long)st.too_long, c.max_seq_len, (long long)st.malformed);
    std::vector<train::PairExample> train_ex, valid_ex;
    if (args.has("valid")) {
        valid_ex = train::read_pair_tsv(args.get("valid"), tok, dir, ids, c.max_seq_len, &st);
        train_ex = std::move(examples);
    } else {
        if (opt.val_fraction <= 0 || opt.val_fraction >= 1)
            throw std::invalid_argument("--val-fraction must be in (0, 1) without --valid");
        const int64_t k = std::max<int64_t>(2, std::llround(1.0 / opt.val_fraction));
        for (auto& e : examples) (e.line % k == k - 1 ? valid_ex : train_ex).push_back(std::move(e));
    }
    auto data = std::make_shared<const train::PairDataset>(std::move(train_ex), std::move(valid_ex), c.vocab_size,
                                                           ids.pad, ids.end,
                                                           train::PairBatchOptions{opt.batch, opt.batch_tokens},
                                                           opt.seed);
    std::fprintf(stderr, "pair batches: %d per epoch (%lld pairs, %lld tokens, %.1f%% padding), %d held out "
                 "(%lld pairs)\n", data->train_batches(), (long long)data->train_pairs(),
                 (long long)data->train_tokens(), 100.0 * data->padding_fraction(), data->val_batches(),
                 (long long)data->val_pairs());
    return data;
}

// DIR/translation.json: how the model's inputs are laid out, for decoding (see docs/models.md, "Model folders").
void write_translation_json(const fs::path& dir, train::PairDirection d) {
    nlohmann::json j{{"format", "ts-translation-1"},
                     {"direction", train::to_string(d)},
                     {"source_end", train::kPairEndToken},
                     {"decoder_start", train::kPairEndToken},
                     {"target_end", train::kPairEndToken},
                     {"pad", train::kPairPadToken}};
    if (d == train::PairDirection::Both)
        j["target_language_tokens"] = {{"en", train::kPairToEnToken}, {"zh", train::kPairToZhToken}};
    std::ofstream(dir / "translation.json") << j.dump(2) << "\n";
}

// train --lab SETTINGS.json: a training-lab run headless (the window's Training tab runs the same LabRun).
int run_lab(const Args& args) {
    for (const char* other : {"config", "tokenizer", "tokens", "data", "pairs", "resume"})
        if (args.has(other) || (std::string(other) == "resume" && args.flag("resume")))
            throw std::invalid_argument(
                std::string("--lab takes its model and corpus from the settings file; drop --") + other);
    studio::LabSettings s = studio::load_lab_settings(args.get("lab"));
    if (args.has("steps")) s.train.steps = int(args.integer("steps", s.train.steps, 1, kIntMax));
    if (args.has("snapshot-every"))
        s.train.snapshot_every = int(args.integer("snapshot-every", s.train.snapshot_every, 0, kIntMax));
    const fs::path dir = args.required("out");
    studio::LabRun run(s, dir);
    const ModelConfig& c = run.history().config;
    std::fprintf(stderr, "lab: %s on %s, %lld parameters, %d steps of %d x %d tokens\n", s.preset.c_str(),
                 studio::to_string(s.corpus), (long long)c.parameter_count(), s.train.steps, s.train.batch,
                 s.train.seq_len);
    const auto best_induction = [&run] {
        return run.history().probes.empty() ? 0.0f : run.history().probes.back().induction.maxCoeff();
    };
    while (!run.done()) {
        run.step();
        const auto& h = run.history();
        if (run.current_step() % std::max(1, s.train.log_every) == 0 || run.done()) {
            std::fprintf(stderr, "step %6lld/%d | loss %.4f", (long long)run.current_step(), s.train.steps,
                         double(h.steps.back().loss));
            if (!h.val.empty() && h.val.back().first == run.current_step())
                std::fprintf(stderr, " | val %.4f", h.val.back().second);
            std::fprintf(stderr, " | best induction %.2f | %.1f s\n", double(best_induction()), h.elapsed_s);
        }
    }
    const auto& h = run.history();
    const int64_t induction_step = h.first_induction_step(0.5f);
    std::fprintf(stderr, "done: %lld steps in %.1f s; held-out loss %.4f; best induction score %.2f",
                 (long long)run.current_step(), h.elapsed_s, h.val.empty() ? NAN : h.val.back().second,
                 double(best_induction()));
    if (induction_step >= 0) std::fprintf(stderr, " (>= 0.5 first at step %lld)", (long long)induction_step);
    std::fprintf(stderr, "; %zu snapshots in %s\n", h.snapshots.size(), (dir / "snapshots").c_str());
    return 0;
}

}  // namespace

int run_train(int argc, char** argv) {
    if (print_help_if_asked(argc, argv, 2, kTrainUsage)) return 0;
    const Args args(argc, argv, 2,
                    {"config",
                     "tokenizer",
                     "tokens",
                     "out",
                     "steps",
                     "batch",
                     "seq-len",
                     "lr",
                     "min-lr",
                     "warmup",
                     "weight-decay",
                     "beta1",
                     "beta2",
                     "grad-clip",
                     "label-smoothing",
                     "z-loss",
                     "dropout",
                     "attn-dropout",
                     "eval-every",
                     "eval-batches",
                     "ckpt-every",
                     "log-every",
                     "seed",
                     "val-fraction",
                     "repeat-fraction",
                     "repeat-period",
                     "repeat-random",
                     "init-from",
                     "pairs",
                     "valid",
                     "direction",
                     "batch-tokens",
                     "schedule",
                     "lr-factor",
                     "adam-eps",
                     "threads",
                     "keep-checkpoints",
                     "average-last",
                     "snapshot-every",
                     "lab"},
                    {"resume", "decay-embeddings"}, {"data"});
    apply_compute_options(args);
    if (args.has("lab")) return run_lab(args);
    const fs::path dir = args.required("out");
    const ModelConfig config = load_config(args.required("config"));
    const bool pairs = args.has("pairs");
    if (pairs && (args.has("data") || args.has("tokens")))
        throw std::invalid_argument("--pairs trains an encoder-decoder; it does not combine with --data or --tokens");
    if (!pairs && (args.has("valid") || args.has("direction") || args.has("batch-tokens")))
        throw std::invalid_argument("--valid, --direction and --batch-tokens go with --pairs TRAIN.tsv");
    if (pairs && config.arch != Arch::EncoderDecoder)
        throw std::invalid_argument("--pairs needs an encoder_decoder config; " + args.get("config") + " has arch '" +
                                    to_string(config.arch) + "'");
    if (!pairs && config.arch != Arch::DecoderOnly)
        throw std::invalid_argument("train needs --pairs TRAIN.tsv for " + std::string(to_string(config.arch)) +
                                    " configs, or a decoder config for --data/--tokens (" + args.get("config") + ")");
    if (pairs && !args.has("tokenizer")) throw std::invalid_argument("--pairs needs --tokenizer tokenizer.json");
    if (pairs) (void)train::pair_direction_from_string(args.required("direction"));  // fail before any work
    fs::create_directories(dir);

    std::shared_ptr<const Tokenizer> tok;
    if (args.has("tokenizer")) {
        tok = load_tokenizer(args.get("tokenizer"));
        if (pairs) (void)train::find_pair_tokens(*tok, train::pair_direction_from_string(args.get("direction")));
        if (int64_t(tok->vocab_size()) > config.vocab_size)
            throw std::invalid_argument("tokenizer has " + std::to_string(tok->vocab_size()) +
                                        " tokens but the config's vocab_size is " + std::to_string(config.vocab_size));
        // The model folder carries its tokenizer.
        const fs::path src = args.get("tokenizer");
        if (fs::is_regular_file(src) && src.extension() == ".json") {
            if (fs::weakly_canonical(src) != fs::weakly_canonical(dir / "tokenizer.json"))
                fs::copy_file(src, dir / "tokenizer.json", fs::copy_options::overwrite_existing);
        } else {
            save_tokenizer_json(*tok, (dir / "tokenizer.json").string());
        }
    } else if (!fs::exists(dir / "tokenizer.json")) {
        std::fprintf(stderr, "note: no --tokenizer given; the model folder %s will have no tokenizer.json\n",
                     dir.c_str());
    }

    train::TrainOptions opt;
    if (pairs) {  // "Attention Is All You Need" §5.3-5.4; explicit options below override them
        opt.batch = 256;
        opt.batch_tokens = 2048;
        opt.schedule = train::LrScheduleKind::InverseSqrt;
        opt.warmup = 4000;
        opt.beta2 = 0.98f;
        opt.adam_eps = 1e-9f;
        opt.weight_decay = 0.0f;
        opt.label_smoothing = 0.1f;
        opt.dropout = 0.1f;
    }
    if (args.has("schedule")) opt.schedule = train::lr_schedule_from_string(args.get("schedule"));
    opt.steps = int(args.integer("steps", opt.steps, 1, kIntMax));
    opt.batch = int(args.integer("batch", opt.batch, 1, 1 << 16));
    opt.batch_tokens = int(args.integer("batch-tokens", opt.batch_tokens, 0, 1 << 24));
    opt.seq_len = int(args.integer("seq-len", config.max_seq_len, 1, 1 << 20));
    opt.lr = float(args.real("lr", opt.lr, 0.0, 10.0));
    opt.min_lr = float(args.real("min-lr", opt.min_lr, 0.0, 10.0));
    opt.lr_factor = float(args.real("lr-factor", opt.lr_factor, 0.0, 1e6));
    opt.warmup = int(args.integer("warmup", opt.warmup, 0, kIntMax));
    opt.weight_decay = float(args.real("weight-decay", opt.weight_decay, 0.0, 10.0));
    opt.beta1 = float(args.real("beta1", opt.beta1, 0.0, 1.0));
    opt.beta2 = float(args.real("beta2", opt.beta2, 0.0, 1.0));
    opt.adam_eps = float(args.real("adam-eps", opt.adam_eps, 0.0, 1.0));
    opt.grad_clip = float(args.real("grad-clip", opt.grad_clip, 0.0, 1e6));
    opt.label_smoothing = float(args.real("label-smoothing", opt.label_smoothing, 0.0, 1.0));
    opt.z_loss = float(args.real("z-loss", opt.z_loss, 0.0, 1.0));
    opt.dropout = float(args.real("dropout", opt.dropout, 0.0, 0.99));
    opt.attn_dropout = float(args.real("attn-dropout", opt.attn_dropout, 0.0, 0.99));
    opt.eval_every = int(args.integer("eval-every", opt.eval_every, 0, kIntMax));
    opt.eval_batches = int(args.integer("eval-batches", opt.eval_batches, 0, 1 << 20));
    opt.ckpt_every = int(args.integer("ckpt-every", opt.ckpt_every, 0, kIntMax));
    opt.keep_checkpoints = int(args.integer("keep-checkpoints", opt.keep_checkpoints, 0, 1000));
    opt.average_last = int(args.integer("average-last", opt.average_last, 0, 1000));
    opt.log_every = int(args.integer("log-every", opt.log_every, 0, kIntMax));
    opt.snapshot_every = int(args.integer("snapshot-every", opt.snapshot_every, 0, kIntMax));
    opt.seed = uint64_t(args.integer("seed", int64_t(opt.seed), 0, int64_t(1) << 53));
    opt.val_fraction = args.real("val-fraction", opt.val_fraction, 0.0, 0.5);
    opt.repeat_fraction = args.real("repeat-fraction", opt.repeat_fraction, 0.0, 1.0);
    opt.repeat_period = int(args.integer("repeat-period", opt.repeat_period, 0, 1 << 20));
    opt.repeat_random = args.real("repeat-random", opt.repeat_random, 0.0, 1.0);
    if (opt.repeat_fraction < 0 || opt.repeat_fraction > 1)
        throw std::invalid_argument("--repeat-fraction must be in [0, 1]");
    opt.decay_embeddings = args.flag("decay-embeddings");

    std::shared_ptr<const train::TokenDataset> data;
    std::shared_ptr<const train::PairDataset> pair_data;
    if (pairs) {
        pair_data = pair_dataset(args, *tok, config, opt);
        write_translation_json(dir, train::pair_direction_from_string(args.get("direction")));
        std::fprintf(stderr, "model: %lld parameters\n", (long long)config.parameter_count());
    } else {
        data = std::make_shared<const train::TokenDataset>(training_tokens(args, dir, tok.get()), config.vocab_size,
                                                           opt.seq_len, opt.val_fraction);
        std::fprintf(stderr, "data: %lld tokens (%lld train, %lld held out); model: %lld parameters\n",
                     (long long)data->size(), (long long)data->train_size(), (long long)data->val_size(),
                     (long long)config.parameter_count());
    }
    // --init-from DIR starts from a trained model folder's weights (fine-tuning) instead of a random init.
    WeightMap init;
    if (args.has("init-from")) {
        const auto base = load_model_dir(args.get("init-from"));
        print_warnings("train", base->weight_warnings());
        if (nlohmann::json(base->config()) != nlohmann::json(config))
            throw std::invalid_argument("--init-from " + args.get("init-from") + ": its config.json differs from --config");
        init = base->weights();
    } else {
        init = pairs ? train::init_transformer_weights(config, opt.seed) : init_weights(config, opt.seed);
    }
    train::Trainer trainer = pairs ? train::Trainer(config, std::move(init), pair_data, opt, dir, &std::cerr)
                                   : train::Trainer(config, std::move(init), data, opt, dir, &std::cerr);
    if (args.flag("resume")) {
        if (!trainer.resume()) std::fprintf(stderr, "no checkpoint in %s/checkpoint: starting fresh\n", dir.c_str());
    } else if (fs::exists(dir / "train_log.jsonl")) {
        fs::remove(dir / "train_log.jsonl");  // a fresh run starts a fresh log
    }
    trainer.run();
    const auto& h = trainer.history();
    if (!h.empty())
        std::fprintf(stderr, "done: step %lld, train loss %.4f, held-out loss %.4f; model folder %s\n",
                     (long long)h.back().step, h.back().train_loss, h.back().val_loss, dir.c_str());
    return 0;
}

}  // namespace ts::cli
