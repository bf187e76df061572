// TrainModel: parameter binding, buffers per batch shape, embeddings, the decoder-only and encoder–decoder training
// forwards (embeddings, stacks, LM head, loss) and the backward pass through them. The layer stacks live in
// train_stack.cpp, attention in train_attention.cpp.
#include "core/train/train_model.h"

#include "core/kernels/ops.h"
#include "core/train/train_util.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace ts::train {

namespace {
// Dropout sites of the embeddings (the stacks use site_base + layer * site_stride + kind).
constexpr uint64_t kEncSiteBase = uint64_t(1) << 32;
constexpr uint64_t kEmbedSiteBase = uint64_t(1) << 33;
}  // namespace

// --- construction -----------------------------------------------------------------------------------------------

TrainModel::TrainModel(ModelConfig config, WeightMap params, GradMode mode)
    : m_config(std::move(config)), m_params(std::move(params)), m_param_grads(mode == GradMode::Params) {
    m_config.validate();
    if (const std::string why = unsupported(m_config); !why.empty()) throw std::invalid_argument(why);
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
    for (const auto& [name, t] : m_params)
        if (m_param_grads || t.shape.size() == 1) m_grads.emplace(name, Tensor(t.shape));
    m_p = bind(m_params);
    m_g = bind(m_grads);
    if (m_config.position == PositionKind::Sinusoidal)
        m_sin_table = sinusoidal_table(m_config.max_seq_len, m_config.d_model, m_config.sinusoidal_base);
    if (m_config.position == PositionKind::RoPE)
        m_rope = make_rope_tables(m_config.max_seq_len, m_config.d_head(), m_config.rope_theta, m_config.rope_layout);
    const bool seq2seq = m_config.arch == Arch::EncoderDecoder;
    m_dec.site_stride = seq2seq ? 8 : 4;  // decoder-only keeps its historical sites l*4 + {0, 1, 2}
    m_enc.site_stride = 8;
    m_enc.site_base = kEncSiteBase;
}

std::string TrainModel::unsupported(const ModelConfig& c) {
    if (c.arch == Arch::EncoderOnly)
        return std::string("TrainModel trains decoder-only and encoder-decoder models; config arch is '") +
            to_string(c.arch) + "'";
    // The switches of the Hugging Face families (core/model/model_config.h) that have no backward pass here.
    const std::pair<bool, const char*> switches[] = {
        {c.parallel_residual, "parallel_residual"},
        {c.rotary_dim > 0 && c.rotary_dim != c.d_head(), "partial rotary (rotary_dim)"},
        {c.embed_norm, "embed_norm"},
        {c.relative_attention_bias, "relative_attention_bias"},
        {c.final_logits_bias, "final_logits_bias"},
        {c.scale_lm_head, "scale_lm_head"},
        {c.enc_pos_emb, "enc_pos_emb"},
        {c.sinusoidal_layout != SinusoidalLayout::Interleaved, "sinusoidal_layout half_split"},
        {c.mlm_head, "mlm_head"},
        {c.type_vocab_size > 0, "token-type embeddings (type_vocab_size)"},
        {c.head_dim > 0 && int64_t(c.head_dim) * c.n_heads != c.d_model, "head_dim * n_heads != d_model"},
    };
    for (const auto& [on, what] : switches)
        if (on) return std::string("TrainModel does not train models with ") + what;
    return "";
}

