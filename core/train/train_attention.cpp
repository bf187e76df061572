// TrainModel's attention sub-layer, forward and backward, over B sequences at once: projections as whole GEMMs,
// then per (sequence, head) Tq x Tk score blocks. Self-attention (causal or bidirectional) and cross-attention
// (queries from the decoder, keys/values from the encoder output, whose gradient is returned), key padding,
// MHA/MQA/GQA, qk-norm, RoPE, 1/sqrt(d_head) scaling, dropout on the attention probabilities.
// "Attention Is All You Need" eq. 1 and §3.2.3; torch.nn.MultiheadAttention with key_padding_mask.
#include "core/train/train_model.h"

#include "core/train/train_util.h"

#include <cmath>
#include <limits>

namespace ts::train {

namespace {
using StridedMap = Eigen::Map<MatrixRM, 0, Eigen::OuterStride<>>;
using ConstStridedMap = Eigen::Map<const MatrixRM, 0, Eigen::OuterStride<>>;
using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

/// Where head h of sequence b lives: its Tq x D slice of a (B*Tq, H*D) query-shaped buffer, its Tk x D slice of a
/// (B*Tk, K*D) key/value-shaped buffer (GQA: query head h reads KV head h / (H/K)) and its Tq x Tk block of
/// (B, H, Tq, Tk) scores.
struct HeadSlice {
    int Tq, Tk, D;
    int64_t q_stride, kv_stride, q_off, kv_off, blk;
    HeadSlice(int b, int h, int Tq_, int Tk_, int H, int K, int D_)
        : Tq(Tq_), Tk(Tk_), D(D_), q_stride(int64_t(H) * D_), kv_stride(int64_t(K) * D_),
          q_off(int64_t(b) * Tq_ * q_stride + int64_t(h) * D_),
          kv_off(int64_t(b) * Tk_ * kv_stride + int64_t(h / (H / K)) * D_), blk((int64_t(b) * H + h) * Tq_ * Tk_) {}
    [[nodiscard]] ConstStridedMap q(const float* base) const { return {base + q_off, Tq, D, Eigen::OuterStride<>(q_stride)}; }
    [[nodiscard]] StridedMap q_mut(float* base) const { return {base + q_off, Tq, D, Eigen::OuterStride<>(q_stride)}; }
    [[nodiscard]] ConstStridedMap kv(const float* base) const { return {base + kv_off, Tk, D, Eigen::OuterStride<>(kv_stride)}; }
    [[nodiscard]] StridedMap kv_mut(float* base) const { return {base + kv_off, Tk, D, Eigen::OuterStride<>(kv_stride)}; }
};

/// Keys query row i may see: 0..i (causal) or all Tk; padding keys among them are excluded separately.
int visible_keys(bool causal, int i, int Tk) { return causal ? i + 1 : Tk; }
}  // namespace

void TrainModel::attention_forward(const AttnRefs& p, AttnActs& a, const AttnGeom& geo, AttnScratch& scr,
                                   const MatrixRM& xq, const MatrixRM& xkv, MatrixRM& out) {
    const auto& c = m_config;
    const int B = geo.B, Tq = geo.Tq, Tk = geo.Tk, H = c.n_heads, K = c.n_kv_heads, D = c.d_head();
    const int64_t Nq = int64_t(B) * Tq, Nk = int64_t(B) * Tk, HD = int64_t(H) * D, KD = int64_t(K) * D;
    product(a.q, xq, cmap(*p.wq).transpose(), false);
    product(a.k, xkv, cmap(*p.wk).transpose(), false);
    product(a.v, xkv, cmap(*p.wv).transpose(), false);
    if (p.bq) a.q.rowwise() += crow(*p.bq);
    if (p.bk) a.k.rowwise() += crow(*p.bk);
    if (p.bv) a.v.rowwise() += crow(*p.bv);
    if (c.qk_norm) {
        norm_forward(NormKind::RMSNorm, a.q.data(), a.q_hat.data(), a.q_rstd.data(), a.q.data(),
                     p.q_norm->data.data(), nullptr, Nq * H, D, c.norm_eps);
        norm_forward(NormKind::RMSNorm, a.k.data(), a.k_hat.data(), a.k_rstd.data(), a.k.data(),
                     p.k_norm->data.data(), nullptr, Nk * K, D, c.norm_eps);
    }
    if (geo.rope) {
        for (int b = 0; b < B; ++b) {
            rope_rotate(m_rope, a.q.data() + b * Tq * HD, Tq, H, HD, false);
            rope_rotate(m_rope, a.k.data() + b * Tk * KD, Tk, K, KD, false);
        }
    }
    const bool dropout = m_opt.attn_dropout > 0.0f;
    if (dropout) {
        a.drop_mask.resize(a.probs.rows(), a.probs.cols());
        dropout_mask(a.drop_mask.data(), a.drop_mask.size(), m_opt.attn_dropout,
                     rng_key(m_opt.seed, m_opt.step, geo.site));
    } else {
        a.drop_mask.resize(0, 0);
    }
    const float scale = c.scale_attn ? 1.0f / std::sqrt(float(D)) : 1.0f;
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    // Sequences are independent: each thread takes whole sequences (its own dropout scratch).
    const int nt = B >= 2 ? compute_threads() : 1;
#pragma omp parallel num_threads(nt)
    {
    MatrixRM dropped;  // (Tq, Tk) P * mask
#pragma omp for schedule(static)
    for (int b = 0; b < B; ++b) {
        const uint8_t* pad = geo.key_pad ? geo.key_pad + int64_t(b) * Tk : nullptr;
        for (int h = 0; h < H; ++h) {
            const HeadSlice hs(b, h, Tq, Tk, H, K, D);
            const ConstStridedMap Q = hs.q(a.q.data()), Kb = hs.kv(a.k.data()), Vb = hs.kv(a.v.data());
            MapRM P(a.probs.data() + hs.blk, Tq, Tk);
            P.noalias() = Q * Kb.transpose();
            // Masked softmax of scale * scores: row i sees visible non-padding keys; the rest is exactly 0, and a
            // row with no key at all is 0 (never NaN).
            for (int i = 0; i < Tq; ++i) {
                float* row = P.data() + int64_t(i) * Tk;
                const int n = visible_keys(geo.causal, i, Tk);
                ArrayMap r(row, n);
                if (pad)
                    for (int j = 0; j < n; ++j)
                        if (pad[j]) row[j] = kNegInf;
                const float m = r.maxCoeff();
                if (m == kNegInf) {
                    std::fill(row, row + Tk, 0.0f);
                    continue;
                }
                r = ((r - m) * scale).exp();
                if (pad)
                    for (int j = 0; j < n; ++j)
                        if (pad[j]) row[j] = 0.0f;
                r *= 1.0f / r.sum();
                std::fill(row + n, row + Tk, 0.0f);
            }
            StridedMap Att = hs.q_mut(a.att.data());
            if (dropout) {
                dropped = P.cwiseProduct(ConstMapRM(a.drop_mask.data() + hs.blk, Tq, Tk));
                Att.noalias() = dropped * Vb;
            } else {
                Att.noalias() = P * Vb;
            }
        }
    }
    }
    product(out, a.att, cmap(*p.wo).transpose(), false);
    if (p.bo) out.rowwise() += crow(*p.bo);
}

void TrainModel::attention_backward(const AttnRefs& p, const AttnRefs& g, const AttnActs& a, const AttnGeom& geo,
                                    AttnScratch& scr, const MatrixRM& xq, const MatrixRM& xkv, const MatrixRM& dout,
                                    MatrixRM& dxq, MatrixRM* dxkv) {
    const auto& c = m_config;
    const int B = geo.B, Tq = geo.Tq, Tk = geo.Tk, H = c.n_heads, K = c.n_kv_heads, D = c.d_head();
    const int64_t Nq = int64_t(B) * Tq, Nk = int64_t(B) * Tk, HD = int64_t(H) * D, KD = int64_t(K) * D;
    product(scr.datt, dout, cmap(*p.wo), false);
    if (m_param_grads) product(map(*g.wo), dout.transpose(), a.att, true);
    if (g.bo) add_colsum(*g.bo, dout);

    scr.dk.setZero();
    scr.dv.setZero();
    const bool dropout = a.drop_mask.size() > 0;
    const float scale = c.scale_attn ? 1.0f / std::sqrt(float(D)) : 1.0f;
    // Sequences are independent (dK, dV rows of sequence b belong to b alone): each thread takes whole sequences
    // with its own (Tq, Tk) scratch.
    const int nt = B >= 2 ? compute_threads() : 1;
#pragma omp parallel num_threads(nt)
    {
    MatrixRM dprobs, dropped;  // (Tq, Tk): d(dropped P), then dScores; P * mask
#pragma omp for schedule(static)
    for (int b = 0; b < B; ++b) {
        for (int h = 0; h < H; ++h) {
            const HeadSlice hs(b, h, Tq, Tk, H, K, D);
            const ConstStridedMap Q = hs.q(a.q.data()), Kb = hs.kv(a.k.data()), Vb = hs.kv(a.v.data());
            const ConstStridedMap dA = hs.q(scr.datt.data());
            StridedMap dQ = hs.q_mut(scr.dq.data()), dK = hs.kv_mut(scr.dk.data()), dV = hs.kv_mut(scr.dv.data());
            const ConstMapRM P(a.probs.data() + hs.blk, Tq, Tk);
            // out = Pd V with Pd = P * mask: dV += Pd^T dA, dPd = dA V^T, dP = dPd * mask.
            if (dropout) {
                const ConstMapRM M(a.drop_mask.data() + hs.blk, Tq, Tk);
                dropped = P.cwiseProduct(M);
                dV.noalias() += dropped.transpose() * dA;
                dprobs.noalias() = dA * Vb.transpose();
                dprobs.array() *= M.array();
            } else {
                dV.noalias() += P.transpose() * dA;
                dprobs.noalias() = dA * Vb.transpose();
            }
            // Softmax backward: dS_ij = P_ij (dP_ij - sum_k P_ik dP_ik), times the score scale. Masked and padding
            // keys have P_ij = 0, so their dS_ij is 0 too.
            for (int i = 0; i < Tq; ++i) {
                float* row = dprobs.data() + int64_t(i) * Tk;
                const int n = visible_keys(geo.causal, i, Tk);
                ArrayMap dp(row, n);
                const ConstArrayMap pr(P.data() + int64_t(i) * Tk, n);
                const float dot = (dp * pr).sum();
                dp = pr * (dp - dot) * scale;
                std::fill(row + n, row + Tk, 0.0f);
            }
            dQ.noalias() = dprobs * Kb;
            dK.noalias() += dprobs.transpose() * Q;
        }
    }
    }
    if (geo.rope) {
        for (int b = 0; b < B; ++b) {
            rope_rotate(m_rope, scr.dq.data() + b * Tq * HD, Tq, H, HD, true);
            rope_rotate(m_rope, scr.dk.data() + b * Tk * KD, Tk, K, KD, true);
        }
    }
    if (c.qk_norm) {
        norm_backward(NormKind::RMSNorm, scr.dq.data(), a.q_hat.data(), a.q_rstd.data(), p.q_norm->data.data(),
                      scr.dq.data(), g.q_norm->data.data(), nullptr, Nq * H, D);
        norm_backward(NormKind::RMSNorm, scr.dk.data(), a.k_hat.data(), a.k_rstd.data(), p.k_norm->data.data(),
                      scr.dk.data(), g.k_norm->data.data(), nullptr, Nk * K, D);
    }
    if (m_param_grads) {
        product(map(*g.wq), scr.dq.transpose(), xq, true);
        product(map(*g.wk), scr.dk.transpose(), xkv, true);
        product(map(*g.wv), scr.dv.transpose(), xkv, true);
    }
    if (g.bq) add_colsum(*g.bq, scr.dq);
    if (g.bk) add_colsum(*g.bk, scr.dk);
    if (g.bv) add_colsum(*g.bv, scr.dv);
    product(dxq, scr.dq, cmap(*p.wq), false);
    MatrixRM& dkv = dxkv ? *dxkv : dxq;  // self-attention: keys and values came from the same input
    product(dkv, scr.dk, cmap(*p.wk), true);
    product(dkv, scr.dv, cmap(*p.wv), true);
}

}  // namespace ts::train
