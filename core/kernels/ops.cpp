// Transformer ops (see core/kernels/ops.h for shapes, units, sources): activations and their derivatives, sinusoidal table
// and RoPE, the softmax family, cross-entropy / z-loss, inverted dropout (the norms are in core/kernels/norms.cpp).
// Reference semantics are PyTorch's; tests/core/ops_golden_test.cpp checks them against fixtures made by torch.
#include "core/kernels/ops.h"
#include "core/util/random.h"

// GCC 12 reports -Wmaybe-uninitialized inside its own AVX-512 intrinsics (_mm512_undefined_ps) when Eigen's packet
// math is inlined here with -march=native: a known false positive, not something this file can fix.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <unsupported/Eigen/SpecialFunctions>

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace ts {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kInvSqrt2Pi = 0.3989422804014327;   // 1 / sqrt(2 pi)
constexpr float kGeluTanhK = 0.7978845608028654f;    // sqrt(2 / pi)
constexpr float kGeluTanhC = 0.044715f;

using ConstRowMap = Eigen::Map<const RowVectorF>;


}  // namespace

// --- scalar activations ------------------------------------------------------------------------------------------
float tanh_act(float x) { return std::tanh(x); }
float tanh_grad(float x) {
    const float t = std::tanh(x);
    return 1.0f - t * t;
}

float sigmoid(float x) {
    // Only ever exponentiate a non-positive number so exp never overflows for large |x|.
    if (x >= 0.0f) return 1.0f / (1.0f + std::exp(-x));
    const float e = std::exp(x);
    return e / (1.0f + e);
}
float sigmoid_grad(float x) {
    const float s = sigmoid(x);
    return s * (1.0f - s);
}

float relu(float x) { return x > 0.0f ? x : 0.0f; }
float relu_grad(float x) { return x > 0.0f ? 1.0f : 0.0f; }

float leaky_relu(float x, float alpha) { return x > 0.0f ? x : alpha * x; }
float leaky_relu_grad(float x, float alpha) { return x > 0.0f ? 1.0f : alpha; }

float gelu(float x) { return static_cast<float>(0.5 * x * (1.0 + std::erf(x / kSqrt2))); }
float gelu_grad(float x) {
    // d/dx [x Phi(x)] = Phi(x) + x phi(x)
    const double xd = x;
    const double cdf = 0.5 * (1.0 + std::erf(xd / kSqrt2));
    const double pdf = kInvSqrt2Pi * std::exp(-0.5 * xd * xd);
    return static_cast<float>(cdf + xd * pdf);
}

float gelu_tanh(float x) {
    const float inner = kGeluTanhK * (x + kGeluTanhC * x * x * x);
    return 0.5f * x * (1.0f + std::tanh(inner));
}
float gelu_tanh_grad(float x) {
    const float inner = kGeluTanhK * (x + kGeluTanhC * x * x * x);
    const float t = std::tanh(inner);
    const float d_inner = kGeluTanhK * (1.0f + 3.0f * kGeluTanhC * x * x);
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * d_inner;
}

float swish(float x, float beta) { return x * sigmoid(beta * x); }
float swish_grad(float x, float beta) {
    // d/dx [x s(bx)] = s + b x s (1 - s)
    const float s = sigmoid(beta * x);
    return s + beta * x * s * (1.0f - s);
}

float apply_activation(Activation a, float x) {
    switch (a) {
        case Activation::ReLU: return relu(x);
        case Activation::GELU: return gelu(x);
        case Activation::GELUTanh: return gelu_tanh(x);
        case Activation::SiLU: return swish(x, 1.0f);
        case Activation::GLU: return sigmoid(x);
        case Activation::SwiGLU: return swish(x, 1.0f);
        case Activation::GeGLU: return gelu(x);
        case Activation::GeGLUTanh: return gelu_tanh(x);
    }
    throw std::invalid_argument("apply_activation: unknown Activation value " + std::to_string(int(a)));
}

