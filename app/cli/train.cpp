// `transformer-studio train`: tokenizes the corpus once (cached as DIR/tokens.bin), trains a decoder-only model with
// the core/train trainer, and writes the model folder DIR/{config.json, model.safetensors, tokenizer.json} plus
// DIR/train_log.jsonl and DIR/checkpoint/. (`corpus` stays a stub here until app/cli/corpus.cpp lands.)
#include "app/cli/cli.h"
#include "app/cli/args.h"
#include "core/model.h"
#include "core/safetensors.h"
#include "core/tokenizer/tokenizer_io.h"
#include "core/train/data.h"
#include "core/train/trainer.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace ts::cli {
namespace {

namespace fs = std::filesystem;

const char* const kTrainUsage =
        "usage: transformer-studio train --config CONFIG.json --out DIR\n"
        "         (--tokenizer tokenizer.json --data TEXT... | --tokens TOKENS.bin)\n"
        "         [--steps N] [--batch B] [--seq-len T] [--lr X] [--min-lr X] [--warmup N] [--weight-decay X]\n"
        "         [--beta1 X] [--beta2 X] [--grad-clip X] [--label-smoothing X] [--z-loss X] [--dropout X]\n"
        "         [--attn-dropout X] [--eval-every N] [--eval-batches N] [--ckpt-every N] [--log-every N]\n"
        "         [--seed S] [--val-fraction X] [--decay-embeddings] [--resume]\n"
        "         [--repeat-fraction X] [--repeat-period N] [--repeat-random X]\n"
        "         [--init-from MODEL_DIR]\n"
        "  Text files are tokenized once into DIR/tokens.bin (reused while the files and tokenizer are unchanged);\n"
        "  the last --val-fraction (default 0.02) of the stream is held out. --resume continues from\n"
        "  DIR/checkpoint/ exactly as an uninterrupted run would.\n";

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
        const auto info = nlohmann::json::parse(read_file(cache_info.string()), nullptr, false);
        if (!info.is_discarded() && info.value("sources", nlohmann::json()) == sources) {
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

}  // namespace

int run_train(int argc, char** argv) {
    if (print_help_if_asked(argc, argv, 2, kTrainUsage)) return 0;
    const Args args(argc, argv, 2,
                    {"config", "tokenizer", "tokens", "out", "steps", "batch", "seq-len", "lr", "min-lr", "warmup",
                     "weight-decay", "beta1", "beta2", "grad-clip", "label-smoothing", "z-loss", "dropout",
                     "attn-dropout", "eval-every", "eval-batches", "ckpt-every", "log-every", "seed", "val-fraction",
                     "repeat-fraction", "repeat-period", "repeat-random", "init-from"},
                    {"resume", "decay-embeddings"}, {"data"});
    const fs::path dir = args.required("out");
    const ModelConfig config = load_config(args.required("config"));
    if (config.arch != Arch::DecoderOnly)
        throw std::invalid_argument("train supports decoder-only configs; " + args.get("config") + " has arch '" +
                                    to_string(config.arch) + "'");
    fs::create_directories(dir);

    std::shared_ptr<const Tokenizer> tok;
    if (args.has("tokenizer")) {
        tok = load_tokenizer(args.get("tokenizer"));
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
    opt.steps = int(args.number("steps", opt.steps));
    opt.batch = int(args.number("batch", opt.batch));
    opt.seq_len = int(args.number("seq-len", config.max_seq_len));
    opt.lr = float(args.number("lr", opt.lr));
    opt.min_lr = float(args.number("min-lr", opt.min_lr));
    opt.warmup = int(args.number("warmup", opt.warmup));
    opt.weight_decay = float(args.number("weight-decay", opt.weight_decay));
    opt.beta1 = float(args.number("beta1", opt.beta1));
    opt.beta2 = float(args.number("beta2", opt.beta2));
    opt.grad_clip = float(args.number("grad-clip", opt.grad_clip));
    opt.label_smoothing = float(args.number("label-smoothing", opt.label_smoothing));
    opt.z_loss = float(args.number("z-loss", opt.z_loss));
    opt.dropout = float(args.number("dropout", opt.dropout));
    opt.attn_dropout = float(args.number("attn-dropout", opt.attn_dropout));
    opt.eval_every = int(args.number("eval-every", opt.eval_every));
    opt.eval_batches = int(args.number("eval-batches", opt.eval_batches));
    opt.ckpt_every = int(args.number("ckpt-every", opt.ckpt_every));
    opt.log_every = int(args.number("log-every", opt.log_every));
    opt.seed = uint64_t(args.number("seed", double(opt.seed)));
    opt.val_fraction = args.number("val-fraction", opt.val_fraction);
    opt.repeat_fraction = args.number("repeat-fraction", opt.repeat_fraction);
    opt.repeat_period = int(args.number("repeat-period", opt.repeat_period));
    opt.repeat_random = args.number("repeat-random", opt.repeat_random);
    if (opt.repeat_fraction < 0 || opt.repeat_fraction > 1)
        throw std::invalid_argument("--repeat-fraction must be in [0, 1]");
    opt.decay_embeddings = args.flag("decay-embeddings");

    auto data = std::make_shared<const train::TokenDataset>(training_tokens(args, dir, tok.get()), config.vocab_size,
                                                           opt.seq_len, opt.val_fraction);
    std::fprintf(stderr, "data: %lld tokens (%lld train, %lld held out); model: %lld parameters\n",
                 (long long)data->size(), (long long)data->train_size(), (long long)data->val_size(),
                 (long long)config.parameter_count());
    // --init-from DIR starts from a trained model folder's weights (fine-tuning) instead of a random init.
    WeightMap init;
    if (args.has("init-from")) {
        const auto base = load_model_dir(args.get("init-from"));
        print_warnings("train", base->weight_warnings());
        if (nlohmann::json(base->config()) != nlohmann::json(config))
            throw std::invalid_argument("--init-from " + args.get("init-from") + ": its config.json differs from --config");
        init = base->weights();
    } else {
        init = init_weights(config, opt.seed);
    }
    train::Trainer trainer(config, std::move(init), data, opt, dir, &std::cerr);
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
