// The worker publishes a forward pass before its logit lens (ForwardRequest::publish_partial): the partial snapshot
// carries the trace and logits but no lens, the complete one (same id) adds the lens and replaces it.
#include "app/session/text_codec.h"
#include "app/session/worker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

namespace {

using namespace ts;
using namespace ts::studio;

ForwardRequest demo_request(const LoadedModel& lm) {
    ForwardRequest r;
    r.model = lm.model;
    r.codec = lm.codec;
    r.tokens = std::make_shared<const TokenizedText>(tokenize_text("Hello there", *lm.codec, lm.model->config().max_seq_len));
    return r;
}

TEST(WorkerPartial, PartialSnapshotHasTraceButNoLensThenCompleteOneFollows) {
    const LoadedModel lm = make_demo_model();
    ForwardRequest r = demo_request(lm);
    std::shared_ptr<const Snapshot> early;
    int calls = 0;
    r.publish_partial = [&](std::shared_ptr<const Snapshot> s) {
        ++calls;
        early = std::move(s);
    };
    const auto done = run_forward_request(r, 7);
    ASSERT_EQ(calls, 1);
    ASSERT_TRUE(early);
    EXPECT_TRUE(early->partial);
    EXPECT_EQ(early->id, 7u);
    ASSERT_TRUE(early->trace);
    EXPECT_NE(early->find("dec.0.attn.probs"), nullptr);
    EXPECT_EQ(early->logits_positions(), 11);  // 11 bytes, byte-level codec
    EXPECT_EQ(early->logits.rows(), 1);        // the forward computed the last position's logits only
    EXPECT_TRUE(early->lens_argmax.empty());

    EXPECT_FALSE(done->partial);
    EXPECT_EQ(done->id, 7u);
    EXPECT_EQ(done->trace, early->trace);  // the same trace, not recomputed
    ASSERT_EQ(done->lens_argmax.size(), 4u);
    EXPECT_EQ(done->lens_argmax[0].size(), 11u);
    // The lens's last layer filled every position; the forward's own row is kept bit for bit.
    ASSERT_EQ(done->logits.rows(), 11);
    EXPECT_EQ(done->logits.row(10), early->logits.row(0));
    // Rows the partial snapshot computes on request equal the lens's.
    for (int q = 0; q < 11; ++q) {
        const std::span<const float> row = early->logits_row(q);
        ASSERT_EQ(row.size(), size_t(done->logits.cols())) << q;
        const Eigen::Map<const ts::RowVectorF> a(row.data(), Eigen::Index(row.size()));
        EXPECT_LE((a - done->logits.row(q)).cwiseAbs().maxCoeff(), 1e-5f * (1.0f + done->logits.row(q).cwiseAbs().maxCoeff())) << q;
    }
    EXPECT_TRUE(early->logits_row(11).empty());
    EXPECT_TRUE(early->logits_row(-1).empty());
}

TEST(WorkerPartial, ASupersededRequestSkipsTheLensAndReturnsThePartialSnapshot) {
    const LoadedModel lm = make_demo_model();
    ForwardRequest r = demo_request(lm);
    std::shared_ptr<const Snapshot> early;
    r.publish_partial = [&](std::shared_ptr<const Snapshot> s) { early = std::move(s); };
    int asked = 0;
    r.superseded = [&] { return ++asked > 1; };  // a newer request arrives after the first lens layer
    const auto done = run_forward_request(r, 5);
    ASSERT_TRUE(early);
    EXPECT_EQ(done, early);
    EXPECT_TRUE(done->partial);
    EXPECT_TRUE(done->lens_argmax.empty());
    EXPECT_EQ(asked, 2);
}

TEST(WorkerPartial, LensProbabilityIsTheSoftmaxAtTheArgmax) {
    const LoadedModel lm = make_demo_model();
    const auto done = run_forward_request(demo_request(lm), 1);
    ASSERT_EQ(done->lens_prob.size(), 4u);
    // The last layer's lens goes through the final norm and the LM head, i.e. it is the model's own logits.
    const auto& row = done->logits.row(done->logits.rows() - 1);
    Eigen::Index j = 0;
    const float lmax = row.maxCoeff(&j);
    const float p = 1.0f / (row.array() - lmax).exp().sum();
    EXPECT_EQ(done->lens_argmax[3].back(), int(j));
    EXPECT_NEAR(done->lens_prob[3].back(), p, 1e-4f);
    for (const auto& layer : done->lens_prob)
        for (float q : layer) {
            EXPECT_GT(q, 1.0f / 256.0f - 1e-6f);  // an argmax is at least uniform over the 256-token vocabulary
            EXPECT_LE(q, 1.0f);
        }
}

TEST(WorkerPartial, WithoutTheCallbackOneCompleteResult) {
    const LoadedModel lm = make_demo_model();
    const auto done = run_forward_request(demo_request(lm), 1);
    EXPECT_FALSE(done->partial);
    EXPECT_EQ(done->lens_argmax.size(), 4u);
}

TEST(WorkerPartial, WorkerEndsWithTheCompleteSnapshot) {
    const LoadedModel lm = make_demo_model();
    ForwardWorker w;
    const uint64_t id = w.submit(demo_request(lm));
    ASSERT_TRUE(w.wait_idle(60.0));
    const auto s = w.latest();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->id, id);
    EXPECT_FALSE(s->partial);
    EXPECT_EQ(s->lens_argmax.size(), 4u);
}

