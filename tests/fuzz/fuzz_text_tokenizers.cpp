// libFuzzer target for the tokenizer pipelines of text_tokenizer.h: bytes -> parse_hf_tokenizer_json (first byte
// odd), parse_wordpiece_vocab_txt (first byte 2 mod 4) or parse_sentencepiece_model (0 mod 4). Malformed input must
// give std::runtime_error, nothing else; a tokenizer that loads must encode the input (any bytes) with ordered spans
// inside the text, and decode what it encoded.
#include "core/tokenizer/text_tokenizer.h"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        std::shared_ptr<const ts::TextTokenizer> tok;
        if (data[0] & 1) tok = ts::parse_hf_tokenizer_json(in, "fuzz.json");
        else if (data[0] & 2) tok = ts::parse_wordpiece_vocab_txt(in, (data[0] & 4) != 0, "fuzz_vocab.txt");
        else tok = ts::parse_sentencepiece_model(in, true, true, "fuzz.model");
        const std::string_view text = in.substr(0, 256);
        const ts::TextEncoding e = tok->encode(text);
        if (e.ids.size() != e.spans.size() || e.ids.size() != e.pieces.size()) __builtin_trap();
        size_t prev = 0;
        for (const ts::TokenSpan& s : e.spans) {
            if (s.byte_begin < prev || s.byte_end < s.byte_begin || s.byte_end > text.size()) __builtin_trap();
            prev = s.byte_end;
        }
        (void)tok->decode(e.ids);
    } catch (const std::runtime_error&) {
        // expected for malformed input
    }
    return 0;
}
