// Compares core/ops against PyTorch 1.13 outputs stored in tests/golden/ops_*.safetensors (made by
// tests/reference/make_op_fixtures.py; regenerate with /usr/bin/python3 tests/reference/make_op_fixtures.py).
// fp32 throughout; every comparison is at <= 1e-5 absolute.
#include "core/kernels/ops.h"
#include "core/formats/safetensors.h"

#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ts {
namespace {

constexpr float kAtol = 1e-5f;

struct Fixture {
    WeightMap tensors;
    std::map<std::string, std::string> meta;

    explicit Fixture(const std::string& file) { tensors = load_safetensors(test::golden_path(file), &meta); }

    const Tensor& at(const std::string& name) const {
        const auto it = tensors.find(name);
        if (it == tensors.end()) throw std::runtime_error("fixture has no tensor '" + name + "'");
        return it->second;
    }
    MatrixRM mat(const std::string& name) const { return at(name).mat(); }
    std::vector<float> vec(const std::string& name) const { return at(name).data; }
    float scalar(const std::string& name) const { return at(name).data.at(0); }
    float meta_float(const std::string& key) const { return std::stof(meta.at(key)); }
};

MatrixRM map_elementwise(const MatrixRM& x, const std::function<float(float)>& f) {
    MatrixRM y(x.rows(), x.cols());
    for (Eigen::Index i = 0; i < x.size(); ++i) y.data()[i] = f(x.data()[i]);
    return y;
}

TEST(OpsGolden, ActivationsAndDerivatives) {
    const Fixture fx("ops_activations.safetensors");
    const MatrixRM x = fx.mat("x");
    const float alpha = fx.meta_float("leaky_relu_alpha"), beta = fx.meta_float("swish_beta");
    ASSERT_GT(x.size(), 100);
    const std::vector<std::pair<std::string, std::pair<std::function<float(float)>, std::function<float(float)>>>>
        cases = {
            {"tanh", {tanh_act, tanh_grad}},
            {"sigmoid", {sigmoid, sigmoid_grad}},
            {"relu", {relu, relu_grad}},
            {"leaky_relu",
             {[&](float v) { return leaky_relu(v, alpha); }, [&](float v) { return leaky_relu_grad(v, alpha); }}},
            {"gelu", {gelu, gelu_grad}},
            {"gelu_tanh", {gelu_tanh, gelu_tanh_grad}},
            {"silu", {[](float v) { return swish(v, 1.0f); }, [](float v) { return swish_grad(v, 1.0f); }}},
            {"swish_beta", {[&](float v) { return swish(v, beta); }, [&](float v) { return swish_grad(v, beta); }}},
        };
    for (const auto& [name, fns] : cases) {
        EXPECT_ALLCLOSE(map_elementwise(x, fns.first), fx.mat(name + ".y"), kAtol, 0.0f) << name;
        EXPECT_ALLCLOSE(map_elementwise(x, fns.second), fx.mat(name + ".dy"), kAtol, 0.0f) << name << " derivative";
    }
    // Dispatch by FFN kind lands on the same torch functions.
    MatrixRM y = x;
    apply_activation_inplace(Activation::GELUTanh, y);
    EXPECT_ALLCLOSE(y, fx.mat("gelu_tanh.y"), kAtol, 0.0f);
    y = x;
    apply_activation_inplace(Activation::SwiGLU, y);
    EXPECT_ALLCLOSE(y, fx.mat("silu.y"), kAtol, 0.0f);
}

TEST(OpsGolden, LayerNormAndRmsNorm) {
    const Fixture fx("ops_norms.safetensors");
    const float eps = fx.meta_float("eps");
    const MatrixRM x = fx.mat("x");
    const std::vector<float> gamma = fx.vec("gamma"), beta = fx.vec("beta");
    EXPECT_ALLCLOSE(layer_norm(x, gamma, beta, eps), fx.mat("layer_norm.y"), kAtol, 0.0f);
    EXPECT_ALLCLOSE(rms_norm(x, gamma, eps), fx.mat("rms_norm.y"), kAtol, 0.0f);
    EXPECT_ALLCLOSE(apply_norm(NormKind::RMSNorm, x, gamma, beta, eps), fx.mat("rms_norm.y"), kAtol, 0.0f);
}

TEST(OpsGolden, BatchNormTrainStepThenEval) {
    const Fixture fx("ops_norms.safetensors");
    const float eps = fx.meta_float("eps");
    const std::vector<float> gamma = fx.vec("gamma"), beta = fx.vec("beta");
    BatchNormState state;
    state.momentum = fx.meta_float("momentum");
    const MatrixRM y_train = batch_norm(fx.mat("batch_norm.x_train"), gamma, beta, eps, state, true);
    EXPECT_ALLCLOSE(y_train, fx.mat("batch_norm.y_train"), kAtol, 0.0f);
    EXPECT_ALLCLOSE(MatrixRM(state.running_mean), fx.mat("batch_norm.running_mean"), kAtol, 0.0f);
    EXPECT_ALLCLOSE(MatrixRM(state.running_var), fx.mat("batch_norm.running_var"), kAtol, 0.0f);
    const MatrixRM y_eval = batch_norm(fx.mat("batch_norm.x_eval"), gamma, beta, eps, state, false);
    EXPECT_ALLCLOSE(y_eval, fx.mat("batch_norm.y_eval"), kAtol, 0.0f);
}

TEST(OpsGolden, SinusoidalTable) {
    const Fixture fx("ops_positions.safetensors");
    const MatrixRM pe = sinusoidal_table(std::stoi(fx.meta.at("n_pos")), std::stoi(fx.meta.at("d_model")),
                                         fx.meta_float("base"));
    EXPECT_ALLCLOSE(pe, fx.mat("sinusoidal"), kAtol, 0.0f);
}

TEST(OpsGolden, RopeBothLayouts) {
    const Fixture fx("ops_positions.safetensors");
    const int start_pos = std::stoi(fx.meta.at("start_pos"));
    for (const float theta : {10000.0f, 500.0f}) {
        const std::string tag = std::to_string(int(theta));
        MatrixRM a = fx.mat("rope.x");
        apply_rope(a, start_pos, theta, RopeLayout::Interleaved);
        EXPECT_ALLCLOSE(a, fx.mat("rope.interleaved." + tag), kAtol, 0.0f) << "theta " << tag;
        MatrixRM b = fx.mat("rope.x");
        apply_rope_rows(b.data(), int(b.rows()), int(b.cols()), start_pos, theta, RopeLayout::HalfSplit);
        EXPECT_ALLCLOSE(b, fx.mat("rope.half_split." + tag), kAtol, 0.0f) << "theta " << tag;
    }
}

TEST(OpsGolden, SoftmaxFamily) {
    const Fixture fx("ops_softmax.safetensors");
    const MatrixRM x = fx.mat("x");
    EXPECT_ALLCLOSE(softmax_rows(x), fx.mat("softmax.t1"), kAtol, 0.0f);
    EXPECT_ALLCLOSE(softmax_rows(x, fx.meta_float("temperature")), fx.mat("softmax.t"), kAtol, 0.0f);
    const MatrixRM clean = fx.mat("clean");
    EXPECT_ALLCLOSE(log_softmax_rows(clean), fx.mat("log_softmax"), kAtol, 0.0f);
    const Eigen::VectorXf lse = logsumexp_rows(clean);
    EXPECT_TRUE(test::allclose(lse.data(), fx.at("logsumexp").data.data(), lse.size(), kAtol, 0.0f));
}

TEST(OpsGolden, CrossEntropyAndZLoss) {
    const Fixture fx("ops_losses.safetensors");
    const MatrixRM logits = fx.mat("logits");
    std::vector<int> targets;
    for (const float t : fx.vec("targets")) targets.push_back(int(t));
    EXPECT_NEAR(cross_entropy(logits, targets, fx.meta_float("label_smoothing")), fx.scalar("ce.smooth"), kAtol);
    EXPECT_NEAR(cross_entropy(logits, targets), fx.scalar("ce.plain"), kAtol);
    EXPECT_NEAR(z_loss(logits, targets, fx.meta_float("z_coef")), fx.scalar("z_loss"), 1e-8f);
}

}  // namespace
}  // namespace ts
