// The training loop: batches from a TokenDataset (decoder-only) or a PairDataset (encoder–decoder), forward/backward
// (TrainModel), global-norm clipping, AdamW with a warm-up + cosine or the Transformer paper's inverse-square-root
// schedule, periodic held-out evaluation, progress lines, DIR/train_log.jsonl, atomic checkpoints
// (DIR/checkpoint/state.safetensors: weights, AdamW moments, step; all randomness is a function of (seed, step),
// so that is the whole RNG state) and the model folder (DIR/config.json + DIR/model.safetensors).
#pragma once

#include "core/model/model.h"
#include "core/train/adamw.h"
#include "core/train/data.h"
#include "core/train/pair_data.h"
#include "core/train/train_model.h"

#include <nlohmann/json_fwd.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string_view>

namespace ts::train {

struct TrainOptions {
    int steps = 1000;              ///< optimizer steps in the whole run (the schedule's length)
    int batch = 8;                 ///< sequences per step (pairs: at most this many pairs per batch)
    int seq_len = 128;             ///< tokens per sequence (<= max_seq_len); unused for pairs
    int batch_tokens = 0;          ///< pairs: at most this many padded positions on the longer side (0: no limit)
    LrScheduleKind schedule = LrScheduleKind::Cosine;
    float lr = 1e-3f;              ///< peak learning rate (cosine)
    float min_lr = -1.0f;          ///< end of the cosine; < 0 means lr / 10
    float lr_factor = 1.0f;        ///< inverse_sqrt: multiplier of eq. 3 (1 = the paper)
    int warmup = 100;              ///< linear warm-up steps
    float weight_decay = 0.1f;
    float beta1 = 0.9f, beta2 = 0.95f, adam_eps = 1e-8f;
    bool decay_embeddings = false;
    float grad_clip = 1.0f;        ///< global-norm clip; <= 0 disables
    float label_smoothing = 0.0f;
    float z_loss = 0.0f;
    float dropout = 0.0f;          ///< residual-branch dropout
    float attn_dropout = -1.0f;    ///< attention-probability dropout; < 0 means = dropout
    int eval_every = 100;          ///< held-out evaluation every N steps (and at the end)
    int eval_batches = 8;          ///< batches of held-out windows per evaluation
    int ckpt_every = 500;          ///< checkpoint + model folder every N steps (and at the end)
    /// Also keep the weights of the last N checkpoints as DIR/checkpoints/step-<step>.safetensors (0: none); older
    /// ones are deleted as new ones are written.
    int keep_checkpoints = 0;
    /// At the end of the run, the model folder holds the element-wise mean of the last N kept snapshots (paper
    /// §6.1: "averaging the last 5 checkpoints"; fairseq's average_checkpoints.py), the last weights in
    /// DIR/last.safetensors. 0: the last weights. Needs keep_checkpoints >= N.
    int average_last = 0;
    /// Also write a model folder of the weights every N steps as DIR/snapshots/step-<8-digit step>/ (0: none): a
    /// run's history for the timeline of the training lab and `render --model DIR/snapshots/step-...`.
    int snapshot_every = 0;
    int log_every = 10;            ///< progress line every N steps
    uint64_t seed = 1;             ///< initialisation, batches and dropout
    double val_fraction = 0.02;    ///< held-out tail of the token stream
    double repeat_fraction = 0.0;  ///< share of training windows that are repeated passages (TokenDataset::sample_batch)
    int repeat_period = 0;         ///< length of the repeated span; 0 = random per window in [8, (T+1)/2]
    double repeat_random = 0.0;    ///< share of repeated spans made of i.i.d. unigram-drawn tokens
};
void to_json(nlohmann::json& j, const TrainOptions& o);
void from_json(const nlohmann::json& j, TrainOptions& o);

/// The element-wise mean of the weight files (safetensors, the same tensor names and shapes), accumulated in double
/// and rounded to float32 once. Throws std::invalid_argument for no file or files that disagree (the first
/// differing tensor named), std::runtime_error when a file cannot be read.
[[nodiscard]] WeightMap average_weights(const std::vector<std::filesystem::path>& files);

/// The step of a file or folder the trainer names "step-<digits><suffix>" (checkpoints: suffix ".safetensors";
/// snapshot folders: ""); nullopt for any other name, or more than 15 digits.
[[nodiscard]] std::optional<int64_t> step_of_name(std::string_view name, std::string_view suffix);

/// One held-out evaluation (also a train_log.jsonl line).
struct EvalRecord {
    int64_t step = 0;
    double train_loss = 0;    ///< mean optimized train loss since the previous record (NaN at step 0)
    double val_loss = 0;      ///< mean NLL over the held-out windows or pairs' target tokens, nats/token
    double lr = 0;
    double tokens_per_s = 0;
    double elapsed_s = 0;
};

/// What one optimizer step measured (Trainer::train_step): the quantities the training lab plots.
struct StepStats {
    int64_t step = 0;      ///< the step this was (the optimizer step count after it is step + 1)
    float loss = 0;        ///< optimized loss (smoothed CE + z-loss), nats
    float nll = 0;         ///< plain next-token NLL of the batch, nats/token
    float lr = 0;          ///< learning rate applied
    double grad_norm = 0;  ///< global L2 norm of all gradients before clipping (clip_grad_norm_'s return)
    // Filled only by train_step(true):
    /// L2 norm of each layer's gradients before clipping, decoder layers first, then encoder layers (names
    /// "dec.<l>." / "enc.<l>."); embeddings, final norms and the head are not in any layer.
    std::vector<double> layer_grad_norms;
    float max_logit = 0;      ///< largest logit of the batch (what z-loss bounds; PaLM §5)
    float max_logsumexp = 0;  ///< largest log Z = logsumexp(logits) of a row (z-loss penalises log Z²)
    int64_t tokens = 0;       ///< real (not padding) tokens of the batch
};

class Trainer {
public:
    /// Decoder-only language modelling. params: initial weights (expected_weights(config)). out_dir is created.
    /// `log` receives progress lines (nullptr: silent). Throws std::invalid_argument on inconsistent options
    /// (seq_len > max_seq_len, an encoder-decoder config, ...).
    Trainer(ModelConfig config, WeightMap params, std::shared_ptr<const TokenDataset> data, TrainOptions opt,
            std::filesystem::path out_dir, std::ostream* log = nullptr);
    /// Encoder–decoder on sentence pairs: step s trains on pairs->train_batch(s). Throws std::invalid_argument when
    /// the config is not encoder_decoder or the longest example exceeds max_seq_len.
    Trainer(ModelConfig config, WeightMap params, std::shared_ptr<const PairDataset> pairs, TrainOptions opt,
            std::filesystem::path out_dir, std::ostream* log = nullptr);

