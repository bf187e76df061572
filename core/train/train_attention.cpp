// TrainModel's causal self-attention sub-layer, forward and backward, over B sequences of T rows at once:
// projections as whole (B*T, d) GEMMs, then per (sequence, head) T x T score blocks. MHA/MQA/GQA, qk-norm, RoPE,
// 1/sqrt(d_head) scaling, dropout on the attention probabilities. "Attention Is All You Need" eq. 1.
#include "core/train/train_model.h"

#include "core/train/train_util.h"

#include <cmath>

namespace ts::train {

namespace {
using StridedMap = Eigen::Map<MatrixRM, 0, Eigen::OuterStride<>>;
using ConstStridedMap = Eigen::Map<const MatrixRM, 0, Eigen::OuterStride<>>;
using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

/// Where head h of sequence b lives: its T x D slice of a (B*T, H*D) query-shaped buffer, of a (B*T, K*D)
/// key/value-shaped buffer (GQA: query head h reads KV head h / (H/K)) and its T x T block of (B, H, T, T) scores.
struct HeadSlice {
    int T, D;
    int64_t q_stride, kv_stride, q_off, kv_off, blk;
    HeadSlice(int b, int h, int T_, int H, int K, int D_)
        : T(T_), D(D_), q_stride(int64_t(H) * D_), kv_stride(int64_t(K) * D_),
          q_off(int64_t(b) * T_ * q_stride + int64_t(h) * D_),
          kv_off(int64_t(b) * T_ * kv_stride + int64_t(h / (H / K)) * D_), blk((int64_t(b) * H + h) * T_ * T_) {}
    [[nodiscard]] ConstStridedMap q(const float* base) const { return {base + q_off, T, D, Eigen::OuterStride<>(q_stride)}; }
    [[nodiscard]] StridedMap q_mut(float* base) const { return {base + q_off, T, D, Eigen::OuterStride<>(q_stride)}; }
    [[nodiscard]] ConstStridedMap kv(const float* base) const { return {base + kv_off, T, D, Eigen::OuterStride<>(kv_stride)}; }
    [[nodiscard]] StridedMap kv_mut(float* base) const { return {base + kv_off, T, D, Eigen::OuterStride<>(kv_stride)}; }
};
}  // namespace

void TrainModel::attention_forward(const Layer& p, LayerActs& a, const MatrixRM& in, MatrixRM& out, int layer) {
    const auto& c = m_config;
    const int B = m_B, T = m_T, H = c.n_heads, K = c.n_kv_heads, D = c.d_head();
    const int64_t N = int64_t(B) * T, HD = int64_t(H) * D, KD = int64_t(K) * D;
    a.q.noalias() = in * cmap(*p.wq).transpose();
    a.k.noalias() = in * cmap(*p.wk).transpose();
    a.v.noalias() = in * cmap(*p.wv).transpose();
    if (p.bq) a.q.rowwise() += crow(*p.bq);
    if (p.bk) a.k.rowwise() += crow(*p.bk);
    if (p.bv) a.v.rowwise() += crow(*p.bv);
    if (c.qk_norm) {
        norm_forward(NormKind::RMSNorm, a.q.data(), a.q_hat.data(), a.q_rstd.data(), a.q.data(),
                     p.q_norm->data.data(), nullptr, N * H, D, c.norm_eps);
        norm_forward(NormKind::RMSNorm, a.k.data(), a.k_hat.data(), a.k_rstd.data(), a.k.data(),
                     p.k_norm->data.data(), nullptr, N * K, D, c.norm_eps);
    }
    if (c.position == PositionKind::RoPE) {
        for (int b = 0; b < B; ++b) {
            rope_rotate(m_rope, a.q.data() + b * T * HD, T, H, HD, false);
            rope_rotate(m_rope, a.k.data() + b * T * KD, T, K, KD, false);
        }
    }
    const bool dropout = m_opt.attn_dropout > 0.0f;
    if (dropout) {
        a.attn_mask.resize(a.probs.rows(), a.probs.cols());
        dropout_mask(a.attn_mask.data(), a.attn_mask.size(), m_opt.attn_dropout,
                     rng_key(m_opt.seed, m_opt.step, uint64_t(layer) * 4));
    } else {
        a.attn_mask.resize(0, 0);
    }
    const float scale = c.scale_attn ? 1.0f / std::sqrt(float(D)) : 1.0f;
    for (int b = 0; b < B; ++b) {
        for (int h = 0; h < H; ++h) {
            const HeadSlice hs(b, h, T, H, K, D);
            const ConstStridedMap Q = hs.q(a.q.data()), Kb = hs.kv(a.k.data()), Vb = hs.kv(a.v.data());
            const int64_t blk = hs.blk;
            MapRM P(a.probs.data() + blk, T, T);
            P.noalias() = Q * Kb.transpose();
            // Causal softmax of scale * scores: row i sees keys 0..i; the masked tail is exactly 0.
            for (int i = 0; i < T; ++i) {
                float* row = P.data() + int64_t(i) * T;
                ArrayMap r(row, i + 1);
                const float m = r.maxCoeff();
                r = ((r - m) * scale).exp();
                r *= 1.0f / r.sum();
                std::fill(row + i + 1, row + T, 0.0f);
            }
            StridedMap Att = hs.q_mut(a.att.data());
            if (dropout) {
                m_scr_tt = P.cwiseProduct(ConstMapRM(a.attn_mask.data() + blk, T, T));
                Att.noalias() = m_scr_tt * Vb;
            } else {
                Att.noalias() = P * Vb;
            }
        }
    }
    out.noalias() = a.att * cmap(*p.wo).transpose();
    if (p.bo) out.rowwise() += crow(*p.bo);
}

void TrainModel::attention_backward(const Layer& p, const Layer& g, const LayerActs& a, const MatrixRM& in,
                                    const MatrixRM& dout, MatrixRM& din) {
    const auto& c = m_config;
    const int B = m_B, T = m_T, H = c.n_heads, K = c.n_kv_heads, D = c.d_head();
    const int64_t N = int64_t(B) * T, HD = int64_t(H) * D, KD = int64_t(K) * D;
    m_datt.noalias() = dout * cmap(*p.wo);
    map(*g.wo).noalias() += dout.transpose() * a.att;
    if (g.bo) add_colsum(*g.bo, dout);

    m_dk.setZero();
    m_dv.setZero();
    const bool dropout = a.attn_mask.size() > 0;
    const float scale = c.scale_attn ? 1.0f / std::sqrt(float(D)) : 1.0f;
    for (int b = 0; b < B; ++b) {
        for (int h = 0; h < H; ++h) {
            const HeadSlice hs(b, h, T, H, K, D);
            const ConstStridedMap Q = hs.q(a.q.data()), Kb = hs.kv(a.k.data()), Vb = hs.kv(a.v.data());
            const ConstStridedMap dA = hs.q(m_datt.data());
            StridedMap dQ = hs.q_mut(m_dq.data()), dK = hs.kv_mut(m_dk.data()), dV = hs.kv_mut(m_dv.data());
            const int64_t blk = hs.blk;
            const ConstMapRM P(a.probs.data() + blk, T, T);
            // out = Pd V with Pd = P * mask: dV += Pd^T dA, dPd = dA V^T, dP = dPd * mask.
            if (dropout) {
                const ConstMapRM M(a.attn_mask.data() + blk, T, T);
                m_scr_tt2 = P.cwiseProduct(M);
                dV.noalias() += m_scr_tt2.transpose() * dA;
                m_scr_tt.noalias() = dA * Vb.transpose();
                m_scr_tt.array() *= M.array();
            } else {
                dV.noalias() += P.transpose() * dA;
                m_scr_tt.noalias() = dA * Vb.transpose();
            }
            // Softmax backward: dS_ij = P_ij (dP_ij - sum_k P_ik dP_ik), times the score scale.
            for (int i = 0; i < T; ++i) {
                float* row = m_scr_tt.data() + int64_t(i) * T;
                ArrayMap dp(row, i + 1);
                const ConstArrayMap pr(P.data() + int64_t(i) * T, i + 1);
                const float dot = (dp * pr).sum();
                dp = pr * (dp - dot) * scale;
                std::fill(row + i + 1, row + T, 0.0f);
            }
            dQ.noalias() = m_scr_tt * Kb;
            dK.noalias() += m_scr_tt.transpose() * Q;
        }
    }
    if (c.position == PositionKind::RoPE) {
        for (int b = 0; b < B; ++b) {
            rope_rotate(m_rope, m_dq.data() + b * T * HD, T, H, HD, true);
            rope_rotate(m_rope, m_dk.data() + b * T * KD, T, K, KD, true);
        }
    }
    if (c.qk_norm) {
        norm_backward(NormKind::RMSNorm, m_dq.data(), a.q_hat.data(), a.q_rstd.data(), p.q_norm->data.data(),
                      m_dq.data(), g.q_norm->data.data(), nullptr, N * H, D);
        norm_backward(NormKind::RMSNorm, m_dk.data(), a.k_hat.data(), a.k_rstd.data(), p.k_norm->data.data(),
                      m_dk.data(), g.k_norm->data.data(), nullptr, N * K, D);
    }
    map(*g.wq).noalias() += m_dq.transpose() * in;
    map(*g.wk).noalias() += m_dk.transpose() * in;
    map(*g.wv).noalias() += m_dv.transpose() * in;
    if (g.bq) add_colsum(*g.bq, m_dq);
    if (g.bk) add_colsum(*g.bk, m_dk);
    if (g.bv) add_colsum(*g.bv, m_dv);
    din.noalias() = m_dq * cmap(*p.wq);
    din.noalias() += m_dk * cmap(*p.wk);
    din.noalias() += m_dv * cmap(*p.wv);
}

}  // namespace ts::train
