// The training lab's runs (see training_lab.h).
#include "app/session/training_lab.h"

#include "app/i18n/tr.h"  // TS_N_: the presets' descriptions are translated where shown
#include "app/session/neuron_index.h"
#include "app/session/text_codec.h"
#include "app/session/worker.h"  // asset_roots
#include "core/interp/head_detectors.h"
#include "core/model/model.h"
#include "core/trace/trace.h"
#include "core/util/file.h"
#include "core/util/json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>

namespace ts::studio {

namespace fs = std::filesystem;

// --- names --------------------------------------------------------------------------------------------------------

const char* to_string(LabCorpus c) {
    switch (c) {
    case LabCorpus::RepeatedRandom: return "repeated-random";
    case LabCorpus::EnglishText: return "english";
    case LabCorpus::TextFile: return "file";
    case LabCorpus::ZhEnPairs: return "zh-en";
    }
    return "?";
}

LabCorpus lab_corpus_from_string(std::string_view s) {
    for (LabCorpus c : {LabCorpus::RepeatedRandom, LabCorpus::EnglishText, LabCorpus::TextFile, LabCorpus::ZhEnPairs})
        if (s == to_string(c)) return c;
    throw std::invalid_argument("unknown lab corpus '" + std::string(s) +
                                "' (expected repeated-random, english, file or zh-en)");
}

const char* to_string(TrainingLab::Status s) {
    switch (s) {
    case TrainingLab::Status::Idle: return "idle";
    case TrainingLab::Status::Preparing: return "preparing";
    case TrainingLab::Status::Running: return "running";
    case TrainingLab::Status::Paused: return "paused";
    case TrainingLab::Status::Done: return "done";
    case TrainingLab::Status::Stopped: return "stopped";
    case TrainingLab::Status::Failed: return "failed";
    }
    return "?";
}

const std::vector<LabPreset>& lab_presets() {
    static const std::vector<LabPreset> presets = {
        {"attn-only-2l", TS_N_("2 layers, attention only, d_model 64, 4 heads, RoPE (the induction-head model)")},
        {"gpt-2l", TS_N_("2 GPT-2 blocks, d_model 64, 4 heads, d_ff 256")},
        {"gpt-4l", TS_N_("4 GPT-2 blocks, d_model 128, 4 heads, d_ff 512")},
        {"llama-4l", TS_N_("4 Llama blocks (RMSNorm, RoPE, SwiGLU, 2 KV heads), d_model 128")},
        {"vanilla-4l", TS_N_("4 blocks of the original Transformer (post-norm, ReLU, sinusoidal), d_model 128")},
    };
    return presets;
}

// --- settings -----------------------------------------------------------------------------------------------------

train::TrainOptions LabSettings::default_train_options() {
    train::TrainOptions o;
    o.steps = 2000;
    o.batch = 16;
    o.seq_len = 64;
    o.lr = 3e-3f;
    o.min_lr = 3e-4f;
    o.warmup = 100;
    o.weight_decay = 0.0f;
    o.grad_clip = 1.0f;
    o.eval_every = 50;
    o.eval_batches = 4;
    o.ckpt_every = 1 << 30;  // the lab keeps snapshots, not resumable checkpoints
    o.snapshot_every = 100;
    o.log_every = 10;
    o.seed = 1;
    return o;
}

void to_json(nlohmann::json& j, const LabSettings& s) {
    j = nlohmann::json{{"format", "ts-lab-1"},
                       {"preset", s.preset},
                       {"corpus", to_string(s.corpus)},
                       {"corpus_file", s.corpus_file},
                       {"norm_placement", s.norm_placement},
                       {"norm", s.norm},
                       {"attention", s.attention},
                       {"position", s.position},
                       {"qk_norm", s.qk_norm},
                       {"repeat", s.repeat},
                       {"probe_every", s.probe_every},
                       {"train", s.train}};
}

void from_json(const nlohmann::json& j, LabSettings& s) {
    if (!j.is_object()) throw std::invalid_argument("lab settings must be a JSON object");
    const auto get = [&j](const char* k, auto& v) {
        if (!j.contains(k)) return;
        try {
            j.at(k).get_to(v);
        } catch (const nlohmann::json::exception&) {
            throw std::invalid_argument(std::string("lab settings: '") + k + "' has the wrong type");
        }
    };
    get("preset", s.preset);
    std::string corpus = to_string(s.corpus);
    get("corpus", corpus);
    s.corpus = lab_corpus_from_string(corpus);
    get("corpus_file", s.corpus_file);
    get("norm_placement", s.norm_placement);
    get("norm", s.norm);
    get("attention", s.attention);
    get("position", s.position);
    get("qk_norm", s.qk_norm);
    if (j.contains("repeat")) from_json(j.at("repeat"), s.repeat);
    get("probe_every", s.probe_every);
    if (s.probe_every < 0) throw std::invalid_argument("lab settings: probe_every must be >= 0");
    if (j.contains("train")) {
        try {
            train::from_json(j.at("train"), s.train);
        } catch (const nlohmann::json::exception& e) {
            throw std::invalid_argument(std::string("lab settings: 'train': ") + e.what());
        }
    }
}

LabSettings load_lab_settings(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read lab settings " + file.string());
    std::stringstream ss;
    ss << in.rdbuf();
    try {
        return parse_json(ss.str(), file.string()).get<LabSettings>();
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(file.string() + ": " + e.what());
    }
}

ModelConfig lab_model_config(const LabSettings& s) {
    ModelConfig c;
    c.arch = Arch::DecoderOnly;
    c.vocab_size = 256;
    c.position = PositionKind::Learned;
    c.norm = NormKind::LayerNorm;
    c.norm_placement = NormPlacement::Pre;
    c.activation = Activation::GELU;
    c.n_heads = 4;
    if (s.preset == "attn-only-2l") {
        c.d_model = 64, c.n_layers = 2, c.d_ff = 0;
        c.position = PositionKind::RoPE;
        c.tie_embeddings = false;  // tied, the direct path e_t · e_t favours repeating the current token
    } else if (s.preset == "gpt-2l") {
        c.d_model = 64, c.n_layers = 2, c.d_ff = 256;
    } else if (s.preset == "gpt-4l") {
        c.d_model = 128, c.n_layers = 4, c.d_ff = 512;
    } else if (s.preset == "llama-4l") {
        c.d_model = 128, c.n_layers = 4, c.d_ff = 344, c.n_kv_heads = 2;
        c.norm = NormKind::RMSNorm;
        c.position = PositionKind::RoPE;
        c.activation = Activation::SwiGLU;
        c.ffn_bias = c.attn_qkv_bias = c.attn_out_bias = c.norm_bias = false;
    } else if (s.preset == "vanilla-4l") {
        c.d_model = 128, c.n_layers = 4, c.d_ff = 512;
        c.norm_placement = NormPlacement::Post;
        c.final_norm = false;
        c.activation = Activation::ReLU;
        c.position = PositionKind::Sinusoidal;
        c.scale_embeddings = true;
    } else {
        std::string names;
        for (const auto& p : lab_presets()) names += std::string(names.empty() ? "" : ", ") + p.name;
        throw std::invalid_argument("unknown lab preset '" + s.preset + "' (expected " + names + ")");
    }
    if (s.preset != "llama-4l") c.n_kv_heads = c.n_heads;
    if (s.norm_placement == "pre") {
        c.norm_placement = NormPlacement::Pre;
        c.final_norm = true;
    } else if (s.norm_placement == "post") {
        c.norm_placement = NormPlacement::Post;
        c.final_norm = false;  // the original Transformer: each sub-layer ends in its norm
    } else if (!s.norm_placement.empty()) {
        throw std::invalid_argument("norm_placement must be pre or post, got '" + s.norm_placement + "'");
    }
    if (s.norm == "layernorm") {
        c.norm = NormKind::LayerNorm;
    } else if (s.norm == "rmsnorm") {
        c.norm = NormKind::RMSNorm;
    } else if (!s.norm.empty()) {
        throw std::invalid_argument("norm must be layernorm or rmsnorm, got '" + s.norm + "'");
    }
    if (s.attention == "mha") {
        c.n_kv_heads = c.n_heads;
    } else if (s.attention == "gqa") {
        c.n_kv_heads = c.n_heads / 2;
    } else if (s.attention == "mqa") {
        c.n_kv_heads = 1;
    } else if (!s.attention.empty()) {
        throw std::invalid_argument("attention must be mha, gqa or mqa, got '" + s.attention + "'");
    }
    if (s.position == "learned") {
        c.position = PositionKind::Learned;
    } else if (s.position == "sinusoidal") {
        c.position = PositionKind::Sinusoidal;
    } else if (s.position == "rope") {
        c.position = PositionKind::RoPE;
    } else if (s.position == "none") {
        c.position = PositionKind::None;
    } else if (!s.position.empty()) {
        throw std::invalid_argument("position must be learned, sinusoidal, rope or none, got '" + s.position + "'");
    }
    c.qk_norm = s.qk_norm;
    // A lab model is small by design: an absurd settings file is refused before it allocates anything.
    const auto in_range = [](const char* what, int64_t v, int64_t lo, int64_t hi) {
        if (v < lo || v > hi)
            throw std::invalid_argument(std::string("lab settings: ") + what + " must be in [" + std::to_string(lo) +
                                        ", " + std::to_string(hi) + "], got " + std::to_string(v));
    };
    in_range("train.seq_len", s.train.seq_len, 2, 4096);
    in_range("train.batch", s.train.batch, 1, 1024);
    in_range("train.steps", s.train.steps, 1, 10'000'000);
    c.max_seq_len = std::max(128, s.train.seq_len);
    c.name = "lab-" + s.preset;
    c.validate();
    return c;
}

// --- data ---------------------------------------------------------------------------------------------------------

void to_json(nlohmann::json& j, const RepeatCurriculum& c) {
    j = nlohmann::json{{"alphabet", c.alphabet}, {"min_span", c.min_span}, {"max_span", c.max_span},
                       {"copies", c.copies},     {"max_gap", c.max_gap},   {"markov_order", c.markov_order}};
}

void from_json(const nlohmann::json& j, RepeatCurriculum& c) {
    for (const auto& [key, field] : {std::pair<const char*, int*>{"alphabet", &c.alphabet},
                                     {"min_span", &c.min_span},
                                     {"max_span", &c.max_span},
                                     {"copies", &c.copies},
                                     {"max_gap", &c.max_gap},
                                     {"markov_order", &c.markov_order}})
        if (j.contains(key)) {
            if (!j.at(key).is_number_integer())
                throw std::invalid_argument(std::string("lab settings: repeat.") + key + " must be an integer");
            *field = j.at(key).get<int>();
        }
}

std::vector<int32_t> repeated_random_stream(int64_t n_tokens, uint64_t seed, const RepeatCurriculum& c) {
    if (c.alphabet != 26 && c.alphabet != 52) throw std::invalid_argument("repeat.alphabet must be 26 or 52");
    if (c.min_span < 1 || c.max_span < c.min_span || c.max_span > 4096)
        throw std::invalid_argument("repeat spans need 1 <= min_span <= max_span <= 4096");
    if (c.copies < 1 || c.copies > 64) throw std::invalid_argument("repeat.copies must be in [1, 64]");
    if (c.max_gap < 0 || c.max_gap > 4096) throw std::invalid_argument("repeat.max_gap must be in [0, 4096]");
    if (c.markov_order != 0 && c.markov_order != 2) throw std::invalid_argument("repeat.markov_order must be 0 or 2");
    // The chain is the same for every seed (a fixed "language"); the seed draws the text.
    // The order-2 chain's table (3 favoured successors per letter pair); none without the chain.
    std::vector<int> favoured(c.markov_order == 2 ? size_t(c.alphabet) * size_t(c.alphabet) * 3 : 0);
    {
        std::mt19937_64 chain_gen(0x5eed);
        std::uniform_int_distribution<int> any(0, c.alphabet - 1);
        for (auto& f : favoured) f = any(chain_gen);
    }
    std::mt19937_64 gen(seed * 0x9E3779B97F4A7C15ull + 0x1ab);
    std::uniform_int_distribution<int> letter(0, c.alphabet - 1), length(c.min_span, c.max_span), gap(0, c.max_gap);
    const auto glyph = [](int k) { return int32_t(k < 26 ? 'a' + k : 'A' + (k - 26)); };
    const auto draw = [&] { return glyph(letter(gen)); };
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::uniform_int_distribution<int> pick3(0, 2);
    // Letter i of a span: uniform, or after two letters (a, b) one of their 3 favoured successors with p = 0.8.
    const auto span_letter = [&](const std::vector<int32_t>& sp, size_t i) {
        if (c.markov_order != 2 || i < 2 || unit(gen) >= 0.8) return draw();
        const auto index = [](int32_t g) { return g >= 'a' ? int(g - 'a') : 26 + int(g - 'A'); };
        const size_t pair = size_t(index(sp[i - 2])) * size_t(c.alphabet) + size_t(index(sp[i - 1]));
        return glyph(favoured[pair * 3 + size_t(pick3(gen))]);
    };
    const size_t n = size_t(std::max<int64_t>(0, n_tokens));
    std::vector<int32_t> out;
    out.reserve(n + size_t(c.copies) * size_t(c.max_span + c.max_gap));
    std::vector<int32_t> span;
    while (out.size() < n) {
        span.resize(size_t(length(gen)));
        for (size_t i = 0; i < span.size(); ++i) span[i] = span_letter(span, i);
        for (int k = 0; k < c.copies; ++k) {
            if (k > 0)
                for (int g = gap(gen); g > 0; --g) out.push_back(draw());
            out.insert(out.end(), span.begin(), span.end());
        }
    }
    out.resize(n);
    return out;
}

const std::vector<int>& lab_probe_ids() {
    static const std::vector<int> ids = [] {
        std::vector<int> v = interp::repeated_random_tokens(26, 24, 2023);
        for (int& t : v) t += 'a';
        return v;
    }();
    return ids;
}

std::vector<int32_t> LabRun::corpus_tokens(const LabSettings& s) {
    if (s.corpus == LabCorpus::RepeatedRandom) return repeated_random_stream(4'000'000, s.train.seed, s.repeat);
    if (s.corpus == LabCorpus::TextFile && s.corpus_file.empty())
        throw std::invalid_argument("choose a text file to train on");
    const fs::path file =
        s.corpus == LabCorpus::ZhEnPairs ? resolve_pairs_file(s.corpus_file) : resolve_corpus_file(s.corpus_file);
    const std::vector<int> ids = read_corpus_tokens(file, *make_byte_codec(256));
    return {ids.begin(), ids.end()};
}

// --- probes -------------------------------------------------------------------------------------------------------

LabProbe probe_heads(const ModelConfig& config, const WeightMap& weights, const std::vector<int>& ids, int64_t step) {
    const Model m(config, weights);
    ForwardOptions opt;
    std::vector<std::string> points;
    for (int l = 0; l < config.n_layers; ++l) points.push_back("dec." + std::to_string(l) + ".attn.probs");
    opt.capture = CaptureFilter::prefixes(points);
    opt.compute_logits = false;
    const ForwardResult r = forward(m, ids, opt);
    LabProbe p;
    p.step = step;
    const int L = config.n_layers, H = config.n_heads, T = int(ids.size());
    p.entropy = MatrixRM::Zero(L, H);
    for (int l = 0; l < L; ++l) {
        const Tensor& probs = r.trace->at(points[size_t(l)]);  // (H, T, T)
        for (int h = 0; h < H; ++h) {
            double sum = 0;
            for (int i = 1; i < T; ++i) {
                const float* row = probs.data.data() + (size_t(h) * T + size_t(i)) * size_t(T);
                double e = 0;
                for (int j = 0; j <= i; ++j)
                    if (row[j] > 0) e -= double(row[j]) * std::log(double(row[j]));
                sum += e;
            }
            p.entropy(l, h) = float(T > 1 ? sum / (T - 1) : 0.0);
        }
    }
    p.induction = interp::detect_heads(*r.trace, "dec", L, ids, interp::HeadKind::Induction);
    p.prev_token = interp::detect_heads(*r.trace, "dec", L, ids, interp::HeadKind::PreviousToken);
    return p;
}

// --- the run's log ------------------------------------------------------------------------------------------------

namespace {

nlohmann::json matrix_json(const MatrixRM& m) {
    nlohmann::json rows = nlohmann::json::array();
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
        nlohmann::json row = nlohmann::json::array();
        for (Eigen::Index c = 0; c < m.cols(); ++c) row.push_back(m(r, c));
        rows.push_back(std::move(row));
    }
    return rows;
}

}  // namespace

