// ForwardWorker thread, request execution (forward, logit lens, generation), sampling and model loading.
#include "app/session/worker.h"

#include "app/session/seq2seq.h"

#include "core/model/memory_budget.h"
#include "core/kernels/attention.h"
#include "core/kernels/ops.h"
#include "core/formats/gguf_model.h"
#include "core/formats/ollama.h"
#include "core/formats/hf_checkpoint.h"
#include "core/formats/safetensors.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numeric>
#include <optional>
#include <random>

#ifdef __linux__
#include <sys/resource.h>
#include <unistd.h>
#endif

namespace ts::studio {

// --- snapshot -----------------------------------------------------------------------------------------------------

std::string Snapshot::stack() const {
    return model && model->config().arch == Arch::EncoderOnly ? "enc" : "dec";
}
int Snapshot::n_layers() const { return model ? model->config().n_layers : 0; }

int Snapshot::logits_positions() const {
    if (!tokens) return 0;
    if (logits.rows() > 0) return logits.rows() > 1 ? int(logits.rows()) : int(tokens->ids.size());
    const int T = int(tokens->ids.size());  // no rows computed: any of them on request, when there is a head
    return model && hidden.rows() == T && has_lm_head(*model) ? T : 0;
}

std::vector<float> Snapshot::next_token_probs() const {
    std::vector<float> out;
    if (!tokens) return out;
    const int n = std::min<int>(logits_positions(), int(tokens->ids.size()));
    for (int q = 0; q + 1 < n; ++q) {
        const std::span<const float> row = logits_row(q);
        const int id = tokens->ids[size_t(q) + 1];
        if (row.empty() || id < 0 || size_t(id) >= row.size()) return {};
        float mx = -std::numeric_limits<float>::infinity();
        for (float v : row) mx = std::max(mx, v);
        double z = 0;
        for (float v : row) z += std::exp(double(v) - mx);
        out.push_back(float(std::exp(double(row[size_t(id)]) - mx) / z));
    }
    return out;
}

std::span<const float> Snapshot::logits_row(int q) const {
    const int T = logits_positions();
    if (q < 0 || q >= T) return {};
    const int64_t V = logits.cols();
    if (logits.rows() == T) return {logits.data() + int64_t(q) * V, size_t(V)};
    if (q == T - 1 && logits.rows() == 1) return {logits.data(), size_t(V)};  // the one computed row: the last
    if (!model || hidden.rows() != T) return {};
    std::lock_guard lk(m_row_cache->mutex);
    std::vector<float>& row = m_row_cache->rows[q];
    if (row.empty()) {
        const MatrixRM l = lm_head_logits(*model, MatrixRM(hidden.middleRows(q, 1)));
        row.assign(l.data(), l.data() + l.size());
    }
    return {row.data(), row.size()};
}

namespace {

// Encoder–decoder: src_ids through the encoder (null: the decoder input feeds both stacks).
ForwardResult run_model(const Model& m, const std::vector<int>& ids, const ForwardOptions& opt,
                        const std::vector<int>* src_ids = nullptr) {
    if (m.config().arch == Arch::EncoderDecoder) return forward_seq2seq(m, src_ids ? *src_ids : ids, ids, opt);
    return forward(m, ids, opt);
}

ForwardOptions options_for(const ForwardRequest& r, bool capture) {
    ForwardOptions opt;
    opt.temperature = r.temperature;
    opt.edits = r.edits;
    if (r.model->config().arch == Arch::EncoderOnly) opt.enc_mask = r.mask;
    else opt.self_mask = r.mask;
    opt.capture = capture ? CaptureFilter::all() : CaptureFilter::none();
    opt.pool = r.pool;
    opt.all_logits = r.all_logits || r.model->config().mlm_head;
    opt.compute_logits = r.logits || opt.all_logits;
    return opt;
}

// The logit lens of a long text runs the LM head over this many bytes of logits at a time, and the snapshot keeps
// every position's logits (the lens's last layer) only up to kKeepAllLogitsBytes: a 0.5B model's vocabulary is 152k
// words, so 3,600 tokens' logits are 2.2 GB. Past it the other rows come from Snapshot::logits_row on request.
constexpr size_t kLensChunkBytes = size_t(64) << 20;
constexpr size_t kKeepAllLogitsBytes = size_t(256) << 20;
int lens_chunk_rows(int vocab) { return int(std::max<size_t>(1, kLensChunkBytes / (size_t(std::max(1, vocab)) * 4))); }
bool keeps_all_logits(int T, int vocab) { return size_t(T) * size_t(vocab) * sizeof(float) <= kKeepAllLogitsBytes; }

// Returns false when `cancel` stopped it (s.lens_* then incomplete).
bool compute_logit_lens(const Model& m, const Trace& trace, const std::string& stack, Snapshot& s,
                        const std::function<bool()>& cancel) {
    const ModelConfig& c = m.config();
    if (!has_lm_head(m)) return true;  // the lens reads each layer through the model's own head (core's lm_head_logits)
    const Tensor* nw = m.find_weight(stack + ".final_norm.weight");
    const Tensor* nb = m.find_weight(stack + ".final_norm.bias");
    // Argmax and its probability of each row: softmax at the argmax is 1 / sum_k exp(l_k - l_max).
    const auto argmax_rows = [](const MatrixRM& logits, int64_t r0, std::vector<int>& am, std::vector<float>& pr) {
        for (Eigen::Index t = 0; t < logits.rows(); ++t) {
            Eigen::Index j = 0;
            const float lmax = logits.row(t).maxCoeff(&j);
            am[size_t(r0 + t)] = int(j);
            pr[size_t(r0 + t)] = 1.0f / (logits.row(t).array() - lmax).exp().sum();
        }
    };
    for (int i = 0; i < c.n_layers; ++i) {
        if (cancel && cancel()) return false;
        const Tensor* h = trace.find(stack + "." + std::to_string(i) + ".resid_ffn");
        if (!h) return true;
        MatrixRM x = h->mat();
        if (nw) {
            const std::span<const float> beta = nb ? std::span<const float>(nb->data) : std::span<const float>();
            x = apply_norm(c.norm, x, std::span<const float>(nw->data), beta, c.norm_eps);
        }
        const int T = int(x.rows());
        // The last layer through the final norm is the model's output: reuse the forward's logits (one LM-head product
        // of T x d_model x vocab, ~1/L of the lens) when the normed rows match the recorded final_norm.out.
        const Tensor* out = trace.find("final_norm.out");
        const bool is_output = i == c.n_layers - 1 && out && out->numel() == x.size() &&
                               (out->mat() - x).cwiseAbs().maxCoeff() <= 1e-5f * (1.0f + x.cwiseAbs().maxCoeff());
        const bool reuse = is_output && s.logits.rows() == x.rows() && s.logits.cols() == c.vocab_size;
        std::vector<int> am(static_cast<size_t>(T));
        std::vector<float> pr(static_cast<size_t>(T));
        if (reuse) {
            argmax_rows(s.logits, 0, am, pr);
        } else if (is_output && keeps_all_logits(T, c.vocab_size) && s.logits.rows() <= 1) {
            // Tied or untied, BERT's masked-LM transform, T5's scale, BART's final_logits_bias: as the forward's head.
            MatrixRM computed = lm_head_logits(m, x);
            const bool fill =
                computed.rows() == x.rows() && (s.logits.rows() == 0 || computed.cols() == s.logits.cols());
            if (fill) {
                // The forward computed the last position's logits only (or none): the lens's last layer is every
                // position's (the forward's own row kept as it was), so the complete snapshot has them all without
                // another product.
                if (s.logits.rows() == 1) computed.bottomRows(1) = s.logits;
                s.logits = std::move(computed);
            }
            argmax_rows(fill ? s.logits : computed, 0, am, pr);
        } else {
            // Row blocks: a long text's T x vocab logits never exist at once.
            const int chunk = lens_chunk_rows(c.vocab_size);
            for (int r0 = 0; r0 < T; r0 += chunk) {
                if (cancel && cancel()) return false;
                const int n = std::min(chunk, T - r0);
                argmax_rows(lm_head_logits(m, x.middleRows(r0, n)), r0, am, pr);
            }
        }
        s.lens_argmax.push_back(std::move(am));
        s.lens_prob.push_back(std::move(pr));
    }
    return true;
}

std::atomic<size_t> g_memory_budget{0};

/// Bytes a forward with these options needs for T (and S_src source) tokens: the fitted trace and workspace, plus the
/// logit lens's rows. The fit (two tiny dry runs) is kept per model and settings.
size_t forward_need(const ForwardRequest& r, const ForwardOptions& opt, int T, int S_src) {
    struct Fit {
        std::weak_ptr<const Model> model;
        std::string key;
        ForwardMemoryFit fit;
    };
    thread_local std::vector<Fit> cached;  // one per capture filter (the full trace, the long-text one)
    const std::string key = opt.capture.key() + std::to_string(opt.all_logits) + std::to_string(opt.compute_logits);
    auto it = std::find_if(cached.begin(), cached.end(),
                           [&](const Fit& f) { return f.key == key && f.model.lock() == r.model; });
    if (it == cached.end()) {
        std::erase_if(cached, [](const Fit& f) { return f.model.expired(); });
        cached.push_back(Fit{r.model, key, fit_forward_memory(*r.model, opt)});
        it = cached.end() - 1;
    }
    size_t need = it->fit.bytes(T, S_src);
    if (r.logit_lens && has_lm_head(*r.model)) {  // one block of a layer's lens logits, and every position's if kept
        const int V = r.model->config().vocab_size;
        need += size_t(std::min(T, lens_chunk_rows(V))) * size_t(V) * sizeof(float);
        if (keeps_all_logits(T, V)) need += size_t(2) * size_t(T) * size_t(V) * sizeof(float);
    }
    return need;
}

/// Thrown between the layers of a long forward once a newer request waits (or the worker stops): the forward ends
/// there instead of finishing for a text nobody shows any more. Not a std::exception: no error is reported.
struct ForwardSuperseded {};

/// The FFN intermediates: (T, d_ff) each, most of a long text's trace (three of the ~4 d_ff + 10 d_model floats a
/// token takes per layer in a gated model). What the long-text capture leaves out.
const std::vector<std::string>& long_text_dropped() {
    static const std::vector<std::string> names{".ffn.pre_act", ".ffn.up", ".ffn.post_act"};
    return names;
}

}  // namespace

const std::vector<std::string>& attention_only_dropped() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v = long_text_dropped();  // the FFN intermediates, and everything else but attention
        for (const char* n : {".ffn.out", ".ffn_norm.out", ".attn_norm.out", ".attn.q", ".attn.k", ".attn.q_rot",
                              ".attn.out", ".attn.head_out", ".resid_attn",
                              // the keys are in the AttentionRows; typing reuses the KV cache, not these
                              ".attn.k_rot", ".attn.v"})
            v.emplace_back(n);
        return v;
    }();
    return names;
}

