// GGUF files against llama.cpp itself: logits of every position (tests/reference/llama_cpp_reference.c through the
// prebuilt libllama from npm, F32 KV cache, flash attention off) and llama_tokenize's ids, made at test set-up by
// tests/reference/llama_cpp_reference.sh into <build>/testdata/llama_cpp. Skips loudly when npm was unreachable.
//
// Tolerances, from what llama.cpp computes:
//  - F32 weights, and a quantized file against llama.cpp on its dequantized F32 twin: 1e-4 of the largest |logit|
//    (measured ~5e-7): the same numbers up to float32 summation order.
//  - A quantized (or F16 / BF16) file against llama.cpp on that same file: llama.cpp rounds the activations to 8
//    bits (F16 / BF16) before quantized (half) products, we do not, so only the distributions are close: KL of the
//    last position <= 5e-3 (measured 3e-4 to 5e-4).
//  - With llama.cpp's arithmetic (QuantActivations::Int8), the quantized files against llama.cpp on them: equal where
//    no activation lands on the other side of a rounding boundary (see the test).
//  - GPT-2: ggml's CPU GELU reads a float16 table: 1e-3 of the largest |logit| (measured 2.8e-4).
//  - gptneox and bert: llama.cpp uses that tanh GELU where HF's models (and we) use the exact one: 2e-3 (measured
//    3.8e-4 and 2.8e-4 of the largest |value|); t5: 1e-3 (2.0e-4). BERT is compared on its final hidden states
//    (llama.cpp's embeddings with pooling none), T5 on the decoder's logits after llama_encode of the source.
#include "core/formats/gguf.h"
#include "core/formats/gguf_model.h"
#include "core/kernels/quant_gemm.h"
#include "core/tokenizer/text_tokenizer.h"
#include "tests/test_util.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ts {
namespace {

namespace fs = std::filesystem;

fs::path ref_dir() { return fs::path(test::testdata_path("llama_cpp")); }

#define TS_REQUIRE_LLAMA_CPP(file)                                                                                   \
    if (!fs::exists(ref_dir() / (file)))                                                                             \
    GTEST_SKIP() << "!!! llama.cpp reference missing (" << (ref_dir() / (file)).string()                            \
                 << "): tests/reference/llama_cpp_reference.sh needs npm, python3 and a C compiler !!!"

std::vector<int> reference_ids() {
    std::ifstream in(ref_dir() / "logits" / "ids.txt");
    std::vector<int> ids;
    for (int id; in >> id;) ids.push_back(id);
    return ids;
}

/// llama.cpp's logits: (n_tokens, n_vocab).
MatrixRM reference_logits(const std::string& fixture) {
    std::ifstream in(ref_dir() / "logits" / (fixture + ".bin"), std::ios::binary);
    int32_t dims[2] = {0, 0};
    in.read(reinterpret_cast<char*>(dims), sizeof dims);
    MatrixRM m(dims[0], dims[1]);
    in.read(reinterpret_cast<char*>(m.data()), std::streamsize(m.size() * 4));
    if (!in) ADD_FAILURE() << "truncated reference " << fixture;
    return m;
}

MatrixRM our_logits(const std::string& fixture) {
    const auto model = load_gguf_model(test::golden_path("gguf/" + fixture + ".gguf"));
    return forward(*model, reference_ids(), ForwardOptions{}).logits;
}

double relative_max_error(const MatrixRM& ours, const MatrixRM& ref) {
    return double((ours - ref).cwiseAbs().maxCoeff() / ref.cwiseAbs().maxCoeff());
}

/// KL(ref || ours) of the last position's next-token distributions.
double kl_last(const MatrixRM& ours, const MatrixRM& ref) {
    const auto log_softmax = [](const Eigen::RowVectorXf& x) {
        const Eigen::RowVectorXd d = x.cast<double>().array() - double(x.maxCoeff());
        return Eigen::RowVectorXd(d.array() - std::log(d.array().exp().sum()));
    };
    const Eigen::RowVectorXd lr = log_softmax(ref.row(ref.rows() - 1)), lo = log_softmax(ours.row(ours.rows() - 1));
    return (lr.array().exp() * (lr - lo).array()).sum();
}

TEST(GgufLlamaCpp, F32LogitsEqualLlamaCpps) {
    TS_REQUIRE_LLAMA_CPP("logits/gpt2_f32.bin");  // the last one written
    const MatrixRM ours = our_logits("llama_f32"), ref = reference_logits("llama_f32");
    ASSERT_EQ(ours.rows(), ref.rows());
    ASSERT_EQ(ours.cols(), ref.cols());
    EXPECT_LE(relative_max_error(ours, ref), 1e-4);
    const MatrixRM gpt2 = our_logits("gpt2_f32"), gpt2_ref = reference_logits("gpt2_f32");
    EXPECT_LE(relative_max_error(gpt2, gpt2_ref), 1e-3);  // ggml's float16 GELU table
}

TEST(GgufLlamaCpp, QuantizedFilesEqualLlamaCppOnTheirDequantizedTwins) {
    TS_REQUIRE_LLAMA_CPP("logits/gpt2_f32.bin");  // the last one written
    for (const std::string q : {"llama_q8_0", "llama_q4_0"}) {
        const MatrixRM ours = our_logits(q);
        const double twin = relative_max_error(ours, reference_logits(q + "_ref"));
        EXPECT_LE(twin, 1e-4) << q;
        const double kl = kl_last(ours, reference_logits(q));  // llama.cpp on the quantized file itself
        EXPECT_LE(kl, 5e-3) << q;
        EXPECT_GE(kl, 0.0) << q;
        std::cout << "[ " << q << " ] vs llama.cpp on the F32 twin: relative " << twin << "; on the file itself: KL " << kl << "\n";
    }
    for (const std::string h : {"llama_f16", "qwen2_bf16"}) EXPECT_LE(kl_last(our_logits(h), reference_logits(h)), 5e-3) << h;
}

TEST(GgufLlamaCpp, Int8ActivationsComputeWhatLlamaCppComputesOnTheFile) {
    TS_REQUIRE_LLAMA_CPP("logits/gpt2_f32.bin");  // the last one written
    // Positions whose logits equal llama.cpp's to 1e-5 of the largest |logit|.
    const auto equal_rows = [](const MatrixRM& ours, const MatrixRM& ref) {
        int n = 0;
        for (Eigen::Index r = 0; r < ref.rows(); ++r)
            n += (ours.row(r) - ref.row(r)).cwiseAbs().maxCoeff() <= 1e-5f * ref.cwiseAbs().maxCoeff();
        return n;
    };
    for (const std::string q : {"llama_q8_0", "llama_q4_0"}) {
        const MatrixRM exact = our_logits(q);
        set_quant_activations(QuantActivations::Int8);
        const MatrixRM int8 = our_logits(q);
        set_quant_activations(QuantActivations::Float);
        const MatrixRM ref = reference_logits(q);
        // The same arithmetic up to float summation order. Where that order moves an activation across a rounding
        // boundary, one 8-bit step changes the rest of that position (measured: 4 and 6 of 12 positions equal to
        // 1e-7, the others ~1e-2 apart; llama.cpp's own CPU variants differ from each other the same way).
        // How many positions come out equal depends on the CPU both ran on (llama.cpp's kernels, and so its float
        // summation order, differ between CPU variants), so it is printed, not asserted: the arithmetic itself is
        // checked bit for bit against ggml's definitions in tests/core/quant_gemm_test.cpp.
        const int same = equal_rows(int8, ref);
        EXPECT_EQ(equal_rows(exact, ref), 0) << q;  // the exact product of the stored weights is never this close
        EXPECT_LE(kl_last(int8, ref), 5e-3) << q;
        std::cout << "[ " << q << " ] vs llama.cpp on the file, 8-bit activations: " << same << " of " << ref.rows()
                  << " positions equal; relative max " << relative_max_error(int8, ref)
                  << " (float: " << relative_max_error(exact, ref) << ")\n";
    }
}

TEST(GgufLlamaCpp, KQuantMixAgreesWithLlamaCpp) {
    TS_REQUIRE_LLAMA_CPP("logits/syn_tiny_q4km.bin");
    const auto model = load_gguf_model(ref_dir() / "logits" / "syn_tiny_q4km.gguf");
    EXPECT_EQ(model->stored_weight("dec.0.ffn.w_up").storage, Storage::Ggml);
    const MatrixRM ours = forward(*model, reference_ids(), ForwardOptions{}).logits;
    const MatrixRM ref = reference_logits("syn_tiny_q4km");
    // llama.cpp multiplies Q4_K / Q6_K weights by activations rounded to 8 bits (Q8_K): measured 1.5e-2 of the
    // largest |logit| and a KL of 1e-5.
    EXPECT_LE(relative_max_error(ours, ref), 5e-2);
    EXPECT_LE(kl_last(ours, ref), 5e-3);
}

TEST(GgufLlamaCpp, GptNeoxBertAndT5AgreeWithLlamaCpp) {
    TS_REQUIRE_LLAMA_CPP("logits/t5_f32.bin");
    // gptneox and bert: llama.cpp's graphs use the tanh GELU (ggml_gelu, read from a float16 table), the HF models
    // and we the exact one; t5's gated GELU is the tanh form on both sides, from the same table.
    const MatrixRM neox = our_logits("gptneox_f32");
    const double neox_err = relative_max_error(neox, reference_logits("gptneox_f32"));
    EXPECT_LE(neox_err, 2e-3);  // measured 3.8e-4
    EXPECT_LE(kl_last(neox, reference_logits("gptneox_f32")), 1e-4);
    const MatrixRM q8 = our_logits("gptneox_q8_0");
    const double twin_err = relative_max_error(q8, reference_logits("gptneox_q8_0_ref"));
    EXPECT_LE(twin_err, 2e-3);
    EXPECT_LE(kl_last(q8, reference_logits("gptneox_q8_0")), 5e-3);  // llama.cpp's 8-bit activations

    const auto bert = load_gguf_model(test::golden_path("gguf/bert_f32.gguf"));
    const MatrixRM hidden = forward(*bert, reference_ids(), ForwardOptions{}).hidden;
    const MatrixRM bert_ref = reference_logits("bert_f32");  // final hidden states, (T, d_model)
    ASSERT_EQ(hidden.rows(), bert_ref.rows());
    ASSERT_EQ(hidden.cols(), bert_ref.cols());
    const double bert_err = relative_max_error(hidden, bert_ref);
    EXPECT_LE(bert_err, 2e-3);  // measured 2.8e-4

    std::ifstream in(ref_dir() / "logits" / "t5_ids.txt");
    std::vector<std::vector<int>> lines(2);
    for (auto& v : lines) {
        std::string line;
        std::getline(in, line);
        std::istringstream ls(line);
        for (int id; ls >> id;) v.push_back(id);
    }
    const auto t5 = load_gguf_model(test::golden_path("gguf/t5_f32.gguf"));
    const MatrixRM t5_ours = forward_seq2seq(*t5, lines[0], lines[1], ForwardOptions{}).logits;
    const MatrixRM t5_ref = reference_logits("t5_f32");
    ASSERT_EQ(t5_ours.rows(), t5_ref.rows());
    const double t5_err = relative_max_error(t5_ours, t5_ref);
    EXPECT_LE(t5_err, 1e-3);  // measured 2.0e-4 (the float16 GELU table)
    std::cout << "[ llama.cpp ] relative max error: gptneox " << neox_err << ", gptneox Q8_0 vs its twin " << twin_err
              << ", bert hidden states " << bert_err << ", t5 " << t5_err << "\n";
}

/// llama_tokenize's ids: two lines per parity text (with specials, without).
std::vector<std::vector<int32_t>> reference_tokens(const std::string& file) {
    std::ifstream in(ref_dir() / "tokens" / file);
    std::vector<std::vector<int32_t>> out;
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line).get<std::vector<int32_t>>());
    return out;
}

