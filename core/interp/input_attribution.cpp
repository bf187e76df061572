// Input attribution (see input_attribution.h): gradient × input and integrated gradients through the training
// backward in GradMode::InputsOnly, occlusion through the inference forward's embedding edits.
#include "core/interp/input_attribution.h"

#include "core/train/train_model.h"

#include <algorithm>
#include <mutex>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace ts::interp {

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// One explained prediction: the row of the (decoder) sequence whose logits are scored, and f's tokens.
struct Scored {
    int row = 0;
    int token = 0;
    int contrast = -1;
};

// f of one logits row and, when dlogits is given, df/dlogits into it. log p: onehot(token) − softmax; contrast:
// onehot(token) − onehot(contrast). Computed in double.
float target_value(const float* logits, int V, const Scored& s, float* dlogits) {
    if (s.contrast >= 0) {
        if (dlogits) {
            std::fill(dlogits, dlogits + V, 0.0f);
            dlogits[s.token] += 1.0f;
            dlogits[s.contrast] -= 1.0f;
        }
        return logits[s.token] - logits[s.contrast];
    }
    double mx = -std::numeric_limits<double>::infinity();
    for (int v = 0; v < V; ++v) mx = std::max(mx, double(logits[v]));
    double sum = 0;
    for (int v = 0; v < V; ++v) sum += std::exp(double(logits[v]) - mx);
    const double lse = mx + std::log(sum);
    if (dlogits) {
        for (int v = 0; v < V; ++v) dlogits[v] = float(-std::exp(double(logits[v]) - lse));
        dlogits[s.token] += 1.0f;
    }
    return float(double(logits[s.token]) - lse);
}

void check_options(const AttributionOptions& o) {
    if (o.steps < 1 || o.steps > 4096)
        throw std::invalid_argument("attribution: steps must be in [1, 4096], got " + std::to_string(o.steps));
    if (o.batch < 1 || o.batch > 4096)
        throw std::invalid_argument("attribution: batch must be in [1, 4096], got " + std::to_string(o.batch));
    if (o.span < 1) throw std::invalid_argument("attribution: span must be at least 1, got " + std::to_string(o.span));
}

void check_ids(const ModelConfig& c, const std::vector<int>& ids, const char* what) {
    if (ids.empty()) throw std::invalid_argument(std::string("attribution: no ") + what + " tokens");
    for (int id : ids) check_token(c, id, "attribution", what);
}

// One point of the path b + α (x − b) for one explained prediction, and what a forward/backward there gives: f, and
// per token the dot product (x − b) · ∂f/∂x (unweighted).
struct PathPoint {
    int scored = 0;
    float alpha = 1;
};
struct PathValue {
    float f = kNaN;
    std::vector<float> src, dec;  // (S), (T)
};