    /// Loads DIR/checkpoint/state.safetensors if present: weights, AdamW state, step, elapsed time; truncates
    /// train_log.jsonl to the checkpoint's step. Returns false when there is no checkpoint. Throws
    /// std::runtime_error when it belongs to another config, seed or token stream.
    bool resume();

    /// Trains until `steps` are done (or until step `stop_at` when 0 < stop_at < steps, for tests that simulate
    /// an interruption). Evaluates at step 0 of a fresh run, every eval_every steps and at the end; checkpoints
    /// every ckpt_every steps and at the end.
    void run(int64_t stop_at = -1);

    /// One optimizer step at step(): the batch of that step, forward, backward, clipping, AdamW; increments step().
    /// Exactly the step run() takes (run() calls it), so a lab stepping by hand follows the CLI run bit for bit.
    /// `detailed`: also the per-layer gradient norms and the largest logit / log Z (a pass over the logits and the
    /// gradients; run() does not ask). Throws std::runtime_error when the loss is not finite (nothing is updated).
    StepStats train_step(bool detailed = false);
    /// Writes a model folder of the current weights (config.json + model.safetensors) to `dir` (created). The
    /// lab's snapshots; a tokenizer is the caller's to copy.
    void save_model_to(const std::filesystem::path& dir) const;
    /// DIR/snapshots/step-<8-digit step> (snapshot_every's folder of that step).
    [[nodiscard]] std::filesystem::path snapshot_dir(int64_t step) const;

    /// Mean held-out NLL per target token over up to eval_batches batches (no dropout, no smoothing, no z-loss):
    /// the first held-out windows, or held-out pair batches spread evenly over the length-sorted batches.
    [[nodiscard]] double evaluate();
    void save_checkpoint();
    /// DIR/config.json + DIR/model.safetensors.
    void save_model() const;
    /// The kept snapshots (keep_checkpoints), oldest first.
    [[nodiscard]] std::vector<std::filesystem::path> kept_checkpoints() const;

    [[nodiscard]] int64_t step() const { return m_step; }
    [[nodiscard]] const TrainModel& model() const { return *m_model; }
    [[nodiscard]] TrainModel& model() { return *m_model; }
    [[nodiscard]] const AdamW& optimizer() const { return *m_adam; }
    [[nodiscard]] const std::vector<EvalRecord>& history() const { return m_history; }
    [[nodiscard]] const TrainOptions& options() const { return m_opt; }

private:
    void init(WeightMap params);
    [[nodiscard]] uint64_t data_fingerprint() const;
    [[nodiscard]] int64_t data_size() const;
    void append_log(const EvalRecord& r);
    void progress_line(double train_loss, double tokens_per_s, double steps_per_s, const double* val_loss) const;

    ModelConfig m_config;
    TrainOptions m_opt;
    std::shared_ptr<const TokenDataset> m_data;   // exactly one of m_data and m_pairs is set
    std::shared_ptr<const PairDataset> m_pairs;
    std::filesystem::path m_dir;
    std::ostream* m_log;
    std::unique_ptr<TrainModel> m_model;
    std::unique_ptr<AdamW> m_adam;
    LrSchedule m_sched;
    int64_t m_step = 0;
    double m_elapsed_prev = 0;  // seconds spent in earlier runs (resume)
    std::chrono::steady_clock::time_point m_start;
    std::vector<EvalRecord> m_history;
    std::vector<int> m_inputs, m_targets;
    PairBatch m_batch;
};

}  // namespace ts::train