TEST(WorkerPartial, GenerateRequestsAreNeverPartial) {
    const LoadedModel lm = make_demo_model();
    ForwardRequest r = demo_request(lm);
    r.kind = ForwardRequest::Kind::Generate;
    r.generate_tokens = 2;
    int calls = 0;
    r.publish_partial = [&](std::shared_ptr<const Snapshot>) { ++calls; };
    const auto done = run_forward_request(r, 3);
    EXPECT_EQ(calls, 0);
    EXPECT_EQ(done->generated.size(), 2u);
}

// A long forward shows its first layer's attention before the rest: a progressive snapshot (same id) whose trace
// holds the finished layers' attention only, equal to the complete snapshot's.
TEST(WorkerPartial, ALongForwardPublishesItsFirstLayerFirst) {
    const LoadedModel lm = make_demo_model();
    ASSERT_GE(lm.model->config().n_layers, 2);
    ForwardRequest r = demo_request(lm);
    r.progressive_min_tokens = 1;  // "long" from the first token on, for the test
    std::vector<std::shared_ptr<const Snapshot>> published;
    r.publish_partial = [&](std::shared_ptr<const Snapshot> s) { published.push_back(std::move(s)); };
    const auto done = run_forward_request(r, 9);
    ASSERT_FALSE(published.empty());
    const Snapshot& first = *published.front();
    EXPECT_EQ(first.id, 9u);
    EXPECT_TRUE(first.partial);
    EXPECT_EQ(first.layers_done, 1);
    EXPECT_EQ(first.logits.size(), 0);
    ASSERT_NE(first.find("dec.0.attn.probs"), nullptr);
    EXPECT_EQ(first.find("dec.1.attn.probs"), nullptr);
    EXPECT_EQ(first.find("dec.0.ffn.out"), nullptr);
    EXPECT_EQ(first.find("dec.0.attn.probs")->data, done->find("dec.0.attn.probs")->data);
    EXPECT_EQ(done->layers_done, -1);
    for (const auto& p : published)
        EXPECT_LT(p->layers_done, lm.model->config().n_layers);  // the last is never partial
    // Below the threshold (and always for the app's short texts): no progressive snapshot.
    ForwardRequest short_r = demo_request(lm);
    int progressive = 0;
    short_r.publish_partial = [&](std::shared_ptr<const Snapshot> s) { progressive += s->layers_done > 0; };
    (void)run_forward_request(short_r, 10);
    EXPECT_EQ(progressive, 0);
}

// A long forward whose text is outdated (a newer request waits) stops between layers: nothing more is published, the
// result is null, and the next request runs whole (the incremental state was reset).
TEST(WorkerPartial, ASupersededLongForwardStopsBetweenLayers) {
    const LoadedModel lm = make_demo_model();
    ForwardRequest r = demo_request(lm);
    r.progressive_min_tokens = 1;
    r.memory = std::make_shared<ForwardMemory>();
    std::vector<std::shared_ptr<const Snapshot>> published;
    r.publish_partial = [&](std::shared_ptr<const Snapshot> s) { published.push_back(std::move(s)); };
    int asked = 0;
    r.superseded = [&] { return ++asked > 1; };  // outdated from the second layer on
    EXPECT_EQ(run_forward_request(r, 11), nullptr);
    ASSERT_EQ(published.size(), 1u);
    EXPECT_EQ(published[0]->layers_done, 1);
    r.superseded = [] { return false; };
    const auto next = run_forward_request(r, 12);
    ASSERT_NE(next, nullptr);
    EXPECT_TRUE(next->error.empty()) << next->error;
    EXPECT_EQ(next->reused_positions, 0);
    EXPECT_EQ(next->find("dec.0.attn.probs")->data, published[0]->find("dec.0.attn.probs")->data);
}

