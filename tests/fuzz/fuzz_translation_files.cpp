// libFuzzer target for a translation model folder's small files: translation.json (first byte odd) resolved against
// a fixed byte-level tokenizer with the usual special tokens, and examples.tsv (first byte even). translation.json
// must load or give std::runtime_error; every resolved id must be a token of the tokenizer; every example pair read
// has two non-empty, valid UTF-8 sides without tabs or newlines.
#include "app/session/seq2seq.h"
#include "app/session/text_codec.h"
#include "core/forward/decode.h"
#include "core/tokenizer/bpe.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string_view>

namespace {

const ts::Tokenizer& tokenizer() {
    static const ts::Tokenizer tok = [] {
        std::vector<std::string> vocab;
        for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, char(b)));
        std::vector<ts::AddedToken> added;
        for (const char* s : {"<pad>", "<s>", "</s>", "<2en>", "<2zh>"})
            added.push_back({int32_t(vocab.size() + added.size()), s, true});
        return ts::Tokenizer(vocab, {}, added);
    }();
    return tok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    if (data[0] & 1) {
        try {
            const ts::TranslationSpec spec = ts::parse_translation_spec(text, tokenizer(), "fuzz_translation.json");
            const auto ok = [](int id) { return id >= 0 && size_t(id) < tokenizer().vocab_size(); };
            if (!ok(spec.pad_id) || !ok(spec.decoder_start_id) || !ok(spec.source_end_id) || !ok(spec.target_end_id))
                __builtin_trap();
            for (const auto& [lang, id] : spec.target_language_ids)
                if (!ok(id)) __builtin_trap();
        } catch (const std::runtime_error&) {
        }
        return 0;
    }
    for (const ts::studio::ExamplePair& p : ts::studio::parse_example_pairs(text)) {
        if (p.en.empty() || p.zh.empty() || !ts::studio::is_valid_utf8(p.en) || !ts::studio::is_valid_utf8(p.zh))
            __builtin_trap();
        for (const std::string* s : {&p.en, &p.zh})
            if (s->find('\t') != std::string::npos || s->find('\n') != std::string::npos) __builtin_trap();
    }
    return 0;
}
