// Internal helpers shared by the tokenizer pipelines (text_tokenizer.cpp, hf_pipeline.cpp, sentencepiece_model.cpp).
#pragma once

#include "core/tokenizer/text_tokenizer.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>

namespace ts::detail {

/// Fills spans[i].char_begin/char_end from the byte spans (characters as utf8_char_len counts them) and makes the
/// spans non-decreasing and non-overlapping (a token whose span starts before the previous one ends starts there).
void finish_spans(std::string_view text, TextEncoding& enc);

/// Whole file as a string; throws std::runtime_error "<path>: cannot open file (...)".
[[nodiscard]] std::string read_file(const std::string& path);

/// "<0xE4>" for a byte (SentencePiece / Llama byte-fallback spelling).
[[nodiscard]] std::string byte_piece(unsigned char b);
/// The byte of a "<0xE4>" spelling, or -1.
[[nodiscard]] int parse_byte_piece(std::string_view piece);

/// parse_hf_tokenizer_json() on an already parsed document.
[[nodiscard]] std::shared_ptr<const TextTokenizer> hf_tokenizer_from_json(const nlohmann::json& root, const std::string& name);

/// tok with the tokenizer.json's post_processor (TemplateProcessing, BertProcessing, RobertaProcessing) applied
/// when add_special_tokens; tok itself when the post-processor adds nothing.
[[nodiscard]] std::shared_ptr<const TextTokenizer> with_post_processor(std::shared_ptr<const TextTokenizer> tok,
                                                                       const nlohmann::json& root, const std::string& name);

/// Checks a SentencePiece precompiled character map (HF "Precompiled" normalizer, a .model's normalizer_spec):
/// every trie node reachable from the root, every byte's child read, and every replacement offset stay inside the
/// blob, as libsentencepiece's normalizer (which does not check) will read them. Throws std::runtime_error
/// "<name>: precompiled_charsmap is corrupt (...)". An empty map is valid (no normalization).
void check_precompiled_charsmap(std::string_view blob, const std::string& name);
/// Finds the character maps of a serialized SentencePiece ModelProto (normalizer_spec and denormalizer_spec) and
/// checks each as above; also refuses framing that runs past the end. Throws std::runtime_error naming `name`.
void check_sentencepiece_model(std::string_view proto, const std::string& name);

}  // namespace ts::detail
