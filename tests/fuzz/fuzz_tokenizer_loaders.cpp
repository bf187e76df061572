// libFuzzer target for the tokenizer loaders: bytes -> parse_tokenizer_json or parse_gpt2_tokenizer (vocab.json and
// merges.txt separated by the first NUL byte). Malformed input must give std::runtime_error, nothing else; a
// tokenizer that loads must round-trip the input through encode/decode byte-exactly with tiling spans.
#include "core/tokenizer/tokenizer_io.h"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

namespace {

void check_tokenizer(const ts::Tokenizer& tok, std::string_view text) {
    const ts::Encoding enc = tok.encode(text);
    if (tok.decode(enc.ids) != text) __builtin_trap();
    size_t pos = 0;
    for (const ts::TokenSpan& s : enc.spans) {
        if (s.byte_begin != pos || s.byte_end <= s.byte_begin || s.char_end <= s.char_begin) __builtin_trap();
        pos = s.byte_end;
    }
    if (pos != text.size()) __builtin_trap();
    for (size_t i = 0; i < tok.vocab_size() && i < 64; ++i)
        if (!tok.vocab()[i].empty()) (void)tok.merge_steps(tok.vocab()[i]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        std::shared_ptr<const ts::Tokenizer> tok;
        if (data[0] & 1) {
            tok = ts::parse_tokenizer_json(in, "fuzz.json");
        } else {
            const size_t nul = in.find('\0');
            const std::string_view vocab = in.substr(0, nul);
            const std::string_view merges = nul == std::string_view::npos ? std::string_view() : in.substr(nul + 1);
            tok = ts::parse_gpt2_tokenizer(vocab, merges, "fuzz_vocab.json", "fuzz_merges.txt");
        }
        check_tokenizer(*tok, in.substr(0, 256));
    } catch (const std::runtime_error&) {
        // expected for malformed input (and for encode() when the vocabulary lacks a byte)
    }
    return 0;
}
