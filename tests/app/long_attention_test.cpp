// Attention figures on a long text (#30): above 256 positions the heatmap is a pooled overview (block max, which the
// colorbar, axes and note say) equal to pooling the full matrix; a zoom window shows a 256 × 256 part at full
// resolution with its own tokens and the right values; masked cells are flagged from the mask rule.
#include "app/figures/figures.h"
#include "app/figures/overview_jobs.h"
#include "app/session/text_codec.h"
#include "app/session/worker.h"
#include "core/kernels/attention_rows.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <string>

namespace {

using namespace ts;
using namespace ts::figures;
using namespace ts::studio;

std::shared_ptr<const Snapshot> long_snapshot(int T) {
    LoadedModel lm = make_demo_model();
    ModelConfig c = lm.model->config();
    c.max_seq_len = 1024;
    lm.model = std::make_shared<const Model>(c, init_weights(c, 77));
    ForwardRequest r;
    r.model = lm.model;
    r.codec = lm.codec;
    std::string text;
    for (int i = 0; int(text.size()) < T; ++i) text += char('a' + (i * 7) % 26);
    r.tokens = std::make_shared<const TokenizedText>(tokenize_text(text, *lm.codec, c.max_seq_len));
    return run_forward_request(r, 1);
}

TEST(LongAttention, OverviewThenAFullResolutionWindow) {
    const int T = 600;
    const auto snap = long_snapshot(T);
    ASSERT_TRUE(snap->error.empty()) << snap->error;
    ASSERT_EQ(int(snap->tokens->ids.size()), T);
    UiState st;
    const plot::Figure over = attention_head_figure(*snap, 1, 2, st);
    ASSERT_TRUE(over.heatmap);
    const plot::Heatmap& h = *over.heatmap;
    EXPECT_EQ(h.row_step, 3);  // ceil(600 / 256)
    EXPECT_EQ(h.rows, 200);
    EXPECT_NE(h.value_label.find("block max"), std::string::npos) << h.value_label;
    EXPECT_NE(over.y.label.find("/ 3"), std::string::npos) << over.y.label;
    EXPECT_NE(over.note.find("overview of 600 x 600 tokens"), std::string::npos) << over.note;
    EXPECT_TRUE(over.y.categories.empty());
    // The overview is the pooled full matrix (the trace's own entry, built here for the comparison only).
    const auto rows = snap->trace->attention("dec.1.attn.");
    ASSERT_NE(rows, nullptr);
    const auto pooled = rows->pooled(AttentionRows::Kind::Probs, 2, 256, 256, AttentionRows::Pool::Max);
    ASSERT_EQ(pooled.values.size(), h.values.size());
    for (size_t i = 0; i < h.values.size(); ++i) ASSERT_EQ(h.values[i], pooled.values[i]) << i;
    EXPECT_TRUE(h.is_masked(0, h.cols - 1));  // causal: the first block never sees the last one

    st.attn_zoom_row = 300;
    st.attn_zoom_col = 100;
    const plot::Figure zoom = attention_head_figure(*snap, 1, 2, st);
    ASSERT_TRUE(zoom.heatmap);
    const plot::Heatmap& z = *zoom.heatmap;
    EXPECT_EQ(z.row_step, 1);
    EXPECT_EQ(z.rows, 256);
    EXPECT_EQ(z.cols, 256);
    EXPECT_EQ(z.row0, 300 - 0);  // 300 + 256 <= 600: not clamped
    EXPECT_EQ(z.col0, 100);
    ASSERT_EQ(zoom.y.categories.size(), 256u);  // the window's own tokens
    const std::vector<std::string> all = snapshot_token_labels(*snap);
    EXPECT_EQ(zoom.y.categories[0], all[300]);
    EXPECT_EQ(zoom.x.categories[5], all[105]);
    const Tensor& full = snap->trace->at("dec.1.attn.probs");
    for (int t : {0, 17, 255})
        for (int k : {0, 100, 255})
            ASSERT_EQ(z.at(t, k), full.data[(size_t(2) * T + size_t(300 + t)) * T + size_t(100 + k)]) << t << "," << k;
    EXPECT_EQ(z.is_masked(0, 255), !(100 + 255 <= 300));  // key 355 is after query 300
    EXPECT_NE(zoom.note.find("queries 300-555, keys 100-355 of 600 x 600"), std::string::npos) << zoom.note;

    st.attn_zoom_row = 5000;  // past the end: clamped to the last window
    st.attn_zoom_col = 0;
    const plot::Figure last = attention_head_figure(*snap, 1, 2, st);
    ASSERT_TRUE(last.heatmap);
    EXPECT_EQ(last.heatmap->row0, T - 256);
}

// The Attention panel's overviews off the UI thread: a long text's head is not ready at first (queued), then
// computed on the jobs' thread; the figure drawn afterwards equals the one computed in place. A short text needs
// nothing; a new snapshot forgets the old one's heads.
TEST(LongAttention, OverviewJobsComputeTheHeadsOffTheCallersThread) {
    const auto snap = long_snapshot(600);
    ASSERT_TRUE(snap->error.empty()) << snap->error;
    std::atomic<int> done{0};
    OverviewJobs jobs;
    jobs.set_on_done([&] { ++done; });
    EXPECT_TRUE(attention_overview_pooled(*snap, 1, AttnSource::Decoder));
    EXPECT_FALSE(jobs.ready(snap, AttnSource::Decoder, 1, 2));
    EXPECT_FALSE(jobs.ready(snap, AttnSource::Decoder, 1, 3));
    EXPECT_FALSE(jobs.ready(snap, AttnSource::Decoder, 0, 0, true));
    const auto until_idle = [&] {
        for (int i = 0; i < 3000 && jobs.busy(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    };
    until_idle();
    ASSERT_FALSE(jobs.busy());
    EXPECT_EQ(done.load(), 3);
    EXPECT_TRUE(jobs.ready(snap, AttnSource::Decoder, 1, 2));
    EXPECT_TRUE(jobs.ready(snap, AttnSource::Decoder, 0, 0));  // done as the selected head: its thumbnail too
    EXPECT_TRUE(jobs.ready(snap, AttnSource::Decoder, 0, 0, true));
    EXPECT_FALSE(jobs.busy());  // nothing queued again
    // The selected head's step view: its score overviews were computed with it (drawn from the cache, equal to the
    // pooled scores).
    const std::vector<plot::Figure> steps = attention_step_figures(*snap, 0, 0);
    ASSERT_GE(steps.size(), 1u);
    ASSERT_TRUE(steps[0].heatmap);
    EXPECT_EQ(steps[0].heatmap->values,
              snap->trace->attention("dec.0.attn.")
                  ->pooled(AttentionRows::Kind::Scores, 0, 256, 256, AttentionRows::Pool::Max)
                  .values);
    // A thumbnail pools to at most 96 x 96 blocks (the big heatmap to 256 x 256): the pooled full matrix at that size.
    const plot::Figure warm = attention_thumb_figure(*snap, 1, 2, false);
    ASSERT_TRUE(warm.heatmap);
    const auto pooled =
        snap->trace->attention("dec.1.attn.")->pooled(AttentionRows::Kind::Probs, 2, 96, 96, AttentionRows::Pool::Max);
    EXPECT_LE(warm.heatmap->rows, 96);
    EXPECT_LE(warm.heatmap->cols, 96);
    EXPECT_GT(warm.heatmap->row_step, 1);
    ASSERT_EQ(warm.heatmap->values, pooled.values);

    // Another forward (another id): its heads are queued anew.
    auto other = std::make_shared<Snapshot>(*snap);
    other->id = snap->id + 1;
    EXPECT_FALSE(jobs.ready(other, AttnSource::Decoder, 1, 2));
    until_idle();
    EXPECT_TRUE(jobs.ready(other, AttnSource::Decoder, 1, 2));

    // A short text is drawn in place: ready at once, nothing queued.
    const auto short_snap = long_snapshot(40);
    EXPECT_FALSE(attention_overview_pooled(*short_snap, 1, AttnSource::Decoder));
    EXPECT_TRUE(jobs.ready(short_snap, AttnSource::Decoder, 1, 2));
    EXPECT_FALSE(jobs.busy());
}

}  // namespace