float activation_grad(Activation a, float x) {
    switch (a) {
        case Activation::ReLU: return relu_grad(x);
        case Activation::GELU: return gelu_grad(x);
        case Activation::GELUTanh: return gelu_tanh_grad(x);
        case Activation::SiLU: return swish_grad(x, 1.0f);
        case Activation::GLU: return sigmoid_grad(x);
        case Activation::SwiGLU: return swish_grad(x, 1.0f);
        case Activation::GeGLU: return gelu_grad(x);
        case Activation::GeGLUTanh: return gelu_tanh_grad(x);
    }
    throw std::invalid_argument("activation_grad: unknown Activation value " + std::to_string(int(a)));
}

void apply_activation_inplace(Activation a, MatrixRM& x) {
    // Dispatch once, not per element, and use Eigen's vectorized tanh/erf/exp: the scalar libm calls were ~17% of
    // a GPT-2 forward. Results agree with the scalar functions to float rounding (golden tests at 1e-5).
    auto v = x.array();
    switch (a) {
        case Activation::ReLU: v = v.max(0.0f); return;
        case Activation::GELU:
        case Activation::GeGLU: v = 0.5f * v * (1.0f + (v * float(1.0 / kSqrt2)).erf()); return;
        case Activation::GELUTanh:
        case Activation::GeGLUTanh:
            v = 0.5f * v * (1.0f + (kGeluTanhK * (v + kGeluTanhC * v.cube())).tanh());
            return;
        case Activation::SiLU:
        case Activation::SwiGLU: v = v / (1.0f + (-v).exp()); return;
        case Activation::GLU: v = 1.0f / (1.0f + (-v).exp()); return;
    }
    throw std::invalid_argument("apply_activation_inplace: unknown Activation value " + std::to_string(int(a)));
}

// --- positions ---------------------------------------------------------------------------------------------------
MatrixRM sinusoidal_table(int n_pos, int d_model, float base, SinusoidalLayout layout) {
    if (n_pos < 0 || d_model <= 0 || !(base > 0.0f))
        throw std::invalid_argument("sinusoidal_table: expected n_pos >= 0, d_model > 0, base > 0; found n_pos = " +
                                    std::to_string(n_pos) + ", d_model = " + std::to_string(d_model) +
                                    ", base = " + std::to_string(base));
    MatrixRM pe(n_pos, d_model);
    // double angles: p / base^(2i/d) at p ~ 1e4 would lose digits in float before sin/cos.
    // HalfSplit: sines in the first ceil(d/2) columns, cosines after (HF's "sentinel").
    const int half = (d_model + 1) / 2;
    for (int j = 0; j < d_model; j += 2) {
        const double inv_freq = std::pow(double(base), -double(j) / double(d_model));
        const int sin_col = layout == SinusoidalLayout::Interleaved ? j : j / 2;
        const int cos_col = layout == SinusoidalLayout::Interleaved ? j + 1 : half + j / 2;
        for (int p = 0; p < n_pos; ++p) {
            const double angle = p * inv_freq;
            pe(p, sin_col) = float(std::sin(angle));
            if (j + 1 < d_model) pe(p, cos_col) = float(std::cos(angle));
        }
    }
    return pe;
}

int relative_position_bucket(int relative_position, bool bidirectional, int num_buckets, int max_distance) {
    int bucket = 0;
    int n = relative_position;
    if (bidirectional) {
        num_buckets /= 2;
        if (n > 0) bucket += num_buckets;
        n = std::abs(n);
    } else {
        n = -std::min(n, 0);
    }
    const int max_exact = num_buckets / 2;
    if (n < max_exact) return bucket + n;
    // torch: (log(n.float() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)).long(),
    // all in float32 (the python scalars are rounded to float); truncation toward zero.
    const float ratio = float(n) / float(max_exact);
    const float scaled = std::log(ratio) / float(std::log(double(max_distance) / double(max_exact))) *
                         float(num_buckets - max_exact);
    const int large = std::min(max_exact + int(scaled), num_buckets - 1);
    return bucket + large;
}

