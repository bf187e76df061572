// Training loop, held-out evaluation, progress lines, train_log.jsonl, checkpoints (save/resume) and the model
// folder written during and after training.
#include "core/train/trainer.h"

#include "core/formats/safetensors.h"
#include "core/util/json.h"
#include "core/util/number.h"
#include "core/util/file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace ts::train {

// --- options JSON -------------------------------------------------------------------------------------------------

void to_json(nlohmann::json& j, const TrainOptions& o) {
    j = nlohmann::json{{"steps", o.steps},
                       {"batch", o.batch},
                       {"seq_len", o.seq_len},
                       {"batch_tokens", o.batch_tokens},
                       {"schedule", to_string(o.schedule)},
                       {"lr", o.lr},
                       {"min_lr", o.min_lr},
                       {"lr_factor", o.lr_factor},
                       {"warmup", o.warmup},
                       {"weight_decay", o.weight_decay},
                       {"beta1", o.beta1},
                       {"beta2", o.beta2},
                       {"adam_eps", o.adam_eps},
                       {"decay_embeddings", o.decay_embeddings},
                       {"grad_clip", o.grad_clip},
                       {"label_smoothing", o.label_smoothing},
                       {"z_loss", o.z_loss},
                       {"dropout", o.dropout},
                       {"attn_dropout", o.attn_dropout},
                       {"eval_every", o.eval_every},
                       {"eval_batches", o.eval_batches},
                       {"ckpt_every", o.ckpt_every},
                       {"keep_checkpoints", o.keep_checkpoints},
                       {"average_last", o.average_last},
                       {"snapshot_every", o.snapshot_every},
                       {"log_every", o.log_every},
                       {"seed", o.seed},
                       {"val_fraction", o.val_fraction},
                       {"repeat_fraction", o.repeat_fraction},
                       {"repeat_period", o.repeat_period},
                       {"repeat_random", o.repeat_random}};
}

void from_json(const nlohmann::json& j, TrainOptions& o) {
    const auto get = [&j](const char* k, auto& v) {
        if (j.contains(k)) j.at(k).get_to(v);
    };
    get("steps", o.steps);
    get("batch", o.batch);
    get("seq_len", o.seq_len);
    get("batch_tokens", o.batch_tokens);
    if (j.contains("schedule")) o.schedule = lr_schedule_from_string(j.at("schedule").get<std::string>());
    get("lr", o.lr);
    get("min_lr", o.min_lr);
    get("lr_factor", o.lr_factor);
    get("warmup", o.warmup);
    get("weight_decay", o.weight_decay);
    get("beta1", o.beta1);
    get("beta2", o.beta2);
    get("adam_eps", o.adam_eps);
    get("decay_embeddings", o.decay_embeddings);
    get("grad_clip", o.grad_clip);
    get("label_smoothing", o.label_smoothing);
    get("z_loss", o.z_loss);
    get("dropout", o.dropout);
    get("attn_dropout", o.attn_dropout);
    get("eval_every", o.eval_every);
    get("eval_batches", o.eval_batches);
    get("ckpt_every", o.ckpt_every);
    get("keep_checkpoints", o.keep_checkpoints);
    get("average_last", o.average_last);
    get("snapshot_every", o.snapshot_every);
    get("log_every", o.log_every);
    get("seed", o.seed);
    get("val_fraction", o.val_fraction);
    get("repeat_fraction", o.repeat_fraction);
    get("repeat_period", o.repeat_period);
    get("repeat_random", o.repeat_random);
}

// --- construction -------------------------------------------------------------------------------------------------