// Evaluates `points`, `batch` per forward/backward, into `out` (resized); counts the passes in `passes_done` for the
// progress callback (of `passes_total`, an upper bound). Returns false when cancelled.
bool evaluate_path(GradientModel& g, const std::vector<int>& src, const std::vector<int>& dec,
                   const std::vector<Scored>& scored, const MatrixRM& x_src, const MatrixRM& x_dec,
                   const RowVectorF& base, const std::vector<PathPoint>& points, const AttributionOptions& opt,
                   std::vector<PathValue>& out, int& passes_done, int passes_total) {
    const ModelConfig& c = g.config();
    const bool seq2seq = !src.empty();
    const int S = int(src.size()), T = int(dec.size()), d = c.d_model, V = c.vocab_size;
    out.assign(points.size(), PathValue{});
    train::TrainModel& net = g.net();
    train::StepOptions so;
    so.target_rows_only = true;
    MatrixRM emb_dec, emb_src, dlogits;
    const int total = int(points.size());
    for (int p0 = 0; p0 < total; p0 += opt.batch) {
        if (cancelled(opt.cancel)) return false;
        const int B = std::min(opt.batch, total - p0);
        emb_dec.resize(int64_t(B) * T, d);
        if (seq2seq) emb_src.resize(int64_t(B) * S, d);
        std::vector<int> dec_ids(size_t(B) * size_t(T)), targets(size_t(B) * size_t(T), -1), src_ids;
        if (seq2seq) src_ids.resize(size_t(B) * size_t(S));
        for (int b = 0; b < B; ++b) {
            const PathPoint& pt = points[size_t(p0 + b)];
            emb_dec.middleRows(int64_t(b) * T, T) = (x_dec * pt.alpha).rowwise() + base;
            std::copy(dec.begin(), dec.end(), dec_ids.begin() + int64_t(b) * T);
            targets[size_t(b) * size_t(T) + size_t(scored[size_t(pt.scored)].row)] = scored[size_t(pt.scored)].token;
            if (seq2seq) {
                emb_src.middleRows(int64_t(b) * S, S) = (x_src * pt.alpha).rowwise() + base;
                std::copy(src.begin(), src.end(), src_ids.begin() + int64_t(b) * S);
            }
        }
        net.set_input_embeddings(&emb_dec, seq2seq ? &emb_src : nullptr);
        if (seq2seq) {
            train::PairBatch batch;
            batch.B = B;
            batch.S = S;
            batch.T = T;
            batch.src = src_ids;
            batch.tgt = dec_ids;
            batch.targets = targets;
            (void)net.forward(batch, so);
        } else {
            (void)net.forward(dec_ids, targets, B, T, so);
        }
        const MatrixRM& logits = net.logits();  // (B, V): one row per point, in order
        dlogits.resize(B, V);
        for (int b = 0; b < B; ++b)
            out[size_t(p0 + b)].f = target_value(logits.row(b).data(), V, scored[size_t(points[size_t(p0 + b)].scored)],
                                                 dlogits.row(b).data());
        net.backward(dlogits);
        const MatrixRM& g_dec = net.input_grad(false);
        for (int b = 0; b < B; ++b) {
            PathValue& v = out[size_t(p0 + b)];
            v.dec.resize(size_t(T));
            for (int i = 0; i < T; ++i) v.dec[size_t(i)] = x_dec.row(i).dot(g_dec.row(int64_t(b) * T + i));
            if (seq2seq) {
                const MatrixRM& g_src = net.input_grad(true);
                v.src.resize(size_t(S));
                for (int j = 0; j < S; ++j) v.src[size_t(j)] = x_src.row(j).dot(g_src.row(int64_t(b) * S + j));
            }
        }
        if (opt.progress) opt.progress(++passes_done, std::max(passes_done, passes_total));
    }
    net.set_input_embeddings(nullptr, nullptr);
    return true;
}

// The gradient methods on a decoder-only model (src empty) or an encoder–decoder. For each explained prediction
// (`scored`, rows of the decoder sequence): f(x) and f(b) with the gradient at x, then integrated gradients' points
// on the path. Points are (prediction, α) pairs, `batch` per pass, so the encoder–decoder runs every generated
// token's path in one stream. Results per prediction: scores over the source (S) and the decoder inputs (T), f(x)
// and f(b).
struct GradResult {
    MatrixRM src, dec;  // (n_scored, S), (n_scored, T)
    std::vector<float> value, baseline;
    bool cancelled = false;
};