TEST(WorkerBudget, ALongTextOverBudgetRunsWithoutTheFfnIntermediatesAndSaysSo) {
    const LoadedModel lm = make_demo_model();
    ForwardRequest r = demo_request(lm);
    const int T = int(r.tokens->ids.size());
    const size_t full = forward_memory_need(r, T, 0, false), lean = forward_memory_need(r, T, 0, true);
    ASSERT_LT(lean, full);  // the FFN intermediates are part of the estimate
    set_forward_memory_budget((full + lean) / 2);
    const auto s = run_forward_request(r, 1);
    set_forward_memory_budget(lean / 2);
    const auto refused = run_forward_request(r, 2);
    set_forward_memory_budget(0);
    EXPECT_TRUE(s->error.empty()) << s->error;
    ASSERT_NE(s->trace, nullptr);
    EXPECT_EQ(s->ffn_skipped_need, full);
    EXPECT_EQ(s->ffn_skipped_budget, (full + lean) / 2);
    EXPECT_EQ(s->find("dec.0.ffn.pre_act"), nullptr);
    EXPECT_EQ(s->find("dec.1.ffn.post_act"), nullptr);
    EXPECT_NE(s->find("dec.0.ffn.out"), nullptr);  // the FFN's output (d_model wide) stays: residual views need it
    EXPECT_NE(s->find("dec.1.attn.probs"), nullptr);
    EXPECT_NE(s->find("dec.1.resid_ffn"), nullptr);
    // The same numbers as with the whole trace, where both have them.
    const auto whole = run_forward_request(r, 3);
    EXPECT_EQ(whole->ffn_skipped_need, 0u);
    ASSERT_NE(whole->find("dec.0.ffn.pre_act"), nullptr);
    EXPECT_EQ(whole->find("dec.1.resid_ffn")->data, s->find("dec.1.resid_ffn")->data);
    EXPECT_EQ(refused->trace, nullptr);
    EXPECT_NE(refused->error.find("(even without the FFN intermediates) needs about"), std::string::npos)
        << refused->error;
    EXPECT_EQ(refused->error.find('\n'), std::string::npos);
}

}  // namespace

