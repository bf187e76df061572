// BPE training: hand-computed first merges, agreement with a naive recount-everything trainer, determinism,
// tokenizer.json round trip, stopping rules and option validation.
#include "tests/tokenizer/tokenizer_test_util.h"

#include "core/tokenizer/byte_level.h"

#include <map>

namespace ts {
namespace {

using Pair = std::pair<std::string, std::string>;

std::vector<Pair> merge_strings(const Tokenizer& tok) {
    std::vector<Pair> out;
    for (const MergeRule& m : tok.merges()) out.emplace_back(tok.token_bytes(m.left), tok.token_bytes(m.right));
    return out;
}

// Sennrich et al.'s example. Words after GPT-2 pre-tokenization: "low" x1, " low" x4, " lower" x2, " newest" x6,
// " widest" x3. By hand: (e,s)=9 and (s,t)=9 tie -> "e" < "s" wins; then (es,t)=9; then (l,o)=7 and (o,w)=7 tie
// -> (l,o); then (lo,w)=7; then five pairs at 6: (" ",low) (" ",n) (n,e) (e,w) (w,est): " " sorts first and
// "low" < "n"; then (" ",n); then (" n",e) since " n" < "e" < "w"; then (" ne",w); then (" new",est).
TEST(BpeTrain, FirstMergesMatchHandComputation) {
    BpeTrainOptions opt;
    opt.vocab_size = 256 + 9 + 1;
    BpeTrainer trainer(opt);
    trainer.add_text("low low low low low lower lower newest newest newest newest newest newest widest widest widest");
    EXPECT_EQ(trainer.total_words(), 16u);
    EXPECT_EQ(trainer.unique_words(), 5u);
    const auto tok = trainer.train();
    const std::vector<Pair> expected{{"e", "s"},   {"es", "t"}, {"l", "o"},    {"lo", "w"},  {" ", "low"},
                                     {" ", "n"},   {" n", "e"}, {" ne", "w"},  {" new", "est"}};
    EXPECT_EQ(merge_strings(*tok), expected);
    // id layout: bytes 0..255 in GPT-2 order ("!" is 0), merges from 256, special token last
    EXPECT_EQ(tok->token_bytes(0), "!");
    EXPECT_EQ(tok->token_bytes(256), "es");
    EXPECT_EQ(tok->token_id("<|endoftext|>"), std::optional<int32_t>(265));
    EXPECT_EQ(tok->vocab_size(), 266u);
    EXPECT_EQ(tok->encode_ids(" newest lowest"),
              (std::vector<int32_t>{*tok->token_id(" newest"), *tok->token_id(" low"), *tok->token_id("est")}));
}

TEST(BpeTrain, MergeStepsFollowRankOrder) {
    BpeTrainOptions opt;
    opt.vocab_size = 256 + 9 + 1;
    BpeTrainer trainer(opt);
    trainer.add_text("low low low low low lower lower newest newest newest newest newest newest widest widest widest");
    const auto tok = trainer.train();
    using P = std::vector<std::string>;
    // ranks: es 0, est 1, lo 2, low 3, " low" 4, " n" 5, " ne" 6, " new" 7, " newest" 8
    const std::vector<P> expected{{" ", "n", "e", "w", "e", "s", "t"}, {" ", "n", "e", "w", "es", "t"},
                                  {" ", "n", "e", "w", "est"},         {" n", "e", "w", "est"},
                                  {" ne", "w", "est"},                 {" new", "est"},
                                  {" newest"}};
    EXPECT_EQ(tok->merge_steps(" newest"), expected);
    EXPECT_EQ(tok->merge_steps("xy"), (std::vector<P>{{"x", "y"}}));  // no merge applies
    EXPECT_EQ(tok->merge_steps(""), (std::vector<P>{{}}));
}

TEST(BpeTrain, SpecialTokensAreCutOutOfTheCorpus) {
    BpeTrainOptions opt;
    opt.vocab_size = 300;
    BpeTrainer trainer(opt);
    trainer.add_text("<|endoftext|><|endoftext|><|endoftext|>ab<|endoftext|>ab");
    EXPECT_EQ(trainer.total_words(), 2u);  // "ab" twice; the special token never reaches the counts
    const auto tok = trainer.train();
    EXPECT_EQ(merge_strings(*tok), (std::vector<Pair>{{"a", "b"}}));  // min_frequency 2 stops after one merge
    EXPECT_EQ(tok->vocab_size(), 258u);
}

// Reference: recount every pair of every word at every step (slow, obviously right).
std::vector<Pair> naive_train(const std::string& text, size_t n_merges) {
    std::map<std::string, int64_t> counts;
    std::vector<ByteSpan> spans;
    PreTokenizer().split(text, spans);
    for (const auto& [b, e] : spans) ++counts[text.substr(b, e - b)];
    std::vector<std::pair<std::vector<std::string>, int64_t>> words;
    for (const auto& [w, c] : counts) {
        std::vector<std::string> syms;
        for (char ch : w) syms.emplace_back(1, ch);
        words.emplace_back(syms, c);
    }
    std::vector<Pair> merges;
    while (merges.size() < n_merges) {
        std::map<Pair, int64_t> pc;
        for (const auto& [syms, c] : words)
            for (size_t i = 0; i + 1 < syms.size(); ++i) pc[{syms[i], syms[i + 1]}] += c;
        const Pair* best = nullptr;
        int64_t best_c = 0;
        for (const auto& [p, c] : pc)  // map order is lexicographic, so the first maximum wins ties
            if (c > best_c) { best = &p; best_c = c; }
        if (!best || best_c < 2) break;
        const Pair m = *best;
        merges.push_back(m);
        for (auto& [syms, c] : words) {
            std::vector<std::string> out;
            for (size_t i = 0; i < syms.size(); ++i) {
                if (i + 1 < syms.size() && syms[i] == m.first && syms[i + 1] == m.second) {
                    out.push_back(m.first + m.second);
                    ++i;
                } else {
                    out.push_back(syms[i]);
                }
            }
            syms = std::move(out);
        }
    }
    return merges;
}

TEST(BpeTrain, IncrementalCountsAgreeWithNaiveRecount) {
    const std::string text = test::license_text().substr(0, 60000);
    const size_t n_merges = 300;
    BpeTrainOptions opt;
    opt.vocab_size = int32_t(256 + n_merges + 1);
    BpeTrainer trainer(opt);
    trainer.add_text(text);
    const auto tok = trainer.train();
    const auto expected = naive_train(text, n_merges);
    ASSERT_EQ(tok->merges().size(), expected.size());
    const auto got = merge_strings(*tok);
    for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], expected[i]) << "merge #" << i << ": '" << bytes_to_byte_level(got[i].first) << "' + '"
                                       << bytes_to_byte_level(got[i].second) << "' vs naive '"
                                       << bytes_to_byte_level(expected[i].first) << "' + '"
                                       << bytes_to_byte_level(expected[i].second) << "'";
}