GradResult gradient_scores(GradientModel& g, const std::vector<int>& src, const std::vector<int>& dec,
                           const std::vector<Scored>& scored, const AttributionOptions& opt) {
    const bool seq2seq = !src.empty();
    const int S = int(src.size()), T = int(dec.size());
    const int n = int(scored.size());
    const bool ig = opt.method == AttributionMethod::IntegratedGradients;
    // Inputs relative to the baseline b: the path is b + α (x − b), the scores Σ_d (x − b)_d ∂f/∂x_d.
    const RowVectorF base = g.baseline_row(opt.baseline);
    const MatrixRM x_dec = g.token_embeddings(dec).rowwise() - base;
    const MatrixRM x_src = seq2seq ? MatrixRM(g.token_embeddings(src).rowwise() - base) : MatrixRM();
    const bool adaptive = ig && opt.rule == IgRule::Adaptive && opt.steps >= kAdaptiveStart;

    GradResult r;
    r.src.setZero(n, S);
    r.dec.setZero(n, T);
    r.value.assign(size_t(n), kNaN);
    r.baseline.assign(size_t(n), kNaN);
    const auto fail = [&] {
        r.cancelled = true;
        r.src.setConstant(kNaN);
        r.dec.setConstant(kNaN);
        return r;
    };
    // Adds w · (a point's dot products) to prediction i's scores.
    const auto add = [&](int i, const PathValue& v, double w) {
        for (int t = 0; t < T; ++t) r.dec(i, t) += float(w * v.dec[size_t(t)]);
        for (int j = 0; j < S && seq2seq; ++j) r.src(i, j) += float(w * v.src[size_t(j)]);
    };
    const int path_points = ig ? opt.steps : 0;
    const int passes_total = (n * (2 + path_points) + opt.batch - 1) / opt.batch;
    int passes = 0;

    // Every prediction at α = 1 (its value; grad × input's gradient) and α = 0 (its baseline value); the midpoint
    // rule's α_k = (k − ½)/m, w_k = 1/m, or the adaptive rule's first grid, α = j/16, j = 1..15.
    std::vector<PathPoint> points;
    for (int i = 0; i < n; ++i) points.push_back({i, 1.0f}), points.push_back({i, 0.0f});
    const int first = adaptive ? kAdaptiveStart : path_points;
    for (int i = 0; i < n; ++i)
        for (int k = 1; k <= first; ++k)
            points.push_back({i, float(adaptive ? double(k) / (kAdaptiveStart + 1) : (k - 0.5) / opt.steps)});
    std::vector<PathValue> vals;
    if (!evaluate_path(g, src, dec, scored, x_src, x_dec, base, points, opt, vals, passes, passes_total)) return fail();
    for (int i = 0; i < n; ++i) {
        r.value[size_t(i)] = vals[size_t(2 * i)].f;
        r.baseline[size_t(i)] = vals[size_t(2 * i + 1)].f;
        if (!ig) add(i, vals[size_t(2 * i)], 1.0);
    }
    if (!ig) return r;
    if (!adaptive) {
        for (size_t p = size_t(2 * n); p < points.size(); ++p) add(points[p].scored, vals[p], 1.0 / opt.steps);
        return r;
    }

    // The adaptive rule: the path's evaluated points cut it into intervals, each scored by the trapezoid rule
    // (every point has its gradient, the ends included), and f at the two ends says how far that share is from the
    // truth (completeness per interval: Σ_tokens score = f(end) − f(start) when exact). The intervals with the
    // largest errors are halved — one new point each — until the errors sum to under kAdaptiveTolerance of
    // |f(x) − f(b)| or the prediction has used `steps` points. (Halving a midpoint-rule interval needs two new
    // points; here one: on the bundled translation model the gaps at 50 points are about a quarter as large.)
    struct Node {
        double alpha;
        PathValue v;
    };
    const auto slope = [](const PathValue& v) {  // df/dα: the dot products summed over the tokens
        double s = 0;
        for (float x : v.dec) s += x;
        for (float x : v.src) s += x;
        return s;
    };
    const auto error = [&](const Node& lo, const Node& hi) {
        return (hi.alpha - lo.alpha) * 0.5 * (slope(lo.v) + slope(hi.v)) - (double(hi.v.f) - double(lo.v.f));
    };
    std::vector<std::vector<Node>> nodes(static_cast<size_t>(n));  // per prediction, by α
    std::vector<int> used(size_t(n), kAdaptiveStart);
    for (int i = 0; i < n; ++i) {
        auto& P = nodes[size_t(i)];
        P.push_back({0.0, vals[size_t(2 * i + 1)]});
        for (int j = 1; j <= kAdaptiveStart; ++j)
            P.push_back({double(j) / (kAdaptiveStart + 1), vals[size_t(2 * n + i * kAdaptiveStart + j - 1)]});
        P.push_back({1.0, vals[size_t(2 * i)]});
    }
    for (;;) {
        // Per prediction, the intervals to halve this round: the worst one, and up to 7 more whose errors are at least
        // half of it (a step that dominates gets the points).
        std::vector<PathPoint> more;
        std::vector<std::pair<int, size_t>> split;  // (prediction, interval = index of its lower node)
        for (int i = 0; i < n; ++i) {
            const auto& P = nodes[size_t(i)];
            std::vector<double> errs(P.size() - 1);
            double err = 0;
            for (size_t k = 0; k + 1 < P.size(); ++k) err += std::abs(errs[k] = error(P[k], P[k + 1]));
            const double scale = std::max(1e-3, std::abs(double(r.value[size_t(i)]) - double(r.baseline[size_t(i)])));
            if (err <= kAdaptiveTolerance * scale) continue;
            std::vector<size_t> order(errs.size());
            std::iota(order.begin(), order.end(), size_t(0));
            std::sort(order.begin(), order.end(),
                      [&](size_t u, size_t v) { return std::abs(errs[u]) > std::abs(errs[v]); });
            const double worst = std::abs(errs[order[0]]);
            for (size_t k = 0; k < order.size() && k < 8 && used[size_t(i)] < opt.steps; ++k) {
                if (std::abs(errs[order[k]]) < 0.5 * worst) break;
                const Node &lo = P[order[k]], &hi = P[order[k] + 1];
                if (hi.alpha - lo.alpha < 1e-7) continue;  // float α cannot halve it further
                more.push_back({i, float((lo.alpha + hi.alpha) / 2)});
                split.push_back({i, order[k]});
                ++used[size_t(i)];
            }
        }
        if (more.empty()) break;
        if (!evaluate_path(g, src, dec, scored, x_src, x_dec, base, more, opt, vals, passes, passes_total))
            return fail();
        // Insert from the back of each prediction's list so that earlier indices stay valid.
        std::vector<size_t> idx(split.size());
        std::iota(idx.begin(), idx.end(), size_t(0));
        std::sort(idx.begin(), idx.end(), [&](size_t u, size_t v) { return split[u] > split[v]; });
        for (size_t k : idx) {
            auto& P = nodes[size_t(split[k].first)];
            const size_t at = split[k].second;
            P.insert(P.begin() + std::ptrdiff_t(at) + 1, Node{(P[at].alpha + P[at + 1].alpha) / 2, vals[k]});
        }
    }
    for (int i = 0; i < n; ++i) {
        const auto& P = nodes[size_t(i)];
        for (size_t k = 0; k + 1 < P.size(); ++k) {
            const double h = P[k + 1].alpha - P[k].alpha;
            add(i, P[k].v, h / 2);
            add(i, P[k + 1].v, h / 2);
        }
    }
    return r;
}