namespace {

// #30: a forward over the memory budget is refused before it runs, in one line, and the next request (within the
// budget) runs as usual: the window keeps its session.
TEST(WorkerBudget, OverBudgetRequestIsRefusedInOneLineAndTheNextOneRuns) {
    const LoadedModel lm = make_demo_model();
    const ForwardRequest r = demo_request(lm);
    set_forward_memory_budget(4096);
    const auto refused = run_forward_request(r, 1);
    set_forward_memory_budget(0);
    EXPECT_EQ(refused->trace, nullptr);
    EXPECT_NE(refused->error.find("a forward over 11 tokens (even without the FFN intermediates) needs about"),
              std::string::npos)
        << refused->error;
    EXPECT_NE(refused->error.find("more than the memory budget of 4.00 KiB"), std::string::npos) << refused->error;
    EXPECT_EQ(refused->error.find('\n'), std::string::npos);
    const auto ok = run_forward_request(r, 2);
    EXPECT_TRUE(ok->error.empty()) << ok->error;
    ASSERT_NE(ok->trace, nullptr);
    EXPECT_NE(ok->trace->attention("dec.0.attn."), nullptr);
}

// The logit lens of a long text over a big vocabulary: every position's logits (1,100 x 65,536 floats = 288 MB)
// are neither kept nor held at once; the lens runs the LM head in row blocks and gives the same argmax as each row's
// own logits, and the snapshot keeps only the last row (the others from logits_row on request).
TEST(WorkerBudget, ALongTextsLogitLensRunsInRowBlocksAndKeepsOneRow) {
    const LoadedModel lm = make_demo_model();
    ModelConfig c = lm.model->config();
    c.vocab_size = 65536;
    c.max_seq_len = 2048;
    c.n_layers = 2;
    const auto model = std::make_shared<const Model>(c, init_weights(c, 5));
    ForwardRequest r;
    r.model = model;
    r.codec = make_byte_codec(c.vocab_size);
    auto tt = std::make_shared<TokenizedText>();
    for (int i = 0; i < 1100; ++i) {
        tt->ids.push_back((i * 7919 + 13) % c.vocab_size);
        tt->pieces.push_back({tt->ids.back(), "x", 0, 0});
    }
    tt->total_tokens = tt->ids.size();
    r.tokens = tt;
    const auto s = run_forward_request(r, 1);
    ASSERT_TRUE(s->error.empty()) << s->error;
    EXPECT_LE(s->logits.rows(), 1);
    ASSERT_EQ(s->lens_argmax.size(), size_t(c.n_layers));
    for (int t : {0, 255, 256, 777, 1099}) {
        const std::span<const float> row = s->logits_row(t);
        ASSERT_EQ(row.size(), size_t(c.vocab_size));
        const int best = int(std::max_element(row.begin(), row.end()) - row.begin());
        EXPECT_EQ(s->lens_argmax.back()[size_t(t)], best) << t;
        float z = 0;
        for (float v : row) z += std::exp(v - row[size_t(best)]);
        EXPECT_NEAR(s->lens_prob.back()[size_t(t)], 1.0f / z, 1e-5f) << t;
    }
}

// A long text run for the Attention tab records its attention and residual stream only: the same attention
// weights, residual stream and logit lens as the whole trace, none of attention_only_dropped(); typing more stays
// incremental; a short text (below progressive_min_tokens) records everything.
TEST(WorkerPartial, ALongTextForTheAttentionTabRecordsWhatThatTabShows) {
    const LoadedModel lm = make_demo_model();
    ForwardRequest r = demo_request(lm);
    r.progressive_min_tokens = 8;  // "Hello there": 11 tokens
    r.attention_only = true;
    const auto s = run_forward_request(r, 1);
    ForwardRequest w = r;
    w.attention_only = false;
    const auto whole = run_forward_request(w, 2);
    ASSERT_TRUE(s->error.empty() && whole->error.empty()) << s->error << whole->error;
    EXPECT_TRUE(s->attention_only);
    EXPECT_FALSE(whole->attention_only);
    const auto dropped = [](const std::string& name) {
        for (const auto& d : attention_only_dropped())
            if (name.ends_with(d)) return true;
        return false;
    };
    size_t kept = 0;
    for (const std::string& name : whole->trace->names()) {
        EXPECT_EQ(s->trace->contains(name), !dropped(name)) << name;
        kept += !dropped(name);
    }
    EXPECT_EQ(s->trace->names().size(), kept);
    for (const char* name : {"dec.0.attn.probs", "dec.1.attn.probs", "dec.1.resid_ffn", "dec.0.attn.scores"})
        EXPECT_EQ(s->find(name)->data, whole->find(name)->data) << name;
    EXPECT_EQ(s->find("dec.1.ffn.post_act"), nullptr);
    EXPECT_EQ(s->lens_argmax, whole->lens_argmax);

    // One more token typed: the prefix is reused, and the result equals a whole forward of the longer text.
    auto memory = std::make_shared<ForwardMemory>();
    r.memory = memory;
    (void)run_forward_request(r, 3);
    ForwardRequest more = r;
    more.tokens =
        std::make_shared<const TokenizedText>(tokenize_text("Hello there!", *lm.codec, lm.model->config().max_seq_len));
    const auto typed = run_forward_request(more, 4);
    EXPECT_TRUE(typed->attention_only);
    EXPECT_EQ(typed->reused_positions, int(r.tokens->ids.size()));
    more.memory = nullptr;
    const auto fresh = run_forward_request(more, 5);
    for (const char* name : {"dec.1.attn.probs", "dec.1.resid_ffn"}) {
        const Tensor* a = typed->find(name);
        const Tensor* b = fresh->find(name);
        ASSERT_TRUE(a && b) << name;
        ASSERT_EQ(a->data.size(), b->data.size()) << name;
        for (size_t k = 0; k < a->data.size(); ++k) ASSERT_NEAR(a->data[k], b->data[k], 2e-6f) << name << " " << k;
    }

    r.memory = nullptr;
    r.logit_lens = false;  // as the Attention tab asks: the residual stream goes too
    const auto no_lens = run_forward_request(r, 7);
    EXPECT_TRUE(no_lens->attention_only);
    EXPECT_EQ(no_lens->find("dec.1.resid_ffn"), nullptr);
    EXPECT_EQ(no_lens->find("dec.1.attn.probs")->data, whole->find("dec.1.attn.probs")->data);
    r.logit_lens = true;
    r.progressive_min_tokens = 100;  // a short text: everything
    const auto short_text = run_forward_request(r, 6);
    EXPECT_FALSE(short_text->attention_only);
    EXPECT_EQ(short_text->trace->names().size(), whole->trace->names().size());
}

}  // namespace
