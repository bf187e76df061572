// Input attribution (core/interp/input_attribution.h) against torch autograd (tests/reference/
// make_attribution_fixtures.py, float64) on the GPT-2- and Llama-shaped golden models: the gradient with respect to
// the token embeddings, gradient x input, integrated gradients (50 midpoint steps) and occlusion (span 1 and 2), for
// a log-probability and a contrast target; plus the properties that do not need a reference.
#include "core/interp/input_attribution.h"
#include "core/train/train_model.h"
#include "tests/core/golden_model.h"
#include "tests/test_util.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <numeric>

namespace ts {
namespace {

using namespace ts::interp;

std::vector<float> vec(const Tensor& t) { return t.data; }

MatrixRM row_of(const std::vector<float>& v) { return Eigen::Map<const MatrixRM>(v.data(), 1, Eigen::Index(v.size())); }

// ||a - b|| / ||b||.
float rel_err(const Eigen::Ref<const MatrixRM>& a, const Eigen::Ref<const MatrixRM>& b) {
    return (a - b).norm() / std::max(b.norm(), 1e-30f);
}

class AttributionGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(AttributionGolden, MatchesTorchAutograd) {
    std::map<std::string, std::string> meta;
    const WeightMap t = load_safetensors(test::golden_path(GetParam()), &meta);
    const test::GoldenModel g = test::load_golden_model(meta.at("model"));
    const Model& m = *g.model;
    std::vector<int> ids;
    for (float v : t.at("in.ids").data) ids.push_back(int(v));
    GradientModel grad(m);
    for (const char* name : {"logprob", "contrast", "mean_baseline"}) {
        SCOPED_TRACE(name);
        const std::string pre = std::string("out.") + name + ".";
        const std::vector<float> tg = vec(t.at(pre + "target"));
        const AttributionTarget target{int(tg[0]), int(tg[1]), int(tg[2])};
        const int Tp = target.position + 1;
        const float value = t.at(pre + "value").data[0], baseline = t.at(pre + "baseline").data[0];
        const AttributionBaseline base_kind =
            t.at(pre + "baseline_kind").data[0] != 0 ? AttributionBaseline::MeanEmbedding : AttributionBaseline::Zero;

        // The raw gradient through TrainModel: one forward/backward of the prefix.
        const std::vector<int> prefix(ids.begin(), ids.begin() + Tp);
        const MatrixRM x = grad.token_embeddings(prefix);
        std::vector<int> targets(size_t(Tp), -1);
        targets.back() = target.token;
        train::StepOptions so;
        so.target_rows_only = true;
        grad.net().set_input_embeddings(&x);
        (void)grad.net().forward(prefix, targets, 1, Tp, so);
        ASSERT_EQ(grad.net().logits().rows(), 1);
        const RowVectorF row = grad.net().logits().row(0);
        MatrixRM dlogits = MatrixRM::Zero(1, row.size());
        if (target.contrast >= 0) {
            dlogits(0, target.token) = 1;
            dlogits(0, target.contrast) = -1;
        } else {
            const Eigen::ArrayXf p = (row.array() - row.maxCoeff()).exp();
            dlogits.row(0) = -(p / p.sum()).matrix().transpose();
            dlogits(0, target.token) += 1;
        }
        grad.net().backward(dlogits);
        const MatrixRM g_ref = t.at(pre + "grad").mat();
        EXPECT_LE(rel_err(grad.net().input_grad(), g_ref), 1e-5f);
        grad.net().set_input_embeddings(nullptr);

        AttributionOptions opt;
        opt.baseline = base_kind;
        opt.method = AttributionMethod::GradientTimesInput;
        const Attribution gx = attribute_tokens(m, &grad, ids, target, opt);
        EXPECT_EQ(gx.target.position, target.position);
        EXPECT_NEAR(gx.value, value, 1e-5f);
        EXPECT_NEAR(gx.baseline_value, baseline, 1e-5f);
        EXPECT_TRUE(std::isnan(gx.completeness_gap));
        EXPECT_ALLCLOSE(row_of(gx.scores), row_of(vec(t.at(pre + "grad_x_input"))), 1e-5f, 1e-4f);

        opt.method = AttributionMethod::IntegratedGradients;
        opt.steps = 50;
        opt.batch = 7;  // not a divisor: the last pass is short
        const Attribution ig = attribute_tokens(m, &grad, ids, target, opt);
        const std::vector<float> ig_ref = vec(t.at(pre + "integrated_gradients"));
        EXPECT_ALLCLOSE(row_of(ig.scores), row_of(ig_ref), 1e-4f, 1e-4f);
        const float ref_gap = std::accumulate(ig_ref.begin(), ig_ref.end(), 0.0f) - (value - baseline);
        EXPECT_NEAR(ig.completeness_gap, ref_gap, 1e-3f + 1e-4f * std::abs(ref_gap));
        if (std::string(name) == "mean_baseline") {
            // A smooth path (the reference's own gap is tiny): the adaptive rule computes the same integral, to the
            // accuracy of its stopping rule (interval errors under 0.5 % of f(x) − f(b)), from fewer points.
            opt.rule = IgRule::Adaptive;
            const Attribution ada = attribute_tokens(m, &grad, ids, target, opt);
            opt.rule = IgRule::Midpoint;
            EXPECT_ALLCLOSE(row_of(ada.scores), row_of(ig_ref), 2e-3f, 2e-2f);
            EXPECT_LE(std::abs(ada.completeness_gap), 0.005f * std::abs(value - baseline) + 1e-4f);
        }

        opt.method = AttributionMethod::Occlusion;
        const Attribution occ = attribute_tokens(m, nullptr, ids, target, opt);
        EXPECT_ALLCLOSE(row_of(occ.scores), row_of(vec(t.at(pre + "occlusion"))), 1e-5f, 1e-4f);
        EXPECT_TRUE(std::isnan(occ.baseline_value));
        opt.span = 2;
        const Attribution occ2 = attribute_tokens(m, nullptr, ids, target, opt);
        EXPECT_ALLCLOSE(row_of(occ2.scores), row_of(vec(t.at(pre + "occlusion_span2"))), 1e-5f, 1e-4f);
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, AttributionGolden,
                         ::testing::Values("attribution_gpt2.safetensors", "attribution_llama.safetensors"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                             std::string s = info.param;
                             return s.substr(12, s.find('.') - 12);  // "attribution_gpt2.safetensors" -> "gpt2"
                         });

class TranslationAttributionGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(TranslationAttributionGolden, MatchesTorchTransformer) {
    std::map<std::string, std::string> meta;
    const WeightMap t =
        load_safetensors(test::golden_path(std::string("attribution_encdec_") + GetParam() + ".safetensors"), &meta);
    const ModelConfig config = nlohmann::json::parse(meta.at("config")).get<ModelConfig>();
    const WeightMap trainer = load_safetensors(test::golden_path(meta.at("model")));
    WeightMap params;
    for (const auto& [k, w] : trainer)
        if (k.rfind("param.", 0) == 0) params.emplace(k.substr(6), w);
    const Model m(config, params);
    const auto ids = [&t](const char* name) {
        std::vector<int> r;
        for (float v : t.at(name).data) r.push_back(int(v));
        return r;
    };
    const std::vector<int> src = ids("in.src"), dec_in = ids("in.dec_in"), out = ids("in.out");
    const int T = int(dec_in.size());
    GradientModel grad(m);
    AttributionOptions opt;
    const std::pair<AttributionMethod, const char*> methods[] = {
        {AttributionMethod::GradientTimesInput, "grad_x_input"},
        {AttributionMethod::IntegratedGradients, "integrated_gradients"},
        {AttributionMethod::Occlusion, "occlusion"}};
    for (const auto& [method, name] : methods) {
        SCOPED_TRACE(name);
        opt.method = method;
        opt.batch = 9;
        const Seq2SeqAttribution a = attribute_translation(m, &grad, src, dec_in, out, opt);
        EXPECT_ALLCLOSE(row_of(a.value), t.at("out.value").mat().reshaped<Eigen::RowMajor>().transpose().eval(), 2e-5f,
                        1e-5f);
        EXPECT_ALLCLOSE(a.source, t.at(std::string("out.") + name + ".source").mat(), 2e-5f, 1e-4f);
        MatrixRM target = a.target;
        for (int r = 0; r < T; ++r)
            for (int c = r + 1; c < T; ++c) {
                EXPECT_TRUE(std::isnan(target(r, c)));
                target(r, c) = 0;  // the reference holds 0 there
            }
        EXPECT_ALLCLOSE(target, t.at(std::string("out.") + name + ".target").mat(), 2e-5f, 1e-4f);
        if (method == AttributionMethod::IntegratedGradients)
            for (int r = 0; r < T; ++r) {
                const float ref = t.at("out.integrated_gradients.source").mat().row(r).sum() +
                    t.at("out.integrated_gradients.target").mat().row(r).sum() -
                    (t.at("out.value").data[size_t(r)] - t.at("out.baseline").data[size_t(r)]);
                EXPECT_NEAR(a.completeness_gap[size_t(r)], ref, 1e-3f);
            }
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TranslationAttributionGolden, ::testing::Values("pre", "post"));

TEST(Attribution, IntegratedGradientsOfTheSameBatchSizesAgree) {
    const test::GoldenModel g = test::load_golden_model("model_gpt2.safetensors");
    GradientModel grad(*g.model);
    const std::vector<int> ids = g.ids("in.ids");
    AttributionOptions a, b;
    a.batch = 1;
    b.batch = 64;
    const AttributionTarget target{-1, 3, -1};
    const Attribution ra = attribute_tokens(*g.model, &grad, ids, target, a);
    const Attribution rb = attribute_tokens(*g.model, &grad, ids, target, b);
    EXPECT_ALLCLOSE(row_of(ra.scores), row_of(rb.scores), 1e-5f, 1e-5f);
    EXPECT_LT(std::abs(ra.completeness_gap), 0.01f * std::abs(ra.value - ra.baseline_value));
}

TEST(Attribution, ErrorsNameWhatIsWrong) {
    const test::GoldenModel g = test::load_golden_model("model_gpt2.safetensors");
    GradientModel grad(*g.model);
    const std::vector<int> ids = g.ids("in.ids");
    const int V = g.model->config().vocab_size;
    AttributionOptions opt;
    EXPECT_THROW_MSG(attribute_tokens(*g.model, &grad, {}, {-1, 0, -1}, opt), "no input tokens");
    EXPECT_THROW_MSG(attribute_tokens(*g.model, &grad, ids, {int(ids.size()), 0, -1}, opt), "position");
    EXPECT_THROW_MSG(attribute_tokens(*g.model, &grad, ids, {-1, V, -1}, opt), "token");
    EXPECT_THROW_MSG(attribute_tokens(*g.model, &grad, ids, {-1, 0, V + 3}, opt), "contrast");
    EXPECT_THROW_MSG(attribute_tokens(*g.model, nullptr, ids, {-1, 0, -1}, opt), "GradientModel");
    opt.steps = 0;
    EXPECT_THROW_MSG(attribute_tokens(*g.model, &grad, ids, {-1, 0, -1}, opt), "steps");
    opt.steps = 50;
    opt.span = 0;
    EXPECT_THROW_MSG(attribute_tokens(*g.model, &grad, ids, {-1, 0, -1}, opt), "span");
    ModelConfig c = g.model->config();
    c.parallel_residual = true;
    EXPECT_NE(gradient_unsupported(c).find("parallel_residual"), std::string::npos);
    c = g.model->config();
    c.sliding_window = 4;
    EXPECT_EQ(gradient_unsupported(c, 4), "");
    EXPECT_NE(gradient_unsupported(c, 5).find("sliding window"), std::string::npos);
}

TEST(Attribution, CancelLeavesNaNAndSaysSo) {
    const test::GoldenModel g = test::load_golden_model("model_gpt2.safetensors");
    GradientModel grad(*g.model);
    std::atomic<bool> stop{true};
    AttributionOptions opt;
    opt.cancel = &stop;
    const Attribution r = attribute_tokens(*g.model, &grad, g.ids("in.ids"), {-1, 1, -1}, opt);
    EXPECT_TRUE(r.cancelled);
    EXPECT_TRUE(std::isnan(r.scores.at(0)));
}

TEST(Attribution, SpearmanAsScipy) {
    // scipy.stats.spearmanr([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) = 0.8207826816681233 (ties averaged)
    EXPECT_NEAR(spearman({1, 2, 3, 4, 5}, {5, 6, 7, 8, 7}), 0.8207826816681233f, 1e-6f);
    EXPECT_NEAR(spearman({1, 2, 3}, {3, 2, 1}), -1.0f, 1e-6f);
    EXPECT_TRUE(std::isnan(spearman({1, 1, 1}, {1, 2, 3})));
    EXPECT_THROW((void)spearman({1, 2}, {1}), std::invalid_argument);
}

TEST(Attribution, RankCorrelationPerRowUsesTheMagnitudeOfTheScores) {
    MatrixRM attr(2, 3), attn(2, 3);
    attr << -3, 1, 2,  // |·| = 3, 1, 2: ranked like attn's row 0
        1, 2, 3;
    attn << 0.5f, 0.1f, 0.4f,  //
        0.6f, 0.3f, 0.1f;      // the reverse order
    const std::vector<float> rho = attention_attribution_rank_corr(attr, attn);
    ASSERT_EQ(rho.size(), 2u);
    EXPECT_NEAR(rho[0], 1.0f, 1e-6f);
    EXPECT_NEAR(rho[1], -1.0f, 1e-6f);
    EXPECT_THROW_MSG(attention_attribution_rank_corr(attr, MatrixRM::Zero(2, 2)), "attention (2, 2)");
}

TEST(Attribution, GradientModelCacheLendsTheSameModelAgainAndAnotherOneWhileLent) {
    const test::GoldenModel g = test::load_golden_model("model_gpt2.safetensors");
    const test::GoldenModel h = test::load_golden_model("model_llama.safetensors");
    GradientModelCache cache;
    GradientModel* first = nullptr;
    {
        const std::shared_ptr<GradientModel> a = cache.lease(*g.model);
        first = a.get();
        // While `a` is out, a second lease gets a GradientModel of its own.
        const std::shared_ptr<GradientModel> b = cache.lease(*g.model);
        EXPECT_NE(b.get(), first);
    }
    // Given back: the next lease of the same model reuses one, and it still computes the same scores.
    const std::vector<int> ids = g.ids("in.ids");
    AttributionOptions opt;
    opt.method = AttributionMethod::GradientTimesInput;
    GradientModel fresh(*g.model);
    const Attribution want = attribute_tokens(*g.model, &fresh, ids, {-1, 3, -1}, opt);
    {
        const std::shared_ptr<GradientModel> again = cache.lease(*g.model);
        const Attribution got = attribute_tokens(*g.model, again.get(), ids, {-1, 3, -1}, opt);
        EXPECT_ALLCLOSE(row_of(got.scores), row_of(want.scores), 0.0f, 0.0f);
        // Another model gets its own, built for it.
        const std::shared_ptr<GradientModel> other = cache.lease(*h.model);
        EXPECT_EQ(other->config().d_model, h.model->config().d_model);
        EXPECT_NE(other.get(), again.get());
    }
    cache.clear();
    EXPECT_NE(cache.lease(*g.model), nullptr);
}

TEST(Attribution, MethodNamesRoundTrip) {
    for (AttributionMethod m :
         {AttributionMethod::GradientTimesInput, AttributionMethod::IntegratedGradients, AttributionMethod::Occlusion})
        EXPECT_EQ(parse_attribution_method(name_of(m)), m);
    EXPECT_FALSE(parse_attribution_method("saliency").has_value());
}

}  // namespace
}  // namespace ts
