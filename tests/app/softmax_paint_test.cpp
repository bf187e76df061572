// The Softmax lab's painted ("custom") mask: painted cells -> ts::MaskSpec{Custom, (T, S) row-major}, the grid
// resets to causal when the token count changes, a fully masked row gets all-zero weights (lab and model), and the
// model's forward with the painted mask hides exactly the unpainted keys.
#include "app/figures/figures.h"
#include "app/figures/views.h"
#include "app/session/state.h"
#include "app/session/worker.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>

namespace {

using namespace ts;
using namespace ts::figures;
using namespace ts::studio;

TEST(SoftmaxPaint, PaintedCellsBecomeACustomMaskSpec) {
    UiState st;
    EXPECT_EQ(painted_cells(st, 3), (std::vector<uint8_t>{1, 0, 0, 1, 1, 0, 1, 1, 1}));  // unpainted = causal
    paint_cell(st, 3, 0, 2, true);
    paint_cell(st, 3, 2, 0, false);
    EXPECT_EQ(st.sm_paint_n, 3);
    const std::vector<uint8_t> cells = painted_cells(st, 3);
    EXPECT_EQ(cells, (std::vector<uint8_t>{1, 0, 1, 1, 1, 0, 0, 1, 1}));
    const MaskSpec m = painted_mask_spec(cells, 3, 3, 3);
    EXPECT_EQ(m.kind, MaskKind::Custom);
    EXPECT_EQ(m.custom, cells);
    // Larger T × S than the grid: cells outside fall back to causal.
    const MaskSpec big = painted_mask_spec(cells, 3, 4, 4);
    ASSERT_EQ(big.custom.size(), 16u);
    EXPECT_EQ(big.custom[0 * 4 + 2], 1);   // painted
    EXPECT_EQ(big.custom[2 * 4 + 0], 0);   // erased
    EXPECT_EQ(big.custom[3 * 4 + 3], 1);   // outside: causal diagonal
    EXPECT_EQ(big.custom[1 * 4 + 3], 0);   // outside: causal upper triangle
    EXPECT_THROW((void)painted_mask_spec(cells, 2, 2, 2), std::invalid_argument);
    // Another token count: back to causal.
    EXPECT_EQ(painted_cells(st, 2), (std::vector<uint8_t>{1, 0, 1, 1}));
    // Through the app's request: attn_mask "custom" applies the painted grid.
    st.apply_to_model = true;
    st.attn_mask = MaskChoice::Custom;
    ModelConfig c;
    const MaskSpec fwd = attention_mask_for(st, c, 3);
    EXPECT_EQ(fwd.kind, MaskKind::Custom);
    EXPECT_EQ(fwd.custom, cells);
}

TEST(SoftmaxPaint, FullyMaskedRowGivesZerosInTheLab) {
    UiState st;
    st.sm_use_typed = true;
    st.sm_typed_logits = "2, 1, 0.5";
    st.sm_mask = MaskChoice::Custom;
    // The lab shows the last row (query 2) of typed logits; mask it completely.
    for (int k = 0; k < 3; ++k) paint_cell(st, 3, 2, k, false);
    const SoftmaxLab lab = softmax_lab(st, nullptr);
    ASSERT_TRUE(lab.error.empty()) << lab.error;
    EXPECT_EQ(lab.n_visible, 0);
    ASSERT_EQ(lab.probs.size(), 3u);
    for (float p : lab.probs) EXPECT_EQ(p, 0.0f);
    ASSERT_TRUE(lab.mask_figure.heatmap);
    EXPECT_TRUE(std::isnan(lab.mask_figure.heatmap->values[2 * 3 + 0]));  // masked cell drawn grey
    EXPECT_EQ(lab.mask_figure.heatmap->values[0], 1.0f);
    // Unmask key 1 only: all weight on it.
    paint_cell(st, 3, 2, 1, true);
    const SoftmaxLab lab2 = softmax_lab(st, nullptr);
    EXPECT_FLOAT_EQ(lab2.probs[1], 1.0f);
    EXPECT_EQ(lab2.probs[0], 0.0f);
}

TEST(SoftmaxPaint, ModelForwardUsesThePaintedMask) {
    const LoadedModel lm = make_demo_model();
    UiState st;
    st.text = "abcd";
    st.apply_to_model = true;
    st.attn_mask = MaskChoice::Custom;
    const int T = 4;
    paint_cell(st, T, 3, 1, false);  // query 3 may not read key 1
    paint_cell(st, T, 0, 3, true);   // query 0 may read the future key 3
    for (int k = 0; k < T; ++k) paint_cell(st, T, 2, k, false);  // query 2 reads nothing
    const auto snap = run_forward_now(st, lm);
    ASSERT_TRUE(snap->error.empty()) << snap->error;
    ASSERT_EQ(int(snap->tokens->ids.size()), T);
    const Tensor* p = snap->find("dec.0.attn.probs");
    ASSERT_NE(p, nullptr);
    const std::vector<uint8_t> cells = painted_cells(st, T);
    for (int h = 0; h < int(p->dim(0)); ++h)
        for (int t = 0; t < T; ++t)
            for (int k = 0; k < T; ++k) {
                const float v = p->data[size_t((h * T + t) * T + k)];
                if (!cells[size_t(t * T + k)]) EXPECT_EQ(v, 0.0f) << "h " << h << " t " << t << " k " << k;
                else EXPECT_GT(v, 0.0f) << "h " << h << " t " << t << " k " << k;
            }
}

// One mask rule (#29): with "apply to the model" on, every row the Softmax lab shows is the row the model's forward
// ran, for every mask kind (the lab once hid the last `padding` keys without the causal part while the forward hid
// one key after a causal mask). Visible = nonzero attention weight in the forward; the lab's knobs are linked to the
// model's as the app links them each frame.
TEST(SoftmaxPaint, LabRowsAreTheRowsTheForwardRan) {
    const LoadedModel lm = make_demo_model();
    struct Case {
        const char* kind;
        int window, padding;
    };
    for (const Case k : {Case{"none", 4, 1}, Case{"causal", 4, 1}, Case{"padding", 4, 2}, Case{"padding", 4, 0},
                         Case{"sliding", 2, 1}, Case{"custom", 4, 1}}) {
        UiState st;
        st.text = "abcdef";
        st.apply_to_model = true;
        st.sm_mask = *parse_mask_choice(k.kind);
        st.sm_window = k.window;
        st.sm_padding = k.padding;
        const int T = 6;
        if (std::string(k.kind) == "custom") paint_cell(st, T, 4, 5, true), paint_cell(st, T, 5, 0, false);
        std::optional<AttentionKnobs> last;
        link_attention_knobs(st, last);  // just switched on: the lab's knobs become the model's
        ASSERT_STREQ(name_of(st.attn_mask), k.kind);
        ASSERT_EQ(st.attn_padding, k.padding);
        const auto snap = run_forward_now(st, lm);
        ASSERT_TRUE(snap->error.empty()) << snap->error;
        ASSERT_EQ(int(snap->tokens->ids.size()), T);
        const Tensor* p = snap->find("dec.0.attn.probs");
        ASSERT_NE(p, nullptr);
        int masked = 0;
        for (int q = 0; q < T; ++q) {
            st.query = q;
            const SoftmaxLab lab = softmax_lab(st, snap.get());
            ASSERT_TRUE(lab.error.empty()) << lab.error;
            ASSERT_EQ(int(lab.mask.size()), T);
            for (int s = 0; s < T; ++s) {
                const bool visible = p->data[size_t((0 * T + q) * T + s)] > 0.0f;
                EXPECT_EQ(lab.mask[size_t(s)] != 0, visible) << k.kind << " query " << q << " key " << s;
                masked += !visible;
            }
        }
        if (std::string(k.kind) != "none" && !(std::string(k.kind) == "padding" && k.padding == 0)) EXPECT_GT(masked, 0);
    }
}

}  // namespace
