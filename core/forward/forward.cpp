// The model forward pass: embeddings and positions, encoder/decoder stacks of (self-attention, cross-attention,
// FFN) layers with pre- or post-norm, final norm, LM head, KV cache, and the named trace of every intermediate.
// Activation edits (ForwardOptions::edits, core/trace/intervention.h) are applied in place at their points, before the
// trace records them, whether or not capture is on.
//
// Trace names (recorded only when the ForwardOptions::capture filter wants them; T = query positions of this call,
// S = keys attended (T, n_past + T with a KV cache, or the encoder length for cross-attention), Sn = keys/values
// computed by this call (= T for self-attention), H = n_heads, K = n_kv_heads, D = d_head, F = d_ff):
//   tok_emb.out            (T, d_model)  token embeddings (already × sqrt(d_model) when scale_embeddings)
//   pos.out                (T, d_model)  additive positions (Sinusoidal, Learned only)
//   embed.out              (T, d_model)  input of the first layer
//   In forward_seq2seq the encoder's embeddings are "enc.tok_emb.out", "enc.pos.out", "enc.embed.out".
// Per layer, s = enc | dec, i = layer index:
//   s.i.attn_norm.out      (T, d_model)  pre-norm: norm(x), the attention input; post-norm: norm(x + attn(x))
//   s.i.attn.q             (H, T, D)     query projection (+ bias), split into heads
//   s.i.attn.k, s.i.attn.v (K, Sn, D)    key / value projections of this call's positions
//   s.i.attn.q_normed, s.i.attn.k_normed  (H, T, D), (K, Sn, D)  after qk-norm [qk_norm]
//   s.i.attn.q_rot         (H, T, D)     queries after RoPE [RoPE]
//   s.i.attn.k_rot         (K, S, D)     keys after RoPE, all S attended keys (cached ones included) [RoPE]
//   s.i.attn.scores        (H, T, S)     raw Q K^T
//   s.i.attn.position_bias (H, T, S)     T5's relative position bias added to the scores [relative_attention_bias]
//   s.i.attn.scores_scaled (H, T, S)     / sqrt(D) when scale_attn (equal to scores otherwise), + position_bias
//   s.i.attn.scores_masked (H, T, S)     -inf where the mask forbids attending
//   s.i.attn.probs         (H, T, S)     softmax(scores_masked / temperature); fully masked rows are all 0
//   s.i.attn.head_out      (H, T, D)     probs V per head
//   s.i.attn.out           (T, d_model)  concat(head_out) W_o^T + b_o
//   s.i.resid_attn         (T, d_model)  residual stream after the attention sub-layer (parallel_residual: x +
//                                        attn(attn_norm(x)), before the FFN output, which read norm(x), is added)
//   dec.i.cross_norm.out, dec.i.cross_attn.* (same names and shapes, S = encoder length, no RoPE; with a KV cache
//                          cross_attn.k / v are (K, S, D) on the cache's first call and (K, 0, D) after, as
//                          KVCache::cross keeps them),
//   dec.i.resid_cross      [encoder-decoder only]
//   s.i.ffn_norm.out       (T, d_model)  like attn_norm.out
//   s.i.ffn.pre_act        (T, F)        x W_up^T + b_up; gated FFNs: the gate branch x W_gate^T
//   s.i.ffn.up             (T, F)        gated FFNs only: the linear branch x W_up^T + b_up
//   s.i.ffn.post_act       (T, F)        act(pre_act); gated: act(gate) * up
//   s.i.ffn.out            (T, d_model)  post_act W_down^T + b_down
//   s.i.resid_ffn          (T, d_model)  residual stream after the FFN sub-layer (the layer's output)
// After the stacks:
//   enc.out                (S, d_model)  encoder output after enc.final_norm (encoder memory)
//   final_norm.out         (T, d_model)  final hidden states (after the final norm, if the config has one)
//   logits                 (T, vocab)    or (1, vocab) when all_logits = false; absent when !compute_logits
#include "core/kernels/attention.h"
#include "core/model/model.h"
#include "core/kernels/ops.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>
#include <string>

