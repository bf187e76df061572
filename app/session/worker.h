// The compute worker: the UI thread submits ForwardRequests; one background thread runs the model forward and
// publishes an immutable Snapshot (shared_ptr<const>). Newest wins: a request submitted while another waits
// replaces it (the stale one is dropped unrun), and a result older than the published one is discarded.
// Model loading runs off the UI thread too (ModelLoader). GL-free.
#pragma once

#include "app/session/text_codec.h"
#include "core/interp/input_attribution.h"
#include "core/forward/decode.h"
#include "core/forward/incremental.h"
#include "core/model/model.h"
#include "core/formats/gguf_model.h"  // GgufSummary
#include "core/forward/sample.h"      // SamplingOptions, generate
#include "core/kernels/quant_gemm.h"  // QuantActivations

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace ts::studio {

struct Snapshot;

/// What the worker remembers of its last forward so the next keystroke computes only the changed tail
/// (core/forward/incremental.h). Used by one thread at a time (the worker's); holds the model so its address stays unique.
struct ForwardMemory {
    std::shared_ptr<const Model> model;
    IncrementalState state;
};

struct ForwardRequest {
    /// Translate (encoder–decoder models with a TranslationSpec): decode the source with `decode`, then run the
    /// traced forward on source + the decoded target; the snapshot carries the decoding steps.
    enum class Kind { Forward, Generate, Translate };
    Kind kind = Kind::Forward;
    std::shared_ptr<const Model> model;
    std::shared_ptr<const TextCodec> codec;
    std::shared_ptr<const TextCodec> target_codec;       ///< Translate: decodes the target (Marian target.spm); null = codec
    std::shared_ptr<const TokenizedText> tokens;         ///< decoder input (decoder-only, encoder-only: the text)
    std::shared_ptr<const TokenizedText> source_tokens;  ///< encoder–decoder: the encoder input (null: `tokens`)
    std::shared_ptr<const TranslationSpec> translation;  ///< Translate: the model's translation.json
    DecodeOptions decode;                                ///< Translate: greedy (beam 1) or beam search
    float temperature = 1.0f;           ///< attention softmax temperature
    /// Products with a GGUF file's Q4_0 / Q8_0 weights (process-wide: run_forward_request sets it for every forward).
    QuantActivations quant_activations = QuantActivations::Float;
    MaskSpec mask;                      ///< decoder self-attention mask (encoder-only models: encoder mask)
    std::vector<ActivationEdit> edits;  ///< interventions applied inside the forward (core/trace/intervention.h)
    bool capture_all = true;            ///< record every trace name
    /// A decoder-only forward over at least this many tokens publishes progressive snapshots through
    /// publish_partial (Snapshot::layers_done): the first layer's attention at once, then the finished layers about
    /// every 1.5 s, so a long text shows its first heatmap long before its last layer is done.
    int progressive_min_tokens = 1024;
    /// The Attention tab asks: a decoder-only text of at least progressive_min_tokens tokens records only what that
    /// tab shows — each layer's attention (the queries and keys its AttentionRows keeps), its residual stream after
    /// the layer (resid_ffn, when the logit lens runs) and the embeddings — and leaves the rest out
    /// (attention_only_dropped(): the FFN's, the norms' outputs, the queries, keys and values as entries, the heads'
    /// outputs). At 8k tokens of a 0.5B model the trace is then ~1 GB instead of ~18 GB. Snapshot::attention_only
    /// says so; another tab runs the text again with its own capture.
    bool attention_only = false;
    bool logit_lens = true;             ///< compute per-layer argmax through the final norm + LM head
    /// Logits of every position from the forward. false (default): the forward computes the last position's only
    /// (the LM head is about a quarter of a GPT-2-small forward) and Snapshot::logits_row gives the others on
    /// request; the logit lens, when on, fills them all. Masked-LM models (fill-mask) always get every row.
    bool all_logits = false;
    /// false: the forward runs no LM head at all (Snapshot::logits empty); logits_row computes a row on its first
    /// request. For views that show no logits (Attention, Tokens, ...): for GPT-2 small the head is about a third of
    /// the weights a keystroke reads. Ignored when all_logits is set or the model is a masked LM.
    bool logits = true;
    int generate_tokens = 0;            ///< Generate: how many tokens to sample
    SamplingOptions sampling;
    uint64_t seed = 1;
    /// Set by ForwardWorker for Forward requests: receives the snapshot as soon as the forward pass is done, before
    /// the logit lens (Snapshot::partial, same id, lens empty), so heatmaps update without waiting for L extra
    /// LM-head products; the complete snapshot follows. Unset (render, tests): one complete result.
    std::function<void(std::shared_ptr<const Snapshot>)> publish_partial;
    /// Set by ForwardWorker: true once a newer request waits. After publish_partial, the logit lens stops between
    /// layers and the partial snapshot is the result (the newer request gets its own lens).
    std::function<bool()> superseded;
    /// Set by ForwardWorker: the trace's buffers come from (and return to, when the snapshot is released) this pool,
    /// so typing touches no fresh pages. Unset: plain allocations.
    std::shared_ptr<TensorPool> pool;
    /// Set by ForwardWorker: reuse of the previous forward's prefix (decoder-only, causal mask, no edits; anything
    /// else recomputes everything). Unset: a full forward.
    std::shared_ptr<ForwardMemory> memory;
};

/// The memory budget every forward request is checked against before it runs (core/model/memory_budget.h); 0 (the
/// default) = default_memory_budget() at the time of the request. Set once at start-up (the gui's --memory-budget).
void set_forward_memory_budget(size_t bytes);
[[nodiscard]] size_t forward_memory_budget();
/// Bytes the request's forward needs over T tokens (and S_src source tokens): its trace and workspace as fitted on
/// the model (core's fit_forward_memory), plus the logit lens's rows. without_ffn: the long-text capture, which
/// leaves the FFN intermediates out. A request whose whole trace is over the budget but whose long-text trace fits
/// runs with the latter (Snapshot::ffn_skipped_need); one over both is refused in one line.
[[nodiscard]] size_t forward_memory_need(const ForwardRequest& r, int T, int S_src, bool without_ffn);

/// The trace names (suffixes) a long text run for the Attention tab leaves out (ForwardRequest::attention_only).
[[nodiscard]] const std::vector<std::string>& attention_only_dropped();
/// The capture of a long text run for the Attention tab: every name but attention_only_dropped(), and without the
/// logit lens (which reads it) the residual stream after each layer (".resid_ffn") too.
[[nodiscard]] CaptureFilter attention_only_capture(bool logit_lens);

struct Snapshot {
    uint64_t id = 0;                    ///< request id (monotonic)
    ForwardRequest::Kind kind = ForwardRequest::Kind::Forward;
    std::shared_ptr<const Model> model;
    std::shared_ptr<const TextCodec> codec;
    std::shared_ptr<const TokenizedText> tokens;         ///< decoder input (or the text)
    std::shared_ptr<const TokenizedText> source_tokens;  ///< encoder–decoder: encoder input (else null)
    std::shared_ptr<const DecodeResult> translation;     ///< Translate: the decoded target and its steps
    std::shared_ptr<const Trace> trace; ///< may be null when the forward failed or the text was empty
    /// (T, vocab) when every position's logits were computed (ForwardRequest::all_logits, masked-LM models, or the
    /// logit lens), (1, vocab) for the last position's, or empty (ForwardRequest::logits = false, or no LM head).
    /// Read a position through logits_row().
    MatrixRM logits;
    MatrixRM hidden;                    ///< (T, d_model) final hidden states (after the final norm): logits_row's input
    float temperature = 1.0f;
    MaskSpec mask;
    bool int8_activations = false;  ///< the model's Q4_0 / Q8_0 products ran on 8-bit activations (llama.cpp's)
    /// Logit lens: lens_argmax[layer][pos], lens_prob[layer][pos] (probability of that argmax).
    std::vector<std::vector<int>> lens_argmax;
    std::vector<std::vector<float>> lens_prob;
    std::vector<int> generated;         ///< Generate: sampled ids
    std::string generated_text;         ///< Generate: decoded continuation (raw bytes)
    std::string error;                  ///< non-empty when the forward threw
    double compute_ms = 0.0;
    bool partial = false;               ///< the logit lens is still being computed (a complete snapshot follows)
    int reused_positions = 0;           ///< positions taken from the previous forward (incremental typing)
    /// Non-zero when the trace left the FFN intermediates out (ffn.pre_act, ffn.up, ffn.post_act: most of a long
    /// text's trace) because recording everything would not fit the memory budget: the bytes the whole trace would
    /// have needed, and the budget (the panels that would show them say so: ffn_not_recorded_message).
    size_t ffn_skipped_need = 0, ffn_skipped_budget = 0;
    /// A long text run for the Attention tab (ForwardRequest::attention_only): the trace lacks
    /// attention_only_dropped(); the other tabs run the text again.
    bool attention_only = false;
    /// -1: a finished forward. k >= 1: a progressive snapshot of a long forward still running
    /// (ForwardRequest::progressive_min_tokens): its trace holds the attention of layers [0, k) only, no logits; the
    /// complete snapshot (same id) replaces it.
    int layers_done = -1;
    /// "dec" for decoder stacks, "enc" for encoder-only models.
    [[nodiscard]] std::string stack() const;
    [[nodiscard]] int n_layers() const;
    /// Trace tensor or nullptr.
    [[nodiscard]] const Tensor* find(const std::string& name) const { return trace ? trace->find(name) : nullptr; }
    /// Positions that have logits: the token count when the model has an LM head and the forward ran, 0 without a
    /// head (or when the forward failed).
    [[nodiscard]] int logits_positions() const;
    /// Logits of position q in [0, logits_positions()), vocab floats: a row of `logits` when it holds q, else the
    /// final hidden state q through the LM head (ts::lm_head_logits, as the forward's head: tied or untied, T5's
    /// scale, BART's final_logits_bias), computed on the first request and kept for the snapshot's lifetime.
    /// Thread-safe. Empty span for q out of range.
    [[nodiscard]] std::span<const float> logits_row(int q) const;
    /// p[i] = softmax(logits_row(i))[tokens->ids[i + 1]] for i in [0, T - 1): how likely the model found each token
    /// after the first, given the tokens before it (and the source, for an encoder–decoder: the teacher-forced
    /// target's per-token probabilities). Temperature 1, no masking. Empty without logits. -log p[i] is that
    /// token's cross-entropy in nats (torch: F.softmax(logits[:-1], -1).gather(-1, ids[1:, None])).
    [[nodiscard]] std::vector<float> next_token_probs() const;

private:
    struct RowCache {
        std::mutex mutex;
        std::map<int, std::vector<float>> rows;
    };
    std::shared_ptr<RowCache> m_row_cache = std::make_shared<RowCache>();  ///< shared by copies (same data)
};

/// Runs one request (the default worker job). Never throws: errors go to Snapshot::error. Calls r.publish_partial
/// (when set) with a copy of the snapshot before computing the logit lens; skips the rest of the lens once
/// r.superseded() is true (then returns that partial snapshot). A long forward (progressive_min_tokens) that
/// r.superseded() finds outdated between two layers stops there and returns nullptr (nothing to publish).
[[nodiscard]] std::shared_ptr<const Snapshot> run_forward_request(const ForwardRequest& r, uint64_t id);

class ForwardWorker {
public:
    using RunFn = std::function<std::shared_ptr<const Snapshot>(const ForwardRequest&, uint64_t id)>;
    explicit ForwardWorker(RunFn run = run_forward_request);
    ~ForwardWorker();
    ForwardWorker(const ForwardWorker&) = delete;
    ForwardWorker& operator=(const ForwardWorker&) = delete;

    /// Queues r, replacing any request not yet started. Returns its id.
    uint64_t submit(ForwardRequest r);
    /// Newest published Forward snapshot (nullptr before the first; may be partial, then replaced by the complete
    /// one with the same id). Cheap; call every frame.
    [[nodiscard]] std::shared_ptr<const Snapshot> latest() const;
    /// Newest published Generate result (nullptr before the first).
    [[nodiscard]] std::shared_ptr<const Snapshot> latest_generation() const;
    [[nodiscard]] bool busy() const;
    /// Requests dropped unrun because a newer one replaced them; requests run.
    [[nodiscard]] uint64_t dropped() const;
    [[nodiscard]] uint64_t completed() const;
    /// Blocks until nothing is pending or running, or timeout; true when idle.
    bool wait_idle(double timeout_s) const;
    /// Called on the worker thread after every publish (partial or complete), e.g. glfwPostEmptyEvent so an idle
    /// window that waits for events wakes up and draws the result. Set before the first submit.
    void set_on_publish(std::function<void()> fn) { m_on_publish = std::move(fn); }
    /// While another long-lived thread computes with OpenMP (the training lab), this worker keeps no OpenMP threads
    /// of its own: turning it on moves the worker to a fresh thread (the old one's pool of OpenMP threads ends with
    /// it), and each request then runs on a short-lived thread of its own. Why: libgomp keeps a pool per thread that
    /// opened a parallel region, and once it manages more threads than there are cores it stops spinning at barriers
    /// and sleeps instead; on 2 cores the lab's steps ran at 0.63x of headless beside an idle worker pool (#33).
    /// Costs each request a thread start and fresh scratch buffers. Never blocks: a running request finishes on the
    /// old thread first.
    void set_share_cores(bool on);

private:
    void loop();
    RunFn m_run;
    std::function<void()> m_on_publish;
    mutable std::mutex m_mutex;
    mutable std::condition_variable m_cv;
    std::optional<std::pair<uint64_t, ForwardRequest>> m_pending;
    bool m_running = false, m_stop = false;
    bool m_share_cores = false, m_restart = false;  // set_share_cores; m_restart: the loop hands over to a new thread
    uint64_t m_next_id = 1, m_dropped = 0, m_completed = 0;
    std::shared_ptr<const Snapshot> m_latest, m_latest_gen;
    std::shared_ptr<TensorPool> m_pool = std::make_shared<TensorPool>();
    std::shared_ptr<ForwardMemory> m_memory = std::make_shared<ForwardMemory>();
    std::thread m_thread;
};

// --- models -------------------------------------------------------------------------------------------------------

struct LoadedModel {
    std::shared_ptr<const Model> model;
    std::shared_ptr<const TextCodec> codec;
    std::shared_ptr<const TextCodec> target_codec;  ///< Marian: the target side's own tokenizer (target.spm); null = codec
    std::string path;                   ///< folder, or "" for the in-memory demo
    std::string display_name;
    bool random_weights = false;        ///< the in-memory demo: attention teaches nothing
    std::string tokenizer_warning;      ///< a tokenizer file present but unusable (names the file; ids-only mode)
    /// One line per problem the loader found in the weights (a tensor holding NaN/±Inf, named); the model is
    /// usable, but outputs depending on those weights are NaN. From Model::weight_warnings().
    std::vector<std::string> weight_warnings;
    /// translation.json of an encoder–decoder folder, resolved to token ids (null when absent or unusable).
    std::shared_ptr<const TranslationSpec> translation;
    std::string translation_warning;    ///< translation.json present but unusable
    /// A GGUF file's format facts (tensor types, bits per weight, chat template); null for folders.
    std::shared_ptr<const GgufSummary> gguf;
    /// The input-attribution backward of `model`, made on the first attribution and reused by later ones (copies of
    /// this LoadedModel share it; it goes with the last of them).
    std::shared_ptr<interp::GradientModelCache> gradients = std::make_shared<interp::GradientModelCache>();
};

/// Loads a GGUF file (core/formats/gguf_model.h, its tokenizer from the metadata) or a model folder: ours (config.json + model.safetensors) or a Hugging Face one (config.json with
/// "model_type": gpt2, llama, mistral, qwen2, bert, gpt_neox, gemma; single or sharded safetensors; also a hub cache path
/// models--org--name), plus its tokenizer (tokenizer.json or vocab.json + merges.txt) when usable.
/// `progress(bytes_done, bytes_total)` is called while weights are decoded. Throws std::runtime_error naming the
/// problem.
[[nodiscard]] LoadedModel load_model_folder(const std::string& dir,
                                            const std::function<void(uint64_t, uint64_t)>& progress = {});
/// A small random-weight decoder (4 layers, 4 heads, 2 KV heads, byte vocabulary) built in memory.
[[nodiscard]] LoadedModel make_demo_model();
/// The first existing bundled default (assets/models/austen-gpt, austen-llama), searched relative to
/// TS_ASSETS_DIR and to the executable's folder; "" when none exists.
[[nodiscard]] std::string find_default_model_dir(const std::string& exe_path);

/// The folders bundled data (models/, lessons/, lab-runs/) is looked for in, first match wins: beside the executable
/// (installed: ../share/transformer-studio/assets; a build tree inside the source tree: ../../assets), then the source
/// tree the binary was built from (TS_ASSETS_DIR). `exe_path` "" = this process's executable. Not all exist.
[[nodiscard]] std::vector<std::filesystem::path> asset_roots(const std::string& exe_path = "");

/// Every bundled model folder (assets/models/*/ with config.json and model.safetensors), default first, searched
/// like find_default_model_dir; each path once.
[[nodiscard]] std::vector<std::string> list_bundled_model_dirs(const std::string& exe_path);

/// Loads on a background thread; poll() every frame. One load at a time (start() while busy is ignored).
class ModelLoader {
public:
    struct Result {
        std::optional<LoadedModel> model;
        std::string path;
        std::string error;              ///< non-empty when loading failed (the previous model stays)
    };
    /// `on_done` (optional) runs on the loading thread once the result is ready (e.g. glfwPostEmptyEvent).
    bool start(std::string path, std::function<void()> on_done = {});
    [[nodiscard]] bool busy() const { return m_future.valid(); }
    [[nodiscard]] const std::string& loading_path() const { return m_path; }
    /// Fraction of the weights decoded so far, in [0, 1] (0 until the loader reports).
    [[nodiscard]] float progress() const { return m_progress ? m_progress->load() : 0.0f; }
    /// The result once ready (exactly once), else nullopt.
    [[nodiscard]] std::optional<Result> poll();

private:
    std::future<Result> m_future;
    std::string m_path;
    std::shared_ptr<std::atomic<float>> m_progress;
};

}  // namespace ts::studio
