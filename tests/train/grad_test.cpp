// Training forward/backward against torch autograd (tests/golden/grad_*.safetensors from
// tests/reference/make_grad_fixtures.py): loss and every parameter gradient, one config per variant family;
// plus the training loss equals cross_entropy of the inference forward's logits.
#include "core/model/model.h"
#include "core/kernels/ops.h"
#include "core/formats/safetensors.h"
#include "core/train/train_model.h"
#include "tests/test_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

namespace {

struct GradFixture {
    ts::ModelConfig config;
    ts::WeightMap params, grads;
    std::vector<int> ids, targets;
    int B = 0, T = 0;
    float loss = 0, label_smoothing = 0, z_loss = 0;
};

GradFixture load_fixture(const std::string& name) {
    std::map<std::string, std::string> meta;
    const ts::WeightMap all = ts::load_safetensors(ts::test::golden_path("grad_" + name + ".safetensors"), &meta);
    GradFixture f;
    f.config = nlohmann::json::parse(meta.at("config")).get<ts::ModelConfig>();
    f.label_smoothing = std::stof(meta.at("label_smoothing"));
    f.z_loss = std::stof(meta.at("z_loss"));
    for (const auto& [k, t] : all) {
        if (k.rfind("param.", 0) == 0) f.params.emplace(k.substr(6), t);
        if (k.rfind("grad.", 0) == 0) f.grads.emplace(k.substr(5), t);
    }
    const ts::Tensor& ids = all.at("ids");
    const ts::Tensor& tg = all.at("targets");
    f.B = int(ids.dim(0));
    f.T = int(ids.dim(1));
    for (float v : ids.data) f.ids.push_back(int(v));
    for (float v : tg.data) f.targets.push_back(int(v));
    f.loss = all.at("loss").data.at(0);
    return f;
}

class GradFixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GradFixtureTest, LossAndEveryGradientMatchTorch) {
    const GradFixture f = load_fixture(GetParam());
    ts::train::TrainModel model(f.config, f.params);
    ts::train::StepOptions opt;
    opt.label_smoothing = f.label_smoothing;
    opt.z_loss = f.z_loss;
    const ts::train::StepLoss l = model.forward(f.ids, f.targets, f.B, f.T, opt);
    EXPECT_NEAR(l.loss, f.loss, 1e-4f * std::abs(f.loss)) << GetParam();
    model.backward();
    ASSERT_EQ(model.grads().size(), f.grads.size());
    float global_max = 0;
    for (const auto& [name, g] : f.grads)
        for (float v : g.data) global_max = std::max(global_max, std::abs(v));
    for (const auto& [name, expected] : f.grads) {
        const ts::Tensor& actual = model.grads().at(name);
        float max_abs = 0;
        for (float v : expected.data) max_abs = std::max(max_abs, std::abs(v));
        // 1e-4 relative per element, with an absolute floor of 1e-5 of the tensor's largest gradient (float32
        // sums over B*T rows cannot resolve elements much smaller than that) and 1e-6 of the model's largest (the
        // key bias gradient is exactly 0 in theory: softmax is shift invariant).
        const float atol = std::max(1e-5f * max_abs, 1e-6f * global_max);
        EXPECT_TRUE(ts::test::allclose(actual, expected, atol, 1e-4f)) << GetParam() << " " << name;
    }
}

TEST_P(GradFixtureTest, TrainingLossEqualsCrossEntropyOfInferenceLogits) {
    const GradFixture f = load_fixture(GetParam());
    ts::train::TrainModel model(f.config, f.params);
    ts::train::StepOptions opt;
    opt.label_smoothing = f.label_smoothing;
    const ts::train::StepLoss l = model.forward(f.ids, f.targets, f.B, f.T, opt);
    const ts::Model inference(f.config, f.params);
    double sum = 0;
    int count = 0;
    for (int b = 0; b < f.B; ++b) {
        const std::vector<int> ids(f.ids.begin() + b * f.T, f.ids.begin() + (b + 1) * f.T);
        const std::vector<int> tg(f.targets.begin() + b * f.T, f.targets.begin() + (b + 1) * f.T);
        const ts::ForwardResult r = ts::forward(inference, ids, ts::ForwardOptions{});
        // The training forward's logits rows for sequence b equal the inference logits.
        const ts::MatrixRM train_rows = model.logits().middleRows(int64_t(b) * f.T, f.T);
        EXPECT_TRUE(ts::test::allclose(train_rows, r.logits, 2e-4f, 1e-4f)) << GetParam() << " sequence " << b;
        int n = 0;
        for (int t : tg) n += t >= 0;
        sum += double(ts::cross_entropy(r.logits, tg, f.label_smoothing)) * n;
        count += n;
    }
    EXPECT_NEAR(l.ce, sum / count, 1e-5 * std::abs(sum / count)) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Variants, GradFixtureTest,
                         ::testing::Values("gpt2", "llama", "postnorm", "geglu_mqa", "smooth_zloss", "misc", "gelu_gqa",
                                           "attn_only", "attn_only_post"),
                         [](const auto& info) { return info.param; });

}  // namespace