/// Compares our ids with llama_tokenize's on every parity text, with and without specials. `known` lists the texts
/// on which llama.cpp has a quirk we do not reproduce: they must differ (both lines), all others must be equal.
void expect_same_tokens(const TextTokenizer& tok, const std::string& file, const std::vector<std::string>& known = {}) {
    const auto texts = nlohmann::json::parse(std::ifstream(std::string(TS_SOURCE_DIR) + "/tests/tokenizer/data/parity_texts.json"));
    const auto ref = reference_tokens(file);
    ASSERT_EQ(ref.size(), 2 * texts.size());
    size_t known_seen = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
        const std::string text = texts[i].is_string() ? texts[i].get<std::string>() : texts[i]["text"].get<std::string>();
        if (std::find(known.begin(), known.end(), text) != known.end()) {
            ++known_seen;
            EXPECT_NE(tok.encode(text, true).ids, ref[2 * i]) << file << ": llama.cpp's quirk is gone on " << text;
            EXPECT_NE(tok.encode(text, false).ids, ref[2 * i + 1]) << file << ": llama.cpp's quirk is gone on " << text;
            continue;
        }
        EXPECT_EQ(tok.encode(text, true).ids, ref[2 * i]) << file << ": " << text;
        EXPECT_EQ(tok.encode(text, false).ids, ref[2 * i + 1]) << file << ": " << text;
    }
    EXPECT_EQ(known_seen, known.size()) << file << ": a known difference names no parity text";
}

