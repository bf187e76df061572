// The products' arithmetic as a session setting (#31): the state's quant_activations reaches the forward through
// ForwardSpec and ForwardRequest, the worker's forward follows it (llama.cpp's 8-bit activations change a Q4_0 file's
// logits, and equal a forward run with the process-wide choice set directly), the kept prefix of an incremental
// forward is not reused across a change, and the state file refuses names it does not know.
#include "app/session/forward_spec.h"
#include "app/session/worker.h"
#include "core/formats/gguf_model.h"
#include "core/kernels/quant_gemm.h"
#include "tests/test_util.h"

#include <gtest/gtest.h>

using namespace ts;
using namespace ts::studio;

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
