// safetensors parser robustness (header rules for every tensor, non-finite counting) and round trips, config.json
// parsing and ModelConfig validation messages (including absurd sizes).
#include "core/model/model_config.h"
#include "core/formats/safetensors.h"
#include "tests/test_util.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace ts {
namespace {

std::string make_file(const std::string& header, const std::string& data) {
    std::string out;
    const uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) out.push_back(char((n >> (8 * i)) & 0xff));
    return out + header + data;
}

WeightMap parse(const std::string& bytes) {
    return parse_safetensors(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "test.safetensors");
}

std::string error_of(const std::string& bytes) {
    try {
        (void)parse(bytes);
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "<no error>";
}

std::string floats(std::initializer_list<float> v) {
    std::string s(v.size() * 4, '\0');
    std::memcpy(s.data(), std::data(v), s.size());
    return s;
}

TEST(Safetensors, RoundTripThroughFile) {
    WeightMap w;
    w.emplace("a.weight", Tensor({2, 3}, {1, 2, 3, 4, 5, 6}));
    w.emplace("b", Tensor({4}, {-1.5f, 0.0f, 3.25f, 1e-8f}));
    const auto path = std::filesystem::temp_directory_path() / "ts_roundtrip.safetensors";
    save_safetensors(path, w, {{"format", "pt"}});
    std::map<std::string, std::string> meta;
    const WeightMap r = load_safetensors(path, &meta);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r.at("a.weight").shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(r.at("a.weight").data, w.at("a.weight").data);
    EXPECT_EQ(r.at("b").data, w.at("b").data);
    EXPECT_EQ(meta.at("format"), "pt");
    std::filesystem::remove(path);
}

TEST(Safetensors, ReadsF16AndBF16) {
    // F16: 1.0 = 0x3c00, -2.0 = 0xc000, 65504 = 0x7bff, smallest subnormal 2^-24 = 0x0001
    // BF16: 1.0 = 0x3f80, -0.5 = 0xbf00
    const std::string f16("\x00\x3c\x00\xc0\xff\x7b\x01\x00", 8);
    const std::string bf16("\x80\x3f\x00\xbf", 4);
    const std::string header =
        R"({"h":{"dtype":"F16","shape":[4],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[2],"data_offsets":[8,12]}})";
    const WeightMap r = parse(make_file(header, f16 + bf16));
    EXPECT_EQ(r.at("h").data, (std::vector<float>{1.0f, -2.0f, 65504.0f, 5.9604644775390625e-8f}));
    EXPECT_EQ(r.at("b").data, (std::vector<float>{1.0f, -0.5f}));
}

TEST(Safetensors, RejectsTruncatedLengthPrefix) {
    EXPECT_NE(error_of(std::string("\x05\x00\x00", 3)).find("too short"), std::string::npos);
}

TEST(Safetensors, RejectsHeaderLengthBeyondFile) {
    std::string bytes = make_file(R"({})", "");
    bytes[0] = char(200);
    EXPECT_NE(error_of(bytes).find("runs past the end"), std::string::npos);
}

TEST(Safetensors, RejectsDataBeyondBuffer) {
    const std::string h = R"({"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
    EXPECT_NE(error_of(make_file(h, floats({1, 2}))).find("truncated"), std::string::npos);
}

TEST(Safetensors, RejectsOverlappingTensors) {
    const std::string h =
        R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
    EXPECT_NE(error_of(make_file(h, floats({1, 2, 3}))).find("overlap"), std::string::npos);
}

TEST(Safetensors, RejectsUnknownDtype) {
    const std::string h = R"({"x":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})";
    EXPECT_NE(error_of(make_file(h, floats({1, 2}))).find("unsupported dtype I64"), std::string::npos);
}

TEST(Safetensors, RejectsShapeByteCountMismatch) {
    const std::string h = R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})";
    EXPECT_NE(error_of(make_file(h, floats({1, 2}))).find("needs 12 bytes"), std::string::npos);
}

