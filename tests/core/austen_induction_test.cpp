// The bundled austen-gpt's induction head (README: L3 H2) is causal for copying: on a sentence repeated twice the
// second copy is far easier than the first, and ablating L3 H2 takes much of that advantage away. Prints the
// numbers (mean next-token loss on each copy, with and without ablation, and the per-head sweep) for the record.
#include "core/interp/ablation.h"
#include "core/interp/head_detectors.h"
#include "core/formats/safetensors.h"
#include "core/tokenizer/tokenizer_io.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

namespace ts {
namespace {

using namespace ts::interp;

constexpr const char* kSentence =
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of "
    "a wife.";

struct Copies {
    std::vector<int> ids;             // sentence, sentence
    std::vector<TokenTarget> first;   // next-token targets inside the first copy
    std::vector<TokenTarget> second;  // the same targets inside the second copy
};

Copies repeated(const Tokenizer& tok) {
    const std::vector<int32_t> one = tok.encode_ids(std::string(" ") + kSentence);
    Copies c;
    c.ids.assign(one.begin(), one.end());
    c.ids.insert(c.ids.end(), one.begin(), one.end());
    const int n = static_cast<int>(one.size());
    c.first = next_token_targets(c.ids, 0, n - 1);       // predict tokens 1 .. n-1 of copy 1
    c.second = next_token_targets(c.ids, n, 2 * n - 1);  // predict tokens 1 .. n-1 of copy 2
    return c;
}

struct Losses {
    float first, second;  // mean next-token loss, nats
};

Losses losses(const Model& m, const Copies& c, const std::vector<HeadRef>& heads, AblationKind kind) {
    const ForwardResult r = run_with_ablated_heads(m, c.ids, heads, kind);
    return {-mean_log_prob(r.logits, c.first), -mean_log_prob(r.logits, c.second)};
}

TEST(AustenInduction, AblatingL3H2HurtsTheSecondCopy) {
    const std::filesystem::path dir = std::filesystem::path(TS_ASSETS_DIR) / "models" / "austen-gpt";
    if (!std::filesystem::exists(dir / "model.safetensors")) GTEST_SKIP() << "bundled model not present: " << dir;
    const auto model = load_model_dir(dir);
    const auto tok = find_tokenizer(dir.string());
    ASSERT_TRUE(tok);
    const Copies c = repeated(*tok);
    const Model& m = *model;

    const Losses clean = losses(m, c, {}, AblationKind::Zero);
    const Losses l3h2 = losses(m, c, {{3, 2}}, AblationKind::Zero);
    const Losses l3h3 = losses(m, c, {{3, 3}}, AblationKind::Zero);
    const Losses both = losses(m, c, {{3, 2}, {3, 3}}, AblationKind::Zero);
    const Losses l3h2_mean = losses(m, c, {{3, 2}}, AblationKind::Mean);
    std::printf("austen-gpt, %zu tokens (sentence twice); mean next-token loss, nats: copy 1 / copy 2\n", c.ids.size());
    std::printf("  clean            %.3f / %.3f\n", clean.first, clean.second);
    std::printf("  L3H2 zero        %.3f / %.3f\n", l3h2.first, l3h2.second);
    std::printf("  L3H2 mean        %.3f / %.3f\n", l3h2_mean.first, l3h2_mean.second);
    std::printf("  L3H3 zero        %.3f / %.3f\n", l3h3.first, l3h3.second);
    std::printf("  L3H2+L3H3 zero   %.3f / %.3f\n", both.first, both.second);

    AblationSweepOptions opt;
    opt.targets = c.second;
    const AblationSweep sweep = head_ablation_sweep(m, c.ids, opt);
    opt.targets = c.first;
    const AblationSweep sweep1 = head_ablation_sweep(m, c.ids, opt);
    std::printf("zero-ablation sweep: change of the mean loss (nats) on copy 2 [copy 1]\n");
    for (int l = 0; l < m.config().n_layers; ++l) {
        std::printf("  L%d", l);
        for (int h = 0; h < m.config().n_heads; ++h)
            std::printf("  H%d %+.3f [%+.3f]", h, -sweep.delta_log_prob(l, h), -sweep1.delta_log_prob(l, h));
        std::printf("\n");
    }

    // Copying makes the second copy much easier ...
    EXPECT_LT(clean.second, clean.first - 2.0f);
    // ... and L3H2 carries a clear part of it: the second copy's loss rises by more than 1 nat without it, while
    // the first copy (nothing to copy yet) moves far less.
    EXPECT_GT(l3h2.second - clean.second, 1.0f);
    EXPECT_LT(std::abs(l3h2.first - clean.first), 0.5f * (l3h2.second - clean.second));
    // With L3H3 (the real-text induction head in the README) ablated too, most of the advantage is gone.
    EXPECT_GT(both.second - clean.second, 2.0f);
    // The sweep agrees with the direct measurement.
    EXPECT_NEAR(-sweep.delta_log_prob(3, 2), l3h2.second - clean.second, 1e-4f);
}

// The head detectors find the heads the README names: previous-token L0 H2 scores highest of all heads on repeated
// random tokens (the usual probe) and on the sentence said twice; induction L3 H2 on the random tokens, and on the
// sentence one of the two induction heads (L3 H3, the README's real-text induction head, edges out L3 H2 there).
TEST(AustenInduction, DetectorsPutTheKnownHeadsOnTop) {
    const std::filesystem::path dir = std::filesystem::path(TS_ASSETS_DIR) / "models" / "austen-gpt";
    if (!std::filesystem::exists(dir / "model.safetensors")) GTEST_SKIP() << "bundled model not present: " << dir;
    const auto model = load_model_dir(dir);
    const auto tok = find_tokenizer(dir.string());
    ASSERT_TRUE(tok);
    const Model& m = *model;
    struct Probe {
        const char* what;
        std::vector<int> ids;
        bool only_l3h2;  // induction: L3 H2 alone on top (else L3 H2 or L3 H3)
    };
    const Probe probes[] = {{"repeated random tokens", repeated_random_tokens(m.config().vocab_size, 40, 7), true},
                            {"the sentence twice", repeated(*tok).ids, false}};
    for (const auto& [what, ids, only_l3h2] : probes) {
        SCOPED_TRACE(what);
        ForwardOptions opt;
        opt.capture = CaptureFilter::prefixes({"dec."});
        const ForwardResult r = forward(m, ids, opt);
        const auto top = [&](HeadKind kind) {
            const MatrixRM s = detect_heads(*r.trace, "dec", m.config().n_layers, ids, kind);
            Eigen::Index l = 0, h = 0;
            s.maxCoeff(&l, &h);
            std::printf("%s, %s: top L%d H%d %.3f (L0 H2 %.3f, L3 H2 %.3f)\n", what, std::string(name_of(kind)).c_str(),
                        int(l), int(h), s(l, h), s(0, 2), s(3, 2));
            return std::pair<int, int>{int(l), int(h)};
        };
        EXPECT_EQ(top(HeadKind::PreviousToken), (std::pair<int, int>{0, 2}));
        const std::pair<int, int> induction = top(HeadKind::Induction);
        if (only_l3h2) EXPECT_EQ(induction, (std::pair<int, int>{3, 2}));
        else EXPECT_TRUE(induction == (std::pair<int, int>{3, 2}) || induction == (std::pair<int, int>{3, 3}));
        (void)top(HeadKind::DuplicateToken);
        (void)top(HeadKind::FirstToken);
    }
}

}  // namespace
}  // namespace ts
