// Lesson measures: the model's numbers (and the panels' formulas) a lesson question is checked against, by name,
// each computed from the UI state and the current Snapshot the same way the figures compute what they show.
#include "app/lessons/lesson_check.h"

#include "app/figures/figures.h"
#include "app/session/interp_jobs.h"
#include "app/session/training_lab.h"
#include "app/i18n/tr.h"
#include "app/plot/ticks.h"
#include "core/interp/attention_flow.h"
#include "core/interp/head_detectors.h"
#include "core/interp/input_attribution.h"
#include "core/interp/neurons.h"
#include "core/kernels/attention_rows.h"
#include "core/kernels/ops.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <span>
#include <stdexcept>

namespace ts::lessons {

using namespace ts::figures;  // a measure reads the numbers the step's figure shows, from the same builders

namespace {

using Params = nlohmann::json;

double num_param(const Params& p, const char* key, double def) {
    auto it = p.find(key);
    if (it == p.end()) return def;
    if (it->is_number()) return it->get<double>();
    if (it->is_boolean()) return it->get<bool>() ? 1.0 : 0.0;
    throw std::runtime_error(std::string("parameter '") + key + "' must be a number");
}
/// A whole-number parameter within [lo, hi]: a lesson cannot ask for a 2e7-row table or 2e9 steps to read one value.
int int_param(const Params& p, const char* key, int def, int lo, int hi) {
    const double v = num_param(p, key, def);
    if (!(v >= lo && v <= hi) || v != std::floor(v))
        throw std::runtime_error(std::string("parameter '") + key + "' must be a whole number from " + std::to_string(lo) +
                                 " to " + std::to_string(hi));
    return int(v);
}
std::string str_param(const Params& p, const char* key, const std::string& def) {
    auto it = p.find(key);
    if (it == p.end()) return def;
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number_integer()) return std::to_string(it->get<long long>());
    throw std::runtime_error(std::string("parameter '") + key + "' must be a string");
}

const Snapshot& need_snap(const Snapshot* s) {
    if (!s || !s->trace) throw std::runtime_error(tr("waiting for the model's forward pass"));
    return *s;
}
const Model& need_model(const Snapshot* s, const Model* m) {
    if (s && s->model) return *s->model;
    if (m) return *m;
    throw std::runtime_error(tr("no model loaded"));
}

/// Layer from params["layer"] (negative counts from the end), else the state's layer; checked against n.
int pick_layer(const Params& p, const UiState& st, int n_layers) {
    if (!p.contains("layer")) return std::clamp(st.layer, 0, std::max(0, n_layers - 1));  // as the figures clamp it
    int l = int_param(p, "layer", 0, -(1 << 14), 1 << 14);
    if (l < 0) l += n_layers;
    if (l < 0 || l >= n_layers)
        throw std::runtime_error(trf("layer %d does not exist (the model has %d)", l, n_layers));
    return l;
}

const Tensor& need_tensor(const Snapshot& s, const std::string& name) {
    const Tensor* t = s.find(name);
    if (!t) throw std::runtime_error(trf("'%s' was not recorded", name.c_str()));
    return *t;
}

SoftmaxLab lab_of(const UiState& st, const Snapshot* snap) {
    SoftmaxLab lab = softmax_lab(st, snap);
    if (lab.logits.empty() || lab.probs.empty())
        throw std::runtime_error(lab.error.empty() ? std::string(tr("no attention scores recorded yet")) : lab.error);
    return lab;
}

/// One head's attention probabilities (rows × cols) of the state's attention source.
std::vector<float> head_probs(const Snapshot& s, const UiState& st, const Params& p, int* rows, int* cols) {
    const int L = attention_layers(s, st.attn_source);
    const int layer = pick_layer(p, st, L);
    const std::string name = attention_prefix(s, st.attn_source, layer) + "probs";
    if (!s.trace || !s.trace->contains(name)) throw std::runtime_error(trf("'%s' was not recorded", name.c_str()));
    const int H = s.model ? s.model->config().n_heads : 0;
    if (st.head < 0 || st.head >= H)
        throw std::runtime_error(trf("head %d does not exist (%d heads)", st.head, H));
    return trace_head_rows(*s.trace, name, st.head, rows, cols);  // this head only (attention on demand)
}

/// Mean over the query rows t ≥ `first` of f(row t, t): one head's attention probabilities (the state's head and
/// attention source; the layer from params or the state). The attention measures below are this with their own f.
double mean_over_rows(const Params& p, const UiState& st, const Snapshot* s, int first,
                      const std::function<double(std::span<const float>, int)>& f) {
    const Snapshot& sn = need_snap(s);
    int R = 0, C = 0;
    const std::vector<float> a = head_probs(sn, st, p, &R, &C);
    if (R <= first || C < 1)
        throw std::runtime_error(first > 0 ? tr("the text needs at least two tokens") : tr("no attention weights"));
    double sum = 0;
    for (int t = first; t < R; ++t) sum += f(std::span<const float>(a.data() + size_t(t) * size_t(C), size_t(C)), t);
    return sum / double(R - first);
}

const NormCurves& prepost_curves() {
    static const NormCurves c = random_init_curves();
    return c;
}

int kv_heads_param(const Params& p, const ModelConfig& c) {
    const std::string v = str_param(p, "kv_heads", "model");
    if (v == "model") return c.n_kv_heads;
    if (v == "mha") return c.n_heads;
    if (v == "mqa") return 1;
    const int k = std::atoi(v.c_str());
    if (k <= 0) throw std::runtime_error("kv_heads must be model, mha, mqa or a positive number");
    return k;
}

/// log Σ exp(z) of the output logits at params["position"] (−1 = last), computed stably.
double logsumexp_at(const Params& p, const Snapshot* s) {
    const Snapshot& sn = need_snap(s);
    const int T = sn.logits_positions();
    int pos = int_param(p, "position", -1, -(1 << 24), 1 << 24);
    if (pos < 0) pos += T;
    const std::span<const float> row = sn.logits_row(pos);  // empty when out of range or no head
    if (row.empty()) throw std::runtime_error(tr("no logits at that position"));
    return double(logsumexp_rows(Eigen::Map<const MatrixRM>(row.data(), 1, Eigen::Index(row.size())))(0));
}

/// Input attribution of a translation as the input-attribution view shows it for a typed target: row t explains
/// the decoder's token t + 1 from its inputs 0..t (the state's method, steps, span and baseline); beside it, per row,
/// Spearman's ρ of |source attribution| with the cross-attention averaged over decoder layers and heads.
struct TranslationAttribution {
    MatrixRM source;         ///< (T − 1, S)
    std::vector<float> rho;  ///< (T − 1)
};

/// Cached per snapshot and options: a question and its claims ask for several rows of the same attribution.
TranslationAttribution translation_attribution(const UiState& st, const Snapshot& sn) {
    const Model& m = *sn.model;
    const ModelConfig& c = m.config();
    if (c.arch != Arch::EncoderDecoder || !sn.source_tokens || !sn.tokens)
        throw std::runtime_error(tr("this measure needs the translation model (an encoder–decoder)"));
    const std::vector<int>& src = sn.source_tokens->ids;
    const std::vector<int>& dec = sn.tokens->ids;
    if (src.empty() || dec.size() < 2) throw std::runtime_error(tr("the text needs at least two tokens"));
    const interp::AttributionOptions o = studio::attribution_options(st);
    static std::mutex mu;
    static std::string cached_key;
    static TranslationAttribution cached;
    const std::string key = std::to_string(uintptr_t(&m)) + '|' + std::to_string(sn.id) + '|' +
        snapshot_fingerprint(&sn) + '|' + st.attr_method + '|' + std::to_string(o.steps) + '|' +
        std::to_string(o.span) + '|' + st.attr_baseline;
    {
        const std::lock_guard<std::mutex> lock(mu);
        if (key == cached_key) return cached;
    }
    const std::vector<int> dec_in(dec.begin(), dec.end() - 1), out(dec.begin() + 1, dec.end());
    std::unique_ptr<interp::GradientModel> grad;
    if (o.method != interp::AttributionMethod::Occlusion) grad = std::make_unique<interp::GradientModel>(m);
    TranslationAttribution r;
    r.source = interp::attribute_translation(m, grad.get(), src, dec_in, out, o).source;
    const MatrixRM attn = interp::mean_of(interp::head_mean_attention(*sn.trace, "dec", c.n_layers, "cross_attn"));
    r.rho = interp::attention_attribution_rank_corr(r.source, attn.topRows(Eigen::Index(dec_in.size())));
    const std::lock_guard<std::mutex> lock(mu);
    cached_key = key;
    cached = r;
    return r;
}

/// params["row"] (negative counts from the end) checked against `rows` generated tokens.
int pick_row(const Params& p, int rows) {
    int r = int_param(p, "row", 0, -(1 << 24), 1 << 24);
    if (r < 0) r += rows;
    if (r < 0 || r >= rows) throw std::runtime_error(trf("choose a generated token from row 0 to %d", rows - 1));
    return r;
}

/// The training-lab run a measure reads: params["run"] "a" (UiState::lab_run, default) or "b" (lab_compare), a
/// folder or a bundled recorded run's name (resolve_lab_run). Read once per folder and log time.
std::shared_ptr<const LabHistory> lab_history_of(const Params& p, const UiState& st) {
    const std::string which = str_param(p, "run", "a");
    if (which != "a" && which != "b") throw std::runtime_error("parameter 'run' must be \"a\" or \"b\"");
    const std::string& name = which == "a" ? st.lab_run : st.lab_compare;
    if (name.empty()) throw std::runtime_error(tr("no training-lab run is shown"));
    const std::filesystem::path dir = resolve_lab_run(name);
    std::error_code ec;
    const auto mtime = std::filesystem::last_write_time(dir / "lab_log.jsonl", ec);
    static std::mutex mu;
    static std::map<std::string, std::pair<std::filesystem::file_time_type, std::shared_ptr<const LabHistory>>> cache;
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(dir.string());
    if (it != cache.end() && !ec && it->second.first == mtime) return it->second.second;
    auto h = std::make_shared<const LabHistory>(load_lab_history(dir));
    cache[dir.string()] = {mtime, h};
    return h;
}

/// The steps of a lab run within params' [from, to] (default: every step); an error when there are none.
std::vector<const train::StepStats*> steps_in_range(const Params& p, const LabHistory& h) {
    const int64_t from = int_param(p, "from", 0, 0, 10'000'000), to = int_param(p, "to", 10'000'000, 0, 10'000'000);
    std::vector<const train::StepStats*> out;
    for (const auto& s : h.steps)
        if (s.step >= from && s.step <= to) out.push_back(&s);
    if (out.empty()) throw std::runtime_error(tr("the run has no steps in that range"));
    return out;
}

/// A per-step quantity of a lab run (StepStats), by name; `layer` for layer_grad_norm.
double step_quantity(const train::StepStats& s, const std::string& q, int layer) {
    if (q == "layer_grad_norm") {
        if (layer < 0 || size_t(layer) >= s.layer_grad_norms.size())
            throw std::runtime_error(
                trf("layer %d does not exist (the model has %d)", layer, int(s.layer_grad_norms.size())));
        return s.layer_grad_norms[size_t(layer)];
    }
    if (q == "loss") return s.loss;
    if (q == "grad_norm") return s.grad_norm;
    if (q == "max_logit") return s.max_logit;
    if (q == "max_logsumexp") return s.max_logsumexp;
    if (q == "lr") return s.lr;
    throw std::runtime_error(
        "parameter 'quantity' must be loss, grad_norm, layer_grad_norm, max_logit, max_logsumexp or lr, got '" + q +
        "'");
}

using MeasureFn = double (*)(const Params&, const UiState&, const Snapshot*, const Model*);

struct MeasureDef {
    MeasureInfo info;
    MeasureFn fn;
};

const std::vector<MeasureDef>& measure_defs() {
    static const std::vector<MeasureDef> defs = {
        {{"softmax_entropy", false, {}, "entropy (nats) of the Softmax lab's row at its temperature and mask"},
         [](const Params&, const UiState& st, const Snapshot* s, const Model*) {
             return double(lab_of(st, s).entropy);
         }},
        {{"softmax_max_prob", false, {}, "largest probability of the Softmax lab's row"},
         [](const Params&, const UiState& st, const Snapshot* s, const Model*) { return double(lab_of(st, s).pmax); }},
        {{"softmax_future_mass", false, {}, "probability the Softmax lab's row puts on keys after its query"},
         [](const Params&, const UiState& st, const Snapshot* s, const Model*) {
             const SoftmaxLab lab = lab_of(st, s);
             double m = 0;
             for (size_t k = size_t(lab.qpos) + 1; k < lab.probs.size(); ++k) m += lab.probs[k];
             return m;
         }},
        {{"softmax_visible_keys", false, {}, "keys the Softmax lab's row may attend under its mask"},
         [](const Params&, const UiState& st, const Snapshot* s, const Model*) {
             return double(lab_of(st, s).n_visible);
         }},
        {{"prev_token_attention",
          true,
          {"layer"},
          "mean attention weight from each position to the one before it (the state's head; layer from params or the "
          "state)"},
         [](const Params& p, const UiState& st, const Snapshot* s, const Model*) {
             return mean_over_rows(p, st, s, 1, [](std::span<const float> row, int t) {
                 return size_t(t - 1) < row.size() ? double(row[size_t(t - 1)]) : 0.0;
             });
         }},
        {{"attention_sharpness",
          true,
          {"layer"},
          "mean over query rows of the largest attention weight (the state's head and attention source)"},
         [](const Params& p, const UiState& st, const Snapshot* s, const Model*) {
             return mean_over_rows(p, st, s, 0, [](std::span<const float> row, int) {
                 return double(*std::max_element(row.begin(), row.end()));
             });
         }},
        {{"attention_row_entropy",
          true,
          {"layer"},
          "mean over query rows of the entropy (nats) of the state's head (attention source of the state)"},
         [](const Params& p, const UiState& st, const Snapshot* s, const Model*) {
             return mean_over_rows(p, st, s, 0, [](std::span<const float> row, int) { return double(entropy_nats(row)); });
         }},
        {{"first_token_attention",
          true,
          {"layer"},
          "mean attention weight on the first key over the query rows after the first (an attention sink; the state's "
          "head and attention source)"},
         [](const Params& p, const UiState& st, const Snapshot* s, const Model*) {
             return mean_over_rows(p, st, s, 1, [](std::span<const float> row, int) { return double(row[0]); });
         }},
        {{"head_detector",
          true,
          {"layer", "kind"},
          "head-detector score of the state's head at a layer on the text: kind previous-token, duplicate-token, "
          "induction or first-token (core/interp/head_detectors.h, TransformerLens detect_head)"},
         [](const Params& p, const UiState& st, const Snapshot* s, const Model*) {
             const Snapshot& sn = need_snap(s);
             int R = 0, C = 0;
             const std::vector<float> a = head_probs(sn, st, p, &R, &C);
             if (R != C || !sn.tokens || int(sn.tokens->ids.size()) != R)
                 throw std::runtime_error(tr("the head detectors need the self-attention of the text"));
             const std::string name = str_param(p, "kind", "induction");
             const std::optional<interp::HeadKind> k = interp::parse_head_kind(name);
             if (!k)
                 throw std::runtime_error(
                     trf("unknown head kind '%s' (previous-token, duplicate-token, induction, "
                         "first-token)",
                         name.c_str()));
             return double(
                 interp::head_score(ConstMapRM(a.data(), R, C), *k, interp::detection_pattern(*k, sn.tokens->ids)));
         }},
        {{"future_attention",
          true,
          {"layer"},
          "mean over query rows of the attention weight on keys after the query (0 under a causal mask; the state's "
          "head and attention source)"},
         [](const Params& p, const UiState& st, const Snapshot* s, const Model*) {
             return mean_over_rows(p, st, s, 0, [](std::span<const float> row, int t) {
                 double m = 0;
                 for (size_t j = size_t(t) + 1; j < row.size(); ++j) m += row[j];
                 return m;
             });
         }},
        {{"max_abs_score",
          true,
          {"layer"},
          "largest |q·k/√d_head| among the attended (unmasked) scores of the state's head at a layer"},
         [](const Params& p, const UiState& st, const Snapshot* s, const Model*) {
             const Snapshot& sn = need_snap(s);
             const int L = attention_layers(sn, st.attn_source);
             const int layer = pick_layer(p, st, L);
             const std::string pre = attention_prefix(sn, st.attn_source, layer);
             const Tensor& masked_t = need_tensor(sn, pre + "scores_masked");
             const Tensor& scaled_t = need_tensor(sn, pre + "scores_scaled");
             if (st.head < 0 || st.head >= int(masked_t.dim(0))) throw std::runtime_error(tr("no such head"));
             int R = 0, C = 0;
             const std::vector<float> masked = tensor_head_slice(&masked_t, st.head, &R, &C);
             const std::vector<float> scaled = tensor_head_slice(&scaled_t, st.head, &R, &C);
             double m = 0;
             for (size_t i = 0; i < masked.size() && i < scaled.size(); ++i)
                 if (std::isfinite(masked[i])) m = std::max(m, double(std::fabs(scaled[i])));
             return m;
         }},
        {{"ffn_negative_fraction",
          true,
          {"layer"},
          "fraction of the FFN's (gate) pre-activations below zero at a layer (params or the state's layer)"},
         [](const Params& p, const UiState& st, const Snapshot* s, const Model*) {
             const Snapshot& sn = need_snap(s);
             const int layer = pick_layer(p, st, sn.n_layers());
             const Tensor& t = need_tensor(sn, sn.stack() + "." + std::to_string(layer) + ".ffn.pre_act");
             if (t.data.empty()) throw std::runtime_error(tr("no FFN pre-activations"));
             size_t neg = 0;
             for (float v : t.data) neg += v < 0 ? 1 : 0;
             return double(neg) / double(t.data.size());
         }},
        {{"neuron_activation",
          true,
          {"layer", "position"},
          "activation of the state's FFN neuron (UiState::neuron) at a layer and position (−1 = last; default: the "
          "state's query) of the text (the encoder's on an encoder–decoder; core/interp/neurons.h)"},
         [](const Params& p, const UiState& st, const Snapshot* s, const Model*) {
             const Snapshot& sn = need_snap(s);
             const ModelConfig& c = sn.model->config();
             const int layers = c.arch == Arch::EncoderDecoder ? c.n_enc_layers : c.n_layers;
             const int layer = pick_layer(p, st, layers);
             if (st.neuron < 0 || st.neuron >= c.d_ff)
                 throw std::runtime_error(trf("choose a neuron from 0 to %d", c.d_ff - 1));
             const Tensor& a = interp::neuron_activations(*sn.trace, interp::neuron_stack(c), layer, c.d_ff);
             int pos = p.contains("position") ? int_param(p, "position", -1, -(1 << 24), 1 << 24)
                                              : figures::resolve_query(st, int(a.rows()));
             if (pos < 0) pos += int(a.rows());
             if (pos < 0 || pos >= a.rows()) throw std::runtime_error(tr("no such position"));
             return double(a.mat()(pos, st.neuron));
         }},
        {{"residual_norm",
          true,
          {"layer", "part"},
          "mean L2 norm over tokens of the residual stream after a layer's attention (part \"attn\") or FFN (\"ffn\")"},
         [](const Params& p, const UiState& st, const Snapshot* s, const Model*) {
             const Snapshot& sn = need_snap(s);
             const int layer = pick_layer(p, st, sn.n_layers());
             const std::string part = str_param(p, "part", "ffn");
             const Tensor& t = need_tensor(sn, sn.stack() + "." + std::to_string(layer) + (part == "attn" ? ".resid_attn" : ".resid_ffn"));
             return double(t.mat().rowwise().norm().mean());
         }},
        {{"logsumexp", true, {"position"}, "log Σ exp(z) of the output logits at a position (−1 = last): log Z"},
         [](const Params& p, const UiState&, const Snapshot* s, const Model*) { return logsumexp_at(p, s); }},
        {{"z_loss",
          true,
          {"position", "coef"},
          "z-loss coef · (log Z)² of the output logits at a position (PaLM: coef 1e-4)"},
         [](const Params& p, const UiState&, const Snapshot* s, const Model*) {
             const double lz = logsumexp_at(p, s);
             return num_param(p, "coef", 1e-4) * lz * lz;
         }},
        {{"attention_attribution_rho",
          true,
          {"row"},
          "Spearman's rho of |input attribution| over the source tokens with the cross-attention (mean over decoder "
          "layers and heads) for generated token `row` (0 = the first; the input-attribution view's rows) of the "
          "translation model's typed target; attribution by the state's method, steps and baseline (Jain & Wallace "
          "2019)"},
         [](const Params& p, const UiState& st, const Snapshot* s, const Model*) {
             const TranslationAttribution a = translation_attribution(st, need_snap(s));
             return double(a.rho[size_t(pick_row(p, int(a.rho.size())))]);
         }},
        {{"source_attribution",
          true,
          {"row", "source"},
          "input attribution of source token `source` (negative counts from the end) for generated token `row` of "
          "the translation model's typed target (the input-attribution view's cell; occlusion: the nats lost when the "
          "token is hidden)"},
         [](const Params& p, const UiState& st, const Snapshot* s, const Model*) {
             const TranslationAttribution a = translation_attribution(st, need_snap(s));
             const int row = pick_row(p, int(a.source.rows()));
             const int S = int(a.source.cols());
             int j = int_param(p, "source", 0, -(1 << 24), 1 << 24);
             if (j < 0) j += S;
             if (j < 0 || j >= S) throw std::runtime_error(trf("choose a source token from 0 to %d", S - 1));
             return double(a.source(row, j));
         }},
        {{"token_count", true, {}, "tokens of the text (the encoder's input on an encoder–decoder model)"},
         [](const Params&, const UiState&, const Snapshot* s, const Model*) {
             const Snapshot& sn = need_snap(s);
             const auto& t = sn.source_tokens ? sn.source_tokens : sn.tokens;
             if (!t) throw std::runtime_error(tr("no tokens yet"));
             return double(t->ids.size());
         }},
        {{"target_tokens",
          true,
          {},
          "tokens the decoder reads (the teacher-forced target on an encoder–decoder model)"},
         [](const Params&, const UiState&, const Snapshot* s, const Model*) {
             const Snapshot& sn = need_snap(s);
             if (!sn.tokens) throw std::runtime_error(tr("no tokens yet"));
             return double(sn.tokens->ids.size());
         }},
        {{"target_loss",
          true,
          {"eps"},
          "mean cross-entropy (nats) of each next token of the decoder's input (teacher forcing), with label smoothing "
          "eps as PyTorch's CrossEntropyLoss(label_smoothing=eps)"},
         [](const Params& p, const UiState&, const Snapshot* s, const Model*) {
             const Snapshot& sn = need_snap(s);
             const double eps = num_param(p, "eps", 0.0);
             if (!(eps >= 0 && eps <= 1)) throw std::runtime_error("eps must be in [0, 1]");
             if (!sn.tokens || sn.tokens->ids.size() < 2)
                 throw std::runtime_error(tr("the text needs at least two tokens"));
             const int T = std::min(sn.logits_positions(), int(sn.tokens->ids.size()));
             if (T < 2) throw std::runtime_error(tr("no logits at that position"));
             double sum = 0;
             for (int t = 0; t + 1 < T; ++t)
                 sum += smoothed_cross_entropy(sn.logits_row(t), sn.tokens->ids[size_t(t) + 1], eps);
             return sum / double(T - 1);
         }},
        {{"param_count",
          false,
          {"part"},
          "parameters of the whole model, or of one kind summed over its layers: part embedding (token and position "
          "tables), attention (self and cross), ffn, norm, lm_head (untied), total"},
         [](const Params& p, const UiState&, const Snapshot* s, const Model* m) {
             const ParameterCounts pc = parameter_counts(need_model(s, m));
             const std::string part = str_param(p, "part", "total");
             if (part == "total") return pc.total;
             if (part == "embedding")
                 return pc.get("token embedding") + pc.get("position embedding") + pc.get("token-type embedding");
             if (part == "attention") return pc.get("attention") + pc.get("cross-attention");
             if (part == "ffn") return pc.get("FFN");
             if (part == "norm") return pc.get("norms");
             if (part == "lm_head") return pc.get("LM head");
             throw std::runtime_error("part must be embedding, attention, ffn, norm, lm_head or total");
         }},
        {{"config",
          false,
          {"field"},
          "a number of the model's configuration: d_model, n_heads, n_kv_heads, d_head, d_ff, n_layers, vocab_size, "
          "queries_per_kv, d_ff_ratio, embed_scale (√d_model when embeddings are scaled, else 1), n_enc_layers"},
         [](const Params& p, const UiState&, const Snapshot* s, const Model* m) {
             const ModelConfig& c = need_model(s, m).config();
             const std::string f = str_param(p, "field", "d_model");
             if (f == "d_model") return double(c.d_model);
             if (f == "n_heads") return double(c.n_heads);
             if (f == "n_kv_heads") return double(c.n_kv_heads);
             if (f == "d_head") return double(c.d_head());
             if (f == "d_ff") return double(c.d_ff);
             if (f == "n_layers") return double(c.n_layers);
             if (f == "vocab_size") return double(c.vocab_size);
             if (f == "queries_per_kv") return double(c.n_heads) / double(c.n_kv_heads);
             if (f == "d_ff_ratio") return double(c.d_ff) / double(c.d_model);
             if (f == "embed_scale") return c.scale_embeddings ? std::sqrt(double(c.d_model)) : 1.0;
             if (f == "n_enc_layers") return double(c.n_enc_layers);
             throw std::runtime_error("unknown config field '" + f + "'");
         }},
        {{"attention_params", false, {}, "weights of one attention layer: W_q, W_k, W_v, W_o and their biases"},
         [](const Params&, const UiState&, const Snapshot* s, const Model* m) {
             const ModelConfig& c = need_model(s, m).config();
             const double D = c.d_head(), H = c.n_heads, K = c.n_kv_heads, dm = c.d_model;
             double n = dm * H * D + 2 * dm * K * D + H * D * dm;
             if (c.attn_qkv_bias) n += H * D + 2 * K * D;
             if (c.attn_out_bias) n += dm;
             return n;
         }},
        {{"ffn_params", false, {}, "weights of one FFN: up (and gate) and down projections with their biases"},
         [](const Params&, const UiState&, const Snapshot* s, const Model* m) {
             const ModelConfig& c = need_model(s, m).config();
             const Model& mod = need_model(s, m);
             const std::string pre = c.arch == Arch::EncoderOnly ? "enc.0.ffn." : "dec.0.ffn.";
             double n = 0;
             for (const char* w : {"w_up", "w_gate", "w_down", "b_up", "b_down"}) {
                 auto it = mod.stored_weights().find(pre + w);
                 if (it != mod.stored_weights().end()) n += double(Tensor::count(it->second.shape));
             }
             if (n == 0) throw std::runtime_error(tr("no FFN weights found"));
             return n;
         }},
        {{"kv_cache_bytes",
          false,
          {"context", "kv_heads"},
          "KV-cache bytes in fp16: 2 · n_layers · kv_heads · d_head · context · 2 (context from params or the state's "
          "kv_context; kv_heads: model, mha, mqa or a number)"},
         [](const Params& p, const UiState& st, const Snapshot* s, const Model* m) {
             const ModelConfig& c = need_model(s, m).config();
             const double ctx = num_param(p, "context", st.kv_context);
             return 2.0 * c.n_layers * kv_heads_param(p, c) * c.d_head() * ctx * 2.0;
         }},
        {{"norm_output",
          false,
          {"norm", "stat", "rows"},
          "mean, std or rms of LayerNorm / RMSNorm / BatchNorm applied to the Normalization panel's synthetic batch "
          "(rows \"all\", or \"others\": every row but the shifted row 0)"},
         [](const Params& p, const UiState& st, const Snapshot*, const Model*) {
             const MatrixRM x = normalization_synthetic_batch(st);
             const std::string norm = str_param(p, "norm", "layernorm"), stat = str_param(p, "stat", "std");
             const int D = int(x.cols());
             std::vector<float> gamma(size_t(D), st.norm_gamma), beta(size_t(D), st.norm_beta);
             MatrixRM y;
             if (norm == "layernorm") y = layer_norm(x, gamma, beta, st.norm_eps);
             else if (norm == "rmsnorm") y = rms_norm(x, gamma, st.norm_eps);
             else if (norm == "batchnorm") {
                 BatchNormState bs;
                 bs.running_mean = RowVectorF::Zero(D);
                 bs.running_var = RowVectorF::Ones(D);
                 y = batch_norm(x, gamma, beta, st.norm_eps, bs, true);
             } else if (norm == "none") y = x;
             else throw std::runtime_error("norm must be layernorm, rmsnorm, batchnorm or none");
             const std::string rows = str_param(p, "rows", "all");
             if (rows == "others") y = MatrixRM(y.bottomRows(y.rows() - 1));
             else if (rows != "all") throw std::runtime_error("rows must be all or others");
             const double n = double(y.size()), mean = double(y.sum()) / n;
             if (stat == "mean") return mean;
             if (stat == "rms") return std::sqrt(double(y.array().square().sum()) / n);
             if (stat == "std") return std::sqrt(double((y.array() - float(mean)).square().sum()) / n);
             throw std::runtime_error("stat must be mean, std or rms");
         }},
        {{"prepost_norm",
          false,
          {"placement", "sublayer"},
          "mean residual norm of the Residual panel's random 16-layer pre- or post-norm model after a sub-layer "
          "(index into embed, 0 attn, 0 ffn, …; −1 = last)"},
         [](const Params& p, const UiState&, const Snapshot*, const Model*) {
             const NormCurves& c = prepost_curves();
             if (!c.error.empty()) throw std::runtime_error(c.error);
             const std::vector<double>& v = str_param(p, "placement", "pre") == "post" ? c.post : c.pre;
             int i = int_param(p, "sublayer", -1, -(1 << 16), 1 << 16);
             if (i < 0) i += int(v.size());
             if (i < 0 || i >= int(v.size())) throw std::runtime_error(tr("no such sub-layer"));
             return v[size_t(i)];
         }},
        {{"sinusoidal_pe",
          false,
          {"pos", "dim"},
          "PE(pos, dim) of the sinusoidal table at the Positions panel's d_model and base"},
         [](const Params& p, const UiState& st, const Snapshot*, const Model*) {
             // The Positions panel shows at most 4096 positions; the table is built up to `pos` only.
             const int pos = int_param(p, "pos", 1, 0, 8191), dim = int_param(p, "dim", 0, 0, 1 << 16);
             if (pos < 0 || dim < 0 || dim >= st.pe_d_model) throw std::runtime_error(tr("pos/dim outside the table"));
             const MatrixRM t = sinusoidal_table(pos + 1, st.pe_d_model, st.pe_base);
             return double(t(pos, dim));
         }},
        {{"sinusoidal_dot",
          false,
          {"pos", "offset"},
          "PE(pos) · PE(pos + offset) of the sinusoidal table at the Positions panel's d_model and base"},
         [](const Params& p, const UiState& st, const Snapshot*, const Model*) {
             const int pos = int_param(p, "pos", 0, 0, 8191), off = int_param(p, "offset", 1, -8191, 8191);
             if (pos + off < 0 || pos + off > 8191) throw std::runtime_error(tr("pos/dim outside the table"));
             const MatrixRM t = sinusoidal_table(std::max(pos, pos + off) + 1, st.pe_d_model, st.pe_base);
             return double(t.row(pos).dot(t.row(pos + off)));
         }},
        {{"rope_wavelength",
          false,
          {"pair"},
          "positions RoPE pair i takes to turn once: 2π · θ^(2i/d) at the Positions panel's d_model and rope_theta "
          "(pair −1 = the slowest)"},
         [](const Params& p, const UiState& st, const Snapshot*, const Model*) {
             const int half = st.pe_d_model / 2;
             int i = int_param(p, "pair", 0, -(1 << 16), 1 << 16);
             if (i < 0) i += half;
             if (i < 0 || i >= half) throw std::runtime_error(tr("no such RoPE pair"));
             return 2.0 * M_PI * std::pow(double(st.rope_theta), 2.0 * i / double(st.pe_d_model));
         }},
        {{"activation",
          false,
          {"fn", "x"},
          "an activation at x with the Activations panel's α and β: tanh, sigmoid, relu, leaky_relu, gelu, gelu_tanh, "
          "swish, glu, swiglu, geglu"},
         [](const Params& p, const UiState& st, const Snapshot*, const Model*) {
             static const char* keys[] = {"tanh", "sigmoid", "relu", "leaky_relu", "gelu", "gelu_tanh", "swish", "glu", "swiglu", "geglu"};
             const std::string fn = str_param(p, "fn", "relu");
             const auto defs = activation_defs(st.act_leaky_alpha, st.act_swish_beta);
             for (size_t i = 0; i < 10; ++i)
                 if (fn == keys[i]) return double(defs[i].f(float(num_param(p, "x", 0))));
             throw std::runtime_error("unknown activation '" + fn + "'");
         }},
        {{"lr_schedule",
          false,
          {"step"},
          "learning rate at a step of the warm-up schedule (Vaswani et al. 2017) at the Training panel's d_model and "
          "warm-up"},
         [](const Params& p, const UiState& st, const Snapshot*, const Model*) {
             const int step = int_param(p, "step", 1, 1, 100'000'000);
             return noam_lr(step, st.train_d_model, st.train_warmup);
         }},
        {{"dropout_scale", false, {"p"}, "inverted dropout's factor on kept activations during training: 1/(1 − p)"},
         [](const Params& p, const UiState&, const Snapshot*, const Model*) {
             const double pr = num_param(p, "p", 0.1);
             if (!(pr >= 0 && pr < 1)) throw std::runtime_error("p must be in [0, 1)");
             return 1.0 / (1.0 - pr);
         }},
        {{"weight_decay_step",
          false,
          {"w", "lr", "lambda", "grad", "steps"},
          "a weight after `steps` SGD steps with L2 weight decay: w ← w − lr · (grad + λ · w)"},
         [](const Params& p, const UiState&, const Snapshot*, const Model*) {
             double w = num_param(p, "w", 1.0);
             const double lr = num_param(p, "lr", 0.01), lam = num_param(p, "lambda", 0.1), g = num_param(p, "grad", 0.0);
             const int n = int_param(p, "steps", 1, 0, 1'000'000);
             return weight_after_decay(w, lr, lam, g, n);
         }},
        {{"lab_first_head_step",
          false,
          {"run", "score", "threshold"},
          "the first probed step of a training-lab run (run a / b) at which some head's score (score: induction, "
          "the default, or prev_token) reaches threshold (default 0.5); an error when none does"},
         [](const Params& p, const UiState& st, const Snapshot*, const Model*) {
             const auto h = lab_history_of(p, st);
             const std::string score = str_param(p, "score", "induction");
             if (score != "induction" && score != "prev_token")
                 throw std::runtime_error("parameter 'score' must be induction or prev_token");
             const double threshold = num_param(p, "threshold", 0.5);
             for (const auto& pr : h->probes) {
                 const MatrixRM& m = score == "induction" ? pr.induction : pr.prev_token;
                 if (m.size() > 0 && m.maxCoeff() >= threshold) return double(pr.step);
             }
             throw std::runtime_error(trf("no head of the run reaches a score of %.2f", threshold));
         }},
        {{"lab_top_layer",
          false,
          {"run", "from", "to"},
          "the layer of a training-lab run (run a / b) whose gradient norm, averaged over steps [from, to], is "
          "largest"},
         [](const Params& p, const UiState& st, const Snapshot*, const Model*) {
             const auto h = lab_history_of(p, st);
             std::vector<double> sum;
             for (const train::StepStats* s : steps_in_range(p, *h)) {
                 if (sum.size() < s->layer_grad_norms.size()) sum.resize(s->layer_grad_norms.size(), 0.0);
                 for (size_t l = 0; l < s->layer_grad_norms.size(); ++l) sum[l] += s->layer_grad_norms[l];
             }
             if (sum.empty()) throw std::runtime_error(tr("the run has no per-layer gradient norms"));
             return double(std::max_element(sum.begin(), sum.end()) - sum.begin());
         }},
        {{"lab_val_loss",
          false,
          {"run", "step"},
          "held-out loss (nats/token) of a training-lab run (run a / b) at its last evaluation at or before step "
          "(default: the last evaluation)"},
         [](const Params& p, const UiState& st, const Snapshot*, const Model*) {
             const auto h = lab_history_of(p, st);
             const int64_t step = int_param(p, "step", -1, -1, 10'000'000);
             double v = NAN;
             for (const auto& [at, loss] : h->val)
                 if (step < 0 || at <= step) v = loss;
             if (std::isnan(v)) throw std::runtime_error(tr("the run has no held-out loss at that step"));
             return v;
         }},
        {{"lab_step_stat",
          false,
          {"run", "quantity", "layer", "from", "to", "reduce"},
          "max, min, mean or last of a per-step quantity (loss = the optimized loss of the batch in nats/token, with "
          "any label smoothing and z-loss; "
          "grad_norm and layer_grad_norm of `layer` before clipping, max_logit, max_logsumexp = largest log Z, lr) of "
          "a training-lab run (run a / b) over steps [from, to]"},
         [](const Params& p, const UiState& st, const Snapshot*, const Model*) {
             const auto h = lab_history_of(p, st);
             const std::string q = str_param(p, "quantity", "loss"), reduce = str_param(p, "reduce", "max");
             const int layer = int_param(p, "layer", 0, 0, 1 << 14);
             const auto steps = steps_in_range(p, *h);
             double acc = reduce == "min" ? INFINITY : reduce == "max" ? -INFINITY : 0.0;
             for (const train::StepStats* s : steps) {
                 const double v = step_quantity(*s, q, layer);
                 if (reduce == "max") acc = std::max(acc, v);
                 else if (reduce == "min") acc = std::min(acc, v);
                 else if (reduce == "mean") acc += v;
                 else if (reduce == "last") acc = v;
                 else throw std::runtime_error("parameter 'reduce' must be max, min, mean or last");
             }
             return reduce == "mean" ? acc / double(steps.size()) : acc;
         }},
    };
    return defs;
}


}  // namespace