// The baseline's token row of a model: 0, or the mean of tok_emb (× √d_model when scale_embeddings).
RowVectorF baseline_of(const ModelConfig& c, const Tensor& E, AttributionBaseline b) {
    if (b == AttributionBaseline::Zero) return RowVectorF::Zero(c.d_model);
    const ConstMapRM e(E.data.data(), E.shape[0], E.shape[1]);
    return (e.cast<double>().colwise().mean() * double(c.embedding_scale())).cast<float>();
}
// The same for the inference model; the table is read (as float32) only for the mean.
RowVectorF baseline_of(const Model& m, AttributionBaseline b) {
    if (b == AttributionBaseline::Zero) return RowVectorF::Zero(m.config().d_model);
    return baseline_of(m.config(), m.weight("tok_emb.weight"), b);
}

// The embedding row that stands for "token `pos` hidden": the recorded first-layer input (`embed_out`) with the
// token's own part (`tok_out`, the forward's <prefix>tok_emb.out) replaced by the baseline's, so positions stay; the
// baseline row alone when a norm or token types make the input not a sum.
std::vector<float> hidden_row(const ModelConfig& c, const Tensor& embed_out, const Tensor& tok_out, int pos,
                              const RowVectorF& base) {
    const int d = c.d_model;
    std::vector<float> row(base.data(), base.data() + d);
    if (c.embed_norm || c.type_vocab_size > 0) return row;
    const size_t at = size_t(pos) * size_t(d);
    for (int k = 0; k < d; ++k) row[size_t(k)] += embed_out.data[at + size_t(k)] - tok_out.data[at + size_t(k)];
    return row;
}

}  // namespace

