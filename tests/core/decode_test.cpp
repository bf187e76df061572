// Decoding for encoder–decoder models (core/forward/decode.h): cached decoder steps against full forward_seq2seq recomputes,
// greedy and beam search against independent references that recompute everything (an exhaustive search over every
// target sequence up to max_len, a naive beam search, a naive greedy loop), max_len, translation.json and the
// language helpers, and the errors.
#include "core/forward/decode.h"
#include "core/tokenizer/bpe.h"
#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <tuple>

namespace ts {
namespace {

// A tiny translation model like the project's (post-norm, ReLU, sinusoidal, scaled embeddings) whose weights are
// scaled up from the default init so that its distributions are peaked (no near-ties between candidates).
ModelConfig tiny_config(int vocab) {
    ModelConfig c;
    c.name = "tiny-mt";
    c.arch = Arch::EncoderDecoder;
    c.vocab_size = vocab;
    c.d_model = 16;
    c.n_heads = 2;
    c.n_kv_heads = 2;
    c.d_ff = 32;
    c.n_layers = 2;
    c.n_enc_layers = 2;
    c.max_seq_len = 32;
    c.norm_placement = NormPlacement::Post;
    c.activation = Activation::ReLU;
    c.position = PositionKind::Sinusoidal;
    c.scale_embeddings = true;
    return c;
}

Model scaled_model(const ModelConfig& c, uint64_t seed, float scale) {
    WeightMap w = init_weights(c, seed);
    for (auto& [name, t] : w)
        if (name.find("norm.weight") == std::string::npos)
            for (float& v : t.data) v *= scale;
    return Model(c, std::move(w));
}

// As above with an untied LM head that gives the end token a logit of about `end_logit` at every step (through a
// constant feature: dec.final_norm.bias[0] = 10, read only by the end token's row), so that, unlike in a random
// model where one token dominates everywhere, hypotheses end at varied lengths and search has choices to make.
Model search_model(ModelConfig c, uint64_t seed, float scale, int end_id, float end_logit) {
    c.tie_embeddings = false;
    WeightMap w = init_weights(c, seed);
    for (auto& [name, t] : w)
        if (name.find("norm.weight") == std::string::npos)
            for (float& v : t.data) v *= scale;
    w.at("dec.final_norm.bias").data[0] = 10.0f;
    Tensor& head = w.at("lm_head.weight");
    for (int v = 0; v < c.vocab_size; ++v) head.data[size_t(v) * c.d_model] = 0.0f;
    std::fill_n(head.data.begin() + long(end_id) * c.d_model, c.d_model, 0.0f);
    head.data[size_t(end_id) * c.d_model] = end_logit / 10.0f;
    return Model(c, std::move(w));
}

std::vector<int> random_ids(int n, int lo, int hi, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> d(lo, hi - 1);
    std::vector<int> ids(n);
    for (int& id : ids) id = d(rng);
    return ids;
}

// end = start = 0, pad = 1: the layout of a one-direction model (pad is never produced).
TranslationSpec tiny_spec() {
    TranslationSpec s;
    s.direction = "en-zh";
    s.decoder_start_id = s.source_end_id = s.target_end_id = 0;
    s.pad_id = 1;
    return s;
}

// log_softmax of the last decoder position after [start] + prefix, by a full forward_seq2seq (no cache).
std::vector<double> full_log_probs(const Model& m, const std::vector<int>& src, const TranslationSpec& spec,
                                   const std::vector<int>& prefix) {
    std::vector<int> tgt{spec.decoder_start_id};
    tgt.insert(tgt.end(), prefix.begin(), prefix.end());
    const ForwardResult r = forward_seq2seq(m, src, tgt, ForwardOptions{});
    const auto row = r.logits.row(r.logits.rows() - 1);
    double mx = -INFINITY;
    for (int v = 0; v < row.size(); ++v) mx = std::max(mx, double(row(v)));
    double sum = 0;
    for (int v = 0; v < row.size(); ++v) sum += std::exp(double(row(v)) - mx);
    std::vector<double> lp(size_t(row.size()));
    for (int v = 0; v < row.size(); ++v) lp[size_t(v)] = double(row(v)) - mx - std::log(sum);
    return lp;
}

double ref_score(double log_prob, size_t len, float alpha) { return log_prob / std::pow(double(len), double(alpha)); }

struct RefResult {
    std::vector<int> ids;
    double log_prob = 0, score = -INFINITY;
    bool finished = false;
};

// Every target the decoder can produce within max_len tokens: t tokens + end (t < max_len), or max_len tokens cut
// without an end; the best score wins.
RefResult exhaustive_search(const Model& m, const std::vector<int>& src, const TranslationSpec& spec, int max_len,
                            float alpha) {
    RefResult best;
    std::vector<int> prefix;
    const int V = m.config().vocab_size;
    std::function<void(double)> visit = [&](double lp_prefix) {
        const auto consider = [&](double lp, size_t len, bool finished) {
            const double s = ref_score(lp, len, alpha);
            if (s > best.score) best = RefResult{prefix, lp, s, finished};
        };
        if (int(prefix.size()) == max_len) {
            consider(lp_prefix, prefix.size(), false);
            return;
        }
        const std::vector<double> lp = full_log_probs(m, src, spec, prefix);
        consider(lp_prefix + lp[size_t(spec.target_end_id)], prefix.size() + 1, true);
        for (int v = 0; v < V; ++v) {
            if (v == spec.target_end_id || v == spec.pad_id) continue;
            prefix.push_back(v);
            visit(lp_prefix + lp[size_t(v)]);
            prefix.pop_back();
        }
    };
    visit(0.0);
    return best;
}

// Beam search as documented in core/forward/decode.h, written plainly: every hypothesis is recomputed from scratch and
// expanded over the whole vocabulary.
RefResult naive_beam_search(const Model& m, const std::vector<int>& src, const TranslationSpec& spec, int B,
                            int max_len, float alpha, bool exact_stop) {
    struct H {
        std::vector<int> ids;
        double lp = 0;
    };
    struct C {
        double lp;
        int hyp, id;
    };
    std::vector<H> live{H{}};
    std::vector<RefResult> fin;  // best first, at most B
    const auto add = [&](RefResult r) {
        size_t pos = 0;
        while (pos < fin.size() && fin[pos].score >= r.score) ++pos;
        fin.insert(fin.begin() + long(pos), std::move(r));
        if (fin.size() > size_t(B)) fin.pop_back();
    };
    bool done = false;
    for (int t = 0; t < max_len && !done && !live.empty(); ++t) {
        std::vector<C> all;
        for (size_t h = 0; h < live.size(); ++h) {
            const std::vector<double> lp = full_log_probs(m, src, spec, live[h].ids);
            for (int v = 0; v < int(lp.size()); ++v)
                if (v != spec.pad_id) all.push_back({live[h].lp + lp[size_t(v)], int(h), v});
        }
        std::stable_sort(all.begin(), all.end(), [](const C& a, const C& b) { return a.lp > b.lp; });
        all.resize(std::min(all.size(), size_t(2 * B)));
        std::vector<H> next;
        for (size_t r = 0; r < all.size() && int(next.size()) < B; ++r) {
            H h = live[size_t(all[r].hyp)];
            if (all[r].id == spec.target_end_id) {
                if (int(r) < B) add(RefResult{h.ids, all[r].lp, ref_score(all[r].lp, h.ids.size() + 1, alpha), true});
            } else {
                h.ids.push_back(all[r].id);
                h.lp = all[r].lp;
                next.push_back(std::move(h));
            }
        }
        live = std::move(next);
        if (int(fin.size()) == B && !live.empty()) {
            double bound = -INFINITY;
            for (const H& h : live)
                bound = std::max(bound, ref_score(h.lp, exact_stop && alpha > 0 ? size_t(max_len) : h.ids.size() + 1,
                                                  alpha));
            done = bound <= fin.back().score;
        }
    }
    if (!done)
        for (const H& h : live) add(RefResult{h.ids, h.lp, ref_score(h.lp, h.ids.size(), alpha), false});
    return fin.front();
}

void expect_same(const DecodeResult& got, const RefResult& want, const std::string& what) {
    EXPECT_EQ(got.ids, want.ids) << what;
    EXPECT_EQ(got.finished, want.finished) << what;
    EXPECT_NEAR(got.log_prob, want.log_prob, 1e-4) << what;
    EXPECT_NEAR(got.score, want.score, 1e-4) << what;
}

// --- the KV cache ------------------------------------------------------------------------------------------------

class CachedDecoder : public ::testing::TestWithParam<int> {};

TEST_P(CachedDecoder, StepLogitsEqualFullRecompute) {
    ModelConfig c = tiny_config(11);
    if (GetParam() == 1) {  // pre-norm, learned positions, GQA, qk-norm (cross-attention keys normed too), untied
        c.norm_placement = NormPlacement::Pre;
        c.position = PositionKind::Learned;
        c.n_heads = 4;
        c.n_kv_heads = 2;
        c.qk_norm = true;
        c.tie_embeddings = false;
        c.activation = Activation::SwiGLU;
    }
    const Model m = scaled_model(c, 7 + uint64_t(GetParam()), 10.0f);
    const std::vector<int> src = random_ids(6, 0, c.vocab_size, 1);
    const std::vector<int> tgt = random_ids(9, 0, c.vocab_size, 2);
    const ForwardResult full = forward_seq2seq(m, src, tgt, ForwardOptions{});

    const MatrixRM memory = encode_source(m, src);
    KVCache cache;
    for (size_t t = 0; t < tgt.size(); ++t) {
        const MatrixRM step = decoder_step(m, memory, tgt[t], cache);
        ASSERT_EQ(step.rows(), 1);
        const MatrixRM want = full.logits.row(long(t));
        EXPECT_TRUE(test::allclose(step, want, 1e-5f, 1e-5f)) << "position " << t;
        EXPECT_EQ(cache.n_past, int(t) + 1);
    }
    // The memory's cross-attention keys/values were projected once and are kept per decoder layer.
    ASSERT_TRUE(cache.cross);
    EXPECT_EQ(cache.cross->S, 6);
    ASSERT_EQ(cache.cross->k.size(), size_t(c.n_layers));
    EXPECT_EQ(cache.cross->k[0].rows(), int64_t(c.n_kv_heads) * 6);
    // A copy shares them; a memory of another length is refused until reset().
    KVCache copy = cache;
    EXPECT_EQ(copy.cross.get(), cache.cross.get());
    const MatrixRM other = encode_source(m, random_ids(4, 0, c.vocab_size, 3));
    try {
        (void)decoder_step(m, other, 0, copy);
        ADD_FAILURE() << "a memory of another length should be refused";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("reset()"), std::string::npos) << e.what();
    }
    copy.reset();
    EXPECT_NO_THROW((void)decoder_step(m, other, 0, copy));
}

INSTANTIATE_TEST_SUITE_P(Configs, CachedDecoder, ::testing::Values(0, 1));

// With capture on, a cached step records the cross-attention of its one query over the whole memory (keys read
// back from KVCache::cross): equal to that row of the full forward's trace.
TEST(CachedDecoderTrace, CrossAttentionProbsMatchFullForward) {
    const ModelConfig c = tiny_config(11);
    const Model m = scaled_model(c, 4, 10.0f);
    const std::vector<int> src = random_ids(5, 0, c.vocab_size, 7);
    const std::vector<int> tgt = random_ids(3, 0, c.vocab_size, 8);
    ForwardOptions all;
    all.capture = CaptureFilter::all();
    const ForwardResult full = forward_seq2seq(m, src, tgt, all);
    const Tensor& want = full.trace->at("dec.1.cross_attn.probs");  // (H, 3, 5)

    const MatrixRM memory = encode_source(m, src);
    KVCache cache;
    (void)decoder_step(m, memory, tgt[0], cache);
    (void)decoder_step(m, memory, tgt[1], cache);
    Trace trace(CaptureFilter::all());
    MatrixRM x = full.trace->at("embed.out").mat().row(2);
    (void)decoder_stack_forward(m, x, &memory, all, trace, &cache, 2);
    const Tensor& got = trace.at("dec.1.cross_attn.probs");  // (H, 1, 5)
    ASSERT_EQ(got.shape, (std::vector<int64_t>{c.n_heads, 1, 5}));
    EXPECT_EQ(trace.at("dec.1.cross_attn.k").shape, (std::vector<int64_t>{c.n_kv_heads, 0, c.d_head()}));
    for (int h = 0; h < c.n_heads; ++h)
        EXPECT_TRUE(test::allclose(got.data.data() + h * 5, want.data.data() + (h * 3 + 2) * 5, 5, 1e-6f, 1e-5f))
            << "head " << h;
}

// --- search ------------------------------------------------------------------------------------------------------

TEST(Decode, GreedyEqualsNaiveArgmaxLoop) {
    const ModelConfig c = tiny_config(9);
    const Model m = scaled_model(c, 21, 10.0f);
    const TranslationSpec spec = tiny_spec();
    for (uint64_t seed = 0; seed < 4; ++seed) {
        const std::vector<int> src = random_ids(5, 2, c.vocab_size, 100 + seed);
        DecodeOptions opt;
        opt.max_len = 6;
        opt.top_k = 3;
        opt.length_penalty = 0.7f;
        const DecodeResult got = translate_ids(m, spec, src, opt);

        std::vector<int> ids;
        double lp_sum = 0;
        bool finished = false;
        for (int t = 0; t < opt.max_len && !finished; ++t) {
            const std::vector<double> lp = full_log_probs(m, src, spec, ids);
            int best = -1;
            for (int v = 0; v < c.vocab_size; ++v)
                if (v != spec.pad_id && (best < 0 || lp[size_t(v)] > lp[size_t(best)])) best = v;
            ASSERT_LT(size_t(t), got.steps.size()) << "seed " << seed;
            EXPECT_EQ(got.steps[size_t(t)].id, best);
            EXPECT_NEAR(got.steps[size_t(t)].prob, std::exp(lp[size_t(best)]), 1e-5);
            // top-k: the k most probable ids of the whole distribution, highest first
            std::vector<int> order(size_t(c.vocab_size));
            for (int v = 0; v < c.vocab_size; ++v) order[size_t(v)] = v;
            std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return lp[size_t(a)] > lp[size_t(b)]; });
            ASSERT_EQ(got.steps[size_t(t)].top.size(), 3u);
            for (size_t r = 0; r < 3; ++r) {
                EXPECT_EQ(got.steps[size_t(t)].top[r].first, order[r]);
                EXPECT_NEAR(got.steps[size_t(t)].top[r].second, std::exp(lp[size_t(order[r])]), 1e-5);
            }
            lp_sum += lp[size_t(best)];
            if (best == spec.target_end_id)
                finished = true;
            else
                ids.push_back(best);
        }
        EXPECT_EQ(got.ids, ids) << "seed " << seed;
        EXPECT_EQ(got.finished, finished);
        EXPECT_EQ(got.steps.size(), ids.size() + (finished ? 1 : 0));
        EXPECT_NEAR(got.log_prob, lp_sum, 1e-4);
        EXPECT_NEAR(got.score, ref_score(lp_sum, got.steps.size(), 0.7f), 1e-4);
    }
}

