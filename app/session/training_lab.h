// The training lab (issue #33): a small model trained in the window, step by step, with the quantities the course
// discusses measured as it goes — losses, learning rate, gradient norm per layer, the largest logit, attention
// entropy per head (Zhai et al. 2023) and the induction / previous-token scores of the heads (Olsson et al. 2022) —
// and model-folder snapshots that every panel opens. LabRun is the synchronous run (also `train --lab`); TrainingLab
// runs one on a background thread with pause, resume and stop. GL-free.
//
// Every lab corpus is byte-level (ids = UTF-8 bytes, vocab_size 256): snapshots need no tokenizer (the app's byte
// codec reads them), a student types into them directly, and the LM head stays small enough that a 2-layer model
// learns in seconds on two cores.
#pragma once

#include "core/model/model_config.h"
#include "core/model/tensor.h"
#include "core/train/trainer.h"

#include <nlohmann/json_fwd.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace ts::studio {

/// What a lab run trains on.
///   RepeatedRandom  blocks of 8–24 random lowercase letters, each written twice: the second copy is predictable
///                   only by copying (an induction head), the first not at all (loss ln 26 ≈ 3.26 nats)
///   EnglishText     the default models' English corpus (corpus/corpus.txt, `corpus build`), first 1 MB
///   TextFile        any UTF-8 text file, first 1 MB
///   ZhEnPairs       the translation model's English–Chinese pairs (corpus/zh-en/train.tsv, `corpus build --parallel
///                   zh-en`), one "English<TAB>Chinese" line each, first 1 MB: a byte-level model that continues an
///                   English line after its tab in Chinese (3 bytes a character)
enum class LabCorpus { RepeatedRandom, EnglishText, TextFile, ZhEnPairs };
/// "repeated-random", "english", "file", "zh-en".
[[nodiscard]] const char* to_string(LabCorpus c);
/// The corpus named `s` (to_string's spelling). Throws std::invalid_argument listing the names.
[[nodiscard]] LabCorpus lab_corpus_from_string(std::string_view s);

/// A starting shape of the lab's models (lab_model_config applies the knobs on top).
struct LabPreset {
    const char* name;         ///< "attn-only-2l", ...
    const char* description;  ///< English; the UI translates it
};
/// attn-only-2l (the induction-head model of Elhage et al. 2021: 2 layers, attention only; RoPE, with which its
/// previous-token head forms in a few hundred steps, against over a thousand with learned positions), gpt-2l and gpt-4l
/// (GPT-2 blocks: LayerNorm, GELU, learned positions), llama-4l (RMSNorm, RoPE, SwiGLU, GQA), vanilla-4l (the
/// original Transformer's decoder: post-norm, ReLU, sinusoidal positions). All d_model 64–128, vocab 256.
[[nodiscard]] const std::vector<LabPreset>& lab_presets();

/// The shape of the RepeatedRandom curriculum.
/// The defaults are what made an induction head form fastest on this machine (measured in the #33 note).
struct RepeatCurriculum {
    int alphabet = 26;  ///< letters drawn from: 26 = a–z, 52 = a–z and A–Z
    int min_span = 8;   ///< span length, uniform in [min_span, max_span]
    int max_span = 32;
    int copies = 3;   ///< times each span is written
    int max_gap = 8;  ///< fresh random letters between copies, uniform in [0, max_gap] (so no fixed offset copies)
    /// Letters within a span: 0 = independent and uniform; 2 = a fixed random second-order Markov chain (after two
    /// letters, one of 3 favoured successors 80 % of the time), local structure a previous-token head predicts
    /// from, as in text.
    int markov_order = 2;
};
void to_json(nlohmann::json& j, const RepeatCurriculum& c);
void from_json(const nlohmann::json& j, RepeatCurriculum& c);
/// One lab run's settings; settings.json in its folder (to_json), and what `train --lab` reads.
struct LabSettings {
    std::string preset = "attn-only-2l";
    LabCorpus corpus = LabCorpus::RepeatedRandom;
    std::string corpus_file;     ///< TextFile: the file; EnglishText: "" = corpus/corpus.txt (found as the
                                 ///< Neurons panel finds it) or another copy of it; ZhEnPairs: "" =
                                 ///< corpus/zh-en/train.tsv (found the same way) or another pairs file
    std::string norm_placement;  ///< "" = the preset's, "pre", "post"
    std::string norm;            ///< "" = the preset's, "layernorm", "rmsnorm"
    std::string attention;       ///< "" = the preset's, "mha", "gqa" (n_kv_heads = n_heads / 2), "mqa"
    std::string position;        ///< "" = the preset's, "learned", "sinusoidal", "rope", "none"
    bool qk_norm = false;        ///< RMSNorm on queries and keys (Dehghani et al. 2023)
    train::TrainOptions train = default_train_options();
    RepeatCurriculum repeat;  ///< RepeatedRandom's shape
    int probe_every = 10;     ///< head probes (entropy, induction, previous-token) every N steps; 0 = never
    /// The lab's training defaults: 2000 steps, batch 16 × 64 tokens, AdamW lr 3e-3 (cosine to 3e-4 after a
    /// 100-step warm-up), weight decay 0, clip 1, held-out loss every 50 steps over 4 batches, a snapshot every 100.
    [[nodiscard]] static train::TrainOptions default_train_options();
};
void to_json(nlohmann::json& j, const LabSettings& s);
/// Missing keys keep their defaults. Throws std::invalid_argument naming a field of the wrong type or value.
void from_json(const nlohmann::json& j, LabSettings& s);
/// settings.json → LabSettings. Throws std::runtime_error naming the file when it cannot be read or parsed.
[[nodiscard]] LabSettings load_lab_settings(const std::filesystem::path& file);