namespace ts {

using detail::AttnParams;
using detail::AttnWeights;
using detail::AttnWorkspace;
using detail::CacheSlot;
using detail::EditList;
using detail::EditPlan;
using detail::EditScope;
using detail::EditSite;
using detail::StackEdits;
using detail::MaskTable;
using detail::TraceSink;

namespace {

struct NormW {
    const Tensor* w = nullptr;
    const Tensor* b = nullptr;
};
struct FfnW {
    const Tensor *w_up = nullptr, *w_gate = nullptr, *w_down = nullptr, *b_up = nullptr, *b_down = nullptr;
};
struct LayerW {
    NormW attn_norm, cross_norm, ffn_norm;
    AttnWeights attn, cross;
    FfnW ffn;
};

NormW norm_weights(const Model& m, const std::string& p) {
    return {&m.weight(p + ".weight"), m.find_weight(p + ".bias")};
}

MatrixRM norm(const ModelConfig& c, const MatrixRM& x, const NormW& n) {
    const std::span<const float> beta = n.b ? std::span<const float>(n.b->data) : std::span<const float>();
    return apply_norm(c.norm, x, std::span<const float>(n.w->data), beta, c.norm_eps);
}

LayerW layer_weights(const Model& m, const std::string& p, bool cross) {
    LayerW l;
    l.attn_norm = norm_weights(m, p + ".attn_norm");
    l.attn = detail::attn_weights(m, p + ".attn");
    if (cross) {
        l.cross_norm = norm_weights(m, p + ".cross_norm");
        l.cross = detail::attn_weights(m, p + ".cross_attn");
    }
    if (m.config().d_ff == 0) return l;  // attention-only: no FFN weights
    l.ffn_norm = norm_weights(m, p + ".ffn_norm");
    l.ffn.w_up = &m.stored_weight(p + ".ffn.w_up");  // matrices as stored (maybe half precision): linear() reads them
    l.ffn.w_gate = m.find_stored_weight(p + ".ffn.w_gate");
    l.ffn.w_down = &m.stored_weight(p + ".ffn.w_down");
    l.ffn.b_up = m.find_weight(p + ".ffn.b_up");
    l.ffn.b_down = m.find_weight(p + ".ffn.b_down");
    return l;
}

struct FfnWorkspace {
    MatrixRM h, up, out;
};

// ws.h <- the FFN's activations of x's rows: act(x W_up^T + b_up), or gated (GLU family, Shazeer 2020)
// act(x W_gate^T) * (x W_up^T + b_up); `sink` (may be null) records ffn.pre_act and ffn.up on the way.
void ffn_activations(const ModelConfig& c, const FfnW& f, const MatrixRM& x, FfnWorkspace& ws, const TraceSink* sink) {
    if (f.w_gate) {
        detail::linear(x, *f.w_gate, nullptr, ws.h);
        if (sink) sink->rec("ffn.pre_act", ws.h);
        detail::linear(x, *f.w_up, f.b_up, ws.up);
        if (sink) sink->rec("ffn.up", ws.up);
        apply_activation_inplace(c.activation, ws.h);
        ws.h.array() *= ws.up.array();
    } else {
        detail::linear(x, *f.w_up, f.b_up, ws.h);
        if (sink) sink->rec("ffn.pre_act", ws.h);
        apply_activation_inplace(c.activation, ws.h);
    }
}

// A long sequence whose FFN intermediates are neither recorded nor edited runs its FFN in blocks of this many rows:
// the (rows, d_ff) workspaces are then a block, not the sequence (8k tokens of a 0.5B model: ~300 MB less at the
// peak). Rows are independent and every block runs the same kernels, so ws.out is the same as the whole product's.
constexpr int kFfnRowBlock = 512;

// xn: (T, d_model) -> ws.out (T, d_model): ffn_activations, then · W_down^T + b_down.
// Edits of ffn.post_act / ffn.out are applied before the trace records them.
void ffn_forward(const ModelConfig& c, const FfnW& f, const MatrixRM& xn, FfnWorkspace& ws, const TraceSink& sink,
                 EditList post_act_edits, EditList out_edits, int start_pos, bool act_only = false) {
    const Eigen::Index T = xn.rows();
    if (!act_only && post_act_edits.empty() && T > 2 * kFfnRowBlock && !sink.wants("ffn.pre_act") &&
        !sink.wants("ffn.up") && !sink.wants("ffn.post_act")) {
        MatrixRM xb, ob;
        ws.out.resize(T, c.d_model);
        for (Eigen::Index r0 = 0; r0 < T; r0 += kFfnRowBlock) {
            const Eigen::Index n = std::min<Eigen::Index>(kFfnRowBlock, T - r0);
            xb = xn.middleRows(r0, n);
            ffn_activations(c, f, xb, ws, nullptr);
            detail::linear(ws.h, *f.w_down, f.b_down, ob);
            ws.out.middleRows(r0, n) = ob;
        }
        if (!out_edits.empty()) detail::apply_row_edits(out_edits, start_pos, ws.out);
        sink.rec("ffn.out", ws.out);
        return;
    }
    ffn_activations(c, f, xn, ws, &sink);
    if (!post_act_edits.empty()) detail::apply_row_edits(post_act_edits, start_pos, ws.h);
    sink.rec("ffn.post_act", ws.h);
    if (act_only) return;  // ForwardOptions::stop_at_ffn_act
    detail::linear(ws.h, *f.w_down, f.b_down, ws.out);
    if (!out_edits.empty()) detail::apply_row_edits(out_edits, start_pos, ws.out);
    sink.rec("ffn.out", ws.out);
}

// Runs the layers of one stack over x (T, d_model) in place. memory != nullptr adds cross-attention. `ed` holds this
// stack's activation edits, applied where the trace would record each point (so the trace shows edited values).
// stop_layer >= 0: return right after that layer's ffn.post_act (ForwardOptions::stop_at_ffn_act; x is then left
// mid-layer). Returns whether it stopped.
bool run_layers(const Model& m, const std::string& stack, int n_layers, MatrixRM& x, const MatrixRM* memory,
                const MaskSpec& self_mask, const ForwardOptions& opt, Trace& trace, KVCache* cache, int start_pos,
                const StackEdits& ed, int stop_layer) {
    const ModelConfig& c = m.config();
    const bool pre = c.norm_placement == NormPlacement::Pre;
    const int T = static_cast<int>(x.rows());
    const int n_past = cache ? cache->n_past : 0;
    const int S = n_past + T;
    if (cache) detail::reserve_cache(*cache, n_layers, c.n_kv_heads, c.d_head(), S);

    // Keys of this call sit at positions start_pos.., cached keys at 0..n_past-1 (then start_pos == n_past).
    const MaskTable self_table = detail::build_mask(self_mask, T, S, start_pos, start_pos - n_past);
    // The model's own sliding window (Mistral, Qwen2) narrows its causal mask in the layers that use it; a mask the
    // caller chose (none, a custom band, another window) is left as asked.
    const bool slides = c.sliding_window > 0 && self_mask.kind == MaskKind::Causal && stack == "dec";
    MaskTable window_table;
    if (slides) {
        MaskSpec w = self_mask;
        w.kind = MaskKind::SlidingWindow;
        w.window = c.sliding_window;
        window_table = detail::build_mask(w, T, S, start_pos, start_pos - n_past);
    }
    MaskTable cross_table;
    if (memory) {
        MaskSpec pad;
        pad.kind = MaskKind::None;
        pad.key_padding = opt.enc_mask.key_padding;
        cross_table = detail::build_mask(pad, T, static_cast<int>(memory->rows()), 0, 0);
    }

    AttnParams ap;
    ap.n_heads = c.n_heads;
    ap.n_kv_heads = c.n_kv_heads;
    ap.d_head = c.d_head();
    ap.scale = c.scale_attn;
    ap.temperature = opt.temperature;
    ap.rope = c.position == PositionKind::RoPE;
    ap.rope_theta = c.rope_theta;
    ap.rope_layout = c.rope_layout;
    ap.rotary_dim = c.rotary_dim;
    ap.norm_eps = c.norm_eps;
    ap.q_start = start_pos;
    AttnParams cross_ap = ap;
    cross_ap.rope = false;
    cross_ap.q_start = 0;
    if (c.relative_attention_bias) {  // T5: one bias table per stack, shared by its layers; none in cross-attention
        const Tensor& table = m.weight(stack + ".relative_attention_bias");
        auto bias = std::make_shared<MatrixRM>();
        // Queries at n_past.. against keys 0..S-1 with a cache; without one, both start at start_pos (same offsets).
        relative_position_bias(table.data.data(), c.relative_attention_num_buckets, c.n_heads, T, S, n_past,
                               stack == "enc", c.relative_attention_max_distance, *bias);
        ap.position_bias = std::move(bias);
    }

    // Scratch reused across forwards on the same thread: resizing to an equal or smaller shape keeps the buffer, so
    // a steady stream of forwards (the UI worker) touches no fresh pages. Not re-entered: stacks run one at a time.
    struct Scratch {
        AttnWorkspace self_ws, cross_ws;
        FfnWorkspace ffn_ws;
        MatrixRM xn;
    };
    thread_local Scratch scratch;
    AttnWorkspace& self_ws = scratch.self_ws;
    AttnWorkspace& cross_ws = scratch.cross_ws;
    FfnWorkspace& ffn_ws = scratch.ffn_ws;
    MatrixRM& xn = scratch.xn;
    TraceSink sink{&trace, trace.filter().captures_anything(), {}};
    TraceSink attn_sink = sink, cross_sink = sink;

    // With a cache, the memory's cross-attention keys/values are projected on the cache's first call (into
    // cross_new) and read back on later calls, which project nothing (no_rows as the key/value input).
    std::shared_ptr<CrossKV> cross_new;
    const int S_mem = memory ? static_cast<int>(memory->rows()) : 0;
    const MatrixRM no_rows(0, c.d_model);
    if (cache && memory) {
        if (!cache->cross) {
            cross_new = std::make_shared<CrossKV>();
            cross_new->k.assign(n_layers, MatrixRM(int64_t(c.n_kv_heads) * S_mem, c.d_head()));
            cross_new->v = cross_new->k;
            cross_new->S = S_mem;
        } else if (cache->cross->S != S_mem || static_cast<int>(cache->cross->k.size()) != n_layers) {
            throw std::invalid_argument("KV cache holds cross-attention keys of a memory of " +
                                        std::to_string(cache->cross->S) + " positions, this memory has " +
                                        std::to_string(S_mem) + " (reset() the cache for another source)");
        }
    }

    for (int i = 0; i < n_layers; ++i) {
        const std::string lp = stack + "." + std::to_string(i);
        const LayerW w = layer_weights(m, lp, memory != nullptr);
        if (sink.on) {
            sink.prefix = lp + ".";
            attn_sink.prefix = lp + ".attn.";
            cross_sink.prefix = lp + ".cross_attn.";
        }
        CacheSlot slot;
        if (cache) slot = CacheSlot{&cache->k[i], &cache->v[i], n_past, cache->capacity};
        const detail::AttnEdits self_edits{ed.at(i, EditSite::AttnHeadOut), ed.at(i, EditSite::AttnOut), start_pos};
        const MaskTable& layer_mask = slides && i >= c.sliding_window_from_layer ? window_table : self_table;
        const auto edit_resid = [&](EditSite site) {
            if (const EditList e = ed.at(i, site); !e.empty()) detail::apply_row_edits(e, start_pos, x);
        };

        const bool stop_here = stop_layer == i;
        // --- parallel residual (GPT-J / GPT-NeoX): both sub-layers read the same x, their outputs are summed ---
        if (c.parallel_residual) {
            xn = norm(c, x, w.attn_norm);
            sink.rec("attn_norm.out", xn);
            detail::attention_forward(w.attn, ap, xn, xn, layer_mask, cache ? &slot : nullptr, self_ws, attn_sink,
                                      self_edits);
            xn = norm(c, x, w.ffn_norm);
            sink.rec("ffn_norm.out", xn);
            ffn_forward(c, w.ffn, xn, ffn_ws, sink, ed.at(i, EditSite::FfnPostAct), ed.at(i, EditSite::FfnOut),
                        start_pos, stop_here);
            if (stop_here) return true;
            x += self_ws.out;  // resid_attn: x + attn(x), a partial sum here (the FFN did not see it)
            edit_resid(EditSite::ResidAttn);
            sink.rec("resid_attn", x);
            x += ffn_ws.out;
            edit_resid(EditSite::ResidFfn);
            sink.rec("resid_ffn", x);
            if (opt.on_layer) opt.on_layer(stack, i, trace);
            continue;
        }

        // --- self-attention ---
        if (pre) {
            xn = norm(c, x, w.attn_norm);
            sink.rec("attn_norm.out", xn);
            detail::attention_forward(w.attn, ap, xn, xn, layer_mask, cache ? &slot : nullptr, self_ws, attn_sink,
                                      self_edits);
            x += self_ws.out;
        } else {
            detail::attention_forward(w.attn, ap, x, x, layer_mask, cache ? &slot : nullptr, self_ws, attn_sink,
                                      self_edits);
            x += self_ws.out;
            x = norm(c, x, w.attn_norm);
            sink.rec("attn_norm.out", x);
        }
        edit_resid(EditSite::ResidAttn);
        sink.rec("resid_attn", x);

        // --- cross-attention over the encoder memory ---
        if (memory) {
            const detail::AttnEdits cross_edits{ed.at(i, EditSite::CrossHeadOut), ed.at(i, EditSite::CrossOut),
                                                start_pos};
            const MatrixRM* kv_in = memory;
            CacheSlot cross_slot;
            if (cache) {
                CrossKV& kv = cross_new ? *cross_new : *cache->cross;
                cross_slot = CacheSlot{&kv.k[i], &kv.v[i], cross_new ? 0 : S_mem, S_mem};
                if (!cross_new) kv_in = &no_rows;
            }
            const CacheSlot* cross_cache = cache ? &cross_slot : nullptr;
            if (pre) {
                xn = norm(c, x, w.cross_norm);
                sink.rec("cross_norm.out", xn);
                detail::attention_forward(w.cross, cross_ap, xn, *kv_in, cross_table, cross_cache, cross_ws,
                                          cross_sink, cross_edits);
                x += cross_ws.out;
            } else {
                detail::attention_forward(w.cross, cross_ap, x, *kv_in, cross_table, cross_cache, cross_ws,
                                          cross_sink, cross_edits);
                x += cross_ws.out;
                x = norm(c, x, w.cross_norm);
                sink.rec("cross_norm.out", x);
            }
            edit_resid(EditSite::ResidCross);
            sink.rec("resid_cross", x);
        }

        // --- feed-forward (none in an attention-only model: resid_ffn is the layer's output all the same) ---
        if (c.d_ff == 0) {
            edit_resid(EditSite::ResidFfn);
            sink.rec("resid_ffn", x);
            if (opt.on_layer) opt.on_layer(stack, i, trace);
            continue;
        }
        const EditList post_act_edits = ed.at(i, EditSite::FfnPostAct), ffn_out_edits = ed.at(i, EditSite::FfnOut);
        if (pre) {
            xn = norm(c, x, w.ffn_norm);
            sink.rec("ffn_norm.out", xn);
            ffn_forward(c, w.ffn, xn, ffn_ws, sink, post_act_edits, ffn_out_edits, start_pos, stop_here);
            if (stop_here) return true;
            x += ffn_ws.out;
        } else {
            ffn_forward(c, w.ffn, x, ffn_ws, sink, post_act_edits, ffn_out_edits, start_pos, stop_here);
            if (stop_here) return true;
            x += ffn_ws.out;
            x = norm(c, x, w.ffn_norm);
            sink.rec("ffn_norm.out", x);
        }
        edit_resid(EditSite::ResidFfn);
        sink.rec("resid_ffn", x);
        if (opt.on_layer) opt.on_layer(stack, i, trace);
    }
    if (cache) cache->n_past += T;
    if (cross_new) cache->cross = std::move(cross_new);
    return false;
}

void check_input(const ModelConfig& c, const MatrixRM& x, const char* what) {
    if (x.rows() == 0) throw std::invalid_argument(std::string(what) + ": empty input (0 positions)");
    if (x.cols() != c.d_model)
        throw std::invalid_argument(std::string(what) + ": input has " + std::to_string(x.cols()) +
                                    " columns, expected d_model = " + std::to_string(c.d_model));
}

MatrixRM final_norm(const Model& m, const std::string& stack, MatrixRM x) {
    if (!m.config().final_norm) return x;
    return norm(m.config(), x, norm_weights(m, stack + ".final_norm"));
}

// ForwardOptions::stop_at_ffn_act checked against a stack of n_layers layers.
void check_stop(const ModelConfig& c, const ForwardOptions& opt, int n_layers, bool cached) {
    if (opt.stop_at_ffn_act < 0) return;
    if (opt.stop_at_ffn_act >= n_layers)
        throw std::invalid_argument("forward: stop_at_ffn_act " + std::to_string(opt.stop_at_ffn_act) +
                                    " outside the stack's " + std::to_string(n_layers) + " layers");
    if (c.d_ff == 0) throw std::invalid_argument("forward: stop_at_ffn_act on an attention-only model (d_ff = 0)");
    if (cached) throw std::invalid_argument("forward: stop_at_ffn_act with a KV cache");
}

// Runs the encoder stack (and its final norm) over embeddings x: (S, d_model). Empty when it stopped at
// opt.stop_at_ffn_act.
MatrixRM run_encoder(const Model& m, const MatrixRM& x, const ForwardOptions& opt, Trace& trace, const StackEdits& ed) {
    const ModelConfig& c = m.config();
    MatrixRM h = x;
    const int n = c.arch == Arch::EncoderDecoder ? c.n_enc_layers : c.n_layers;
    check_stop(c, opt, n, false);
    if (run_layers(m, "enc", n, h, nullptr, opt.enc_mask, opt, trace, nullptr, 0, ed, opt.stop_at_ffn_act))
        return MatrixRM();
    h = final_norm(m, "enc", std::move(h));
    if (trace.filter().captures_anything()) trace.record("enc.out", h);
    return h;
}

MatrixRM run_decoder(const Model& m, const MatrixRM& x, const MatrixRM* memory, const ForwardOptions& opt,
                     Trace& trace, KVCache* cache, int start_pos, const StackEdits& ed) {
    MatrixRM h = x;
    // An encoder–decoder stops in its encoder (forward_seq2seq then runs no decoder).
    const int stop = memory ? -1 : opt.stop_at_ffn_act;
    if (!memory) check_stop(m.config(), opt, m.config().n_layers, cache != nullptr);
    if (run_layers(m, "dec", m.config().n_layers, h, memory, opt.self_mask, opt, trace, cache, start_pos, ed, stop))
        return MatrixRM();
    h = final_norm(m, "dec", std::move(h));
    if (trace.filter().captures_anything()) trace.record("final_norm.out", h);
    return h;
}

void check_ids(const std::vector<int>& ids, const char* what) {
    if (ids.empty()) throw std::invalid_argument(std::string(what) + ": empty token ids (need at least one token)");
}

}  // namespace

MatrixRM encoder_stack_forward(const Model& m, const MatrixRM& x, const ForwardOptions& opt, Trace& trace) {
    const ModelConfig& c = m.config();
    if (!c.has_encoder())
        throw std::invalid_argument("encoder_stack_forward: model '" + c.name + "' is decoder-only (no encoder)");
    check_input(c, x, "encoder_stack_forward");
    EditScope scope;
    scope.has_enc = true;
    scope.enc_T = static_cast<int>(x.rows());
    const EditPlan plan = detail::plan_edits(c, opt.edits, scope);
    return run_encoder(m, x, opt, trace, plan.enc);
}

MatrixRM decoder_stack_forward(const Model& m, const MatrixRM& x, const MatrixRM* memory, const ForwardOptions& opt,
                               Trace& trace, KVCache* cache, int start_pos) {
    const ModelConfig& c = m.config();
    if (!c.has_decoder())
        throw std::invalid_argument("decoder_stack_forward: model '" + c.name + "' is encoder-only (no decoder)");
    check_input(c, x, "decoder_stack_forward");
    if (c.arch == Arch::EncoderDecoder && !memory)
        throw std::invalid_argument("decoder_stack_forward: encoder-decoder model needs the encoder memory");
    if (c.arch != Arch::EncoderDecoder && memory)
        throw std::invalid_argument("decoder_stack_forward: memory given but decoder-only model '" + c.name +
                                    "' has no cross-attention");
    if (memory && memory->cols() != c.d_model)
        throw std::invalid_argument("decoder_stack_forward: memory has " + std::to_string(memory->cols()) +
                                    " columns, expected d_model = " + std::to_string(c.d_model));
    if (cache && start_pos != cache->n_past)
        throw std::invalid_argument("decoder_stack_forward: start_pos (" + std::to_string(start_pos) +
                                    ") must equal cache->n_past (" + std::to_string(cache->n_past) + ")");
    if (start_pos < 0) throw std::invalid_argument("decoder_stack_forward: negative start_pos");
    EditScope scope;
    scope.has_dec = true;
    scope.dec_T = static_cast<int>(x.rows());
    scope.dec_start = start_pos;
    const EditPlan plan = detail::plan_edits(c, opt.edits, scope);
    return run_decoder(m, x, memory, opt, trace, cache, start_pos, plan.dec);
}

ForwardResult forward(const Model& m, const std::vector<int>& ids, const ForwardOptions& opt, KVCache* cache) {
    const ModelConfig& c = m.config();
    if (c.arch == Arch::EncoderDecoder)
        throw std::invalid_argument("forward: model '" + c.name +
                                    "' is encoder-decoder; use forward_seq2seq(src_ids, tgt_ids)");
    if (cache && c.arch == Arch::EncoderOnly)
        throw std::invalid_argument("forward: a KV cache needs a decoder (model '" + c.name + "' is encoder-only)");
    check_ids(ids, "forward");
    ForwardResult r;
    r.trace = std::make_shared<Trace>(opt.capture, opt.pool);
    Trace& trace = *r.trace;
    const int start = cache ? cache->n_past : 0;
    const bool enc = c.arch == Arch::EncoderOnly;
    EditScope scope;
    (enc ? scope.has_enc : scope.has_dec) = true;
    (enc ? scope.enc_T : scope.dec_T) = static_cast<int>(ids.size());
    scope.dec_start = start;
    (enc ? scope.enc_embed : scope.dec_embed) = "embed.out";
    const EditPlan plan = detail::plan_edits(c, opt.edits, scope);
    const MatrixRM x = detail::embed(m, ids, start, trace, "", enc ? plan.enc : plan.dec);
    if (enc) {
        r.hidden = run_encoder(m, x, opt, trace, plan.enc);
        if (opt.stop_at_ffn_act >= 0) return r;
        if (trace.filter().captures_anything()) trace.record("final_norm.out", r.hidden);
    } else {
        r.hidden = run_decoder(m, x, nullptr, opt, trace, cache, start, plan.dec);
        if (opt.stop_at_ffn_act >= 0) return r;
    }
    if (opt.compute_logits) r.logits = detail::lm_head(m, r.hidden, opt.all_logits);
    if (trace.filter().captures_anything() && r.logits.size()) trace.record("logits", r.logits);
    return r;
}

ForwardResult forward_seq2seq(const Model& m, const std::vector<int>& src_ids, const std::vector<int>& tgt_ids,
                              const ForwardOptions& opt) {
    const ModelConfig& c = m.config();
    if (c.arch != Arch::EncoderDecoder)
        throw std::invalid_argument("forward_seq2seq: model '" + c.name + "' is " + to_string(c.arch) +
                                    ", not encoder_decoder; use forward(ids)");
    check_ids(src_ids, "forward_seq2seq (source)");
    check_ids(tgt_ids, "forward_seq2seq (target)");
    ForwardResult r;
    r.trace = std::make_shared<Trace>(opt.capture, opt.pool);
    Trace& trace = *r.trace;
    EditScope scope;
    scope.has_enc = scope.has_dec = true;
    scope.enc_T = static_cast<int>(src_ids.size());
    scope.dec_T = static_cast<int>(tgt_ids.size());
    scope.enc_embed = "enc.embed.out";
    scope.dec_embed = "embed.out";
    const EditPlan plan = detail::plan_edits(c, opt.edits, scope);
    const MatrixRM src = detail::embed(m, src_ids, 0, trace, "enc.", plan.enc);
    const MatrixRM memory = run_encoder(m, src, opt, trace, plan.enc);
    if (opt.stop_at_ffn_act >= 0) return r;  // stopped in the encoder
    const MatrixRM tgt = detail::embed(m, tgt_ids, 0, trace, "", plan.dec);
    r.hidden = run_decoder(m, tgt, &memory, opt, trace, nullptr, 0, plan.dec);
    if (opt.compute_logits) r.logits = detail::lm_head(m, r.hidden, opt.all_logits);
    if (trace.filter().captures_anything() && r.logits.size()) trace.record("logits", r.logits);
    return r;
}

}  // namespace ts
