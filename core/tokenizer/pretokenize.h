// Pre-tokenization: splits text into "words" with a regex (GPT-2's pattern by default) before BPE runs on each
// word. PCRE2 in UTF + UCP mode with JIT; invalid UTF-8 is allowed and ends up in gap pieces, so the pieces always
// cover the input contiguously.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ts {

/// GPT-2's pre-tokenization pattern (openai/gpt-2 src/encoder.py; also Hugging Face's ByteLevel use_regex=true).
inline constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

/// A byte span [begin, end) into a string.
using ByteSpan = std::pair<size_t, size_t>;

/// A pipeline of regex splits: stage 0 splits the text, each later stage splits every piece of the previous one
/// (Hugging Face's pre_tokenizer Sequence of Split steps, e.g. Digits then ByteLevel's regex).
class PreTokenizer {
public:
    /// Compiles each pattern (PCRE2 syntax, which covers the Python/Rust-regex patterns of GPT-2, Llama-3, Qwen2).
    /// Throws std::invalid_argument naming the pattern and PCRE2's message and offset when one does not compile,
    /// or when `patterns` is empty.
    explicit PreTokenizer(std::vector<std::string> patterns = {kGpt2Pattern});
    ~PreTokenizer();
    PreTokenizer(const PreTokenizer&) = delete;
    PreTokenizer& operator=(const PreTokenizer&) = delete;

    /// Appends to `out` the byte spans of the pieces of text[0, size): each regex match is one piece and every run
    /// of bytes no match covers (invalid UTF-8, or whatever a custom pattern leaves out) is one piece too, so the
    /// spans are non-empty, ordered and cover the text contiguously. Offsets are relative to `text`.
    /// Like Hugging Face's Split(behavior="Isolated"). Thread-safe. Throws std::runtime_error on a PCRE2 match error.
    void split(std::string_view text, std::vector<ByteSpan>& out) const;

    [[nodiscard]] const std::vector<std::string>& patterns() const { return m_patterns; }

private:
    struct Impl;
    void split_stage(size_t stage, std::string_view text, size_t offset, std::vector<ByteSpan>& out) const;
    std::vector<std::string> m_patterns;
    std::vector<std::unique_ptr<Impl>> m_impls;
};

}  // namespace ts