std::string_view name_of(IgRule r) { return r == IgRule::Midpoint ? "midpoint" : "adaptive"; }

std::optional<IgRule> parse_ig_rule(std::string_view name) {
    for (IgRule r : {IgRule::Midpoint, IgRule::Adaptive})
        if (name_of(r) == name) return r;
    return std::nullopt;
}

std::string_view name_of(AttributionBaseline b) { return b == AttributionBaseline::Zero ? "zero" : "mean"; }

std::optional<AttributionBaseline> parse_attribution_baseline(std::string_view name) {
    for (AttributionBaseline b : {AttributionBaseline::Zero, AttributionBaseline::MeanEmbedding})
        if (name_of(b) == name) return b;
    return std::nullopt;
}

RowVectorF GradientModel::baseline_row(AttributionBaseline b) const {
    return baseline_of(config(), m_net->params().at("tok_emb.weight"), b);
}

std::string_view name_of(AttributionMethod m) {
    switch (m) {
    case AttributionMethod::GradientTimesInput: return "grad-x-input";
    case AttributionMethod::IntegratedGradients: return "integrated-gradients";
    case AttributionMethod::Occlusion: return "occlusion";
    }
    return "?";
}

std::optional<AttributionMethod> parse_attribution_method(std::string_view name) {
    for (AttributionMethod m :
         {AttributionMethod::GradientTimesInput, AttributionMethod::IntegratedGradients, AttributionMethod::Occlusion})
        if (name_of(m) == name) return m;
    return std::nullopt;
}

std::string gradient_unsupported(const ModelConfig& c, int seq_len) {
    std::string why = train::TrainModel::unsupported(c);
    if (!why.empty()) return "gradients are not available for this model: " + why;
    if (c.sliding_window > 0 && seq_len > c.sliding_window)
        return "gradients are not available beyond the sliding window (" + std::to_string(c.sliding_window) +
            " tokens): the backward pass lets every token see every earlier one";
    return "";
}

GradientModel::GradientModel(const Model& m) {
    if (const std::string why = gradient_unsupported(m.config()); !why.empty()) throw std::invalid_argument(why);
    m_net = std::make_unique<train::TrainModel>(m.config(), m.weights(), train::GradMode::InputsOnly);
}

GradientModel::~GradientModel() = default;

const ModelConfig& GradientModel::config() const { return m_net->config(); }

MatrixRM GradientModel::token_embeddings(const std::vector<int>& ids) const {
    const ModelConfig& c = config();
    const float scale = c.embedding_scale();
    const Tensor& E = m_net->params().at("tok_emb.weight");
    const ConstMapRM map_e(E.data.data(), E.shape[0], E.shape[1]);
    MatrixRM x(int64_t(ids.size()), c.d_model);
    for (size_t i = 0; i < ids.size(); ++i) x.row(int64_t(i)) = map_e.row(ids[i]) * scale;
    return x;
}

struct GradientModelCache::Slot {
    std::mutex mu;
    const Model* model = nullptr;  ///< the model `grad` was made for
    std::unique_ptr<GradientModel> grad;
};

