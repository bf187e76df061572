// Activation edits inside the forward pass (ForwardOptions::edits): zero / mean / set on head outputs, sub-layer
// outputs, FFN neurons and residual-stream points, for decoder-only, encoder-only and encoder-decoder models, with
// and without capture and with a KV cache; and the errors that name the point.
#include "core/trace/intervention.h"
#include "core/model/model.h"
#include "tests/core/golden_model.h"
#include "tests/test_util.h"

#include <string>

namespace ts {
namespace {

ForwardOptions capture_all() {
    ForwardOptions o;
    o.capture = CaptureFilter::all();
    return o;
}

// Rows [h*T, (h+1)*T) of an (H, T, D) trace tensor as a (T, D) matrix.
MatrixRM head_rows(const Tensor& t, int h) {
    const int64_t T = t.shape[1], D = t.shape[2];
    return ConstMapRM(t.data.data() + size_t(h) * T * D, T, D);
}

TEST(Intervention, ZeroHeadOutIsHookZAblation) {
    const test::GoldenModel g = test::load_golden_model("model_gpt2.safetensors");
    const Model& m = *g.model;
    const std::vector<int> ids = g.ids("in.ids");
    const ForwardResult clean = forward(m, ids, capture_all());
    ForwardOptions opt = capture_all();
    opt.edits.push_back(ActivationEdit::zero("dec.1.attn.head_out", 2));
    const ForwardResult r = forward(m, ids, opt);

    const Tensor& z = r.trace->at("dec.1.attn.head_out");
    EXPECT_EQ(head_rows(z, 2).cwiseAbs().maxCoeff(), 0.0f);
    for (int h : {0, 1, 3}) EXPECT_ALLCLOSE(head_rows(z, h), head_rows(clean.trace->at("dec.1.attn.head_out"), h), 0.0f, 0.0f);
    // attn.out = concat(head_out) W_o^T + b_o with head 2's columns gone.
    const int D = m.config().d_head();
    const MatrixRM wo = m.weight("dec.1.attn.wo").mat();
    MatrixRM expected = clean.trace->at("dec.1.attn.out").mat();
    expected -= head_rows(clean.trace->at("dec.1.attn.head_out"), 2) * wo.middleCols(2 * D, D).transpose();
    EXPECT_ALLCLOSE(MatrixRM(r.trace->at("dec.1.attn.out").mat()), expected, 1e-5f, 0.0f);
    EXPECT_GT((r.logits - clean.logits).cwiseAbs().maxCoeff(), 1e-3f);
    // Layer 0 is upstream of the edit and unchanged.
    EXPECT_ALLCLOSE(r.trace->at("dec.0.resid_ffn"), clean.trace->at("dec.0.resid_ffn"), 0.0f, 0.0f);

    // Same logits without capture: edits do not depend on tracing.
    ForwardOptions quiet = opt;
    quiet.capture = CaptureFilter::none();
    const ForwardResult q = forward(m, ids, quiet);
    EXPECT_EQ(q.trace->size(), 0u);
    EXPECT_ALLCLOSE(q.logits, r.logits, 0.0f, 0.0f);
}

TEST(Intervention, MeanHeadOutAndPositionSelection) {
    const test::GoldenModel g = test::load_golden_model("model_llama.safetensors");
    const Model& m = *g.model;
    const std::vector<int> ids = g.ids("in.ids");
    const ForwardResult clean = forward(m, ids, capture_all());
    const MatrixRM z = head_rows(clean.trace->at("dec.1.attn.head_out"), 5);
    const RowVectorF mean = z.colwise().mean();

    ForwardOptions opt = capture_all();
    opt.edits.push_back(ActivationEdit::mean("dec.1.attn.head_out", 5));
    const ForwardResult all = forward(m, ids, opt);
    const MatrixRM got = head_rows(all.trace->at("dec.1.attn.head_out"), 5);
    for (int t = 0; t < got.rows(); ++t) EXPECT_ALLCLOSE(MatrixRM(got.row(t)), MatrixRM(mean), 1e-7f, 0.0f);

    opt.edits = {ActivationEdit::mean("dec.1.attn.head_out", 5, 3)};
    const ForwardResult one = forward(m, ids, opt);
    const MatrixRM got1 = head_rows(one.trace->at("dec.1.attn.head_out"), 5);
    for (int t = 0; t < got1.rows(); ++t)
        EXPECT_ALLCLOSE(MatrixRM(got1.row(t)), MatrixRM(t == 3 ? RowVectorF(mean) : RowVectorF(z.row(t))), 1e-7f, 0.0f);
    // A causal model: positions before the edit are untouched.
    EXPECT_ALLCLOSE(MatrixRM(one.logits.topRows(3)), MatrixRM(clean.logits.topRows(3)), 0.0f, 0.0f);
    EXPECT_GT((one.logits.row(3) - clean.logits.row(3)).cwiseAbs().maxCoeff(), 1e-4f);
}

TEST(Intervention, SetResidualFromAnotherRunCarriesItsLogits) {
    const test::GoldenModel g = test::load_golden_model("model_gpt2.safetensors");
    const Model& m = *g.model;
    const std::vector<int> a = g.ids("in.ids");
    std::vector<int> b = a;
    b[2] = (b[2] + 5) % m.config().vocab_size;
    b[6] = (b[6] + 9) % m.config().vocab_size;
    const ForwardResult ra = forward(m, a, capture_all());
    const ForwardResult rb = forward(m, b, capture_all());

    // Whole embed.out of run b into run a: everything downstream becomes run b.
    ForwardOptions opt = capture_all();
    opt.edits.push_back(ActivationEdit::set("embed.out", rb.trace->at("embed.out").data));
    EXPECT_ALLCLOSE(forward(m, a, opt).logits, rb.logits, 1e-6f, 0.0f);

    // One row of the last layer's output: only that position's logits change, to run b's.
    const Tensor& last_b = rb.trace->at("dec.1.resid_ffn");
    const int d = m.config().d_model;
    opt.edits = {ActivationEdit::set("dec.1.resid_ffn", {last_b.data.begin() + 6 * d, last_b.data.begin() + 7 * d},
                                     -1, 6)};
    const ForwardResult p = forward(m, a, opt);
    EXPECT_ALLCLOSE(MatrixRM(p.logits.row(6)), MatrixRM(rb.logits.row(6)), 1e-5f, 0.0f);
    EXPECT_ALLCLOSE(MatrixRM(p.logits.topRows(6)), MatrixRM(ra.logits.topRows(6)), 0.0f, 0.0f);
    // The trace shows the edited value.
    EXPECT_ALLCLOSE(MatrixRM(p.trace->at("dec.1.resid_ffn").mat().row(6)), MatrixRM(last_b.mat().row(6)), 0.0f, 0.0f);

    // Setting a point to its own value changes nothing.
    opt.edits = {ActivationEdit::set("dec.0.resid_attn", ra.trace->at("dec.0.resid_attn").data)};
    EXPECT_ALLCLOSE(forward(m, a, opt).logits, ra.logits, 1e-6f, 0.0f);
}

TEST(Intervention, SubLayerOutputsAndNeurons) {
    const test::GoldenModel g = test::load_golden_model("model_gpt2.safetensors");
    const Model& m = *g.model;
    const std::vector<int> ids = g.ids("in.ids");
    ForwardOptions opt = capture_all();
    opt.edits = {ActivationEdit::zero("dec.0.ffn.post_act"), ActivationEdit::zero("dec.1.attn.out", -1, 4)};
    const ForwardResult r = forward(m, ids, opt);
    // No neurons: ffn.out is b_down on every row.
    const Tensor& b_down = m.weight("dec.0.ffn.b_down");
    const MatrixRM out = r.trace->at("dec.0.ffn.out").mat();
    for (int t = 0; t < out.rows(); ++t) EXPECT_ALLCLOSE(MatrixRM(out.row(t)), MatrixRM(b_down.mat()), 0.0f, 0.0f);
    // attn.out row 4 zero: the residual passes through unchanged there.
    EXPECT_EQ(r.trace->at("dec.1.attn.out").mat().row(4).cwiseAbs().maxCoeff(), 0.0f);
    EXPECT_ALLCLOSE(MatrixRM(r.trace->at("dec.1.resid_attn").mat().row(4)),
                    MatrixRM(r.trace->at("dec.0.resid_ffn").mat().row(4)), 0.0f, 0.0f);
}

TEST(Intervention, EncoderOnlyAndEncoderDecoder) {
    const test::GoldenModel e = test::load_golden_model("model_encoder_sinusoidal.safetensors");
    ForwardOptions opt = capture_all();
    opt.edits = {ActivationEdit::zero("enc.1.attn.head_out", 1)};
    const ForwardResult re = forward(*e.model, e.ids("in.ids"), opt);
    EXPECT_EQ(head_rows(re.trace->at("enc.1.attn.head_out"), 1).cwiseAbs().maxCoeff(), 0.0f);
    opt.edits = {ActivationEdit::zero("dec.0.attn.head_out", 1)};
    EXPECT_THROW((void)forward(*e.model, e.ids("in.ids"), opt), std::invalid_argument);

    const test::GoldenModel s = test::load_golden_model("model_nn_transformer.safetensors");
    const std::vector<int> src = s.ids("in.src_ids"), tgt = s.ids("in.tgt_ids");
    const ForwardResult clean = forward_seq2seq(*s.model, src, tgt, capture_all());
    opt.edits = {ActivationEdit::zero("dec.1.cross_attn.head_out", 3)};
    const ForwardResult rc = forward_seq2seq(*s.model, src, tgt, opt);
    EXPECT_EQ(head_rows(rc.trace->at("dec.1.cross_attn.head_out"), 3).cwiseAbs().maxCoeff(), 0.0f);
    EXPECT_ALLCLOSE(rc.trace->at("enc.out"), clean.trace->at("enc.out"), 0.0f, 0.0f);
    EXPECT_GT((rc.logits - clean.logits).cwiseAbs().maxCoeff(), 1e-3f);
    // The encoder's embedding point is enc.embed.out; editing it changes the memory.
    opt.edits = {ActivationEdit::zero("enc.embed.out", -1, 0)};
    const ForwardResult rs = forward_seq2seq(*s.model, src, tgt, opt);
    EXPECT_EQ(rs.trace->at("enc.embed.out").mat().row(0).cwiseAbs().maxCoeff(), 0.0f);
    EXPECT_GT((rs.trace->at("enc.out").mat() - clean.trace->at("enc.out").mat()).cwiseAbs().maxCoeff(), 1e-3f);
    opt.edits = {ActivationEdit::mean("dec.0.resid_cross", -1, 2)};
    EXPECT_NO_THROW((void)forward_seq2seq(*s.model, src, tgt, opt));
}

TEST(Intervention, KvCachePositionsAreAbsolute) {
    const test::GoldenModel g = test::load_golden_model("model_llama.safetensors");
    const Model& m = *g.model;
    const std::vector<int> ids = g.ids("in.ids");
    ForwardOptions opt;
    opt.edits = {ActivationEdit::zero("dec.0.attn.head_out", 1, 4), ActivationEdit::zero("dec.1.resid_attn", -1, 3)};
    const ForwardResult full = forward(m, ids, opt);
    KVCache cache;
    ForwardOptions first = opt;
    first.edits = {ActivationEdit::zero("dec.1.resid_attn", -1, 3)};
    (void)forward(m, {ids.begin(), ids.begin() + 4}, first, &cache);
    ForwardOptions rest = opt;
    rest.edits = {ActivationEdit::zero("dec.0.attn.head_out", 1, 4)};
    const ForwardResult tail = forward(m, {ids.begin() + 4, ids.end()}, rest, &cache);
    EXPECT_ALLCLOSE(tail.logits, MatrixRM(full.logits.bottomRows(2)), 1e-5f, 0.0f);
    // Position 3 is not part of the second call.
    KVCache c2;
    (void)forward(m, {ids.begin(), ids.begin() + 4}, ForwardOptions{}, &c2);
    EXPECT_THROW((void)forward(m, {ids.begin() + 4, ids.end()}, first, &c2), std::invalid_argument);
}

void expect_invalid(const Model& m, const std::vector<int>& ids, const ActivationEdit& e, const std::string& needle) {
    ForwardOptions opt;
    opt.edits = {e};
    try {
        (void)forward(m, ids, opt);
        ADD_FAILURE() << "no exception for " << describe(e);
    } catch (const std::invalid_argument& ex) {
        const std::string what = ex.what();
        EXPECT_NE(what.find(e.point), std::string::npos) << what;
        EXPECT_NE(what.find(needle), std::string::npos) << what;
    }
}

TEST(Intervention, InvalidEditsNameThePoint) {
    const test::GoldenModel g = test::load_golden_model("model_gpt2.safetensors");
    const Model& m = *g.model;
    const std::vector<int> ids = g.ids("in.ids");  // T = 7, 2 layers, 4 heads, d_head 8
    expect_invalid(m, ids, ActivationEdit::zero("dec.1.attn.probs"), "not an editable");
    expect_invalid(m, ids, ActivationEdit::zero("dec.x.resid_ffn"), "not an editable");
    expect_invalid(m, ids, ActivationEdit::zero("dec.2.resid_ffn"), "layer 2 out of range");
    expect_invalid(m, ids, ActivationEdit::zero("enc.0.resid_ffn"), "no 'enc' stack");
    expect_invalid(m, ids, ActivationEdit::zero("dec.0.cross_attn.head_out"), "cross-attention");
    expect_invalid(m, ids, ActivationEdit::zero("dec.0.attn.head_out", 4), "head 4 out of range");
    expect_invalid(m, ids, ActivationEdit::zero("dec.0.resid_attn", 1), "no heads");
    expect_invalid(m, ids, ActivationEdit::zero("dec.0.resid_attn", -1, 7), "position 7");
    expect_invalid(m, ids, ActivationEdit::zero("enc.embed.out"), "no such embedding point");
    expect_invalid(m, ids, ActivationEdit::set("dec.0.attn.head_out", std::vector<float>(8), 1), "needs 56 values");
    expect_invalid(m, ids, ActivationEdit::set("embed.out", std::vector<float>(31), -1, 0), "needs 32 values");
    ActivationEdit with_values = ActivationEdit::zero("dec.0.ffn.out");
    with_values.values = {1.0f};
    expect_invalid(m, ids, with_values, "only Set takes values");
    // Stack entry points take embeddings: no embed.out to edit.
    ForwardOptions opt;
    opt.edits = {ActivationEdit::zero("embed.out")};
    Trace trace;
    EXPECT_THROW((void)decoder_stack_forward(m, MatrixRM::Zero(3, m.config().d_model), nullptr, opt, trace),
                 std::invalid_argument);
}

TEST(Intervention, DescribeAndResidPre) {
    EXPECT_EQ(describe(ActivationEdit::zero("dec.3.attn.head_out", 2)), "dec.3.attn.head_out head 2 := 0 (all positions)");
    EXPECT_EQ(describe(ActivationEdit::set("dec.5.resid_attn", {1, 2}, -1, 7)), "dec.5.resid_attn @7 := 2 given values");
    EXPECT_EQ(resid_pre_point("dec", 0), "embed.out");
    EXPECT_EQ(resid_pre_point("dec", 3), "dec.2.resid_ffn");
}

}  // namespace
}  // namespace ts