TEST(Safetensors, RejectsBeginAfterEndAndNegativeDims) {
    EXPECT_NE(error_of(make_file(R"({"x":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})", floats({1, 2})))
                  .find("begin > end"),
              std::string::npos);
    EXPECT_NE(error_of(make_file(R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", floats({1})))
                  .find("negative"),
              std::string::npos);
}

TEST(Safetensors, RejectsNonUtf8AndDeeplyNestedJson) {
    EXPECT_NE(error_of(make_file("{\"\xff\xfe\":1}", "")).find("invalid JSON"), std::string::npos);
    std::string deep(200, '[');
    deep += std::string(200, ']');
    EXPECT_NE(error_of(make_file("{\"x\":" + deep + "}", "")).find("nested deeper"), std::string::npos);
}

TEST(Safetensors, RejectsMissingFields) {
    EXPECT_NE(error_of(make_file(R"({"x":{"shape":[1],"data_offsets":[0,4]}})", floats({1}))).find("dtype"),
              std::string::npos);
    EXPECT_NE(error_of(make_file(R"({"x":{"dtype":"F32","shape":[1]}})", floats({1}))).find("data_offsets"),
              std::string::npos);
    EXPECT_NE(error_of(make_file(R"([1,2])", "")).find("not a JSON object"), std::string::npos);
}

// --- header rules, for every tensor ------------------------------------------------------------------------

std::string error_with(const std::string& bytes, const SafetensorsReadOptions& opt) {
    try {
        (void)parse_safetensors(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "test.safetensors",
                                opt);
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "<no error>";
}

using test::contains;

TEST(SafetensorsHeader, UnknownDtypeNamesTensorAndDtype) {
    const std::string h = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                          R"("x":{"dtype":"Q4_K","shape":[1],"data_offsets":[4,8]}})";
    EXPECT_TRUE(contains(error_of(make_file(h, floats({1, 2}))),
                         {"test.safetensors", "tensor 'x'", "unknown dtype 'Q4_K'", "BOOL", "F64", "BF16"}));
}

TEST(SafetensorsHeader, SkippedTensorsStillPassEveryCheck) {
    SafetensorsReadOptions skip_mask;
    skip_mask.skip = [](std::string_view n) { return n == "mask"; };
    const std::string w = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)";
    // A well-formed skipped buffer of a dtype we do not decode: fine, and absent from the result.
    const std::string ok = make_file(w + R"("mask":{"dtype":"BOOL","shape":[2,2],"data_offsets":[8,12]}})",
                                     floats({1, 2, 0}));
    EXPECT_EQ(error_with(ok, skip_mask), "<no error>");
    // Each broken rule is still reported for the skipped tensor.
    EXPECT_TRUE(contains(error_with(make_file(w + R"("mask":{"dtype":"B00L","shape":[4],"data_offsets":[8,12]}})",
                                              floats({1, 2, 0})),
                                    skip_mask),
                         {"tensor 'mask'", "unknown dtype 'B00L'"}));
    EXPECT_TRUE(contains(error_with(make_file(w + R"("mask":{"dtype":"BOOL","shape":[3],"data_offsets":[8,12]}})",
                                              floats({1, 2, 0})),
                                    skip_mask),
                         {"tensor 'mask'", "shape (3) of BOOL needs 3 bytes", "[8, 12) span 4"}));
    EXPECT_TRUE(contains(error_with(make_file(w + R"("mask":{"dtype":"U8","shape":[8],"data_offsets":[8,16]}})",
                                              floats({1, 2, 0})),
                                    skip_mask),
                         {"tensor 'mask'", "ends at byte 16", "12 bytes"}));
    EXPECT_TRUE(contains(error_with(make_file(w + R"("mask":{"dtype":"U8","shape":[8],"data_offsets":[4,12]}})",
                                              floats({1, 2, 0})),
                                    skip_mask),
                         {"'w'", "'mask'", "overlap"}));
}

TEST(SafetensorsHeader, KnownDtypesWeDoNotDecodeFailOnlyWhenDecoded) {
    const std::string bytes = make_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                        R"("ids":{"dtype":"I64","shape":[1],"data_offsets":[4,12]}})",
                                        floats({1, 2, 3}));
    EXPECT_TRUE(contains(error_of(bytes), {"tensor 'ids'", "unsupported dtype I64", "F32, F16 or BF16"}));
    SafetensorsReadOptions skip_ids;
    skip_ids.skip = [](std::string_view n) { return n == "ids"; };
    EXPECT_EQ(error_with(bytes, skip_ids), "<no error>");
    const auto header =
        parse_safetensors_header(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "test");
    ASSERT_EQ(header.size(), 2u);
    EXPECT_EQ(header[1].name, "ids");
    EXPECT_EQ(header[1].dtype, "I64");
    EXPECT_EQ(header[1].shape, (std::vector<int64_t>{1}));
    EXPECT_EQ(header[1].begin, 4u);
    EXPECT_EQ(header[1].end, 12u);
}

TEST(SafetensorsHeader, SpansMustTileTheBufferWithoutHoles) {
    // Hole between two tensors.
    EXPECT_TRUE(contains(error_of(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                            R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                                            floats({1, 2, 3}))),
                         {"bytes [4, 8)", "before tensor 'b'", "no holes"}));
    // Hole at the start.
    EXPECT_TRUE(contains(
        error_of(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", floats({1, 2}))),
        {"bytes [0, 4)", "before tensor 'a'"}));
    // Bytes after the last tensor.
    EXPECT_TRUE(contains(
        error_of(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", floats({1, 2}))),
        {"buffer has 8 bytes", "cover 4", "trailing"}));
    // Scalars and empty tensors are fine; empty ones may share an offset.
    const WeightMap r = parse(make_file(R"({"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]},)"
                                        R"("e":{"dtype":"F32","shape":[0,3],"data_offsets":[4,4]},)"
                                        R"("f":{"dtype":"F16","shape":[0],"data_offsets":[4,4]}})",
                                        floats({7})));
    EXPECT_EQ(r.at("s").data, (std::vector<float>{7}));
    EXPECT_EQ(r.at("e").numel(), 0);
    EXPECT_EQ(r.at("e").shape, (std::vector<int64_t>{0, 3}));
}