GradientModelCache::GradientModelCache() : m_slot(std::make_shared<Slot>()) {}

std::shared_ptr<GradientModel> GradientModelCache::lease(const Model& m) {
    std::unique_ptr<GradientModel> g;
    {
        const std::lock_guard<std::mutex> lock(m_slot->mu);
        if (m_slot->model == &m && m_slot->grad) g = std::move(m_slot->grad);
    }
    if (!g) g = std::make_unique<GradientModel>(m);
    // Given back when the lease ends; the slot outlives the cache while a lease is out.
    return std::shared_ptr<GradientModel>(g.release(), [slot = m_slot, model = &m](GradientModel* p) {
        std::unique_ptr<GradientModel> back(p);
        const std::lock_guard<std::mutex> lock(slot->mu);
        if (!slot->grad || slot->model != model) {
            slot->grad = std::move(back);
            slot->model = model;
        }
    });
}

void GradientModelCache::clear() {
    std::unique_ptr<GradientModel> old;
    const std::lock_guard<std::mutex> lock(m_slot->mu);
    old = std::move(m_slot->grad);
    m_slot->model = nullptr;
}

Attribution attribute_tokens(const Model& m, GradientModel* grad, const std::vector<int>& ids,
                             const AttributionTarget& target, const AttributionOptions& opt) {
    const ModelConfig& c = m.config();
    if (c.arch != Arch::DecoderOnly)
        throw std::invalid_argument("attribute_tokens: the model is " + std::string(to_string(c.arch)) +
                                    "; token attribution explains a decoder-only model's next-token prediction");
    check_options(opt);
    check_ids(c, ids, "input");
    const int T = int(ids.size());
    const int pos = target.position < 0 ? T - 1 : target.position;
    if (pos >= T)
        throw std::invalid_argument("attribute_tokens: position " + std::to_string(target.position) + " outside [0, " +
                                    std::to_string(T) + ")");
    check_token(c, target.token, "attribute_tokens", "token");
    if (target.contrast >= 0) check_token(c, target.contrast, "attribute_tokens", "contrast");
    const std::vector<int> prefix(ids.begin(), ids.begin() + pos + 1);
    const int Tp = pos + 1;
    Attribution a;
    a.method = opt.method;
    a.target = target;
    a.target.position = pos;
    a.completeness_gap = kNaN;
    const Scored scored{pos, target.token, target.contrast};
    if (opt.method != AttributionMethod::Occlusion) {
        if (!grad) throw std::invalid_argument("attribute_tokens: the gradient methods need a GradientModel");
        if (const std::string why = gradient_unsupported(c, Tp); !why.empty()) throw std::invalid_argument(why);
        const GradResult r = gradient_scores(*grad, {}, prefix, {scored}, opt);
        a.scores.assign(r.dec.data(), r.dec.data() + Tp);
        a.value = r.value[0];
        a.baseline_value = r.baseline[0];
        a.cancelled = r.cancelled;
        if (opt.method == AttributionMethod::IntegratedGradients && !r.cancelled)
            a.completeness_gap = std::accumulate(a.scores.begin(), a.scores.end(), 0.0f) - (a.value - a.baseline_value);
        return a;
    }
    // Occlusion: the clean run records the first layer's input; each window replaces its rows.
    const int w = std::min(opt.span, Tp);
    ForwardOptions fo;
    fo.all_logits = false;
    fo.capture = CaptureFilter::prefixes({"embed.out", "tok_emb.out"});
    const ForwardResult clean = forward(m, prefix, fo);
    const Tensor& embed_out = clean.trace->at("embed.out");
    const Tensor& tok_out = clean.trace->at("tok_emb.out");
    const RowVectorF base = baseline_of(m, opt.baseline);
    a.value = target_value(clean.logits.row(0).data(), c.vocab_size, {0, target.token, target.contrast}, nullptr);
    a.baseline_value = kNaN;
    fo.capture = CaptureFilter::none();
    std::vector<double> sum(size_t(Tp), 0.0);
    std::vector<int> count(size_t(Tp), 0);
    const int windows = Tp - w + 1;
    for (int s = 0; s < windows; ++s) {
        if (cancelled(opt.cancel)) {
            a.cancelled = true;
            break;
        }
        ForwardOptions edited = fo;
        for (int i = s; i < s + w; ++i)
            edited.edits.push_back(ActivationEdit::set("embed.out", hidden_row(c, embed_out, tok_out, i, base), -1, i));
        const ForwardResult run = forward(m, prefix, edited);
        const float f =
            target_value(run.logits.row(0).data(), c.vocab_size, {0, target.token, target.contrast}, nullptr);
        for (int i = s; i < s + w; ++i) {
            sum[size_t(i)] += double(a.value) - double(f);
            ++count[size_t(i)];
        }
        if (opt.progress) opt.progress(s + 1, windows);
    }
    a.scores.resize(size_t(Tp));
    for (int i = 0; i < Tp; ++i)
        a.scores[size_t(i)] = count[size_t(i)] ? float(sum[size_t(i)] / count[size_t(i)]) : kNaN;
    return a;
}

