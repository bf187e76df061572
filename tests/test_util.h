// Shared test helpers: element-wise closeness with a report of the first bad index and the max error, and
// golden-fixture loading.
#pragma once

#include "core/model/model_config.h"
#include "core/formats/safetensors.h"
#include "core/model/tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <stdexcept>
#include <system_error>
#include <unistd.h>
#include <sstream>
#include <string>

namespace ts::test {

/// A fresh temporary folder named after `tag`, the process and a counter; removed with everything in it at scope exit.
struct TempDir {
    std::filesystem::path path;
    explicit TempDir(const std::string& tag = "ts_test") {
        static int counter = 0;
        path = std::filesystem::temp_directory_path() /
               (tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
};

/// Asserts |a - e| <= atol + rtol * |e| element-wise; reports first failing index and max abs error.
inline ::testing::AssertionResult allclose(const float* a, const float* e, int64_t n, float atol, float rtol) {
    int64_t first_bad = -1;
    double max_err = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const double err = std::abs(double(a[i]) - double(e[i]));
        const bool bad = !(err <= atol + rtol * std::abs(double(e[i])));  // NaN counts as bad
        if (bad && first_bad < 0) first_bad = i;
        if (err > max_err || std::isnan(err)) max_err = std::isnan(err) ? INFINITY : err;
    }
    if (first_bad < 0) return ::testing::AssertionSuccess() << "max abs err " << max_err;
    std::ostringstream os;
    os << "first mismatch at flat index " << first_bad << ": actual " << a[first_bad] << " expected " << e[first_bad]
       << "; max abs err " << max_err << " (atol " << atol << ", rtol " << rtol << ", n " << n << ")";
    return ::testing::AssertionFailure() << os.str();
}

inline ::testing::AssertionResult allclose(const Tensor& a, const Tensor& e, float atol, float rtol = 0.0f) {
    if (a.numel() != e.numel())
        return ::testing::AssertionFailure() << "size mismatch: actual " << a.shape_str() << " expected "
                                             << e.shape_str();
    return allclose(a.data.data(), e.data.data(), a.numel(), atol, rtol);
}

inline ::testing::AssertionResult allclose(const MatrixRM& a, const MatrixRM& e, float atol, float rtol = 0.0f) {
    if (a.rows() != e.rows() || a.cols() != e.cols())
        return ::testing::AssertionFailure() << "shape mismatch: actual (" << a.rows() << ", " << a.cols()
                                             << ") expected (" << e.rows() << ", " << e.cols() << ")";
    return allclose(a.data(), e.data(), a.size(), atol, rtol);
}

#define EXPECT_ALLCLOSE(actual, expected, atol, rtol) EXPECT_TRUE(::ts::test::allclose(actual, expected, atol, rtol))

inline std::string golden_path(const std::string& file) { return std::string(TS_GOLDEN_DIR) + "/" + file; }

/// Copies the golden fixture folder `name` (without its expected.safetensors) into `dst`.
inline void copy_fixture(const std::string& name, const std::filesystem::path& dst) {
    std::filesystem::create_directories(dst);
    for (const auto& e : std::filesystem::directory_iterator(golden_path(name)))
        if (e.path().filename() != "expected.safetensors") std::filesystem::copy_file(e.path(), dst / e.path().filename());
}

/// The message of the std::runtime_error `f` throws, or "<no error>".
template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "<no error>";
}

/// The message of any std::exception `f` throws, or "<no error>" (f's result, if any, is dropped).
template <class F>
std::string exception_message(F&& f) {
    try {
        (void)f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "<no error>";
}

/// Expects `expr` to throw a std::exception whose message contains `part`.
#define EXPECT_THROW_MSG(expr, part) \
    EXPECT_TRUE(::ts::test::contains(::ts::test::exception_message([&] { return expr; }), {part}))

/// Succeeds when `msg` contains every one of `parts`; else names the first missing part.
inline ::testing::AssertionResult contains(const std::string& msg, std::initializer_list<std::string> parts) {
    for (const auto& p : parts)
        if (msg.find(p) == std::string::npos)
            return ::testing::AssertionFailure() << "message lacks '" << p << "': " << msg;
    return ::testing::AssertionSuccess();
}
inline std::string testdata_path(const std::string& file) { return std::string(TS_TESTDATA_DIR) + "/" + file; }

/// One cell of the config grid (tests/core/model_test.cpp, tests/train/config_grid_test.cpp): `c` with this norm,
/// placement, FFN activation, position kind and KV-head count; qk-norm with 2 KV heads, untied embeddings with 1.
inline ModelConfig config_grid_cell(ModelConfig c, NormKind norm, NormPlacement placement, Activation act,
                                    PositionKind pos, int kv) {
    c.norm = norm;
    c.norm_placement = placement;
    c.activation = act;
    c.position = pos;
    c.n_kv_heads = kv;
    c.qk_norm = kv == 2;
    c.tie_embeddings = kv != 1;
    return c;
}

}  // namespace ts::test
