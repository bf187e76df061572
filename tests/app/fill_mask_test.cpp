// The fill-mask view (masked-LM models, e.g. BERT) on the synthetic BERT folder tests/golden/hf_bert (random weights;
// a byte-level BPE tokenizer.json with "[MASK]" as an added token): one figure per mask, its bars the softmax of the
// logits at that position in descending order, and clear refusals for a text without a mask or a model without an
// MLM head.
#include "app/figures/figures.h"
#include "app/figures/views.h"
#include "core/kernels/ops.h"
#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace ts::figures {
namespace {

std::string view_error(const std::string& view, const UiState& st, const Snapshot* s, const LoadedModel* m) {
    try {
        (void)build_view(view, st, s, m);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "<no error>";
}

TEST(FillMask, OneFigurePerMaskWithTheSoftmaxOfItsLogitsInOrder) {
    const LoadedModel m = load_model_folder(test::golden_path("hf_bert"));
    ASSERT_TRUE(m.model->config().mlm_head);
    UiState st;
    st.text = "The [MASK] of France is [MASK].";
    const auto snap = run_forward_now(st, m);
    ASSERT_TRUE(snap->error.empty()) << snap->error;
    EXPECT_TRUE(has_fill_mask(*snap));
    const std::vector<int> pos = mask_positions(*snap);
    ASSERT_EQ(pos, (std::vector<int>{2, 7}));  // "The", " ", "[MASK]", " of", " France", " is", " ", "[MASK]", "."
    const ViewFigures vf = build_view("fill-mask", st, snap.get(), &m);
    ASSERT_EQ(vf.figures.size(), 2u);
    EXPECT_EQ(vf.names[1], "fill_mask_pos7");
    for (size_t k = 0; k < 2; ++k) {
        const plot::Figure& f = vf.figures[k];
        ASSERT_EQ(f.series.size(), 1u);
        const plot::Series& b = f.series[0];
        ASSERT_EQ(b.y.size(), 10u);
        const MatrixRM p = softmax_rows(snap->logits.middleRows(pos[k], 1));
        std::vector<float> sorted(p.data(), p.data() + p.size());
        std::sort(sorted.begin(), sorted.end(), std::greater<>());
        for (size_t i = 0; i < 10; ++i) EXPECT_NEAR(b.y[i], sorted[i], 1e-7) << "mask " << k << " rank " << i;
        EXPECT_NE(f.title.find("position " + std::to_string(pos[k])), std::string::npos) << f.title;
    }
}

TEST(FillMask, RefusesATextWithoutMaskAndAModelWithoutHead) {
    const LoadedModel bert = load_model_folder(test::golden_path("hf_bert"));
    UiState st;
    st.text = "The capital of France is Paris.";
    auto snap = run_forward_now(st, bert);
    EXPECT_TRUE(fill_mask_figures(*snap).empty());
    EXPECT_NE(view_error("fill-mask", st, snap.get(), &bert).find("no mask token"), std::string::npos);

    const LoadedModel demo = make_demo_model();  // a decoder: next-token predictions, no fill-mask
    st.text = "The capital [MASK]";
    snap = run_forward_now(st, demo);
    EXPECT_FALSE(has_fill_mask(*snap));
    EXPECT_NE(view_error("fill-mask", st, snap.get(), &demo).find("no masked-LM head"), std::string::npos);
}

}  // namespace
}  // namespace ts::figures