const std::vector<MeasureInfo>& lesson_measures() {
    static const std::vector<MeasureInfo> v = [] {
        std::vector<MeasureInfo> out;
        for (const auto& d : measure_defs()) out.push_back(d.info);
        return out;
    }();
    return v;
}

const MeasureInfo* find_measure(const std::string& name) {
    for (const auto& m : lesson_measures())
        if (m.name == name) return &m;
    return nullptr;
}

double evaluate_named_measure(const std::string& measure, const nlohmann::json& params, const UiState& st,
                              const Snapshot* snap, const Model* model) {
    for (const auto& d : measure_defs())
        if (d.info.name == measure) {
            if (d.info.needs_snapshot) need_snap(snap);
            const double v = d.fn(params, st, snap, model);
            if (!std::isfinite(v)) throw std::runtime_error(tr("the measure is not a finite number here"));
            return v;
        }
    throw std::runtime_error("unknown measure '" + measure + "'");
}

double evaluate_measure(const LessonQuestion& q, const UiState& st, const Snapshot* snap, const Model* model) {
    return evaluate_named_measure(q.measure, q.params, st, snap, model);
}

ClaimResult evaluate_claim(const LessonClaim& c, const UiState& st, const Snapshot* snap, const Model* model) {
    ClaimResult r;
    r.value = NAN;
    try {
        UiState at = st;
        for (auto it = c.set.begin(); it != c.set.end(); ++it) set_knob(at, it.key(), it->get<double>());
        r.value = evaluate_named_measure(c.measure, c.params, at, snap, model);
        r.holds = r.value >= c.min && r.value <= c.max;
    } catch (const std::exception& e) {
        r.error = e.what();
    }
    return r;
}

std::string claim_bounds(const LessonClaim& c) {
    const auto f = plot::format_value;  // the readouts' 4 significant digits
    std::string s;
    if (std::isfinite(c.min)) s += f(c.min) + " ≤ ";
    s += c.measure;
    if (std::isfinite(c.max)) s += " ≤ " + f(c.max);
    return s;
}

}  // namespace ts::lessons