CaptureFilter attention_only_capture(bool logit_lens) {
    std::vector<std::string> dropped = attention_only_dropped();
    if (!logit_lens) dropped.push_back(".resid_ffn");
    return CaptureFilter::all_except(std::move(dropped));
}

namespace {

/// Fits the request to the memory budget before it runs: the whole trace when it fits; else, when the request records
/// everything, the trace without the FFN intermediates (opt.capture changes; the snapshot records need and budget);
/// else throws the one-line refusal (the snapshot's error: the window keeps its session).
void fit_memory_budget(const ForwardRequest& r, ForwardOptions& opt, int T, int S_src, Snapshot& s) {
    const size_t budget = forward_memory_budget();
    const std::string what = "a forward over " + std::to_string(T + S_src) + " tokens";
    const size_t need = forward_need(r, opt, T, S_src);
    if (need <= budget) return;
    if (opt.capture.captures_all()) {
        ForwardOptions lean = opt;
        lean.capture = CaptureFilter::all_except(long_text_dropped());
        const size_t lean_need = forward_need(r, lean, T, S_src);
        if (lean_need <= budget) {
            opt = std::move(lean);
            s.ffn_skipped_need = need;
            s.ffn_skipped_budget = budget;
            return;
        }
        throw std::runtime_error(memory_refusal(what + " (even without the FFN intermediates)", lean_need, budget,
                                                "shorten the text, or start the app with a larger --memory-budget"));
    }
    throw std::runtime_error(
        memory_refusal(what, need, budget, "shorten the text, or start the app with a larger --memory-budget"));
}

}  // namespace