Trainer::Trainer(ModelConfig config, WeightMap params, std::shared_ptr<const TokenDataset> data, TrainOptions opt,
                 std::filesystem::path out_dir, std::ostream* log)
    : m_config(std::move(config)), m_opt(opt), m_data(std::move(data)), m_dir(std::move(out_dir)), m_log(log) {
    if (m_config.arch != Arch::DecoderOnly)
        throw std::invalid_argument(std::string("a token stream trains decoder-only models; the config is ") +
                                    to_string(m_config.arch) + " (train it on sentence pairs)");
    if (m_opt.seq_len <= 0)
        throw std::invalid_argument("seq_len must be positive, got " + std::to_string(m_opt.seq_len));
    if (m_opt.seq_len > m_config.max_seq_len)
        throw std::invalid_argument("seq_len " + std::to_string(m_opt.seq_len) + " exceeds the config's max_seq_len " +
                                    std::to_string(m_config.max_seq_len));
    if (!m_data || m_data->seq_len() != m_opt.seq_len)
        throw std::invalid_argument("the token dataset's seq_len does not match the options' seq_len");
    init(std::move(params));
}

Trainer::Trainer(ModelConfig config, WeightMap params, std::shared_ptr<const PairDataset> pairs, TrainOptions opt,
                 std::filesystem::path out_dir, std::ostream* log)
    : m_config(std::move(config)), m_opt(opt), m_pairs(std::move(pairs)), m_dir(std::move(out_dir)), m_log(log) {
    if (m_config.arch != Arch::EncoderDecoder)
        throw std::invalid_argument(std::string("sentence pairs train encoder_decoder models; the config is ") +
                                    to_string(m_config.arch));
    if (!m_pairs) throw std::invalid_argument("no pair dataset");
    if (m_pairs->max_len() > m_config.max_seq_len)
        throw std::invalid_argument("the longest pair side has " + std::to_string(m_pairs->max_len()) +
                                    " tokens, more than the config's max_seq_len " +
                                    std::to_string(m_config.max_seq_len));
    init(std::move(params));
}

void Trainer::init(WeightMap params) {
    const auto positive = [](const char* what, int v) {
        if (v <= 0) throw std::invalid_argument(std::string(what) + " must be positive, got " + std::to_string(v));
    };
    positive("steps", m_opt.steps);
    positive("batch", m_opt.batch);
    positive("eval_every", m_opt.eval_every);
    positive("eval_batches", m_opt.eval_batches);
    positive("ckpt_every", m_opt.ckpt_every);
    positive("log_every", m_opt.log_every);
    if (m_opt.snapshot_every < 0) throw std::invalid_argument("snapshot_every must be >= 0");
    if (m_opt.keep_checkpoints < 0 || m_opt.average_last < 0)
        throw std::invalid_argument("keep_checkpoints and average_last must be >= 0");
    if (m_opt.average_last > m_opt.keep_checkpoints)
        throw std::invalid_argument("averaging the last " + std::to_string(m_opt.average_last) +
                                    " checkpoints needs at least as many kept (keep_checkpoints " +
                                    std::to_string(m_opt.keep_checkpoints) + ")");
    if (m_opt.schedule == LrScheduleKind::InverseSqrt) positive("warmup (inverse_sqrt schedule)", m_opt.warmup);
    if (m_opt.min_lr < 0) m_opt.min_lr = m_opt.lr / 10.0f;
    if (m_opt.attn_dropout < 0) m_opt.attn_dropout = m_opt.dropout;
    m_model = std::make_unique<TrainModel>(m_config, std::move(params));
    m_adam = std::make_unique<AdamW>(m_model->params(), AdamWOptions{m_opt.beta1, m_opt.beta2, m_opt.adam_eps,
                                                                     m_opt.weight_decay, m_opt.decay_embeddings});
    m_sched = LrSchedule{m_opt.lr, m_opt.min_lr, m_opt.warmup, m_opt.steps, m_opt.schedule, m_config.d_model,
                         m_opt.lr_factor};
    std::filesystem::create_directories(m_dir);
    m_start = std::chrono::steady_clock::now();
}

uint64_t Trainer::data_fingerprint() const { return m_pairs ? m_pairs->fingerprint() : m_data->fingerprint(); }
int64_t Trainer::data_size() const { return m_pairs ? m_pairs->train_tokens() : m_data->size(); }

