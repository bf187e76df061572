// Greedy and beam search (ts::translate_ids) against Hugging Face's own generate() on tiny encoder–decoder checkpoints
// of four families (tests/golden/hf_gen_{bart,t5,t5_v11,marian}; tests/golden/hf_generate.json, both written by
// tests/reference/hf_generate_reference.py with transformers 4.42.3 on torch 1.13): the same target ids for five
// sources each, with num_beams 1 and 4, length_penalty 1, early_stopping False, max_new_tokens 10, padding never
// produced; and for beam search HF's sequences_scores equals our score (log p / length).
#include "core/forward/decode.h"
#include "core/formats/hf_checkpoint.h"
#include "tests/test_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>

namespace ts {
namespace {

TEST(HfGenerate, GreedyAndBeamSearchGiveTransformersIds) {
    std::ifstream f(test::golden_path("hf_generate.json"));
    ASSERT_TRUE(f) << "tests/golden/hf_generate.json";
    const nlohmann::json j = nlohmann::json::parse(f);
    ASSERT_EQ(j.at("length_penalty").get<double>(), 1.0);
    std::map<std::string, std::shared_ptr<const Model>> models;
    std::map<std::string, TranslationSpec> specs;
    int checked = 0, finished = 0, beam_differs = 0;
    for (const auto& c : j.at("cases")) {
        const std::string name = c.at("fixture").get<std::string>();
        const std::string folder = test::golden_path("hf_gen_" + name.substr(3));  // hf_bart -> hf_gen_bart
        if (!models.count(name)) {
            models[name] = load_hf_model(folder);
            specs[name] = hf_translation_spec(folder);
        }
        DecodeOptions opt;
        opt.beam = c.at("beam").get<int>();
        opt.max_len = j.at("max_new_tokens").get<int>();
        opt.length_penalty = 1.0f;
        const std::vector<int> src = c.at("src").get<std::vector<int>>();
        const DecodeResult r = translate_ids(*models[name], specs[name], src, opt);
        const std::vector<int> want = c.at("ids").get<std::vector<int>>();
        EXPECT_EQ(r.ids, want) << name << " beam " << opt.beam << " source of " << src.size() << " ids";
        EXPECT_EQ(r.finished, c.at("finished").get<bool>()) << name << " beam " << opt.beam;
        if (opt.beam > 1) {
            EXPECT_NEAR(r.score, c.at("score").get<double>(), 1e-4) << name;
            // The greedy case of the same source comes just before it.
            const DecodeResult g = translate_ids(*models[name], specs[name], src, DecodeOptions{1, 1.0f, opt.max_len});
            beam_differs += g.ids != r.ids;
        }
        finished += r.finished;
        ++checked;
    }
    EXPECT_EQ(checked, 40);
    EXPECT_GE(finished, 2);      // the cases reach the end token as well as the length limit
    EXPECT_GE(beam_differs, 5);  // beam search is not greedy search in disguise here
}

}  // namespace
}  // namespace ts