// --- the run ------------------------------------------------------------------------------------------------------

LabRun::LabRun(LabSettings s, fs::path dir) : m_settings(std::move(s)), m_dir(std::move(dir)) {
    const ModelConfig config = lab_model_config(m_settings);
    train::TrainOptions opt = m_settings.train;
    auto data = std::make_shared<const train::TokenDataset>(corpus_tokens(m_settings), config.vocab_size, opt.seq_len,
                                                            opt.val_fraction);
    m_trainer = std::make_unique<train::Trainer>(config, init_weights(config, opt.seed), data, opt, m_dir);
    write_file_atomic(m_dir / "settings.json", nlohmann::json(m_settings).dump(2) + "\n");
    std::error_code ec;
    fs::remove(m_dir / "lab_log.jsonl", ec);
    // A fresh run: snapshots of an earlier run in the same folder would mix into its timeline.
    for (const auto& e : fs::directory_iterator(m_dir / "snapshots", ec))
        if (e.path().filename().string().rfind("step-", 0) == 0) fs::remove_all(e.path(), ec);
    m_history.config = config;
    m_history.total_steps = opt.steps;
    if (m_settings.corpus == LabCorpus::RepeatedRandom) {
        m_history.alphabet = m_settings.repeat.alphabet;
        m_history.uniform_loss = std::log(double(m_settings.repeat.alphabet));
    }
    after_step(0);
}

