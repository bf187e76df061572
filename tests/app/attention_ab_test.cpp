// One model, one text, two settings (#33, the Attention panel's "pin as A"): attention_ab_figures draws the head's
// weights of forward A and forward B exactly as the Attention panel does, on one colour range, and B − A cell by
// cell; it refuses forwards of different texts; forward_settings_label names what differs from the model as trained.
#include "app/figures/figures.h"
#include "app/figures/views.h"
#include "app/session/text_codec.h"
#include "app/session/worker.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

namespace {

using namespace ts;
using namespace ts::figures;
using namespace ts::studio;

std::shared_ptr<const Snapshot> forward(const LoadedModel& lm, const std::string& text, float temperature,
                                        MaskKind mask = MaskKind::Causal) {
    ForwardRequest r;
    r.model = lm.model;
    r.codec = lm.codec;
    r.tokens = std::make_shared<const TokenizedText>(tokenize_text(text, *lm.codec, lm.model->config().max_seq_len));
    r.temperature = temperature;
    r.mask.kind = mask;
    return run_forward_request(r, 1);
}

TEST(AttentionAB, TwoTemperaturesOfOneHeadAndTheirDifference) {
    const LoadedModel lm = make_demo_model();
    const auto a = forward(lm, "The cat sat on the mat.", 1.0f);
    const auto b = forward(lm, "The cat sat on the mat.", 0.1f);
    ASSERT_TRUE(a->error.empty() && b->error.empty());
    UiState st;
    st.apply_to_model = true;
    st.attn_temperature = 0.1f;
    const auto figs = attention_ab_figures(*a, *b, 1, 1, st, "the model as trained", forward_settings_label(st));
    ASSERT_EQ(figs.size(), 3u);
    const plot::Figure fa = attention_head_figure(*a, 1, 1, st), fb = attention_head_figure(*b, 1, 1, st);
    ASSERT_TRUE(fa.heatmap && fb.heatmap);
    EXPECT_EQ(figs[0].heatmap->values, fa.heatmap->values);
    EXPECT_EQ(figs[1].heatmap->values, fb.heatmap->values);
    EXPECT_EQ(figs[0].heatmap->vmax, figs[1].heatmap->vmax);  // one range for A and B
    const plot::Heatmap& d = *figs[2].heatmap;
    EXPECT_EQ(d.cmap, plot::Colormap::Diverging);
    EXPECT_EQ(d.vmin, -d.vmax);
    float largest = 0;
    for (int r = 0; r < d.rows; ++r) {
        float row_sum = 0;
        for (int c = 0; c < d.cols; ++c) {
            EXPECT_EQ(d.at(r, c), fb.heatmap->at(r, c) - fa.heatmap->at(r, c));
            row_sum += d.at(r, c);
            largest = std::max(largest, std::abs(d.at(r, c)));
            // Causal in both forwards: a key after the query is masked in both, hence grey in B − A.
            EXPECT_EQ(d.is_masked(r, c), c > r) << r << "," << c;
        }
        EXPECT_NEAR(row_sum, 0.0f, 1e-5f);  // each row of A and of B sums to 1
    }
    EXPECT_GT(largest, 0.01f);  // a tenth of the temperature sharpens this head visibly
    EXPECT_EQ(d.vmax, largest);
    EXPECT_NE(figs[1].title.find("temperature 0.1"), std::string::npos) << figs[1].title;
    EXPECT_NE(figs[0].title.find("the model as trained"), std::string::npos) << figs[0].title;
}

TEST(AttentionAB, MaskedInOneForwardOnlyShowsTheWeightItGained) {
    const LoadedModel lm = make_demo_model();
    const auto a = forward(lm, "The cat sat.", 1.0f, MaskKind::Causal);
    const auto b = forward(lm, "The cat sat.", 1.0f, MaskKind::None);
    UiState st;
    const auto figs = attention_ab_figures(*a, *b, 0, 0, st, "A", "B");
    const plot::Heatmap& d = *figs[2].heatmap;
    EXPECT_FALSE(d.is_masked(0, d.cols - 1));  // hidden under A only: B − A is B's weight there
    EXPECT_GT(d.at(0, d.cols - 1), 0.0f);
    EXPECT_EQ(d.at(0, d.cols - 1), figs[1].heatmap->at(0, d.cols - 1));
}

TEST(AttentionAB, RefusesTwoTextsAndNamesTheSettings) {
    const LoadedModel lm = make_demo_model();
    const auto a = forward(lm, "The cat sat.", 1.0f), b = forward(lm, "The dog sat.", 1.0f);
    UiState st;
    EXPECT_THROW((void)attention_ab_figures(*a, *b, 0, 0, st, "A", "B"), std::invalid_argument);
    EXPECT_EQ(forward_settings_label(st), "the model as trained");
    st.attn_temperature = 2.0f;  // not applied to the model: still as trained
    EXPECT_EQ(forward_settings_label(st), "the model as trained");
    st.apply_to_model = true;
    st.attn_mask = MaskChoice::Sliding;
    st.attn_window = 3;
    st.ablated_heads = {{1, 2}};
    EXPECT_EQ(forward_settings_label(st), "temperature 2 · sliding-window mask (3) · L1 H2 ablated (zero)");
    st.ablated_heads.push_back({0, 0});
    st.ablate_mode = interp::AblationKind::Mean;
    EXPECT_NE(forward_settings_label(st).find("2 heads ablated (mean)"), std::string::npos);
}

// `render --view attention-ab`: A is the model as trained unless --ab-set says how it differs from B.
TEST(AttentionAB, RenderViewRunsForwardAFromItsSettings) {
    const LoadedModel lm = make_demo_model();
    UiState st;
    st.text = "The cat sat on the mat.";
    st.apply_to_model = true;
    st.attn_temperature = 0.5f;
    st.layer = 1;
    st.head = 2;
    const auto b = run_forward_now(st, lm, false, Panel::Attention);
    ViewFigures v = build_view("attention-ab", st, b.get(), &lm);
    ASSERT_EQ(v.figures.size(), 3u);
    EXPECT_EQ(v.names[0], "attention_a_layer1_head2");
    EXPECT_NE(v.figures[0].title.find("the model as trained"), std::string::npos) << v.figures[0].title;
    const auto as_trained = forward(lm, st.text, 1.0f);
    EXPECT_EQ(v.figures[0].heatmap->values, attention_head_figure(*as_trained, 1, 2, st).heatmap->values);

    apply_view_option(st, "attention-ab", "ab-set", "attn_temperature=2");
    v = build_view("attention-ab", st, b.get(), &lm);
    EXPECT_NE(v.figures[0].title.find("temperature 2"), std::string::npos) << v.figures[0].title;
    const auto hot = forward(lm, st.text, 2.0f);
    EXPECT_EQ(v.figures[0].heatmap->values, attention_head_figure(*hot, 1, 2, st).heatmap->values);
    EXPECT_THROW(apply_view_option(st, "attention-ab", "ab-set", "attn_temprature=2"), std::invalid_argument);
    EXPECT_THROW(apply_view_option(st, "attention", "ab-set", "attn_temperature=2"), std::invalid_argument);
}

}  // namespace
