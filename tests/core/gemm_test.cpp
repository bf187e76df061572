// Panel-ordered weights (core/kernels/gemm.h): the packing is a permutation, the product equals Eigen's x · Wᵀ to float
// rounding on shapes that do not fill the last panel or the last 256-deep block, a row's result does not depend on
// how many rows are multiplied with it or on the thread count, and the portable kernel gives what the native one
// gives. The model packs its attention and FFN matrices and gives them back row-major.
#include "core/kernels/gemm.h"
#include "core/model/half.h"
#include "core/model/model.h"
#include "core/kernels/threads.h"

#include <gtest/gtest.h>

#include <random>

namespace ts {
namespace {

Tensor random_weight(int64_t O, int64_t I, uint32_t seed) {
    std::mt19937 g(seed);
    std::normal_distribution<float> d(0.0f, 1.0f);
    Tensor w({O, I});
    for (float& v : w.data) v = d(g);
    return w;
}

MatrixRM random_rows(int64_t N, int64_t I, uint32_t seed) {
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    MatrixRM x(N, I);
    for (int64_t k = 0; k < x.size(); ++k) x.data()[k] = d(g);
    return x;
}

TEST(Panels, PackingIsAPermutationThatUnpacksExactly) {
    const Tensor w = random_weight(70, 33, 1);  // 70 rows: the third panel holds 6, padded with zeros
    const Tensor p = pack_panels(w);
    EXPECT_EQ(p.storage, Storage::F32Panels);
    EXPECT_TRUE(p.data.empty());
    EXPECT_EQ(p.numel(), 70 * 33);
    ASSERT_EQ(p.panels.size(), size_t(96 * 33));
    EXPECT_EQ(p.panels[5 * 32 + 3], w.data[3 * 33 + 5]);               // W[3][5] in panel 0 at i*32 + j
    EXPECT_EQ(p.panels[64 * 33 + 2 * 32 + 5], w.data[69 * 33 + 2]);    // W[69][2] in panel 2
    EXPECT_EQ(p.panels[64 * 33 + 2 * 32 + 6], 0.0f);                   // padding
    const Tensor back = unpack_panels(p);
    EXPECT_EQ(back.shape, w.shape);
    EXPECT_EQ(back.data, w.data);
    EXPECT_EQ(to_f32(p).data, w.data);

    // Consuming the weight (its pages released as it is packed) gives the same panels; big enough to span pages.
    const Tensor big = random_weight(300, 1000, 2);
    Tensor consumed = big;
    const Tensor q = pack_panels(std::move(consumed));
    EXPECT_TRUE(consumed.data.empty());
    EXPECT_EQ(q.panels, pack_panels(big).panels);
    EXPECT_EQ(unpack_panels(q).data, big.data);
}

TEST(Panels, ProductEqualsEigenOnRaggedShapes) {
    for (const auto& [N, O, I] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {3, 31, 7}, {13, 33, 257},
                                 {25, 100, 600}, {40, 64, 256}, {7, 96, 1000}}) {
        const Tensor w = random_weight(O, I, uint32_t(N + O));
        const MatrixRM x = random_rows(N, I, uint32_t(I));
        const Eigen::MatrixXd exact = x.cast<double>() * w.mat().cast<double>().transpose();
        const MatrixRM eigen = x * w.mat().transpose();
        MatrixRM out;
        matmul_panels(x, pack_panels(w), out, 1);
        ASSERT_EQ(out.rows(), N);
        ASSERT_EQ(out.cols(), O);
        // No further from the exact product than Eigen's float product, give or take rounding (|x·w| ~ sqrt(I)).
        const double ours = (out.cast<double>() - exact).cwiseAbs().maxCoeff();
        const double theirs = (eigen.cast<double>() - exact).cwiseAbs().maxCoeff();
        EXPECT_LT(ours, 2.0 * theirs + 1e-6 * std::sqrt(double(I))) << N << "x" << O << "x" << I << ": " << ours
                                                                    << " vs Eigen " << theirs;
    }
}

TEST(Panels, ARowDoesNotDependOnTheOtherRowsOrTheThreads) {
    const Tensor p = pack_panels(random_weight(200, 520, 3));
    const MatrixRM x = random_rows(29, 520, 4);  // 12 + 12 + 5 rows per kernel call
    MatrixRM all, one, threaded;
    matmul_panels(x, p, all, 1);
    for (int64_t n : {0, 11, 12, 28}) {
        matmul_panels(x.middleRows(n, 1), p, one, 1);
        EXPECT_EQ(one.row(0), all.row(n)) << "row " << n;  // bit for bit
    }
    matmul_panels(x, p, threaded, 2);
    EXPECT_EQ(threaded, all);
}

TEST(Panels, PortableKernelEqualsNative) {
    const Tensor p = pack_panels(random_weight(45, 300, 5));
    const MatrixRM x = random_rows(14, 300, 6);
    MatrixRM native, portable;
    matmul_panels(x, p, native, 1);
    detail::matmul_panels_portable(x, p, portable);
    EXPECT_LT((native - portable).cwiseAbs().maxCoeff(), 1e-5f);  // FMA or not, same order of the sum
}

TEST(Panels, BadShapesAreRejectedWithAMessage) {
    const Tensor p = pack_panels(random_weight(8, 16, 7));
    MatrixRM out;
    try {
        matmul_panels(random_rows(2, 15, 8), p, out, 1);
        FAIL() << "no throw";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("needs 16"), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)pack_panels(Tensor({2, 3, 4})), std::invalid_argument);
    EXPECT_THROW((void)unpack_panels(random_weight(2, 2, 9)), std::invalid_argument);
}