bool LabRun::done() const { return m_trainer->step() >= m_settings.train.steps; }
int64_t LabRun::current_step() const { return m_trainer->step(); }

void LabRun::step() {
    if (done()) return;
    const auto t0 = std::chrono::steady_clock::now();
    m_history.steps.push_back(m_trainer->train_step(true));
    m_history.elapsed_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    after_step(m_trainer->step());
}

void LabRun::after_step(int64_t step) {
    const train::TrainOptions& o = m_settings.train;
    const bool last = step == o.steps;
    nlohmann::json line{{"step", step}, {"elapsed_s", m_history.elapsed_s}};
    if (!m_history.steps.empty() && m_history.steps.back().step + 1 == step) {
        const train::StepStats& st = m_history.steps.back();
        line["loss"] = st.loss;
        line["lr"] = st.lr;
        line["grad_norm"] = st.grad_norm;
        line["layer_grad_norms"] = st.layer_grad_norms;
        line["max_logit"] = st.max_logit;
        line["max_logsumexp"] = st.max_logsumexp;
    }
    if (step % o.eval_every == 0 || last) {
        const double v = m_trainer->evaluate();
        m_history.val.emplace_back(step, v);
        line["val_loss"] = v;
    }
    if (m_settings.probe_every > 0 && (step % m_settings.probe_every == 0 || last)) {
        m_history.probes.push_back(probe_heads(m_history.config, m_trainer->model().params(), lab_probe_ids(), step));
        const LabProbe& pr = m_history.probes.back();
        line["best_induction"] = pr.induction.maxCoeff();
        line["best_prev_token"] = pr.prev_token.maxCoeff();
        line["entropy"] = matrix_json(pr.entropy);
        line["induction"] = matrix_json(pr.induction);
        line["prev_token"] = matrix_json(pr.prev_token);
    }
    if (o.snapshot_every > 0 && (step % o.snapshot_every == 0 || last)) snapshot(step);
    std::ofstream log(m_dir / "lab_log.jsonl", std::ios::app);
    if (!log) throw std::runtime_error("cannot append to " + (m_dir / "lab_log.jsonl").string());
    log << line.dump() << "\n";
}