TEST(BpeTrain, DeterministicAndRoundTripsThroughTokenizerJson) {
    const auto a = test::small_trained_tokenizer();
    BpeTrainOptions opt;
    opt.vocab_size = 1000;
    BpeTrainer trainer(opt);
    trainer.add_text(test::license_text());
    const auto b = trainer.train();
    EXPECT_EQ(a->vocab(), b->vocab());
    EXPECT_EQ(a->merges(), b->merges());
    EXPECT_EQ(tokenizer_to_json(*a), tokenizer_to_json(*b));

    const std::string json = tokenizer_to_json(*a);
    const auto back = parse_tokenizer_json(json, "roundtrip.json");
    EXPECT_EQ(back->vocab(), a->vocab());
    EXPECT_EQ(back->merges(), a->merges());
    EXPECT_EQ(back->added_tokens(), a->added_tokens());
    EXPECT_EQ(back->patterns(), a->patterns());
    EXPECT_EQ(tokenizer_to_json(*back), json);
    const std::string text = test::license_text().substr(1000, 5000);
    EXPECT_EQ(back->encode_ids(text), a->encode_ids(text));

    // the file is what Hugging Face's loader expects
    const auto j = nlohmann::json::parse(json);
    EXPECT_EQ(j["model"]["type"], "BPE");
    EXPECT_EQ(j["pre_tokenizer"]["type"], "ByteLevel");
    EXPECT_EQ(j["decoder"]["type"], "ByteLevel");
    EXPECT_EQ(j["added_tokens"][0]["content"], "<|endoftext|>");
    EXPECT_EQ(j["added_tokens"][0]["id"], 999);
    EXPECT_EQ(j["model"]["vocab"]["<|endoftext|>"], 999);
    EXPECT_EQ(j["model"]["vocab"].size(), 1000u);
    EXPECT_TRUE(j["model"]["merges"][0].is_string());
}

TEST(BpeTrain, CustomPatternsRoundTrip) {
    BpeTrainOptions opt;
    opt.vocab_size = 400;
    opt.patterns = {R"(\p{N}{1,3}| ?\p{L}+|\s+|[^\s\p{L}\p{N}]+)"};
    opt.special_tokens = {"<|endoftext|>", "<|pad|>"};
    BpeTrainer trainer(opt);
    trainer.add_text(test::license_text().substr(0, 30000));
    const auto tok = trainer.train();
    const auto back = parse_tokenizer_json(tokenizer_to_json(*tok));
    EXPECT_EQ(back->patterns(), opt.patterns);
    EXPECT_EQ(back->added_tokens(), tok->added_tokens());
    EXPECT_EQ(back->merges(), tok->merges());
}

TEST(BpeTrain, ProgressIsReported) {
    BpeTrainOptions opt;
    opt.vocab_size = 600;
    opt.progress_every = 100;
    std::vector<size_t> seen;
    opt.on_progress = [&](const BpeTrainProgress& p) { seen.push_back(p.merges_done); };
    BpeTrainer trainer(opt);
    trainer.add_text(test::license_text());
    const auto tok = trainer.train();
    ASSERT_GE(seen.size(), 3u);
    EXPECT_EQ(seen[0], 100u);
    EXPECT_EQ(seen.back(), tok->merges().size());
}

TEST(BpeTrain, RejectsBadOptions) {
    BpeTrainOptions opt;
    opt.vocab_size = 256;  // no room for <|endoftext|>
    EXPECT_THROW(BpeTrainer{opt}, std::invalid_argument);
    opt.vocab_size = 300;
    opt.special_tokens = {"<a>", "<a>"};
    EXPECT_THROW(BpeTrainer{opt}, std::invalid_argument);
    opt.special_tokens = {""};
    EXPECT_THROW(BpeTrainer{opt}, std::invalid_argument);
}

}  // namespace
}  // namespace ts