// --- evaluation and logging ---------------------------------------------------------------------------------------

double Trainer::evaluate() {
    double sum = 0;
    int64_t count = 0;
    if (m_pairs) {
        const int n = m_pairs->val_batches();
        const int k = std::min(n, m_opt.eval_batches);
        for (int i = 0; i < k; ++i) {
            m_pairs->val_batch(int(int64_t(i) * n / k), m_batch);  // spread over the length-sorted batches
            const StepLoss l = m_model->forward(m_batch, StepOptions{});
            sum += double(l.nll) * double(l.count);
            count += l.count;
        }
        return count ? sum / double(count) : std::numeric_limits<double>::quiet_NaN();
    }
    const int B = m_opt.batch;
    const int n_windows = std::min(m_data->val_windows(), B * m_opt.eval_batches);
    if (n_windows == 0) return std::numeric_limits<double>::quiet_NaN();
    // Full batches only (keeps the training buffers' shape), unless the held-out part is smaller than one batch.
    const int step = n_windows >= B ? B : n_windows;
    for (int w = 0; w + step <= n_windows; w += step) {
        const int n = m_data->val_batch(w, step, m_inputs, m_targets);
        const StepLoss l = m_model->forward(m_inputs, m_targets, n, m_opt.seq_len, StepOptions{});
        sum += double(l.nll) * double(l.count);
        count += l.count;
    }
    return count ? sum / double(count) : std::numeric_limits<double>::quiet_NaN();
}

namespace {
std::string format_duration(double s) {
    if (!std::isfinite(s) || s < 0) return "?";
    const long t = long(s + 0.5);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
    return buf;
}

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
}  // namespace

void Trainer::append_log(const EvalRecord& r) {
    m_history.push_back(r);
    const nlohmann::json j{{"step", r.step},
                           {"train_loss", number_or_null(r.train_loss)},
                           {"val_loss", number_or_null(r.val_loss)},
                           {"lr", r.lr},
                           {"tokens_per_s", r.tokens_per_s},
                           {"elapsed_s", r.elapsed_s}};
    std::ofstream f(m_dir / "train_log.jsonl", std::ios::app);
    if (!f) throw std::runtime_error("cannot append to " + (m_dir / "train_log.jsonl").string());
    f << j.dump() << "\n";
}

void Trainer::progress_line(double train_loss, double tokens_per_s, double steps_per_s, const double* val_loss) const {
    if (!m_log) return;
    const double session = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    char buf[256];
    char loss[32] = "-", val[48] = "";
    if (std::isfinite(train_loss)) std::snprintf(loss, sizeof loss, "%.4f", train_loss);
    if (val_loss) std::snprintf(val, sizeof val, " | val %.4f", *val_loss);
    std::snprintf(buf, sizeof buf, "step %6lld/%d | loss %s%s | lr %.2e | %.0f tok/s | elapsed %s", (long long)m_step,
                  m_opt.steps, loss, val, double(m_sched.at(std::max<int64_t>(0, m_step - 1))), tokens_per_s,
                  format_duration(m_elapsed_prev + session).c_str());
    *m_log << buf;
    if (steps_per_s > 0) *m_log << " | ETA " << format_duration(double(m_opt.steps - m_step) / steps_per_s);
    *m_log << std::endl;
}

// --- the loop -----------------------------------------------------------------------------------------------------

