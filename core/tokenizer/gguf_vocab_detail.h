// Shared by the GGUF tokenizer builders (gguf_vocab.cpp: "gpt2", "llama"; gguf_vocab_wpm.cpp: "bert";
// gguf_vocab_ugm.cpp: "t5"): typed reads of tokenizer.ggml.* keys that fail with one line, llama.cpp's token types,
// and just enough of the protocol-buffer wire format to write a SentencePiece ModelProto.
#pragma once

#include "core/formats/gguf.h"
#include "core/tokenizer/text_tokenizer.h"

#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ts::gguf_vocab_detail {

[[noreturn]] inline void fail(const std::string& what, const std::string& msg) {
    throw std::runtime_error(what + ": " + msg);
}

/// llama.cpp's token types (llama_token_type), the same numbers as SentencePiece's piece types.
enum TokenType { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };

/// The value under key, or null when absent; throws "<what>: metadata '<key>' has the wrong type (...)" when it is
/// not of `type` (for arrays: of elements `elem`, unless empty).
inline const GgufValue* find_typed(const GgufHeader& h, const char* key, GgufValueType type, GgufValueType elem,
                                   const std::string& what) {
    const GgufValue* v = h.find(key);
    if (!v) return nullptr;
    if (v->type != type || (type == GgufValueType::Array && v->elem != elem && v->array_size > 0))
        fail(what, std::string("metadata '") + key + "' has the wrong type (" + v->describe() + ")");
    return v;
}

/// A special token id that may be missing or wrong (the older kinds ignore a bad one, as llama.cpp falls back to
/// its default): -1 then.
inline int special_id(const GgufHeader& h, const char* key, size_t n_tokens) {
    const GgufValue* v = h.find(key);
    if (!v || !v->is_integer() || v->integer < 0 || v->integer >= int64_t(n_tokens)) return -1;
    return int(v->integer);
}

/// A special token id, strictly: nullopt when the key is absent; throws when it is not an integer or names no token.
inline std::optional<int> token_id_key(const GgufHeader& h, const char* key, size_t n_tokens, const std::string& what) {
    const GgufValue* v = h.find(key);
    if (!v) return std::nullopt;
    if (!v->is_integer()) fail(what, std::string("metadata '") + key + "' has the wrong type (" + v->describe() + ")");
    if (v->integer < 0 || v->integer >= int64_t(n_tokens))
        fail(what,
             std::string("metadata '") + key + "' is " + std::to_string(v->integer) +
                 ", not a token id (the vocabulary has " + std::to_string(n_tokens) + " tokens)");
    return int(v->integer);
}

/// A boolean key, or fallback when absent or not a bool (llama.cpp's get_key(..., required = false)).
inline bool flag(const GgufHeader& h, const char* key, bool fallback) {
    const GgufValue* v = h.find(key);
    return v && v->type == GgufValueType::Bool ? v->integer != 0 : fallback;
}

/// Protocol-buffer wire format, just what a ModelProto needs.
struct Proto {
    std::string b;
    void varint(uint64_t v) {
        while (v >= 0x80) {
            b += char(uint8_t(v) | 0x80);
            v >>= 7;
        }
        b += char(uint8_t(v));
    }
    void key(int field, int wire) { varint(uint64_t(field) << 3 | uint64_t(wire)); }
    void integer(int field, int64_t v) {
        key(field, 0);
        varint(uint64_t(v));
    }
    void bytes(int field, std::string_view s) {
        key(field, 2);
        varint(s.size());
        b += s;
    }
    void f32(int field, float v) {
        key(field, 5);
        char c[4];
        std::memcpy(c, &v, 4);
        b.append(c, 4);
    }
};

/// What a SentencePiece ModelProto holds besides its pieces (trainer_spec and normalizer_spec fields).
struct SentencePieceSpec {
    int model_type = 2;  ///< 1 UNIGRAM, 2 BPE
    bool byte_fallback = false;
    int unk = 0, bos = -1, eos = -1, pad = -1;  ///< piece ids (-1: none)
    std::string charsmap;                       ///< precompiled_charsmap; empty: the identity normalizer
    bool add_space_prefix = true, remove_extra_whitespaces = false;
};

/// A serialized SentencePiece ModelProto: pieces[i] with scores[i] and types[i] (SentencePiece's piece types, the
/// same numbers as llama.cpp's), the trainer spec's model type, byte fallback and special pieces (ids and their
/// texts), and a normalizer that escapes spaces as U+2581. For libsentencepiece (parse_sentencepiece_model).
inline std::string sentencepiece_model_proto(const std::vector<std::string>& pieces, const std::vector<float>& scores,
                                             const std::vector<int>& types, const SentencePieceSpec& spec) {
    Proto model;
    for (size_t i = 0; i < pieces.size(); ++i) {
        Proto piece;
        piece.bytes(1, pieces[i]);
        piece.f32(2, scores[i]);
        piece.integer(3, types[i]);
        model.bytes(1, piece.b);
    }
    Proto trainer;
    trainer.integer(3, spec.model_type);
    trainer.integer(35, spec.byte_fallback ? 1 : 0);
    trainer.integer(40, spec.unk);
    trainer.integer(41, spec.bos);
    trainer.integer(42, spec.eos);
    trainer.integer(43, spec.pad);
    trainer.bytes(45, pieces[size_t(spec.unk)]);
    if (spec.bos >= 0) trainer.bytes(46, pieces[size_t(spec.bos)]);
    if (spec.eos >= 0) trainer.bytes(47, pieces[size_t(spec.eos)]);
    if (spec.pad >= 0) trainer.bytes(48, pieces[size_t(spec.pad)]);
    model.bytes(2, trainer.b);
    Proto normalizer;
    normalizer.bytes(1, spec.charsmap.empty() ? "identity" : "precompiled");
    if (!spec.charsmap.empty()) normalizer.bytes(2, spec.charsmap);
    normalizer.integer(3, spec.add_space_prefix ? 1 : 0);
    normalizer.integer(4, spec.remove_extra_whitespaces ? 1 : 0);
    normalizer.integer(5, 1);  // escape_whitespaces: ' ' -> U+2581
    model.bytes(3, normalizer.b);
    return model.b;
}

/// "bert" (llama.cpp's WPM tokenizer), gguf_vocab_wpm.cpp.
std::shared_ptr<const TextTokenizer> bert_tokenizer(const GgufHeader& h, const std::vector<std::string>& tokens,
                                                    const std::vector<double>& types, const std::string& what);
/// "t5" (llama.cpp's UGM tokenizer: SentencePiece unigram), gguf_vocab_ugm.cpp.
std::shared_ptr<const TextTokenizer> t5_tokenizer(const GgufHeader& h, const std::vector<std::string>& tokens,
                                                  const std::vector<double>& types, const std::string& what);

}  // namespace ts::gguf_vocab_detail
