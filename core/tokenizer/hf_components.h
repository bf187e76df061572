// Internal to the Hugging Face tokenizer.json pipeline (hf_pipeline.cpp and its hf_*.cpp parts): the normalized
// text with its alignment to the input, Unicode helpers, patterns, and the component types and parsers each part
// provides. Not a public interface.
#pragma once

#include "core/tokenizer/byte_level.h"
#include "core/tokenizer/text_tokenizer_detail.h"
#include "core/tokenizer/tokenizer_io.h"
#include "core/util/json.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <nlohmann/json.hpp>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ts::hf_detail {


using nlohmann::json;
inline constexpr char32_t kInvalid = kInvalidUtf8;  // an invalid UTF-8 byte, kept as it is (core/util/utf8.h)

[[noreturn]] inline void fail(const std::string& name, const std::string& field, const std::string& what) {
    throw std::runtime_error(name + ": " + field + ": " + what);
}

inline std::string describe(const json& j) { return std::string(j.type_name()) + " " + json_excerpt(j); }

// The code point of the character at s[pos] whose length utf8_char_len gave (core/util/utf8.h), or kInvalid.
inline char32_t decode_char(std::string_view s, size_t pos, size_t /*len*/) { return utf8_char_at(s, pos).cp; }


// --- Unicode properties (ICU) --------------------------------------------------------------------------------------

inline bool is_whitespace(char32_t c) { return c != kInvalid && (c == '\t' || c == '\n' || c == '\r' || u_isUWhiteSpace(UChar32(c))); }
inline bool is_punctuation(char32_t c) {
    if (c == kInvalid) return false;
    if (c < 128) return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
    return u_ispunct(UChar32(c));
}
inline bool is_control(char32_t c) {  // HF bert: Cc, Cf, Cn, Co (not \t \n \r)
    if (c == kInvalid || c == '\t' || c == '\n' || c == '\r') return false;
    const int8_t t = u_charType(UChar32(c));
    return t == U_CONTROL_CHAR || t == U_FORMAT_CHAR || t == U_UNASSIGNED || t == U_PRIVATE_USE_CHAR || t == U_SURROGATE;
}
inline bool is_cjk(char32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}
inline bool is_word_char(char32_t c) {  // regex \w (Unicode): alphabetic, marks, decimal digits, connector punctuation
    if (c == kInvalid) return false;
    if (u_hasBinaryProperty(UChar32(c), UCHAR_ALPHABETIC) || u_hasBinaryProperty(UChar32(c), UCHAR_JOIN_CONTROL)) return true;
    const int8_t t = u_charType(UChar32(c));
    return t == U_NON_SPACING_MARK || t == U_ENCLOSING_MARK || t == U_COMBINING_SPACING_MARK ||
           t == U_DECIMAL_DIGIT_NUMBER || t == U_CONNECTOR_PUNCTUATION;
}
inline bool is_digit(char32_t c) { return c != kInvalid && u_isdigit(UChar32(c)); }

inline std::string utf8_of(const icu::UnicodeString& u) {
    std::string out;
    u.toUTF8String(out);
    return out;
}

inline std::string lowercase_char(char32_t c) {
    if (c == 0x130) return "i\xCC\x87";  // full case mapping of U+0130 (Rust's char::to_lowercase)
    std::string out;
    append_utf8(out, char32_t(u_tolower(UChar32(c))));
    return out;
}

// --- normalized text with alignment --------------------------------------------------------------------------------

struct NormText {
    std::string s;
    std::vector<uint32_t> ob, oe;  // per byte of s: origin [begin, end) in the input
    uint32_t origin_begin = 0, origin_end = 0;  // the input range this piece stands for

    void append_copy(const NormText& from, size_t b, size_t e) {
        s.append(from.s, b, e - b);
        ob.insert(ob.end(), from.ob.begin() + long(b), from.ob.begin() + long(e));
        oe.insert(oe.end(), from.oe.begin() + long(b), from.oe.begin() + long(e));
    }
    void append_mapped(std::string_view bytes, uint32_t b, uint32_t e) {
        s.append(bytes);
        ob.insert(ob.end(), bytes.size(), b);
        oe.insert(oe.end(), bytes.size(), e);
    }
    [[nodiscard]] NormText sub(size_t b, size_t e) const {
        NormText t;
        t.append_copy(*this, b, e);
        t.origin_begin = b < e ? ob[b] : (b < ob.size() ? ob[b] : origin_end);
        t.origin_end = b < e ? oe[e - 1] : t.origin_begin;
        return t;
    }
    // origin of normalized bytes [b, e)
    [[nodiscard]] std::pair<uint32_t, uint32_t> origin(size_t b, size_t e) const {
        uint32_t lo = std::numeric_limits<uint32_t>::max(), hi = 0;
        for (size_t k = b; k < e; ++k) {
            lo = std::min(lo, ob[k]);
            hi = std::max(hi, oe[k]);
        }
        if (lo > hi) return {origin_begin, origin_begin};
        return {lo, hi};
    }
};