void Trainer::run(int64_t stop_at) {
    using clock = std::chrono::steady_clock;
    m_start = clock::now();
    const auto elapsed = [this] {
        return m_elapsed_prev + std::chrono::duration<double>(clock::now() - m_start).count();
    };
    const int64_t end = (stop_at > 0 && stop_at < m_opt.steps) ? stop_at : m_opt.steps;
    if (m_step == 0 && m_history.empty()) {
        const double val = evaluate();
        append_log(EvalRecord{0, std::numeric_limits<double>::quiet_NaN(), val, m_sched.at(0), 0.0, elapsed()});
        progress_line(std::numeric_limits<double>::quiet_NaN(), 0.0, 0.0, &val);
    }
    double log_loss = 0, eval_loss = 0;
    int log_n = 0, eval_n = 0;
    auto window_start = clock::now();
    int64_t window_steps = 0, window_tokens = 0;
    double tokens_per_s = 0, steps_per_s = 0;
    while (m_step < end) {
        const StepStats st = train_step();
        window_tokens += st.tokens;
        const float lr = st.lr;
        const float loss = st.loss;
        ++window_steps;
        log_loss += loss;
        eval_loss += loss;
        ++log_n;
        ++eval_n;

        const bool do_eval = m_step % m_opt.eval_every == 0 || m_step == m_opt.steps;
        const bool do_log = m_step % m_opt.log_every == 0 || do_eval;
        if (do_log) {
            const double secs = std::chrono::duration<double>(clock::now() - window_start).count();
            tokens_per_s = secs > 0 ? double(window_tokens) / secs : 0.0;
            steps_per_s = secs > 0 ? double(window_steps) / secs : 0.0;
        }
        if (do_eval) {
            const double val = evaluate();
            append_log(EvalRecord{m_step, eval_loss / eval_n, val, lr, tokens_per_s, elapsed()});
            progress_line(log_loss / log_n, tokens_per_s, steps_per_s, &val);
        } else if (do_log) {
            progress_line(log_loss / log_n, tokens_per_s, steps_per_s, nullptr);
        }
        if (do_eval) eval_loss = 0, eval_n = 0;
        if (do_log) {
            log_loss = 0, log_n = 0;
            window_start = clock::now();
            window_steps = 0;
            window_tokens = 0;
        }
        if (m_opt.snapshot_every > 0 && (m_step % m_opt.snapshot_every == 0 || m_step == m_opt.steps)) {
            save_model_to(snapshot_dir(m_step));
            window_start = clock::now();
        }
        if (m_step % m_opt.ckpt_every == 0 || m_step == m_opt.steps) {
            m_elapsed_prev = elapsed();
            m_start = clock::now();
            save_checkpoint();
            save_model();
            window_start = clock::now();  // checkpoint I/O is not training throughput
        }
    }
    if (m_step == m_opt.steps && m_opt.average_last > 0) {
        auto kept = kept_checkpoints();
        if (kept.size() > size_t(m_opt.average_last)) kept.erase(kept.begin(), kept.end() - m_opt.average_last);
        save_safetensors(m_dir / "last.safetensors", m_model->params());
        save_model_dir(m_dir, Model(m_config, average_weights(kept)));
        if (m_log)
            *m_log << "model.safetensors: the mean of the last " << kept.size() << " checkpoints ("
                   << kept.front().filename().string() << " ... " << kept.back().filename().string()
                   << "); the last weights: last.safetensors\n";
    }
}