/// The preset's config with the knobs applied; max_seq_len = max(128, train.seq_len). Throws
/// std::invalid_argument for an unknown preset or knob value, train.seq_len outside [2, 4096], train.batch outside
/// [1, 1024] or train.steps outside [1, 10⁷], or a config that validate() refuses.
[[nodiscard]] ModelConfig lab_model_config(const LabSettings& s);

/// The RepeatedRandom stream: n_tokens byte ids, blocks of a random span written `copies` times with random gaps.
/// A pure function of (n_tokens, seed, c). Throws std::invalid_argument on an empty range or alphabet.
[[nodiscard]] std::vector<int32_t> repeated_random_stream(int64_t n_tokens, uint64_t seed,
                                                          const RepeatCurriculum& c = {});
/// The probe every run measures its heads on: 24 random lowercase letters, written twice (48 ids), fixed.
[[nodiscard]] const std::vector<int>& lab_probe_ids();

/// Heads of one probe forward, each (n_layers, n_heads).
struct LabProbe {
    int64_t step = 0;
    MatrixRM entropy;     ///< mean over query rows 1..T−1 of −Σ_j p_j ln p_j, nats (0: one key; ln(i+1): uniform)
    MatrixRM induction;   ///< head_score(Induction) (core/interp/head_detectors.h), 0..1
    MatrixRM prev_token;  ///< head_score(PreviousToken), 0..1
};
/// The probe forward of a decoder-only model on `ids` (core forward, attention probabilities captured). Throws as
/// forward() does.
[[nodiscard]] LabProbe probe_heads(const ModelConfig& config, const WeightMap& weights, const std::vector<int>& ids,
                                   int64_t step);

/// One head's attention on the probe (lab_probe_ids(): 48 × 48, row-major, query rows) in a run's snapshot.
struct ProbeAttention {
    int64_t step = -1;         ///< the snapshot's step
    int T = 0;                 ///< probe length
    std::vector<float> probs;  ///< T × T; 0 above the diagonal (causal)
};

/// A lab run's record, oldest first.
struct LabHistory {
    ModelConfig config;
    std::vector<train::StepStats> steps;                     ///< every step (train_step(true))
    std::vector<std::pair<int64_t, double>> val;             ///< (step, held-out loss in nats/token), step 0 included
    std::vector<LabProbe> probes;                            ///< step 0 and every probe_every steps
    std::vector<std::pair<int64_t, std::string>> snapshots;  ///< (step, model folder), step 0 included
    double elapsed_s = 0;                                    ///< training time (pauses not counted)
    int total_steps = 0;
    /// RepeatedRandom: ln(alphabet), the loss of guessing each letter uniformly (the plateau before any copying);
    /// NaN for text.
    double uniform_loss = std::numeric_limits<double>::quiet_NaN();
    int alphabet = 0;
    /// The first probed step whose best induction score is ≥ threshold; -1 when none is.
    [[nodiscard]] int64_t first_induction_step(float threshold = 0.5f) const {
        for (const auto& p : probes)
            if (p.induction.size() > 0 && p.induction.maxCoeff() >= threshold) return p.step;
        return -1;
    }
};

/// The attention of `layer`, `head` on the probe in the newest snapshot of `h` at or before `step` (its model folder
/// loaded and run forward). Throws std::runtime_error when the run has no snapshot there, std::invalid_argument
/// for a layer or head the model does not have, and as loading the folder does.
[[nodiscard]] ProbeAttention probe_attention(const LabHistory& h, int64_t step, int layer, int head);

/// Two runs' attention for one comparison: `step` < 0 means the last step both have snapshots for, and layer and head
/// are clamped to what both models have. Throws as probe_attention (std::runtime_error when a run has no snapshot).
struct ProbePair {
    ProbeAttention a, b;
    int layer = 0, head = 0;  ///< as used
};
[[nodiscard]] ProbePair probe_attention_pair(const LabHistory& a, const LabHistory& b, int64_t step, int layer,
                                             int head);

