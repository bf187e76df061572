// GGUF "t5" vocabularies (llama.cpp's UGM tokenizer: SentencePiece unigram) as a SentencePiece ModelProto run by
// libsentencepiece, like the "llama" kind. llama.cpp's converter (conversion/t5.py, T5Model.set_vocab) copies the
// pieces, scores, piece types and the normalizer spec (add_dummy_prefix, remove_extra_whitespaces,
// precompiled_charsmap) of spiece.model into tokenizer.ggml.*; this puts them back.
#include "core/formats/gguf.h"
#include "core/tokenizer/gguf_vocab_detail.h"
#include "core/tokenizer/text_tokenizer.h"

#include <algorithm>

namespace ts::gguf_vocab_detail {
namespace {

/// tokenizer.ggml.precompiled_charsmap (an array of u8 or i8, as llama.cpp accepts) as bytes; empty when absent.
std::string precompiled_charsmap(const GgufHeader& h, const std::string& what) {
    const char* key = "tokenizer.ggml.precompiled_charsmap";
    const GgufValue* v = h.find(key);
    if (!v) return {};
    if (v->type != GgufValueType::Array || (v->elem != GgufValueType::U8 && v->elem != GgufValueType::I8))
        fail(what,
             std::string("metadata '") + key + "' has the wrong type (" + v->describe() + "; array of u8 expected)");
    std::string blob;
    blob.reserve(v->numbers.size());
    for (double x : v->numbers) blob += char(uint8_t(int(x)));
    // llama.cpp's own checks (llama_vocab::impl::load); the trie itself is checked before libsentencepiece reads it.
    uint32_t trie_bytes = 0;
    for (size_t i = 0; i < 4 && i < blob.size(); ++i) trie_bytes |= uint32_t(uint8_t(blob[i])) << (8 * i);
    if (blob.size() < 4 || uint64_t(trie_bytes) + 4 >= blob.size())
        fail(what,
             std::string("metadata '") + key + "' is too short for the trie size it declares (" +
                 std::to_string(blob.size()) + " bytes)");
    return blob;
}

}  // namespace

/// A "t5" GGUF vocabulary as a SentencePiece unigram ModelProto (pieces with tokenizer.ggml.scores and token_type;
/// normalizer_spec with tokenizer.ggml.precompiled_charsmap, add_space_prefix and remove_extra_whitespaces, both
/// false when absent, as in llama_vocab::impl::load) run by libsentencepiece, whose unigram Viterbi
/// (EncodeOptimized) is the one llm_tokenizer_ugm_session::tokenize reimplements: same scores, unknown = lowest
/// normal score - 10, consecutive unknowns fused.
/// Special tokens: unknown = tokenizer.ggml.unknown_token_id, else the token of type 2; EOS = eos_token_id, else a
/// control token "</s>"; BOS = bos_token_id; pad = padding_token_id, else a control token "<pad>". add_special_tokens
/// adds BOS per tokenizer.ggml.add_bos_token (default false) and EOS per add_eos_token (default true), llama.cpp's
/// UGM defaults. Byte fallback only when all 256 byte pieces (type 6) exist, as SentencePiece trained the model:
/// llama.cpp's UGM tokenizer never falls back to bytes (an unknown character is the unknown token there), which
/// only matters for such vocabularies (T5's have no byte pieces). Fewer byte pieces are kept unmatched, as llama.cpp
/// keeps them, by retyping them control pieces (libsentencepiece refuses byte pieces without byte fallback).
/// Throws "<what>: <problem>" for a token holding a NUL character, a missing unknown token, a special id out of
/// range or on the unknown token, a BOS or EOS that is added but missing, scores / token_type of another length than
/// the tokens, a token type outside 1..6, or a malformed character map.
std::shared_ptr<const TextTokenizer> t5_tokenizer(const GgufHeader& h, const std::vector<std::string>& tokens,
                                                  const std::vector<double>& types, const std::string& what) {
    const size_t n = tokens.size();
    const GgufValue* scores = find_typed(h, "tokenizer.ggml.scores", GgufValueType::Array, GgufValueType::F32, what);
    if (scores && scores->numbers.size() != n)
        fail(what,
             "tokenizer.ggml.scores has " + std::to_string(scores->numbers.size()) + " entries for " +
                 std::to_string(n) + " tokens");
    if (!types.empty() && types.size() != n)
        fail(what,
             "tokenizer.ggml.token_type has " + std::to_string(types.size()) + " entries for " + std::to_string(n) +
                 " tokens");
    std::vector<int> type(n, kNormal);
    for (size_t i = 0; i < types.size(); ++i) {
        if (types[i] < double(kNormal) || types[i] > double(kByte))
            fail(what,
                 "token " + std::to_string(i) + " has token type " + std::to_string(int64_t(types[i])) +
                     " (1 to 6 expected)");
        type[i] = int(types[i]);
    }
    const auto control_spelled = [&](std::string_view s) -> std::optional<int> {
        for (size_t i = 0; i < n; ++i)
            if (type[i] == kControl && tokens[i] == s) return int(i);
        return std::nullopt;
    };
    std::optional<int> unk = token_id_key(h, "tokenizer.ggml.unknown_token_id", n, what);
    for (size_t i = 0; i < n && !unk; ++i)
        if (type[i] == kUnknown) unk = int(i);
    if (!unk)
        fail(what, "a \"t5\" vocabulary needs an unknown token (tokenizer.ggml.unknown_token_id or a token of type 2)");
    std::optional<int> eos = token_id_key(h, "tokenizer.ggml.eos_token_id", n, what);
    if (!eos) eos = control_spelled("</s>");
    const std::optional<int> bos = token_id_key(h, "tokenizer.ggml.bos_token_id", n, what);
    std::optional<int> pad = token_id_key(h, "tokenizer.ggml.padding_token_id", n, what);
    if (!pad) pad = control_spelled("<pad>");
    const bool add_bos = flag(h, "tokenizer.ggml.add_bos_token", false);
    const bool add_eos = flag(h, "tokenizer.ggml.add_eos_token", true);
    if (add_bos && !bos) fail(what, "tokenizer.ggml.add_bos_token is true but there is no tokenizer.ggml.bos_token_id");
    if (add_eos && !eos)
        fail(what,
             "tokenizer.ggml.add_eos_token is true (the default) but there is no tokenizer.ggml.eos_token_id "
             "nor a control token </s>");
    for (const auto& [role, id] : {std::pair{"bos", bos}, {"eos", eos}, {"padding", pad}})
        if (id && *id == *unk)
            fail(what,
                 std::string("tokenizer.ggml.") + role + "_token_id is the unknown token (" + std::to_string(*unk) +
                     ")");
    // libsentencepiece wants exactly one unknown piece and control pieces for its BOS / EOS / pad; llama.cpp
    // matches neither unknown nor control tokens in text, so these retypings change no encoding.
    for (int& t : type)
        if (t == kUnknown) t = kControl;
    type[size_t(*unk)] = kUnknown;
    for (const auto& id : {bos, eos, pad})
        if (id) type[size_t(*id)] = kControl;
    const bool byte_fallback = std::count(type.begin(), type.end(), int(kByte)) == 256;
    if (!byte_fallback)
        for (int& t : type)
            if (t == kByte) t = kControl;

    std::vector<std::string> pieces(n);
    std::vector<float> piece_scores(n);
    for (size_t i = 0; i < n; ++i) {
        // libsentencepiece's unigram trie (Darts) aborts the process on a key holding a NUL: refused here.
        if (tokens[i].find('\0') != std::string::npos)
            fail(what,
                 "token " + std::to_string(i) +
                     " of tokenizer.ggml.tokens contains a NUL character, which a "
                     "unigram vocabulary cannot hold");
        // llama.cpp renames an empty token (libsentencepiece would refuse it)
        pieces[i] = tokens[i].empty() ? "[EMPTY_" + std::to_string(i) + "]" : tokens[i];
        piece_scores[i] = scores ? float(scores->numbers[i]) : 0.0f;
    }
    SentencePieceSpec spec;
    spec.model_type = 1;  // UNIGRAM
    spec.byte_fallback = byte_fallback;
    spec.unk = *unk;
    spec.bos = bos.value_or(-1);
    spec.eos = eos.value_or(-1);
    spec.pad = pad.value_or(-1);
    spec.charsmap = precompiled_charsmap(h, what);
    spec.add_space_prefix = flag(h, "tokenizer.ggml.add_space_prefix", false);
    spec.remove_extra_whitespaces = flag(h, "tokenizer.ggml.remove_extra_whitespaces", false);
    return parse_sentencepiece_model(sentencepiece_model_proto(pieces, piece_scores, type, spec), add_bos, add_eos,
                                     what + " (tokenizer.ggml, t5)");
}

}  // namespace ts::gguf_vocab_detail