TrainModel::Refs TrainModel::bind(WeightMap& w) {
    const auto find = [&w](const std::string& name) -> Tensor* {
        const auto it = w.find(name);
        return it == w.end() ? nullptr : &it->second;
    };
    const auto norm = [&find](const std::string& p) { return NormRefs{find(p + ".weight"), find(p + ".bias")}; };
    const auto attn = [&find](const std::string& p) {
        return AttnRefs{find(p + ".wq"), find(p + ".wk"), find(p + ".wv"), find(p + ".wo"),
                        find(p + ".bq"), find(p + ".bk"), find(p + ".bv"), find(p + ".bo"),
                        find(p + ".q_norm.weight"), find(p + ".k_norm.weight")};
    };
    const auto stack = [&](const std::string& name, int n_layers, bool cross) {
        StackRefs s;
        for (int i = 0; i < n_layers; ++i) {
            const std::string p = name + "." + std::to_string(i) + ".";
            Layer l;
            l.attn_norm = norm(p + "attn_norm");
            l.attn = attn(p + "attn");
            if (cross) {
                l.cross_norm = norm(p + "cross_norm");
                l.cross = attn(p + "cross_attn");
            }
            l.ffn_norm = norm(p + "ffn_norm");
            l.ffn = FfnRefs{find(p + "ffn.w_up"), find(p + "ffn.w_gate"), find(p + "ffn.w_down"),
                            find(p + "ffn.b_up"), find(p + "ffn.b_down")};
            s.layers.push_back(l);
        }
        s.final_norm = norm(name + ".final_norm");
        return s;
    };
    Refs r;
    r.tok_emb = find("tok_emb.weight");
    r.pos_emb = find("pos_emb.weight");
    r.lm_head = m_config.tie_embeddings ? r.tok_emb : find("lm_head.weight");
    const bool seq2seq = m_config.arch == Arch::EncoderDecoder;
    if (seq2seq) r.enc = stack("enc", m_config.n_enc_layers, false);
    r.dec = stack("dec", m_config.n_layers, seq2seq);
    return r;
}

void TrainModel::ensure_stack(Stack& s, int n_layers, int B, int T, int S) {
    if (B == s.B && T == s.T && S == s.S && int(s.acts.size()) == n_layers) return;
    const auto& c = m_config;
    const int64_t N = int64_t(B) * T, NS = int64_t(B) * S;
    const int d = c.d_model, H = c.n_heads, K = c.n_kv_heads, D = c.d_head(), F = c.d_ff;
    s.B = B;
    s.T = T;
    s.S = S;
    const auto size_attn = [&](AttnActs& a, AttnScratch& scr, int64_t Nq, int64_t Nk, int Tq, int Tk) {
        a.q.resize(Nq, H * D);
        a.k.resize(Nk, K * D);
        a.v.resize(Nk, K * D);
        if (c.qk_norm) {
            a.q_hat.resize(Nq * H, D);
            a.k_hat.resize(Nk * K, D);
            a.q_rstd.resize(Nq * H);
            a.k_rstd.resize(Nk * K);
        }
        a.probs.resize(int64_t(B) * H * Tq, Tk);
        a.att.resize(Nq, H * D);
        scr.dq.resize(Nq, H * D);
        scr.dk.resize(Nk, K * D);
        scr.dv.resize(Nk, K * D);
        scr.datt.resize(Nq, H * D);
    };
    const auto size_sub = [&](SubActs& sa) {
        sa.in.resize(N, d);
        sa.xhat.resize(N, d);
        sa.rstd.resize(N);
    };
    s.acts.resize(n_layers);
    for (auto& a : s.acts) {
        size_sub(a.self_sub);
        size_sub(a.ffn_sub);
        size_attn(a.self, s.self_scr, N, N, T, T);
        if (S > 0) {
            size_sub(a.cross_sub);
            size_attn(a.cross, s.cross_scr, N, NS, T, S);
        }
        a.up.resize(N, F);
        if (is_gated(c.activation)) a.gate.resize(N, F);
        a.act.resize(N, F);
    }
    s.x.resize(N, d);
    s.fn_xhat.resize(N, d);
    s.out.resize(N, d);
    s.fn_rstd.resize(N);
    s.y.resize(N, d);
    s.dx.resize(N, d);
    s.dy.resize(N, d);
    s.dh.resize(N, d);
    s.dup.resize(N, F);
    s.dgate.resize(N, F);
    s.dact.resize(N, F);
}

