// Encoder–decoder training forward/backward against torch.nn.Transformer autograd (tests/golden/grad_encdec_*.safetensors
// from tests/reference/make_grad_fixtures.py: post-norm, pre-norm, and 3 encoder / 1 decoder layers, padding in
// source and target, label smoothing 0.1): loss and every parameter gradient; the training loss equals the
// cross-entropy of the inference forward_seq2seq logits; padding changes nothing; finite differences with dropout.
#include "core/model/model.h"
#include "core/kernels/ops.h"
#include "core/formats/safetensors.h"
#include "core/kernels/threads.h"
#include "core/train/train_model.h"
#include "tests/test_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>

namespace {

using ts::train::PairBatch;
using ts::train::StepOptions;
using ts::train::TrainModel;

struct EncDecFixture {
    ts::ModelConfig config;
    ts::WeightMap params, grads;
    PairBatch batch;
    float loss = 0, label_smoothing = 0;
};

EncDecFixture load_fixture(const std::string& name) {
    std::map<std::string, std::string> meta;
    const ts::WeightMap all =
        ts::load_safetensors(ts::test::golden_path("grad_encdec_" + name + ".safetensors"), &meta);
    EncDecFixture f;
    f.config = nlohmann::json::parse(meta.at("config")).get<ts::ModelConfig>();
    f.label_smoothing = std::stof(meta.at("label_smoothing"));
    for (const auto& [k, t] : all) {
        if (k.rfind("param.", 0) == 0) f.params.emplace(k.substr(6), t);
        if (k.rfind("grad.", 0) == 0) f.grads.emplace(k.substr(5), t);
    }
    PairBatch& b = f.batch;
    b.B = int(all.at("src").dim(0));
    b.S = int(all.at("src").dim(1));
    b.T = int(all.at("tgt").dim(1));
    for (float v : all.at("src").data) b.src.push_back(int(v));
    for (float v : all.at("tgt").data) b.tgt.push_back(int(v));
    for (float v : all.at("targets").data) b.targets.push_back(int(v));
    for (float v : all.at("src_pad").data) b.src_pad.push_back(v != 0.0f);
    for (float v : all.at("tgt_pad").data) b.tgt_pad.push_back(v != 0.0f);
    f.loss = all.at("loss").data.at(0);
    return f;
}

// Valid (unpadded) length of row b of a (B, n) padding mask.
int valid_length(const std::vector<uint8_t>& pad, int b, int n) {
    int len = 0;
    for (int j = 0; j < n; ++j) len += pad[size_t(b) * n + j] == 0;
    return len;
}

class EncDecGradTest : public ::testing::TestWithParam<std::string> {};

TEST_P(EncDecGradTest, LossAndEveryGradientMatchTorchTransformer) {
    const EncDecFixture f = load_fixture(GetParam());
    TrainModel model(f.config, f.params);
    StepOptions opt;
    opt.label_smoothing = f.label_smoothing;
    const ts::train::StepLoss l = model.forward(f.batch, opt);
    EXPECT_NEAR(l.loss, f.loss, 1e-4f * std::abs(f.loss)) << GetParam();
    model.backward();
    ASSERT_EQ(model.grads().size(), f.grads.size());
    float global_max = 0;
    for (const auto& [name, g] : f.grads)
        for (float v : g.data) global_max = std::max(global_max, std::abs(v));
    double worst = 0;  // max over tensors of max |ours - torch| / max |torch| (the report in the issue note)
    std::string worst_name;
    for (const auto& [name, expected] : f.grads) {
        const ts::Tensor& actual = model.grads().at(name);
        float max_abs = 0, max_err = 0;
        for (int64_t i = 0; i < expected.numel(); ++i) {
            max_abs = std::max(max_abs, std::abs(expected.data[i]));
            max_err = std::max(max_err, std::abs(actual.data[i] - expected.data[i]));
        }
        // Same tolerance as the decoder-only fixtures: 1e-4 relative per element with an absolute floor of 1e-5 of
        // the tensor's largest gradient and 1e-6 of the model's largest (key biases: exactly 0 in theory).
        const float atol = std::max(1e-5f * max_abs, 1e-6f * global_max);
        EXPECT_TRUE(ts::test::allclose(actual, expected, atol, 1e-4f)) << GetParam() << " " << name;
        if (max_abs > 1e-6f * global_max && double(max_err) / max_abs > worst) {
            worst = double(max_err) / max_abs;
            worst_name = name;
        }
    }
    std::printf("[ encdec_%s ] loss %.6f (torch %.6f, rel err %.1e); worst gradient %s: max|diff|/max|grad| %.1e\n",
                GetParam().c_str(), double(l.loss), double(f.loss), std::abs(double(l.loss) - f.loss) / f.loss,
                worst_name.c_str(), worst);
}

TEST_P(EncDecGradTest, TrainingLossEqualsCrossEntropyOfInferenceLogits) {
    const EncDecFixture f = load_fixture(GetParam());
    TrainModel model(f.config, f.params);
    StepOptions opt;
    opt.label_smoothing = f.label_smoothing;
    const ts::train::StepLoss l = model.forward(f.batch, opt);
    const ts::Model inference(f.config, f.params);
    const PairBatch& b = f.batch;
    double sum = 0;
    int count = 0;
    for (int i = 0; i < b.B; ++i) {
        // Each pair alone, without its padding, through the inference forward.
        const int S = valid_length(b.src_pad, i, b.S), T = valid_length(b.tgt_pad, i, b.T);
        const std::vector<int> src(b.src.begin() + i * b.S, b.src.begin() + i * b.S + S);
        const std::vector<int> tgt(b.tgt.begin() + i * b.T, b.tgt.begin() + i * b.T + T);
        const std::vector<int> tg(b.targets.begin() + i * b.T, b.targets.begin() + i * b.T + T);
        const ts::ForwardResult r = ts::forward_seq2seq(inference, src, tgt, ts::ForwardOptions{});
        const ts::MatrixRM train_rows = model.logits().middleRows(int64_t(i) * b.T, T);
        EXPECT_TRUE(ts::test::allclose(train_rows, r.logits, 2e-4f, 1e-4f)) << GetParam() << " pair " << i;
        sum += double(ts::cross_entropy(r.logits, tg, f.label_smoothing)) * T;
        count += T;
    }
    EXPECT_EQ(l.count, count);
    EXPECT_NEAR(l.ce, sum / count, 1e-5 * std::abs(sum / count)) << GetParam();
}

TEST_P(EncDecGradTest, ExtraPaddingChangesNeitherLossNorGradients) {
    const EncDecFixture f = load_fixture(GetParam());
    StepOptions opt;
    opt.label_smoothing = f.label_smoothing;
    TrainModel a(f.config, f.params);
    const float la = a.forward(f.batch, opt).loss;
    a.backward();
    // Two more padding columns on each side, holding ids that are not the fixture's padding id.
    const PairBatch& b = f.batch;
    PairBatch p;
    p.B = b.B;
    p.S = b.S + 2;
    p.T = b.T + 2;
    for (int i = 0; i < b.B; ++i) {
        for (int j = 0; j < p.S; ++j) {
            const bool old = j < b.S;
            p.src.push_back(old ? b.src[i * b.S + j] : 7);
            p.src_pad.push_back(old ? b.src_pad[i * b.S + j] : 1);
        }
        for (int j = 0; j < p.T; ++j) {
            const bool old = j < b.T;
            p.tgt.push_back(old ? b.tgt[i * b.T + j] : 9);
            p.tgt_pad.push_back(old ? b.tgt_pad[i * b.T + j] : 1);
            p.targets.push_back(old ? b.targets[i * b.T + j] : -1);
        }
    }
    TrainModel m(f.config, f.params);
    EXPECT_NEAR(m.forward(p, opt).loss, la, 1e-6f * la);
    m.backward();
    for (const auto& [name, g] : a.grads()) {
        float max_abs = 0;
        for (float v : g.data) max_abs = std::max(max_abs, std::abs(v));
        EXPECT_TRUE(ts::test::allclose(m.grads().at(name), g, 1e-5f * max_abs + 1e-7f, 1e-4f)) << name;
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, EncDecGradTest, ::testing::Values("post", "pre", "asym"),
                         [](const auto& info) { return info.param; });

// --- finite differences through dropout, RoPE, GQA, qk-norm, learned positions ------------------------------------

ts::ModelConfig tiny_encdec(ts::NormPlacement placement) {
    ts::ModelConfig c;
    c.arch = ts::Arch::EncoderDecoder;
    c.vocab_size = 16;
    c.d_model = 16;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.d_ff = 24;
    c.n_layers = 2;
    c.n_enc_layers = 1;
    c.max_seq_len = 12;
    c.norm_placement = placement;
    c.activation = ts::Activation::GELU;  // smooth: ReLU's kink is within the FD step (ReLU: torch fixtures)
    c.position = ts::PositionKind::Learned;
    c.scale_embeddings = true;
    return c;
}

PairBatch tiny_batch(int vocab) {
    PairBatch b;
    b.B = 2;
    b.S = 5;
    b.T = 4;
    const int src_len[2] = {5, 3}, tgt_len[2] = {2, 4};
    for (int i = 0; i < b.B; ++i) {
        for (int j = 0; j < b.S; ++j) {
            b.src.push_back((i * 5 + j * 3 + 1) % vocab);
            b.src_pad.push_back(j >= src_len[i]);
        }
        for (int j = 0; j < b.T; ++j) {
            b.tgt.push_back((i * 7 + j * 5 + 2) % vocab);
            b.tgt_pad.push_back(j >= tgt_len[i]);
            b.targets.push_back(j >= tgt_len[i] ? -1 : (i * 3 + j * 11 + 4) % vocab);
        }
    }
    return b;
}

void check_finite_differences(const ts::ModelConfig& c, const StepOptions& opt) {
    ts::WeightMap w = ts::init_weights(c, 5);
    std::mt19937 rng{5};
    std::normal_distribution<float> n(0.0f, 1.0f);
    for (auto& [name, t] : w) {
        const bool norm_w = name.find("norm.weight") != std::string::npos;
        for (float& v : t.data) v = norm_w ? 1.0f + 0.2f * n(rng) : (t.rank() == 1 ? 0.1f : 0.3f) * n(rng);
    }
    TrainModel model(c, w);
    const PairBatch b = tiny_batch(c.vocab_size);
    model.forward(b, opt);
    model.backward();
    const ts::WeightMap grads = model.grads();
    int checked = 0;
    for (const auto& [name, g] : grads) {
        std::vector<int64_t> idx(g.numel());
        std::iota(idx.begin(), idx.end(), 0);
        std::partial_sort(idx.begin(), idx.begin() + std::min<int64_t>(2, g.numel()), idx.end(),
                          [&g](int64_t x, int64_t y) { return std::abs(g.data[x]) > std::abs(g.data[y]); });
        for (int k = 0; k < std::min<int64_t>(2, g.numel()); ++k) {
            float& p = model.params().at(name).data[idx[k]];
            const float orig = p, h = 1e-2f * std::max(1.0f, std::abs(orig));
            p = orig + h;
            const double lp = model.forward(b, opt).loss;
            p = orig - h;
            const double lm = model.forward(b, opt).loss;
            p = orig;
            const double fd = (lp - lm) / (2.0 * h);
            EXPECT_NEAR(g.data[idx[k]], fd, 2e-3 + 2e-2 * std::abs(fd)) << name << "[" << idx[k] << "]";
            ++checked;
        }
    }
    EXPECT_GT(checked, 40);
}

TEST(EncDecFiniteDifference, PostNormDropoutLearnedPositionsGqa) {
    StepOptions o;
    o.attn_dropout = 0.2f;
    o.resid_dropout = 0.2f;
    o.label_smoothing = 0.1f;
    o.seed = 3;
    o.step = 7;
    check_finite_differences(tiny_encdec(ts::NormPlacement::Post), o);
}

TEST(EncDecFiniteDifference, PreRmsNormRopeQkNormSwigluUntied) {
    ts::ModelConfig c = tiny_encdec(ts::NormPlacement::Pre);
    c.norm = ts::NormKind::RMSNorm;
    c.position = ts::PositionKind::RoPE;
    c.qk_norm = true;
    c.activation = ts::Activation::SwiGLU;
    c.tie_embeddings = false;
    c.attn_qkv_bias = false;
    StepOptions o;
    o.z_loss = 1e-2f;
    check_finite_differences(c, o);
}

// The trainer's threads (`train --threads 2`): weight products cut into row ranges and attention cut into whole
// sequences give the loss and gradients of one thread, on a batch big enough (B*T >= 64 rows) to be cut, with GQA,
// padding and dropout.
TEST(EncDecTrainModel, TwoThreadsGiveTheGradientsOfOne) {
    ts::ModelConfig c = tiny_encdec(ts::NormPlacement::Post);
    c.vocab_size = 96;
    c.max_seq_len = 16;
    PairBatch b;
    b.B = 9, b.S = 13, b.T = 11;
    for (int i = 0; i < b.B; ++i) {
        for (int j = 0; j < b.S; ++j) {
            b.src.push_back((i * 31 + j * 7 + 1) % c.vocab_size);
            b.src_pad.push_back(j >= b.S - i % 4);
        }
        for (int j = 0; j < b.T; ++j) {
            b.tgt.push_back((i * 17 + j * 5 + 2) % c.vocab_size);
            b.tgt_pad.push_back(j >= b.T - i % 3);
            b.targets.push_back(j >= b.T - i % 3 ? -1 : (i * 13 + j * 11 + 4) % c.vocab_size);
        }
    }
    StepOptions o;
    o.attn_dropout = o.resid_dropout = 0.1f;
    o.label_smoothing = 0.1f;
    o.seed = 2;
    o.step = 5;
    const ts::WeightMap w = ts::init_weights(c, 3);
    const auto run = [&](int threads, ts::WeightMap& grads) {
        ts::set_compute_threads(threads);
        TrainModel model(c, w);
        const float loss = model.forward(b, o).loss;
        model.backward();
        grads = model.grads();
        ts::set_compute_threads(1);
        return loss;
    };
    ts::WeightMap g1, g2;
    const float l1 = run(1, g1), l2 = run(2, g2);
    EXPECT_NEAR(l1, l2, 1e-6f * std::abs(l1));
    ASSERT_EQ(g1.size(), g2.size());
    for (const auto& [name, t] : g1) {
        float scale = 1e-12f, diff = 0;
        for (size_t i = 0; i < t.data.size(); ++i) {
            scale = std::max(scale, std::abs(t.data[i]));
            diff = std::max(diff, std::abs(t.data[i] - g2.at(name).data[i]));
        }
        EXPECT_LE(diff, 1e-5f * scale + 1e-9f) << name;  // + 1e-9: the key bias gradient is 0 up to rounding
    }
}

TEST(EncDecTrainModel, RejectsBadBatches) {
    const ts::ModelConfig c = tiny_encdec(ts::NormPlacement::Post);
    TrainModel model(c, ts::init_weights(c, 1));
    PairBatch b = tiny_batch(c.vocab_size);
    PairBatch bad = b;
    bad.src[3] = 16;  // id outside the vocabulary
    EXPECT_THROW(model.forward(bad, {}), std::invalid_argument);
    bad = b;
    bad.tgt_pad.pop_back();
    EXPECT_THROW(model.forward(bad, {}), std::invalid_argument);
    bad = b;
    bad.S = 13;  // beyond max_seq_len (and the sizes no longer match)
    EXPECT_THROW(model.forward(bad, {}), std::invalid_argument);
    std::vector<int> ids(4, 1);
    EXPECT_THROW(model.forward(ids, ids, 1, 4), std::invalid_argument);  // decoder-only entry on an encoder-decoder
    b.src_pad.clear();  // no padding at all is allowed
    b.tgt_pad.clear();
    for (int& t : b.targets) t = t < 0 ? 0 : t;
    EXPECT_TRUE(std::isfinite(model.forward(b, {}).loss));
    ts::ModelConfig enc_only = c;
    enc_only.arch = ts::Arch::EncoderOnly;
    enc_only.n_enc_layers = 0;
    EXPECT_THROW(TrainModel(enc_only, ts::init_weights(enc_only, 1)), std::invalid_argument);
}

}  // namespace