Seq2SeqAttribution attribute_translation(const Model& m, GradientModel* grad, const std::vector<int>& src,
                                         const std::vector<int>& dec_in, const std::vector<int>& out,
                                         const AttributionOptions& opt) {
    const ModelConfig& c = m.config();
    if (c.arch != Arch::EncoderDecoder)
        throw std::invalid_argument("attribute_translation: the model is " + std::string(to_string(c.arch)) +
                                    ", not encoder-decoder");
    check_options(opt);
    check_ids(c, src, "source");
    check_ids(c, dec_in, "decoder input");
    check_ids(c, out, "output");
    if (out.size() != dec_in.size())
        throw std::invalid_argument("attribute_translation: " + std::to_string(out.size()) + " output tokens for " +
                                    std::to_string(dec_in.size()) + " decoder inputs");
    const int S = int(src.size()), T = int(dec_in.size());
    Seq2SeqAttribution a;
    a.method = opt.method;
    std::vector<Scored> scored;
    for (int t = 0; t < T; ++t) scored.push_back({t, out[size_t(t)], -1});
    if (opt.method != AttributionMethod::Occlusion) {
        if (!grad) throw std::invalid_argument("attribute_translation: the gradient methods need a GradientModel");
        if (const std::string why = gradient_unsupported(c, std::max(S, T)); !why.empty())
            throw std::invalid_argument(why);
        GradResult r = gradient_scores(*grad, src, dec_in, scored, opt);
        a.source = std::move(r.src);
        a.target = std::move(r.dec);
        a.value = r.value;
        a.baseline_value = r.baseline;
        a.cancelled = r.cancelled;
        a.completeness_gap.assign(size_t(T), kNaN);
        if (opt.method == AttributionMethod::IntegratedGradients && !r.cancelled)
            for (int t = 0; t < T; ++t)
                a.completeness_gap[size_t(t)] =
                    a.source.row(t).sum() + a.target.row(t).sum() - (a.value[size_t(t)] - a.baseline_value[size_t(t)]);
    } else {
        // One forward per hidden token (span 1): every row's f changes at once.
        ForwardOptions fo;
        fo.capture = CaptureFilter::prefixes({"embed.out", "tok_emb.out", "enc.embed.out", "enc.tok_emb.out"});
        const ForwardResult clean = forward_seq2seq(m, src, dec_in, fo);
        const Tensor& enc_out = clean.trace->at("enc.embed.out");
        const Tensor& enc_tok = clean.trace->at("enc.tok_emb.out");
        const Tensor& dec_out = clean.trace->at("embed.out");
        const Tensor& dec_tok = clean.trace->at("tok_emb.out");
        const RowVectorF base = baseline_of(m, opt.baseline);
        a.value.resize(size_t(T));
        for (int t = 0; t < T; ++t)
            a.value[size_t(t)] = target_value(clean.logits.row(t).data(), c.vocab_size, scored[size_t(t)], nullptr);
        a.baseline_value.assign(size_t(T), kNaN);
        a.completeness_gap.assign(size_t(T), kNaN);
        a.source.setConstant(T, S, kNaN);
        a.target.setConstant(T, T, kNaN);
        fo.capture = CaptureFilter::none();
        const int total = S + T;
        for (int k = 0; k < total && !a.cancelled; ++k) {
            if (cancelled(opt.cancel)) {
                a.cancelled = true;
                break;
            }
            ForwardOptions edited = fo;
            const bool is_src = k < S;
            const int i = is_src ? k : k - S;
            edited.edits.push_back(
                is_src ? ActivationEdit::set("enc.embed.out", hidden_row(c, enc_out, enc_tok, i, base), -1, i)
                       : ActivationEdit::set("embed.out", hidden_row(c, dec_out, dec_tok, i, base), -1, i));
            const ForwardResult run = forward_seq2seq(m, src, dec_in, edited);
            for (int t = 0; t < T; ++t) {
                if (!is_src && i > t) continue;  // a later decoder input cannot matter to row t
                const float f = target_value(run.logits.row(t).data(), c.vocab_size, scored[size_t(t)], nullptr);
                (is_src ? a.source(t, i) : a.target(t, i)) = a.value[size_t(t)] - f;
            }
            if (opt.progress) opt.progress(k + 1, total);
        }
        return a;
    }
    for (int t = 0; t < T; ++t)
        for (int i = t + 1; i < T; ++i) a.target(t, i) = kNaN;
    return a;
}