inline NormText make_norm(std::string_view text, size_t offset) {
    NormText t;
    t.s.assign(text);
    t.ob.resize(text.size());
    t.oe.resize(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        t.ob[i] = uint32_t(offset + i);
        t.oe[i] = uint32_t(offset + i + 1);
    }
    t.origin_begin = uint32_t(offset);
    t.origin_end = uint32_t(offset + text.size());
    return t;
}

// Rewrites each character: f returns nullopt to keep it, else its replacement (aligned to the whole character).
inline void map_chars(NormText& t, const std::function<std::optional<std::string>(char32_t, std::string_view)>& f) {
    NormText r;
    r.origin_begin = t.origin_begin;
    r.origin_end = t.origin_end;
    for (size_t pos = 0; pos < t.s.size();) {
        const size_t len = utf8_char_len(t.s, pos);
        const char32_t c = decode_char(t.s, pos, len);
        auto rep = f(c, std::string_view(t.s).substr(pos, len));
        if (!rep) {
            r.append_copy(t, pos, pos + len);
        } else {
            const auto [b, e] = t.origin(pos, pos + len);
            r.append_mapped(*rep, b, e);
        }
        pos += len;
    }
    t = std::move(r);
}

// NFC / NFD / NFKC / NFKD by segments that start at a normalization boundary; a changed segment is aligned whole.
inline void unicode_normalize(NormText& t, const icu::Normalizer2& n) {
    NormText r;
    r.origin_begin = t.origin_begin;
    r.origin_end = t.origin_end;
    size_t seg = 0;
    const auto flush = [&](size_t end) {
        if (end <= seg) return;
        const std::string_view part = std::string_view(t.s).substr(seg, end - seg);
        bool valid = true;
        for (size_t p = 0; p < part.size();) {
            const size_t l = utf8_char_len(part, p);
            if (decode_char(part, p, l) == kInvalid) valid = false;
            p += l;
        }
        UErrorCode st = U_ZERO_ERROR;
        std::string out;
        if (valid) out = utf8_of(n.normalize(icu::UnicodeString::fromUTF8(icu::StringPiece(part.data(), int32_t(part.size()))), st));
        if (!valid || U_FAILURE(st) || out == part) {
            r.append_copy(t, seg, end);
        } else {
            const auto [b, e] = t.origin(seg, end);
            r.append_mapped(out, b, e);
        }
        seg = end;
    };
    for (size_t pos = 0; pos < t.s.size();) {
        const size_t len = utf8_char_len(t.s, pos);
        const char32_t c = decode_char(t.s, pos, len);
        if (pos > seg && (c == kInvalid || n.hasBoundaryBefore(UChar32(c)))) flush(pos);
        pos += len;
    }
    flush(t.s.size());
    t = std::move(r);
}

// PCRE2's backtracking budget for one tokenizer.json Split / Replace pattern. Real patterns need a few hundred
// steps per match; a catastrophic one (e.g. (a+)+$ on a long run) is reported, not run for minutes.
// Each match call starts with kPatternFirstLimit steps and, when that is not enough, is retried with ten times as
// many, up to kPatternMatchLimit. Every limit tried is charged to a budget for the whole text,
// kPatternBudgetPerByte per byte plus kPatternBudgetBase, so the work is linear in the text however many calls a
// pattern needs: a pattern whose every match looks far ahead (a(?=a*b) on a run of a's, quadratic in the run)
// exhausts the budget and is reported, as is one call over kPatternMatchLimit. Ordinary patterns are charged
// kPatternFirstLimit per match, at most one match per byte, which the budget covers twice over.
// The interpreter's heap is bounded by PCRE2's own default (20 MB).
inline constexpr uint32_t kPatternMatchLimit = 10'000'000;
inline constexpr uint32_t kPatternFirstLimit = 1'000;
inline constexpr uint64_t kPatternBudgetPerByte = 2 * kPatternFirstLimit;
inline constexpr uint64_t kPatternBudgetBase = 2 * uint64_t{kPatternMatchLimit};

