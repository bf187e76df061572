// Training kernels: norms (+ backward), array activations (+ backward), RoPE tables, dropout masks, softmax
// cross-entropy with its gradient. Plain loops over row-major blocks with Eigen maps where they vectorize.
#include "core/train/train_kernels.h"

#include "core/kernels/ops.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace ts::train {

using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

void dropout_mask(float* mask, int64_t n, float p, uint64_t key) {
    if (!(p >= 0.0f && p < 1.0f)) throw std::invalid_argument("dropout p must be in [0, 1), got " + std::to_string(p));
    const float keep = 1.0f / (1.0f - p);
    // 24-bit uniform draws; drop when u < p * 2^24.
    const uint64_t threshold = static_cast<uint64_t>(double(p) * double(1u << 24));
    for (int64_t i = 0; i < n; ++i) {
        const uint64_t u = mix64(key + static_cast<uint64_t>(i) * 0xD1B54A32D192ED03ull) >> 40;
        mask[i] = u < threshold ? 0.0f : keep;
    }
}

// --- normalization ----------------------------------------------------------------------------------------------

void norm_forward(NormKind kind, const float* x, float* xhat, float* rstd, float* out, const float* gamma,
                  const float* beta, int64_t N, int d, float eps) {
    const ConstArrayMap g(gamma, d);
    for (int64_t r = 0; r < N; ++r) {
        const ConstArrayMap xr(x + r * d, d);
        ArrayMap hr(xhat + r * d, d);
        float s;
        if (kind == NormKind::LayerNorm) {
            const float mean = xr.sum() / float(d);
            hr = xr - mean;
            const float var = hr.square().sum() / float(d);
            s = 1.0f / std::sqrt(var + eps);
        } else {
            s = 1.0f / std::sqrt(xr.square().sum() / float(d) + eps);
            hr = xr;
        }
        hr *= s;
        rstd[r] = s;
        ArrayMap o(out + r * d, d);
        if (beta) o = hr * g + ConstArrayMap(beta, d);
        else o = hr * g;
    }
}

void norm_backward(NormKind kind, const float* dout, const float* xhat, const float* rstd, const float* gamma,
                   float* dx, float* dgamma, float* dbeta, int64_t N, int d) {
    const ConstArrayMap g(gamma, d);
    ArrayMap dg(dgamma, d);
    Eigen::ArrayXf gy(d);
    for (int64_t r = 0; r < N; ++r) {
        const ConstArrayMap dy(dout + r * d, d);
        const ConstArrayMap h(xhat + r * d, d);
        dg += dy * h;
        if (dbeta) ArrayMap(dbeta, d) += dy;
        gy = dy * g;
        const float mean_gh = (gy * h).sum() / float(d);
        ArrayMap out(dx + r * d, d);
        if (kind == NormKind::LayerNorm) {
            const float mean_g = gy.sum() / float(d);
            out = rstd[r] * (gy - mean_g - h * mean_gh);
        } else {
            out = rstd[r] * (gy - h * mean_gh);
        }
    }
}

// --- activations ------------------------------------------------------------------------------------------------

namespace {
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluC = 0.044715f;
}  // namespace

void activation_forward(Activation a, const float* x, float* y, int64_t n) {
    const ConstArrayMap X(x, n);
    ArrayMap Y(y, n);
    switch (a) {
        case Activation::ReLU: Y = X.max(0.0f); break;
        case Activation::GELUTanh:
        case Activation::GeGLUTanh: Y = 0.5f * X * (1.0f + (kSqrt2OverPi * (X + kGeluC * X.cube())).tanh()); break;
        case Activation::SiLU:
        case Activation::SwiGLU: Y = X * X.logistic(); break;
        case Activation::GLU: Y = X.logistic(); break;
        default:
            for (int64_t i = 0; i < n; ++i) y[i] = apply_activation(a, x[i]);
    }
}

void activation_backward(Activation a, const float* x, const float* dy, float* dx, int64_t n) {
    const ConstArrayMap X(x, n);
    const ConstArrayMap DY(dy, n);
    ArrayMap DX(dx, n);
    switch (a) {
        case Activation::ReLU: DX = (X > 0.0f).select(DY, 0.0f); break;
        case Activation::GELUTanh:
        case Activation::GeGLUTanh: {
            // d/dx 0.5 x (1 + tanh(u)), u = k (x + c x^3): 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2)
            const Eigen::ArrayXf t = (kSqrt2OverPi * (X + kGeluC * X.cube())).tanh();
            DX = DY * (0.5f * (1.0f + t) + 0.5f * X * (1.0f - t.square()) * kSqrt2OverPi *
                                               (1.0f + 3.0f * kGeluC * X.square()));
            break;
        }
        case Activation::SiLU:
        case Activation::SwiGLU: {
            const Eigen::ArrayXf s = X.logistic();
            DX = DY * s * (1.0f + X * (1.0f - s));
            break;
        }
        case Activation::GLU: {
            const Eigen::ArrayXf s = X.logistic();
            DX = DY * s * (1.0f - s);
            break;
        }
        default:
            for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * activation_grad(a, x[i]);
    }
}