TEST(GgufLlamaCpp, TokenIdsEqualLlamaTokenize) {
    TS_REQUIRE_LLAMA_CPP("tokens/austen.jsonl");
    const auto austen = load_text_tokenizer(test::golden_path("gguf/austen_vocab.gguf"));
    expect_same_tokens(*austen, "austen.jsonl");  // "gpt2": byte-level BPE, pre-tokenizer gpt-2
    TS_REQUIRE_LLAMA_CPP("tokens/llama2.jsonl");
    const auto llama2 = load_text_tokenizer((ref_dir() / "tokens" / "llama2_vocab.gguf").string());
    expect_same_tokens(*llama2, "llama2.jsonl");  // "llama": SentencePiece BPE with byte fallback
}

TEST(GgufLlamaCpp, WordPieceAndUnigramIdsEqualLlamaTokenize) {
    TS_REQUIRE_LLAMA_CPP("tokens/bert.jsonl");
    // "bert" (llama.cpp's WPM): bert-base-uncased's vocab.txt as conversion/bert.py writes it.
    const auto bert = load_text_tokenizer((ref_dir() / "tokens" / "bert_vocab.gguf").string());
    // One text differs, on purpose: llama.cpp's NFD (unicode_cpts_normalize_nfd) keeps only the first code point of
    // each decomposition, so the Hangul syllables of "한국어 텍스트" lose their vowel and final jamo (한 -> ᄒ);
    // BERT's own tokenizer (BertNormalizer's full NFD), which the model was trained with, and ours keep all jamo.
    // Accented Latin, Greek and Cyrillic agree: there the rest of the decomposition is accents, stripped either way.
    const std::string hangul = "日本語のテキストと한국어 텍스트";
    expect_same_tokens(*bert, "bert.jsonl", {hangul});
    const std::string bert_ref = test::testdata_path("bert/reference.json");  // tokenizers.js on bert-base-uncased
    if (fs::exists(bert_ref)) {
        for (const auto& r : nlohmann::json::parse(std::ifstream(bert_ref))) {
            if (r["text"] == hangul) {
                EXPECT_EQ(bert->encode(hangul).ids, r["ids"].get<std::vector<int32_t>>());
            }
        }
    }
    TS_REQUIRE_LLAMA_CPP("tokens/t5.jsonl");
    // "t5" (llama.cpp's UGM): tests/tokenizer/data/unigram_tokenizer.json as conversion/t5.py writes it.
    const auto t5 = load_text_tokenizer((ref_dir() / "tokens" / "t5_vocab.gguf").string());
    expect_same_tokens(*t5, "t5.jsonl");
}

}  // namespace
}  // namespace ts
