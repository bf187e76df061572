// FFN neurons and embedding maps (core/interp/neurons.h, embedding_map.h) against PyTorch
// (tests/reference/make_neuron_fixtures.py, float64) on the GPT-2- and Llama-shaped golden models: each chunk's FFN
// activations, every neuron's top contexts over a token stream, PCA of the token embeddings and of the stacked
// residual stream, and cosine nearest neighbours. Plus the index file's round trip and its refusals.
#include "core/formats/safetensors.h"
#include "core/interp/embedding_map.h"
#include "core/interp/neurons.h"
#include "tests/core/golden_model.h"
#include "tests/test_util.h"

#include <filesystem>
#include <fstream>

namespace ts {
namespace {

using namespace ts::interp;

struct NeuronFixture {
    test::GoldenModel g;
    WeightMap t;
    std::map<std::string, std::string> meta;
    std::vector<int> ids(const std::string& name) const {
        std::vector<int> r;
        for (float v : t.at(name).data) r.push_back(int(v));
        return r;
    }
    MatrixRM mat(const std::string& name) const { return t.at(name).mat(); }
};

NeuronFixture load(const std::string& file) {
    NeuronFixture f;
    f.t = load_safetensors(test::golden_path(file), &f.meta);
    f.g = test::load_golden_model(f.meta.at("model"));
    return f;
}

void expect_refused(const std::filesystem::path& file, const std::string& needle) {
    try {
        (void)load_neuron_index(file);
        ADD_FAILURE() << file << " was read as a neuron index";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
}

class NeuronGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(NeuronGolden, ActivationsOfOneChunkMatchTorch) {
    const NeuronFixture f = load(GetParam());
    const Model& m = *f.g.model;
    const int context = std::stoi(f.meta.at("context"));
    const std::vector<int> stream = f.ids("in.tokens");
    const std::vector<int> chunk0(stream.begin(), stream.begin() + context);
    ForwardOptions opt;
    opt.capture = CaptureFilter::all();
    const ForwardResult r = forward(m, chunk0, opt);
    for (int l = 0; l < m.config().n_layers; ++l) {
        SCOPED_TRACE(l);
        const Tensor& a = neuron_activations(*r.trace, "dec", l, m.config().d_ff);
        const MatrixRM want = f.mat("out.post_act." + std::to_string(l));
        EXPECT_ALLCLOSE(a.mat(), want, 1e-5f, 1e-6f);
        // One neuron over the text, and the top neurons at a position, from the same values.
        const std::vector<float> over = neuron_activation_over(m, chunk0, l, 3);
        for (int t = 0; t < context; ++t) EXPECT_NEAR(over[size_t(t)], want(t, 3), 1e-5);
        const std::vector<NeuronValue> top = top_neurons_at(a, 2, 5);
        ASSERT_EQ(top.size(), 5u);
        Eigen::Index arg = 0;
        const float mx = want.row(2).maxCoeff(&arg);
        EXPECT_EQ(top[0].neuron, int(arg));
        EXPECT_NEAR(top[0].activation, mx, 1e-5);
        for (size_t i = 1; i < top.size(); ++i) EXPECT_GE(top[i - 1].activation, top[i].activation);
        const std::vector<NeuronValue> busiest = most_active_neurons(a, 3);
        EXPECT_NEAR(busiest[0].activation, want.maxCoeff(), 1e-5);
    }
    EXPECT_THROW((void)neuron_activation_over(m, chunk0, m.config().n_layers, 0), std::invalid_argument);
    EXPECT_THROW((void)neuron_activation_over(m, chunk0, 0, m.config().d_ff), std::invalid_argument);
}

TEST_P(NeuronGolden, MaxActivatingExamplesMatchTorch) {
    const NeuronFixture f = load(GetParam());
    const Model& m = *f.g.model;
    NeuronIndexOptions opt;
    opt.context = std::stoi(f.meta.at("context"));
    opt.top_k = std::stoi(f.meta.at("top_k"));
    opt.min_position = std::stoi(f.meta.at("min_position"));
    int calls = 0;
    opt.progress = [&](int done, int total) {
        ++calls;
        EXPECT_LE(done, total);
    };
    const NeuronIndex ix = build_neuron_index(m, f.ids("in.tokens"), opt);
    EXPECT_EQ(ix.n_chunks(), calls);
    EXPECT_EQ(ix.chunks_done, ix.n_chunks());
    EXPECT_EQ(ix.tokens.size(), size_t(ix.n_chunks() * opt.context));  // the leftover ids are not indexed
    EXPECT_LT(ix.tokens.size(), f.ids("in.tokens").size());
    const Tensor& chunk = f.t.at("out.chunk");
    const Tensor& pos = f.t.at("out.position");
    const Tensor& act = f.t.at("out.activation");
    ASSERT_EQ(ix.examples.size(), chunk.data.size());
    for (int l = 0; l < ix.n_layers; ++l)
        for (int n = 0; n < ix.d_ff; ++n) {
            const auto ex = ix.examples_of(l, n);
            ASSERT_EQ(int(ex.size()), opt.top_k);
            for (int i = 0; i < opt.top_k; ++i) {
                const size_t at = (size_t(l) * size_t(ix.d_ff) + size_t(n)) * size_t(opt.top_k) + size_t(i);
                SCOPED_TRACE("layer " + std::to_string(l) + " neuron " + std::to_string(n) + " slot " +
                             std::to_string(i));
                EXPECT_EQ(ex[size_t(i)].chunk, int(chunk.data[at]));
                EXPECT_EQ(ex[size_t(i)].position, int(pos.data[at]));
                EXPECT_NEAR(ex[size_t(i)].activation, act.data[at], 1e-5f * (1 + std::abs(act.data[at])));
            }
        }
}

TEST_P(NeuronGolden, PcaAndNeighboursMatchTorch) {
    const NeuronFixture f = load(GetParam());
    const Model& m = *f.g.model;
    const int k = std::stoi(f.meta.at("pca_k"));
    const MatrixRM emb = m.weight("tok_emb.weight").mat();
    const Pca p = fit_pca(emb, k);
    EXPECT_ALLCLOSE(p.components, f.mat("out.emb.components"), 1e-4f, 1e-5f);
    EXPECT_ALLCLOSE(p.projected, f.mat("out.emb.projected"), 1e-4f, 1e-5f);
    EXPECT_ALLCLOSE(p.mean, f.mat("out.emb.mean"), 1e-6f, 1e-7f);
    for (int i = 0; i < k; ++i) {
        EXPECT_NEAR(p.variance[size_t(i)], f.t.at("out.emb.variance").data[size_t(i)], 1e-5 * p.variance[0]);
        EXPECT_NEAR(p.explained_ratio[size_t(i)], f.t.at("out.emb.ratio").data[size_t(i)], 1e-5);
    }
    EXPECT_ALLCLOSE(pca_project(p, emb), p.projected, 1e-4f, 1e-5f);

    // The residual stream of chunk 0 through every layer, stacked, and its PCA.
    const int context = std::stoi(f.meta.at("context"));
    const std::vector<int> stream = f.ids("in.tokens");
    ForwardOptions opt;
    opt.capture = CaptureFilter::all();
    const ForwardResult r = forward(m, std::vector<int>(stream.begin(), stream.begin() + context), opt);
    const MatrixRM resid = residual_stack(*r.trace, "dec", m.config().n_layers);
    EXPECT_ALLCLOSE(resid, f.mat("out.resid.stack"), 1e-5f, 1e-5f);
    const Pca rp = fit_pca(resid, 2);
    EXPECT_ALLCLOSE(rp.components, f.mat("out.resid.components"), 1e-4f, 1e-5f);
    EXPECT_ALLCLOSE(rp.projected, f.mat("out.resid.projected"), 1e-4f, 1e-4f);

    const int q = std::stoi(f.meta.at("query_token"));
    const std::vector<Neighbour> nn = nearest_by_cosine(emb, emb.row(q), 4, q);
    ASSERT_EQ(nn.size(), 4u);
    for (size_t i = 0; i < nn.size(); ++i) {
        EXPECT_EQ(nn[i].row, int(f.t.at("out.neighbours").data[i]));
        EXPECT_NEAR(nn[i].cosine, f.t.at("out.neighbour_cosines").data[i], 1e-5);
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, NeuronGolden,
                         ::testing::Values("neurons_gpt2.safetensors", "neurons_llama.safetensors"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                             std::string s = info.param;
                             return s.substr(8, s.find('.') - 8);  // "neurons_gpt2.safetensors" -> "gpt2"
                         });

TEST(NeuronForward, StoppingAtAnFfnActivationGivesTheSameActivationsAndNothingAfter) {
    const test::GoldenModel g = test::load_golden_model("model_gpt2.safetensors");
    const Model& m = *g.model;
    const std::vector<int> ids = g.ids("in.ids");
    ForwardOptions full;
    full.capture = CaptureFilter::all();
    const ForwardResult want = forward(m, ids, full);
    ForwardOptions stop = full;
    stop.stop_at_ffn_act = 0;
    const ForwardResult got = forward(m, ids, stop);
    const Tensor& a = neuron_activations(*got.trace, "dec", 0, m.config().d_ff);
    EXPECT_ALLCLOSE(a.mat(), neuron_activations(*want.trace, "dec", 0, m.config().d_ff).mat(), 0.0f, 0.0f);
    // Layer 0's W_down and everything after it did not run.
    EXPECT_NE(want.trace->find("dec.0.ffn.out"), nullptr);
    EXPECT_EQ(got.trace->find("dec.0.ffn.out"), nullptr);
    EXPECT_EQ(got.trace->find("dec.1.attn.probs"), nullptr);
    EXPECT_EQ(got.hidden.size(), 0);
    EXPECT_EQ(got.logits.size(), 0);
    stop.stop_at_ffn_act = m.config().n_layers;
    EXPECT_THROW_MSG(forward(m, ids, stop), "outside the stack's");
    ModelConfig c = m.config();
    c.d_ff = 0;
    const Model attn_only(c, init_weights(c, 3));
    stop.stop_at_ffn_act = 0;
    EXPECT_THROW_MSG(forward(attn_only, ids, stop), "attention-only");
}

TEST(NeuronIndex, RoundTripsThroughItsFileAndRefusesOthers) {
    const NeuronFixture f = load("neurons_gpt2.safetensors");
    NeuronIndexOptions opt;
    opt.context = 8;
    opt.top_k = 2;
    opt.min_position = 3;
    const NeuronIndex ix = build_neuron_index(*f.g.model, f.ids("in.tokens"), opt);
    EXPECT_EQ(ix.model_fingerprint, model_fingerprint(*f.g.model));
    EXPECT_EQ(ix.corpus_fingerprint, tokens_fingerprint(f.ids("in.tokens")));
    const auto dir = std::filesystem::path(::testing::TempDir()) / "neuron_index_test";
    std::filesystem::create_directories(dir);
    const auto file = dir / neuron_index_file_name(ix.model_fingerprint, ix.corpus_fingerprint, opt);
    save_neuron_index(file, ix);
    const NeuronIndex back = load_neuron_index(file);
    EXPECT_EQ(back.tokens, ix.tokens);
    EXPECT_EQ(back.n_layers, ix.n_layers);
    EXPECT_EQ(back.d_ff, ix.d_ff);
    EXPECT_EQ(back.min_position, 3);
    for (const NeuronExample& e : back.examples) EXPECT_GE(e.position, 3);
    EXPECT_EQ(back.model_fingerprint, ix.model_fingerprint);
    EXPECT_EQ(back.corpus_fingerprint, ix.corpus_fingerprint);
    ASSERT_EQ(back.examples.size(), ix.examples.size());
    for (size_t i = 0; i < ix.examples.size(); ++i) {
        EXPECT_EQ(back.examples[i].chunk, ix.examples[i].chunk);
        EXPECT_EQ(back.examples[i].activation, ix.examples[i].activation);
    }
    EXPECT_EQ(back.chunk_ids(1), std::vector<int>(ix.tokens.begin() + 8, ix.tokens.begin() + 16));
    EXPECT_THROW((void)back.chunk_ids(back.n_chunks()), std::out_of_range);
    EXPECT_THROW((void)back.examples_of(ix.n_layers, 0), std::out_of_range);
    // Another safetensors file (a model) and a broken file are refused with the path in the message.
    expect_refused(test::golden_path("model_gpt2.safetensors"), "not a neuron index");
    std::ofstream(dir / "broken.safetensors") << "not safetensors";
    expect_refused(dir / "broken.safetensors", "broken.safetensors");
    // A changed weight changes the fingerprint.
    WeightMap w = f.g.model->weights();
    w.at("dec.0.ffn.w_up").data[0] += 1e-3f;
    EXPECT_NE(model_fingerprint(Model(f.g.model->config(), w)), ix.model_fingerprint);
}

TEST(NeuronIndex, RefusesBadOptionsAndStopsWhenCancelled) {
    const NeuronFixture f = load("neurons_gpt2.safetensors");
    const std::vector<int> ids = f.ids("in.tokens");
    NeuronIndexOptions opt;
    opt.context = 1;
    EXPECT_THROW((void)build_neuron_index(*f.g.model, ids, opt), std::invalid_argument);
    opt.context = f.g.model->config().max_seq_len + 1;  // learned positions end there
    EXPECT_THROW((void)build_neuron_index(*f.g.model, ids, opt), std::invalid_argument);
    opt.context = 8;
    EXPECT_THROW((void)build_neuron_index(*f.g.model, ids, opt), std::invalid_argument);  // min_position 8 = context
    opt.min_position = 1;
    EXPECT_THROW((void)build_neuron_index(*f.g.model, std::vector<int>(ids.begin(), ids.begin() + 7), opt),
                 std::invalid_argument);
    std::atomic<bool> stop{false};
    opt.cancel = &stop;
    opt.progress = [&](int done, int) {
        if (done == 2) stop = true;
    };
    const NeuronIndex ix = build_neuron_index(*f.g.model, ids, opt);
    EXPECT_TRUE(ix.cancelled);
    EXPECT_EQ(ix.chunks_done, 2);
    for (const NeuronExample& e : ix.examples) EXPECT_LT(e.chunk, 2);
}

TEST(EmbeddingMap, RefusesWhatItCannotFit) {
    MatrixRM one(1, 3);
    one << 1, 2, 3;
    EXPECT_THROW((void)fit_pca(one, 1), std::invalid_argument);
    MatrixRM x = MatrixRM::Random(5, 3);
    EXPECT_THROW((void)fit_pca(x, 4), std::invalid_argument);
    x(2, 1) = NAN;
    EXPECT_THROW((void)fit_pca(x, 2), std::invalid_argument);
    // Points on a line: one component carries all the variance.
    MatrixRM line(4, 2);
    line << 0, 0, 1, 2, 2, 4, 3, 6;
    const Pca p = fit_pca(line, 2);
    EXPECT_NEAR(p.explained_ratio[0], 1.0, 1e-9);
    EXPECT_NEAR(p.explained_ratio[1], 0.0, 1e-9);
    EXPECT_NEAR(p.components(0, 1), 2.0 / std::sqrt(5.0), 1e-6);
}

}  // namespace
}  // namespace ts