void relative_position_bias(const float* table, int num_buckets, int H, int T, int S, int q_start,
                            bool bidirectional, int max_distance, MatrixRM& out) {
    out.resize(int64_t(H) * T, S);
    // One bucket per relative distance: r = s - q ranges over [-(q_start + T - 1), S - 1 - q_start].
    const int r_min = -(q_start + T - 1), r_max = S - 1 - q_start;
    std::vector<int> bucket_of(size_t(r_max - r_min + 1));
    for (int r = r_min; r <= r_max; ++r)
        bucket_of[size_t(r - r_min)] = relative_position_bucket(r, bidirectional, num_buckets, max_distance);
    for (int h = 0; h < H; ++h)
        for (int t = 0; t < T; ++t) {
            float* row = out.data() + (int64_t(h) * T + t) * S;
            for (int s = 0; s < S; ++s) row[s] = table[size_t(bucket_of[size_t(s - q_start - t - r_min)]) * H + h];
        }
}

void apply_rope_rows(float* x, int T, int d_head, int start_pos, float rope_theta, RopeLayout layout) {
    if (d_head <= 0 || d_head % 2 != 0)
        throw std::invalid_argument("apply_rope: d_head must be a positive even number, found " +
                                    std::to_string(d_head));
    apply_rope_rows(x, T, d_head, start_pos, rope_theta, layout, d_head);
}

void apply_rope_rows(float* x, int T, int d_head, int start_pos, float rope_theta, RopeLayout layout,
                     int rotary_dim) {
    if (rotary_dim <= 0 || rotary_dim % 2 != 0 || rotary_dim > d_head)
        throw std::invalid_argument("apply_rope: rotary_dim must be a positive even number <= d_head = " +
                                    std::to_string(d_head) + ", found " + std::to_string(rotary_dim));
    if (T < 0 || start_pos < 0 || !(rope_theta > 0.0f))
        throw std::invalid_argument("apply_rope: expected T >= 0, start_pos >= 0, rope_theta > 0; found T = " +
                                    std::to_string(T) + ", start_pos = " + std::to_string(start_pos) +
                                    ", rope_theta = " + std::to_string(rope_theta));
    if (T == 0) return;
    if (x == nullptr) throw std::invalid_argument("apply_rope: null data for T = " + std::to_string(T));
    const int half = rotary_dim / 2;
    // Called per head and layer inside attention with the same positions: the angles' cos and sin (computed in double,
    // rounded to float) are kept per thread for positions [0, n_pos) and reused while theta and rotary_dim stay, so a
    // forward computes each once. Past kMaxCached positions they are computed per call (the same values), as before.
    struct Table {
        float theta = 0.0f;
        int rotary_dim = 0, n_pos = 0;
        std::vector<float> cos, sin;  // (n_pos, half)
    };
    constexpr int kMaxCached = 1 << 14;  // 8 MB per thread at rotary_dim 128
    thread_local Table table;
    const auto fill = [&](Table& tb, int p0, int n) {
        std::vector<double> inv_freq(static_cast<size_t>(half));
        for (int i = 0; i < half; ++i)
            inv_freq[size_t(i)] = std::pow(double(rope_theta), -2.0 * i / double(rotary_dim));
        tb.cos.resize(size_t(n) * size_t(half));
        tb.sin.resize(size_t(n) * size_t(half));
        for (int t = 0; t < n; ++t)
            for (int i = 0; i < half; ++i) {
                const double angle = double(p0 + t) * inv_freq[size_t(i)];
                tb.cos[size_t(t) * size_t(half) + size_t(i)] = float(std::cos(angle));
                tb.sin[size_t(t) * size_t(half) + size_t(i)] = float(std::sin(angle));
            }
    };
    const int64_t end = int64_t(start_pos) + T;
    Table own;
    const Table* tb = &table;
    int64_t first = start_pos;  // the table row of position start_pos
    if (end <= kMaxCached) {
        if (table.theta != rope_theta || table.rotary_dim != rotary_dim || table.n_pos < end) {
            table.theta = rope_theta;
            table.rotary_dim = rotary_dim;
            table.n_pos = int(std::min<int64_t>(kMaxCached, std::max<int64_t>(end, 2 * int64_t(table.n_pos))));
            fill(table, 0, table.n_pos);
        }
    } else {
        fill(own, start_pos, T);
        tb = &own;
        first = 0;
    }
    for (int t = 0; t < T; ++t) {
        float* row = x + int64_t(t) * d_head;
        const float* cs = tb->cos.data() + (first + t) * half;
        const float* sn = tb->sin.data() + (first + t) * half;
        for (int i = 0; i < half; ++i) {
            const float c = cs[i], s = sn[i];
            // Pair (a, b) -> (a cos - b sin, a sin + b cos): a 2-D rotation by angle.
            float& a = layout == RopeLayout::Interleaved ? row[2 * i] : row[i];
            float& b = layout == RopeLayout::Interleaved ? row[2 * i + 1] : row[i + half];
            const float a0 = a, b0 = b;
            a = a0 * c - b0 * s;
            b = a0 * s + b0 * c;
        }
    }
}

