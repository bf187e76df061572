// Translation models in the app's session layer: the source text becomes the encoder input with the translation
// model's language and end tokens, the target text the teacher-forced decoder input; the three attention sources
// label their rows and columns with the right sequence; Translate decodes and traces the decoded target; example
// pairs load from examples.tsv.
#include "app/figures/figures.h"
#include "app/figures/views.h"
#include "app/session/seq2seq.h"
#include "app/session/text_codec.h"
#include "app/session/worker.h"
#include "tests/app/tiny_models.h"
#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>

namespace {

using namespace ts;
using namespace ts::figures;
using namespace ts::studio;

// A byte-vocabulary encoder–decoder with four extra ids for the pair format: 256 end/start, 257 pad, 258 <2en>,
// 259 <2zh>. Random weights: only shapes and bookkeeping are checked here (decoding itself: tests/core/decode_test).
LoadedModel tiny_translation_model() {
    LoadedModel lm = test::tiny_encdec_model("tiny-translation", 260, 24, 11);
    auto spec = std::make_shared<TranslationSpec>();
    spec->direction = "both";
    spec->decoder_start_id = spec->source_end_id = spec->target_end_id = 256;
    spec->pad_id = 257;
    spec->target_language_ids = {{"en", 258}, {"zh", 259}};
    lm.translation = spec;
    return lm;
}

TEST(TranslationApp, SourceAndTargetAreBuiltAsTrainingFedThem) {
    const LoadedModel lm = tiny_translation_model();
    const Seq2SeqTokens io = make_seq2seq_tokens(lm, "cat", "猫", "auto");
    EXPECT_EQ(io.to, "zh");  // no CJK in the source: into Chinese
    ASSERT_TRUE(io.source && io.target);
    EXPECT_EQ(io.source->ids, (std::vector<int>{259, 'c', 'a', 't', 256}));
    ASSERT_EQ(io.target->ids.size(), 1u + 3u);  // start + the three UTF-8 bytes of 猫
    EXPECT_EQ(io.target->ids.front(), 256);
    // Special tokens have empty spans at the ends of their text; the others tile it.
    EXPECT_EQ(io.source->pieces.front().byte_begin, io.source->pieces.front().byte_end);
    EXPECT_EQ(io.source->pieces.back().byte_begin, 3u);
    EXPECT_EQ(io.source->pieces.back().byte_end, 3u);
    EXPECT_EQ(io.source->pieces[1].byte_begin, 0u);
    EXPECT_EQ(io.source->pieces[1].byte_end, 1u);

    EXPECT_EQ(make_seq2seq_tokens(lm, "猫", "", "auto").to, "en");
    EXPECT_EQ(make_seq2seq_tokens(lm, "猫", "", "zh").source->ids.front(), 259);  // the user's choice wins
    // An empty source runs nothing (no decoder input either).
    EXPECT_TRUE(make_seq2seq_tokens(lm, "", "x", "auto").target->ids.empty());
    // Long sides are cut to max_seq_len with a notice; the special tokens stay.
    const Seq2SeqTokens lng = make_seq2seq_tokens(lm, std::string(40, 'a'), std::string(40, 'b'), "en");
    EXPECT_EQ(lng.source->ids.size(), 24u);
    EXPECT_EQ(lng.source->ids.back(), 256);
    EXPECT_EQ(lng.target->ids.size(), 24u);
    EXPECT_FALSE(lng.source->notices.empty());
}

TEST(TranslationApp, AttentionSourcesLabelRowsAndColumnsWithTheirSequence) {
    const LoadedModel lm = tiny_translation_model();
    UiState st;
    st.text = "dog";
    st.target_text = "ab";
    st.translate_to = "zh";
    const auto snap = run_forward_now(st, lm);
    ASSERT_TRUE(snap->error.empty()) << snap->error;
    ASSERT_TRUE(snap->source_tokens);
    const int S = 5, T = 3;  // <2zh> d o g <end>;  <start> a b
    ASSERT_EQ(int(snap->source_tokens->ids.size()), S);
    ASSERT_EQ(int(snap->tokens->ids.size()), T);
    const Tensor* cross = snap->find("dec.1.cross_attn.probs");
    ASSERT_NE(cross, nullptr);
    EXPECT_EQ(cross->dim(1), T);
    EXPECT_EQ(cross->dim(2), S);
    EXPECT_EQ(snap->logits.rows(), T);  // the decoder predicts the next target token at every target position

    struct Case {
        AttnSource source;
        int rows, cols;
        std::string first_row, first_col;
    };
    const std::string lang = lm.codec->label(259), start = lm.codec->label(256);
    for (const Case& c : {Case{AttnSource::Cross, T, S, start, lang}, Case{AttnSource::Encoder, S, S, lang, lang},
                          Case{AttnSource::Decoder, T, T, start, start}}) {
        st.attn_source = c.source;
        const plot::Figure f = attention_head_figure(*snap, 1, 2, st);
        ASSERT_TRUE(f.heatmap) << name_of(c.source);
        EXPECT_EQ(f.heatmap->rows, c.rows) << name_of(c.source);
        EXPECT_EQ(f.heatmap->cols, c.cols) << name_of(c.source);
        ASSERT_EQ(int(f.y.categories.size()), c.rows) << name_of(c.source);
        ASSERT_EQ(int(f.x.categories.size()), c.cols) << name_of(c.source);
        EXPECT_EQ(f.y.categories.front(), c.first_row) << name_of(c.source);
        EXPECT_EQ(f.x.categories.front(), c.first_col) << name_of(c.source);
        const auto layer = attention_head_grid(*snap, 0, false, c.source);
        ASSERT_FALSE(layer.empty());
        EXPECT_EQ(int(layer[0].x.categories.size()), c.cols) << name_of(c.source);
        const auto steps = attention_step_figures(*snap, 0, 0, c.source);
        EXPECT_EQ(int(steps[3].x.categories.size()), c.cols) << name_of(c.source);
        EXPECT_EQ(int(steps[3].y.categories.size()), c.rows) << name_of(c.source);
    }
    // The tokens view shows the source.
    const plot::Figure tf = tokens_figure(*snap, true);
    EXPECT_EQ(int(tf.x.categories.size()), S);
    EXPECT_NE(tf.title.find("source"), std::string::npos);
}

TEST(TranslationApp, TranslateDecodesThenTracesTheDecodedTarget) {
    const LoadedModel lm = tiny_translation_model();
    UiState st;
    st.text = "hello";
    st.translate_to = "zh";
    st.decode_beam = 2;
    const auto snap = run_forward_now(st, lm, true);
    ASSERT_TRUE(snap->error.empty()) << snap->error;
    ASSERT_TRUE(snap->translation);
    const DecodeResult& d = *snap->translation;
    // The same decode as core's, on the same encoder input.
    DecodeOptions opt;
    opt.beam = 2;
    opt.max_len = 23;  // the app keeps <start> + the decoded ids within max_seq_len (24)
    const DecodeResult direct =
        translate_ids(*lm.model, *lm.translation, make_seq2seq_tokens(lm, st.text, "", "zh").source->ids, opt);
    EXPECT_EQ(d.ids, direct.ids);
    EXPECT_DOUBLE_EQ(d.log_prob, direct.log_prob);
    ASSERT_EQ(snap->tokens->ids.size(), d.ids.size() + 1);
    EXPECT_EQ(snap->tokens->ids.front(), 256);
    const Tensor* cross = snap->find("dec.0.cross_attn.probs");
    ASSERT_NE(cross, nullptr);
    EXPECT_EQ(cross->dim(1), int64_t(d.ids.size() + 1));
    EXPECT_EQ(cross->dim(2), int64_t(snap->source_tokens->ids.size()));
    EXPECT_LE(snap->tokens->ids.size(), 24u);
    // Decoded text = the bytes of the decoded ids.
    EXPECT_EQ(snap->tokens->text, lm.codec->decode(d.ids));

    // A model without translation.json cannot translate.
    LoadedModel plain = lm;
    plain.translation.reset();
    EXPECT_THROW((void)run_forward_now(st, plain, true), std::runtime_error);
}

TEST(TranslationApp, ExamplePairsSkipMalformedLines) {
    ts::test::TempDir dir("translation_examples");
    {
        std::ofstream f(dir.path / "examples.tsv", std::ios::binary);
        f << "Open file\t打开文件\r\nno tab here\nfour\tfields\tare\ttoo many\n\t空\nSave\t保存\n"
          << "It rains.\t下雨了。\teveryday\n";
    }
    const auto pairs = read_example_pairs(dir.path);
    ASSERT_EQ(pairs.size(), 3u);
    EXPECT_EQ(pairs[0].en, "Open file");
    EXPECT_EQ(pairs[0].zh, "打开文件");
    EXPECT_EQ(pairs[0].domain, "");
    EXPECT_EQ(pairs[1].zh, "保存");
    EXPECT_EQ(pairs[2].zh, "下雨了。");  // a third column names the domain the picker groups by
    EXPECT_EQ(pairs[2].domain, "everyday");
    EXPECT_TRUE(read_example_pairs(dir.path / "missing").empty());
}

}  // namespace

