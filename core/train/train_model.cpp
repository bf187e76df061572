// TrainModel: parameter binding, batched training forward (embeddings, layers, final norm, LM head, loss) and the
// backward pass through them; FFN sub-layer forward/backward. Attention lives in train_attention.cpp.
#include "core/train/train_model.h"

#include "core/ops.h"
#include "core/train/train_util.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace ts::train {

// --- construction -----------------------------------------------------------------------------------------------

TrainModel::TrainModel(ModelConfig config, WeightMap params) : m_config(std::move(config)), m_params(std::move(params)) {
    m_config.validate();
    if (m_config.arch != Arch::DecoderOnly)
        throw std::invalid_argument(std::string("TrainModel trains decoder-only models; config arch is '") +
                                    to_string(m_config.arch) + "'");
    const auto expected = expected_weights(m_config);
    for (const auto& [name, shape] : expected) {
        const auto it = m_params.find(name);
        if (it == m_params.end()) throw std::invalid_argument("TrainModel: missing weight '" + name + "'");
        if (it->second.shape != shape)
            throw std::invalid_argument("TrainModel: weight '" + name + "' has shape " + it->second.shape_str() +
                                        ", expected " + shape_str(shape));
    }
    if (m_params.size() != expected.size()) {
        for (const auto& [name, t] : m_params) {
            bool found = false;
            for (const auto& e : expected) found = found || e.first == name;
            if (!found) throw std::invalid_argument("TrainModel: unexpected weight '" + name + "'");
        }
    }
    for (const auto& [name, t] : m_params) m_grads.emplace(name, Tensor(t.shape));
    m_p = bind(m_params);
    m_g = bind(m_grads);
    if (m_config.position == PositionKind::Sinusoidal)
        m_sin_table = sinusoidal_table(m_config.max_seq_len, m_config.d_model, m_config.sinusoidal_base);
    if (m_config.position == PositionKind::RoPE)
        m_rope = make_rope_tables(m_config.max_seq_len, m_config.d_head(), m_config.rope_theta, m_config.rope_layout);
}

TrainModel::Refs TrainModel::bind(WeightMap& w) {
    const auto find = [&w](const std::string& name) -> Tensor* {
        const auto it = w.find(name);
        return it == w.end() ? nullptr : &it->second;
    };
    Refs r;
    r.tok_emb = find("tok_emb.weight");
    r.pos_emb = find("pos_emb.weight");
    r.final_norm_w = find("dec.final_norm.weight");
    r.final_norm_b = find("dec.final_norm.bias");
    r.lm_head = m_config.tie_embeddings ? r.tok_emb : find("lm_head.weight");
    for (int i = 0; i < m_config.n_layers; ++i) {
        const std::string s = "dec." + std::to_string(i) + ".";
        Layer l;
        l.attn_norm_w = find(s + "attn_norm.weight");
        l.attn_norm_b = find(s + "attn_norm.bias");
        l.wq = find(s + "attn.wq");
        l.wk = find(s + "attn.wk");
        l.wv = find(s + "attn.wv");
        l.wo = find(s + "attn.wo");
        l.bq = find(s + "attn.bq");
        l.bk = find(s + "attn.bk");
        l.bv = find(s + "attn.bv");
        l.bo = find(s + "attn.bo");
        l.q_norm = find(s + "attn.q_norm.weight");
        l.k_norm = find(s + "attn.k_norm.weight");
        l.ffn_norm_w = find(s + "ffn_norm.weight");
        l.ffn_norm_b = find(s + "ffn_norm.bias");
        l.w_up = find(s + "ffn.w_up");
        l.w_gate = find(s + "ffn.w_gate");
        l.w_down = find(s + "ffn.w_down");
        l.b_up = find(s + "ffn.b_up");
        l.b_down = find(s + "ffn.b_down");
        r.layers.push_back(l);
    }
    return r;
}