// With a beam wider than every candidate list, beam search keeps every hypothesis and must find the best of all
// targets up to max_len: compared with an exhaustive search over the (vocab - 1)^L sequences.
using WideParam = std::tuple<float, bool>;
class WideBeam : public ::testing::TestWithParam<WideParam> {};

TEST_P(WideBeam, EqualsExhaustiveSearch) {
    const auto [alpha, exact_stop] = GetParam();
    const ModelConfig c = tiny_config(7);  // 5 producible tokens + end + pad
    const Model m = search_model(c, 5, 8.0f, 0, 1.0f);
    const TranslationSpec spec = tiny_spec();
    std::set<std::pair<size_t, bool>> outcomes;  // (length, finished) of the results
    for (uint64_t seed = 0; seed < 6; ++seed) {
        const std::vector<int> src = random_ids(4, 2, c.vocab_size, 300 + seed);
        DecodeOptions opt;
        opt.beam = 400;  // > 6 * 5^3 / 2: every candidate of every step is kept
        opt.max_len = 4;
        opt.length_penalty = alpha;
        opt.exact_stop = exact_stop;
        const DecodeResult got = translate_ids(m, spec, src, opt);
        const RefResult want = exhaustive_search(m, src, spec, opt.max_len, alpha);
        expect_same(got, want, "seed " + std::to_string(seed) + " alpha " + std::to_string(alpha));
        outcomes.emplace(got.ids.size(), got.finished);
    }
    // The comparison has teeth only if the optimum is not always the same shape (e.g. the end token at once).
    if (alpha > 0 && alpha <= 1) {
        EXPECT_GE(outcomes.size(), 2u) << "every source gave a result of the same length";
    }
}

