// The memory budget (core/model/memory_budget.h): sizes and fractions parse or fail with the text named; the fitted
// estimate follows what a forward really holds at a longer T; refusals are one line with what to do.
#include "core/model/memory_budget.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ts {
namespace {

TEST(MemoryBudget, SizesFractionsAndNonsense) {
    const size_t avail = size_t(10) << 30;
    EXPECT_EQ(parse_memory_budget("4G", avail), size_t(4) << 30);
    EXPECT_EQ(parse_memory_budget("512M", avail), size_t(512) << 20);
    EXPECT_EQ(parse_memory_budget("1.5GiB", avail), size_t(3) << 29);
    EXPECT_EQ(parse_memory_budget("800K", avail), size_t(800) << 10);
    EXPECT_EQ(parse_memory_budget("2048", avail), 2048u);
    EXPECT_EQ(parse_memory_budget("0.5", avail), size_t(5) << 30);
    for (const char* bad : {"", "lots", "-1G", "0", "4X", "nan", "1e30G"})
        EXPECT_THROW((void)parse_memory_budget(bad, avail), std::invalid_argument) << bad;
    EXPECT_THROW((void)parse_memory_budget("0.5", 0), std::invalid_argument);
    EXPECT_GT(default_memory_budget(), 0u);
    EXPECT_EQ(human_bytes(512), "512 B");
    EXPECT_EQ(human_bytes(1.5 * 1024 * 1024), "1.50 MiB");
}

TEST(MemoryBudget, TheFitFollowsTheTraceAtLongerTAndRefusesInOneLine) {
    ModelConfig c;
    c.name = "budget";
    c.vocab_size = 40;
    c.d_model = 32;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.d_ff = 64;
    c.n_layers = 2;
    c.max_seq_len = 1024;
    c.position = PositionKind::RoPE;
    c.norm = NormKind::RMSNorm;
    c.activation = Activation::SwiGLU;
    const Model m(c, init_weights(c, 3));
    ForwardOptions o;
    o.capture = CaptureFilter::all();
    const ForwardMemoryFit fit = fit_forward_memory(m, o);
    {  // masks sized for the real text (a custom (T, S) table, key padding) do not break the dry runs
        ForwardOptions sized = o;
        sized.self_mask.kind = MaskKind::Custom;
        sized.self_mask.custom.assign(size_t(600) * 600, 1);
        sized.self_mask.key_padding.assign(600, 0);
        const ForwardMemoryFit f2 = fit_forward_memory(m, sized);
        EXPECT_NEAR(f2.per_token, fit.per_token, 0.01 * fit.per_token);  // a mask rule keeps 4 bytes a row
    }
    const int T = 600;
    const ForwardResult r = forward(m, std::vector<int>(size_t(T), 1), o);
    const double held = double(r.trace->bytes() + r.trace->attention_bytes()) + double(r.logits.size() + r.hidden.size()) * 4;
    const double fitted = fit.fixed + fit.per_token * T;
    EXPECT_NEAR(fitted / held, 1.0, 0.05) << fitted << " vs " << held;
    EXPECT_GE(fit.bytes(T), size_t(fitted));  // plus the forward's scratch
    // Nothing (H, T, S) is held: the trace is linear in T (4 heads x 600^2 floats would be 5.8 MB per tensor).
    EXPECT_LT(held, 4.0 * 600 * 600 * 4);

    EXPECT_EQ(memory_refusal("trace of 5 tokens", 100, 200, "shorten it"), "");
    const std::string why = memory_refusal("trace of 9000 tokens", size_t(3) << 30, size_t(1) << 30, "shorten it");
    EXPECT_EQ(why, "trace of 9000 tokens needs about 3.00 GiB, more than the memory budget of 1.00 GiB: shorten it");
}

}  // namespace
}  // namespace ts
