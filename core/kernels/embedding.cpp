// The two ends of the forward pass: token embeddings plus additive positions (with the embed.out edits), and the
// LM head over the final hidden states. Internal to core (declared in core/kernels/attention.h).
#include "core/kernels/attention.h"
#include "core/kernels/gemm.h"
#include "core/model/half.h"
#include "core/kernels/ops.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>
#include <string>

namespace ts::detail {

// ids -> (T, d_model): tok_emb[id] (× sqrt(d_model)) + additive positions of start_pos..start_pos+T-1, then the
// edits of <prefix>embed.out.
MatrixRM embed(const Model& m, const std::vector<int>& ids, int start_pos, Trace& trace, const std::string& prefix,
               const StackEdits& ed) {
    const ModelConfig& c = m.config();
    if (ids.empty()) throw std::invalid_argument("forward: empty token ids (need at least one token)");
    const int T = static_cast<int>(ids.size());
    // As stored: half-precision rows are widened one at a time; a tied head's panels give a row with a stride.
    const Tensor& emb = m.stored_weight("tok_emb.weight");
    const bool cap = trace.filter().captures_anything();
    MatrixRM x(T, c.d_model);
    const float scale = c.embedding_scale();
    for (int t = 0; t < T; ++t) {
        const int id = ids[t];
        if (id < 0 || id >= c.vocab_size)
            throw std::invalid_argument("forward: token id " + std::to_string(id) + " at position " +
                                        std::to_string(t) + " is outside [0, vocab_size = " +
                                        std::to_string(c.vocab_size) + ")");
        float* row = x.row(t).data();
        if (emb.in_panels())
            panel_row(emb, id, row);
        else if (emb.is_ggml())
            ggml_dequantize_rows(emb, id, 1, row);
        else if (emb.is_half())
            widen_half(emb.half.data() + size_t(id) * c.d_model, emb.storage, row, size_t(c.d_model));
        else
            std::copy_n(emb.data.data() + size_t(id) * c.d_model, c.d_model, row);
    }
    if (scale != 1.0f) x *= scale;
    if (cap) trace.record(prefix + "tok_emb.out", x);
    // The stack these embeddings feed: forward_seq2seq embeds the source with prefix "enc."; an encoder-only model's
    // single stack is "enc" too.
    const bool enc_stack = prefix == "enc." || c.arch == Arch::EncoderOnly;
    if (c.position == PositionKind::Learned) {
        if (start_pos + T > c.max_seq_len)
            throw std::invalid_argument("forward: positions " + std::to_string(start_pos) + ".." +
                                        std::to_string(start_pos + T - 1) + " exceed max_seq_len = " +
                                        std::to_string(c.max_seq_len) + " (learned positions)");
        const char* table = c.enc_pos_emb && prefix == "enc." ? "enc.pos_emb.weight" : "pos_emb.weight";
        const ConstMapRM pos(m.weight(table).data.data() + size_t(start_pos) * c.d_model, T, c.d_model);
        if (cap && trace.wants(prefix + "pos.out")) trace.record(prefix + "pos.out", {T, c.d_model}, pos.data());
        x += pos;
    } else if (c.position == PositionKind::Sinusoidal) {
        const MatrixRM table = sinusoidal_table(start_pos + T, c.d_model, c.sinusoidal_base, c.sinusoidal_layout);
        const MatrixRM pos = table.bottomRows(T);
        if (cap) trace.record(prefix + "pos.out", pos);
        x += pos;
    }
    if (c.type_vocab_size > 0) {
        // BERT token-type (segment) embeddings: every position is segment 0, HF's default token_type_ids.
        x.rowwise() += Eigen::Map<const RowVectorF>(m.weight("tok_type_emb.weight").data.data(), c.d_model);
    }
    if (c.embed_norm) {  // BART layernorm_embedding / BERT embeddings.LayerNorm: norm(tok + pos) feeds layer 0
        const std::string p = enc_stack ? "enc.embed_norm" : "dec.embed_norm";
        const Tensor* b = m.find_weight(p + ".bias");
        x = apply_norm(c.norm, x, std::span<const float>(m.weight(p + ".weight").data),
                       b ? std::span<const float>(b->data) : std::span<const float>(), c.norm_eps);
    }
    if (!ed.embed.empty()) detail::apply_row_edits(ed.embed, start_pos, x);
    if (cap) trace.record(prefix + "embed.out", x);
    return x;
}

// The (vocab, d_model) output projection of a plain LM head, as stored: the token embeddings when tied, else
// lm_head.weight; null when the model has none.
static const Tensor* output_projection(const Model& m) {
    return m.find_stored_weight(m.config().tie_embeddings ? "tok_emb.weight" : "lm_head.weight");
}

MatrixRM lm_head(const Model& m, const MatrixRM& hidden, bool all_logits) {
    const ModelConfig& c = m.config();
    if (c.mlm_head) {
        // BertForMaskedLM's cls.predictions: transform (dense, act, LayerNorm), then the decoder tied to the word
        // embeddings plus its own bias.
        const MatrixRM h = all_logits ? hidden : MatrixRM(hidden.bottomRows(1));
        MatrixRM t;
        linear(h, m.stored_weight("mlm_head.dense.weight"), &m.weight("mlm_head.dense.bias"), t);
        apply_activation_inplace(c.activation, t);
        const Tensor* nb = m.find_weight("mlm_head.norm.bias");
        t = apply_norm(c.norm, t, std::span<const float>(m.weight("mlm_head.norm.weight").data),
                       nb ? std::span<const float>(nb->data) : std::span<const float>(), c.norm_eps);
        MatrixRM logits;
        matmul_weight_t(t, m.stored_weight("tok_emb.weight"), logits);
        logits.rowwise() += Eigen::Map<const RowVectorF>(m.weight("mlm_head.bias").data.data(), c.vocab_size);
        return logits;
    }
    const Tensor* w = output_projection(m);
    if (!w) return {};
    MatrixRM logits;
    MatrixRM in = all_logits ? hidden : MatrixRM(hidden.bottomRows(1));
    // T5 (tied): sequence_output * model_dim**-0.5 before lm_head, a float32 product with the rounded scalar.
    if (c.scale_lm_head) in *= float(std::pow(double(c.d_model), -0.5));
    matmul_weight_t(in, *w, logits);
    if (c.final_logits_bias)  // BART / Marian: lm_logits = lm_head(x) + final_logits_bias
        logits.rowwise() += Eigen::Map<const RowVectorF>(m.weight("final_logits_bias").data.data(), c.vocab_size);
    return logits;
}

}  // namespace ts::detail

namespace ts {
MatrixRM lm_head_logits(const Model& m, const MatrixRM& hidden) { return detail::lm_head(m, hidden, true); }
bool has_lm_head(const Model& m) { return m.config().mlm_head || detail::output_projection(m) != nullptr; }
}  // namespace ts