size_t forward_memory_need(const ForwardRequest& r, int T, int S_src, bool without_ffn) {
    ForwardOptions opt = options_for(r, r.capture_all);
    if (without_ffn) opt.capture = CaptureFilter::all_except(long_text_dropped());
    return forward_need(r, opt, T, S_src);
}

void set_forward_memory_budget(size_t bytes) { g_memory_budget.store(bytes); }
size_t forward_memory_budget() {
    const size_t b = g_memory_budget.load();
    return b ? b : default_memory_budget();
}

std::shared_ptr<const Snapshot> run_forward_request(const ForwardRequest& r, uint64_t id) {
    auto s = std::make_shared<Snapshot>();
    s->id = id;
    s->kind = r.kind;
    s->model = r.model;
    s->codec = r.codec;
    s->tokens = r.tokens;
    s->source_tokens = r.source_tokens;
    s->temperature = r.temperature;
    s->mask = r.mask;
    s->int8_activations = r.quant_activations == QuantActivations::Int8 && r.model && has_int8_products(*r.model);
    const auto t0 = std::chrono::steady_clock::now();
    set_quant_activations(r.quant_activations);
    try {
        if (!r.model) throw std::invalid_argument("no model loaded");
        const std::vector<int>* src = r.source_tokens ? &r.source_tokens->ids : nullptr;
        if (r.kind == ForwardRequest::Kind::Translate) {
            // Decode first; the traced forward below then runs on the source and the decoded target.
            if (!r.translation || !r.codec)
                throw std::invalid_argument("this model has no translation.json (nor a Hugging Face config.json with "
                                            "decoder_start_token_id and eos_token_id) to translate with");
            if (!src || src->empty()) return s;  // nothing to translate
            auto res = std::make_shared<DecodeResult>(translate_ids(*r.model, *r.translation, *src, r.decode));
            s->tokens = decoded_target_tokens(r.target_codec ? *r.target_codec : *r.codec, *r.translation, res->ids);
            s->translation = std::move(res);
        }
        if (!s->tokens || s->tokens->ids.empty() || (src && src->empty())) {
            s->compute_ms = 0;
            return s;  // empty text: nothing to run, not an error
        }
        if (r.kind != ForwardRequest::Kind::Generate) {
            ForwardOptions opt = options_for(r, r.capture_all);
            if (r.attention_only && r.kind == ForwardRequest::Kind::Forward &&
                r.model->config().arch == Arch::DecoderOnly && opt.capture.captures_all() &&
                int(s->tokens->ids.size()) >= r.progressive_min_tokens) {
                opt.capture = attention_only_capture(r.logit_lens);  // the Attention tab runs no lens
                s->attention_only = true;
            }
            fit_memory_budget(r, opt, int(s->tokens->ids.size()), src ? int(src->size()) : 0, *s);
            const int n_layers = r.model->config().n_layers;
            auto last_publish = std::chrono::steady_clock::now();
            if (r.publish_partial && r.kind == ForwardRequest::Kind::Forward &&
                r.model->config().arch == Arch::DecoderOnly && opt.capture.captures_anything() && n_layers > 1 &&
                int(s->tokens->ids.size()) >= r.progressive_min_tokens) {
                // On the forward's thread, between layers: a new small trace that shares the finished layers'
                // attention rows (never changed again), so the UI reads nothing the forward still writes.
                opt.on_layer_min_tail = r.progressive_min_tokens;  // an edit far from the end shows its layers too
                opt.on_layer = [&](const std::string& stack, int layer, const Trace& tr) {
                    if (r.superseded && r.superseded()) throw ForwardSuperseded{};
                    const auto now = std::chrono::steady_clock::now();
                    if (layer + 1 == n_layers) return;  // the complete snapshot follows
                    if (layer > 0 && now - last_publish < std::chrono::milliseconds(1500)) return;
                    // The request's fields, not a copy of *s: a copy would share its logits-row cache, which this
                    // snapshot (no hidden states yet) must not fill.
                    auto p = std::make_shared<Snapshot>();
                    p->id = s->id;
                    p->kind = s->kind;
                    p->model = s->model;
                    p->codec = s->codec;
                    p->tokens = s->tokens;
                    p->temperature = s->temperature;
                    p->mask = s->mask;
                    p->int8_activations = s->int8_activations;
                    p->ffn_skipped_need = s->ffn_skipped_need;
                    p->ffn_skipped_budget = s->ffn_skipped_budget;
                    p->attention_only = s->attention_only;
                    p->partial = true;
                    p->layers_done = layer + 1;
                    auto small = std::make_shared<Trace>(CaptureFilter::all());
                    for (int l = 0; l <= layer; ++l) {
                        const std::string block = stack + "." + std::to_string(l) + ".attn.";
                        if (auto rows = tr.attention(block))
                            detail::record_attention(detail::TraceSink{small.get(), true, block}, std::move(rows));
                    }
                    p->trace = std::move(small);
                    p->compute_ms = std::chrono::duration<double, std::milli>(now - t0).count();
                    r.publish_partial(std::move(p));
                    last_publish = std::chrono::steady_clock::now();
                };
            }
            ForwardResult out;
            if (r.kind == ForwardRequest::Kind::Forward && r.memory && r.model->config().arch == Arch::DecoderOnly) {
                if (r.memory->model != r.model) {
                    r.memory->state.reset();
                    r.memory->model = r.model;
                }
                IncrementalStats stats;
                out = forward_incremental(*r.model, s->tokens->ids, opt, r.memory->state,
                                          &stats);
                s->reused_positions = stats.reused;
            } else {
                out = run_model(*r.model, s->tokens->ids, opt, src);
            }
            s->logits = std::move(out.logits);
            s->hidden = std::move(out.hidden);
            s->trace = out.trace;
            if (r.logit_lens && s->trace) {
                std::shared_ptr<Snapshot> early;
                if (r.publish_partial) {  // heatmaps first: the lens costs L more LM-head products (more than the forward)
                    early = std::make_shared<Snapshot>(*s);
                    early->partial = true;
                    early->compute_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
                    r.publish_partial(early);
                }
                const std::function<bool()> no_cancel;
                if (!compute_logit_lens(*r.model, *s->trace, s->stack(), *s, early ? r.superseded : no_cancel))
                    return early;  // a newer request waits: its forward matters more than this lens
            }
        } else {
            // core/forward/sample.h: the KV cache, core's generator (the same text for a seed everywhere)
            GenerateOptions g;
            g.max_new_tokens = r.generate_tokens;
            g.sampling = r.sampling;
            g.seed = r.seed;
            g.forward = options_for(r, false);
            if (src) g.source_ids = *src;
            s->generated = generate(*r.model, r.tokens->ids, g).ids;
            if (const auto& dec = r.target_codec ? r.target_codec : r.codec) s->generated_text = dec->decode(s->generated);
        }
    } catch (const ForwardSuperseded&) {
        return nullptr;  // a newer request is next: nothing to publish for this one
    } catch (const std::exception& e) {
        s->error = e.what();
        s->trace.reset();
    }
    s->compute_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return s;
}

