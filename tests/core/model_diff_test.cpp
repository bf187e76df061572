// The quantization lens (core/interp/model_diff.h) on the GGUF fixtures: a Q4_0 file against the F32 file of the same
// weights. KL and top-1 agreement are recomputed here from the two forwards' logits with a plain loop (torch's
// kl_div(log_softmax(A), log_softmax(B), log_target=True, reduction="sum") per row is the same sum); the residual
// errors from the traces; a model against itself gives zeros everywhere.
#include "core/formats/gguf_model.h"
#include "core/interp/model_diff.h"
#include "tests/test_util.h"

#include <cmath>

namespace ts {
namespace {

using interp::ModelDiff;
using interp::diff_models;

std::shared_ptr<const Model> fixture(const std::string& name) {
    return load_gguf_model(test::golden_path("gguf/" + name + ".gguf"));
}

TEST(ModelDiff, QuantizedAgainstF32MatchesADirectComputation) {
    const auto q4 = fixture("llama_q4_0"), f32 = fixture("llama_f32");
    const std::vector<int> ids{1, 7, 42, 255, 3, 99, 12, 200};
    const ModelDiff d = diff_models(*q4, *f32, ids);
    ASSERT_EQ(d.kl.size(), ids.size());
    const MatrixRM a = forward(*q4, ids, ForwardOptions{}).logits, b = forward(*f32, ids, ForwardOptions{}).logits;
    int agree = 0;
    for (int t = 0; t < int(ids.size()); ++t) {
        double za = 0, zb = 0;
        const double ma = a.row(t).maxCoeff(), mb = b.row(t).maxCoeff();
        for (int v = 0; v < a.cols(); ++v) za += std::exp(a(t, v) - ma), zb += std::exp(b(t, v) - mb);
        double kl = 0;
        for (int v = 0; v < a.cols(); ++v) {
            const double lq = b(t, v) - mb - std::log(zb), lp = a(t, v) - ma - std::log(za);
            kl += std::exp(lq) * (lq - lp);
        }
        EXPECT_NEAR(d.kl[size_t(t)], kl, 1e-9 + 1e-6 * kl) << t;
        Eigen::Index ia, ib;
        a.row(t).maxCoeff(&ia);
        b.row(t).maxCoeff(&ib);
        EXPECT_EQ(bool(d.top1_agree[size_t(t)]), ia == ib) << t;
        agree += ia == ib;
    }
    EXPECT_EQ(d.top1_agreements, agree);
    EXPECT_GT(d.mean_kl, 1e-6);  // 4-bit weights do cost something
    ASSERT_EQ(d.resid_rel_error.size(), 3u);  // embeddings, layer 0, layer 1
    EXPECT_GT(d.resid_rel_error[0], 0.0);     // token_embd is Q4_0 too
    EXPECT_LT(d.resid_rel_error[0], 0.5);
    // The embeddings' error, recomputed.
    const Tensor &ea = d.model_trace->at("embed.out"), &eb = d.reference_trace->at("embed.out");
    double num = 0, den = 0;
    for (size_t i = 0; i < ea.data.size(); ++i) num += std::pow(ea.data[i] - eb.data[i], 2), den += std::pow(eb.data[i], 2);
    EXPECT_NEAR(d.resid_rel_error[0], std::sqrt(num / den), 1e-9);
    EXPECT_EQ(d.attn_mean_abs_diff.rows(), 2);
    EXPECT_EQ(d.attn_mean_abs_diff.cols(), 4);
    EXPECT_GT(d.attn_mean_abs_diff.maxCoeff(), 0.0f);
}

TEST(ModelDiff, AModelAgainstItselfCostsNothingAndShapesMustMatch) {
    const auto q4 = fixture("llama_q4_0");
    const ModelDiff d = diff_models(*q4, *q4, {5, 6, 7});
    EXPECT_EQ(d.top1_agreements, 3);
    EXPECT_EQ(d.mean_kl, 0.0);
    for (double e : d.resid_rel_error) EXPECT_EQ(e, 0.0);
    EXPECT_EQ(d.attn_mean_abs_diff.maxCoeff(), 0.0f);
    const auto gpt2 = fixture("gpt2_f32");
    try {
        (void)diff_models(*q4, *gpt2, {1, 2});
        ADD_FAILURE() << "compared models of different shapes";
    } catch (const std::invalid_argument& e) {
        EXPECT_TRUE(test::contains(e.what(), {"diff_models: vocab_size differs (256 in", "300 in"}));
    }
}

}  // namespace
}  // namespace ts
