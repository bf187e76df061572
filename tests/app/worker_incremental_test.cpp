// The worker types incrementally (issue #14): each keystroke that keeps a prefix of the previous token ids computes
// only the changed tail (ForwardMemory), its trace buffers come from the worker's pool, and the published snapshot
// equals a full forward of the same text; a model switch or an activation edit starts over.
#include "app/session/text_codec.h"
#include "app/session/worker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

namespace {

using namespace ts::studio;

ForwardRequest request_for(const LoadedModel& lm, const std::string& text) {
    ForwardRequest r;
    r.model = lm.model;
    r.codec = lm.codec;
    r.tokens = std::make_shared<const TokenizedText>(tokenize_text(text, *lm.codec, lm.model->config().max_seq_len));
    return r;
}

// Every trace name and the logits of `a` equal `b` to 1e-6 of each tensor's scale.
void expect_same_snapshot(const Snapshot& a, const Snapshot& b, const std::string& what) {
    ASSERT_TRUE(a.trace && b.trace) << what;
    ASSERT_EQ(a.trace->names(), b.trace->names()) << what;
    for (const std::string& n : b.trace->names()) {
        const ts::Tensor& x = a.trace->at(n);
        const ts::Tensor& y = b.trace->at(n);
        ASSERT_EQ(x.shape, y.shape) << what << " " << n;
        float scale = 1.0f;
        for (float v : y.data) if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
        for (size_t i = 0; i < y.data.size(); ++i) {
            if (x.data[i] != y.data[i]) {
                ASSERT_NEAR(x.data[i], y.data[i], 1e-6f * scale) << what << " " << n << " " << i;
            }
        }
    }
    ASSERT_EQ(a.logits.rows(), b.logits.rows());
    EXPECT_LE((a.logits - b.logits).cwiseAbs().maxCoeff(), 1e-6f * std::max(1.0f, b.logits.cwiseAbs().maxCoeff()));
}

TEST(WorkerIncremental, KeystrokesReuseThePrefixAndEqualAFullForward) {
    const LoadedModel lm = make_demo_model();
    ForwardWorker w;
    const std::vector<std::pair<std::string, int>> typing = {
        {"The cat", 0}, {"The cat ", 7}, {"The cat s", 8}, {"The cat sat", 9}, {"The cap", 6}, {"A cat", 0}};
    for (const auto& [text, reused] : typing) {
        w.submit(request_for(lm, text));
        ASSERT_TRUE(w.wait_idle(60.0));
        const auto s = w.latest();
        ASSERT_TRUE(s && s->error.empty()) << text;
        EXPECT_EQ(s->reused_positions, reused) << text;
        expect_same_snapshot(*s, *run_forward_request(request_for(lm, text), 1), text);
    }
}

TEST(WorkerIncremental, AnotherModelOrAnEditStartsOver) {
    const LoadedModel a = make_demo_model(), b = make_demo_model();
    ForwardWorker w;
    w.submit(request_for(a, "Hello"));
    ASSERT_TRUE(w.wait_idle(60.0));
    w.submit(request_for(b, "Hello!"));  // same shape and text prefix, another model object
    ASSERT_TRUE(w.wait_idle(60.0));
    EXPECT_EQ(w.latest()->reused_positions, 0);
    ForwardRequest edited = request_for(b, "Hello!!");
    edited.edits.push_back(ts::ActivationEdit::zero("dec.0.attn.head_out", 1));
    w.submit(edited);
    ASSERT_TRUE(w.wait_idle(60.0));
    EXPECT_EQ(w.latest()->reused_positions, 0);
    expect_same_snapshot(*w.latest(), *run_forward_request(edited, 1), "edited");
}

TEST(WorkerIncremental, ReleasedSnapshotsHandTheirBuffersToTheNextForward) {
    const LoadedModel lm = make_demo_model();
    auto pool = std::make_shared<ts::TensorPool>();
    ForwardRequest r = request_for(lm, "pool me");
    r.pool = pool;
    { const auto s = run_forward_request(r, 1); }
    const size_t held = pool->bytes_held();
    EXPECT_GT(held, 0u);
    const auto again = run_forward_request(r, 2);
    EXPECT_LT(pool->bytes_held(), held);
}

}  // namespace