TEST(SafetensorsHeader, ByteCountsAreOverflowSafeAndCountBits) {
    // 2^32 * 2^32 * 4 bytes does not fit 64 bits; a wrapping multiplication would make it 0 and "match".
    EXPECT_TRUE(contains(error_of(make_file(R"({"x":{"dtype":"F32","shape":[4294967296,4294967296],)"
                                            R"("data_offsets":[0,0]}})",
                                            "")),
                         {"tensor 'x'", "(4294967296, 4294967296)", "64 bits"}));
    // Sub-byte dtypes: 3 F4 values are 12 bits, not whole bytes; 4 are 2 bytes (header fine, not decodable).
    EXPECT_TRUE(contains(error_of(make_file(R"({"x":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})",
                                            std::string(2, '\0'))),
                         {"tensor 'x'", "12 bits"}));
    const std::string f4 = make_file(R"({"x":{"dtype":"F4","shape":[4],"data_offsets":[0,2]}})", std::string(2, '\0'));
    EXPECT_EQ(parse_safetensors_header(reinterpret_cast<const uint8_t*>(f4.data()), f4.size()).size(), 1u);
    EXPECT_TRUE(contains(error_of(f4), {"unsupported dtype F4"}));
    EXPECT_EQ(safetensors_dtype_bits("F6_E2M3"), 6);
    EXPECT_EQ(safetensors_dtype_bits("C64"), 64);
    EXPECT_EQ(safetensors_dtype_bits("f32"), 0);
}

TEST(SafetensorsHeader, DuplicateTensorNameIsRefused) {
    const std::string h = R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                          R"("x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
    EXPECT_TRUE(contains(error_of(make_file(h, floats({1, 2}))), {"tensor 'x'", "appears twice"}));
}

TEST(SafetensorsHeader, HeaderOnlyReadOfAFile) {
    WeightMap w;
    w.emplace("b", Tensor({2, 2}, {1, 2, 3, 4}));
    w.emplace("a", Tensor({3}, {5, 6, 7}));
    const auto path = std::filesystem::temp_directory_path() / "ts_header_only.safetensors";
    save_safetensors(path, w, {{"format", "pt"}});
    std::map<std::string, std::string> meta;
    const auto header = load_safetensors_header(path, &meta);
    ASSERT_EQ(header.size(), 2u);  // sorted by offset; the writer lays tensors out in name order
    EXPECT_EQ(header[0].name, "a");
    EXPECT_EQ(header[0].shape, (std::vector<int64_t>{3}));
    EXPECT_EQ(header[1].name, "b");
    EXPECT_EQ(header[1].begin, 12u);
    EXPECT_EQ(header[1].end, 28u);
    EXPECT_EQ(meta.at("format"), "pt");
    std::filesystem::remove(path);
}

// --- non-finite values ------------------------------------------------------------------------------------------

