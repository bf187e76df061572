// The products' arithmetic as a session setting and the quantization lens (#31): the state's quant_activations reaches the forward through
// ForwardSpec and ForwardRequest, the worker's forward follows it (llama.cpp's 8-bit activations change a Q4_0 file's
// logits, and equal a forward run with the process-wide choice set directly), the kept prefix of an incremental
// forward is not reused across a change, and the state file refuses names it does not know.
#include "app/figures/figures.h"
#include "app/session/compare_job.h"
#include "app/session/forward_spec.h"
#include "app/session/worker.h"
#include "core/formats/gguf_model.h"
#include "core/kernels/quant_gemm.h"
#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

using namespace ts;
using namespace ts::studio;
using namespace ts::figures;

namespace {

std::shared_ptr<const TokenizedText> ids_text(std::vector<int> ids) {
    auto t = std::make_shared<TokenizedText>();
    t->ids = std::move(ids);
    t->ids_only = true;
    t->pieces.resize(t->ids.size());
    t->total_tokens = t->ids.size();
    return t;
}

ForwardRequest request_for(const std::shared_ptr<const Model>& model, QuantActivations a,
                           const std::shared_ptr<const TokenizedText>& tokens) {
    ForwardRequest r;
    r.model = model;
    r.tokens = tokens;
    r.quant_activations = a;
    r.logit_lens = false;
    r.all_logits = true;
    return r;
}

struct ResetChoice {
    ~ResetChoice() { set_quant_activations(QuantActivations::Float); }
};

}  // namespace

TEST(QuantActivationsSetting, StateSpecAndRequestCarryIt) {
    UiState st;
    EXPECT_EQ(st.quant_activations, "float");
    ModelConfig c;
    const ForwardSpec exact = forward_spec(st, c);
    EXPECT_EQ(exact.quant_activations, QuantActivations::Float);
    st.quant_activations = "int8";
    const ForwardSpec int8 = forward_spec(st, c);
    EXPECT_EQ(int8.quant_activations, QuantActivations::Int8);
    EXPECT_FALSE(exact == int8);  // a change runs a new forward
    st.quant_activations = "int4";
    st.clamp();
    EXPECT_EQ(st.quant_activations, "float");
    EXPECT_EQ(parse_quant_activations("int8"), QuantActivations::Int8);
    EXPECT_EQ(name_of(QuantActivations::Int8), "int8");
    EXPECT_FALSE(parse_quant_activations("INT8"));
}

TEST(QuantActivationsSetting, TheWorkersForwardFollowsTheRequest) {
    ResetChoice reset;
    const std::shared_ptr<const Model> model = load_gguf_model(test::golden_path("gguf/llama_q4_0.gguf"));
    const auto tokens = ids_text({1, 7, 42, 255, 3, 9});
    const auto exact = run_forward_request(request_for(model, QuantActivations::Float, tokens), 1);
    const auto int8 = run_forward_request(request_for(model, QuantActivations::Int8, tokens), 2);
    ASSERT_TRUE(exact->error.empty()) << exact->error;
    ASSERT_TRUE(int8->error.empty()) << int8->error;
    EXPECT_EQ(quant_activations(), QuantActivations::Int8);  // process-wide: what the last forward asked for
    EXPECT_TRUE(int8->int8_activations);                     // the snapshot says so (the sidebar's status line)
    EXPECT_FALSE(exact->int8_activations);
    EXPECT_TRUE(has_int8_products(*model));
    ForwardOptions opt;
    opt.all_logits = true;
    const MatrixRM direct = forward(*model, tokens->ids, opt).logits;
    ASSERT_EQ(direct.rows(), int8->logits.rows());
    EXPECT_EQ((direct - int8->logits).cwiseAbs().maxCoeff(), 0.0f);
    EXPECT_GT((exact->logits - int8->logits).cwiseAbs().maxCoeff(), 1e-4f);

    // The incremental forward keeps its prefix only under the arithmetic it was computed with.
    auto memory = std::make_shared<ForwardMemory>();
    ForwardRequest a = request_for(model, QuantActivations::Float, tokens);
    a.memory = memory;
    const auto first = run_forward_request(a, 3);
    ForwardRequest b = request_for(model, QuantActivations::Int8, tokens);
    b.memory = memory;
    const auto second = run_forward_request(b, 4);
    ASSERT_TRUE(second->error.empty()) << second->error;
    EXPECT_EQ(second->reused_positions, 0);
    EXPECT_EQ((second->logits - int8->logits).cwiseAbs().maxCoeff(), 0.0f);
    const auto again = run_forward_request(b, 5);
    EXPECT_EQ(again->reused_positions, int(tokens->ids.size()) - 1);  // same settings: the prefix is kept
    (void)first;
}