void TrainModel::ensure_buffers(int B, int T) {
    if (B == m_B && T == m_T && !m_acts.empty()) return;
    const auto& c = m_config;
    const int64_t N = int64_t(B) * T;
    const int d = c.d_model, H = c.n_heads, K = c.n_kv_heads, D = c.d_head(), F = c.d_ff;
    m_B = B;
    m_T = T;
    m_acts.assign(c.n_layers, LayerActs{});
    for (auto& a : m_acts) {
        a.x_in.resize(N, d);
        a.n1_xhat.resize(N, d);
        a.n1_out.resize(N, d);
        a.n1_rstd.resize(N);
        a.q.resize(N, H * D);
        a.k.resize(N, K * D);
        a.v.resize(N, K * D);
        if (c.qk_norm) {
            a.q_hat.resize(N * H, D);
            a.k_hat.resize(N * K, D);
            a.q_rstd.resize(N * H);
            a.k_rstd.resize(N * K);
        }
        a.probs.resize(int64_t(B) * H * T, T);
        a.att.resize(N, H * D);
        a.x_mid.resize(N, d);
        a.n2_xhat.resize(N, d);
        a.n2_out.resize(N, d);
        a.n2_rstd.resize(N);
        a.up.resize(N, F);
        if (is_gated(c.activation)) a.gate.resize(N, F);
        a.act.resize(N, F);
    }
    m_x0.resize(N, d);
    m_xf.resize(N, d);
    m_fn_xhat.resize(N, d);
    m_hf.resize(N, d);
    m_fn_rstd.resize(N);
    m_logits.resize(N, c.vocab_size);
    m_tmp_d.resize(N, d);
    m_tmp_d2.resize(N, d);
    m_dx.resize(N, d);
    m_dh.resize(N, d);
    m_dq.resize(N, H * D);
    m_dk.resize(N, K * D);
    m_dv.resize(N, K * D);
    m_datt.resize(N, H * D);
    m_dup.resize(N, F);
    m_dgate.resize(N, F);
    m_dact.resize(N, F);
    m_scr_tt.resize(T, T);
    m_scr_tt2.resize(T, T);
    m_ffn_out.resize(N, d);
}

// --- forward ----------------------------------------------------------------------------------------------------

namespace {
// Applies a residual-dropout mask (allocated on first use) to `x` in place.
void residual_dropout(MatrixRM& x, MatrixRM& mask, float p, uint64_t key) {
    if (p <= 0.0f) {
        mask.resize(0, 0);
        return;
    }
    mask.resize(x.rows(), x.cols());
    dropout_mask(mask.data(), mask.size(), p, key);
    x.array() *= mask.array();
}
}  // namespace