float spearman(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size())
        throw std::invalid_argument("spearman: " + std::to_string(a.size()) + " and " + std::to_string(b.size()) +
                                    " values");
    const size_t n = a.size();
    if (n < 2) return kNaN;
    const auto ranks = [n](const std::vector<float>& v) {
        std::vector<size_t> order(n);
        std::iota(order.begin(), order.end(), size_t(0));
        std::stable_sort(order.begin(), order.end(), [&v](size_t i, size_t j) { return v[i] < v[j]; });
        std::vector<double> r(n);
        for (size_t i = 0; i < n;) {
            size_t j = i;
            while (j + 1 < n && v[order[j + 1]] == v[order[i]]) ++j;
            const double avg = 0.5 * double(i + j) + 1.0;
            for (size_t k = i; k <= j; ++k) r[order[k]] = avg;
            i = j + 1;
        }
        return r;
    };
    const std::vector<double> ra = ranks(a), rb = ranks(b);
    const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / double(n);
    const double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / double(n);
    double sab = 0, saa = 0, sbb = 0;
    for (size_t i = 0; i < n; ++i) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    if (saa == 0 || sbb == 0) return kNaN;
    return float(sab / std::sqrt(saa * sbb));
}

std::vector<float> attention_attribution_rank_corr(const MatrixRM& source, const MatrixRM& attn) {
    if (source.rows() != attn.rows() || source.cols() != attn.cols())
        throw std::invalid_argument("attention_attribution_rank_corr: attribution is (" +
                                    std::to_string(source.rows()) + ", " + std::to_string(source.cols()) +
                                    "), attention (" + std::to_string(attn.rows()) + ", " +
                                    std::to_string(attn.cols()) + ")");
    std::vector<float> rho;
    const size_t S = size_t(source.cols());
    std::vector<float> a(S), b(S);
    for (Eigen::Index t = 0; t < source.rows(); ++t) {
        for (size_t j = 0; j < S; ++j) {
            a[j] = std::abs(source(t, Eigen::Index(j)));
            b[j] = attn(t, Eigen::Index(j));
        }
        rho.push_back(spearman(a, b));
    }
    return rho;
}

}  // namespace ts::interp