// Replaces every match of a literal or PCRE2 pattern; the replacement is aligned to the matched bytes.
// Regexes are compiled with PCRE2_MATCH_INVALID_UTF, so any bytes (invalid UTF-8 included) are a valid subject:
// a match never starts or ends inside an invalid sequence.
struct Pattern {
    std::string literal;
    std::shared_ptr<pcre2_code> re;
    std::string source;  // the regex, for messages
    // matches in s: [begin, end) pairs, non-empty, left to right.
    // Errors: std::runtime_error naming the pattern and the byte reached when one call or the whole text needs
    // more than the budget above.
    [[nodiscard]] std::vector<std::pair<size_t, size_t>> find_all(std::string_view s) const {
        std::vector<std::pair<size_t, size_t>> out;
        if (!re) {
            if (literal.empty()) return out;
            for (size_t p = s.find(literal); p != std::string_view::npos; p = s.find(literal, p + literal.size()))
                out.emplace_back(p, p + literal.size());
            return out;
        }
        std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> md(
            pcre2_match_data_create_from_pattern(re.get(), nullptr), &pcre2_match_data_free);
        std::unique_ptr<pcre2_match_context, decltype(&pcre2_match_context_free)> mctx(
            pcre2_match_context_create(nullptr), &pcre2_match_context_free);
        if (!md || !mctx) throw std::runtime_error("tokenizer regex: out of memory for PCRE2 match data");
        const uint64_t budget = kPatternBudgetBase + kPatternBudgetPerByte * s.size();
        uint64_t spent = 0;
        const auto give_up = [&](size_t start, const std::string& why) {
            throw std::runtime_error("tokenizer regex " + quote_value(source) + " cannot be matched on this text (" +
                                     why + ", at byte " + std::to_string(start) + " of " + std::to_string(s.size()) +
                                     ")");
        };
        size_t start = 0;
        uint32_t options = 0;
        uint32_t limit = kPatternFirstLimit;
        while (start <= s.size()) {
            if (spent + limit > budget)
                give_up(start, "it needs more than " + std::to_string(budget) + " backtracking steps for " +
                                   std::to_string(s.size()) + " bytes");
            spent += limit;
            pcre2_set_match_limit(mctx.get(), limit);
            const int rc = pcre2_match(re.get(), reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), start, options,
                                       md.get(), mctx.get());
            if (rc == PCRE2_ERROR_JIT_STACKLIMIT && options == 0) {
                options = PCRE2_NO_JIT;  // the interpreter keeps its backtracking on the (bounded) heap
                continue;
            }
            if (rc == PCRE2_ERROR_MATCHLIMIT && limit < kPatternMatchLimit) {
                limit = std::min<uint64_t>(uint64_t{limit} * 10, kPatternMatchLimit);
                continue;
            }
            limit = kPatternFirstLimit;
            if (rc == PCRE2_ERROR_NOMATCH) break;
            if (rc < 0) {
                PCRE2_UCHAR msg[256];
                pcre2_get_error_message(rc, msg, sizeof msg);
                give_up(start, reinterpret_cast<const char*>(msg));
            }
            const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
            if (ov[1] > ov[0]) {
                out.emplace_back(ov[0], ov[1]);
                start = ov[1];
            } else {
                start = ov[0] + (ov[0] < s.size() ? utf8_char_len(s, ov[0]) : 1);
            }
        }
        return out;
    }
};

inline Pattern parse_pattern(const json& j, const std::string& name, const std::string& field) {
    Pattern p;
    if (j.is_object() && j.contains("String") && j["String"].is_string()) {
        p.literal = j["String"].get<std::string>();
        return p;
    }
    if (j.is_object() && j.contains("Regex") && j["Regex"].is_string()) {
        const std::string rx = j["Regex"].get<std::string>();
        int err = 0;
        PCRE2_SIZE off = 0;
        pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(rx.data()), rx.size(),
                                         PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &off, nullptr);
        if (!code) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(err, msg, sizeof msg);
            fail(name, field, "regex does not compile at offset " + std::to_string(off) + ": " +
                                  reinterpret_cast<const char*>(msg));
        }
        (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // the interpreter runs it when JIT is unavailable
        p.re.reset(code, &pcre2_code_free);
        p.source = rx;
        return p;
    }
    fail(name, field, "expected {\"String\": ...} or {\"Regex\": ...}, found " + describe(j));
}