StepLoss TrainModel::forward(std::span<const int> inputs, std::span<const int> targets, int B, int T,
                             const StepOptions& opt) {
    const auto& c = m_config;
    if (B <= 0 || T <= 0) throw std::invalid_argument("TrainModel::forward: batch and seq_len must be positive");
    if (T > c.max_seq_len && c.position != PositionKind::None)
        throw std::invalid_argument("TrainModel::forward: seq_len " + std::to_string(T) + " exceeds max_seq_len " +
                                    std::to_string(c.max_seq_len));
    const int64_t N = int64_t(B) * T;
    if (int64_t(inputs.size()) != N || int64_t(targets.size()) != N)
        throw std::invalid_argument("TrainModel::forward: expected " + std::to_string(N) + " inputs and targets, got " +
                                    std::to_string(inputs.size()) + " and " + std::to_string(targets.size()));
    for (int64_t i = 0; i < N; ++i)
        if (inputs[i] < 0 || inputs[i] >= c.vocab_size)
            throw std::invalid_argument("TrainModel::forward: token id " + std::to_string(inputs[i]) +
                                        " outside [0, " + std::to_string(c.vocab_size) + ")");
    ensure_buffers(B, T);
    m_inputs.assign(inputs.begin(), inputs.end());
    m_targets.assign(targets.begin(), targets.end());
    m_opt = opt;
    const int d = c.d_model;

    // Embeddings + absolute positions.
    const float emb_scale = c.scale_embeddings ? std::sqrt(float(d)) : 1.0f;
    const ConstMapRM E = cmap(*m_p.tok_emb);
    for (int64_t r = 0; r < N; ++r) {
        const int t = int(r % T);
        m_x0.row(r) = E.row(inputs[r]) * emb_scale;
        if (c.position == PositionKind::Learned) m_x0.row(r) += cmap(*m_p.pos_emb).row(t);
        else if (c.position == PositionKind::Sinusoidal) m_x0.row(r) += m_sin_table.row(t);
    }

    const bool pre = c.norm_placement == NormPlacement::Pre;
    const MatrixRM* x = &m_x0;
    for (int l = 0; l < c.n_layers; ++l) {
        const Layer& p = m_p.layers[l];
        LayerActs& a = m_acts[l];
        if (x != &a.x_in) a.x_in = *x;
        const float* g1 = p.attn_norm_w->data.data();
        const float* b1 = p.attn_norm_b ? p.attn_norm_b->data.data() : nullptr;
        const float* g2 = p.ffn_norm_w->data.data();
        const float* b2 = p.ffn_norm_b ? p.ffn_norm_b->data.data() : nullptr;
        const uint64_t key1 = rng_key(opt.seed, opt.step, uint64_t(l) * 4 + 1);
        const uint64_t key2 = rng_key(opt.seed, opt.step, uint64_t(l) * 4 + 2);
        if (pre) {
            norm_forward(c.norm, a.x_in.data(), a.n1_xhat.data(), a.n1_rstd.data(), a.n1_out.data(), g1, b1, N, d,
                         c.norm_eps);
            attention_forward(p, a, a.n1_out, m_tmp_d, l);
            residual_dropout(m_tmp_d, a.resid_mask1, opt.resid_dropout, key1);
            a.x_mid.noalias() = a.x_in + m_tmp_d;
            norm_forward(c.norm, a.x_mid.data(), a.n2_xhat.data(), a.n2_rstd.data(), a.n2_out.data(), g2, b2, N, d,
                         c.norm_eps);
            ffn_forward(p, a, a.n2_out, m_ffn_out);
            residual_dropout(m_ffn_out, a.resid_mask2, opt.resid_dropout, key2);
            MatrixRM& next = l + 1 < c.n_layers ? m_acts[l + 1].x_in : m_xf;
            next.noalias() = a.x_mid + m_ffn_out;
            x = &next;
        } else {
            attention_forward(p, a, a.x_in, m_tmp_d, l);
            residual_dropout(m_tmp_d, a.resid_mask1, opt.resid_dropout, key1);
            a.x_mid.noalias() = a.x_in + m_tmp_d;
            norm_forward(c.norm, a.x_mid.data(), a.n1_xhat.data(), a.n1_rstd.data(), a.n1_out.data(), g1, b1, N, d,
                         c.norm_eps);
            ffn_forward(p, a, a.n1_out, m_ffn_out);
            residual_dropout(m_ffn_out, a.resid_mask2, opt.resid_dropout, key2);
            m_tmp_d2.noalias() = a.n1_out + m_ffn_out;
            norm_forward(c.norm, m_tmp_d2.data(), a.n2_xhat.data(), a.n2_rstd.data(), a.n2_out.data(), g2, b2, N, d,
                         c.norm_eps);
            x = &a.n2_out;
        }
    }
    if (x != &m_xf) m_xf = *x;
    if (c.final_norm) {
        norm_forward(c.norm, m_xf.data(), m_fn_xhat.data(), m_fn_rstd.data(), m_hf.data(),
                     m_p.final_norm_w->data.data(), m_p.final_norm_b ? m_p.final_norm_b->data.data() : nullptr, N, d,
                     c.norm_eps);
    } else {
        m_hf = m_xf;
    }
    m_logits.noalias() = m_hf * cmap(*m_p.lm_head).transpose();
    const LossParts lp = softmax_cross_entropy(m_logits, m_targets, opt.label_smoothing, opt.z_loss, false);
    m_have_forward = true;
    return StepLoss{float(lp.ce + lp.z), float(lp.ce), float(lp.nll), lp.count};
}

// --- FFN sub-layer ----------------------------------------------------------------------------------------------

void TrainModel::ffn_forward(const Layer& p, LayerActs& a, const MatrixRM& in, MatrixRM& out) {
    const Activation act = m_config.activation;
    a.up.noalias() = in * cmap(*p.w_up).transpose();
    if (p.b_up) a.up.rowwise() += crow(*p.b_up);
    if (is_gated(act)) {
        a.gate.noalias() = in * cmap(*p.w_gate).transpose();
        activation_forward(act, a.gate.data(), a.act.data(), a.act.size());
        a.act.array() *= a.up.array();
    } else {
        activation_forward(act, a.up.data(), a.act.data(), a.act.size());
    }
    out.noalias() = a.act * cmap(*p.w_down).transpose();
    if (p.b_down) out.rowwise() += crow(*p.b_down);
}

void TrainModel::ffn_backward(const Layer& p, const Layer& g, const LayerActs& a, const MatrixRM& in,
                              const MatrixRM& dout, MatrixRM& din) {
    const Activation act = m_config.activation;
    m_dact.noalias() = dout * cmap(*p.w_down);
    map(*g.w_down).noalias() += dout.transpose() * a.act;
    if (g.b_down) add_colsum(*g.b_down, dout);
    if (is_gated(act)) {
        // act = f(gate) * up: d up = dact * f(gate); d gate = dact * up * f'(gate).
        activation_forward(act, a.gate.data(), m_dup.data(), m_dup.size());
        m_dup.array() *= m_dact.array();
        m_dgate.array() = m_dact.array() * a.up.array();
        activation_backward(act, a.gate.data(), m_dgate.data(), m_dgate.data(), m_dgate.size());
    } else {
        activation_backward(act, a.up.data(), m_dact.data(), m_dup.data(), m_dup.size());
    }
    map(*g.w_up).noalias() += m_dup.transpose() * in;
    if (g.b_up) add_colsum(*g.b_up, m_dup);
    din.noalias() = m_dup * cmap(*p.w_up);
    if (is_gated(act)) {
        map(*g.w_gate).noalias() += m_dgate.transpose() * in;
        din.noalias() += m_dgate * cmap(*p.w_gate);
    }
}