TEST(SafetensorsNonfinite, CountedWhileDecodingUnderTheFileName) {
    // F32 tensor longer than one decode block, with a NaN and a -Inf far in; F16 with +Inf (0x7c00) and NaN
    // (0x7e00); BF16 all finite.
    std::vector<float> big(10000, 0.5f);
    big[9000] = NAN;
    big[9999] = -INFINITY;
    std::string big_bytes(big.size() * 4, '\0');
    std::memcpy(big_bytes.data(), big.data(), big_bytes.size());
    const std::string f16("\x00\x3c\x00\x7c\x00\x7e", 6);
    const std::string bf16("\x80\x3f", 2);
    const std::string h = R"({"big":{"dtype":"F32","shape":[100,100],"data_offsets":[0,40000]},)"
                          R"("h":{"dtype":"F16","shape":[3],"data_offsets":[40000,40006]},)"
                          R"("b":{"dtype":"BF16","shape":[1],"data_offsets":[40006,40008]}})";
    const std::string bytes = make_file(h, big_bytes + f16 + bf16);
    std::vector<NonfiniteTensor> found;
    SafetensorsReadOptions opt;
    opt.nonfinite = &found;
    const WeightMap w =
        parse_safetensors(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "test", opt);
    EXPECT_TRUE(std::isnan(w.at("big").data[9000]));
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0].name, "big");
    EXPECT_EQ(found[0].shape, (std::vector<int64_t>{100, 100}));
    EXPECT_EQ(found[0].count.nan, 1);
    EXPECT_EQ(found[0].count.neg_inf, 1);
    EXPECT_EQ(found[0].count.pos_inf, 0);
    EXPECT_EQ(found[0].count.first_index, 9000);
    EXPECT_EQ(found[1].name, "h");
    EXPECT_EQ(found[1].count.pos_inf, 1);
    EXPECT_EQ(found[1].count.nan, 1);
    EXPECT_EQ(found[1].count.first_index, 1);
    EXPECT_TRUE(contains(describe(found[0]), {"tensor 'big'", "(100, 100)", "2 non-finite values", "1 NaN",
                                              "1 -Inf", "flat index 9000"}));
    // find_nonfinite over a decoded map agrees.
    const auto again = find_nonfinite(w);
    ASSERT_EQ(again.size(), 2u);
    EXPECT_EQ(again[0].name, "big");  // name order
    EXPECT_EQ(again[0].count.total(), 2);
    EXPECT_EQ(again[1].count.first_index, 1);
}

TEST(SafetensorsNonfinite, ScanAcrossBlocksKeepsTheFirstIndex) {
    const std::vector<float> a = {1, 2, INFINITY}, b = {NAN, 3};
    NonfiniteCount c;
    c.scan(a.data(), 3, 0);
    c.scan(b.data(), 2, 3);
    EXPECT_EQ(c.first_index, 2);
    EXPECT_EQ(c.pos_inf, 1);
    EXPECT_EQ(c.nan, 1);
    EXPECT_EQ(c.total(), 2);
    NonfiniteCount clean;
    clean.scan(b.data() + 1, 1, 4);
    EXPECT_EQ(clean.total(), 0);
    EXPECT_EQ(clean.first_index, -1);
}

TEST(Safetensors, MissingFileNamesThePath) {
    try {
        (void)load_safetensors("/nonexistent/dir/model.safetensors");
        FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/model.safetensors"), std::string::npos);
    }
}

// --- ModelConfig ----------------------------------------------------------------------------------------------

std::string validation_error(const ModelConfig& c) {
    try {
        c.validate();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "<valid>";
}

TEST(ModelConfig, ValidateNamesTheField) {
    ModelConfig c;
    EXPECT_EQ(validation_error(c), "<valid>");
    c.d_model = 100;
    c.n_heads = 3;
    EXPECT_EQ(validation_error(c), "d_model (100) must be divisible by n_heads (3)");
    c = ModelConfig{};
    c.n_heads = 4;
    c.n_kv_heads = 3;
    EXPECT_EQ(validation_error(c), "n_heads (4) must be divisible by n_kv_heads (3)");
    c = ModelConfig{};
    c.position = PositionKind::RoPE;
    c.d_model = 12;
    c.n_heads = 4;
    c.n_kv_heads = 4;
    EXPECT_NE(validation_error(c).find("RoPE needs an even d_head"), std::string::npos);
    c = ModelConfig{};
    c.arch = Arch::EncoderDecoder;
    c.n_enc_layers = 0;
    EXPECT_NE(validation_error(c).find("n_enc_layers"), std::string::npos);
    c = ModelConfig{};
    c.vocab_size = 0;
    EXPECT_NE(validation_error(c).find("vocab_size"), std::string::npos);
}

TEST(ModelConfig, JsonRoundTripAndErrors) {
    ModelConfig c;
    c.arch = Arch::EncoderDecoder;
    c.n_enc_layers = 3;
    c.norm = NormKind::RMSNorm;
    c.activation = Activation::SwiGLU;
    c.position = PositionKind::RoPE;
    c.rope_layout = RopeLayout::Interleaved;
    c.rope_theta = 500000.0f;
    c.n_kv_heads = 2;
    const nlohmann::json j = c;
    const ModelConfig r = j.get<ModelConfig>();
    EXPECT_EQ(nlohmann::json(r), j);

    nlohmann::json bad = j;
    bad["activation"] = "mish";
    try {
        (void)bad.get<ModelConfig>();
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("'activation' has unknown value 'mish'"), std::string::npos);
    }
    bad = j;
    bad["d_model"] = "64";
    EXPECT_THROW((void)bad.get<ModelConfig>(), std::invalid_argument);
}