StepStats Trainer::train_step(bool detailed) {
    StepStats st;
    st.step = m_step;
    StepOptions so;
    so.label_smoothing = m_opt.label_smoothing;
    so.z_loss = m_opt.z_loss;
    so.attn_dropout = m_opt.attn_dropout;
    so.resid_dropout = m_opt.dropout;
    so.seed = m_opt.seed;
    so.step = uint64_t(m_step);
    StepLoss l;
    if (m_pairs) {
        m_pairs->train_batch(uint64_t(m_step), m_batch);
        l = m_model->forward(m_batch, so);
        // Tokens count real (not padding) source and target tokens.
        for (uint8_t p : m_batch.src_pad) st.tokens += p == 0;
        for (uint8_t p : m_batch.tgt_pad) st.tokens += p == 0;
    } else {
        const int B = m_opt.batch, T = m_opt.seq_len;
        m_data->sample_batch(m_opt.seed, uint64_t(m_step), B, m_inputs, m_targets, m_opt.repeat_fraction,
                             m_opt.repeat_period, m_opt.repeat_random);
        l = m_model->forward(m_inputs, m_targets, B, T, so);
        st.tokens = int64_t(B) * T;
    }
    if (!std::isfinite(l.loss))
        throw std::runtime_error("loss became " + std::to_string(l.loss) + " at step " + std::to_string(m_step) +
                                 " (try a lower --lr or a stronger --grad-clip)");
    st.loss = l.loss;
    st.nll = l.nll;
    // Before backward() the logits buffer holds the logits (afterwards dLoss/dlogits).
    const MatrixRM& logits = m_model->logits();
    if (detailed && logits.size() > 0) {
        st.max_logit = logits.maxCoeff();
        float max_lse = -std::numeric_limits<float>::infinity();
        for (Eigen::Index r = 0; r < logits.rows(); ++r) {
            const float m = logits.row(r).maxCoeff();
            const float lse = m + std::log((logits.row(r).array() - m).exp().sum());
            max_lse = std::max(max_lse, lse);
        }
        st.max_logsumexp = max_lse;
    }
    m_model->backward();
    const auto layer_index = [this](const std::string& name) -> int {
        // "dec.<l>." -> l; "enc.<l>." -> n_layers + l; else -1.
        const bool dec = name.rfind("dec.", 0) == 0, enc = name.rfind("enc.", 0) == 0;
        if (!dec && !enc) return -1;
        const size_t dot = name.find('.', 4);
        if (dot == std::string::npos || dot == 4) return -1;
        const std::string digits = name.substr(4, dot - 4);
        if (digits.find_first_not_of("0123456789") != std::string::npos) return -1;
        const int l = std::stoi(digits);
        return dec ? l : m_config.n_layers + l;
    };
    const bool enc_dec = m_config.arch == Arch::EncoderDecoder;
    std::vector<double> sq(detailed ? size_t(m_config.n_layers + (enc_dec ? m_config.n_enc_layers : 0)) : 0, 0.0);
    for (const auto& [name, g] : m_model->grads()) {
        if (!detailed) break;
        const int l = layer_index(name);
        if (l < 0 || size_t(l) >= sq.size()) continue;
        double s = 0;
        for (float v : g.data) s += double(v) * double(v);
        sq[size_t(l)] += s;
    }
    st.layer_grad_norms.resize(sq.size());
    for (size_t i = 0; i < sq.size(); ++i) st.layer_grad_norms[i] = std::sqrt(sq[i]);
    st.grad_norm = clip_grad_norm(m_model->grads(), m_opt.grad_clip);
    st.lr = m_sched.at(m_step);
    m_adam->step(m_model->params(), m_model->grads(), st.lr);
    ++m_step;
    return st;
}

std::filesystem::path Trainer::snapshot_dir(int64_t step) const {
    char name[32];
    std::snprintf(name, sizeof name, "step-%08lld", (long long)step);
    return m_dir / "snapshots" / name;
}

void Trainer::save_model_to(const std::filesystem::path& dir) const {
    std::filesystem::create_directories(dir);
    save_model_dir(dir, Model(m_config, m_model->params()));
}

// --- checkpoints --------------------------------------------------------------------------------------------------

namespace {
constexpr const char* kCheckpointFormat = "ts-train-checkpoint-1";
}

void Trainer::save_checkpoint() {
    WeightMap all;
    for (const auto& [name, t] : m_model->params()) all.emplace("param." + name, t);
    for (const auto& [name, t] : m_adam->exp_avg()) all.emplace("adam_m." + name, t);
    for (const auto& [name, t] : m_adam->exp_avg_sq()) all.emplace("adam_v." + name, t);
    const std::map<std::string, std::string> meta{
        {"format", kCheckpointFormat},
        {"step", std::to_string(m_step)},
        {"adam_t", std::to_string(m_adam->t())},
        {"elapsed_s", std::to_string(m_elapsed_prev)},
        {"seed", std::to_string(m_opt.seed)},
        {"data_fingerprint", std::to_string(data_fingerprint())},
        {"data_tokens", std::to_string(data_size())},
        {"config", nlohmann::json(m_config).dump()},
        {"options", nlohmann::json(m_opt).dump()},
    };
    std::filesystem::create_directories(m_dir / "checkpoint");
    save_safetensors(m_dir / "checkpoint" / "state.safetensors", all, meta);  // temp file + rename: atomic
    if (m_opt.keep_checkpoints > 0) {
        std::filesystem::create_directories(m_dir / "checkpoints");
        save_safetensors(m_dir / "checkpoints" / ("step-" + std::to_string(m_step) + ".safetensors"),
                         m_model->params(), {{"step", std::to_string(m_step)}});
        const auto kept = kept_checkpoints();
        for (size_t i = 0; i + size_t(m_opt.keep_checkpoints) < kept.size(); ++i) std::filesystem::remove(kept[i]);
    }
}