// --- backward ---------------------------------------------------------------------------------------------------

void TrainModel::backward() {
    if (!m_have_forward) throw std::logic_error("TrainModel::backward called without a preceding forward");
    m_have_forward = false;
    const auto& c = m_config;
    const int64_t N = int64_t(m_B) * m_T;
    const int d = c.d_model;
    for (auto& [name, t] : m_grads) std::fill(t.data.begin(), t.data.end(), 0.0f);

    softmax_cross_entropy(m_logits, m_targets, m_opt.label_smoothing, m_opt.z_loss, true);  // -> dlogits
    map(*m_g.lm_head).noalias() += m_logits.transpose() * m_hf;
    m_dx.noalias() = m_logits * cmap(*m_p.lm_head);
    if (c.final_norm)
        norm_backward(c.norm, m_dx.data(), m_fn_xhat.data(), m_fn_rstd.data(), m_p.final_norm_w->data.data(),
                      m_dx.data(), m_g.final_norm_w->data.data(),
                      m_g.final_norm_b ? m_g.final_norm_b->data.data() : nullptr, N, d);

    const bool pre = c.norm_placement == NormPlacement::Pre;
    for (int l = c.n_layers - 1; l >= 0; --l) {
        const Layer& p = m_p.layers[l];
        const Layer& g = m_g.layers[l];
        const LayerActs& a = m_acts[l];
        const float* g1 = p.attn_norm_w->data.data();
        const float* g2 = p.ffn_norm_w->data.data();
        float* dg1 = g.attn_norm_w->data.data();
        float* db1 = g.attn_norm_b ? g.attn_norm_b->data.data() : nullptr;
        float* dg2 = g.ffn_norm_w->data.data();
        float* db2 = g.ffn_norm_b ? g.ffn_norm_b->data.data() : nullptr;
        const auto drop = [](MatrixRM& dst, const MatrixRM& src, const MatrixRM& mask) {
            if (mask.size()) dst.array() = src.array() * mask.array();
            else dst = src;
        };
        if (pre) {
            // x_out = x_mid + drop(ffn(norm2(x_mid))); x_mid = x_in + drop(attn(norm1(x_in))).
            drop(m_tmp_d, m_dx, a.resid_mask2);
            ffn_backward(p, g, a, a.n2_out, m_tmp_d, m_dh);
            norm_backward(c.norm, m_dh.data(), a.n2_xhat.data(), a.n2_rstd.data(), g2, m_dh.data(), dg2, db2, N, d);
            m_dx += m_dh;
            drop(m_tmp_d, m_dx, a.resid_mask1);
            attention_backward(p, g, a, a.n1_out, m_tmp_d, m_dh);
            norm_backward(c.norm, m_dh.data(), a.n1_xhat.data(), a.n1_rstd.data(), g1, m_dh.data(), dg1, db1, N, d);
            m_dx += m_dh;
        } else {
            // x_out = norm2(n1 + drop(ffn(n1))); n1 = norm1(x_in + drop(attn(x_in))).
            norm_backward(c.norm, m_dx.data(), a.n2_xhat.data(), a.n2_rstd.data(), g2, m_dx.data(), dg2, db2, N, d);
            drop(m_tmp_d, m_dx, a.resid_mask2);
            ffn_backward(p, g, a, a.n1_out, m_tmp_d, m_dh);
            m_dx += m_dh;
            norm_backward(c.norm, m_dx.data(), a.n1_xhat.data(), a.n1_rstd.data(), g1, m_dx.data(), dg1, db1, N, d);
            drop(m_tmp_d, m_dx, a.resid_mask1);
            attention_backward(p, g, a, a.x_in, m_tmp_d, m_dh);
            m_dx += m_dh;
        }
    }

    // Embeddings.
    const float emb_scale = c.scale_embeddings ? std::sqrt(float(d)) : 1.0f;
    MapRM dE = map(*m_g.tok_emb);
    for (int64_t r = 0; r < N; ++r) {
        dE.row(m_inputs[r]) += m_dx.row(r) * emb_scale;
        if (c.position == PositionKind::Learned) map(*m_g.pos_emb).row(int(r % m_T)) += m_dx.row(r);
    }
}

}  // namespace ts::train