namespace {

// Hugging Face encoder–decoder folders (tests/golden/hf_bart, hf_t5: no translation.json, no tokenizer) open with a
// source/target spec derived from config.json: BART wraps the source in <s> … </s> and starts the decoder with </s>;
// teacher forcing, the three attention sources and Translate all run (ids-only byte codec, random weights).
TEST(TranslationApp, HuggingFaceEncoderDecoderFoldersGetASourceTargetPath) {
    const LoadedModel bart = load_model_folder(test::golden_path("hf_bart"), {});
    ASSERT_TRUE(bart.translation) << bart.translation_warning;
    EXPECT_EQ(bart.translation->direction, "model");
    const Seq2SeqTokens io = make_seq2seq_tokens(bart, "ab", "c", "auto");
    ASSERT_TRUE(io.source && io.target);
    EXPECT_EQ(io.source->ids, (std::vector<int>{0, 'a', 'b', 2}));  // bos, text, eos
    EXPECT_EQ(io.target->ids, (std::vector<int>{2, 'c'}));          // decoder_start_token_id = eos
    EXPECT_EQ(io.to, "");

    UiState st;
    st.text = "ab";
    st.target_text = "c";
    const auto snap = run_forward_now(st, bart);
    ASSERT_TRUE(snap->error.empty()) << snap->error;
    const Tensor* cross = snap->find("dec.0.cross_attn.probs");
    ASSERT_NE(cross, nullptr);
    EXPECT_EQ(cross->dim(1), 2);
    EXPECT_EQ(cross->dim(2), 4);

    const LoadedModel t5 = load_model_folder(test::golden_path("hf_t5"), {});
    ASSERT_TRUE(t5.translation) << t5.translation_warning;
    st.target_text.clear();
    const auto tr = run_forward_now(st, t5, true);
    ASSERT_TRUE(tr->error.empty()) << tr->error;
    ASSERT_TRUE(tr->translation);
    EXPECT_EQ(tr->tokens->ids.front(), 0);  // T5 starts the decoder with pad
    ASSERT_NE(tr->find("dec.0.attn.position_bias"), nullptr);
}

}  // namespace