// --- worker thread --------------------------------------------------------------------------------------------------

ForwardWorker::ForwardWorker(RunFn run) : m_run(std::move(run)) { m_thread = std::thread([this] { loop(); }); }

ForwardWorker::~ForwardWorker() {
    std::thread t;
    {
        std::lock_guard lk(m_mutex);
        m_stop = true;
        t = std::move(m_thread);  // under the lock: the loop may hand m_thread to its successor (set_share_cores)
    }
    m_cv.notify_all();
    if (t.joinable()) t.join();
}

void ForwardWorker::set_share_cores(bool on) {
    {
        std::lock_guard lk(m_mutex);
        if (m_share_cores == on) return;
        m_share_cores = on;
        if (on) m_restart = true;  // the loop moves to a fresh thread once its request, if any, is done
    }
    m_cv.notify_all();
}

uint64_t ForwardWorker::submit(ForwardRequest r) {
    uint64_t id;
    {
        std::lock_guard lk(m_mutex);
        id = m_next_id++;
        if (m_pending) ++m_dropped;
        m_pending.emplace(id, std::move(r));
    }
    m_cv.notify_all();
    return id;
}

std::shared_ptr<const Snapshot> ForwardWorker::latest() const {
    std::lock_guard lk(m_mutex);
    return m_latest;
}
std::shared_ptr<const Snapshot> ForwardWorker::latest_generation() const {
    std::lock_guard lk(m_mutex);
    return m_latest_gen;
}
bool ForwardWorker::busy() const {
    std::lock_guard lk(m_mutex);
    return m_running || m_pending.has_value();
}
uint64_t ForwardWorker::dropped() const {
    std::lock_guard lk(m_mutex);
    return m_dropped;
}
uint64_t ForwardWorker::completed() const {
    std::lock_guard lk(m_mutex);
    return m_completed;
}

