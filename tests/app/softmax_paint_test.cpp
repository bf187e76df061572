// The Softmax lab's painted ("custom") mask: painted cells -> ts::MaskSpec{Custom, (T, S) row-major}, the grid
// resets to causal when the token count changes, a fully masked row gets all-zero weights (lab and model), and the
// model's forward with the painted mask hides exactly the unpainted keys.
#include "app/figures/figures.h"
#include "app/figures/views.h"
#include "app/session/worker.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace ts;
using namespace ts::ui;

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
    st.attn_mask = "custom";
    ModelConfig c;
    const MaskSpec fwd = attention_mask_for(st, c, 3);
    EXPECT_EQ(fwd.kind, MaskKind::Custom);
    EXPECT_EQ(fwd.custom, cells);
}

TEST(SoftmaxPaint, FullyMaskedRowGivesZerosInTheLab) {
    UiState st;
    st.sm_use_typed = true;
    st.sm_typed_logits = "2, 1, 0.5";
    st.sm_mask = "custom";
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
    st.attn_mask = "custom";
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

}  // namespace