// --- rotary positions -------------------------------------------------------------------------------------------

RopeTables make_rope_tables(int n_pos, int d_head, float rope_theta, RopeLayout layout) {
    if (d_head % 2 != 0) throw std::invalid_argument("RoPE needs an even d_head, got " + std::to_string(d_head));
    RopeTables t;
    t.d_head = d_head;
    t.layout = layout;
    const int half = d_head / 2;
    t.cos.resize(n_pos, half);
    t.sin.resize(n_pos, half);
    for (int i = 0; i < half; ++i) {
        const double inv_freq = std::pow(double(rope_theta), -2.0 * i / double(d_head));
        for (int p = 0; p < n_pos; ++p) {
            const double ang = double(p) * inv_freq;
            t.cos(p, i) = static_cast<float>(std::cos(ang));
            t.sin(p, i) = static_cast<float>(std::sin(ang));
        }
    }
    return t;
}

void rope_rotate(const RopeTables& tab, float* x, int T, int n_heads, int64_t stride, bool inverse) {
    const int D = tab.d_head, half = D / 2;
    const float sgn = inverse ? -1.0f : 1.0f;
    const bool interleaved = tab.layout == RopeLayout::Interleaved;
    for (int t = 0; t < T; ++t) {
        const float* c = tab.cos.data() + int64_t(t) * half;
        const float* s = tab.sin.data() + int64_t(t) * half;
        for (int h = 0; h < n_heads; ++h) {
            float* r = x + t * stride + int64_t(h) * D;
            for (int i = 0; i < half; ++i) {
                float* p0 = interleaved ? r + 2 * i : r + i;
                float* p1 = interleaved ? r + 2 * i + 1 : r + i + half;
                const float x0 = *p0, x1 = *p1, si = sgn * s[i];
                *p0 = x0 * c[i] - x1 * si;
                *p1 = x0 * si + x1 * c[i];
            }
        }
    }
}

// --- loss -------------------------------------------------------------------------------------------------------

LossParts softmax_cross_entropy(MatrixRM& logits, std::span<const int> targets, float label_smoothing, float z_coef,
                                bool grad) {
    const int64_t N = logits.rows(), V = logits.cols();
    if (static_cast<int64_t>(targets.size()) != N)
        throw std::invalid_argument("softmax_cross_entropy: " + std::to_string(targets.size()) + " targets for " +
                                    std::to_string(N) + " logit rows");
    LossParts out;
    for (int64_t r = 0; r < N; ++r) {
        if (targets[r] < -1 || targets[r] >= V)
            throw std::invalid_argument("target " + std::to_string(targets[r]) + " outside [0, " + std::to_string(V) +
                                        ") at row " + std::to_string(r));
        out.count += targets[r] >= 0;
    }
    const float inv_count = out.count ? 1.0f / float(out.count) : 0.0f;
    const float eps = label_smoothing;
    for (int64_t r = 0; r < N; ++r) {
        ArrayMap z(logits.data() + r * V, V);
        const int y = targets[r];
        if (y < 0) {
            if (grad) z.setZero();
            continue;
        }
        const float zmax = z.maxCoeff();
        const double sum_z = z.sum();
        const float zy = z[y];
        double sum_exp;
        if (grad) {
            z = (z - zmax).exp();  // unnormalized probabilities, kept for the gradient
            sum_exp = z.sum();
        } else {
            sum_exp = (z - zmax).exp().sum();
        }
        const double lse = double(zmax) + std::log(sum_exp);
        const double nll = lse - zy;
        out.nll += nll;
        out.ce += (1.0 - eps) * nll + eps * (lse - sum_z / double(V));
        out.z += double(z_coef) * lse * lse;
        if (grad) {
            // dL/dz_j = p_j (1 + 2 c lse) - (1 - eps) [j = y] - eps / V, then mean over counted rows.
            const float scale = float((1.0 + 2.0 * z_coef * lse) / sum_exp) * inv_count;
            z = z * scale - eps / float(V) * inv_count;
            z[y] -= (1.0f - eps) * inv_count;
        }
    }
    if (out.count) {
        out.ce /= double(out.count);
        out.z /= double(out.count);
        out.nll /= double(out.count);
    }
    return out;
}

}  // namespace ts::train