TEST(ModelConfig, LoadConfigReportsFileAndField) {
    const auto path = std::filesystem::temp_directory_path() / "ts_bad_config.json";
    std::ofstream(path) << R"({"d_model": 64, "n_heads": 5})";
    try {
        (void)load_config(path);
        FAIL();
    } catch (const std::runtime_error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(path.string()), std::string::npos);
        EXPECT_NE(msg.find("n_heads (5)"), std::string::npos);
    }
    std::filesystem::remove(path);
}

TEST(ModelConfig, AbsurdSizesAreRejectedNamingTheField) {
    ModelConfig c;
    c.d_model = 1000000000;
    c.n_heads = 4;
    EXPECT_EQ(validation_error(c), "d_model (1000000000) exceeds the limit 1048576");
    c = ModelConfig{};
    c.n_layers = 100000;
    EXPECT_EQ(validation_error(c), "n_layers (100000) exceeds the limit 16384");
    c = ModelConfig{};
    c.d_ff = 1 << 30;
    EXPECT_EQ(validation_error(c), "d_ff (1073741824) exceeds the limit 1048576");
    c = ModelConfig{};
    c.vocab_size = 1 << 30;
    EXPECT_EQ(validation_error(c), "vocab_size (1073741824) exceeds the limit 16777216");
    c = ModelConfig{};
    c.max_seq_len = 1 << 30;
    EXPECT_EQ(validation_error(c), "max_seq_len (1073741824) exceeds the limit 16777216");
    // Each size within its limit, together far beyond 1e12 parameters: the message names the sizes.
    c = ModelConfig{};
    c.d_model = 1 << 20;
    c.d_ff = 1 << 20;
    c.n_layers = 100;
    const std::string msg = validation_error(c);
    for (const char* part : {"parameters", "d_model 1048576", "d_ff 1048576", "n_layers 100", "1000000000000"})
        EXPECT_NE(msg.find(part), std::string::npos) << msg;
    c = ModelConfig{};
    c.norm_eps = INFINITY;
    EXPECT_NE(validation_error(c).find("norm_eps must be a finite number"), std::string::npos);
}

TEST(ModelConfig, ParameterCountSaturatesInsteadOfOverflowing) {
    ModelConfig c;  // not validated: the count must still be defined
    c.d_model = 1 << 30;
    c.n_heads = 1;
    c.n_kv_heads = 1;
    c.d_ff = 1 << 30;
    c.n_layers = 1 << 30;
    EXPECT_EQ(c.parameter_count(), INT64_MAX);
    c.n_heads = 0;
    EXPECT_EQ(c.parameter_count(), 0);
}

TEST(ModelConfig, IntegersBeyond32BitsAreNotTruncated) {
    // 2^40 would become 0 through a silent int conversion; the message must show what the file says.
    try {
        (void)parse_config_json(R"({"vocab_size": 1099511627776})", "cfg.json");
        FAIL() << "no error";
    } catch (const std::runtime_error& e) {
        EXPECT_TRUE(contains(e.what(), {"cfg.json", "vocab_size", "32 bits", "1099511627776"}));
    }
    try {
        (void)parse_config_json(R"({"d_model": 1000000000, "n_heads": 4})", "cfg.json");
        FAIL() << "no error";
    } catch (const std::runtime_error& e) {
        EXPECT_TRUE(contains(e.what(), {"cfg.json", "d_model (1000000000) exceeds the limit"}));
    }
}

TEST(ModelConfig, SwiGLUWithTwoThirdsDffMatchesMlpParameterCount) {
    // Shazeer 2020: a gated FFN with d_ff = 8/3 d_model has about the parameters of a 4 d_model MLP.
    ModelConfig mlp;
    mlp.d_model = 768;
    mlp.d_ff = 4 * 768;
    mlp.ffn_bias = false;
    mlp.activation = Activation::GELU;
    ModelConfig glu = mlp;
    glu.activation = Activation::SwiGLU;
    glu.d_ff = 8 * 768 / 3;  // 2048
    const double ratio = double(glu.parameter_count()) / double(mlp.parameter_count());
    EXPECT_NEAR(ratio, 1.0, 1e-3);
}

}  // namespace
}  // namespace ts
