// TrainModel's layer stacks, forward and backward: each layer is a chain of residual sub-layers (self-attention,
// cross-attention in encoder–decoder decoders, FFN) with pre- or post-norm and residual dropout, then the stack's
// final norm; plus the FFN sub-layer itself. One code path serves the decoder-only decoder, the encoder and the
// encoder–decoder decoder ("Attention Is All You Need" §3.1; torch.nn.TransformerEncoderLayer/DecoderLayer with
// norm_first = false / true).
#include "core/train/train_model.h"

#include "core/train/train_util.h"

namespace ts::train {

namespace {

// Dropout sites within a layer: site_base + layer * site_stride + kind. Decoder-only keeps l*4 + {0, 1, 2}.
enum Site : uint64_t { kSelfProbs = 0, kSelfResid = 1, kFfnResid = 2, kCrossProbs = 3, kCrossResid = 4 };

float* data_or_null(Tensor* t) { return t ? t->data.data() : nullptr; }

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

// One residual sub-layer over the stream x (N, d), in place: pre-norm x += drop(f(norm(x))); post-norm
// x = norm(x + drop(f(x))). Saves the branch input, the norm's xhat/rstd and the dropout mask into `sa`.
// branch(in, out): in (N, d) -> out (N, d), out never aliases in.
template <class Norm, class Sub, class Branch>
void sublayer_forward(const ModelConfig& c, const Norm& n, Sub& sa, MatrixRM& x, MatrixRM& y, float p, uint64_t key,
                      Branch&& branch) {
    const int64_t N = x.rows();
    const int d = int(x.cols());
    if (c.norm_placement == NormPlacement::Pre) {
        norm_forward(c.norm, x.data(), sa.xhat.data(), sa.rstd.data(), sa.in.data(), n.w->data.data(),
                     data_or_null(n.b), N, d, c.norm_eps);
        branch(sa.in, y);
        residual_dropout(y, sa.resid_mask, p, key);
        x += y;
    } else {
        sa.in = x;
        branch(sa.in, y);
        residual_dropout(y, sa.resid_mask, p, key);
        x += y;
        norm_forward(c.norm, x.data(), sa.xhat.data(), sa.rstd.data(), x.data(), n.w->data.data(), data_or_null(n.b),
                     N, d, c.norm_eps);
    }
}

// Backward of sublayer_forward: dx (N, d) = dLoss/d(stream after) -> dLoss/d(stream before), in place.
// branch_backward(dy, din): dLoss/d(branch output) -> dLoss/d(branch input) (overwritten).
template <class Norm, class Sub, class BranchBackward>
void sublayer_backward(const ModelConfig& c, const Norm& n, const Norm& gn, const Sub& sa, MatrixRM& dx, MatrixRM& dy,
                       MatrixRM& dh, BranchBackward&& branch_backward) {
    const int64_t N = dx.rows();
    const int d = int(dx.cols());
    const auto drop = [&sa](MatrixRM& dst, const MatrixRM& src) {
        if (sa.resid_mask.size()) dst.array() = src.array() * sa.resid_mask.array();
        else dst = src;
    };
    if (c.norm_placement == NormPlacement::Pre) {
        drop(dy, dx);
        branch_backward(dy, dh);
        norm_backward(c.norm, dh.data(), sa.xhat.data(), sa.rstd.data(), n.w->data.data(), dh.data(),
                      gn.w->data.data(), data_or_null(gn.b), N, d);
        dx += dh;
    } else {
        norm_backward(c.norm, dx.data(), sa.xhat.data(), sa.rstd.data(), n.w->data.data(), dx.data(),
                      gn.w->data.data(), data_or_null(gn.b), N, d);
        drop(dy, dx);
        branch_backward(dy, dh);
        dx += dh;
    }
}

}  // namespace

// --- stacks -----------------------------------------------------------------------------------------------------

void TrainModel::stack_forward(const StackRefs& p, Stack& s, const Stack* memory) {
    const auto& c = m_config;
    const StepOptions& o = m_opt;
    const int64_t N = int64_t(s.B) * s.T;
    for (size_t l = 0; l < p.layers.size(); ++l) {
        const Layer& w = p.layers[l];
        LayerActs& a = s.acts[l];
        const uint64_t site = s.site_base + l * s.site_stride;
        AttnGeom self_geo = s.self_geom;
        self_geo.site = site + kSelfProbs;
        sublayer_forward(c, w.attn_norm, a.self_sub, s.x, s.y, o.resid_dropout,
                         rng_key(o.seed, o.step, site + kSelfResid), [&](const MatrixRM& in, MatrixRM& out) {
                             attention_forward(w.attn, a.self, self_geo, s.self_scr, in, in, out);
                         });
        if (memory) {
            AttnGeom cross_geo = s.cross_geom;
            cross_geo.site = site + kCrossProbs;
            sublayer_forward(c, w.cross_norm, a.cross_sub, s.x, s.y, o.resid_dropout,
                             rng_key(o.seed, o.step, site + kCrossResid), [&](const MatrixRM& in, MatrixRM& out) {
                                 attention_forward(w.cross, a.cross, cross_geo, s.cross_scr, in, memory->out, out);
                             });
        }
        if (c.d_ff == 0) continue;  // attention-only
        sublayer_forward(c, w.ffn_norm, a.ffn_sub, s.x, s.y, o.resid_dropout,
                         rng_key(o.seed, o.step, site + kFfnResid),
                         [&](const MatrixRM& in, MatrixRM& out) { ffn_forward(w.ffn, a, in, out); });
    }
    if (c.final_norm)
        norm_forward(c.norm, s.x.data(), s.fn_xhat.data(), s.fn_rstd.data(), s.out.data(),
                     p.final_norm.w->data.data(), data_or_null(p.final_norm.b), N, c.d_model, c.norm_eps);
    else
        s.out = s.x;
}

void TrainModel::stack_backward(const StackRefs& p, const StackRefs& g, Stack& s, const MatrixRM& dout,
                                const Stack* memory, MatrixRM* dmemory) {
    const auto& c = m_config;
    const int64_t N = int64_t(s.B) * s.T;
    s.dx = dout;
    if (c.final_norm)
        norm_backward(c.norm, s.dx.data(), s.fn_xhat.data(), s.fn_rstd.data(), p.final_norm.w->data.data(),
                      s.dx.data(), g.final_norm.w->data.data(), data_or_null(g.final_norm.b), N, c.d_model);
    for (int l = int(p.layers.size()) - 1; l >= 0; --l) {
        const Layer& w = p.layers[l];
        const Layer& gw = g.layers[l];
        const LayerActs& a = s.acts[l];
        if (c.d_ff > 0)
            sublayer_backward(
                c, w.ffn_norm, gw.ffn_norm, a.ffn_sub, s.dx, s.dy, s.dh,
                [&](const MatrixRM& dy, MatrixRM& din) { ffn_backward(w.ffn, gw.ffn, a, s, a.ffn_sub.in, dy, din); });
        if (memory) {
            sublayer_backward(c, w.cross_norm, gw.cross_norm, a.cross_sub, s.dx, s.dy, s.dh,
                              [&](const MatrixRM& dy, MatrixRM& din) {
                                  attention_backward(w.cross, gw.cross, a.cross, s.cross_geom, s.cross_scr,
                                                     a.cross_sub.in, memory->out, dy, din, dmemory);
                              });
        }
        sublayer_backward(c, w.attn_norm, gw.attn_norm, a.self_sub, s.dx, s.dy, s.dh,
                          [&](const MatrixRM& dy, MatrixRM& din) {
                              attention_backward(w.attn, gw.attn, a.self, s.self_geom, s.self_scr, a.self_sub.in,
                                                 a.self_sub.in, dy, din, nullptr);
                          });
    }
}

// --- FFN sub-layer ----------------------------------------------------------------------------------------------

void TrainModel::ffn_forward(const FfnRefs& p, LayerActs& a, const MatrixRM& in, MatrixRM& out) {
    const Activation act = m_config.activation;
    product(a.up, in, cmap(*p.w_up).transpose(), false);
    if (p.b_up) a.up.rowwise() += crow(*p.b_up);
    if (is_gated(act)) {
        product(a.gate, in, cmap(*p.w_gate).transpose(), false);
        activation_forward(act, a.gate.data(), a.act.data(), a.act.size());
        a.act.array() *= a.up.array();
    } else {
        activation_forward(act, a.up.data(), a.act.data(), a.act.size());
    }
    product(out, a.act, cmap(*p.w_down).transpose(), false);
    if (p.b_down) out.rowwise() += crow(*p.b_down);
}

void TrainModel::ffn_backward(const FfnRefs& p, const FfnRefs& g, const LayerActs& a, Stack& s, const MatrixRM& in,
                              const MatrixRM& dout, MatrixRM& din) {
    const Activation act = m_config.activation;
    product(s.dact, dout, cmap(*p.w_down), false);
    if (m_param_grads) product(map(*g.w_down), dout.transpose(), a.act, true);
    if (g.b_down) add_colsum(*g.b_down, dout);
    if (is_gated(act)) {
        // act = f(gate) * up: d up = dact * f(gate); d gate = dact * up * f'(gate).
        activation_forward(act, a.gate.data(), s.dup.data(), s.dup.size());
        s.dup.array() *= s.dact.array();
        s.dgate.array() = s.dact.array() * a.up.array();
        activation_backward(act, a.gate.data(), s.dgate.data(), s.dgate.data(), s.dgate.size());
    } else {
        activation_backward(act, a.up.data(), s.dact.data(), s.dup.data(), s.dup.size());
    }
    if (m_param_grads) product(map(*g.w_up), s.dup.transpose(), in, true);
    if (g.b_up) add_colsum(*g.b_up, s.dup);
    product(din, s.dup, cmap(*p.w_up), false);
    if (is_gated(act)) {
        if (m_param_grads) product(map(*g.w_gate), s.dgate.transpose(), in, true);
        product(din, s.dgate, cmap(*p.w_gate), true);
    }
}

}  // namespace ts::train
