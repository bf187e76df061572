// Marian folders (source.spm + target.spm + one vocab.json): the app encodes a typed target and decodes the translated
// target with the target side's tokenizer, not the source's (app/session/text_codec.h load_target_codec_for_model_dir).
#include "app/session/text_codec.h"
#include "tests/test_util.h"
#include "tests/tokenizer/tokenizer_test_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <fstream>
#include <set>

namespace ts::studio {
namespace {

// A tiny SentencePiece BPE model (serialized ModelProto) trained on `text`.
std::string train_spm(const std::string& text, int vocab_size) {
    test::TempDir dir("ts_marian_codec_train");
    const std::string corpus = (dir.path / "corpus.txt").string();
    std::ofstream(corpus, std::ios::binary) << text;
    std::string proto;
    const auto st = sentencepiece::SentencePieceTrainer::Train(
        {{"input", corpus}, {"model_type", "bpe"}, {"vocab_size", std::to_string(vocab_size)},
         {"character_coverage", "1.0"}, {"hard_vocab_limit", "false"}, {"minloglevel", "2"}, {"num_threads", "1"}},
        nullptr, &proto);
    if (!st.ok()) throw std::runtime_error("sentencepiece training failed: " + std::string(st.message()));
    return proto;
}

TEST(MarianCodec, TargetSideHasItsOwnTokenizer) {
    std::string zh;
    for (int i = 0; i < 200; ++i) zh += "设置静态主机名。打开文件并保存当前文档。删除所选的辅助线。\n";
    const std::string en = test::license_text();
    const std::string src_proto = train_spm(zh, 60), tgt_proto = train_spm(en, 300);
    test::TempDir dir("ts_marian_codec");
    std::ofstream(dir.path / "source.spm", std::ios::binary) << src_proto;
    std::ofstream(dir.path / "target.spm", std::ios::binary) << tgt_proto;
    // One shared vocabulary: </s> 0, <unk> 1, <pad> 2, then the pieces of both models.
    nlohmann::json vocab = {{"</s>", 0}, {"<unk>", 1}, {"<pad>", 2}};
    int next = 3;
    for (const std::string* proto : {&src_proto, &tgt_proto}) {
        sentencepiece::SentencePieceProcessor sp;
        ASSERT_TRUE(sp.LoadFromSerializedProto(*proto).ok());
        for (int i = 0; i < sp.GetPieceSize(); ++i)
            if (!sp.IsControl(i) && !sp.IsUnknown(i) && !vocab.contains(sp.IdToPiece(i))) vocab[sp.IdToPiece(i)] = next++;
    }
    std::ofstream(dir.path / "vocab.json") << vocab.dump();

    const auto source = load_codec_for_model_dir(dir.path);
    const auto target = load_target_codec_for_model_dir(dir.path);
    ASSERT_TRUE(source);
    ASSERT_TRUE(target) << "a Marian folder has a target-side codec";
    const std::string text = "Permission is hereby granted";
    std::vector<int> src_ids, tgt_ids;
    std::vector<std::pair<size_t, size_t>> spans;
    source->encode(text, src_ids, spans, false);
    target->encode(text, tgt_ids, spans, false);
    // English through the Chinese source model has no pieces for Latin letters (<unk>, id 1) and cannot come back;
    // the target model gives it back exactly.
    EXPECT_EQ(std::set<int>(src_ids.begin(), src_ids.end()).count(1), 1u) << "the source side knows no English";
    EXPECT_NE(source->decode(src_ids), text);
    EXPECT_EQ(std::set<int>(tgt_ids.begin(), tgt_ids.end()).count(1), 0u) << "no <unk> on the target side";
    EXPECT_EQ(target->decode(tgt_ids), text);

    // A folder with one tokenizer has no separate target codec.
    test::TempDir single("ts_marian_codec_single");
    std::ofstream(single.path / "tokenizer.model", std::ios::binary) << tgt_proto;
    EXPECT_FALSE(load_target_codec_for_model_dir(single.path));
}

}  // namespace
}  // namespace ts::studio
