// Any model folder's tokenizer behind one interface: byte-level BPE (GPT-2 files or tokenizer.json, the existing
// ts::Tokenizer), the other Hugging Face tokenizer.json pipelines (BPE with byte_fallback + Metaspace, Unigram,
// WordPiece + BertNormalizer), SentencePiece .model files through libsentencepiece, Marian's source.spm /
// target.spm + vocab.json, and BERT's plain vocab.txt. encode() returns ids, the vocabulary pieces and the byte
// span of each piece in the input text; decode() turns ids back into text the way the Hugging Face tokenizer does.
//
// For model-family code:
//   auto tok = ts::find_text_tokenizer(dir);          // nullptr: no tokenizer file (ids-only); throws: broken file
//   ts::TextEncoding e = tok->encode(text);            // ids with the family's special tokens ([CLS] … [SEP], <s>, … </s>)
//   std::optional<int32_t> mask = tok->special_token_id("mask");   // BERT fill-mask; "pad" = T5's decoder start,
//                                                                   // "eos" = BART's decoder start / Marian's end
//   ts::TokenizerPair p = ts::find_tokenizer_pair(dir); // Marian: p.source->encode(src), p.target->decode(ids, true)
// In the app the same object is TextCodec::text_tokenizer() (app/session/text_codec.h).
#pragma once

#include "core/tokenizer/bpe.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ts {

struct GgufHeader;

/// Output of TextTokenizer::encode. All vectors have the same length.
/// spans[i]: the bytes (and characters) of the *input* text that token i stands for. Spans are non-decreasing
/// and never overlap; they need not tile the text: whitespace a pipeline drops (BERT) belongs to no token, and
/// tokens the post-processor inserts ([CLS], <s>, </s>) or a normalizer prepends get an empty span at the
/// position where they stand. A character the normalizer rewrote (lower-cased, accent stripped) belongs whole to
/// the token(s) made from it; byte-fallback tokens of an unchanged character get one byte each.
struct TextEncoding {
    std::vector<int32_t> ids;
    std::vector<std::string> pieces;  ///< vocabulary spelling of each token ("▁the", "##ing", "<0xE4>", "[CLS]")
    std::vector<TokenSpan> spans;
    std::vector<char> special;        ///< 1 for added/special tokens ([CLS], <s>, <|endoftext|>)
};

/// A tokenizer pipeline. Implementations are immutable and thread-safe.
class TextTokenizer {
public:
    virtual ~TextTokenizer() = default;

    /// What this is, for the UI: "WordPiece (vocab.txt, 30522 tokens)", "SentencePiece unigram (spiece.model)".
    [[nodiscard]] virtual std::string description() const = 0;

    /// text (any bytes; invalid UTF-8 never throws) -> tokens. add_special_tokens: apply the folder's
    /// post-processor / BOS-EOS settings ([CLS] … [SEP] for BERT, <s> … for Llama, … </s> for T5 and Marian),
    /// as Hugging Face's tokenizer(text) does by default.
    [[nodiscard]] virtual TextEncoding encode(std::string_view text, bool add_special_tokens = true) const = 0;

    /// ids -> text as Hugging Face's tokenizer.decode(ids, skip_special_tokens) (the pipeline's decoder: byte
    /// fallback, "▁" -> space, "##" joins, ...). Throws std::out_of_range naming the first id outside the vocab.
    [[nodiscard]] virtual std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const = 0;

    /// max id + 1.
    [[nodiscard]] virtual size_t vocab_size() const = 0;
    /// Vocabulary spelling of an id; throws std::out_of_range.
    [[nodiscard]] virtual std::string id_to_piece(int32_t id) const = 0;
    /// Id of a vocabulary spelling (including added tokens), or nullopt.
    [[nodiscard]] virtual std::optional<int32_t> piece_to_id(std::string_view piece) const = 0;
    [[nodiscard]] virtual bool is_special(int32_t id) const = 0;

    /// The id of a special token, by role — "bos", "eos", "unk", "pad", "mask", "cls", "sep" (from
    /// tokenizer_config.json / special_tokens_map.json "<role>_token", else the pipeline's own setting, else the
    /// usual spelling: "[MASK]"/"<mask>", "[CLS]"/"<s>", ...) — or by spelling ("[MASK]", "<|endoftext|>").
    /// nullopt when the tokenizer has no such token.
    [[nodiscard]] std::optional<int32_t> special_token_id(std::string_view role_or_token) const;

    /// The byte-level BPE behind this tokenizer (merge steps in the Tokens panel, translation.json), or null.
    [[nodiscard]] virtual std::shared_ptr<const Tokenizer> byte_level_bpe() const { return nullptr; }

    /// Role -> token spelling from the folder's tokenizer_config.json / special_tokens_map.json (set by the
    /// loader; "bos" -> "<s>").
    std::vector<std::pair<std::string, std::string>> special_roles;
};

