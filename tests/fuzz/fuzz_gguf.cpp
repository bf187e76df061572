// libFuzzer target: the GGUF header parser on arbitrary bytes, then what a loader does with a header it accepted:
// the HF config the metadata stands for, the tokenizer in its metadata, and the dequantization of every tensor
// (the parser guarantees each tensor's bytes lie inside the input, so reading them must stay in bounds). Any
// exception other than the documented std::runtime_error (or a crash / sanitizer report) is a bug.
#include "core/formats/gguf.h"
#include "core/formats/gguf_model.h"
#include "core/tokenizer/text_tokenizer.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    ts::GgufHeader h;
    try {
        h = ts::parse_gguf_header(data, size, "fuzz");
    } catch (const std::runtime_error&) {
        return 0;
    }
    if (h.data_offset > size) std::abort();
    for (const ts::GgufTensorInfo& t : h.tensors) {
        if (h.data_offset + t.offset + t.bytes > size) std::abort();
        const auto type = ts::ggml_type_info(t.type);
        if (!type || !type->decodable || t.numel() > (1 << 16)) continue;
        std::vector<float> out(size_t(t.numel()));
        ts::ggml_dequantize(ts::GgmlType(t.type), data + h.data_offset + t.offset, t.numel(), out.data());
    }
    try {
        (void)ts::gguf_hf_config(h, "fuzz");
    } catch (const std::runtime_error&) {
    }
    try {
        const ts::GgufValue* tokens = h.find("tokenizer.ggml.tokens");
        if (!tokens || tokens->array_size <= 4096) {  // keep each input fast
            if (const auto tok = ts::parse_gguf_tokenizer(h, "fuzz")) {
                const ts::TextEncoding e = tok->encode("Hello, world! 12345 \xE4\xBD\xA0\xE5\xA5\xBD");
                (void)tok->decode(e.ids);
            }
        }
    } catch (const std::runtime_error&) {
    }
    return 0;
}