std::vector<std::filesystem::path> Trainer::kept_checkpoints() const {
    std::vector<std::pair<int64_t, std::filesystem::path>> found;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(m_dir / "checkpoints", ec)) {
        const std::optional<int64_t> step = step_of_name(e.path().filename().string(), ".safetensors");
        if (step && *step <= m_step) found.emplace_back(*step, e.path());  // a resumed run ignores its future's
    }
    std::sort(found.begin(), found.end());
    std::vector<std::filesystem::path> out;
    for (auto& [step, path] : found) out.push_back(std::move(path));
    return out;
}

std::optional<int64_t> step_of_name(std::string_view name, std::string_view suffix) {
    constexpr std::string_view prefix = "step-";
    if (name.size() <= prefix.size() + suffix.size() || name.substr(0, prefix.size()) != prefix ||
        name.substr(name.size() - suffix.size()) != suffix)
        return std::nullopt;
    const std::string_view digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (digits.size() > 15 || digits.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    return parse_int(digits);
}

WeightMap average_weights(const std::vector<std::filesystem::path>& files) {
    if (files.empty()) throw std::invalid_argument("no checkpoint to average");
    std::map<std::string, std::vector<double>> sum;
    WeightMap first;
    for (size_t f = 0; f < files.size(); ++f) {
        WeightMap w = load_safetensors(files[f]);
        for (const auto& [name, t] : w)
            if (t.data.size() != size_t(t.numel()))
                throw std::invalid_argument(files[f].string() + ": tensor " + name +
                                            " is not float32 (snapshots written by the trainer are)");
        if (f == 0) {
            for (const auto& [name, t] : w) sum[name].assign(t.data.begin(), t.data.end());
            first = std::move(w);
            continue;
        }
        if (w.size() != first.size())
            throw std::invalid_argument(files[f].string() + " holds " + std::to_string(w.size()) + " tensors, " +
                                        files[0].string() + " " + std::to_string(first.size()));
        for (const auto& [name, t] : w) {
            const auto it = first.find(name);
            if (it == first.end() || it->second.shape != t.shape)
                throw std::invalid_argument(files[f].string() + ": tensor " + name + " is not in " +
                                            files[0].string() + " with the same shape");
            std::vector<double>& acc = sum[name];
            for (size_t i = 0; i < acc.size(); ++i) acc[i] += t.data[i];
        }
    }
    for (auto& [name, t] : first) {
        const std::vector<double>& acc = sum[name];
        for (size_t i = 0; i < acc.size(); ++i) t.data[i] = float(acc[i] / double(files.size()));
    }
    return first;
}

void Trainer::save_model() const { save_model_dir(m_dir, Model(m_config, m_model->params())); }

bool Trainer::resume() {
    const auto path = m_dir / "checkpoint" / "state.safetensors";
    if (!std::filesystem::exists(path)) return false;
    std::map<std::string, std::string> meta;
    WeightMap all = load_safetensors(path, &meta);
    const auto need = [&](const char* k) -> const std::string& {
        const auto it = meta.find(k);
        if (it == meta.end()) throw std::runtime_error(path.string() + ": checkpoint metadata lacks '" + k + "'");
        return it->second;
    };
    if (need("format") != kCheckpointFormat)
        throw std::runtime_error(path.string() + ": checkpoint format '" + need("format") + "', expected '" +
                                 kCheckpointFormat + "'");
    // Metadata values are checked strictly: a corrupt checkpoint is refused with the key named, never half-read.
    const auto meta_json = [&](const char* k) {
        try {
            return parse_json(need(k), path.string() + ": metadata '" + k + "'");
        } catch (const std::runtime_error& e) {
            throw std::runtime_error(std::string(e.what()) + " (a corrupt checkpoint?)");
        }
    };
    const auto meta_count = [&](const char* k) {
        try {
            return parse_int_in(need(k), 0, int64_t(1) << 53, path.string() + ": metadata '" + k + "'");
        } catch (const std::invalid_argument& e) {
            throw std::runtime_error(e.what());
        }
    };
    if (meta_json("config") != nlohmann::json(m_config))
        throw std::runtime_error(path.string() + ": checkpoint was made for a different model config");
    if (need("seed") != std::to_string(m_opt.seed))
        throw std::runtime_error(path.string() + ": checkpoint seed " + need("seed") + " differs from --seed " +
                                 std::to_string(m_opt.seed));
    if (need("data_fingerprint") != std::to_string(data_fingerprint()))
        throw std::runtime_error(path.string() + ": checkpoint was made on different training data (" +
                                 need("data_tokens") + " tokens; now " + std::to_string(data_size()) + ")");
    TrainOptions saved;
    try {
        saved = meta_json("options").get<TrainOptions>();
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(path.string() + ": metadata 'options' cannot be read (" + e.what() + ")");
    }
    if (m_log && nlohmann::json(saved) != nlohmann::json(m_opt))
        *m_log << "resume: training options differ from the checkpoint's; continuing with the new ones\n";

    const auto restore = [&](const std::string& prefix, WeightMap& dst) {
        for (auto& [name, t] : dst) {
            const auto it = all.find(prefix + name);
            if (it == all.end() || it->second.shape != t.shape)
                throw std::runtime_error(path.string() + ": checkpoint lacks '" + prefix + name + "' of shape " +
                                         t.shape_str());
            t.data = std::move(it->second.data);
        }
    };
    restore("param.", m_model->params());
    restore("adam_m.", m_adam->exp_avg());
    restore("adam_v.", m_adam->exp_avg_sq());
    m_adam->set_t(meta_count("adam_t"));
    m_step = meta_count("step");
    try {
        m_elapsed_prev = parse_real_in(need("elapsed_s"), 0.0, 1e12, path.string() + ": metadata 'elapsed_s'");
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(e.what());
    }

    // Keep the log consistent with the checkpoint: drop records after its step.
    m_history.clear();
    const auto log_path = m_dir / "train_log.jsonl";
    std::vector<std::string> kept;
    if (std::ifstream in(log_path); in) {
        std::string line;
        while (std::getline(in, line)) {
            if (line.empty()) continue;
            nlohmann::json j;
            try {
                j = parse_json(line, log_path.string());
            } catch (const std::runtime_error&) {
                continue;  // a torn line of an interrupted run
            }
            if (!j.is_object() || !j.contains("step") || !j["step"].is_number_integer() ||
                j["step"].get<int64_t>() > m_step)
                continue;
            kept.push_back(line);
            const auto num = [&j](const char* k) {
                return j[k].is_number() ? j[k].get<double>() : std::numeric_limits<double>::quiet_NaN();
            };
            m_history.push_back(EvalRecord{j["step"].get<int64_t>(), num("train_loss"), num("val_loss"), num("lr"),
                                           num("tokens_per_s"), num("elapsed_s")});
        }
    }
    std::string text;
    for (const auto& l : kept) text += l + "\n";
    write_file_atomic(log_path, text);  // core/util/file.h
    if (m_log) *m_log << "resumed from " << path.string() << " at step " << m_step << "\n";
    return true;
}

}  // namespace ts::train
