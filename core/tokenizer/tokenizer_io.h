// Reading and writing byte-level BPE tokenizers: GPT-2's vocab.json + merges.txt (same formats as encoder.json +
// vocab.bpe) and Hugging Face tokenizer.json (model.type "BPE" with a ByteLevel pre-tokenizer). Parse functions
// take the file content as a string (used by the fuzz target); load functions read files.
#pragma once

#include "core/tokenizer/bpe.h"

#include <memory>
#include <string>
#include <string_view>

namespace ts {

/// GPT-2 format: vocab_json maps byte-level token strings to ids ({"!": 0, ..., "<|endoftext|>": 50256});
/// merges_txt has one "left right" pair per line in rank order, an optional first line "#version: ...".
/// "<|endoftext|>", when in the vocab, becomes an added (special) token. The names are used in error messages.
/// Throws std::runtime_error "<name>: line N: ..." (merges) or "<name>: entry \"tok\": ..." / "<name>: line L,
/// column C: JSON syntax error ..." (vocab) saying what was expected and what was found.
[[nodiscard]] std::shared_ptr<const Tokenizer> parse_gpt2_tokenizer(std::string_view vocab_json,
                                                                    std::string_view merges_txt,
                                                                    const std::string& vocab_name = "vocab.json",
                                                                    const std::string& merges_name = "merges.txt");

/// Hugging Face tokenizer.json with model.type "BPE": model.vocab, model.merges ("a b" strings or ["a", "b"]
/// pairs), added_tokens, and a pre_tokenizer made of ByteLevel (use_regex -> GPT-2's pattern), Split (Regex or
/// String pattern, behavior "Isolated") and Digits steps, alone or in a Sequence — the patterns are recorded, so
/// Llama-3 / Qwen2 style regexes are honoured. Normalizer must be null or NFC (NFC is not applied: input is
/// assumed NFC already); post_processor and decoder are ignored (no BOS is added); added tokens are matched
/// verbatim everywhere (their lstrip/rstrip/single_word/normalized flags are not applied).
/// Throws std::runtime_error "<name>: <field>: expected ..., found ..." for malformed or unsupported content.
[[nodiscard]] std::shared_ptr<const Tokenizer> parse_tokenizer_json(std::string_view json_text,
                                                                    const std::string& name = "tokenizer.json");

/// File versions of the above (errors name the path). Throw std::runtime_error when a file cannot be read.
[[nodiscard]] std::shared_ptr<const Tokenizer> load_gpt2_tokenizer(const std::string& vocab_path,
                                                                   const std::string& merges_path);
[[nodiscard]] std::shared_ptr<const Tokenizer> load_tokenizer_json(const std::string& path);

/// The tokenizer of a model folder: tokenizer.json, else vocab.json + merges.txt, else encoder.json + vocab.bpe.
/// Returns nullptr when the folder has none of these; throws when one exists but is malformed.
[[nodiscard]] std::shared_ptr<const Tokenizer> find_tokenizer(const std::string& dir);

/// A folder (as find_tokenizer, but throws when none is there), a tokenizer.json file, or a vocab.json /
/// encoder.json file whose merges.txt / vocab.bpe sits next to it.
[[nodiscard]] std::shared_ptr<const Tokenizer> load_tokenizer(const std::string& file_or_dir);

/// Hugging Face tokenizer.json text (BPE model, ByteLevel pre-tokenizer/decoder, added_tokens with special=true,
/// merges as "a b" strings, which every tokenizers version reads). parse_tokenizer_json() reads it back to an
/// identical Tokenizer (same vocab, merges, added tokens, patterns).
[[nodiscard]] std::string tokenizer_to_json(const Tokenizer& tok);

/// Writes tokenizer_to_json(tok) to path. Throws std::runtime_error when the file cannot be written.
void save_tokenizer_json(const Tokenizer& tok, const std::string& path);

}  // namespace ts
