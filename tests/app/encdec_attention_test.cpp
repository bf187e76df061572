// Encoder–decoder models in the Attention views: the source selector (encoder self / decoder self / cross) picks the
// trace tensor, cross-attention is a (T, S) heatmap with rows = decoder (target) tokens that sum to 1 and equals the
// trace's dec.0.cross_attn.probs; `render` options accept --attn-source and reject bad values.
#include "app/figures/figures.h"
#include "app/figures/views.h"
#include "app/plot/colormap.h"
#include "app/plot/writers.h"
#include "app/session/text_codec.h"
#include "app/session/worker.h"
#include "tests/app/tiny_models.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

namespace {

using namespace ts;
using namespace ts::figures;
using namespace ts::studio;

LoadedModel tiny_encdec() { return test::tiny_encdec_model("tiny-encdec", 256, 64, 7); }

TEST(EncDecAttention, CrossAttentionFigureIsTheTraceAndRowsSumToOne) {
    const LoadedModel lm = tiny_encdec();
    UiState st;
    st.text = "cat sat on mat";
    st.layer = 0;
    st.head = 1;
    st.attn_source = AttnSource::Cross;
    const auto snap = run_forward_now(st, lm);
    ASSERT_TRUE(snap->error.empty()) << snap->error;
    ASSERT_TRUE(has_attention_sources(*snap));
    const Tensor* probs = snap->find("dec.0.cross_attn.probs");
    ASSERT_NE(probs, nullptr);
    const int T = int(snap->tokens->ids.size()), S = T;  // the worker feeds the text as source and target
    ASSERT_EQ(probs->rank(), 3);
    EXPECT_EQ(probs->dim(1), T);
    EXPECT_EQ(probs->dim(2), S);

    const ViewFigures vf = build_view("attention", st, snap.get(), &lm);
    ASSERT_EQ(vf.figures.size(), 1u);
    EXPECT_EQ(vf.names[0], "attention_cross_layer0_head1");
    const plot::Figure& f = vf.figures[0];
    ASSERT_TRUE(f.heatmap);
    ASSERT_EQ(f.heatmap->rows, T);
    ASSERT_EQ(f.heatmap->cols, S);
    EXPECT_NE(f.y.label.find("decoder"), std::string::npos) << f.y.label;
    EXPECT_NE(f.x.label.find("encoder"), std::string::npos) << f.x.label;
    const size_t n = size_t(T) * size_t(S);
    for (int t = 0; t < T; ++t) {
        double sum = 0;
        for (int s = 0; s < S; ++s) {
            const float v = f.heatmap->values[size_t(t) * size_t(S) + size_t(s)];
            EXPECT_EQ(v, probs->data[n * 1 + size_t(t) * size_t(S) + size_t(s)]) << "t " << t << " s " << s;
            sum += v;
        }
        EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << t;
    }
    // Cross-attention has no causal mask: some weight lies above the diagonal.
    double upper = 0;
    for (int t = 0; t < T; ++t)
        for (int s = t + 1; s < S; ++s) upper += f.heatmap->values[size_t(t) * size_t(S) + size_t(s)];
    EXPECT_GT(upper, 0.01);
}

TEST(EncDecAttention, SourceSelectsEncoderAndDecoderSelfAttention) {
    const LoadedModel lm = tiny_encdec();
    UiState st;
    st.text = "the dog";
    const auto snap = run_forward_now(st, lm);
    ASSERT_TRUE(snap->error.empty()) << snap->error;
    const int T = int(snap->tokens->ids.size());
    struct Case {
        AttnSource source;
        const char* tensor;
        bool causal;
    };
    for (const Case& c :
         {Case{AttnSource::Encoder, "enc.1.attn.probs", false}, Case{AttnSource::Decoder, "dec.1.attn.probs", true}}) {
        st.attn_source = c.source;
        const plot::Figure f = attention_head_figure(*snap, 1, 0, st);
        ASSERT_TRUE(f.heatmap) << name_of(c.source);
        const Tensor* p = snap->find(c.tensor);
        ASSERT_NE(p, nullptr) << c.tensor;
        ASSERT_EQ(f.heatmap->rows * f.heatmap->cols, T * T);
        double upper = 0;
        for (int i = 0; i < T * T; ++i)
            EXPECT_EQ(f.heatmap->values[size_t(i)], p->data[size_t(i)]) << name_of(c.source) << " " << i;
        for (int t = 0; t < T; ++t)
            for (int s = t + 1; s < T; ++s) upper += f.heatmap->values[size_t(t * T + s)];
        if (c.causal) EXPECT_EQ(upper, 0.0) << name_of(c.source);
        else EXPECT_GT(upper, 0.01) << name_of(c.source);
        // #28: the cells the causal mask removed are flagged (drawn grey), exactly the upper triangle; their value
        // stays 0 in the data and the CSV, and the picture gives them the masked colour, not the colormap's 0.
        if (c.causal) {
            ASSERT_EQ(f.heatmap->masked.size(), size_t(T) * size_t(T)) << name_of(c.source);
            for (int t = 0; t < T; ++t)
                for (int s = 0; s < T; ++s) EXPECT_EQ(f.heatmap->is_masked(t, s), s > t) << t << " " << s;
            const std::vector<uint8_t> px = plot::heatmap_rgba(*f.heatmap);
            const plot::Rgba grey = plot::masked_color();
            EXPECT_EQ(px[size_t(0 * T + 1) * 4], uint8_t(std::lround(grey.r * 255)));  // (0, 1): masked
            EXPECT_NE(px[size_t(1 * T + 0) * 4], uint8_t(std::lround(grey.r * 255)));  // (1, 0): a weight
            EXPECT_TRUE(std::isnan(f.heatmap->shade(0, 1)));
            EXPECT_EQ(f.heatmap->at(0, 1), 0.0f);
            EXPECT_EQ(plot::figure_to_csv(f).find("-inf"), std::string::npos);
            EXPECT_NE(f.note.find("masked"), std::string::npos) << f.note;
        } else {
            EXPECT_TRUE(f.heatmap->masked.empty()) << name_of(c.source);  // no mask: nothing grey
        }
        const auto grid = attention_head_grid(*snap, 0, true, c.source);
        EXPECT_EQ(grid.size(), 2u * 4u) << name_of(c.source);
        const auto steps = attention_step_figures(*snap, 0, 0, c.source);
        ASSERT_EQ(steps.size(), 5u);
        EXPECT_TRUE(steps[3].heatmap) << name_of(c.source);
    }
    EXPECT_EQ(attention_prefix(*snap, AttnSource::Cross, 1), "dec.1.cross_attn.");
    EXPECT_EQ(attention_prefix(*snap, AttnSource::Encoder, 0), "enc.0.attn.");
}

TEST(EncDecAttention, RenderOptionIsListedAndValidated) {
    EXPECT_NE(describe_views().find("--attn-source"), std::string::npos);
    UiState st;
    apply_view_option(st, "attention-steps", "attn-source", "encoder");
    EXPECT_EQ(st.attn_source, AttnSource::Encoder);
    EXPECT_THROW(apply_view_option(st, "attention", "attn-source", "sideways"), std::invalid_argument);
    EXPECT_THROW(apply_view_option(st, "tokens", "attn-source", "cross"), std::invalid_argument);
    // Decoder-only models ignore the source.
    const LoadedModel demo = make_demo_model();
    st.text = "ab";
    st.attn_source = AttnSource::Cross;
    const auto snap = run_forward_now(st, demo);
    EXPECT_FALSE(has_attention_sources(*snap));
    EXPECT_TRUE(attention_head_figure(*snap, 0, 0, st).heatmap);
}

}  // namespace