void apply_rope(MatrixRM& x, int start_pos, float rope_theta, RopeLayout layout) {
    apply_rope_rows(x.data(), int(x.rows()), int(x.cols()), start_pos, rope_theta, layout);
}

// --- softmax family ----------------------------------------------------------------------------------------------
void softmax_rows_inplace(MatrixRM& x, float temperature) {
    if (!(temperature > 0.0f) || !std::isfinite(temperature))
        throw std::invalid_argument("softmax_rows: temperature must be a finite number > 0, found " +
                                    std::to_string(temperature));
    for (Eigen::Index r = 0; r < x.rows(); ++r) softmax_row_inplace(x.row(r).data(), int(x.cols()), temperature);
}

void softmax_row_inplace(float* row, int n, float temperature) {
    if (n <= 0) return;
    Eigen::Map<RowVectorF> r(row, n);
    if (temperature != 1.0f) r.array() /= temperature;  // divide (not multiply by 1/T) to round like torch
    const float mx = r.maxCoeff();
    if (mx == -kInf) {  // fully masked: defined as zeros, not 0/0
        r.setZero();
        return;
    }
    // Eigen 3.4's vectorised exp clamps its argument near -88.7, so a masked key (-inf) would get 1.6e-39 in SIMD
    // lanes and exactly 0 in the scalar tail: which keys got which depended on the row length and the CPU's vector
    // width. Masked keys get exactly 0 everywhere, as in torch.softmax.
    r.array() = (r.array() == -kInf).select(0.0f, (r.array() - mx).exp());
    r /= r.sum();
}

MatrixRM softmax_rows(const MatrixRM& scores, float temperature) {
    MatrixRM y = scores;
    softmax_rows_inplace(y, temperature);
    return y;
}

MatrixRM log_softmax_rows(const MatrixRM& x) {
    MatrixRM y = x;
    for (Eigen::Index r = 0; r < y.rows(); ++r) {
        auto row = y.row(r);
        if (row.size() == 0) continue;
        const float mx = row.maxCoeff();
        if (mx == -kInf) {
            row.setConstant(-kInf);
            continue;
        }
        row.array() -= mx;
        row.array() -= std::log(row.array().exp().sum());
    }
    return y;
}

Eigen::VectorXf logsumexp_rows(const MatrixRM& x) {
    Eigen::VectorXf out(x.rows());
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
        if (x.cols() == 0) {
            out(r) = -kInf;  // log of an empty sum
            continue;
        }
        const float mx = x.row(r).maxCoeff();
        out(r) = mx == -kInf ? -kInf : mx + std::log((x.row(r).array() - mx).exp().sum());
    }
    return out;
}

MatrixRM naive_softmax_rows(const MatrixRM& x) {
    // Deliberately the textbook formula: exp(1000) overflows to inf and inf/inf gives NaN.
    MatrixRM y = x.array().exp().matrix();
    for (Eigen::Index r = 0; r < y.rows(); ++r) y.row(r) /= y.row(r).sum();
    return y;
}