bool ForwardWorker::wait_idle(double timeout_s) const {
    std::unique_lock lk(m_mutex);
    return m_cv.wait_for(lk, std::chrono::duration<double>(timeout_s),
                         [this] { return !m_running && !m_pending.has_value(); });
}

void ForwardWorker::loop() {
#ifdef __linux__
    // Drawing comes first: when the CPU is contended (a big model, software GL), the scheduler should run the UI
    // thread before this one. Linux's nice value is per thread; failure (e.g. a sandbox) is harmless.
    (void)setpriority(PRIO_PROCESS, id_t(gettid()), 5);
#endif
    std::unique_lock lk(m_mutex);
    for (;;) {
        m_cv.wait(lk, [this] { return m_stop || m_restart || m_pending.has_value(); });
        if (m_stop) return;
        if (m_restart) {  // set_share_cores: a successor takes over and this thread, with its OpenMP pool, ends
            m_restart = false;
            std::thread next([this] { loop(); });
            m_thread.swap(next);
            next.detach();  // this very thread; it touches nothing of the worker after returning
            return;
        }
        const bool transient = m_share_cores;
        auto job = std::move(*m_pending);  // not a structured binding: the run lambda below captures it (clang 14)
        const uint64_t id = job.first;
        ForwardRequest& req = job.second;
        m_pending.reset();
        m_running = true;
        lk.unlock();
        if (!req.pool) req.pool = m_pool;
        if (!req.memory && req.kind == ForwardRequest::Kind::Forward) req.memory = m_memory;
        if (req.kind == ForwardRequest::Kind::Forward)
        {
            req.publish_partial = [this](std::shared_ptr<const Snapshot> s) {
                {
                    std::lock_guard plk(m_mutex);
                    // >=: a long forward's progressive snapshots, then its lens-less one, share the request's id
                    if (s && (!m_latest || s->id >= m_latest->id)) m_latest = std::move(s);
                }
                if (m_on_publish) m_on_publish();
            };
            req.superseded = [this] {
                std::lock_guard plk(m_mutex);
                return m_pending.has_value() || m_stop;
            };
        }
        std::shared_ptr<const Snapshot> snap;
        const auto run = [&] {
            try {
                snap = m_run(req, id);
            } catch (const std::exception& e) {
                auto s = std::make_shared<Snapshot>();
                s->id = id;
                s->kind = req.kind;
                s->model = req.model;
                s->tokens = req.tokens;
                s->error = e.what();
                snap = s;
            }
        };
        if (transient) {
            std::thread(run).join();  // its OpenMP threads, if any, end with it (see set_share_cores)
        } else {
            run();
        }
        lk.lock();
        m_running = false;
        ++m_completed;
        if (snap) {
            auto& slot = req.kind == ForwardRequest::Kind::Generate ? m_latest_gen : m_latest;
            if (!slot || snap->id >= slot->id) slot = snap;  // newest wins (the complete one replaces its partial)
        }
        m_cv.notify_all();
        if (m_on_publish) {
            lk.unlock();
            m_on_publish();
            lk.lock();
        }
    }
}