void LabRun::snapshot(int64_t step) {
    const fs::path dir = m_trainer->snapshot_dir(step);
    m_trainer->save_model_to(dir);
    m_history.snapshots.emplace_back(step, dir.string());
}

std::string lab_run_name(const fs::path& run_dir) {
    return (run_dir.has_filename() ? run_dir.filename() : run_dir.parent_path().filename()).string();
}

fs::path default_lab_dir(const LabSettings& s) {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    fs::path dir = user_data_dir() / "lab" / (std::string(stamp) + "-" + s.preset);
    for (int i = 2; fs::exists(dir); ++i)
        dir = user_data_dir() / "lab" / (std::string(stamp) + "-" + s.preset + "-" + std::to_string(i));
    return dir;
}

// --- the background run -------------------------------------------------------------------------------------------

TrainingLab::~TrainingLab() { stop(); }

bool TrainingLab::active() const {
    const Status s = m_status.load();
    return s == Status::Preparing || s == Status::Running || s == Status::Paused;
}

bool TrainingLab::start(LabSettings s, fs::path dir) {
    stop();
    {
        std::lock_guard lk(m_mutex);
        m_history.reset();
        m_error.clear();
        m_dir = dir;
        m_settings = s;
    }
    m_stop = false;
    m_pause = false;
    m_status = Status::Preparing;
    m_thread = std::thread(
        [this, s = std::move(s), dir = std::move(dir)]() mutable { run_thread(std::move(s), std::move(dir)); });
    return true;
}