float entropy_nats(std::span<const float> probs) {
    double h = 0.0;
    for (const float p : probs)
        if (p > 0.0f) h -= double(p) * std::log(double(p));  // 0 log 0 = 0 (the limit)
    return float(h);
}

// --- losses ------------------------------------------------------------------------------------------------------
namespace {
void check_targets(const char* fn, const MatrixRM& logits, std::span<const int> targets) {
    if (static_cast<Eigen::Index>(targets.size()) != logits.rows())
        throw std::invalid_argument(std::string(fn) + ": " + std::to_string(targets.size()) +
                                    " targets for " + std::to_string(logits.rows()) + " logit rows");
    for (size_t i = 0; i < targets.size(); ++i)
        if (targets[i] != -1 && (targets[i] < 0 || targets[i] >= logits.cols()))
            throw std::invalid_argument(std::string(fn) + ": target[" + std::to_string(i) + "] = " +
                                        std::to_string(targets[i]) + ", expected -1 (ignore) or [0, " +
                                        std::to_string(logits.cols()) + ")");
}
}  // namespace

float cross_entropy(const MatrixRM& logits, std::span<const int> targets, float label_smoothing) {
    check_targets("cross_entropy", logits, targets);
    if (!(label_smoothing >= 0.0f && label_smoothing <= 1.0f))
        throw std::invalid_argument("cross_entropy: label_smoothing must be in [0, 1], found " +
                                    std::to_string(label_smoothing));
    const Eigen::VectorXf lse = logsumexp_rows(logits);
    const double V = double(logits.cols());
    const double eps = label_smoothing;
    double total = 0.0;
    int64_t count = 0;
    for (Eigen::Index r = 0; r < logits.rows(); ++r) {
        const int t = targets[size_t(r)];
        if (t == -1) continue;
        // -log p_t = lse - z_t; smoothing spreads eps uniformly: eps * mean_j(-log p_j) = eps * (lse - mean_j z_j).
        const double nll = double(lse(r)) - double(logits(r, t));
        double loss = (1.0 - eps) * nll;
        if (eps > 0.0) loss += eps * (double(lse(r)) - double(logits.row(r).sum()) / V);
        total += loss;
        ++count;
    }
    // Like torch's reduction='mean': 0/0 = NaN when every target is ignored.
    return count ? float(total / double(count)) : std::numeric_limits<float>::quiet_NaN();
}

float z_loss(const MatrixRM& logits, std::span<const int> targets, float coef) {
    check_targets("z_loss", logits, targets);
    const Eigen::VectorXf lse = logsumexp_rows(logits);
    double total = 0.0;
    int64_t count = 0;
    for (Eigen::Index r = 0; r < logits.rows(); ++r) {
        if (targets[size_t(r)] == -1) continue;
        total += double(lse(r)) * double(lse(r));
        ++count;
    }
    // No rows to regularize contributes nothing (not NaN) so it can always be added to a loss.
    return count ? float(coef * total / double(count)) : 0.0f;
}

// --- dropout -----------------------------------------------------------------------------------------------------
void dropout_inplace(MatrixRM& x, float p, uint64_t seed, std::vector<uint8_t>* mask) {
    if (!(p >= 0.0f && p < 1.0f))
        throw std::invalid_argument("dropout: p must be in [0, 1), found " + std::to_string(p));
    const Eigen::Index n = x.size();
    if (mask) mask->assign(size_t(n), 1);
    if (p == 0.0f) return;
    const float scale = 1.0f / (1.0f - p);  // inverted dropout: expectation unchanged, eval needs no rescale
    const double pd = p;
    uint64_t state = seed;
    float* v = x.data();
    for (Eigen::Index i = 0; i < n; ++i) {
        const double u = uniform01(splitmix64(state));  // core/util/random.h: the same mask on every platform
        if (u < pd) {
            v[i] = 0.0f;
            if (mask) (*mask)[size_t(i)] = 0;
        } else {
            v[i] *= scale;
        }
    }
}

}  // namespace ts
