// Byte-level BPE tokenizer as in GPT-2: special tokens are cut out first, the rest is pre-tokenized by a regex,
// each piece's bytes are merged by rank. encode() returns ids with byte and character offsets; decode() inverts it
// byte-exactly for any input, including invalid UTF-8. Loading/saving: tokenizer_io.h; training: bpe_train.h.
#pragma once

#include "core/tokenizer/pretokenize.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ts {

/// Where one token came from in the input text.
/// byte_begin/byte_end: [begin, end) in bytes. char_begin/char_end: [begin, end) in characters (Unicode code
/// points; each invalid UTF-8 byte counts as one character). A token that splits a multi-byte character gets the
/// span of every character it touches, so two neighbouring tokens may share that one character; byte spans never
/// overlap and tile the input.
struct TokenSpan {
    size_t byte_begin = 0, byte_end = 0;
    size_t char_begin = 0, char_end = 0;
    bool operator==(const TokenSpan&) const = default;
};

/// Output of Tokenizer::encode: ids[i] covers spans[i].
struct Encoding {
    std::vector<int32_t> ids;
    std::vector<TokenSpan> spans;
};

/// A token matched verbatim in the text before pre-tokenization (e.g. "<|endoftext|>"), like Hugging Face's
/// added_tokens. `special` is only metadata (HF's flag); every added token is matched.
struct AddedToken {
    int32_t id = -1;
    std::string content;
    bool special = true;
    bool operator==(const AddedToken&) const = default;
};

/// One merge rule; its rank is its index in Tokenizer::merges() (lower rank = applied first).
struct MergeRule {
    int32_t left = -1, right = -1, merged = -1;
    bool operator==(const MergeRule&) const = default;
};

struct EncodeOptions {
    bool match_added_tokens = true;  // false: "<|endoftext|>" in the text is encoded as plain text
};

class Tokenizer {
public:
    /// vocab[id] = the token's raw bytes (not the "Ġ" spelling); an empty string marks an unused id.
    /// merges: pairs of ids (left, right), rank order; the merged token is looked up as vocab bytes left+right.
    /// added: tokens matched verbatim; their id may be inside vocab (then vocab[id] must equal content or be empty)
    /// or beyond it (vocab is extended). patterns: pre-tokenizer regex pipeline (PCRE2), see PreTokenizer.
    /// Throws std::invalid_argument when ids are out of range, a merged token is missing from the vocab, a token
    /// string appears twice, or the pattern does not compile.
    Tokenizer(std::vector<std::string> vocab, const std::vector<std::pair<int32_t, int32_t>>& merges,
              std::vector<AddedToken> added = {}, std::vector<std::string> patterns = {kGpt2Pattern});

    /// text (any bytes) -> ids + spans. Spans tile text: spans[0].byte_begin == 0, each begins where the previous
    /// ended, the last ends at text.size(). Thread-safe. Throws std::runtime_error if a byte has no token in this
    /// vocabulary (never for complete byte-level vocabularies such as GPT-2's or ours).
    [[nodiscard]] Encoding encode(std::string_view text, const EncodeOptions& opt = {}) const;
    [[nodiscard]] std::vector<int32_t> encode_ids(std::string_view text, const EncodeOptions& opt = {}) const;

    /// ids -> bytes (concatenated token bytes). Throws std::out_of_range naming the first invalid id.
    [[nodiscard]] std::string decode(std::span<const int32_t> ids) const;

    /// The BPE of one word, step by step, for teaching: element 0 is the word split into single bytes, element k
    /// the pieces after the k-th merge (one merge rule applied at one position; equal-rank pairs left to right).
    /// Pieces are raw bytes (use display_token() to print). The word is not pre-tokenized or searched for added
    /// tokens. The last element's pieces are exactly what encode() gives for that word.
    [[nodiscard]] std::vector<std::vector<std::string>> merge_steps(std::string_view word) const;

    // --- vocabulary ---
    [[nodiscard]] size_t vocab_size() const { return m_vocab.size(); }  // max id + 1 (including added tokens)
    [[nodiscard]] const std::string& token_bytes(int32_t id) const;    // throws std::out_of_range
    [[nodiscard]] std::optional<int32_t> token_id(std::string_view bytes) const;  // plain vocab or added token
    [[nodiscard]] const std::vector<std::string>& vocab() const { return m_vocab; }
    [[nodiscard]] const std::vector<MergeRule>& merges() const { return m_merges; }
    [[nodiscard]] const std::vector<AddedToken>& added_tokens() const { return m_added; }
    [[nodiscard]] const std::vector<std::string>& patterns() const { return m_pretok.patterns(); }
    [[nodiscard]] bool is_added_token(int32_t id) const;

    /// Printable form of a token: GPT-2's byte-level spelling ("Ġcat") for vocab tokens, content for added tokens.
    [[nodiscard]] std::string display_token(int32_t id) const;

    /// Word cache bound (entries); the cache is cleared when full. 0 disables caching.
    void set_cache_capacity(size_t n) { m_cache_capacity = n; }

private:
    struct PairHash {
        size_t operator()(uint64_t k) const { return size_t(k * 0x9E3779B97F4A7C15ull >> 17) ^ size_t(k); }
    };
    struct MergeInfo {
        int32_t rank, merged;
    };
    struct StringHash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    using WordCache = std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>>;

    static uint64_t pair_key(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }
    // BPE of one pre-token; appends ids.
    void bpe_word(std::string_view word, std::vector<int32_t>& out) const;
    void encode_plain(std::string_view text, size_t offset, Encoding& enc, std::vector<ByteSpan>& scratch) const;

    std::vector<std::string> m_vocab;
    std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> m_token_to_id;  // plain vocab tokens
    std::vector<MergeRule> m_merges;
    std::unordered_map<uint64_t, MergeInfo, PairHash> m_merge_rank;
    std::vector<AddedToken> m_added;
    std::vector<char> m_is_added;
    int32_t m_byte_id[256];
    PreTokenizer m_pretok;
    size_t m_cache_capacity = 1 << 16;
    mutable std::mutex m_cache_mutex;
    mutable WordCache m_cache;
};

}  // namespace ts