// The quantization lens in the app: the job's result is diff_models' on the same tokens; with exact products a
// quantized file and its own weights in float32 compute the same numbers (KL 0), with llama.cpp's arithmetic they do
// not; the figures show the diff's values; references that cannot be made are refused in one line.
TEST(QuantizationLens, ComparesWithTheFloatTwinAndAnotherModel) {
    ResetChoice reset;
    const LoadedModel q4 = load_model_folder(test::golden_path("gguf/llama_q4_0.gguf"));
    const LoadedModel f32 = load_model_folder(test::golden_path("gguf/llama_f32.gguf"));
    const std::vector<int> ids = {1, 7, 42, 255, 3, 9, 11};

    const LoadedModel twin = load_compare_reference(q4, kFloatTwin);
    EXPECT_FALSE(has_quantized_matrices(*twin.model));
    EXPECT_TRUE(has_quantized_matrices(*q4.model));
    const CompareResult same = compare_models(q4, twin, ids, QuantActivations::Float);
    ASSERT_TRUE(same.error.empty()) << same.error;
    EXPECT_EQ(same.diff.mean_kl, 0.0);  // the exact product of the stored weights is the float32 twin's
    EXPECT_EQ(same.diff.top1_agreements, int(ids.size()));
    const CompareResult int8 = compare_models(q4, twin, ids, QuantActivations::Int8);
    ASSERT_TRUE(int8.error.empty()) << int8.error;
    EXPECT_GT(int8.diff.mean_kl, 0.0);  // what 8-bit activations cost
    EXPECT_GT(int8.diff.resid_rel_error.back(), 0.0);
    EXPECT_EQ(int8.diff.resid_rel_error.front(), 0.0);  // the embeddings are looked up, not multiplied
    EXPECT_EQ(int8.labels.size(), ids.size());
    EXPECT_EQ(int8.ids, ids);  // what the panel's "for an earlier text" compares with the current tokens

    // Against another file: diff_models' numbers, and the figures show them.
    set_quant_activations(QuantActivations::Float);
    const CompareResult r = compare_models(q4, f32, ids, QuantActivations::Float);
    ASSERT_TRUE(r.error.empty()) << r.error;
    const interp::ModelDiff direct = interp::diff_models(*q4.model, *f32.model, ids);
    EXPECT_EQ(r.diff.kl, direct.kl);
    EXPECT_EQ(r.diff.resid_rel_error, direct.resid_rel_error);
    const std::vector<plot::Figure> figs = compare_figures(r);
    ASSERT_EQ(figs.size(), 3u);
    std::vector<double> kl(ids.size(), -1.0);
    for (const auto& s : figs[0].series)
        for (size_t i = 0; i < s.x.size(); ++i) kl[size_t(s.x[i])] = s.y[i];
    EXPECT_EQ(kl, direct.kl);
    EXPECT_EQ(figs[0].x.categories.size(), ids.size());
    EXPECT_EQ(figs[1].series.at(0).y, direct.resid_rel_error);
    ASSERT_TRUE(figs[2].heatmap);
    EXPECT_EQ(figs[2].heatmap->rows, int(direct.attn_mean_abs_diff.rows()));
    EXPECT_FLOAT_EQ(figs[2].heatmap->at(1, 2), direct.attn_mean_abs_diff(1, 2));

    EXPECT_THROW((void)load_compare_reference(f32, kFloatTwin), std::invalid_argument);  // nothing quantized
    EXPECT_THROW((void)load_compare_reference(q4, ""), std::invalid_argument);
    CompareResult failed;
    failed.error = "x";
    EXPECT_TRUE(compare_figures(failed).empty());
}

TEST(QuantizationLens, TheJobRunsOffTheCallerAndSaysWhatFailed) {
    ResetChoice reset;
    const LoadedModel q4 = load_model_folder(test::golden_path("gguf/llama_q4_0.gguf"));
    CompareJob job;
    ASSERT_TRUE(job.start(q4, kFloatTwin, {1, 2, 3}, QuantActivations::Int8));
    EXPECT_FALSE(job.start(q4, kFloatTwin, {1, 2, 3}, QuantActivations::Int8));  // one at a time
    while (!job.poll()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_TRUE(job.latest());
    EXPECT_TRUE(job.latest()->error.empty()) << job.latest()->error;
    EXPECT_TRUE(job.latest()->float_twin);
    EXPECT_EQ(job.latest()->diff.T, 3);
    ASSERT_TRUE(job.start(q4, "/nonexistent/model", {1, 2, 3}, QuantActivations::Float));
    while (!job.poll()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_NE(job.latest()->error.find("/nonexistent/model"), std::string::npos) << job.latest()->error;
    ASSERT_TRUE(job.start(q4, kFloatTwin, {}, QuantActivations::Float));
    while (!job.poll()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_NE(job.latest()->error.find("no tokens"), std::string::npos) << job.latest()->error;
}
