// Properties and errors of the analyses in core/interp beyond the PyTorch comparisons: DLA on other norm setups and
// its refusals, cancellation and progress of sweeps, argument checks, and max-flow on hand-checked graphs.
#include "core/interp/ablation.h"
#include "core/interp/attention_flow.h"
#include "core/interp/logit_attribution.h"
#include "core/interp/patching.h"
#include "tests/core/golden_model.h"
#include "tests/test_util.h"

#include <cmath>

namespace ts {
namespace {

using namespace ts::interp;

std::shared_ptr<const Model> random_model(ModelConfig c, uint64_t seed = 7) {
    WeightMap w = init_weights(c, seed);
    // init_weights' std 0.02 makes every logit ~0; scale up so the analyses see real differences.
    for (auto& [name, t] : w)
        if (name.find("norm") == std::string::npos)
            for (float& v : t.data) v *= 20.0f;
    return std::make_shared<const Model>(c, std::move(w));
}

ModelConfig small_config() {
    ModelConfig c;
    c.vocab_size = 50;
    c.d_model = 16;
    c.n_heads = c.n_kv_heads = 2;
    c.d_ff = 32;
    c.n_layers = 2;
    c.max_seq_len = 16;
    return c;
}

TEST(LogitAttribution, SumsToTheLogitForOtherPreNormSetups) {
    ModelConfig enc = small_config();
    enc.arch = Arch::EncoderOnly;
    enc.position = PositionKind::Sinusoidal;
    enc.scale_embeddings = true;
    ModelConfig no_final = small_config();
    no_final.final_norm = false;
    ModelConfig rms_gqa = small_config();
    rms_gqa.norm = NormKind::RMSNorm;
    rms_gqa.n_heads = 4;
    rms_gqa.n_kv_heads = 2;
    rms_gqa.position = PositionKind::RoPE;
    rms_gqa.tie_embeddings = false;
    for (const ModelConfig& c : {enc, no_final, rms_gqa}) {
        const auto m = random_model(c);
        const LogitAttribution a = direct_logit_attribution(*m, {3, 1, 4, 1, 5, 9}, 4, 7, 11);
        ASSERT_TRUE(a.error.empty()) << a.error;
        EXPECT_NEAR(a.total, a.logit, 1e-4f) << c.name;
        EXPECT_GT(std::abs(a.logit), 1e-3f);
        EXPECT_EQ(a.position, 4);
        EXPECT_EQ(a.names.size(), a.values.size());
    }
}

TEST(LogitAttribution, PostNormAndResidualEditsAreRefusedWithAMessage) {
    const test::GoldenModel post = test::load_golden_model("model_encoder_sinusoidal.safetensors");
    const LogitAttribution a = direct_logit_attribution(*post.model, post.ids("in.ids"), -1, 1);
    EXPECT_NE(a.error.find("pre-norm residual streams"), std::string::npos) << a.error;
    EXPECT_TRUE(a.values.empty());

    const test::GoldenModel g = test::load_golden_model("model_gpt2.safetensors");
    ForwardOptions opt;
    opt.edits = {ActivationEdit::zero("dec.0.resid_attn", -1, 2)};
    const LogitAttribution b = direct_logit_attribution(*g.model, g.ids("in.ids"), -1, 1, -1, opt);
    EXPECT_NE(b.error.find("dec.0.resid_attn"), std::string::npos) << b.error;
    // An ablated head keeps the decomposition exact, and that head's component is 0.
    opt.edits = {ActivationEdit::zero("dec.1.attn.head_out", 3)};
    const LogitAttribution c = direct_logit_attribution(*g.model, g.ids("in.ids"), -1, 1, -1, opt);
    ASSERT_TRUE(c.error.empty()) << c.error;
    EXPECT_NEAR(c.total, c.logit, 1e-4f);
    int found = 0;
    for (size_t i = 0; i < c.names.size(); ++i)
        if (c.names[i] == "dec.1.attn.head3") {
            EXPECT_EQ(c.values[i], 0.0f);
            ++found;
        }
    EXPECT_EQ(found, 1);

    const test::GoldenModel s = test::load_golden_model("model_nn_transformer.safetensors");
    EXPECT_THROW((void)direct_logit_attribution(*s.model, {1, 2}, -1, 1), std::invalid_argument);
    EXPECT_THROW((void)direct_logit_attribution(*g.model, g.ids("in.ids"), 7, 1), std::invalid_argument);
    EXPECT_THROW((void)direct_logit_attribution(*g.model, g.ids("in.ids"), -1, 64), std::invalid_argument);
}

TEST(Patching, CancelProgressAndArgumentChecks) {
    const test::GoldenModel g = test::load_golden_model("model_gpt2.safetensors");
    const Model& m = *g.model;
    std::vector<int> clean = g.ids("in.ids"), corrupt = clean;
    corrupt[1] = (corrupt[1] + 11) % m.config().vocab_size;
    const PatchingBaseline b = prepare_patching(m, clean, corrupt, 22, 46);
    std::atomic<bool> stop{false};
    int last_done = 0;
    const PatchingResult r = patch_resid_pre(m, b, [&](int done, int total) {
        last_done = done;
        EXPECT_EQ(total, 2 * 7);
        if (done >= 5) stop = true;
    }, &stop);
    EXPECT_TRUE(r.cancelled);
    // Position 0 is the same token in both prompts: its cells need no forward and are exactly the corrupted run.
    EXPECT_EQ(r.normalized(0, 0), 0.0f);
    EXPECT_EQ(r.normalized(1, 0), 0.0f);
    // Cancelled after 5 cells: each of the (at most two) threads finishes the cell it is on, the rest stay NaN.
    EXPECT_LE(last_done, 7);
    EXPECT_GE((r.normalized.array().isNaN()).count(), 14 - 7);

    EXPECT_THROW((void)prepare_patching(m, clean, {1, 2}, 22, 46), std::invalid_argument);
    EXPECT_THROW((void)prepare_patching(m, clean, clean, 22, 46), std::invalid_argument);  // equal metrics
    EXPECT_THROW((void)prepare_patching(m, clean, corrupt, 22, 64), std::invalid_argument);
}

TEST(Ablation, SweepChecksAndCancel) {
    const test::GoldenModel g = test::load_golden_model("model_llama.safetensors");
    const Model& m = *g.model;
    AblationSweepOptions opt;
    EXPECT_THROW((void)head_ablation_sweep(m, g.ids("in.ids"), opt), std::invalid_argument);  // no targets
    opt.targets = {{6, 5}};
    EXPECT_THROW((void)head_ablation_sweep(m, g.ids("in.ids"), opt), std::invalid_argument);
    opt.targets = {{2, 40}};
    EXPECT_THROW((void)head_ablation_sweep(m, g.ids("in.ids"), opt), std::invalid_argument);
    opt.targets = {{2, 5}};
    std::atomic<bool> stop{true};
    opt.cancel = &stop;
    const AblationSweep s = head_ablation_sweep(m, g.ids("in.ids"), opt);
    EXPECT_TRUE(s.cancelled);
    EXPECT_TRUE(std::isnan(s.delta_log_prob(0, 0)));
    // A middle position is scored from the full logits (the last-row shortcut does not apply), and a span's
    // mean log-probability is the mean of its targets' sweeps.
    opt.cancel = nullptr;
    const std::vector<int> ids = g.ids("in.ids");
    const AblationSweep mid = head_ablation_sweep(m, ids, opt);
    EXPECT_GT(mid.delta_log_prob.cwiseAbs().maxCoeff(), 1e-4f);
    opt.targets = next_token_targets(ids, 1, 5);
    const AblationSweep span = head_ablation_sweep(m, ids, opt);
    MatrixRM mean = MatrixRM::Zero(2, 8);
    float clean = 0.0f;
    for (const TokenTarget& t : opt.targets) {
        AblationSweepOptions one = opt;
        one.targets = {t};
        const AblationSweep s1 = head_ablation_sweep(m, ids, one);
        mean += s1.delta_log_prob / 4.0f;
        clean += s1.clean_log_prob / 4.0f;
    }
    EXPECT_ALLCLOSE(span.delta_log_prob, mean, 1e-5f, 0.0f);
    EXPECT_NEAR(span.clean_log_prob, clean, 1e-5f);
    EXPECT_THROW((void)next_token_targets(ids, 2, 6), std::invalid_argument);  // ids[6] does not exist
    EXPECT_THROW((void)head_ablation_edits(m.config(), {{2, 0}}, AblationKind::Zero), std::invalid_argument);
    EXPECT_THROW((void)head_ablation_edits(m.config(), {{0, 8}}, AblationKind::Mean), std::invalid_argument);
}

TEST(AttentionFlow, OneLayerFlowIsTheAugmentedAttention) {
    MatrixRM a(3, 3);
    a << 1, 0, 0, 0.25f, 0.75f, 0, 0.2f, 0.3f, 0.5f;
    const AttentionFlow f = attention_flow({a});
    EXPECT_ALLCLOSE(f.flow, residual_augmented(a), 1e-7f, 0.0f);
    EXPECT_ALLCLOSE(attention_rollout({a}), residual_augmented(a), 1e-7f, 0.0f);
    // A fully masked row becomes attention to oneself.
    MatrixRM z = MatrixRM::Zero(2, 2);
    EXPECT_ALLCLOSE(residual_augmented(z), MatrixRM(MatrixRM::Identity(2, 2)), 0.0f, 0.0f);
}

TEST(AttentionFlow, TwoLayerFlowIsBoundedByItsCut) {
    // Layer 1: both positions attend fully to token 0; layer 2: position 1 attends fully to position 0.
    // Augmented: A1 = [[1, 0], [.5, .5]], A2 = [[1, 0], [.5, .5]]. From output 1 to input 0: paths
    // 1->0->0 (min(.5, 1) = .5) and 1->1->0 (min(.5, .5) = .5): flow 1. To input 1: only 1->1->1, min(.5, .5) = .5.
    MatrixRM a(2, 2);
    a << 1, 0, 1, 0;
    const AttentionFlow f = attention_flow({a, a});
    EXPECT_NEAR(f.flow(1, 0), 1.0f, 1e-7f);
    EXPECT_NEAR(f.flow(1, 1), 0.5f, 1e-7f);
    EXPECT_NEAR(f.normalized(1, 0), 1.0f / 1.5f, 1e-7f);
    EXPECT_NEAR(f.flow(0, 0), 1.0f, 1e-7f);
    // Rollout multiplies instead: row 1 = [.5*1 + .5*.5, .5*.5] = [.75, .25].
    const MatrixRM r = attention_rollout({a, a});
    EXPECT_NEAR(r(1, 0), 0.75f, 1e-7f);
    EXPECT_NEAR(r(1, 1), 0.25f, 1e-7f);
}

TEST(AttentionFlow, HeadMeanOfCrossAttentionIsTheMeanOverHeadsThenLayers) {
    // Two layers of cross-attention, 2 heads, 2 target rows, 3 source tokens: probs[h, t, s] = 0.1·(h + 1) + t + 10·l
    // + 100·s, so the head mean is 0.15 + t + 10·l + 100·s and the layer mean 0.15 + t + 5 + 100·s.
    Trace trace(CaptureFilter::all());
    for (int l = 0; l < 2; ++l) {
        std::vector<float> v;
        for (int h = 0; h < 2; ++h)
            for (int t = 0; t < 2; ++t)
                for (int s = 0; s < 3; ++s)
                    v.push_back(0.1f * float(h + 1) + float(t) + 10.0f * float(l) + 100.0f * float(s));
        trace.record("dec." + std::to_string(l) + ".cross_attn.probs", {2, 2, 3}, v.data());
    }
    const std::vector<MatrixRM> per_layer = head_mean_attention(trace, "dec", 2, "cross_attn");
    ASSERT_EQ(per_layer.size(), 2u);
    ASSERT_EQ(per_layer[1].rows(), 2);
    ASSERT_EQ(per_layer[1].cols(), 3);
    EXPECT_NEAR(per_layer[1](1, 2), 0.15f + 1 + 10 + 200, 1e-4f);
    const MatrixRM mean = mean_of(per_layer);
    EXPECT_NEAR(mean(0, 0), 5.15f, 1e-5f);
    EXPECT_NEAR(mean(1, 1), 0.15f + 1 + 5 + 100, 1e-4f);
    // Self-attention must be square; another part name is refused; shapes must agree.
    trace.record("dec.0.attn.probs", {2, 2, 3}, std::vector<float>(12, 0.0f).data());
    EXPECT_THROW_MSG(head_mean_attention(trace, "dec", 1), "(H, T, T)");
    EXPECT_THROW_MSG(head_mean_attention(trace, "dec", 1, "ffn"), "attn or cross_attn");
    EXPECT_THROW_MSG(mean_of({MatrixRM::Zero(2, 3), MatrixRM::Zero(3, 2)}), "another shape");
    EXPECT_THROW_MSG(mean_of({}), "no matrices");
}

TEST(AttentionFlow, RefusesLongInputsAndBadShapes) {
    EXPECT_THROW((void)attention_flow({MatrixRM::Zero(65, 65)}), std::invalid_argument);
    EXPECT_THROW((void)attention_flow({}), std::invalid_argument);
    EXPECT_THROW((void)attention_rollout({MatrixRM::Zero(3, 3), MatrixRM::Zero(2, 2)}), std::invalid_argument);
    Trace empty;
    EXPECT_THROW((void)head_mean_attention(empty, "dec", 1), std::invalid_argument);
    std::atomic<bool> stop{true};
    EXPECT_TRUE(attention_flow({MatrixRM::Identity(4, 4)}, {}, &stop).cancelled);
}

}  // namespace
}  // namespace ts