TEST(Panels, TheModelPacksItsLinearMatricesAndGivesThemBackRowMajor) {
    ModelConfig c;
    c.name = "panels";
    c.vocab_size = 50;
    c.d_model = 40;
    c.n_heads = 4;
    c.n_kv_heads = 4;
    c.d_ff = 72;
    c.n_layers = 1;
    c.max_seq_len = 16;
    const WeightMap w = init_weights(c, 11);
    const Model m(c, w);
    EXPECT_EQ(m.stored_weight("dec.0.attn.wq").storage, Storage::F32Panels);
    EXPECT_EQ(m.stored_weight("dec.0.ffn.w_down").storage, Storage::F32Panels);
    EXPECT_EQ(m.stored_weight("tok_emb.weight").storage, Storage::F32Panels);  // tied: the LM head reads it
    EXPECT_FALSE(m.has_half_weights());
    EXPECT_EQ(m.weight("dec.0.attn.wq").data, w.at("dec.0.attn.wq").data);
    for (const auto& [name, t] : m.weights()) EXPECT_EQ(t.data, w.at(name).data) << name;

    // Lookups in the tied head's panels give the embedding rows exactly; an untied model keeps its embeddings
    // row-major and packs lm_head.weight.
    const std::vector<int> ids = {0, 31, 32, 49, 7};
    ForwardOptions opt;
    opt.capture = CaptureFilter::prefixes({"tok_emb.out"});
    const ForwardResult fr = forward(m, ids, opt);
    const Tensor& looked_up = fr.trace->at("tok_emb.out");
    const Tensor& emb = w.at("tok_emb.weight");
    for (size_t t = 0; t < ids.size(); ++t)
        for (int i = 0; i < c.d_model; ++i)
            EXPECT_EQ(looked_up.data[t * size_t(c.d_model) + size_t(i)], emb.data[size_t(ids[t] * c.d_model + i)])
                << "id " << ids[t] << " feature " << i;
    std::vector<float> row(size_t(c.d_model));
    EXPECT_THROW(panel_row(m.stored_weight("tok_emb.weight"), c.vocab_size, row.data()), std::invalid_argument);
    EXPECT_THROW(panel_row(emb, 0, row.data()), std::invalid_argument);

    c.tie_embeddings = false;
    const WeightMap wu = init_weights(c, 12);
    const Model untied(c, wu);
    EXPECT_TRUE(untied.stored_weight("tok_emb.weight").is_f32_rows());  // only looked up
    EXPECT_EQ(untied.stored_weight("lm_head.weight").storage, Storage::F32Panels);
    EXPECT_EQ(untied.weight("lm_head.weight").data, wu.at("lm_head.weight").data);
    const MatrixRM logits = forward(untied, ids, ForwardOptions{}).logits;
    const ForwardResult r = forward(untied, ids, [] {
        ForwardOptions o;
        o.capture = CaptureFilter::prefixes({"final_norm.out"});
        return o;
    }());
    const MatrixRM want = r.trace->at("final_norm.out").mat() * wu.at("lm_head.weight").mat().transpose();
    EXPECT_LE((logits - want).cwiseAbs().maxCoeff(), 1e-5f * std::max(1.0f, want.cwiseAbs().maxCoeff()));
}

}  // namespace
}  // namespace ts
