// GGUF: dequantization against gguf-py (tests/golden/gguf/quants.gguf, bit for bit), models converted from the
// tests/golden/hf_* checkpoints by llama.cpp's gguf-py (tests/reference/make_gguf_fixtures.py) against the same
// PyTorch logits the HF loader is checked with, quantized models against their F32 twins, and malformed headers
// built byte by byte.
#include "core/model/model.h"
#include "core/formats/gguf.h"
#include "core/formats/gguf_model.h"
#include "core/model/half.h"
#include "core/formats/safetensors.h"
#include "core/kernels/gemm.h"
#include "core/kernels/threads.h"
#include "tests/test_util.h"

#include <algorithm>
#include <cstring>
#include <fstream>

namespace ts {
namespace {

namespace fs = std::filesystem;
using test::contains;

fs::path fixture(const std::string& name) { return fs::path(test::golden_path("gguf/" + name)); }

// --- dequantization ---------------------------------------------------------------------------------------------

TEST(GgufQuants, EveryTypeEqualsGgufPyBitForBit) {
    const GgufFile f(fixture("quants.gguf"));
    int types = 0;
    for (const GgufTensorInfo& q : f.header().tensors) {
        if (q.name.rfind("q.", 0) != 0) continue;
        const std::string type = q.name.substr(2);
        SCOPED_TRACE(type);
        ASSERT_EQ(std::string(ggml_type_info(q.type)->name), type);
        const GgufTensorInfo* ref = f.header().find_tensor("ref." + type);
        ASSERT_NE(ref, nullptr);
        const Tensor got = f.read(q), want = f.read(*ref);
        ASSERT_EQ(got.shape, want.shape);
        ASSERT_EQ(got.shape, (std::vector<int64_t>{3, 512}));
        int64_t differ = 0, first = -1;
        for (size_t i = 0; i < got.data.size(); ++i)
            if (std::memcmp(&got.data[i], &want.data[i], 4) != 0 && differ++ == 0) first = int64_t(i);
        EXPECT_EQ(differ, 0) << "first at " << first << ": " << got.data[size_t(std::max<int64_t>(first, 0))]
                             << " vs " << want.data[size_t(std::max<int64_t>(first, 0))];
        ++types;
    }
    EXPECT_EQ(types, 13);  // F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K Q4_K Q5_K Q6_K
}

// A product with a quantized matrix equals the product with its dequantized float32 panels bit for bit, every type
// (the blocks are dequantized into the same panel order the float32 kernel reads).
TEST(GgufQuants, ProductsEqualTheDequantizedWeightsProductsBitForBit) {
    const GgufFile f(fixture("quants.gguf"));
    MatrixRM x(13, 512);
    for (Eigen::Index k = 0; k < x.size(); ++k) x.data()[k] = float((k * 7919) % 201 - 100) / 37.0f;
    int types = 0;
    for (const GgufTensorInfo& q : f.header().tensors) {
        if (q.name.rfind("q.", 0) != 0 || ggml_type_info(q.type)->block_size == 1) continue;
        SCOPED_TRACE(q.name);
        Tensor w;
        w.shape = q.shape();
        w.storage = Storage::Ggml;
        w.ggml_type = q.type;
        w.blocks.assign(f.data(q), f.data(q) + ggml_row_bytes(q.type, 512) * 3);
        const Tensor dense = pack_panels(f.read(q));
        for (const int threads : {1, 2}) {
            set_compute_threads(threads);
            MatrixRM got, want;
            matmul_weight_t(x, w, got);
            matmul_weight_t(x, dense, want);
            ASSERT_EQ(got.rows(), 13);
            ASSERT_EQ(got.cols(), 3);
            EXPECT_EQ(std::memcmp(got.data(), want.data(), size_t(got.size()) * 4), 0)
                << "max |diff| " << (got - want).cwiseAbs().maxCoeff();
        }
        set_compute_threads(1);
        ++types;
    }
    EXPECT_EQ(types, 10);  // Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K Q4_K Q5_K Q6_K
}

TEST(GgufQuants, TypeFactsAndRefusals) {
    EXPECT_EQ(ggml_type_info(12)->name, "Q4_K");
    EXPECT_EQ(ggml_type_info(12)->block_size, 256);
    EXPECT_EQ(ggml_type_info(12)->block_bytes, 144);
    EXPECT_EQ(ggml_type_info(8)->block_bytes, 34);
    EXPECT_FALSE(ggml_type_info(16)->decodable);  // IQ2_XXS: sized, not decoded
    EXPECT_FALSE(ggml_type_info(4).has_value());  // removed Q4_2
    std::vector<uint8_t> block(34, 0);
    std::vector<float> out(64);
    EXPECT_THROW(ggml_dequantize(GgmlType::Q8_0, block.data(), 31, out.data()), std::invalid_argument);
    EXPECT_THROW(ggml_dequantize(GgmlType(16), block.data(), 256, out.data()), std::invalid_argument);
    // One Q8_0 block by hand: d = 0.5 (f16 0x3800), q = -3 -> -1.5.
    block[0] = 0x00, block[1] = 0x38, block[2] = uint8_t(int8_t(-3)), block[33] = 127;
    ggml_dequantize(GgmlType::Q8_0, block.data(), 32, out.data());
    EXPECT_EQ(out[0], -1.5f);
    EXPECT_EQ(out[1], 0.0f);
    EXPECT_EQ(out[31], 63.5f);
}

// --- models -----------------------------------------------------------------------------------------------------

/// Logits and every head's probs of `model` on the ids of tests/golden/<hf>/expected.safetensors, against them.
void expect_matches_torch(const Model& model, const std::string& hf, float atol, float probs_atol = 1e-5f) {
    const WeightMap expected = load_safetensors(test::golden_path(hf + "/expected.safetensors"));
    std::vector<int> ids;
    for (float v : expected.at("ids").data) ids.push_back(int(v));
    ForwardOptions fo;
    fo.capture = CaptureFilter::prefixes({"dec.0.attn.probs", "dec.1.attn.probs", "logits"});
    const ForwardResult r = forward(model, ids, fo);
    const Tensor& e = expected.at("logits");
    ASSERT_EQ(r.logits.rows(), e.dim(0));
    ASSERT_EQ(r.logits.cols(), e.dim(1));
    EXPECT_TRUE(test::allclose(r.logits.data(), e.data.data(), e.numel(), atol, 0.0f)) << hf << " logits";
    for (int i = 0; i < 2; ++i) {
        const std::string key = "dec." + std::to_string(i) + ".attn.probs";
        EXPECT_TRUE(test::allclose(r.trace->at(key), expected.at(key), probs_atol)) << hf << " " << key;
    }
}

TEST(GgufModel, LlamaF32MatchesTorchAndTheHfWeights) {
    const auto model = load_gguf_model(fixture("llama_f32.gguf"));
    EXPECT_EQ(model->config().n_kv_heads, 2);
    EXPECT_FALSE(model->config().tie_embeddings);
    expect_matches_torch(*model, "hf_llama", 1e-4f);
    // The converter's Q/K permutation is undone exactly: our weights equal the HF loader's.
    const auto hf = load_hf_model(test::golden_path("hf_llama"));
    for (const char* w : {"dec.0.attn.wq", "dec.0.attn.wk", "dec.1.attn.wq", "dec.1.attn.wk", "dec.1.ffn.w_down"})
        EXPECT_EQ(to_f32(model->weights().at(w)).data, to_f32(hf->weights().at(w)).data) << w;
}

TEST(GgufModel, LlamaF16KeepsHalfAndMatchesTorch) {
    const auto model = load_gguf_model(fixture("llama_f16.gguf"));
    EXPECT_TRUE(model->stored_weight("dec.0.attn.wq").is_half());
    expect_matches_torch(*model, "hf_llama", 2e-2f, 2e-3f);  // F16 rounding of every weight
}

TEST(GgufModel, QuantizedLlamaEqualsItsDequantizedTwin) {
    for (const std::string q : {"q8_0", "q4_0"}) {
        SCOPED_TRACE(q);
        const auto model = load_gguf_model(fixture("llama_" + q + ".gguf"));
        const auto twin = load_gguf_model(fixture("llama_" + q + "_ref.gguf"));  // gguf-py's dequantize, F32
        GgufLoadOptions f32;
        f32.keep_quantized = false;
        const auto widened = load_gguf_model(fixture("llama_" + q + ".gguf"), f32);
        // Kept as blocks: the matrices whose rows are whole blocks (the others fell back to F16 in the file).
        EXPECT_EQ(model->stored_weight("dec.0.attn.wq").storage, Storage::Ggml);
        EXPECT_EQ(model->stored_weight("tok_emb.weight").storage, Storage::Ggml);
        EXPECT_NE(model->stored_weight("dec.0.ffn.w_down").storage, Storage::Ggml);
        EXPECT_EQ(model->stored_weight("dec.0.attn_norm.weight").storage, Storage::F32);
        EXPECT_NE(widened->stored_weight("dec.0.attn.wq").storage, Storage::Ggml);
        for (const auto& [name, t] : twin->weights()) {
            EXPECT_EQ(to_f32(model->stored_weight(name)).data, t.data) << name;  // bit for bit, permuted rows too
            EXPECT_EQ(to_f32(widened->stored_weight(name)).data, t.data) << name;
        }
        const std::vector<int> ids{1, 7, 42, 255, 3, 99};
        const MatrixRM a = forward(*model, ids, ForwardOptions{}).logits, b = forward(*twin, ids, ForwardOptions{}).logits,
                       c = forward(*widened, ids, ForwardOptions{}).logits;
        EXPECT_TRUE(c == b);  // the same weights in the same panels
        EXPECT_TRUE(a == b) << q;  // blocks are dequantized into the same panels inside the product
    }
}

TEST(GgufModel, Qwen2Bf16AndGpt2MatchTorch) {
    const auto qwen = load_gguf_model(fixture("qwen2_bf16.gguf"));
    EXPECT_EQ(qwen->stored_weight("dec.0.attn.wq").storage, Storage::BF16Panels);
    EXPECT_TRUE(qwen->config().tie_embeddings);
    EXPECT_TRUE(qwen->config().attn_qkv_bias);
    expect_matches_torch(*qwen, "hf_qwen2", 1e-4f);
    const auto gpt2 = load_gguf_model(fixture("gpt2_f32.gguf"));
    EXPECT_TRUE(gpt2->config().tie_embeddings);
    expect_matches_torch(*gpt2, "hf_gpt2", 1e-4f);
}

/// Every weight of `model` equals the HF loader's of tests/golden/<hf>, except those named in `absent`.
void expect_hf_weights(const Model& model, const std::string& hf, const std::vector<std::string>& absent = {}) {
    const auto ref = load_hf_model(test::golden_path(hf));
    size_t compared = 0;
    for (const auto& [name, t] : ref->weights()) {
        if (std::find(absent.begin(), absent.end(), name) != absent.end()) {
            EXPECT_EQ(model.weights().count(name), 0u) << name;
            continue;
        }
        ASSERT_TRUE(model.weights().count(name)) << hf << ": " << name << " missing";
        EXPECT_EQ(to_f32(model.stored_weight(name)).data, to_f32(t).data) << hf << ": " << name;
        ++compared;
    }
    EXPECT_EQ(compared + absent.size(), ref->weights().size());
    EXPECT_EQ(model.weights().size(), compared);
}

TEST(GgufModel, GptNeoxMatchesTorchAndTheHfWeights) {
    const auto model = load_gguf_model(fixture("gptneox_f32.gguf"));
    const ModelConfig& c = model->config();
    EXPECT_EQ(c.rotary_dim, 4);  // rope.dimension_count of a 16-wide head (rotary_pct 0.25)
    EXPECT_TRUE(c.parallel_residual);
    EXPECT_FALSE(c.tie_embeddings);
    EXPECT_EQ(c.activation, Activation::GELU);  // HF's exact GELU
    expect_hf_weights(*model, "hf_gpt_neox");   // the converter's q/k/v regrouping undone exactly
    expect_matches_torch(*model, "hf_gpt_neox", 1e-4f);
    // Quantized: the fused q/k/v blocks are split by rows without decoding them.
    const auto q8 = load_gguf_model(fixture("gptneox_q8_0.gguf")),
               twin = load_gguf_model(fixture("gptneox_q8_0_ref.gguf"));
    EXPECT_EQ(q8->stored_weight("dec.0.attn.wk").storage, Storage::Ggml);
    for (const auto& [name, t] : twin->weights()) EXPECT_EQ(to_f32(q8->stored_weight(name)).data, t.data) << name;
    const std::vector<int> ids{1, 7, 42, 255, 3, 99};
    EXPECT_TRUE(forward(*q8, ids, ForwardOptions{}).logits == forward(*twin, ids, ForwardOptions{}).logits);
}

TEST(GgufModel, BertIsTheEncoderWithoutItsHead) {
    const auto model = load_gguf_model(fixture("bert_f32.gguf"));
    const ModelConfig& c = model->config();
    EXPECT_EQ(c.arch, Arch::EncoderOnly);
    EXPECT_FALSE(c.mlm_head);
    EXPECT_EQ(c.type_vocab_size, 2);
    EXPECT_EQ(c.activation, Activation::GELU);
    expect_hf_weights(*model, "hf_bert",
                      {"mlm_head.dense.weight", "mlm_head.dense.bias", "mlm_head.norm.weight", "mlm_head.norm.bias",
                       "mlm_head.bias"});
    const WeightMap expected = load_safetensors(test::golden_path("hf_bert/expected.safetensors"));
    std::vector<int> ids;
    for (float v : expected.at("ids").data) ids.push_back(int(v));
    ForwardOptions fo;
    fo.capture = CaptureFilter::all();
    const ForwardResult r = forward(*model, ids, fo);
    EXPECT_EQ(r.logits.size(), 0);  // no head: hidden states only
    ASSERT_EQ(r.hidden.rows(), int64_t(ids.size()));
    for (const char* key : {"enc.0.attn.probs", "enc.1.attn.probs"})
        EXPECT_TRUE(test::allclose(r.trace->at(key), expected.at(key), 1e-5f)) << key;
    // The same hidden states as the HF folder's model (which has the head on top).
    const ForwardResult hf = forward(*load_hf_model(test::golden_path("hf_bert")), ids, ForwardOptions{});
    EXPECT_TRUE(r.hidden == hf.hidden);
}

TEST(GgufModel, T5MatchesTorchAndStartsTheDecoderFromItsMetadata) {
    const GgufFile file(fixture("t5_f32.gguf"));
    const auto model = load_gguf_model(file);
    const ModelConfig& c = model->config();
    EXPECT_EQ(c.arch, Arch::EncoderDecoder);
    EXPECT_EQ(c.n_enc_layers, 3);
    EXPECT_EQ(c.n_layers, 2);
    EXPECT_EQ(c.head_dim, 16);
    EXPECT_EQ(c.relative_attention_num_buckets, 6);
    EXPECT_EQ(c.relative_attention_max_distance, 128);
    EXPECT_EQ(c.activation, Activation::GeGLUTanh);
    EXPECT_FALSE(c.tie_embeddings);
    expect_hf_weights(*model, "hf_t5_gguf");
    const WeightMap expected = load_safetensors(test::golden_path("hf_t5_gguf/expected.safetensors"));
    const auto ids = [&](const char* key) {
        std::vector<int> v;
        for (float x : expected.at(key).data) v.push_back(int(x));
        return v;
    };
    ForwardOptions fo;
    fo.capture = CaptureFilter::all();
    const ForwardResult r = forward_seq2seq(*model, ids("src_ids"), ids("tgt_ids"), fo);
    const Tensor& e = expected.at("logits");
    ASSERT_EQ(r.logits.rows(), e.dim(0));
    EXPECT_TRUE(test::allclose(r.logits.data(), e.data.data(), e.numel(), 1e-4f, 0.0f));
    for (const char* key : {"enc.2.attn.probs", "dec.1.attn.probs", "dec.1.cross_attn.probs"})
        EXPECT_TRUE(test::allclose(r.trace->at(key), expected.at(key), 1e-5f)) << key;
    const TranslationSpec spec = gguf_translation_spec(file.header(), "t5_f32.gguf");
    EXPECT_EQ(spec.decoder_start_id, 0);
    EXPECT_EQ(spec.source_end_id, 1);
    EXPECT_EQ(spec.target_end_id, 1);
    EXPECT_TRUE(contains(test::error_of([] {
                             (void)gguf_translation_spec(GgufFile(fixture("llama_f32.gguf")).header(),
                                                         "llama_f32.gguf");
                         }),
                         {"llama_f32.gguf", "not an encoder-decoder"}));
}

TEST(GgufModel, ProgressAndName) {
    uint64_t last = 0, total = 0;
    int calls = 0;
    GgufLoadOptions opt;
    opt.progress = [&](uint64_t d, uint64_t n) { last = d, total = n, ++calls; };
    const auto model = load_gguf_model(fixture("llama_q8_0.gguf"), opt);
    EXPECT_GT(calls, 2);
    EXPECT_EQ(last, total);
    EXPECT_EQ(model->config().name, "llama_q8_0");  // general.name
    EXPECT_TRUE(is_gguf_file(fixture("llama_q8_0.gguf")));
    EXPECT_FALSE(is_gguf_file(test::golden_path("hf_llama/config.json")));
    EXPECT_FALSE(is_gguf_file(test::golden_path("hf_llama")));
}

// --- malformed files --------------------------------------------------------------------------------------------

/// A GGUF image written field by field.
struct Writer {
    std::string b;
    template <class T>
    Writer& put(T v) {
        b.append(reinterpret_cast<const char*>(&v), sizeof v);
        return *this;
    }
    Writer& str(const std::string& s) {
        put<uint64_t>(s.size());
        b += s;
        return *this;
    }
    Writer& header(uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
        b += "GGUF";
        return put(version).put(n_tensors).put(n_kv);
    }
    Writer& kv_u32(const std::string& key, uint32_t v) { return str(key).put<uint32_t>(4).put(v); }
    Writer& kv_str(const std::string& key, const std::string& v) { return str(key).put<uint32_t>(8).str(v); }
    Writer& tensor(const std::string& name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
        str(name).put<uint32_t>(uint32_t(ne.size()));
        for (uint64_t e : ne) put(e);
        return put(type).put(offset);
    }
    /// A model file's header: general.architecture and the six keys every family needs (context 64, width 32,
    /// `blocks` blocks, FFN 64, 4 heads, vocabulary 16), followed by `extra_kv` more entries the caller writes.
    Writer& family(const std::string& arch, uint64_t n_tensors, uint64_t extra_kv, uint32_t blocks = 1) {
        header(3, n_tensors, 7 + extra_kv).kv_str("general.architecture", arch);
        return kv_u32(arch + ".context_length", 64)
            .kv_u32(arch + ".embedding_length", 32)
            .kv_u32(arch + ".block_count", blocks)
            .kv_u32(arch + ".feed_forward_length", 64)
            .kv_u32(arch + ".attention.head_count", 4)
            .kv_u32(arch + ".vocab_size", 16);
    }
    Writer& pad(size_t align = 32) {
        while (b.size() % align) b += '\0';
        return *this;
    }
};

std::string header_error(const std::string& bytes) {
    return test::error_of([&] {
        (void)parse_gguf_header(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "f.gguf");
    });
}

/// A valid image: two metadata entries, two F32 tensors of 8 values.
std::string valid_image() {
    Writer w;
    w.header(3, 2, 2).kv_str("general.architecture", "llama").kv_u32("general.alignment", 32);
    w.tensor("a", {8}, 0, 0).tensor("b", {4, 2}, 0, 32).pad();
    w.b.append(64, '\0');
    return w.b;
}

TEST(GgufHeader, ValidImageParses) {
    const std::string img = valid_image();
    const GgufHeader h = parse_gguf_header(reinterpret_cast<const uint8_t*>(img.data()), img.size(), "f.gguf");
    EXPECT_EQ(h.version, 3u);
    EXPECT_EQ(h.find("general.architecture")->text, "llama");
    ASSERT_EQ(h.tensors.size(), 2u);
    EXPECT_EQ(h.tensors[1].shape(), (std::vector<int64_t>{2, 4}));
    EXPECT_EQ(h.tensors[1].bytes, 32u);
    EXPECT_EQ(h.data_offset % 32, 0u);
}

// gguf-py writes no padding after the header of a file without tensors (a vocabulary-only file): the data section
// is empty and at the end, never beyond it; an empty tensor may sit there, any other is refused.
TEST(GgufHeader, AFileEndingInsideThePaddingHasAnEmptyDataSectionAtItsEnd) {
    Writer w;
    w.header(3, 0, 1).kv_str("general.architecture", "llama");
    ASSERT_NE(w.b.size() % 32, 0u);
    const auto parse = [](const std::string& b) {
        return parse_gguf_header(reinterpret_cast<const uint8_t*>(b.data()), b.size(), "v.gguf");
    };
    EXPECT_EQ(parse(w.b).data_offset, w.b.size());
    Writer empty;
    empty.header(3, 1, 1).kv_str("general.architecture", "llama").tensor("e", {0}, 0, 0);
    const GgufHeader h = parse(empty.b);
    EXPECT_EQ(h.data_offset, empty.b.size());
    EXPECT_EQ(h.tensors.at(0).bytes, 0u);
    Writer one;
    one.header(3, 1, 1).kv_str("general.architecture", "llama").tensor("x", {1}, 0, 0);
    EXPECT_TRUE(contains(test::error_of([&] { (void)parse(one.b); }), {"tensor 'x'", "ends beyond the data section"}));
}

TEST(GgufHeader, EveryTruncationIsRefusedWithALine) {
    const std::string img = valid_image();
    for (size_t n = 0; n < img.size(); ++n) {
        const std::string msg = header_error(img.substr(0, n));
        EXPECT_TRUE(contains(msg, {"f.gguf: "})) << n << ": " << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos);
    }
}

TEST(GgufHeader, LiesAndBadValuesAreNamed) {
    EXPECT_TRUE(contains(header_error("GGML0000"), {"not a GGUF file"}));
    EXPECT_TRUE(contains(header_error(Writer().header(1, 0, 0).b), {"version 1"}));
    EXPECT_TRUE(contains(header_error(Writer().header(0x03000000u, 0, 0).b), {"big-endian"}));
    EXPECT_TRUE(contains(header_error(Writer().header(3, 0, uint64_t(1) << 60).b), {"metadata entries"}));
    EXPECT_TRUE(contains(header_error(Writer().header(3, uint64_t(1) << 60, 0).b), {"tensors, more than"}));
    // An array claiming 2^40 strings in a few bytes: refused before allocating.
    Writer arr;
    arr.header(3, 0, 1).str("tokenizer.ggml.tokens").put<uint32_t>(9).put<uint32_t>(8).put<uint64_t>(uint64_t(1) << 40);
    arr.b.append(64, 'x');
    EXPECT_TRUE(contains(header_error(arr.b), {"tokenizer.ggml.tokens", "claims 1099511627776 elements"}));
    Writer longstr;
    longstr.header(3, 0, 1).str("k").put<uint32_t>(8).put<uint64_t>(uint64_t(1) << 62);
    EXPECT_TRUE(contains(header_error(longstr.b), {"metadata 'k'", "file ends inside"}));
    EXPECT_TRUE(contains(header_error(Writer().header(3, 0, 1).str("k").put<uint32_t>(13).b), {"unknown value type 13"}));
    EXPECT_TRUE(contains(header_error(Writer().header(3, 0, 1).kv_u32("general.alignment", 24).b), {"not a power of two"}));
    EXPECT_TRUE(contains(header_error(Writer().header(3, 0, 2).kv_u32("x", 1).kv_u32("x", 2).b), {"'x' appears twice"}));
    const auto one_tensor = [](std::vector<uint64_t> ne, uint32_t type, uint64_t offset, size_t data) {
        Writer w;
        w.header(3, 1, 0).tensor("t", std::move(ne), type, offset).pad();
        w.b.append(data, '\0');
        return header_error(w.b);
    };
    EXPECT_TRUE(contains(one_tensor({8}, 0, 0, 16), {"tensor 't'", "ends beyond the data section"}));
    EXPECT_TRUE(contains(one_tensor({8}, 0, 8, 64), {"not a multiple of the alignment"}));
    EXPECT_TRUE(contains(one_tensor({8}, 99, 0, 64), {"unknown ggml type 99"}));
    EXPECT_TRUE(contains(one_tensor({48}, 12, 0, 4096), {"not a multiple of Q4_K's block size 256"}));
    EXPECT_TRUE(contains(one_tensor({1, 1, 1, 1, 1}, 0, 0, 64), {"5 dimensions"}));
    EXPECT_TRUE(contains(one_tensor({1u << 31, 1u << 31, 1u << 31, 1u << 31}, 0, 0, 64), {"too many"}));
    Writer overlap;
    overlap.header(3, 2, 0).tensor("a", {16}, 0, 0).tensor("b", {8}, 0, 32).pad();
    overlap.b.append(128, '\0');
    EXPECT_TRUE(contains(header_error(overlap.b), {"'a' and 'b' overlap"}));
}

TEST(GgufModel, UnsupportedAndMismatchedFilesAreNamed) {
    test::TempDir dir("ts_gguf_test");
    const auto write = [&](const std::string& name, const std::string& bytes) {
        const fs::path p = dir.path / name;
        std::ofstream(p, std::ios::binary) << bytes;
        return p;
    };
    const auto load_error = [](const fs::path& p) { return test::error_of([&] { (void)load_gguf_model(p); }); };
    EXPECT_TRUE(contains(
        load_error(write("mamba.gguf", Writer().header(3, 0, 1).kv_str("general.architecture", "mamba").b)),
        {"mamba.gguf", "architecture 'mamba' is not supported", "llama, qwen2, gemma, gpt2, gptneox, bert, t5"}));
    EXPECT_TRUE(contains(load_error(write("none.gguf", Writer().header(3, 0, 0).b)), {"general.architecture"}));
    Writer few;  // llama keys but no tensors
    few.family("llama", 0, 0);
    EXPECT_TRUE(contains(load_error(write("few.gguf", few.b)), {"few.gguf: missing tensor 'blk.0.", "required by the metadata (llama)"}));
    Writer rope = few;
    rope.b.replace(4 + 4 + 8, 8, std::string("\x08\0\0\0\0\0\0\0", 8));  // 8 metadata entries
    rope.kv_str("llama.rope.scaling.type", "yarn");
    EXPECT_TRUE(contains(load_error(write("rope.gguf", rope.b)), {"RoPE scaling", "yarn"}));
    // A tensor of the wrong shape, named in GGUF terms.
    Writer shape = few;
    shape.b.replace(4 + 4, 8, std::string("\x01\0\0\0\0\0\0\0", 8));
    shape.tensor("token_embd.weight", {32, 15}, 0, 0).pad();
    shape.b.append(32 * 15 * 4, '\0');
    EXPECT_TRUE(contains(load_error(write("shape.gguf", shape.b)),
                         {"tensor 'token_embd.weight' has shape (15, 32), expected (16, 32)"}));
    EXPECT_TRUE(contains(load_error(dir.path / "absent.gguf"), {"absent.gguf", "cannot open"}));
    // The new families' own refusals, named by key.
    Writer bert;
    bert.family("bert", 0, 1);
    bert.str("bert.attention.causal").put<uint32_t>(7).put<uint8_t>(1);  // GGUF bool
    EXPECT_TRUE(contains(load_error(write("causal.gguf", bert.b)), {"causal.gguf", "bert.attention.causal = true"}));
    Writer neox;
    neox.family("gptneox", 0, 1).kv_u32("gptneox.rope.dimension_count", 3);
    EXPECT_TRUE(contains(load_error(write("rot.gguf", neox.b)), {"rot.gguf", "rope.dimension_count 3 must be even"}));
    Writer umt5;
    umt5.family("t5", 1, 0, 2);
    umt5.tensor("enc.blk.1.attn_rel_b.weight", {4, 32}, 0, 0).pad();
    umt5.b.append(4 * 32 * 4, '\0');
    EXPECT_TRUE(contains(load_error(write("umt5.gguf", umt5.b)), {"umt5.gguf", "enc.blk.1.attn_rel_b.weight", "UMT5"}));
}

}  // namespace
}  // namespace ts