/// A run folder's record read back from its settings.json and lab_log.jsonl (render --lab-run, a run's figures
/// after the window closed). Snapshots are the folders present. Throws std::runtime_error naming the file when one
/// is missing or unreadable.
[[nodiscard]] LabHistory load_lab_history(const std::filesystem::path& run_dir);
/// The recorded runs bundled with the app for the lessons (assets/lab-runs/<name>/ with settings.json and
/// lab_log.jsonl, found like the bundled models; no snapshots), sorted by name, each name once; scanned on the first
/// call.
[[nodiscard]] std::vector<std::filesystem::path> bundled_lab_runs();
/// The run folder `name_or_dir` names: an existing folder as given, else the bundled recorded run of that name
/// (bundled_lab_runs), else `name_or_dir` unchanged (load_lab_history then says what is missing). Lessons and
/// `render --lab-run induction-2l` name bundled runs this way.
[[nodiscard]] std::filesystem::path resolve_lab_run(const std::string& name_or_dir);
/// A run folder's name, the label of its curves ("20261128-140000-gpt-4l"); a trailing '/' is ignored.
[[nodiscard]] std::string lab_run_name(const std::filesystem::path& run_dir);

/// A run, synchronous. The folder gets settings.json, lab_log.jsonl (one line per step) and snapshots/step-N/.
class LabRun {
public:
    /// Reads the corpus, builds the config and the initial weights (init_weights(config, seed)), evaluates,
    /// probes and snapshots step 0. Throws std::invalid_argument (settings) or std::runtime_error (corpus, disk).
    LabRun(LabSettings s, std::filesystem::path dir);
    /// One optimizer step (Trainer::train_step, so exactly a `train` step), then the held-out loss, probe and
    /// snapshot that are due. Nothing when done(). Throws as train_step does (a non-finite loss).
    void step();
    [[nodiscard]] bool done() const;
    [[nodiscard]] int64_t current_step() const;
    [[nodiscard]] const LabHistory& history() const { return m_history; }
    [[nodiscard]] const train::Trainer& trainer() const { return *m_trainer; }
    [[nodiscard]] const LabSettings& settings() const { return m_settings; }
    [[nodiscard]] const std::filesystem::path& dir() const { return m_dir; }
    /// The token stream it trains on (byte ids).
    [[nodiscard]] static std::vector<int32_t> corpus_tokens(const LabSettings& s);

private:
    void after_step(int64_t step);
    void snapshot(int64_t step);
    LabSettings m_settings;
    std::filesystem::path m_dir;
    std::unique_ptr<train::Trainer> m_trainer;
    LabHistory m_history;
};

/// "$XDG_DATA_HOME/transformer-studio/lab/<YYYYmmdd-HHMMSS>-<preset>" (a new folder name each call).
[[nodiscard]] std::filesystem::path default_lab_dir(const LabSettings& s);

/// One LabRun on a background thread. The UI thread calls the controls and reads history() every frame.
class TrainingLab {
public:
    enum class Status { Idle, Preparing, Running, Paused, Done, Stopped, Failed };
    TrainingLab() = default;
    ~TrainingLab();
    TrainingLab(const TrainingLab&) = delete;
    TrainingLab& operator=(const TrainingLab&) = delete;

    /// Starts a run in `dir` (a previous one is stopped first). Returns false while a run is being stopped.
    bool start(LabSettings s, std::filesystem::path dir);
    /// Runs on the lab thread after each published update and status change (the app: glfwPostEmptyEvent, so the
    /// idle window redraws only when there is something new). Set before start().
    void set_on_update(std::function<void()> f) { m_on_update = std::move(f); }
    void pause();
    void resume();
    /// Stops after the current step (its snapshots stay); blocks until the thread has ended.
    void stop();
    [[nodiscard]] Status status() const { return m_status.load(); }
    [[nodiscard]] bool active() const;  ///< Preparing, Running or Paused
    /// The newest published record (every second, and when the run pauses or ends);
    /// nullptr before the first.
    [[nodiscard]] std::shared_ptr<const LabHistory> history() const;
    [[nodiscard]] std::string error() const;
    [[nodiscard]] std::filesystem::path dir() const;
    [[nodiscard]] LabSettings settings() const;
    /// The settings the next start() will use, edited by the UI thread only (the Training panel's knobs).
    [[nodiscard]] LabSettings& draft() { return m_draft; }

private:
    void run_thread(LabSettings s, std::filesystem::path dir);
    void publish(const LabHistory& h);
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    std::thread m_thread;
    std::atomic<Status> m_status{Status::Idle};
    std::atomic<bool> m_stop{false}, m_pause{false};
    std::shared_ptr<const LabHistory> m_history;
    std::string m_error;
    std::filesystem::path m_dir;
    LabSettings m_settings;
    LabSettings m_draft;
    std::function<void()> m_on_update;
};
[[nodiscard]] const char* to_string(TrainingLab::Status s);

}  // namespace ts::studio
