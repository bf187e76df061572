// The worker's logit lens reuses the forward's logits for the last layer instead of a second LM-head product: its
// argmax and probability at every position must equal the lens computed from the trace (final norm + LM head), and
// the snapshot keeps logits for every position (the Predictions panel shows the selected query's row).
#include "app/session/text_codec.h"
#include "app/session/worker.h"
#include "core/kernels/ops.h"

#include <gtest/gtest.h>

#include <memory>

namespace {

using namespace ts;
using namespace ts::studio;

TEST(WorkerLens, LastLayerFromTheForwardLogitsEqualsTheLensComputedFromTheTrace) {
    const LoadedModel lm = make_demo_model();
    ForwardRequest r;
    r.model = lm.model;
    r.codec = lm.codec;
    r.tokens = std::make_shared<const TokenizedText>(tokenize_text("the cat sat", *lm.codec, lm.model->config().max_seq_len));
    const auto s = run_forward_request(r, 1);
    ASSERT_TRUE(s->error.empty()) << s->error;
    const int T = int(s->tokens->ids.size());
    const ModelConfig& c = lm.model->config();
    EXPECT_EQ(s->logits.rows(), T);  // every position, not only the last
    ASSERT_EQ(int(s->lens_argmax.size()), c.n_layers);

    const Tensor* h = s->find("dec." + std::to_string(c.n_layers - 1) + ".resid_ffn");
    const Tensor* nw = lm.model->find_weight("dec.final_norm.weight");
    const Tensor* nb = lm.model->find_weight("dec.final_norm.bias");
    const Tensor* head = lm.model->find_weight("lm_head.weight");
    if (!head) head = lm.model->find_weight("tok_emb.weight");
    ASSERT_TRUE(h && nw && head);
    const std::span<const float> beta = nb ? std::span<const float>(nb->data) : std::span<const float>();
    const MatrixRM x = apply_norm(c.norm, h->mat(), std::span<const float>(nw->data), beta, c.norm_eps);
    const MatrixRM logits = x * head->mat().transpose();
    ASSERT_EQ(logits.rows(), T);
    for (int t = 0; t < T; ++t) {
        Eigen::Index j = 0;
        const float lmax = logits.row(t).maxCoeff(&j);
        EXPECT_EQ(s->lens_argmax.back()[size_t(t)], int(j)) << "position " << t;
        EXPECT_NEAR(s->lens_prob.back()[size_t(t)], 1.0f / (logits.row(t).array() - lmax).exp().sum(), 1e-4f)
            << "position " << t;
    }
}

}  // namespace
