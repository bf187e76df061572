// Half-precision weights kept as stored (issue #14): a BF16 / F16 checkpoint loads with its matrices in 16 bits
// (about the file's size), the products widen them block by block, and every traced value equals the forward of
// the same weights widened to float32 at load, within the family tolerance (1e-5).
#include "core/model/half.h"
#include "core/formats/hf_checkpoint.h"
#include "core/formats/safetensors.h"
#include "core/kernels/threads.h"
#include "tests/test_util.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <set>

namespace ts {
namespace {

namespace fs = std::filesystem;

uint16_t to_bf16(float f) {  // round to nearest even (NaN-free weights)
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return uint16_t((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

uint16_t to_f16(float f) {  // normal range only (test weights are small, not tiny): round to nearest even
    uint32_t b;
    std::memcpy(&b, &f, 4);
    const uint32_t sign = (b >> 16) & 0x8000u;
    const int32_t exp = int32_t((b >> 23) & 0xffu) - 127 + 15;
    if (exp <= 0) return uint16_t(sign);  // flush to zero
    uint32_t mant = b & 0x7fffffu;
    uint32_t h = sign | (uint32_t(exp) << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return uint16_t(h);
}

/// Rewrites every safetensors file of a copied fixture folder with its float tensors as `dtype` (BF16 or F16).
void convert_folder(const fs::path& src, const fs::path& dst, const std::string& dtype) {
    fs::create_directories(dst);
    for (const auto& e : fs::directory_iterator(src)) {
        const std::string name = e.path().filename().string();
        if (name == "expected.safetensors") continue;
        if (e.path().extension() != ".safetensors") {
            fs::copy_file(e.path(), dst / name);
            continue;
        }
        std::set<std::string, std::less<>> floats;  // GPT-2's BOOL attn.bias buffers are left out (the loader skips them)
        for (const SafetensorsTensorInfo& t : load_safetensors_header(e.path()))
            if (t.dtype == "F32" || t.dtype == "F16" || t.dtype == "BF16") floats.insert(t.name);
        SafetensorsReadOptions read;
        read.skip = [&](std::string_view n) { return !floats.count(n); };
        const WeightMap w = load_safetensors(e.path(), read);
        nlohmann::json header = nlohmann::json::object();
        std::string data;
        for (const auto& [tname, t] : w) {
            header[tname] = {{"dtype", dtype}, {"shape", t.shape}, {"data_offsets", {data.size(), data.size() + 2 * t.numel()}}};
            for (float v : t.data) {
                const uint16_t h = dtype == "BF16" ? to_bf16(v) : to_f16(v);
                data.append(reinterpret_cast<const char*>(&h), 2);
            }
        }
        std::string h = header.dump();
        while (h.size() % 8) h += ' ';
        std::ofstream out(dst / name, std::ios::binary);
        const uint64_t n = h.size();
        out.write(reinterpret_cast<const char*>(&n), 8);
        out << h << data;
    }
}

size_t stored_bytes(const Model& m) {
    size_t b = 0;
    for (const auto& [name, t] : m.stored_weights())
        b += t.is_half() ? t.half.size() * 2 : (t.data.size() + t.panels.size()) * 4;  // float32 rows or panels
    return b;
}

class HalfWeights : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(HalfWeights, KeptAsStoredGiveTheTraceOfWidenedWeights) {
    const auto [fixture, dtype] = GetParam();
    const test::TempDir tmp("ts_half_test");
    convert_folder(test::golden_path(fixture), tmp.path, dtype);
    HfLoadOptions widen;
    widen.keep_half = false;
    const auto f32 = load_hf_model(tmp.path, widen);
    const auto half = load_hf_model(tmp.path);  // default: keep half
    EXPECT_FALSE(f32->has_half_weights());
    ASSERT_TRUE(half->has_half_weights());
    EXPECT_TRUE(half->stored_weight("dec.0.attn.wq").is_half());
    EXPECT_TRUE(half->stored_weight("dec.0.attn.wq").in_panels());  // multiplied without a widened copy
    EXPECT_TRUE(half->stored_weight("tok_emb.weight").is_half());
    EXPECT_FALSE(half->stored_weight("dec.0.attn_norm.weight").is_half());  // vectors are widened at load
    // Matrices in 16 bits: the model holds a little over half of the float32 model's bytes.
    EXPECT_LT(double(stored_bytes(*half)), 0.56 * double(stored_bytes(*f32)));

    const std::vector<int> ids = {1, 5, 9, 2, 7, 3, 8, 4, 6, 0, 11, 13};
    ForwardOptions opt;
    opt.capture = CaptureFilter::all();
    for (int threads : {1, 2}) {
        set_compute_threads(threads);
        const ForwardResult a = forward(*half, ids, opt);
        set_compute_threads(1);
        const ForwardResult b = forward(*f32, ids, opt);
        ASSERT_EQ(a.trace->names(), b.trace->names());
        for (const std::string& n : b.trace->names()) {
            const Tensor& x = a.trace->at(n);
            const Tensor& y = b.trace->at(n);
            ASSERT_EQ(x.shape, y.shape) << n;
            for (size_t i = 0; i < y.data.size(); ++i) {
                if (x.data[i] != y.data[i]) {  // equal infinities of masked scores agree
                    ASSERT_NEAR(x.data[i], y.data[i], 1e-5 * std::max(1.0f, std::abs(y.data[i])))
                        << fixture << " " << dtype << " " << n << " [" << i << "] threads " << threads;
                }
            }
        }
    }
    // The float32 view widens exactly, on demand, and agrees with the stored bits.
    const Tensor& wq = half->weight("dec.0.attn.wq");
    EXPECT_FALSE(wq.is_half());
    EXPECT_TRUE(test::allclose(wq, f32->weight("dec.0.attn.wq"), 0.0f, 0.0f));
}

INSTANTIATE_TEST_SUITE_P(Families, HalfWeights,
                         ::testing::Combine(::testing::Values("hf_gpt2", "hf_qwen2", "hf_llama"),
                                            ::testing::Values("BF16", "F16")));

TEST(HalfWeights, PanelProductEqualsTheWidenedProductAcrossPanelEdgesAndThreads) {
    // 300 output rows: two full 128-row panels and a partial one.
    const int O = 300, I = 70, N = 5;
    Tensor w;
    w.shape = {O, I};
    w.storage = Storage::BF16;
    for (int i = 0; i < O * I; ++i) w.half.push_back(to_bf16(std::sin(0.37f * float(i)) * 0.5f));
    const Tensor wf = to_f32(w);
    MatrixRM x(N, I);
    for (int i = 0; i < N * I; ++i) x.data()[i] = std::cos(0.11f * float(i));
    const MatrixRM expected = x * wf.mat().transpose();
    for (int threads : {1, 2}) {
        set_compute_threads(threads);
        MatrixRM out;
        matmul_weight_t(x, w, out);
        EXPECT_TRUE(test::allclose(out, expected, 1e-5f, 1e-5f)) << threads << " threads";
    }
    set_compute_threads(1);
}

// Half-precision panels (the model's storage for half-precision matrices) widen exactly as they are loaded, so the
// product equals the float32 panels of the widened weight bit for bit: native and portable kernels, 1 and 2
// threads, panel edges (O = 70: two full panels and 6 rows), inner sums past one 256-deep block (I = 300).
TEST(HalfWeights, HalfPanelsMultiplyLikeTheFloat32PanelsOfTheWidenedWeight) {
    const int O = 70, I = 300;
    for (const Storage kind : {Storage::BF16, Storage::F16}) {
        Tensor w;
        w.shape = {O, I};
        w.storage = kind;
        for (int i = 0; i < O * I; ++i) {
            const float v = std::sin(0.37f * float(i)) * 0.5f;
            w.half.push_back(kind == Storage::BF16 ? to_bf16(v) : to_f16(v));
        }
        const Tensor wf = to_f32(w);
        const Tensor hp = pack_panels(w), fp = pack_panels(wf);
        ASSERT_EQ(hp.storage, kind == Storage::BF16 ? Storage::BF16Panels : Storage::F16Panels);
        EXPECT_TRUE(hp.is_half());
        EXPECT_EQ(hp.numel(), O * I);
        EXPECT_EQ(hp.half.size(), size_t(96 * I));  // 16 bits a value, the last panel padded to 32 rows
        EXPECT_EQ(to_f32(hp).data, wf.data);
        std::vector<float> row(static_cast<size_t>(I));
        panel_row(hp, 69, row.data());
        EXPECT_EQ(row, std::vector<float>(wf.data.begin() + 69 * I, wf.data.end()));
        for (int N : {1, 5, 13, 40}) {
            MatrixRM x(N, I);
            for (int i = 0; i < N * I; ++i) x.data()[i] = std::cos(0.11f * float(i));
            MatrixRM want, portable, half_portable;
            matmul_panels(x, fp, want, 1);
            detail::matmul_panels_portable(x, fp, portable);
            detail::matmul_panels_portable(x, hp, half_portable);
            EXPECT_TRUE(test::allclose(half_portable, portable, 0.0f, 0.0f)) << N;
            for (int threads : {1, 2}) {
                MatrixRM out;
                matmul_panels(x, hp, out, threads);
                ASSERT_EQ(out.rows(), N);
                EXPECT_TRUE(test::allclose(out, want, 0.0f, 0.0f)) << N << " rows, " << threads << " threads";
            }
            const MatrixRM expected = x * wf.mat().transpose();
            EXPECT_TRUE(test::allclose(want, expected, 1e-5f, 1e-5f)) << N;
        }
    }
}

TEST(HalfWeights, WidenHalfMatchesTheScalarConversions) {
    std::vector<uint16_t> bits;
    for (uint32_t v = 0; v < 65536; v += 7) bits.push_back(uint16_t(v));
    for (const Storage kind : {Storage::F16, Storage::BF16}) {
        std::vector<float> out(bits.size());
        widen_half(bits.data(), kind, out.data(), bits.size());
        for (size_t i = 0; i < bits.size(); ++i) {
            const float e = kind == Storage::F16 ? f16_to_f32(bits[i]) : bf16_to_f32(bits[i]);
            if (std::isnan(e)) EXPECT_TRUE(std::isnan(out[i])) << i;
            else EXPECT_EQ(out[i], e) << "bits " << bits[i];
        }
    }
}

}  // namespace
}  // namespace ts
