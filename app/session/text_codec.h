// Text -> tokens for the app: the model folder's tokenizer when it has one, else a byte-level fallback
// (ids = UTF-8 bytes, "ids-only mode"). Also the input checks the app applies before a forward pass: invalid
// UTF-8 is shown (not rejected), text beyond max_seq_len tokens is truncated with a visible notice.
#pragma once

#include "core/util/utf8.h"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ts {
class Tokenizer;
class TextTokenizer;
struct GgufHeader;
}

namespace ts::studio {

/// One token of the typed text: its id, a printable label, and its [begin, end) byte span in the text.
struct TokenPiece {
    int id = 0;
    std::string label;
    size_t byte_begin = 0, byte_end = 0;
};

struct TokenizedText {
    std::string text;                    ///< the text as typed (possibly invalid UTF-8)
    std::vector<int> ids;                ///< what the model sees (after truncation)
    std::vector<TokenPiece> pieces;      ///< same length as ids
    size_t total_tokens = 0;             ///< before truncation
    bool truncated = false;
    bool ids_only = false;               ///< no tokenizer: byte-level fallback
    std::vector<std::string> notices;    ///< shown above the panels ("text truncated to 128 of 301 tokens")
};

/// Turns text into token ids. Implementations are immutable and thread-safe.
class TextCodec {
public:
    virtual ~TextCodec() = default;
    [[nodiscard]] virtual std::string name() const = 0;
    [[nodiscard]] virtual bool ids_only() const = 0;
    /// ids with their byte spans: ordered and non-overlapping; they tile the text for byte-level BPE and the byte
    /// fallback, while other pipelines leave whitespace they drop uncovered and give the special tokens they insert
    /// ([CLS], <s>, </s>) empty spans.
    /// add_special_tokens = false leaves out what the folder's post-processor inserts ([CLS] … [SEP], <s>, </s>):
    /// the encoder–decoder path adds the model's own source/target specials itself (HF tokenizers' flag of that name).
    virtual void encode(std::string_view text, std::vector<int>& ids, std::vector<std::pair<size_t, size_t>>& spans,
                        bool add_special_tokens = true) const = 0;
    /// Raw bytes of ids (may be invalid UTF-8 for partial characters).
    [[nodiscard]] virtual std::string decode(const std::vector<int>& ids) const = 0;
    /// Printable label for one token ("Ġcat" style for BPE, the character or <E4> for bytes).
    [[nodiscard]] virtual std::string label(int id) const = 0;
    /// BPE merge steps for the bytes of one token's text, empty when unavailable (see ts::Tokenizer::merge_steps).
    [[nodiscard]] virtual std::vector<std::vector<std::string>> merge_steps(std::string_view bytes) const { return {}; }
    /// The BPE tokenizer behind the codec (special-token lookups, e.g. translation.json), or null.
    [[nodiscard]] virtual std::shared_ptr<const ts::Tokenizer> tokenizer() const { return nullptr; }
    /// The folder's tokenizer pipeline (any kind: special_token_id("mask"), decode), or null in ids-only mode.
    [[nodiscard]] virtual std::shared_ptr<const ts::TextTokenizer> text_tokenizer() const { return nullptr; }
};

/// ids = bytes (mod vocab_size when the vocabulary is smaller than 256).
[[nodiscard]] std::shared_ptr<const TextCodec> make_byte_codec(int vocab_size);

/// Loads the model folder's tokenizer when present and the tokenizer library is built in (see
/// ts::find_text_tokenizer: tokenizer.json, vocab.json + merges.txt, tokenizer.model / spiece.model, Marian's
/// source.spm + vocab.json, vocab.txt); returns nullptr when the folder has none. Throws std::runtime_error when the file exists but cannot be parsed.
[[nodiscard]] std::shared_ptr<const TextCodec> load_codec_for_model_dir(const std::filesystem::path& dir);

/// The codec of the tokenizer in a GGUF file's metadata (ts::parse_gguf_tokenizer), or nullptr when it has none.
/// Throws std::runtime_error as that does.
[[nodiscard]] std::shared_ptr<const TextCodec> load_codec_for_gguf(const GgufHeader& header, const std::string& name);

/// The target side's codec when the folder has a different tokenizer for it (Marian: target.spm beside source.spm,
/// one shared vocab.json; ts::find_tokenizer_pair), else nullptr (the one codec serves both sides). Throws
/// std::runtime_error when the file exists but cannot be parsed.
[[nodiscard]] std::shared_ptr<const TextCodec> load_target_codec_for_model_dir(const std::filesystem::path& dir);

/// Encodes `text` with `codec` and truncates to max_tokens (keeping the beginning), filling notices.
/// Empty text gives zero tokens and a notice.
[[nodiscard]] TokenizedText tokenize_text(const std::string& text, const TextCodec& codec, int max_tokens,
                                          bool add_special_tokens = true);

/// True when s is well-formed UTF-8; *bad_offset gets the first bad byte otherwise (core/util/utf8.h).
using ts::is_valid_utf8;
/// s with every invalid byte replaced by U+FFFD (for display only).
[[nodiscard]] std::string sanitize_utf8(std::string_view s);
/// A label safe to draw: invalid bytes as <XX>, control characters as ␣-style escapes (\n, \t), space as '·'
/// when show_space is set.
[[nodiscard]] std::string printable_label(std::string_view bytes, bool show_space = true);

}  // namespace ts::studio
