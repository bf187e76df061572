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

}  // namespace ts::detail