// --- models -------------------------------------------------------------------------------------------------------

LoadedModel load_model_folder(const std::string& dir_in, const std::function<void(uint64_t, uint64_t)>& progress) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (dir_in.empty()) throw std::runtime_error("no model folder given");
    // An Ollama name ("llama3.2:1b") that is not also a path here: the GGUF blob its manifest names.
    std::string ollama_name;
    if (!fs::exists(dir_in, ec) && looks_like_ollama_name(dir_in)) {
        if (const auto blob = resolve_ollama_model(dir_in)) {
            ollama_name = dir_in;
            LoadedModel lm = load_model_folder(blob->string(), progress);
            lm.display_name = ollama_name + " (Ollama)";
            lm.path = ollama_name;  // recent models and reloads go through the name, not the blob's hash
            return lm;
        }
    }
    const bool gguf = is_gguf_file(dir_in);
    if (!gguf && !fs::exists(dir_in, ec))
        throw std::runtime_error("'" + dir_in + "' does not exist" +
                                 (looks_like_ollama_name(dir_in)
                                      ? " (neither a path nor a model in Ollama's store " + ollama_models_dir().string() + ")"
                                      : std::string()));
    if (!gguf && !fs::is_directory(dir_in, ec))
        throw std::runtime_error("'" + dir_in + "' is neither a model folder nor a GGUF file");
    const std::string dir = gguf ? dir_in : resolve_model_dir(dir_in).string();
    LoadedModel lm;
    std::optional<GgufFile> file;  // a GGUF file is opened and its header parsed once: model, summary, tokenizer
    if (gguf) {
        file.emplace(dir);
        lm.model = load_gguf_model(*file, GgufLoadOptions{progress});
        lm.gguf = std::make_shared<const GgufSummary>(gguf_summary(file->header(), file->file_bytes()));
    } else if (is_hf_model_dir(dir)) {
        lm.model = load_hf_model(dir, HfLoadOptions{progress});
    } else {
        lm.model = load_model_dir(dir);
        if (progress) progress(1, 1);
    }
    lm.weight_warnings = lm.model->weight_warnings();
    lm.path = dir;
    lm.display_name = fs::path(dir).lexically_normal().filename().string();
    if (lm.display_name.empty()) lm.display_name = fs::path(dir).lexically_normal().parent_path().filename().string();
    try {
        lm.codec = file ? load_codec_for_gguf(file->header(), dir) : load_codec_for_model_dir(dir);
    } catch (const std::exception& e) {
        lm.tokenizer_warning = std::string("tokenizer not used (ids-only mode): ") + e.what();
    }
    if (!lm.codec) lm.codec = make_byte_codec(lm.model->config().vocab_size);
    if (lm.model->config().arch == Arch::EncoderDecoder && lm.tokenizer_warning.empty() && !file) {
        try {
            lm.target_codec = load_target_codec_for_model_dir(dir);
        } catch (const std::exception& e) {
            lm.tokenizer_warning = std::string("target tokenizer not used: ") + e.what();
        }
    }
    if (lm.model->config().arch == Arch::EncoderDecoder && file) {
        // A GGUF encoder–decoder (t5): one vocabulary for both sides; its metadata says how to start and end.
        try {
            lm.translation = std::make_shared<const TranslationSpec>(gguf_translation_spec(file->header(), dir));
        } catch (const std::exception& e) {
            lm.translation_warning = std::string("source/target path not available: ") + e.what();
        }
    } else if (lm.model->config().arch == Arch::EncoderDecoder && !fs::exists(fs::path(dir) / "translation.json", ec) &&
               is_hf_model_dir(dir)) {
        // A Hugging Face encoder–decoder (t5, marian, bart): its config.json says how to start and end sequences.
        try {
            lm.translation = std::make_shared<const TranslationSpec>(hf_translation_spec(dir));
        } catch (const std::exception& e) {
            lm.translation_warning = std::string("source/target path not available: ") + e.what();
        }
    } else if (lm.model->config().arch == Arch::EncoderDecoder && fs::exists(fs::path(dir) / "translation.json", ec)) {
        try {
            const auto tok = lm.codec->tokenizer();
            if (!tok) throw std::runtime_error("the folder has no usable tokenizer.json");
            lm.translation = std::make_shared<const TranslationSpec>(load_translation_spec(dir, *tok));
        } catch (const std::exception& e) {
            lm.translation_warning = std::string("translation.json not used: ") + e.what();
        }
    }
    return lm;
}