void TrainModel::check_ids(std::span<const int> ids, const char* what) const {
    for (size_t i = 0; i < ids.size(); ++i)
        if (ids[i] < 0 || ids[i] >= m_config.vocab_size)
            throw std::invalid_argument(std::string("TrainModel::forward: ") + what + " token id " +
                                        std::to_string(ids[i]) + " at index " + std::to_string(i) + " outside [0, " +
                                        std::to_string(m_config.vocab_size) + ")");
}

// --- embeddings -------------------------------------------------------------------------------------------------

void TrainModel::embed_forward(Stack& s, float p, uint64_t key) {
    const auto& c = m_config;
    const int64_t N = int64_t(s.B) * s.T;
    const float emb_scale = c.embedding_scale();
    const ConstMapRM E = cmap(*m_p.tok_emb);
    const MatrixRM* given = m_input_emb[&s == &m_enc ? 1 : 0];
    if (given && (given->rows() != N || given->cols() != c.d_model))
        throw std::invalid_argument("TrainModel::forward: the input embeddings are " + std::to_string(given->rows()) +
                                    "x" + std::to_string(given->cols()) + ", the batch needs " + std::to_string(N) +
                                    "x" + std::to_string(c.d_model));
    for (int64_t r = 0; r < N; ++r) {
        const int t = int(r % s.T);
        if (given) s.x.row(r) = given->row(r);
        else s.x.row(r) = E.row(s.ids[r]) * emb_scale;
        if (c.position == PositionKind::Learned) s.x.row(r) += cmap(*m_p.pos_emb).row(t);
        else if (c.position == PositionKind::Sinusoidal) s.x.row(r) += m_sin_table.row(t);
    }
    if (p > 0.0f) {
        s.emb_mask.resize(N, c.d_model);
        dropout_mask(s.emb_mask.data(), s.emb_mask.size(), p, key);
        s.x.array() *= s.emb_mask.array();
    } else {
        s.emb_mask.resize(0, 0);
    }
}

void TrainModel::embed_backward(Stack& s) {
    const auto& c = m_config;
    const int64_t N = int64_t(s.B) * s.T;
    if (s.emb_mask.size()) s.dx.array() *= s.emb_mask.array();
    if (!m_param_grads || m_input_emb[&s == &m_enc ? 1 : 0]) return;  // no table gradient wanted, or none to take
    const float emb_scale = c.embedding_scale();
    MapRM dE = map(*m_g.tok_emb);
    for (int64_t r = 0; r < N; ++r) {
        dE.row(s.ids[r]) += s.dx.row(r) * emb_scale;
        if (c.position == PositionKind::Learned) map(*m_g.pos_emb).row(int(r % s.T)) += s.dx.row(r);
    }
}

// --- forward ----------------------------------------------------------------------------------------------------

StepLoss TrainModel::forward(std::span<const int> inputs, std::span<const int> targets, int B, int T,
                             const StepOptions& opt) {
    const auto& c = m_config;
    if (c.arch != Arch::DecoderOnly)
        throw std::invalid_argument("TrainModel::forward(inputs, targets): the model is encoder-decoder; pass a "
                                    "PairBatch");
    if (B <= 0 || T <= 0) throw std::invalid_argument("TrainModel::forward: batch and seq_len must be positive");
    if (T > c.max_seq_len && c.position != PositionKind::None)
        throw std::invalid_argument("TrainModel::forward: seq_len " + std::to_string(T) + " exceeds max_seq_len " +
                                    std::to_string(c.max_seq_len));
    const int64_t N = int64_t(B) * T;
    if (int64_t(inputs.size()) != N || int64_t(targets.size()) != N)
        throw std::invalid_argument("TrainModel::forward: expected " + std::to_string(N) + " inputs and targets, got " +
                                    std::to_string(inputs.size()) + " and " + std::to_string(targets.size()));
    check_ids(inputs, "input");
    ensure_stack(m_dec, c.n_layers, B, T, 0);
    m_dec.ids.assign(inputs.begin(), inputs.end());
    m_dec.key_pad.clear();
    m_dec.self_geom = AttnGeom{B, T, T, true, nullptr, c.position == PositionKind::RoPE, 0};
    m_targets.assign(targets.begin(), targets.end());
    m_opt = opt;
    m_seq2seq = false;
    embed_forward(m_dec, 0.0f, 0);
    stack_forward(m_p.dec, m_dec, nullptr);
    return finish_forward(opt);
}

