// Trainer behaviour: finite-difference gradients (with and without dropout), the training kernels against the
// ops.h reference functions, token files and batches, overfitting a tiny repeated sequence, bit-exact resume from a
// checkpoint, and the model folder it writes.
#include "core/model/model.h"
#include "core/kernels/ops.h"
#include "core/formats/safetensors.h"
#include "core/train/data.h"
#include "core/train/train_kernels.h"
#include "core/train/train_model.h"
#include "core/train/trainer.h"
#include "tests/test_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <set>

namespace {

namespace fs = std::filesystem;
using namespace ts::train;

fs::path temp_dir(const std::string& name) {
    const fs::path p = fs::temp_directory_path() / ("ts_train_test_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(p);
    fs::create_directories(p);
    return p;
}

ts::ModelConfig tiny_config(ts::Activation act = ts::Activation::GELUTanh) {
    ts::ModelConfig c;
    c.vocab_size = 16;
    c.d_model = 32;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.d_ff = 48;
    c.n_layers = 2;
    c.max_seq_len = 16;
    c.activation = act;
    return c;
}

// Weights with a larger spread than init_weights so every path carries signal.
ts::WeightMap spread_weights(const ts::ModelConfig& c, uint64_t seed) {
    ts::WeightMap w = ts::init_weights(c, seed);
    std::mt19937 rng{static_cast<uint32_t>(seed)};
    std::normal_distribution<float> n(0.0f, 1.0f);
    for (auto& [name, t] : w) {
        const bool norm_w = name.find("norm.weight") != std::string::npos;
        for (float& v : t.data) v = norm_w ? 1.0f + 0.2f * n(rng) : (t.rank() == 1 ? 0.1f : 0.3f) * n(rng);
    }
    return w;
}

// --- finite differences -----------------------------------------------------------------------------------------

void check_finite_differences(const ts::ModelConfig& c, const StepOptions& opt) {
    const int B = 2, T = 8;
    TrainModel model(c, spread_weights(c, 3));
    std::vector<int> ids(B * T), tg(B * T);
    for (int i = 0; i < B * T; ++i) {
        ids[i] = (i * 7 + 3) % c.vocab_size;
        tg[i] = (i * 5 + 1) % c.vocab_size;
    }
    model.forward(ids, tg, B, T, opt);
    model.backward();
    const ts::WeightMap grads = model.grads();
    int checked = 0;
    for (const auto& [name, g] : grads) {
        // The two largest-magnitude entries of each tensor: the FD signal is well above float rounding there.
        std::vector<int64_t> idx(g.numel());
        std::iota(idx.begin(), idx.end(), 0);
        std::partial_sort(idx.begin(), idx.begin() + std::min<int64_t>(2, g.numel()), idx.end(),
                          [&g](int64_t a, int64_t b) { return std::abs(g.data[a]) > std::abs(g.data[b]); });
        for (int k = 0; k < std::min<int64_t>(2, g.numel()); ++k) {
            float& p = model.params().at(name).data[idx[k]];
            const float orig = p, h = 1e-2f * std::max(1.0f, std::abs(orig));
            p = orig + h;
            const double lp = model.forward(ids, tg, B, T, opt).loss;
            p = orig - h;
            const double lm = model.forward(ids, tg, B, T, opt).loss;
            p = orig;
            const double fd = (lp - lm) / (2.0 * h);
            const double an = g.data[idx[k]];
            EXPECT_NEAR(an, fd, 2e-3 + 2e-2 * std::abs(fd)) << name << "[" << idx[k] << "]";
            ++checked;
        }
    }
    EXPECT_GT(checked, 20);
}

TEST(TrainFiniteDifference, PreLayerNormGqaLearned) {
    check_finite_differences(tiny_config(), StepOptions{});
}

TEST(TrainFiniteDifference, RmsRopeSwigluQkNormLabelSmoothingZLoss) {
    ts::ModelConfig c = tiny_config(ts::Activation::SwiGLU);
    c.norm = ts::NormKind::RMSNorm;
    c.position = ts::PositionKind::RoPE;
    c.qk_norm = true;
    c.tie_embeddings = false;
    c.attn_qkv_bias = false;
    StepOptions o;
    o.label_smoothing = 0.1f;
    o.z_loss = 1e-2f;
    check_finite_differences(c, o);
}

TEST(TrainFiniteDifference, DropoutMasksAreDeterministicAndDifferentiated) {
    StepOptions o;
    o.attn_dropout = 0.2f;
    o.resid_dropout = 0.2f;
    o.seed = 11;
    o.step = 5;
    check_finite_differences(tiny_config(), o);
    ts::ModelConfig post = tiny_config(ts::Activation::GELU);
    post.norm_placement = ts::NormPlacement::Post;
    post.position = ts::PositionKind::Sinusoidal;
    check_finite_differences(post, o);
}

TEST(TrainModel, DropoutChangesTheLossAndDependsOnStep) {
    const ts::ModelConfig c = tiny_config();
    TrainModel model(c, spread_weights(c, 4));
    std::vector<int> ids(16), tg(16);
    for (int i = 0; i < 16; ++i) ids[i] = i, tg[i] = (i + 1) % 16;
    const float plain = model.forward(ids, tg, 2, 8, StepOptions{}).loss;
    StepOptions o;
    o.attn_dropout = o.resid_dropout = 0.3f;
    o.step = 1;
    const float d1 = model.forward(ids, tg, 2, 8, o).loss;
    const float d1_again = model.forward(ids, tg, 2, 8, o).loss;
    o.step = 2;
    const float d2 = model.forward(ids, tg, 2, 8, o).loss;
    EXPECT_NE(plain, d1);
    EXPECT_EQ(d1, d1_again);
    EXPECT_NE(d1, d2);
}

TEST(TrainModel, RejectsBadInputs) {
    const ts::ModelConfig c = tiny_config();
    TrainModel model(c, ts::init_weights(c, 1));
    std::vector<int> ids(8, 0), tg(8, 0);
    ids[3] = 16;
    EXPECT_THROW(model.forward(ids, tg, 1, 8), std::invalid_argument);
    EXPECT_THROW(model.forward(tg, tg, 2, 8), std::invalid_argument);  // 8 ids for a (2, 8) batch
    std::vector<int> long_ids(17, 0);
    EXPECT_THROW(model.forward(long_ids, long_ids, 1, 17), std::invalid_argument);  // beyond max_seq_len
    ts::WeightMap w = ts::init_weights(c, 1);
    w.erase("dec.0.attn.wq");
    EXPECT_THROW(TrainModel(c, w), std::invalid_argument);
}

// --- kernels vs ops.h -------------------------------------------------------------------------------------------

TEST(TrainKernels, ActivationsMatchOpsScalarFunctions) {
    std::vector<float> x(401), y(401), dy(401, 1.0f), dx(401);
    for (int i = 0; i < 401; ++i) x[i] = -10.0f + 0.05f * i;
    for (auto a : {ts::Activation::ReLU, ts::Activation::GELU, ts::Activation::GELUTanh, ts::Activation::SiLU,
                   ts::Activation::GLU, ts::Activation::SwiGLU, ts::Activation::GeGLU}) {
        activation_forward(a, x.data(), y.data(), 401);
        activation_backward(a, x.data(), dy.data(), dx.data(), 401);
        for (int i = 0; i < 401; ++i) {
            ASSERT_NEAR(y[i], ts::apply_activation(a, x[i]), 2e-6f * std::max(1.0f, std::abs(x[i])))
                << ts::to_string(a) << " x=" << x[i];
            ASSERT_NEAR(dx[i], ts::activation_grad(a, x[i]), 5e-6f) << ts::to_string(a) << " x=" << x[i];
        }
    }
}

TEST(TrainKernels, RopeMatchesOpsAndInverseUndoesIt) {
    for (auto layout : {ts::RopeLayout::HalfSplit, ts::RopeLayout::Interleaved}) {
        const int T = 12, H = 3, D = 8;
        const RopeTables tab = make_rope_tables(16, D, 10000.0f, layout);
        ts::MatrixRM x = ts::MatrixRM::Random(T, H * D);
        ts::MatrixRM ours = x;
        rope_rotate(tab, ours.data(), T, H, H * D, false);
        for (int h = 0; h < H; ++h) {
            ts::MatrixRM head = x.middleCols(h * D, D);
            ts::apply_rope_rows(head.data(), T, D, 0, 10000.0f, layout);
            EXPECT_ALLCLOSE(ts::MatrixRM(ours.middleCols(h * D, D)), head, 1e-5f, 1e-5f) << h;
        }
        rope_rotate(tab, ours.data(), T, H, H * D, true);
        EXPECT_ALLCLOSE(ours, x, 1e-6f, 0.0f);
    }
}

TEST(TrainKernels, LossMatchesOpsCrossEntropyAndZLoss) {
    ts::MatrixRM logits = ts::MatrixRM::Random(6, 11) * 3.0f;
    const std::vector<int> tg{1, 0, -1, 10, 5, 5};
    const LossParts lp = softmax_cross_entropy(logits, tg, 0.1f, 0.02f, false);
    EXPECT_NEAR(lp.ce, ts::cross_entropy(logits, tg, 0.1f), 1e-5);
    EXPECT_NEAR(lp.nll, ts::cross_entropy(logits, tg, 0.0f), 1e-5);
    EXPECT_NEAR(lp.z, ts::z_loss(logits, tg, 0.02f), 1e-5);
    EXPECT_EQ(lp.count, 5);
    // The gradient rows of counted targets sum to zero (softmax minus a distribution); ignored rows are zero.
    softmax_cross_entropy(logits, tg, 0.1f, 0.0f, true);
    for (int r = 0; r < 6; ++r) EXPECT_NEAR(logits.row(r).sum(), 0.0f, 1e-6f) << r;
    EXPECT_EQ(logits.row(2).cwiseAbs().maxCoeff(), 0.0f);
    std::vector<int> bad{0, 0, 0, 0, 0, 11};
    EXPECT_THROW(softmax_cross_entropy(logits, bad, 0.0f, 0.0f, false), std::invalid_argument);
}

TEST(TrainKernels, DropoutMaskRateAndDeterminism) {
    std::vector<float> a(100000), b(100000);
    dropout_mask(a.data(), 100000, 0.25f, 42);
    dropout_mask(b.data(), 100000, 0.25f, 42);
    EXPECT_EQ(a, b);
    const auto zeros = std::count(a.begin(), a.end(), 0.0f);
    EXPECT_NEAR(double(zeros) / 1e5, 0.25, 0.01);
    for (float v : a) ASSERT_TRUE(v == 0.0f || std::abs(v - 1.0f / 0.75f) < 1e-6f);
    dropout_mask(b.data(), 100000, 0.25f, 43);
    EXPECT_NE(a, b);
    EXPECT_THROW(dropout_mask(a.data(), 1, 1.0f, 0), std::invalid_argument);
}

// --- data -------------------------------------------------------------------------------------------------------

TEST(TrainData, TokenFilesRoundTrip) {
    const fs::path dir = temp_dir("tokens");
    const std::vector<int32_t> small{0, 5, 65535, 7}, big{0, 70000, 3};
    save_tokens(dir / "a.bin", small);
    save_tokens(dir / "b.bin", big);
    EXPECT_EQ(load_tokens(dir / "a.bin"), small);
    EXPECT_EQ(load_tokens(dir / "b.bin"), big);
    EXPECT_EQ(fs::file_size(dir / "a.bin"), 16u + 2u * small.size());  // uint16 when every id fits
    {
        std::ofstream raw(dir / "raw.bin", std::ios::binary);
        const uint16_t ids[3] = {9, 8, 7};
        raw.write(reinterpret_cast<const char*>(ids), sizeof ids);
    }
    EXPECT_EQ(load_tokens(dir / "raw.bin"), (std::vector<int32_t>{9, 8, 7}));
    {
        std::ofstream odd(dir / "odd.bin", std::ios::binary);
        odd << "abc";
    }
    EXPECT_THROW((void)load_tokens(dir / "odd.bin"), std::runtime_error);
    EXPECT_THROW((void)load_tokens(dir / "missing.bin"), std::runtime_error);
    fs::remove_all(dir);
}

TEST(TrainData, DoubledPassagesRepeatTheirFirstHalf) {
    std::vector<int32_t> ids(2000);
    for (int i = 0; i < 2000; ++i) ids[i] = i % 1000;
    const TokenDataset data(ids, 1000, 9, 0.1);  // T = 9: windows of 10 tokens, halves of 5
    std::vector<int> in, tg, plain_in, plain_tg;
    constexpr int B = 400;
    data.sample_batch(3, 11, B, in, tg, 0.5);
    data.sample_batch(3, 11, B, plain_in, plain_tg, 0.0);
    int doubled = 0;
    for (int b = 0; b < B; ++b) {
        std::vector<int> w(in.begin() + b * 9, in.begin() + b * 9 + 9);
        w.push_back(tg[size_t(b) * 9 + 8]);
        const bool is_doubled = w[5] == w[0];  // consecutive ids never repeat within 10 tokens otherwise
        if (is_doubled) {
            ++doubled;
            for (int i = 5; i < 10; ++i) EXPECT_EQ(w[size_t(i)], w[size_t(i - 5)]) << "window " << b;
        } else {
            for (int i = 0; i < 9; ++i) EXPECT_EQ(in[size_t(b) * 9 + i], plain_in[size_t(b) * 9 + i]);
        }
        for (int t = 1; t < 9; ++t) EXPECT_EQ(in[size_t(b) * 9 + t], tg[size_t(b) * 9 + t - 1]);
    }
    EXPECT_GT(doubled, B * 0.4);
    EXPECT_LT(doubled, B * 0.6);
    data.sample_batch(3, 11, B, plain_in, plain_tg, 0.0);
    int none = 0;
    for (int b = 0; b < B; ++b) none += plain_in[size_t(b) * 9 + 5] == plain_in[size_t(b) * 9];
    EXPECT_EQ(none, 0);
}

TEST(TrainData, RandomRepeatPeriodsVaryAndAreExactRepeats) {
    std::vector<int32_t> ids(5000);
    for (int i = 0; i < 5000; ++i) ids[i] = i % 1000;
    constexpr int T = 63, B = 200;  // periods drawn from [8, 32]
    const TokenDataset data(ids, 1000, T, 0.1);
    std::vector<int> in, tg;
    data.sample_batch(5, 2, B, in, tg, 1.0, 0);
    std::set<int> periods;
    for (int b = 0; b < B; ++b) {
        std::vector<int> w(in.begin() + b * T, in.begin() + (b + 1) * T);
        w.push_back(tg[size_t(b) * T + T - 1]);
        int p = 1;
        while (p < int(w.size()) && w[size_t(p)] != w[0]) ++p;
        ASSERT_GE(p, 8) << "window " << b;
        ASSERT_LE(p, 32) << "window " << b;
        for (size_t i = size_t(p); i < w.size(); ++i) EXPECT_EQ(w[i], w[i - size_t(p)]);
        periods.insert(p);
    }
    EXPECT_GT(periods.size(), 15u);  // content, not a fixed offset, must be matched
}

TEST(TrainData, RandomSpansRepeatAndAreNotContiguousPassages) {
    std::vector<int32_t> ids(5000);
    for (int i = 0; i < 5000; ++i) ids[i] = i % 1000;  // a passage is consecutive ids
    constexpr int T = 63, B = 100;
    const TokenDataset data(ids, 1000, T, 0.1);
    std::vector<int> in, tg;
    data.sample_batch(6, 3, B, in, tg, 1.0, 16, 1.0);  // every window: a random 16-token span repeated
    int contiguous = 0;
    for (int b = 0; b < B; ++b) {
        const int* w = &in[size_t(b) * T];
        for (int i = 16; i < T; ++i) EXPECT_EQ(w[i], w[i - 16]) << "window " << b;
        bool consecutive = true;
        for (int i = 1; i < 16; ++i) consecutive = consecutive && w[i] == (w[i - 1] + 1) % 1000;
        contiguous += consecutive;
    }
    EXPECT_EQ(contiguous, 0);
}

TEST(TrainData, BatchesAreShiftedSeededWindowsOfTheTrainPart) {
    std::vector<int32_t> ids(1000);
    for (int i = 0; i < 1000; ++i) ids[i] = i % 500;
    const TokenDataset data(ids, 500, 8, 0.1);
    EXPECT_EQ(data.train_size(), 900);
    EXPECT_EQ(data.val_size(), 100);
    std::vector<int> in, tg, in2, tg2;
    data.sample_batch(1, 7, 4, in, tg);
    data.sample_batch(1, 7, 4, in2, tg2);
    EXPECT_EQ(in, in2);
    data.sample_batch(1, 8, 4, in2, tg2);
    EXPECT_NE(in, in2);
    for (int b = 0; b < 4; ++b)
        for (int t = 0; t < 8; ++t) {
            EXPECT_EQ(tg[b * 8 + t], (in[b * 8 + t] + 1) % 500);
            if (t > 0) {
                EXPECT_EQ(in[b * 8 + t], tg[b * 8 + t - 1]);
            }
        }
    // Held-out windows come from the tail: positions 900..999 hold ids 400..499.
    EXPECT_EQ(data.val_windows(), 12);
    const int n = data.val_batch(10, 4, in, tg);
    EXPECT_EQ(n, 2);
    EXPECT_EQ(in[0], 400 + 80);
    EXPECT_EQ(tg[15], 400 + 96);
    EXPECT_THROW(TokenDataset(ids, 400, 8, 0.1), std::invalid_argument);  // id 499 outside vocab
    EXPECT_THROW(TokenDataset(std::vector<int32_t>(8, 0), 500, 8, 0.0), std::invalid_argument);
}

// --- the loop ---------------------------------------------------------------------------------------------------

std::shared_ptr<const TokenDataset> repeated_sequence_data(int vocab, int T) {
    // A fixed cycle through a permutation of the vocabulary: each token determines the next one.
    std::vector<int32_t> perm(vocab);
    for (int i = 0; i < vocab; ++i) perm[i] = (i * 5 + 3) % vocab;
    std::vector<int32_t> ids(4000);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = perm[i % vocab];
    return std::make_shared<const TokenDataset>(ids, vocab, T, 0.05);
}

TEST(Trainer, OverfitsATinyRepeatedSequence) {
    const ts::ModelConfig c = tiny_config();
    TrainOptions o;
    o.steps = 150;
    o.batch = 4;
    o.seq_len = 16;
    o.lr = 1e-2f;
    o.warmup = 10;
    o.eval_every = 50;
    o.ckpt_every = 1000;
    const fs::path dir = temp_dir("overfit");
    Trainer tr(c, ts::init_weights(c, 1), repeated_sequence_data(16, 16), o, dir);
    tr.run();
    ASSERT_EQ(tr.history().size(), 4u);  // steps 0, 50, 100, 150
    EXPECT_GT(tr.history().front().val_loss, 2.0);  // ~ln 16 = 2.77 at the start
    EXPECT_LT(tr.history().back().val_loss, 0.1);
    EXPECT_LT(tr.history().back().train_loss, 0.2);
    // The model folder holds a model whose inference forward agrees with the trained parameters.
    const auto m = ts::load_model_dir(dir);
    for (const auto& [name, t] : tr.model().params()) EXPECT_EQ(m->weight(name).data, t.data) << name;
    std::ifstream log(dir / "train_log.jsonl");
    std::string line;
    int lines = 0;
    while (std::getline(log, line)) {
        const auto j = nlohmann::json::parse(line);
        EXPECT_TRUE(j.contains("val_loss") && j.contains("tokens_per_s") && j.contains("elapsed_s"));
        ++lines;
    }
    EXPECT_EQ(lines, 4);
    fs::remove_all(dir);
}

TEST(Trainer, ResumeFromCheckpointIsBitIdenticalToAnUninterruptedRun) {
    ts::ModelConfig c = tiny_config(ts::Activation::SwiGLU);
    c.position = ts::PositionKind::RoPE;
    TrainOptions o;
    o.steps = 12;
    o.batch = 3;
    o.seq_len = 16;
    o.lr = 3e-3f;
    o.warmup = 3;
    o.eval_every = 3;
    o.ckpt_every = 6;
    o.dropout = 0.1f;
    o.label_smoothing = 0.05f;
    o.seed = 9;
    const auto data = repeated_sequence_data(16, 16);
    const fs::path full_dir = temp_dir("full"), split_dir = temp_dir("split");
    Trainer full(c, ts::init_weights(c, o.seed), data, o, full_dir);
    full.run();
    {
        Trainer first(c, ts::init_weights(c, o.seed), data, o, split_dir);
        first.run(6);  // "interrupted" right after the step-6 checkpoint
        EXPECT_EQ(first.step(), 6);
    }
    {
        // A later step's log line exists on disk from a run that died before its checkpoint: resume must drop it.
        std::ofstream(split_dir / "train_log.jsonl", std::ios::app) << R"({"step":7,"val_loss":1})" << "\n";
    }
    Trainer second(c, ts::init_weights(c, 12345), data, o, split_dir);  // init is overwritten by the checkpoint
    ASSERT_TRUE(second.resume());
    EXPECT_EQ(second.step(), 6);
    second.run();
    EXPECT_EQ(second.step(), 12);
    EXPECT_EQ(second.optimizer().t(), 12);
    for (const auto& [name, t] : full.model().params())
        EXPECT_EQ(second.model().params().at(name).data, t.data) << name;
    for (const auto& [name, t] : full.optimizer().exp_avg_sq())
        EXPECT_EQ(second.optimizer().exp_avg_sq().at(name).data, t.data) << name;
    ASSERT_EQ(second.history().size(), full.history().size());
    for (size_t i = 0; i < full.history().size(); ++i) {
        EXPECT_EQ(second.history()[i].step, full.history()[i].step);
        EXPECT_EQ(second.history()[i].val_loss, full.history()[i].val_loss);
    }
    // A checkpoint from another seed is refused.
    TrainOptions other = o;
    other.seed = 10;
    Trainer wrong(c, ts::init_weights(c, 1), data, other, split_dir);
    EXPECT_THROW(wrong.resume(), std::runtime_error);
    fs::remove_all(full_dir);
    fs::remove_all(split_dir);
}

TEST(Trainer, StepNamesParseOnlyTheTrainersOwnSpelling) {
    EXPECT_EQ(step_of_name("step-1200.safetensors", ".safetensors"), 1200);
    EXPECT_EQ(step_of_name("step-00000100", ""), 100);
    EXPECT_EQ(step_of_name("step-.safetensors", ".safetensors"), std::nullopt);
    EXPECT_EQ(step_of_name("step-12a.safetensors", ".safetensors"), std::nullopt);
    EXPECT_EQ(step_of_name("step-12.bin", ".safetensors"), std::nullopt);
    EXPECT_EQ(step_of_name("steps-12", ""), std::nullopt);
    EXPECT_EQ(step_of_name("step-1234567890123456", ""), std::nullopt);  // 16 digits
}

TEST(Trainer, KeepsTheLastCheckpointsAndAveragesThem) {
    const ts::ModelConfig c = tiny_config();
    TrainOptions o;
    o.steps = 6;
    o.batch = 2;
    o.seq_len = 16;
    o.lr = 1e-2f;
    o.warmup = 2;
    o.eval_every = 3;
    o.ckpt_every = 1;
    o.keep_checkpoints = 3;
    o.average_last = 2;
    const fs::path dir = temp_dir("average");
    Trainer tr(c, ts::init_weights(c, 1), repeated_sequence_data(16, 16), o, dir);
    tr.run();
    const auto kept = tr.kept_checkpoints();
    ASSERT_EQ(kept.size(), 3u);  // older ones deleted
    EXPECT_EQ(kept.front().filename(), "step-4.safetensors");
    EXPECT_EQ(kept.back().filename(), "step-6.safetensors");
    const ts::WeightMap s5 = ts::load_safetensors(dir / "checkpoints" / "step-5.safetensors");
    const ts::WeightMap s6 = ts::load_safetensors(dir / "checkpoints" / "step-6.safetensors");
    const ts::WeightMap last = ts::load_safetensors(dir / "last.safetensors");
    const auto m = ts::load_model_dir(dir);
    int differing = 0;
    for (const auto& [name, t] : tr.model().params()) {
        EXPECT_EQ(s6.at(name).data, t.data) << name;
        EXPECT_EQ(last.at(name).data, t.data) << name;
        const ts::Tensor& avg = m->weight(name);
        ASSERT_EQ(avg.data.size(), t.data.size());
        for (size_t i = 0; i < t.data.size(); ++i) {
            const double want = (double(s5.at(name).data[i]) + double(s6.at(name).data[i])) / 2.0;
            EXPECT_EQ(avg.data[i], float(want)) << name << "[" << i << "]";
            differing += s5.at(name).data[i] != s6.at(name).data[i];
        }
    }
    EXPECT_GT(differing, 100);  // the two snapshots differ, so the mean is not one of them
    // Files that disagree are refused with the tensor named.
    ts::WeightMap other = s5;
    auto matrix = std::find_if(other.begin(), other.end(), [](const auto& kv) { return kv.second.rank() == 2; });
    ASSERT_NE(matrix, other.end());
    matrix->second.shape = {int64_t(matrix->second.numel())};
    ts::save_safetensors(dir / "other.safetensors", other);
    try {
        (void)ts::train::average_weights({dir / "checkpoints" / "step-5.safetensors", dir / "other.safetensors"});
        ADD_FAILURE() << "no error";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(matrix->first), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)ts::train::average_weights({}), std::invalid_argument);
    // Averaging more checkpoints than are kept is refused up front.
    TrainOptions bad = o;
    bad.average_last = 4;
    EXPECT_THROW(Trainer(c, ts::init_weights(c, 1), repeated_sequence_data(16, 16), bad, dir), std::invalid_argument);
    fs::remove_all(dir);
}

}  // namespace