/// Marian (opus-mt) folders: the source text is cut by source.spm, the target by target.spm; both map pieces to
/// the one shared vocabulary of vocab.json. Other folders: source == target.
struct TokenizerPair {
    std::shared_ptr<const TextTokenizer> source, target;
};

/// The tokenizer of a model folder, first match wins:
///   tokenizer.json (any supported pipeline; preferred, as Hugging Face's fast tokenizers do),
///   vocab.json + merges.txt, encoder.json + vocab.bpe (GPT-2),
///   source.spm + vocab.json (Marian: the source side),
///   tokenizer.model, spiece.model, sentencepiece.bpe.model (SentencePiece),
///   vocab.txt (WordPiece, BERT; do_lower_case from tokenizer_config.json, default true).
/// tokenizer_config.json / special_tokens_map.json supply special-token roles and, for SentencePiece files,
/// add_bos_token / add_eos_token. Returns nullptr when the folder has none of these; throws std::runtime_error
/// "<file>: <what is wrong>" when one exists but is malformed or uses an unsupported component.
[[nodiscard]] std::shared_ptr<const TextTokenizer> find_text_tokenizer(const std::string& dir);

/// find_text_tokenizer() for a folder (throws when there is none), or one tokenizer file given directly
/// (tokenizer.json, vocab.json next to merges.txt, *.model / *.spm, vocab.txt).
[[nodiscard]] std::shared_ptr<const TextTokenizer> load_text_tokenizer(const std::string& file_or_dir);

/// Source and target tokenizers of a folder: Marian's pair when source.spm, target.spm and vocab.json are there,
/// else find_text_tokenizer() twice the same. Throws as find_text_tokenizer; source is null when nothing is found.
[[nodiscard]] TokenizerPair find_tokenizer_pair(const std::string& dir);

/// Parsers (the name is used in error messages). parse_hf_tokenizer_json reads every supported tokenizer.json,
/// byte-level BPE included (through ts::Tokenizer, plus the file's post-processor).
[[nodiscard]] std::shared_ptr<const TextTokenizer> parse_hf_tokenizer_json(std::string_view json_text,
                                                                           const std::string& name = "tokenizer.json");
/// BERT's vocab.txt (one token per line, id = line number) with BertNormalizer(lowercase), BertPreTokenizer,
/// WordPiece("##", max 100 chars, [UNK]) and [CLS] … [SEP].
[[nodiscard]] std::shared_ptr<const TextTokenizer> parse_wordpiece_vocab_txt(std::string_view text, bool lowercase,
                                                                             const std::string& name = "vocab.txt");
/// A SentencePiece model (serialized ModelProto). add_bos / add_eos: put bos_id / eos_id around every encoding.
[[nodiscard]] std::shared_ptr<const TextTokenizer> parse_sentencepiece_model(std::string_view model_proto,
                                                                             bool add_bos, bool add_eos,
                                                                             const std::string& name = "tokenizer.model");

/// The tokenizer in a GGUF file's metadata (tokenizer.ggml.*; core/formats/gguf.h), or nullptr when it has none.
/// tokenizer.ggml.model "gpt2": byte-level BPE (tokens, merges, token_type; the pre-tokenizer named by
/// tokenizer.ggml.pre: gpt-2, llama-bpe / llama3, qwen2, smollm, default and their aliases); "llama": SentencePiece
/// BPE (tokens, scores, token_type with all 256 <0xNN> byte tokens and one unknown token; add_space_prefix) run by
/// libsentencepiece; "bert": WordPiece in llama.cpp's phantom-space spelling (▁word, continuation without ##) run
/// as BERT's tokenizer.json pipeline, [CLS] … [SEP] (llama.cpp's WPM tokenizer); "t5": SentencePiece unigram
/// (scores, token_type, precompiled_charsmap, add_space_prefix, remove_extra_whitespaces) run by libsentencepiece,
/// … </s> (llama.cpp's UGM tokenizer). BOS / EOS are added per tokenizer.ggml.add_bos_token / add_eos_token,
/// defaulting as llama.cpp does (llama: BOS; gpt2: BOS for llama-bpe; t5: EOS). Throws std::runtime_error
/// "<what>: <problem>" for an unsupported model or pre-tokenizer, a mistyped key, a special token id outside the
/// vocabulary (bert, t5), a missing unknown token, or a vocabulary llama.cpp itself could not run (no byte tokens).
[[nodiscard]] std::shared_ptr<const TextTokenizer> parse_gguf_tokenizer(const GgufHeader& header, const std::string& what);

/// Wraps a byte-level BPE ts::Tokenizer (no post-processing, pieces in GPT-2's "Ġ" spelling).
[[nodiscard]] std::shared_ptr<const TextTokenizer> wrap_byte_level_bpe(std::shared_ptr<const Tokenizer> tok);

}  // namespace ts