StepLoss TrainModel::forward(const PairBatch& b, const StepOptions& opt) {
    const auto& c = m_config;
    if (c.arch != Arch::EncoderDecoder)
        throw std::invalid_argument(std::string("TrainModel::forward(PairBatch): the model is ") + to_string(c.arch) +
                                    ", not encoder_decoder");
    if (b.B <= 0 || b.S <= 0 || b.T <= 0)
        throw std::invalid_argument("TrainModel::forward: B, S and T must be positive, got " + std::to_string(b.B) +
                                    ", " + std::to_string(b.S) + ", " + std::to_string(b.T));
    if (std::max(b.S, b.T) > c.max_seq_len && c.position != PositionKind::None)
        throw std::invalid_argument("TrainModel::forward: source length " + std::to_string(b.S) + " or target length " +
                                    std::to_string(b.T) + " exceeds max_seq_len " + std::to_string(c.max_seq_len));
    const size_t NS = size_t(b.B) * b.S, NT = size_t(b.B) * b.T;
    const auto expect = [](const char* what, size_t got, size_t want, bool optional) {
        if (got != want && !(optional && got == 0))
            throw std::invalid_argument(std::string("TrainModel::forward: PairBatch.") + what + " holds " +
                                        std::to_string(got) + " values, expected " + std::to_string(want));
    };
    expect("src", b.src.size(), NS, false);
    expect("tgt", b.tgt.size(), NT, false);
    expect("targets", b.targets.size(), NT, false);
    expect("src_pad", b.src_pad.size(), NS, true);
    expect("tgt_pad", b.tgt_pad.size(), NT, true);
    check_ids(b.src, "source");
    check_ids(b.tgt, "target");
    ensure_stack(m_enc, c.n_enc_layers, b.B, b.S, 0);
    ensure_stack(m_dec, c.n_layers, b.B, b.T, b.S);
    m_enc.ids = b.src;
    m_enc.key_pad = b.src_pad;
    m_dec.ids = b.tgt;
    m_dec.key_pad = b.tgt_pad;
    const uint8_t* src_pad = m_enc.key_pad.empty() ? nullptr : m_enc.key_pad.data();
    const uint8_t* tgt_pad = m_dec.key_pad.empty() ? nullptr : m_dec.key_pad.data();
    const bool rope = c.position == PositionKind::RoPE;
    m_enc.self_geom = AttnGeom{b.B, b.S, b.S, false, src_pad, rope, 0};
    m_dec.self_geom = AttnGeom{b.B, b.T, b.T, true, tgt_pad, rope, 0};
    m_dec.cross_geom = AttnGeom{b.B, b.T, b.S, false, src_pad, false, 0};  // no RoPE across sequences (as inference)
    m_targets = b.targets;
    m_opt = opt;
    m_seq2seq = true;
    embed_forward(m_enc, opt.resid_dropout, rng_key(opt.seed, opt.step, kEmbedSiteBase));
    stack_forward(m_p.enc, m_enc, nullptr);
    embed_forward(m_dec, opt.resid_dropout, rng_key(opt.seed, opt.step, kEmbedSiteBase + 1));
    stack_forward(m_p.dec, m_dec, &m_enc);
    return finish_forward(opt);
}