void TrainingLab::pause() {
    if (m_status.load() != Status::Running && m_status.load() != Status::Preparing) return;
    m_pause = true;
}

void TrainingLab::resume() {
    {
        std::lock_guard lk(m_mutex);
        m_pause = false;
    }
    m_cv.notify_all();
}

void TrainingLab::stop() {
    {
        std::lock_guard lk(m_mutex);
        m_stop = true;
    }
    m_cv.notify_all();
    if (m_thread.joinable()) m_thread.join();
}

std::shared_ptr<const LabHistory> TrainingLab::history() const {
    std::lock_guard lk(m_mutex);
    return m_history;
}

std::string TrainingLab::error() const {
    std::lock_guard lk(m_mutex);
    return m_error;
}

fs::path TrainingLab::dir() const {
    std::lock_guard lk(m_mutex);
    return m_dir;
}

LabSettings TrainingLab::settings() const {
    std::lock_guard lk(m_mutex);
    return m_settings;
}

void TrainingLab::publish(const LabHistory& h) {
    auto copy = std::make_shared<const LabHistory>(h);
    std::function<void()> cb;
    {
        std::lock_guard lk(m_mutex);
        m_history = std::move(copy);
        cb = m_on_update;
    }
    if (cb) cb();
}

void TrainingLab::run_thread(LabSettings s, fs::path dir) {
    using clock = std::chrono::steady_clock;
    try {
        LabRun run(std::move(s), std::move(dir));
        publish(run.history());
        auto last_publish = clock::now();
        while (!run.done()) {
            if (m_pause && !m_stop) {
                m_status = Status::Paused;
                publish(run.history());  // also wakes the window to show "paused"
                std::unique_lock lk(m_mutex);
                m_cv.wait(lk, [this] { return !m_pause || m_stop; });
            }
            if (m_stop) break;
            m_status = Status::Running;
            // Each publish copies the record and wakes the window to redraw six curves: once a second is live
            // enough, and under a software renderer (Xvfb) a redraw costs as much CPU as ~10 steps
            // (tests/bench/lab_ui_bench.sh).
            run.step();
            if (clock::now() - last_publish > std::chrono::milliseconds(1000)) {
                publish(run.history());
                last_publish = clock::now();
            }
        }
        publish(run.history());
        m_status = run.done() ? Status::Done : Status::Stopped;
    } catch (const std::exception& e) {
        {
            std::lock_guard lk(m_mutex);
            m_error = e.what();
        }
        m_status = Status::Failed;
    }
    std::function<void()> cb;
    {
        std::lock_guard lk(m_mutex);
        cb = m_on_update;
    }
    if (cb) cb();
}

}  // namespace ts::studio