LoadedModel make_demo_model() {
    ModelConfig c;
    c.name = "random-demo";
    c.vocab_size = 256;
    c.d_model = 64;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.d_ff = 256;
    c.n_layers = 4;
    c.max_seq_len = 128;
    c.norm = NormKind::RMSNorm;
    c.norm_bias = false;
    c.activation = Activation::SwiGLU;
    c.position = PositionKind::RoPE;
    c.attn_qkv_bias = false;
    c.attn_out_bias = false;
    c.ffn_bias = false;
    LoadedModel lm;
    lm.model = std::make_shared<const Model>(c, init_weights(c, 1234));
    lm.codec = make_byte_codec(c.vocab_size);
    lm.display_name = "random demo (in memory)";
    lm.random_weights = true;
    return lm;
}

// The executable's own place comes first so that an installed copy uses its own data even on the machine that
// built it.
std::vector<std::filesystem::path> asset_roots(const std::string& exe_path) {
    namespace fs = std::filesystem;
    std::vector<fs::path> roots;
    std::error_code ec;
    fs::path exe = exe_path.empty() ? fs::read_symlink("/proc/self/exe", ec) : fs::weakly_canonical(fs::path(exe_path), ec);
    if (ec) exe.clear();
    if (!exe.empty()) {
        const fs::path d = exe.parent_path();
        roots.push_back(d / ".." / "share" / "transformer-studio" / "assets");
        roots.push_back(d / "assets");
        roots.push_back(d / ".." / "assets");
        roots.push_back(d / ".." / ".." / "assets");
        roots.push_back(d / ".." / ".." / ".." / "assets");
    }
#ifdef TS_ASSETS_DIR
    roots.emplace_back(TS_ASSETS_DIR);
#endif
    return roots;
}