StepLoss TrainModel::finish_forward(const StepOptions& opt) {
    LossParts lp;
    if (opt.target_rows_only) {
        m_target_rows.clear();
        for (size_t r = 0; r < m_targets.size(); ++r)
            if (m_targets[r] != -1) m_target_rows.push_back(int64_t(r));
        m_target_out.resize(int64_t(m_target_rows.size()), m_config.d_model);
        m_target_labels.resize(m_target_rows.size());
        for (size_t i = 0; i < m_target_rows.size(); ++i) {
            m_target_out.row(int64_t(i)) = m_dec.out.row(m_target_rows[i]);
            m_target_labels[i] = m_targets[size_t(m_target_rows[i])];
        }
        product(m_logits, m_target_out, cmap(*m_p.lm_head).transpose(), false);
        lp = softmax_cross_entropy(m_logits, m_target_labels, opt.label_smoothing, opt.z_loss, false);
    } else {
        product(m_logits, m_dec.out, cmap(*m_p.lm_head).transpose(), false);
        lp = softmax_cross_entropy(m_logits, m_targets, opt.label_smoothing, opt.z_loss, false);
    }
    m_have_forward = true;
    return StepLoss{float(lp.ce + lp.z), float(lp.ce), float(lp.nll), lp.count};
}

// --- backward ---------------------------------------------------------------------------------------------------

void TrainModel::backward() {
    if (!m_have_forward) throw std::logic_error("TrainModel::backward called without a preceding forward");
    softmax_cross_entropy(m_logits, m_opt.target_rows_only ? m_target_labels : m_targets, m_opt.label_smoothing,
                          m_opt.z_loss, true);  // -> dlogits
    backward_from_logits();
}

void TrainModel::backward(const MatrixRM& dlogits) {
    if (!m_have_forward) throw std::logic_error("TrainModel::backward called without a preceding forward");
    if (dlogits.rows() != m_logits.rows() || dlogits.cols() != m_logits.cols())
        throw std::invalid_argument("TrainModel::backward: dlogits is " + std::to_string(dlogits.rows()) + "x" +
                                    std::to_string(dlogits.cols()) + ", the logits are " +
                                    std::to_string(m_logits.rows()) + "x" + std::to_string(m_logits.cols()));
    m_logits = dlogits;
    backward_from_logits();
}

void TrainModel::set_input_embeddings(const MatrixRM* dec, const MatrixRM* enc) {
    m_input_emb[0] = dec;
    m_input_emb[1] = enc;
}

void TrainModel::backward_from_logits() {
    m_have_forward = false;
    for (auto& [name, t] : m_grads) std::fill(t.data.begin(), t.data.end(), 0.0f);
    if (m_opt.target_rows_only) {
        if (m_param_grads) product(map(*m_g.lm_head), m_logits.transpose(), m_target_out, true);
        MatrixRM d_rows;
        product(d_rows, m_logits, cmap(*m_p.lm_head), false);
        m_dout.setZero(m_dec.out.rows(), m_config.d_model);
        for (size_t i = 0; i < m_target_rows.size(); ++i) m_dout.row(m_target_rows[i]) = d_rows.row(int64_t(i));
    } else {
        if (m_param_grads) product(map(*m_g.lm_head), m_logits.transpose(), m_dec.out, true);
        product(m_dout, m_logits, cmap(*m_p.lm_head), false);
    }
    if (m_seq2seq) {
        m_dmem.setZero(int64_t(m_enc.B) * m_enc.T, m_config.d_model);
        stack_backward(m_p.dec, m_g.dec, m_dec, m_dout, &m_enc, &m_dmem);
        embed_backward(m_dec);
        stack_backward(m_p.enc, m_g.enc, m_enc, m_dmem, nullptr, nullptr);
        embed_backward(m_enc);
    } else {
        stack_backward(m_p.dec, m_g.dec, m_dec, m_dout, nullptr, nullptr);
        embed_backward(m_dec);
    }
}

}  // namespace ts::train