inline void replace_pattern(NormText& t, const Pattern& p, const std::string& content) {
    const auto matches = p.find_all(t.s);
    if (matches.empty()) return;
    NormText r;
    r.origin_begin = t.origin_begin;
    r.origin_end = t.origin_end;
    size_t last = 0;
    for (const auto& [b, e] : matches) {
        r.append_copy(t, last, b);
        const auto [ob, oe] = t.origin(b, e);
        r.append_mapped(content, ob, oe);
        last = e;
    }
    r.append_copy(t, last, t.s.size());
    t = std::move(r);
}

inline void prepend(NormText& t, const std::string& what) {
    if (t.s.empty()) return;  // HF: nothing to prepend to
    NormText r;
    r.origin_begin = t.origin_begin;
    r.origin_end = t.origin_end;
    r.append_mapped(what, t.ob[0], t.ob[0]);  // zero-width at the start
    r.append_copy(t, 0, t.s.size());
    t = std::move(r);
}

// --- component types and the parsers of each part ---------------------------------------------------------------

/// hf_normalizers.cpp
using Normalizer = std::function<void(NormText&)>;
[[nodiscard]] Normalizer bert_normalizer(bool clean_text, bool chinese, bool strip_accents, bool lowercase);
[[nodiscard]] Normalizer parse_normalizer(const json& j, const std::string& name, const std::string& field);

/// hf_pre_tokenizers.cpp
using Splits = std::vector<NormText>;
using PreTokenizer = std::function<void(Splits&)>;
[[nodiscard]] PreTokenizer parse_pre_tokenizer(const json& j, const std::string& name, const std::string& field);
/// Metaspace's "prepend_scheme" ("always" by default; the legacy "add_prefix_space": false -> "never") and its
/// replacement character ("▁" by default); the Metaspace decoder reads them too.
[[nodiscard]] std::string metaspace_scheme(const json& j);
[[nodiscard]] std::string metaspace_replacement(const json& j);

/// hf_models.cpp
struct StrHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using Vocab = std::unordered_map<std::string, int32_t, StrHash, std::equal_to<>>;

struct ModelToken {
    int32_t id;
    size_t b, e;  // bytes of the pre-token
};

class Model {
public:
    virtual ~Model() = default;
    virtual void tokenize(std::string_view word, std::vector<ModelToken>& out) const = 0;
    virtual std::string kind() const = 0;
    std::vector<std::string> id_to_token;
    Vocab token_to_id;
    std::optional<int32_t> unk;

    std::optional<int32_t> find(std::string_view s) const {
        auto it = token_to_id.find(s);
        if (it == token_to_id.end()) return std::nullopt;
        return it->second;
    }
    void add(const std::string& tok, int32_t id) {
        if (id < 0 || id > (1 << 22)) throw std::runtime_error("token id " + std::to_string(id) + " out of range");
        if (size_t(id) >= id_to_token.size()) id_to_token.resize(size_t(id) + 1);
        id_to_token[size_t(id)] = tok;
        token_to_id.emplace(tok, id);
        max_token_bytes = std::max(max_token_bytes, tok.size());
    }
    size_t max_token_bytes = 0;  // the longest token: no match is ever longer
    // byte-fallback tokens for bytes [b, e) of word; false when one is missing
    bool byte_tokens(std::string_view word, size_t b, size_t e, std::vector<ModelToken>& out) const {
        std::vector<ModelToken> tmp;
        for (size_t k = b; k < e; ++k) {
            auto id = find(detail::byte_piece((unsigned char)word[k]));
            if (!id) return false;
            tmp.push_back({*id, k, k + 1});
        }
        out.insert(out.end(), tmp.begin(), tmp.end());
        return true;
    }
};
[[nodiscard]] std::unique_ptr<Model> parse_model(const json& j, const std::string& name);
/// An empty WordPiece model (prefix "##", at most 100 characters per word), for vocab.txt.
[[nodiscard]] std::unique_ptr<Model> make_wordpiece_model();

/// hf_decoders.cpp
using Decoder = std::function<void(std::vector<std::string>&)>;
[[nodiscard]] Decoder parse_decoder(const json& j, const std::string& name, const std::string& field);

}  // namespace ts::hf_detail
