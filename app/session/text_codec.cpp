// Byte-level fallback codec, the BPE adapter (when the tokenizer library is present) and input checks.
#include "app/session/text_codec.h"

#if __has_include("core/tokenizer/tokenizer_io.h")
#include "app/i18n/tr.h"
#include "core/formats/gguf.h"
#include "core/tokenizer/bpe.h"
#include "core/tokenizer/text_tokenizer.h"
#include "core/tokenizer/tokenizer_io.h"
#include "core/util/utf8.h"
#define TS_APP_HAS_BPE 1
#else
#define TS_APP_HAS_BPE 0
#endif

#include <cstdio>
#include <stdexcept>

namespace ts::studio {

namespace {
// Bytes of the well-formed character at s[i] (core/util/utf8.h), 0 for an invalid byte.
size_t utf8_len_at(std::string_view s, size_t i) {
    const Utf8Char c = utf8_char_at(s, i);
    return c.valid() ? c.len : 0;
}

class ByteCodec final : public TextCodec {
public:
    explicit ByteCodec(int vocab) : m_vocab(vocab < 1 ? 1 : vocab) {}
    std::string name() const override { return "bytes (ids-only mode)"; }
    bool ids_only() const override { return true; }
    void encode(std::string_view text, std::vector<int>& ids, std::vector<std::pair<size_t, size_t>>& spans,
                bool /*add_special_tokens*/ = true) const override {
        ids.clear();
        spans.clear();
        for (size_t i = 0; i < text.size(); ++i) {
            ids.push_back(int((unsigned char)text[i]) % m_vocab);
            spans.emplace_back(i, i + 1);
        }
    }
    std::string decode(const std::vector<int>& ids) const override {
        std::string out;
        for (int id : ids) out.push_back(char((unsigned char)(id & 0xFF)));
        return out;
    }
    std::string label(int id) const override {
        const std::string b(1, char((unsigned char)(id & 0xFF)));
        return printable_label(b);
    }

private:
    int m_vocab;
};

#if TS_APP_HAS_BPE
// Any tokenizer pipeline (ts::TextTokenizer): byte-level BPE, SentencePiece, WordPiece, Unigram, ...
class PipelineCodec final : public TextCodec {
public:
    explicit PipelineCodec(std::shared_ptr<const ts::TextTokenizer> t) : m_tok(std::move(t)), m_bpe(m_tok->byte_level_bpe()) {}
    std::string name() const override { return m_tok->description(); }
    bool ids_only() const override { return false; }
    void encode(std::string_view text, std::vector<int>& ids, std::vector<std::pair<size_t, size_t>>& spans,
                bool add_special_tokens = true) const override {
        const ts::TextEncoding e = m_tok->encode(text, add_special_tokens);
        ids.assign(e.ids.begin(), e.ids.end());
        spans.clear();
        for (const auto& s : e.spans) spans.emplace_back(s.byte_begin, s.byte_end);
    }
    std::string decode(const std::vector<int>& ids) const override {
        const std::vector<int32_t> v(ids.begin(), ids.end());
        return m_tok->decode(v);
    }
    std::string label(int id) const override {
        try {
            if (m_bpe) return printable_label(m_bpe->token_bytes(id));
            return printable_label(m_tok->id_to_piece(id));
        } catch (const std::exception&) {
            return "<" + std::to_string(id) + ">";
        }
    }
    std::vector<std::vector<std::string>> merge_steps(std::string_view bytes) const override {
        if (!m_bpe) return {};
        return m_bpe->merge_steps(bytes);
    }
    std::shared_ptr<const ts::Tokenizer> tokenizer() const override { return m_bpe; }
    std::shared_ptr<const ts::TextTokenizer> text_tokenizer() const override { return m_tok; }

private:
    std::shared_ptr<const ts::TextTokenizer> m_tok;
    std::shared_ptr<const ts::Tokenizer> m_bpe;
};
#endif
}  // namespace

std::shared_ptr<const TextCodec> make_byte_codec(int vocab_size) { return std::make_shared<ByteCodec>(vocab_size); }

std::shared_ptr<const TextCodec> load_codec_for_model_dir(const std::filesystem::path& dir) {
#if TS_APP_HAS_BPE
    // A GGUF file: the tokenizer in its metadata (none: ids-only mode).
    if (ts::is_gguf_file(dir)) return load_codec_for_gguf(ts::GgufFile(dir).header(), dir.string());
    // tokenizer.json, vocab.json + merges.txt, tokenizer.model, spiece.model, source.spm + vocab.json, vocab.txt
    auto tok = ts::find_text_tokenizer(dir.string());
    if (!tok) return nullptr;
    return std::make_shared<PipelineCodec>(std::move(tok));
#else
    return nullptr;
#endif
}

std::shared_ptr<const TextCodec> load_codec_for_gguf(const GgufHeader& header, const std::string& name) {
#if TS_APP_HAS_BPE
    auto tok = ts::parse_gguf_tokenizer(header, name);
    if (!tok) return nullptr;
    return std::make_shared<PipelineCodec>(std::move(tok));
#else
    (void)header, (void)name;
    return nullptr;
#endif
}

std::shared_ptr<const TextCodec> load_target_codec_for_model_dir(const std::filesystem::path& dir) {
#if TS_APP_HAS_BPE
    auto pair = ts::find_tokenizer_pair(dir.string());
    if (!pair.target || pair.target == pair.source) return nullptr;
    return std::make_shared<PipelineCodec>(std::move(pair.target));
#else
    (void)dir;
    return nullptr;
#endif
}

TokenizedText tokenize_text(const std::string& text, const TextCodec& codec, int max_tokens, bool add_special_tokens) {
    TokenizedText t;
    t.text = text;
    t.ids_only = codec.ids_only();
    if (t.ids_only) t.notices.push_back(tr("ids-only mode: no tokenizer file, token ids are the UTF-8 bytes"));
    if (text.empty()) {
        t.notices.push_back(tr("type some text to see inside the model"));
        return t;
    }
    size_t bad = 0;
    if (!is_valid_utf8(text, &bad))
        t.notices.push_back(trf("text is not valid UTF-8 (first bad byte at offset %zu); invalid bytes are shown as <XX>", bad));
    std::vector<int> ids;
    std::vector<std::pair<size_t, size_t>> spans;
    codec.encode(text, ids, spans, add_special_tokens);
    t.total_tokens = ids.size();
    if (max_tokens >= 0 && ids.size() > size_t(max_tokens)) {
        ids.resize(size_t(max_tokens));
        spans.resize(size_t(max_tokens));
        t.truncated = true;
        t.notices.push_back(trf("text truncated to the model's max_seq_len: %d of %zu tokens are used", max_tokens,
                                size_t(t.total_tokens)));
    }
    t.ids = ids;
    for (size_t i = 0; i < ids.size(); ++i) {
        TokenPiece p;
        p.id = ids[i];
        p.byte_begin = spans[i].first;
        p.byte_end = spans[i].second;
        const std::string_view bytes(text.data() + p.byte_begin, p.byte_end - p.byte_begin);
        p.label = t.ids_only ? printable_label(bytes) : codec.label(ids[i]);
        t.pieces.push_back(std::move(p));
    }
    return t;
}

std::string sanitize_utf8(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size();) {
        const size_t n = utf8_len_at(s, i);
        if (n == 0) { out += "\xEF\xBF\xBD"; ++i; }
        else { out.append(s.substr(i, n)); i += n; }
    }
    return out;
}

std::string printable_label(std::string_view s, bool show_space) {
    std::string out;
    char buf[8];
    for (size_t i = 0; i < s.size();) {
        const size_t n = utf8_len_at(s, i);
        const auto b = (unsigned char)s[i];
        if (n == 0) {
            std::snprintf(buf, sizeof buf, "<%02X>", b);
            out += buf;
            ++i;
            continue;
        }
        if (n == 1) {
            if (b == ' ' && show_space) out += "\xC2\xB7";  // middle dot
            else if (b == '\n') out += "\\n";
            else if (b == '\t') out += "\\t";
            else if (b == '\r') out += "\\r";
            else if (b < 0x20 || b == 0x7F) { std::snprintf(buf, sizeof buf, "<%02X>", b); out += buf; }
            else out.push_back(char(b));
        } else {
            out.append(s.substr(i, n));
        }
        i += n;
    }
    return out;
}

}  // namespace ts::studio
