// Encoder–decoder training on sentence pairs: reading a pair TSV per direction (language tokens, end tokens, length
// limit), PairDataset's length-bucketed batches (every pair once per epoch, budget respected, little padding,
// deterministic), a 50-step smoke run whose loss falls, and bit-identical resume.
#include "core/model/model.h"
#include "core/tokenizer/bpe_train.h"
#include "core/train/pair_data.h"
#include "core/train/train_init.h"
#include "core/train/trainer.h"
#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace {

namespace fs = std::filesystem;
using namespace ts::train;

fs::path temp_dir(const std::string& name) {
    const fs::path p = fs::temp_directory_path() / ("ts_pair_test_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(p);
    fs::create_directories(p);
    return p;
}

std::shared_ptr<const ts::Tokenizer> pair_tokenizer(const std::string& text) {
    ts::BpeTrainOptions o;
    o.vocab_size = 300;
    o.special_tokens = {"<|endoftext|>", "<pad>", "<2en>", "<2zh>"};
    return ts::train_bpe(std::vector<std::string>{text}, o);
}

TEST(PairData, ReadsBothDirectionsWithLanguageAndEndTokens) {
    const fs::path dir = temp_dir("read");
    const std::string text = "Open file\t打开文件\nno tab here\nSave <pad> as\t另存为\n\t空\nClose\t关闭\r\n";
    std::ofstream(dir / "p.tsv") << text;
    const auto tok = pair_tokenizer(text);
    const PairTokens ids = find_pair_tokens(*tok, PairDirection::Both);
    PairReadStats st;
    const auto ex = read_pair_tsv(dir / "p.tsv", *tok, PairDirection::Both, ids, 64, &st);
    EXPECT_EQ(st.lines, 5);
    EXPECT_EQ(st.malformed, 2);
    ASSERT_EQ(ex.size(), 6u);  // three pairs x two directions
    const ts::EncodeOptions plain{false};
    // en -> zh: <2zh> + English + end; target Chinese + end.
    std::vector<int32_t> src{ids.to_zh};
    for (int32_t i : tok->encode_ids("Open file", plain)) src.push_back(i);
    src.push_back(ids.end);
    std::vector<int32_t> tgt = tok->encode_ids("打开文件", plain);
    tgt.push_back(ids.end);
    EXPECT_EQ(ex[0].src, src);
    EXPECT_EQ(ex[0].tgt, tgt);
    EXPECT_EQ(ex[1].src.front(), ids.to_en);  // zh -> en of the same line
    EXPECT_EQ(ex[1].line, 0);
    EXPECT_EQ(ex[2].line, 2);
    // "<pad>" in a message is text, not the padding token; the last line's "\r" is dropped.
    EXPECT_EQ(std::count(ex[2].src.begin(), ex[2].src.end(), ids.pad), 0);
    EXPECT_EQ(tok->decode(ex[4].tgt), "关闭<|endoftext|>");
    // One direction: no language token; a length limit drops long examples.
    const PairTokens one = find_pair_tokens(*tok, PairDirection::ZhEn);
    EXPECT_EQ(one.to_en, -1);
    const auto zh_en = read_pair_tsv(dir / "p.tsv", *tok, PairDirection::ZhEn, one, 64, &st);
    ASSERT_EQ(zh_en.size(), 3u);
    size_t limit = 64;
    for (const auto& e : zh_en) limit = std::min(limit, std::max(e.src.size(), e.tgt.size()));
    const auto short_only = read_pair_tsv(dir / "p.tsv", *tok, PairDirection::ZhEn, one, int(limit), &st);
    EXPECT_GT(st.too_long, 0);
    EXPECT_EQ(st.too_long + st.examples, 3);
    for (const auto& e : short_only) EXPECT_LE(std::max(e.src.size(), e.tgt.size()), limit);
    EXPECT_THROW((void)read_pair_tsv(dir / "p.tsv", *tok, PairDirection::ZhEn, one, 1), std::runtime_error);
    EXPECT_THROW((void)read_pair_tsv(dir / "missing.tsv", *tok, PairDirection::ZhEn, one, 64), std::runtime_error);
    // A tokenizer without the language tokens cannot train both directions.
    ts::BpeTrainOptions o;
    o.vocab_size = 270;
    o.special_tokens = {"<|endoftext|>", "<pad>"};
    const auto small = ts::train_bpe(std::vector<std::string>{text}, o);
    EXPECT_NO_THROW((void)find_pair_tokens(*small, PairDirection::EnZh));
    EXPECT_THROW((void)find_pair_tokens(*small, PairDirection::Both), std::invalid_argument);
    EXPECT_THROW((void)pair_direction_from_string("fr-en"), std::invalid_argument);
    fs::remove_all(dir);
}

// Synthetic pairs: source a b c ..., target the same tokens reversed and shifted by one id; lengths 1..12.
std::vector<PairExample> reverse_pairs(int n, int vocab, uint64_t seed) {
    std::vector<PairExample> out;
    for (int i = 0; i < n; ++i) {
        const int len = 1 + int(mix64(seed + i) % 12);
        PairExample e;
        for (int j = 0; j < len; ++j) e.src.push_back(3 + int(mix64(seed * 31 + i * 17 + j) % (vocab - 4)));
        for (int j = len - 1; j >= 0; --j) e.tgt.push_back(3 + (e.src[j] - 3 + 1) % (vocab - 4));
        e.src.push_back(0);  // end token
        e.tgt.push_back(0);
        e.line = i;
        out.push_back(e);
    }
    return out;
}

TEST(PairData, BucketedBatchesCoverEveryPairOncePerEpochWithinTheBudget) {
    const auto train = reverse_pairs(500, 20, 1);
    PairBatchOptions o;
    o.max_pairs = 16;
    o.max_tokens = 96;
    const PairDataset ds(train, reverse_pairs(40, 20, 2), 20, 1, 0, o, 7);
    EXPECT_EQ(ds.max_len(), 13);
    const int n = ds.train_batches();
    std::multiset<std::vector<int>> seen;
    PairBatch b;
    for (int s = 0; s < n; ++s) {
        ds.train_batch(uint64_t(s), b);
        EXPECT_LE(b.B, 16);
        EXPECT_LE(b.B * std::max(b.S, b.T), 96);
        for (int i = 0; i < b.B; ++i) {
            std::vector<int> src;
            for (int j = 0; j < b.S; ++j) {
                if (!b.src_pad[i * b.S + j]) {
                    src.push_back(b.src[i * b.S + j]);
                } else {
                    EXPECT_EQ(b.src[i * b.S + j], 1);  // padding holds pad_id
                }
            }
            seen.insert(src);
            // Decoder input = start + target shifted right; targets -1 exactly at padding.
            EXPECT_EQ(b.tgt[i * b.T], 0);
            for (int j = 1; j < b.T; ++j) {
                if (!b.tgt_pad[i * b.T + j]) {
                    EXPECT_EQ(b.tgt[i * b.T + j], b.targets[i * b.T + j - 1]);
                }
            }
            for (int j = 0; j < b.T; ++j) EXPECT_EQ(b.tgt_pad[i * b.T + j] != 0, b.targets[i * b.T + j] == -1);
        }
    }
    std::multiset<std::vector<int>> all;
    for (const auto& e : train) all.insert(std::vector<int>(e.src.begin(), e.src.end()));
    EXPECT_EQ(seen, all);  // one epoch = every pair exactly once
    // Sorted by length, batches carry little padding; the next epoch visits the batches in another order.
    EXPECT_LT(ds.padding_fraction(), 0.12);
    std::vector<int> first, second;
    for (int s = 0; s < n; ++s) {
        ds.train_batch(uint64_t(s), b);
        first.push_back(b.src[0]);
        ds.train_batch(uint64_t(n + s), b);
        second.push_back(b.src[0]);
    }
    EXPECT_NE(first, second);
    PairBatch again;
    ds.train_batch(5, b);
    ds.train_batch(5, again);
    EXPECT_EQ(b.src, again.src);  // a pure function of the step
    // Random batches of 16 of the same pairs would be about half padding.
    double padded = 0, real = 0;
    for (size_t i = 0; i + 16 <= train.size(); i += 16) {
        size_t S = 0, T = 0;
        for (size_t k = i; k < i + 16; ++k) {
            S = std::max(S, train[k].src.size()), T = std::max(T, train[k].tgt.size());
            real += double(train[k].src.size() + train[k].tgt.size());
        }
        padded += 16.0 * double(S + T);
    }
    EXPECT_GT(1.0 - real / padded, 0.3);
    EXPECT_EQ(ds.val_batches() > 0, true);
    EXPECT_THROW(PairDataset({}, {}, 20, 1, 0, o, 7), std::invalid_argument);
    EXPECT_THROW(PairDataset(train, {}, 10, 1, 0, o, 7), std::invalid_argument);  // ids beyond the vocabulary
}

ts::ModelConfig tiny_translation_config(int vocab) {
    ts::ModelConfig c;
    c.name = "tiny-reverse";
    c.arch = ts::Arch::EncoderDecoder;
    c.vocab_size = vocab;
    c.d_model = 32;
    c.n_heads = 4;
    c.n_kv_heads = 4;
    c.d_ff = 64;
    c.n_layers = 2;
    c.n_enc_layers = 2;
    c.max_seq_len = 16;
    c.norm_placement = ts::NormPlacement::Post;  // the paper's architecture
    c.activation = ts::Activation::ReLU;
    c.position = ts::PositionKind::Sinusoidal;
    c.scale_embeddings = true;
    c.tie_embeddings = true;
    return c;
}

TrainOptions paper_options() {
    TrainOptions o;
    o.steps = 50;
    o.batch = 32;
    o.batch_tokens = 256;
    o.schedule = LrScheduleKind::InverseSqrt;
    o.lr_factor = 0.2f;  // eq. 3 alone peaks at (d_model * warmup)^-0.5 = 0.056 for this tiny model: too hot
    o.warmup = 10;
    o.beta1 = 0.9f;
    o.beta2 = 0.98f;
    o.adam_eps = 1e-9f;
    o.weight_decay = 0.0f;
    o.label_smoothing = 0.1f;
    o.dropout = 0.1f;
    o.eval_every = 25;
    o.eval_batches = 4;
    o.ckpt_every = 1000;
    o.log_every = 10;
    return o;
}

TEST(PairTrainer, InitialWeightsFollowTorchTransformerAndFairseq) {
    const ts::ModelConfig c = tiny_translation_config(24);
    const ts::WeightMap w = init_transformer_weights(c, 4);
    EXPECT_EQ(w.size(), ts::expected_weights(c).size());
    double sum2 = 0;
    for (float v : w.at("tok_emb.weight").data) sum2 += double(v) * v;
    EXPECT_NEAR(std::sqrt(sum2 / double(w.at("tok_emb.weight").numel())), 1.0 / std::sqrt(32.0), 0.02);
    const float a = std::sqrt(6.0f / (64 + 32));  // dec.0.ffn.w_up: (d_ff, d_model)
    float max_abs = 0;
    for (float v : w.at("dec.0.ffn.w_up").data) max_abs = std::max(max_abs, std::abs(v));
    EXPECT_LE(max_abs, a);
    EXPECT_GT(max_abs, 0.9f * a);
    for (float v : w.at("dec.1.cross_norm.weight").data) EXPECT_EQ(v, 1.0f);
    for (float v : w.at("enc.0.attn.bq").data) EXPECT_EQ(v, 0.0f);
    EXPECT_NO_THROW(ts::Model(c, w));
}

TEST(PairTrainer, FiftyStepSmokeRunLowersTheLossAndWritesALoadableModel) {
    const int V = 24;
    const auto data = std::make_shared<const PairDataset>(reverse_pairs(800, V, 3), reverse_pairs(64, V, 4), V, 1, 0,
                                                          PairBatchOptions{32, 256}, 5);
    const ts::ModelConfig c = tiny_translation_config(V);
    const TrainOptions o = paper_options();
    const fs::path dir = temp_dir("smoke");
    Trainer tr(c, init_transformer_weights(c, 1), data, o, dir);
    tr.run();
    ASSERT_EQ(tr.history().size(), 3u);  // steps 0, 25, 50
    const double v0 = tr.history().front().val_loss, v1 = tr.history().back().val_loss;
    std::printf("[ smoke ] held-out loss %.3f -> %.3f nats/token in 50 steps; train loss (smoothed) %.3f\n", v0, v1,
                tr.history().back().train_loss);
    EXPECT_GT(v0, 3.0);        // ~ln 24 = 3.18 and more at the start
    EXPECT_LT(v1, v0 - 0.5);   // learning, not noise
    // Below the entropy of the target tokens' unigram distribution (2.99 nats: 20 tokens and the end token), which
    // is the best a model that ignores the source can do: the decoder reads the source through cross-attention.
    EXPECT_LT(v1, 2.9);
    // The model folder loads and its inference forward reproduces the trained weights' loss on a held-out batch.
    const auto m = ts::load_model_dir(dir);
    EXPECT_EQ(m->config().arch, ts::Arch::EncoderDecoder);
    PairBatch b;
    data->val_batch(0, b);
    const std::vector<int> src(b.src.begin(), b.src.begin() + b.S), tgt(b.tgt.begin(), b.tgt.begin() + b.T);
    const ts::ForwardResult r = ts::forward_seq2seq(*m, src, tgt, ts::ForwardOptions{});
    EXPECT_EQ(r.logits.rows(), b.T);
    EXPECT_EQ(r.logits.cols(), V);
    EXPECT_LT(tr.optimizer().options().beta2, 0.99f);
    EXPECT_NEAR(tr.history().back().lr, 0.2 / std::sqrt(32.0 * 50.0), 1e-7);  // eq. 3 at step 50, factor 0.2
    fs::remove_all(dir);
}

TEST(PairTrainer, ResumeIsBitIdenticalAndRefusesOtherData) {
    const int V = 24;
    const auto data = std::make_shared<const PairDataset>(reverse_pairs(200, V, 8), reverse_pairs(20, V, 9), V, 1, 0,
                                                          PairBatchOptions{16, 128}, 2);
    const ts::ModelConfig c = tiny_translation_config(V);
    TrainOptions o = paper_options();
    o.steps = 8;
    o.eval_every = 4;
    o.ckpt_every = 4;
    const fs::path full_dir = temp_dir("pfull"), split_dir = temp_dir("psplit");
    Trainer full(c, init_transformer_weights(c, 3), data, o, full_dir);
    full.run();
    {
        Trainer first(c, init_transformer_weights(c, 3), data, o, split_dir);
        first.run(4);
    }
    Trainer second(c, ts::init_weights(c, 99), data, o, split_dir);
    ASSERT_TRUE(second.resume());
    second.run();
    for (const auto& [name, t] : full.model().params())
        EXPECT_EQ(second.model().params().at(name).data, t.data) << name;
    const auto other = std::make_shared<const PairDataset>(reverse_pairs(201, V, 8), reverse_pairs(20, V, 9), V, 1, 0,
                                                           PairBatchOptions{16, 128}, 2);
    Trainer wrong(c, ts::init_weights(c, 3), other, o, split_dir);
    EXPECT_THROW(wrong.resume(), std::runtime_error);
    // Configs and data kinds must match.
    ts::ModelConfig dec = c;
    dec.arch = ts::Arch::DecoderOnly;
    dec.n_enc_layers = 0;
    EXPECT_THROW(Trainer(dec, ts::init_weights(dec, 1), data, o, full_dir), std::invalid_argument);
    ts::ModelConfig short_ctx = c;
    short_ctx.max_seq_len = 8;
    EXPECT_THROW(Trainer(short_ctx, ts::init_weights(short_ctx, 1), data, o, full_dir), std::invalid_argument);
    fs::remove_all(full_dir);
    fs::remove_all(split_dir);
}

}  // namespace
