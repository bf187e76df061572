// The training forward against the inference forward over every combination of norm, placement, FFN activation,
// position kind and head grouping (#29: the grid once checked only that values were finite): the training logits
// equal the inference logits and the training loss equals the cross-entropy of the inference logits.
#include "core/model/model.h"
#include "core/kernels/ops.h"
#include "core/train/train_init.h"
#include "core/train/train_model.h"
#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace {

using ts::Activation;
using ts::NormKind;
using ts::NormPlacement;
using ts::PositionKind;

// One test over the 336 combinations (one process: CI runs the suite twice, once under ASan).
void check_config(NormKind norm, NormPlacement placement, Activation act, PositionKind pos, int kv) {
    ts::ModelConfig c;
    c.vocab_size = 40;
    c.d_model = 16;
    c.n_heads = 4;
    c.d_ff = 24;
    c.n_layers = 2;
    c.max_seq_len = 16;
    c = ts::test::config_grid_cell(c, norm, placement, act, pos, kv);
    ts::WeightMap w = ts::train::init_transformer_weights(c, 21);
    // Large enough weights that the logits are far from uniform and every path matters.
    for (auto& [name, t] : w)
        for (float& v : t.data) v *= 4.0f;
    constexpr int B = 2, T = 6;
    std::vector<int> ids(B * T), targets(B * T);
    for (int i = 0; i < B * T; ++i) {
        ids[size_t(i)] = (7 * i + 3) % c.vocab_size;
        targets[size_t(i)] = (i % T == 2) ? -1 : (5 * i + 1) % c.vocab_size;  // one ignored target per row
    }
    ts::train::TrainModel train(c, w);
    const ts::train::StepLoss l = train.forward(ids, targets, B, T);
    const ts::Model inference(c, w);
    double sum = 0;
    int count = 0;
    for (int b = 0; b < B; ++b) {
        const std::vector<int> row(ids.begin() + b * T, ids.begin() + (b + 1) * T);
        const std::vector<int> tg(targets.begin() + b * T, targets.begin() + (b + 1) * T);
        ts::ForwardOptions o;
        o.all_logits = true;
        const ts::ForwardResult r = ts::forward(inference, row, o);
        ASSERT_EQ(r.logits.rows(), T);
        const ts::MatrixRM train_rows = train.logits().middleRows(int64_t(b) * T, T);
        // float32 sums in another order: 1e-4 relative per element, with a floor of 1e-4 of the largest logit (random weights ×4 make post-norm residual streams large)
        const float atol = std::max(1e-5f, 1e-4f * r.logits.cwiseAbs().maxCoeff());
        EXPECT_TRUE(ts::test::allclose(train_rows, r.logits, atol, 1e-4f)) << "sequence " << b;
        for (int t : tg) count += t >= 0;
        sum += double(ts::cross_entropy(r.logits, tg, 0.0f)) * double(T - 1);
    }
    ASSERT_EQ(count, B * (T - 1));
    EXPECT_GT(l.ce, 0.1f);
    EXPECT_NEAR(l.ce, sum / count, 1e-5 * std::abs(sum / count));
    EXPECT_NEAR(l.nll, l.ce, 1e-6);  // no smoothing
}

TEST(TrainConfigGrid, TrainingLossIsTheCrossEntropyOfInferenceLogits) {
    int n = 0;
    for (const NormKind norm : {NormKind::LayerNorm, NormKind::RMSNorm})
        for (const NormPlacement placement : {NormPlacement::Pre, NormPlacement::Post})
            for (const Activation act : {Activation::ReLU, Activation::GELU, Activation::GELUTanh, Activation::SiLU,
                                         Activation::GLU, Activation::SwiGLU, Activation::GeGLU})
                for (const PositionKind pos :
                     {PositionKind::None, PositionKind::Sinusoidal, PositionKind::Learned, PositionKind::RoPE})
                    for (const int kv : {4, 2, 1}) {
                        SCOPED_TRACE(::testing::Message()
                                     << "norm " << int(norm) << " placement " << int(placement) << " activation "
                                     << int(act) << " position " << int(pos) << " kv heads " << kv);
                        check_config(norm, placement, act, pos, kv);
                        ++n;
                    }
    EXPECT_EQ(n, 336);
}

}  // namespace