namespace {

bool is_model_folder(const std::filesystem::path& p) {
    std::error_code ec;
    return std::filesystem::exists(p / "config.json", ec) && std::filesystem::exists(p / "model.safetensors", ec);
}

}  // namespace

std::string find_default_model_dir(const std::string& exe_path) {
    const auto roots = asset_roots(exe_path);
    for (const char* name : {"austen-gpt", "austen-llama"})
        for (const auto& r : roots)
            if (is_model_folder(r / "models" / name)) return (r / "models" / name).lexically_normal().string();
    return "";
}

std::vector<std::string> list_bundled_model_dirs(const std::string& exe_path) {
    namespace fs = std::filesystem;
    std::vector<std::string> out;
    std::vector<std::string> names;
    const std::string def = find_default_model_dir(exe_path);
    if (!def.empty()) out.push_back(def), names.push_back(fs::path(def).filename().string());
    for (const auto& r : asset_roots(exe_path)) {
        std::error_code ec;
        if (!fs::is_directory(r / "models", ec)) continue;
        std::vector<fs::path> found;
        for (const auto& e : fs::directory_iterator(r / "models", ec))
            if (e.is_directory() && is_model_folder(e.path())) found.push_back(e.path());
        std::sort(found.begin(), found.end());
        for (const auto& p : found) {
            const std::string name = p.filename().string();
            if (std::find(names.begin(), names.end(), name) != names.end()) continue;  // first root wins
            names.push_back(name);
            out.push_back(p.lexically_normal().string());
        }
    }
    return out;
}

bool ModelLoader::start(std::string path, std::function<void()> on_done) {
    if (busy()) return false;
    m_path = path;
    m_progress = std::make_shared<std::atomic<float>>(0.0f);
    m_future = std::async(std::launch::async, [path, prog = m_progress, on_done = std::move(on_done)]() {
        Result r;
        r.path = path;
        try {
            r.model = load_model_folder(path, [prog](uint64_t done, uint64_t total) {
                prog->store(total ? float(double(done) / double(total)) : 1.0f);
            });
        } catch (const std::exception& e) {
            r.error = e.what();
        }
        if (on_done) on_done();  // the future is ready a moment later; the woken loop polls until it is
        return r;
    });
    return true;
}

std::optional<ModelLoader::Result> ModelLoader::poll() {
    if (!m_future.valid()) return std::nullopt;
    if (m_future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return std::nullopt;
    return m_future.get();
}

}  // namespace ts::studio