INSTANTIATE_TEST_SUITE_P(LengthPenalties, WideBeam,
                         ::testing::Combine(::testing::Values(0.0f, 0.6f, 1.0f, 2.0f, -0.5f),
                                            ::testing::Bool()));

// Narrow beams prune: compared with the naive beam search (full recompute, whole-vocabulary expansion).
using NarrowParam = std::tuple<int, float, bool, float>;
class NarrowBeam : public ::testing::TestWithParam<NarrowParam> {};

TEST_P(NarrowBeam, EqualsNaiveBeamSearch) {
    const auto [beam, alpha, exact_stop, end_logit] = GetParam();
    const ModelConfig c = tiny_config(8);
    const Model m = search_model(c, 9, 8.0f, 0, end_logit);
    const TranslationSpec spec = tiny_spec();
    for (uint64_t seed = 0; seed < 10; ++seed) {
        const std::vector<int> src = random_ids(5, 2, c.vocab_size, 500 + seed);
        DecodeOptions opt;
        opt.beam = beam;
        opt.max_len = 6;
        opt.length_penalty = alpha;
        opt.exact_stop = exact_stop;
        const DecodeResult got = translate_ids(m, spec, src, opt);
        const RefResult want = naive_beam_search(m, src, spec, beam, opt.max_len, alpha, exact_stop);
        expect_same(got, want, "seed " + std::to_string(seed));
        // The returned path's steps agree with its ids and log_prob.
        double lp = 0;
        for (const DecodeStep& s : got.steps) lp += std::log(double(s.prob));
        EXPECT_NEAR(lp, got.log_prob, 1e-4);
        ASSERT_EQ(got.steps.size(), got.ids.size() + (got.finished ? 1 : 0));
        for (size_t i = 0; i < got.ids.size(); ++i) EXPECT_EQ(got.steps[i].id, got.ids[i]);
        // The exact stop searches at least as long as the heuristic one, so it never returns a worse score.
        if (exact_stop) {
            opt.exact_stop = false;
            EXPECT_GE(got.score, translate_ids(m, spec, src, opt).score - 1e-9);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Widths, NarrowBeam,
                         ::testing::Combine(::testing::Values(2, 3, 5), ::testing::Values(0.0f, 1.0f, 1.5f),
                                            ::testing::Bool(), ::testing::Values(0.5f, 1.5f, 3.0f)));

// Guards the comparisons above against a degenerate model: on it, beam search must find better-scoring targets than
// greedy search for some sources (otherwise "equals the reference" could hold for a search that never searches).
TEST(Decode, BeamSearchBeatsGreedySomewhere) {
    const ModelConfig c = tiny_config(8);
    const Model m = search_model(c, 9, 8.0f, 0, 0.5f);
    const TranslationSpec spec = tiny_spec();
    int better = 0;
    for (uint64_t seed = 0; seed < 4; ++seed) {
        const std::vector<int> src = random_ids(5, 2, c.vocab_size, 500 + seed);
        DecodeOptions opt;
        opt.max_len = 6;
        const DecodeResult greedy = translate_ids(m, spec, src, opt);
        opt.beam = 3;
        const DecodeResult beam = translate_ids(m, spec, src, opt);
        EXPECT_GE(beam.score, greedy.score - 1e-9);
        better += beam.score > greedy.score + 1e-6;
    }
    EXPECT_GT(better, 0);
}

TEST(Decode, MaxLenIsRespected) {
    ModelConfig c = tiny_config(7);
    c.position = PositionKind::Learned;
    c.max_seq_len = 5;
    const Model m = scaled_model(c, 3, 6.0f);
    const std::vector<int> src = random_ids(4, 2, c.vocab_size, 1);
    int cut = 0;
    for (int end = 0; end < c.vocab_size; ++end) {  // each id as the end token: some are never produced
        TranslationSpec spec = tiny_spec();
        spec.target_end_id = end;
        spec.pad_id = end == 1 ? 2 : 1;
        for (const int beam : {1, 3}) {
            for (const int max_len : {1, 3, 100}) {
                DecodeOptions opt;
                opt.beam = beam;
                opt.max_len = max_len;
                const DecodeResult r = translate_ids(m, spec, src, opt);
                const size_t limit = size_t(std::min(max_len, c.max_seq_len));  // clamped to max_seq_len
                EXPECT_LE(r.steps.size(), limit) << "end " << end << " beam " << beam << " max_len " << max_len;
                if (!r.finished) {
                    EXPECT_EQ(r.ids.size(), limit);
                    ++cut;
                }
            }
        }
    }
    EXPECT_GT(cut, 0) << "no case ran into max_len: the test did not exercise it";
}

// --- errors --------------------------------------------------------------------------------------------------------

template <class E>
void expect_error(const std::function<void()>& f, const std::string& needle) {
    try {
        f();
        ADD_FAILURE() << "expected an error containing \"" << needle << "\"";
    } catch (const E& e) {
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
}

TEST(Decode, ErrorsAreClear) {
    const ModelConfig c = tiny_config(9);
    const Model m = scaled_model(c, 1, 1.0f);
    const TranslationSpec spec = tiny_spec();
    const DecodeOptions opt;
    expect_error<std::invalid_argument>([&] { (void)translate_ids(m, spec, {}, opt); }, "empty source");
    expect_error<std::invalid_argument>([&] { (void)translate_ids(m, spec, {3, 9, 0}, opt); },
                                        "source token id 9 at position 1 is outside [0, vocab_size = 9)");
    expect_error<std::invalid_argument>([&] { (void)translate_ids(m, spec, {3, -1}, opt); }, "id -1");
    DecodeOptions bad = opt;
    bad.beam = 0;
    expect_error<std::invalid_argument>([&] { (void)translate_ids(m, spec, {3, 0}, bad); }, "beam must be >= 1");
    bad = opt;
    bad.max_len = 0;
    expect_error<std::invalid_argument>([&] { (void)translate_ids(m, spec, {3, 0}, bad); }, "max_len must be >= 1");
    TranslationSpec bad_spec = spec;
    bad_spec.target_end_id = 40;
    expect_error<std::invalid_argument>([&] { (void)translate_ids(m, bad_spec, {3, 0}, opt); }, "target_end id 40");

    ModelConfig dec = c;
    dec.arch = Arch::DecoderOnly;
    dec.n_enc_layers = 0;
    const Model gpt = scaled_model(dec, 1, 1.0f);
    expect_error<std::invalid_argument>([&] { (void)translate_ids(gpt, spec, {3, 0}, opt); }, "not encoder_decoder");
    expect_error<std::invalid_argument>([&] { (void)encode_source(m, {}); }, "empty source");
}

// --- languages and translation.json ------------------------------------------------------------------------------

TEST(Decode, GuessTargetLanguage) {
    EXPECT_EQ(guess_target_language("Open the file"), "zh");
    EXPECT_EQ(guess_target_language(""), "zh");
    EXPECT_EQ(guess_target_language("打开文件"), "en");
    EXPECT_EQ(guess_target_language("Save as PDF（导出）"), "en");
    EXPECT_EQ(guess_target_language("ok\xEF\xBC\x8C"), "en");    // U+FF0C full-width comma
    EXPECT_EQ(guess_target_language("caf\xC3\xA9 na\xC3\xAFve"), "zh");  // Latin-1 letters are not CJK
    EXPECT_EQ(guess_target_language("\xE6\x89"), "zh");             // a truncated ideograph counts as nothing
    EXPECT_EQ(guess_target_language("\xFF\xFE abc"), "zh");         // invalid bytes are skipped
    EXPECT_EQ(guess_target_language("x \xF0\xA0\x80\x80"), "en");   // U+20000 (Extension B)
}

TEST(Decode, MakeSourceIds) {
    TranslationSpec both;
    both.direction = "both";
    both.source_end_id = 0;
    both.target_language_ids = {{"en", 3}, {"zh", 4}};
    EXPECT_EQ(make_source_ids(both, {10, 11}, "zh"), (std::vector<int>{4, 10, 11, 0}));
    EXPECT_EQ(make_source_ids(both, {10}, "en"), (std::vector<int>{3, 10, 0}));
    expect_error<std::invalid_argument>([&] { (void)make_source_ids(both, {10}, ""); }, "translates into en or zh");
    expect_error<std::invalid_argument>([&] { (void)make_source_ids(both, {10}, "fr"); }, "not 'fr'");
    TranslationSpec en_zh = both;
    en_zh.direction = "en-zh";
    EXPECT_EQ(make_source_ids(en_zh, {10, 11}, "zh"), (std::vector<int>{10, 11, 0}));
    EXPECT_EQ(make_source_ids(en_zh, {10, 11}, ""), (std::vector<int>{10, 11, 0}));
    expect_error<std::invalid_argument>([&] { (void)make_source_ids(en_zh, {10}, "en"); },
                                        "(en-zh) translates into zh, not 'en'");
    EXPECT_EQ(target_languages(en_zh), (std::vector<std::string>{"zh"}));
}

Tokenizer tiny_tokenizer() {
    std::vector<std::string> vocab;
    for (int b = 0; b < 256; ++b) vocab.emplace_back(1, char(b));
    std::vector<AddedToken> added;
    int32_t id = 256;
    for (const char* s : {"<|endoftext|>", "<pad>", "<2en>", "<2zh>"}) added.push_back({id++, s, true});
    return Tokenizer(vocab, {}, added);
}

void write_file(const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
}

TEST(Decode, LoadTranslationSpec) {
    const Tokenizer tok = tiny_tokenizer();
    test::TempDir dir("ts_translation_spec");
    const std::string good =
        R"({"format":"ts-translation-1","direction":"both","source_end":"<|endoftext|>",)"
        R"("decoder_start":"<|endoftext|>","target_end":"<|endoftext|>","pad":"<pad>",)"
        R"("target_language_tokens":{"en":"<2en>","zh":"<2zh>"}})";
    write_file(dir.path / "translation.json", good);
    const TranslationSpec s = load_translation_spec(dir.path, tok);
    EXPECT_EQ(s.direction, "both");
    EXPECT_EQ(s.source_end_id, 256);
    EXPECT_EQ(s.decoder_start_id, 256);
    EXPECT_EQ(s.target_end_id, 256);
    EXPECT_EQ(s.pad_id, 257);
    EXPECT_EQ(s.target_language_ids.at("en"), 258);
    EXPECT_EQ(s.target_language_ids.at("zh"), 259);

    const auto expect_bad = [&](const std::string& text, const std::string& needle) {
        write_file(dir.path / "translation.json", text);
        expect_error<std::runtime_error>([&] { (void)load_translation_spec(dir.path, tok); }, needle);
    };
    expect_bad("{not json", "translation.json");
    expect_bad(R"({"format":"ts-translation-9"})", "unknown format \"ts-translation-9\"");
    expect_bad(R"({"format":"ts-translation-1","direction":"fr-en"})", "\"direction\": expected");
    std::string no_pad = good;
    no_pad.replace(no_pad.find("\"pad\":\"<pad>\","), 14, "");
    expect_bad(no_pad, "missing key \"pad\"");
    std::string unknown = good;
    unknown.replace(unknown.find("<2zh>"), 5, "<2fr>");
    expect_bad(unknown, "\"target_language_tokens.zh\": token \"<2fr>\" is not in the model's tokenizer");
    std::string one_way = R"({"format":"ts-translation-1","direction":"zh-en","source_end":"<|endoftext|>",)"
                          R"("decoder_start":"<|endoftext|>","target_end":"<|endoftext|>","pad":"<pad>"})";
    write_file(dir.path / "translation.json", one_way);
    EXPECT_TRUE(load_translation_spec(dir.path, tok).target_language_ids.empty());
    EXPECT_TRUE(load_translation_spec(dir.path, tok).trained_on.empty());
    // The optional one-line statement of what the model was trained on, per interface language.
    std::string trained = good;
    trained.insert(trained.size() - 1, R"(,"trained_on":{"en":"software strings","zh":"软件界面文字"})");
    write_file(dir.path / "translation.json", trained);
    const TranslationSpec t = load_translation_spec(dir.path, tok);
    EXPECT_EQ(t.trained_on.at("en"), "software strings");
    EXPECT_EQ(t.trained_on.at("zh"), "软件界面文字");
    std::string bad_trained = good;
    bad_trained.insert(bad_trained.size() - 1, R"(,"trained_on":{"en":3})");
    expect_bad(bad_trained, "\"trained_on.en\": expected a string, found number");
    bad_trained = good;
    bad_trained.insert(bad_trained.size() - 1, R"(,"trained_on":{"en":"two\nlines"})");
    expect_bad(bad_trained, "\"trained_on.en\": expected one line");
    bad_trained = good;
    bad_trained.insert(bad_trained.size() - 1, R"(,"trained_on":"everything")");
    expect_bad(bad_trained, "\"trained_on\": expected an object");
    std::filesystem::remove(dir.path / "translation.json");
    expect_error<std::runtime_error>([&] { (void)load_translation_spec(dir.path, tok); }, "cannot open");
}

}  // namespace
}  // namespace ts
