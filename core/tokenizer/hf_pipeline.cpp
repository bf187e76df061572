// Hugging Face tokenizer.json pipelines other than byte-level BPE, and BERT's vocab.txt (text_tokenizer.h):
// added tokens -> normalizer -> pre-tokenizer -> model (BPE with byte_fallback, Unigram, WordPiece) ->
// post-processor, and the decoder for ids -> text. Component semantics follow the Hugging Face `tokenizers` library
// (normalizers/, pre_tokenizers/, models/, processors/, decoders/ of its Rust sources); Unicode properties and
// normalization forms come from ICU.
//
// Alignment: every byte of the normalized text remembers the [begin, end) bytes of the input it came from, so a
// token's span in the input is the union of its normalized bytes' origins (HF's NormalizedString does the same).
#include "core/tokenizer/byte_level.h"
#include "core/tokenizer/text_tokenizer.h"
#include "core/tokenizer/text_tokenizer_detail.h"
#include "core/tokenizer/tokenizer_io.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <nlohmann/json.hpp>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>
#include <unordered_map>

namespace ts {
namespace {

using nlohmann::json;
constexpr char32_t kInvalid = 0xFFFFFFFF;  // an invalid UTF-8 byte, kept as it is

[[noreturn]] void fail(const std::string& name, const std::string& field, const std::string& what) {
    throw std::runtime_error(name + ": " + field + ": " + what);
}

std::string describe(const json& j) {
    std::string d = j.dump(-1, ' ', false, json::error_handler_t::replace);
    if (d.size() > 60) d = d.substr(0, 60) + "...";
    return std::string(j.type_name()) + " " + d;
}

char32_t decode_char(std::string_view s, size_t pos, size_t len) {
    const auto b = (unsigned char)s[pos];
    if (len == 1) return b < 0x80 ? char32_t(b) : kInvalid;
    char32_t cp = len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
    for (size_t k = 1; k < len; ++k) cp = (cp << 6) | ((unsigned char)s[pos + k] & 0x3F);
    return cp;
}

// --- Unicode properties (ICU) --------------------------------------------------------------------------------------

bool is_whitespace(char32_t c) { return c != kInvalid && (c == '\t' || c == '\n' || c == '\r' || u_isUWhiteSpace(UChar32(c))); }
bool is_punctuation(char32_t c) {
    if (c == kInvalid) return false;
    if (c < 128) return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
    return u_ispunct(UChar32(c));
}
bool is_control(char32_t c) {  // HF bert: Cc, Cf, Cn, Co (not \t \n \r)
    if (c == kInvalid || c == '\t' || c == '\n' || c == '\r') return false;
    const int8_t t = u_charType(UChar32(c));
    return t == U_CONTROL_CHAR || t == U_FORMAT_CHAR || t == U_UNASSIGNED || t == U_PRIVATE_USE_CHAR || t == U_SURROGATE;
}
bool is_cjk(char32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}
bool is_word_char(char32_t c) {  // regex \w (Unicode): alphabetic, marks, decimal digits, connector punctuation
    if (c == kInvalid) return false;
    if (u_hasBinaryProperty(UChar32(c), UCHAR_ALPHABETIC) || u_hasBinaryProperty(UChar32(c), UCHAR_JOIN_CONTROL)) return true;
    const int8_t t = u_charType(UChar32(c));
    return t == U_NON_SPACING_MARK || t == U_ENCLOSING_MARK || t == U_COMBINING_SPACING_MARK ||
           t == U_DECIMAL_DIGIT_NUMBER || t == U_CONNECTOR_PUNCTUATION;
}
bool is_digit(char32_t c) { return c != kInvalid && u_isdigit(UChar32(c)); }

std::string utf8_of(const icu::UnicodeString& u) {
    std::string out;
    u.toUTF8String(out);
    return out;
}

std::string lowercase_char(char32_t c) {
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

NormText make_norm(std::string_view text, size_t offset) {
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
void map_chars(NormText& t, const std::function<std::optional<std::string>(char32_t, std::string_view)>& f) {
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
void unicode_normalize(NormText& t, const icu::Normalizer2& n) {
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

// Replaces every match of a literal or PCRE2 pattern; the replacement is aligned to the matched bytes.
struct Pattern {
    std::string literal;
    std::shared_ptr<pcre2_code> re;
    // matches in s: [begin, end) pairs, non-empty, left to right
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
        size_t start = 0;
        while (start <= s.size()) {
            const int rc = pcre2_match(re.get(), reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), start,
                                       PCRE2_NO_UTF_CHECK, md.get(), nullptr);
            if (rc < 0) break;
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

Pattern parse_pattern(const json& j, const std::string& name, const std::string& field) {
    Pattern p;
    if (j.is_object() && j.contains("String") && j["String"].is_string()) {
        p.literal = j["String"].get<std::string>();
        return p;
    }
    if (j.is_object() && j.contains("Regex") && j["Regex"].is_string()) {
        const std::string rx = j["Regex"].get<std::string>();
        int err = 0;
        PCRE2_SIZE off = 0;
        pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(rx.data()), rx.size(), PCRE2_UTF | PCRE2_UCP,
                                         &err, &off, nullptr);
        if (!code) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(err, msg, sizeof msg);
            fail(name, field, "regex does not compile at offset " + std::to_string(off) + ": " +
                                  reinterpret_cast<const char*>(msg));
        }
        p.re.reset(code, &pcre2_code_free);
        return p;
    }
    fail(name, field, "expected {\"String\": ...} or {\"Regex\": ...}, found " + describe(j));
}

void replace_pattern(NormText& t, const Pattern& p, const std::string& content) {
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

void prepend(NormText& t, const std::string& what) {
    if (t.s.empty()) return;  // HF: nothing to prepend to
    NormText r;
    r.origin_begin = t.origin_begin;
    r.origin_end = t.origin_end;
    r.append_mapped(what, t.ob[0], t.ob[0]);  // zero-width at the start
    r.append_copy(t, 0, t.s.size());
    t = std::move(r);
}

// --- SentencePiece's precompiled character map (HF "Precompiled" normalizer) -------------------------------------
// Blob: uint32 little-endian trie size in bytes, a darts-clone double-array trie of uint32 units mapping input byte
// strings to offsets into the rest of the blob, which holds NUL-terminated replacement strings. Each position takes
// the longest prefix in the trie, else one character is copied (SentencePiece's normalizer.cc NormalizePrefix).

class PrecompiledMap {
public:
    PrecompiledMap(std::string blob, const std::string& name) : m_blob(std::move(blob)) {
        if (m_blob.size() < 4) fail(name, "normalizer.precompiled_charsmap", "expected at least 4 bytes");
        uint32_t n = 0;
        for (int i = 3; i >= 0; --i) n = (n << 8) | (unsigned char)m_blob[size_t(i)];
        if (n % 4 != 0 || size_t(n) + 4 > m_blob.size())
            fail(name, "normalizer.precompiled_charsmap", "trie size " + std::to_string(n) + " does not fit the blob");
        m_units.resize(n / 4);
        for (size_t i = 0; i < m_units.size(); ++i) {
            uint32_t u = 0;
            for (int k = 3; k >= 0; --k) u = (u << 8) | (unsigned char)m_blob[4 + i * 4 + size_t(k)];
            m_units[i] = u;
        }
        m_norm = m_blob.substr(4 + n);
    }
    // longest match at s[pos..]: (length, replacement) or length 0
    std::pair<size_t, std::string_view> longest(std::string_view s, size_t pos) const {
        if (m_units.empty()) return {0, {}};
        size_t best_len = 0;
        uint32_t best_val = 0;
        size_t node = offset(m_units[0]);
        for (size_t i = pos; i < s.size(); ++i) {
            const auto ch = (unsigned char)s[i];
            node ^= ch;
            if (node >= m_units.size()) break;
            const uint32_t unit = m_units[node];
            if (label(unit) != ch) break;
            node ^= offset(unit);
            if (node >= m_units.size()) break;
            if ((unit >> 8) & 1) {
                best_len = i + 1 - pos;
                best_val = m_units[node] & ((1u << 31) - 1);
            }
        }
        if (best_len == 0 || best_val >= m_norm.size()) return {0, {}};
        const std::string_view rest = std::string_view(m_norm).substr(best_val);
        return {best_len, rest.substr(0, rest.find('\0'))};
    }

private:
    static size_t offset(uint32_t u) { return size_t(u >> 10) << ((u & (1u << 9)) >> 6); }
    static uint32_t label(uint32_t u) { return u & ((1u << 31) | 0xFF); }
    std::string m_blob, m_norm;
    std::vector<uint32_t> m_units;
};

void apply_precompiled(NormText& t, const PrecompiledMap& m) {
    NormText r;
    r.origin_begin = t.origin_begin;
    r.origin_end = t.origin_end;
    for (size_t pos = 0; pos < t.s.size();) {
        const auto [len, rep] = m.longest(t.s, pos);
        if (len > 0) {
            if (rep == std::string_view(t.s).substr(pos, len)) {
                r.append_copy(t, pos, pos + len);
            } else {
                const auto [b, e] = t.origin(pos, pos + len);
                r.append_mapped(rep, b, e);
            }
            pos += len;
        } else {
            const size_t l = utf8_char_len(t.s, pos);
            if (decode_char(t.s, pos, l) == kInvalid) {  // SentencePiece: an invalid byte becomes U+FFFD
                const auto [b, e] = t.origin(pos, pos + 1);
                r.append_mapped("\xEF\xBF\xBD", b, e);
            } else {
                r.append_copy(t, pos, pos + l);
            }
            pos += l;
        }
    }
    t = std::move(r);
}

std::string base64_decode(const std::string& in, const std::string& name) {
    std::string out;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : in) {
        int v;
        if (c >= 'A' && c <= 'Z') v = c - 'A';
        else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
        else if (c >= '0' && c <= '9') v = c - '0' + 52;
        else if (c == '+') v = 62;
        else if (c == '/') v = 63;
        else if (c == '=' || c == '\n' || c == '\r') continue;
        else fail(name, "normalizer.precompiled_charsmap", "expected base64 text");
        acc = (acc << 6) | uint32_t(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(char((acc >> bits) & 0xFF));
        }
    }
    return out;
}

// --- normalizers ---------------------------------------------------------------------------------------------------

using Normalizer = std::function<void(NormText&)>;

const icu::Normalizer2& icu_form(const std::string& type) {
    UErrorCode st = U_ZERO_ERROR;
    const icu::Normalizer2* n = type == "NFC"    ? icu::Normalizer2::getNFCInstance(st)
                                : type == "NFD"  ? icu::Normalizer2::getNFDInstance(st)
                                : type == "NFKC" ? icu::Normalizer2::getNFKCInstance(st)
                                                 : icu::Normalizer2::getNFKDInstance(st);
    if (U_FAILURE(st) || !n) throw std::runtime_error("ICU: " + type + " normalizer unavailable");
    return *n;
}

std::optional<std::string> strip_accents_char(char32_t c, std::string_view bytes) {
    if (c == kInvalid || c < 0xC0) return std::nullopt;
    UErrorCode st = U_ZERO_ERROR;
    const icu::UnicodeString d = icu_form("NFD").normalize(icu::UnicodeString(UChar32(c)), st);
    if (U_FAILURE(st)) return std::nullopt;
    icu::UnicodeString kept;
    for (int32_t i = 0; i < d.length();) {
        const UChar32 x = d.char32At(i);
        if (u_charType(x) != U_NON_SPACING_MARK) kept.append(x);
        i += U16_LENGTH(x);
    }
    std::string out = utf8_of(kept);
    if (out == bytes) return std::nullopt;
    return out;
}

Normalizer bert_normalizer(bool clean_text, bool chinese, bool strip_accents, bool lowercase) {
    return [=](NormText& t) {
        if (clean_text)
            map_chars(t, [](char32_t c, std::string_view) -> std::optional<std::string> {
                if (c == 0 || c == 0xFFFD || is_control(c)) return std::string();
                if (c != ' ' && is_whitespace(c)) return std::string(" ");
                return std::nullopt;
            });
        if (chinese)
            map_chars(t, [](char32_t c, std::string_view b) -> std::optional<std::string> {
                if (!is_cjk(c)) return std::nullopt;
                return " " + std::string(b) + " ";
            });
        if (strip_accents) map_chars(t, strip_accents_char);
        if (lowercase)
            map_chars(t, [](char32_t c, std::string_view b) -> std::optional<std::string> {
                if (c == kInvalid) return std::nullopt;
                std::string l = lowercase_char(c);
                if (l == b) return std::nullopt;
                return l;
            });
    };
}

Normalizer parse_normalizer(const json& j, const std::string& name, const std::string& field) {
    if (j.is_null()) return nullptr;
    if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
        fail(name, field, "expected an object with a \"type\", found " + describe(j));
    const std::string type = j["type"].get<std::string>();
    const auto flag = [&](const char* key, bool def) {
        auto it = j.find(key);
        return it == j.end() || it->is_null() ? def : it->is_boolean() ? it->get<bool>() : def;
    };
    if (type == "Sequence") {
        std::vector<Normalizer> steps;
        if (!j.contains("normalizers") || !j["normalizers"].is_array()) fail(name, field + ".normalizers", "expected an array");
        for (size_t i = 0; i < j["normalizers"].size(); ++i)
            if (auto n = parse_normalizer(j["normalizers"][i], name, field + ".normalizers[" + std::to_string(i) + "]"))
                steps.push_back(std::move(n));
        return [steps](NormText& t) {
            for (const auto& s : steps) s(t);
        };
    }
    if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
        const icu::Normalizer2* n = &icu_form(type);
        return [n](NormText& t) { unicode_normalize(t, *n); };
    }
    if (type == "Lowercase") return bert_normalizer(false, false, false, true);
    if (type == "StripAccents") return [](NormText& t) { map_chars(t, strip_accents_char); };
    if (type == "BertNormalizer") {
        const bool lower = flag("lowercase", true);
        return bert_normalizer(flag("clean_text", true), flag("handle_chinese_chars", true), flag("strip_accents", lower), lower);
    }
    if (type == "Replace") {
        if (!j.contains("pattern")) fail(name, field + ".pattern", "missing");
        Pattern p = parse_pattern(j["pattern"], name, field + ".pattern");
        if (!j.contains("content") || !j["content"].is_string()) fail(name, field + ".content", "expected a string");
        const std::string content = j["content"].get<std::string>();
        return [p, content](NormText& t) { replace_pattern(t, p, content); };
    }
    if (type == "Prepend") {
        if (!j.contains("prepend") || !j["prepend"].is_string()) fail(name, field + ".prepend", "expected a string");
        const std::string what = j["prepend"].get<std::string>();
        return [what](NormText& t) { prepend(t, what); };
    }
    if (type == "Strip") {
        const bool left = flag("strip_left", true), right = flag("strip_right", true);
        return [left, right](NormText& t) {
            size_t b = 0, e = t.s.size();
            const auto ws_at = [&](size_t p) { return p < t.s.size() && is_whitespace(decode_char(t.s, p, utf8_char_len(t.s, p))); };
            if (left)
                while (b < e && ws_at(b)) b += utf8_char_len(t.s, b);
            if (right)
                while (e > b) {
                    size_t p = e - 1;
                    while (p > b && ((unsigned char)t.s[p] & 0xC0) == 0x80) --p;
                    if (!ws_at(p) || p + utf8_char_len(t.s, p) != e) break;
                    e = p;
                }
            NormText r = t.sub(b, e);
            r.origin_begin = t.origin_begin;
            r.origin_end = t.origin_end;
            t = std::move(r);
        };
    }
    if (type == "Precompiled") {
        auto it = j.find("precompiled_charsmap");
        if (it == j.end() || it->is_null()) return nullptr;  // an empty map changes nothing
        if (!it->is_string()) fail(name, field + ".precompiled_charsmap", "expected a base64 string, found " + describe(*it));
        auto map = std::make_shared<const PrecompiledMap>(base64_decode(it->get<std::string>(), name), name);
        return [map](NormText& t) { apply_precompiled(t, *map); };
    }
    if (type == "Nmt") {  // SentencePiece's nmt_nfkc control-character cleanup
        return [](NormText& t) {
            map_chars(t, [](char32_t c, std::string_view) -> std::optional<std::string> {
                if ((c >= 0x1 && c <= 0x8) || c == 0xB || (c >= 0xE && c <= 0x1F) || c == 0x7F || c == 0x8F || c == 0x9F)
                    return std::string();
                if (c == 0x9 || c == 0xA || c == 0xC || c == 0xD || c == 0x1680 || (c >= 0x200B && c <= 0x200F) ||
                    c == 0x2028 || c == 0x2029 || c == 0x2581 || c == 0xFEFF || c == 0xFFFD)
                    return std::string(" ");
                return std::nullopt;
            });
        };
    }
    fail(name, field + ".type", "normalizer \"" + type + "\" is not supported");
}

// --- pre-tokenizers ------------------------------------------------------------------------------------------------

using Splits = std::vector<NormText>;
using PreTokenizer = std::function<void(Splits&)>;

enum class Behavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

// Splits one piece at the given matches (sorted, non-overlapping, non-empty) by HF's SplitDelimiterBehavior.
void split_by(const NormText& t, const std::vector<std::pair<size_t, size_t>>& matches, Behavior beh, bool invert,
              Splits& out) {
    std::vector<std::pair<std::pair<size_t, size_t>, bool>> parts;  // (range, is_match)
    size_t last = 0;
    for (const auto& m : matches) {
        if (m.first > last) parts.push_back({{last, m.first}, false});
        parts.push_back({m, true});
        last = m.second;
    }
    if (last < t.s.size()) parts.push_back({{last, t.s.size()}, false});
    if (invert)
        for (auto& p : parts) p.second = !p.second;
    std::vector<std::pair<size_t, size_t>> ranges;
    switch (beh) {
        case Behavior::Removed:
            for (const auto& p : parts)
                if (!p.second) ranges.push_back(p.first);
            break;
        case Behavior::Isolated:
            for (const auto& p : parts) ranges.push_back(p.first);
            break;
        case Behavior::Contiguous:
            for (size_t i = 0; i < parts.size(); ++i) {
                if (i > 0 && parts[i].second && parts[i - 1].second) ranges.back().second = parts[i].first.second;
                else ranges.push_back(parts[i].first);
            }
            break;
        case Behavior::MergedWithPrevious:
            for (size_t i = 0; i < parts.size(); ++i) {
                if (parts[i].second && !ranges.empty() && i > 0 && !parts[i - 1].second) ranges.back().second = parts[i].first.second;
                else ranges.push_back(parts[i].first);
            }
            break;
        case Behavior::MergedWithNext: {
            bool pending = false;
            for (const auto& p : parts) {
                if (pending) {
                    ranges.back().second = p.first.second;
                    pending = p.second;
                } else {
                    ranges.push_back(p.first);
                    pending = p.second;
                }
            }
            break;
        }
    }
    for (const auto& [b, e] : ranges)
        if (e > b) out.push_back(t.sub(b, e));
}

// Matches of single characters for which pred holds (each char one match; runs when `runs`).
std::vector<std::pair<size_t, size_t>> char_matches(const std::string& s, const std::function<bool(char32_t)>& pred, bool runs) {
    std::vector<std::pair<size_t, size_t>> m;
    for (size_t pos = 0; pos < s.size();) {
        const size_t len = utf8_char_len(s, pos);
        if (pred(decode_char(s, pos, len))) {
            if (runs && !m.empty() && m.back().second == pos) m.back().second = pos + len;
            else m.emplace_back(pos, pos + len);
        }
        pos += len;
    }
    return m;
}

PreTokenizer each_split(std::function<void(const NormText&, Splits&)> f) {
    return [f](Splits& s) {
        Splits out;
        for (const NormText& t : s) f(t, out);
        s = std::move(out);
    };
}

Behavior parse_behavior(const json& j, const std::string& name, const std::string& field, Behavior def) {
    auto it = j.find("behavior");
    if (it == j.end() || it->is_null()) return def;
    const std::string b = it->is_string() ? it->get<std::string>() : "";
    if (b == "Removed") return Behavior::Removed;
    if (b == "Isolated") return Behavior::Isolated;
    if (b == "MergedWithPrevious") return Behavior::MergedWithPrevious;
    if (b == "MergedWithNext") return Behavior::MergedWithNext;
    if (b == "Contiguous") return Behavior::Contiguous;
    fail(name, field + ".behavior", "expected Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous, found " +
                                        describe(*it));
}

// prepend_scheme of Metaspace (pre-tokenizer and decoder): "always", "first" or "never"
std::string metaspace_scheme(const json& j) {
    if (auto it = j.find("prepend_scheme"); it != j.end() && it->is_string()) return it->get<std::string>();
    if (auto it = j.find("add_prefix_space"); it != j.end() && it->is_boolean()) return it->get<bool>() ? "always" : "never";
    return "always";
}

std::string metaspace_replacement(const json& j) {
    if (auto it = j.find("replacement"); it != j.end() && it->is_string()) return it->get<std::string>();
    return "\xE2\x96\x81";
}

PreTokenizer parse_pre_tokenizer(const json& j, const std::string& name, const std::string& field) {
    if (j.is_null()) return nullptr;
    if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
        fail(name, field, "expected an object with a \"type\", found " + describe(j));
    const std::string type = j["type"].get<std::string>();
    if (type == "Sequence") {
        std::vector<PreTokenizer> steps;
        if (!j.contains("pretokenizers") || !j["pretokenizers"].is_array()) fail(name, field + ".pretokenizers", "expected an array");
        for (size_t i = 0; i < j["pretokenizers"].size(); ++i)
            if (auto p = parse_pre_tokenizer(j["pretokenizers"][i], name, field + ".pretokenizers[" + std::to_string(i) + "]"))
                steps.push_back(std::move(p));
        return [steps](Splits& s) {
            for (const auto& p : steps) p(s);
        };
    }
    if (type == "Metaspace") {
        const std::string rep = metaspace_replacement(j);
        const std::string scheme = metaspace_scheme(j);
        if (scheme != "always" && scheme != "first" && scheme != "never")
            fail(name, field + ".prepend_scheme", "expected always, first or never, found \"" + scheme + "\"");
        const bool split = j.value("split", true);
        return each_split([rep, scheme, split](const NormText& in, Splits& out) {
            NormText t = in;
            replace_pattern(t, Pattern{" ", nullptr}, rep);
            const bool starts = t.s.compare(0, rep.size(), rep) == 0;
            if (!starts && (scheme == "always" || (scheme == "first" && t.origin_begin == 0))) prepend(t, rep);
            if (!split) {
                if (!t.s.empty()) out.push_back(std::move(t));
                return;
            }
            split_by(t, Pattern{rep, nullptr}.find_all(t.s), Behavior::MergedWithNext, false, out);
        });
    }
    if (type == "WhitespaceSplit")
        return each_split([](const NormText& t, Splits& out) {
            split_by(t, char_matches(t.s, is_whitespace, true), Behavior::Removed, false, out);
        });
    if (type == "Whitespace")  // \w+|[^\w\s]+
        return each_split([](const NormText& t, Splits& out) {
            std::vector<std::pair<size_t, size_t>> words;
            int cls_prev = -1;
            for (size_t pos = 0; pos < t.s.size();) {
                const size_t len = utf8_char_len(t.s, pos);
                const char32_t c = decode_char(t.s, pos, len);
                const int cls = is_word_char(c) ? 0 : is_whitespace(c) ? 2 : 1;
                if (cls != 2) {
                    if (cls == cls_prev && !words.empty() && words.back().second == pos) words.back().second = pos + len;
                    else words.emplace_back(pos, pos + len);
                }
                cls_prev = cls;
                pos += len;
            }
            split_by(t, words, Behavior::Removed, true, out);
        });
    if (type == "BertPreTokenizer")
        return each_split([](const NormText& t, Splits& out) {
            Splits tmp;
            split_by(t, char_matches(t.s, is_whitespace, true), Behavior::Removed, false, tmp);
            for (const NormText& w : tmp) split_by(w, char_matches(w.s, is_punctuation, false), Behavior::Isolated, false, out);
        });
    if (type == "Punctuation") {
        const Behavior b = parse_behavior(j, name, field, Behavior::Isolated);
        return each_split([b](const NormText& t, Splits& out) { split_by(t, char_matches(t.s, is_punctuation, false), b, false, out); });
    }
    if (type == "Digits") {
        const bool individual = j.value("individual_digits", false);
        return each_split([individual](const NormText& t, Splits& out) {
            split_by(t, char_matches(t.s, is_digit, !individual), Behavior::Isolated, false, out);
        });
    }
    if (type == "Split") {
        if (!j.contains("pattern")) fail(name, field + ".pattern", "missing");
        const Pattern p = parse_pattern(j["pattern"], name, field + ".pattern");
        const Behavior b = parse_behavior(j, name, field, Behavior::Isolated);
        const bool invert = j.value("invert", false);
        return each_split([p, b, invert](const NormText& t, Splits& out) { split_by(t, p.find_all(t.s), b, invert, out); });
    }
    if (type == "CharDelimiterSplit") {
        const std::string d = j.value("delimiter", std::string(" "));
        return each_split([d](const NormText& t, Splits& out) { split_by(t, Pattern{d, nullptr}.find_all(t.s), Behavior::Removed, false, out); });
    }
    if (type == "UnicodeScripts") fail(name, field + ".type", "pre-tokenizer \"UnicodeScripts\" is not supported");
    if (type == "ByteLevel")
        fail(name, field + ".type", "ByteLevel pre-tokenizer with a model other than BPE is not supported");
    fail(name, field + ".type", "pre-tokenizer \"" + type + "\" is not supported");
}

// --- models --------------------------------------------------------------------------------------------------------

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
    }
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

class BpeModel final : public Model {
public:
    bool byte_fallback = false, fuse_unk = false, ignore_merges = false;
    std::string prefix, suffix;
    struct PairHash {
        size_t operator()(uint64_t k) const { return size_t(k * 0x9E3779B97F4A7C15ull >> 17) ^ size_t(k); }
    };
    std::unordered_map<uint64_t, std::pair<int32_t, int32_t>, PairHash> merges;  // (left,right) -> (rank, merged)
    static uint64_t key(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }

    std::string kind() const override { return byte_fallback ? "BPE with byte fallback" : "BPE"; }

    void tokenize(std::string_view w, std::vector<ModelToken>& out) const override {
        if (ignore_merges)
            if (auto id = find(w)) {
                out.push_back({*id, 0, w.size()});
                return;
            }
        struct Sym {
            int32_t id;
            size_t b, e;
            int prev, next;
            bool alive;
        };
        std::vector<Sym> syms;
        std::vector<ModelToken> tmp;
        bool last_unk = false;
        for (size_t pos = 0; pos < w.size();) {
            const size_t len = utf8_char_len(w, pos);
            std::string piece;
            if (pos > 0) piece += prefix;
            piece.append(w.substr(pos, len));
            if (pos + len == w.size()) piece += suffix;
            if (auto id = find(piece)) {
                syms.push_back({*id, pos, pos + len, 0, 0, true});
                last_unk = false;
            } else if (tmp.clear(), byte_fallback && byte_tokens(w, pos, pos + len, tmp)) {
                for (const ModelToken& t : tmp) syms.push_back({t.id, t.b, t.e, 0, 0, true});
                last_unk = false;
            } else if (unk) {
                if (fuse_unk && last_unk) syms.back().e = pos + len;
                else syms.push_back({*unk, pos, pos + len, 0, 0, true});
                last_unk = true;
            }  // no unk token: the character is dropped (HF reports an error)
            pos += len;
        }
        const int n = int(syms.size());
        for (int i = 0; i < n; ++i) {
            syms[size_t(i)].prev = i - 1;
            syms[size_t(i)].next = i + 1 < n ? i + 1 : -1;
        }
        using Item = std::tuple<int32_t, int, int32_t, int32_t>;  // rank, left index, left id, right id
        std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
        const auto push = [&](int i) {
            if (i < 0) return;
            const int j = syms[size_t(i)].next;
            if (j < 0) return;
            auto it = merges.find(key(syms[size_t(i)].id, syms[size_t(j)].id));
            if (it != merges.end()) heap.emplace(it->second.first, i, syms[size_t(i)].id, syms[size_t(j)].id);
        };
        for (int i = 0; i < n; ++i) push(i);
        while (!heap.empty()) {
            const auto [rank, i, lid, rid] = heap.top();
            heap.pop();
            Sym& a = syms[size_t(i)];
            if (!a.alive || a.id != lid || a.next < 0) continue;
            Sym& b = syms[size_t(a.next)];
            if (b.id != rid) continue;
            a.id = merges.at(key(lid, rid)).second;
            a.e = b.e;
            b.alive = false;
            a.next = b.next;
            if (b.next >= 0) syms[size_t(b.next)].prev = i;
            push(a.prev);
            push(i);
        }
        for (const Sym& s : syms)
            if (s.alive) out.push_back({s.id, s.b, s.e});
    }
};

class UnigramModel final : public Model {
public:
    std::vector<double> scores;
    bool byte_fallback = false;
    double min_score = 0;
    size_t max_len = 1;
    std::string kind() const override { return byte_fallback ? "Unigram with byte fallback" : "Unigram"; }

    void tokenize(std::string_view w, std::vector<ModelToken>& out) const override {
        const size_t n = w.size();
        constexpr double kUnkPenalty = 10.0;
        std::vector<double> best(n + 1, -std::numeric_limits<double>::infinity());
        std::vector<int32_t> best_id(n + 1, -1);
        std::vector<size_t> best_from(n + 1, 0);
        std::vector<char> reached(n + 1, 0);
        best[0] = 0;
        reached[0] = 1;
        for (size_t pos = 0; pos < n;) {
            const size_t clen = utf8_char_len(w, pos);
            if (reached[pos]) {
                bool single = false;
                for (size_t len = 1; len <= max_len && pos + len <= n; ++len) {
                    auto id = find(w.substr(pos, len));
                    if (!id) continue;
                    if (len == clen) single = true;
                    const double cand = best[pos] + scores[size_t(*id)];
                    if (!reached[pos + len] || cand > best[pos + len]) {
                        best[pos + len] = cand;
                        best_id[pos + len] = *id;
                        best_from[pos + len] = pos;
                        reached[pos + len] = 1;
                    }
                }
                if (!single) {
                    const double cand = best[pos] + min_score - kUnkPenalty;
                    if (!reached[pos + clen] || cand > best[pos + clen]) {
                        best[pos + clen] = cand;
                        best_id[pos + clen] = unk ? *unk : -1;
                        best_from[pos + clen] = pos;
                        reached[pos + clen] = 1;
                    }
                }
            }
            pos += clen;
        }
        std::vector<ModelToken> rev;
        for (size_t e = n; e > 0;) {
            const size_t b = best_from[e];
            rev.push_back({best_id[e], b, e});
            e = b;
        }
        std::reverse(rev.begin(), rev.end());
        // fuse consecutive unknowns, then byte fallback
        std::vector<ModelToken> fused;
        for (const ModelToken& t : rev) {
            const bool is_unk = t.id < 0 || (unk && t.id == *unk);
            if (is_unk && !fused.empty() && (fused.back().id < 0 || (unk && fused.back().id == *unk)))
                fused.back().e = t.e;
            else
                fused.push_back(t);
        }
        for (const ModelToken& t : fused) {
            const bool is_unk = t.id < 0 || (unk && t.id == *unk);
            if (is_unk && byte_fallback && byte_tokens(w, t.b, t.e, out)) continue;
            if (t.id >= 0) out.push_back(t);
        }
    }
};

class WordPieceModel final : public Model {
public:
    std::string prefix = "##";
    size_t max_chars = 100;
    std::string kind() const override { return "WordPiece"; }
    void tokenize(std::string_view w, std::vector<ModelToken>& out) const override {
        if (utf8_char_count(w) > max_chars) {
            if (unk) out.push_back({*unk, 0, w.size()});
            return;
        }
        std::vector<size_t> bounds;  // character starts, then w.size()
        for (size_t p = 0; p < w.size(); p += utf8_char_len(w, p)) bounds.push_back(p);
        bounds.push_back(w.size());
        std::vector<ModelToken> sub;
        for (size_t si = 0; si + 1 < bounds.size();) {
            std::optional<int32_t> cur;
            size_t ei = bounds.size() - 1;
            for (; ei > si; --ei) {
                std::string s = si > 0 ? prefix : std::string();
                s.append(w.substr(bounds[si], bounds[ei] - bounds[si]));
                if ((cur = find(s))) break;
            }
            if (!cur) {
                if (unk) out.push_back({*unk, 0, w.size()});
                return;
            }
            sub.push_back({*cur, bounds[si], bounds[ei]});
            si = ei;
        }
        out.insert(out.end(), sub.begin(), sub.end());
    }
};

std::optional<int32_t> token_id_of(const Model& m, const json& model, const char* key, const std::string& name) {
    auto it = model.find(key);
    if (it == model.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) fail(name, std::string("model.") + key, "expected a string, found " + describe(*it));
    auto id = m.find(it->get<std::string>());
    if (!id) fail(name, std::string("model.") + key, "\"" + it->get<std::string>() + "\" is not in model.vocab");
    return id;
}

void read_vocab_object(Model& m, const json& v, const std::string& name) {
    if (!v.is_object()) fail(name, "model.vocab", "expected an object {token: id}, found " + describe(v));
    for (auto it = v.begin(); it != v.end(); ++it) {
        if (!it.value().is_number_integer())
            fail(name, "model.vocab[\"" + it.key() + "\"]", "expected an integer id, found " + describe(it.value()));
        const int64_t id = it.value().get<int64_t>();
        if (id < 0 || id > (1 << 22)) fail(name, "model.vocab[\"" + it.key() + "\"]", "id " + std::to_string(id) + " out of range");
        m.add(it.key(), int32_t(id));
    }
}

std::unique_ptr<Model> parse_model(const json& j, const std::string& name) {
    if (!j.is_object()) fail(name, "model", "expected an object, found " + describe(j));
    const std::string type = j.value("type", std::string());
    if (!j.contains("vocab")) fail(name, "model.vocab", "missing");
    if (type == "BPE" || (type.empty() && j.contains("merges"))) {
        auto m = std::make_unique<BpeModel>();
        read_vocab_object(*m, j["vocab"], name);
        m->byte_fallback = j.value("byte_fallback", false);
        m->fuse_unk = j.value("fuse_unk", false);
        m->ignore_merges = j.value("ignore_merges", false);
        if (j.contains("continuing_subword_prefix") && j["continuing_subword_prefix"].is_string())
            m->prefix = j["continuing_subword_prefix"].get<std::string>();
        if (j.contains("end_of_word_suffix") && j["end_of_word_suffix"].is_string())
            m->suffix = j["end_of_word_suffix"].get<std::string>();
        m->unk = token_id_of(*m, j, "unk_token", name);
        if (auto it = j.find("merges"); it != j.end() && !it->is_null()) {
            if (!it->is_array()) fail(name, "model.merges", "expected an array, found " + describe(*it));
            for (size_t i = 0; i < it->size(); ++i) {
                const json& mj = (*it)[i];
                const std::string field = "model.merges[" + std::to_string(i) + "]";
                std::string a, b;
                if (mj.is_string()) {
                    const std::string& s = mj.get_ref<const std::string&>();
                    const size_t sp = s.find(' ');
                    if (sp == std::string::npos || sp == 0 || sp + 1 == s.size())
                        fail(name, field, "expected \"left right\", found \"" + s + "\"");
                    a = s.substr(0, sp);
                    b = s.substr(sp + 1);
                } else if (mj.is_array() && mj.size() == 2 && mj[0].is_string() && mj[1].is_string()) {
                    a = mj[0].get<std::string>();
                    b = mj[1].get<std::string>();
                } else {
                    fail(name, field, "expected \"left right\" or [\"left\", \"right\"], found " + describe(mj));
                }
                auto ia = m->find(a), ib = m->find(b);
                if (!ia || !ib) fail(name, field, "\"" + (ia ? b : a) + "\" is not in model.vocab");
                const std::string rhs = !m->prefix.empty() && b.compare(0, m->prefix.size(), m->prefix) == 0 ? b.substr(m->prefix.size()) : b;
                auto im = m->find(a + rhs);
                if (!im) fail(name, field, "the merged token \"" + a + rhs + "\" is not in model.vocab");
                m->merges.emplace(BpeModel::key(*ia, *ib), std::make_pair(int32_t(i), *im));
            }
        }
        return m;
    }
    if (type == "Unigram") {
        auto m = std::make_unique<UnigramModel>();
        const json& v = j["vocab"];
        if (!v.is_array()) fail(name, "model.vocab", "expected an array of [piece, score], found " + describe(v));
        m->min_score = std::numeric_limits<double>::infinity();
        for (size_t i = 0; i < v.size(); ++i) {
            const json& e = v[i];
            if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number())
                fail(name, "model.vocab[" + std::to_string(i) + "]", "expected [piece, score], found " + describe(e));
            const std::string piece = e[0].get<std::string>();
            m->add(piece, int32_t(i));
            m->scores.push_back(e[1].get<double>());
            m->min_score = std::min(m->min_score, m->scores.back());
            m->max_len = std::max(m->max_len, piece.size());
        }
        if (v.empty()) m->min_score = 0;
        if (auto it = j.find("unk_id"); it != j.end() && !it->is_null()) {
            if (!it->is_number_integer() || it->get<int64_t>() < 0 || size_t(it->get<int64_t>()) >= v.size())
                fail(name, "model.unk_id", "expected an id inside model.vocab, found " + describe(*it));
            m->unk = int32_t(it->get<int64_t>());
        }
        m->byte_fallback = j.value("byte_fallback", false);
        return m;
    }
    if (type == "WordPiece") {
        auto m = std::make_unique<WordPieceModel>();
        read_vocab_object(*m, j["vocab"], name);
        if (j.contains("continuing_subword_prefix") && j["continuing_subword_prefix"].is_string())
            m->prefix = j["continuing_subword_prefix"].get<std::string>();
        if (j.contains("max_input_chars_per_word") && j["max_input_chars_per_word"].is_number_unsigned())
            m->max_chars = j["max_input_chars_per_word"].get<size_t>();
        m->unk = token_id_of(*m, j, "unk_token", name);
        return m;
    }
    fail(name, "model.type", "expected \"BPE\", \"Unigram\" or \"WordPiece\", found " + describe(j.value("type", json())));
}

// --- post-processors -----------------------------------------------------------------------------------------------

// What goes around the sequence: tokens before and after it.
struct Template {
    std::vector<std::pair<int32_t, std::string>> before, after;
};

void parse_post_processor(const json& j, const std::string& name, const std::string& field, Template& t) {
    if (j.is_null()) return;
    if (!j.is_object() || !j.contains("type")) fail(name, field, "expected an object with a \"type\", found " + describe(j));
    const std::string type = j["type"].get<std::string>();
    const auto pair_of = [&](const char* key) -> std::pair<int32_t, std::string> {
        auto it = j.find(key);
        if (it == j.end() || !it->is_array() || it->size() != 2 || !(*it)[0].is_string() || !(*it)[1].is_number_integer())
            fail(name, field + "." + key, "expected [\"token\", id]");
        return {(*it)[1].get<int32_t>(), (*it)[0].get<std::string>()};
    };
    if (type == "BertProcessing" || type == "RobertaProcessing") {
        t.before.push_back(pair_of("cls"));
        t.after.push_back(pair_of("sep"));
        return;
    }
    if (type == "ByteLevel") return;
    if (type == "Sequence") {
        if (!j.contains("processors") || !j["processors"].is_array()) fail(name, field + ".processors", "expected an array");
        for (size_t i = 0; i < j["processors"].size(); ++i)
            parse_post_processor(j["processors"][i], name, field + ".processors[" + std::to_string(i) + "]", t);
        return;
    }
    if (type == "TemplateProcessing") {
        if (!j.contains("single") || !j["single"].is_array()) fail(name, field + ".single", "expected an array");
        const json& specials = j.contains("special_tokens") ? j["special_tokens"] : json::object();
        bool seen_a = false;
        for (size_t i = 0; i < j["single"].size(); ++i) {
            const json& item = j["single"][i];
            const std::string f = field + ".single[" + std::to_string(i) + "]";
            if (item.contains("Sequence")) {
                seen_a = true;
                continue;
            }
            if (!item.contains("SpecialToken") || !item["SpecialToken"].contains("id"))
                fail(name, f, "expected {\"Sequence\": ...} or {\"SpecialToken\": {\"id\": ...}}, found " + describe(item));
            const std::string id = item["SpecialToken"]["id"].get<std::string>();
            if (!specials.contains(id) || !specials[id].contains("ids") || !specials[id]["ids"].is_array())
                fail(name, f, "special token \"" + id + "\" is not in " + field + ".special_tokens");
            const json& ids = specials[id]["ids"];
            const json toks = specials[id].value("tokens", json::array());
            for (size_t k = 0; k < ids.size(); ++k) {
                const int32_t tid = ids[k].get<int32_t>();
                const std::string tok = k < toks.size() && toks[k].is_string() ? toks[k].get<std::string>() : id;
                (seen_a ? t.after : t.before).emplace_back(tid, tok);
            }
        }
        return;
    }
    fail(name, field + ".type", "post-processor \"" + type + "\" is not supported");
}

// --- decoders ------------------------------------------------------------------------------------------------------

using Decoder = std::function<void(std::vector<std::string>&)>;

bool valid_utf8(std::string_view s) {
    for (size_t p = 0; p < s.size();) {
        const size_t l = utf8_char_len(s, p);
        if (decode_char(s, p, l) == kInvalid) return false;
        p += l;
    }
    return true;
}

// (built into a new string: GCC 12 warns falsely, -Wrestrict, on std::string::replace here)
void replace_all(std::string& s, std::string_view from, std::string_view to) {
    if (from.empty() || s.find(from) == std::string::npos) return;
    std::string out;
    out.reserve(s.size());
    size_t last = 0;
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, last)) {
        out.append(s, last, p - last);
        out.append(to);
        last = p + from.size();
    }
    out.append(s, last, std::string::npos);
    s = std::move(out);
}

Decoder parse_decoder(const json& j, const std::string& name, const std::string& field) {
    if (j.is_null()) return nullptr;
    if (!j.is_object() || !j.contains("type")) fail(name, field, "expected an object with a \"type\", found " + describe(j));
    const std::string type = j["type"].get<std::string>();
    if (type == "Sequence") {
        std::vector<Decoder> steps;
        if (!j.contains("decoders") || !j["decoders"].is_array()) fail(name, field + ".decoders", "expected an array");
        for (size_t i = 0; i < j["decoders"].size(); ++i)
            if (auto d = parse_decoder(j["decoders"][i], name, field + ".decoders[" + std::to_string(i) + "]"))
                steps.push_back(std::move(d));
        return [steps](std::vector<std::string>& t) {
            for (const auto& d : steps) d(t);
        };
    }
    if (type == "ByteFallback")
        return [](std::vector<std::string>& toks) {
            std::vector<std::string> out;
            std::string bytes;
            size_t nbytes = 0;
            const auto flush = [&] {
                if (nbytes == 0) return;
                if (valid_utf8(bytes)) out.push_back(bytes);
                else
                    for (size_t k = 0; k < nbytes; ++k) out.emplace_back("\xEF\xBF\xBD");
                bytes.clear();
                nbytes = 0;
            };
            for (const std::string& t : toks) {
                const int b = detail::parse_byte_piece(t);
                if (b >= 0) {
                    bytes.push_back(char(b));
                    ++nbytes;
                } else {
                    flush();
                    out.push_back(t);
                }
            }
            flush();
            toks = std::move(out);
        };
    if (type == "Metaspace") {
        const std::string rep = metaspace_replacement(j);
        const bool strip_first = metaspace_scheme(j) != "never";
        return [rep, strip_first](std::vector<std::string>& toks) {
            for (size_t i = 0; i < toks.size(); ++i) {
                replace_all(toks[i], rep, " ");
                if (i == 0 && strip_first && !toks[i].empty() && toks[i][0] == ' ') toks[i].erase(0, 1);
            }
        };
    }
    if (type == "Replace") {
        const json& p = j.value("pattern", json());
        if (!p.is_object() || !p.contains("String") || !p["String"].is_string())
            fail(name, field + ".pattern", "expected {\"String\": ...} (regex replace in a decoder is not supported)");
        const std::string from = p["String"].get<std::string>(), to = j.value("content", std::string());
        return [from, to](std::vector<std::string>& toks) {
            for (auto& t : toks) replace_all(t, from, to);
        };
    }
    if (type == "Fuse")
        return [](std::vector<std::string>& toks) {
            std::string all;
            for (const auto& t : toks) all += t;
            toks.assign(1, all);
        };
    if (type == "Strip") {
        const std::string content = j.value("content", std::string(" "));
        const size_t start = j.value("start", size_t(0)), stop = j.value("stop", size_t(0));
        return [content, start, stop](std::vector<std::string>& toks) {
            for (auto& t : toks) {
                for (size_t k = 0; k < start && t.compare(0, content.size(), content) == 0; ++k) t.erase(0, content.size());
                for (size_t k = 0; k < stop && t.size() >= content.size() &&
                                   t.compare(t.size() - content.size(), content.size(), content) == 0; ++k)
                    t.erase(t.size() - content.size());
            }
        };
    }
    if (type == "WordPiece") {
        const std::string prefix = j.value("prefix", std::string("##"));
        const bool cleanup = j.value("cleanup", true);
        // cleanup runs on the joined text (as transformers' clean_up_tokenization does after decoding), so that
        // "don ' t" becomes "don't" too
        return [prefix, cleanup](std::vector<std::string>& toks) {
            for (size_t i = 0; i < toks.size(); ++i) {
                std::string& t = toks[i];
                if (i > 0) {
                    if (t.compare(0, prefix.size(), prefix) == 0) t.erase(0, prefix.size());
                    else t.insert(0, " ");
                }
            }
            if (!cleanup) return;
            std::string all;
            for (const auto& t : toks) all += t;
            for (const auto& [a, b] : std::vector<std::pair<const char*, const char*>>{
                     {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
                     {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}})
                replace_all(all, a, b);
            toks.assign(1, all);
        };
    }
    if (type == "ByteLevel")
        return [](std::vector<std::string>& toks) {
            for (auto& t : toks)
                if (auto b = byte_level_to_bytes(t)) t = *b;
        };
    if (type == "BPEDecoder") {
        const std::string suffix = j.value("suffix", std::string("</w>"));
        return [suffix](std::vector<std::string>& toks) {
            for (size_t i = 0; i < toks.size(); ++i) replace_all(toks[i], suffix, i + 1 == toks.size() ? "" : " ");
        };
    }
    fail(name, field + ".type", "decoder \"" + type + "\" is not supported");
}

// --- the pipeline --------------------------------------------------------------------------------------------------

struct Added {
    int32_t id;
    std::string content;
    bool special, lstrip, rstrip;
};

class HfPipeline final : public TextTokenizer {
public:
    std::string name;
    std::vector<Added> added;  // longest first
    std::vector<uint32_t> by_first_byte[256];  // indices into added, longest first
    Normalizer normalizer;
    PreTokenizer pre;
    std::unique_ptr<Model> model;
    Template post;
    Decoder decoder;
    std::vector<char> special_ids;
    std::unordered_map<int32_t, std::string> added_piece;
    size_t size = 0;

    std::string description() const override {
        return model->kind() + " (" + name + ", " + std::to_string(size) + " tokens)";
    }

    TextEncoding encode(std::string_view text, bool add_special) const override {
        TextEncoding enc;
        const auto push = [&](int32_t id, std::string piece, size_t b, size_t e, bool special) {
            enc.ids.push_back(id);
            enc.pieces.push_back(std::move(piece));
            enc.spans.push_back(TokenSpan{b, e, 0, 0});
            enc.special.push_back(special ? 1 : 0);
        };
        if (add_special)
            for (const auto& [id, tok] : post.before) push(id, tok, 0, 0, true);
        size_t pos = 0, plain = 0;
        const auto flush_plain = [&](size_t end) {
            if (end > plain) encode_plain(text.substr(plain, end - plain), plain, push);
        };
        while (pos < text.size()) {
            const Added* hit = nullptr;
            for (const uint32_t k : by_first_byte[(unsigned char)text[pos]])
                if (text.compare(pos, added[k].content.size(), added[k].content) == 0) {
                    hit = &added[k];
                    break;
                }
            if (!hit) {
                ++pos;
                continue;
            }
            size_t b = pos, e = pos + hit->content.size();
            if (hit->lstrip)
                while (b > plain && is_whitespace((unsigned char)text[b - 1])) --b;
            if (hit->rstrip)
                while (e < text.size() && is_whitespace((unsigned char)text[e])) ++e;
            flush_plain(b);
            push(hit->id, hit->content, b, e, hit->special);
            pos = plain = e;
        }
        flush_plain(text.size());
        if (add_special)
            for (const auto& [id, tok] : post.after) push(id, tok, text.size(), text.size(), true);
        detail::finish_spans(text, enc);
        return enc;
    }

    template <class Push>
    void encode_plain(std::string_view part, size_t offset, Push& push) const {
        NormText t = make_norm(part, offset);
        if (normalizer) normalizer(t);
        Splits splits;
        if (!t.s.empty()) splits.push_back(std::move(t));
        if (pre) pre(splits);
        std::vector<ModelToken> toks;
        for (const NormText& w : splits) {
            toks.clear();
            model->tokenize(w.s, toks);
            for (const ModelToken& m : toks) {
                const auto [b, e] = w.origin(m.b, m.e);
                push(m.id, model->id_to_token[size_t(m.id)], b, e, false);
            }
        }
    }

    std::string decode(std::span<const int32_t> ids, bool skip_special) const override {
        std::vector<std::string> toks;
        for (int32_t id : ids) {
            if (skip_special && is_special(id)) continue;
            toks.push_back(id_to_piece(id));
        }
        if (!decoder) {
            std::string out;
            for (size_t i = 0; i < toks.size(); ++i) out += (i ? " " : "") + toks[i];
            return out;
        }
        decoder(toks);
        std::string out;
        for (const auto& t : toks) out += t;
        return out;
    }
    size_t vocab_size() const override { return size; }
    std::string id_to_piece(int32_t id) const override {
        if (auto it = added_piece.find(id); it != added_piece.end()) return it->second;
        if (id < 0 || size_t(id) >= model->id_to_token.size() || model->id_to_token[size_t(id)].empty())
            throw std::out_of_range("token id " + std::to_string(id) + " is not in the vocabulary of " + name);
        return model->id_to_token[size_t(id)];
    }
    std::optional<int32_t> piece_to_id(std::string_view piece) const override {
        for (const uint32_t k : by_first_byte[piece.empty() ? 0 : (unsigned char)piece[0]])
            if (added[k].content == piece) return added[k].id;
        return model->find(piece);
    }
    bool is_special(int32_t id) const override { return id >= 0 && size_t(id) < special_ids.size() && special_ids[size_t(id)]; }

    void finish() {
        std::stable_sort(added.begin(), added.end(), [](const Added& a, const Added& b) { return a.content.size() > b.content.size(); });
        for (size_t k = 0; k < added.size(); ++k) by_first_byte[(unsigned char)added[k].content[0]].push_back(uint32_t(k));
        for (const Added& a : added) added_piece.emplace(a.id, a.content);
        size = model->id_to_token.size();
        for (const Added& a : added) size = std::max(size, size_t(a.id) + 1);
        for (const auto& v : {post.before, post.after})
            for (const auto& p : v) size = std::max(size, size_t(std::max(p.first, 0)) + 1);
        special_ids.assign(size, 0);
        for (const Added& a : added)
            if (a.special) special_ids[size_t(a.id)] = 1;
        for (const auto& v : {post.before, post.after})
            for (const auto& p : v)
                if (p.first >= 0) special_ids[size_t(p.first)] = 1;
    }
};

// Byte-level BPE (ts::Tokenizer, the established path) with the tokenizer.json's post-processor (RoBERTa/BART's
// <s> … </s>, Llama-3's <|begin_of_text|>).
class ByteLevelWithTemplate final : public TextTokenizer {
public:
    ByteLevelWithTemplate(std::shared_ptr<const TextTokenizer> inner, Template t) : m_in(std::move(inner)), m_t(std::move(t)) {
        special_roles = m_in->special_roles;
    }
    std::string description() const override { return m_in->description(); }
    TextEncoding encode(std::string_view text, bool add_special) const override {
        TextEncoding body = m_in->encode(text, add_special);
        if (!add_special || (m_t.before.empty() && m_t.after.empty())) return body;
        TextEncoding e;
        const auto push = [&](int32_t id, const std::string& piece, size_t at) {
            e.ids.push_back(id);
            e.pieces.push_back(piece);
            e.spans.push_back(TokenSpan{at, at, 0, 0});
            e.special.push_back(1);
        };
        for (const auto& [id, tok] : m_t.before) push(id, tok, 0);
        e.ids.insert(e.ids.end(), body.ids.begin(), body.ids.end());
        e.pieces.insert(e.pieces.end(), body.pieces.begin(), body.pieces.end());
        e.spans.insert(e.spans.end(), body.spans.begin(), body.spans.end());
        e.special.insert(e.special.end(), body.special.begin(), body.special.end());
        for (const auto& [id, tok] : m_t.after) push(id, tok, text.size());
        detail::finish_spans(text, e);
        return e;
    }
    std::string decode(std::span<const int32_t> ids, bool skip) const override { return m_in->decode(ids, skip); }
    size_t vocab_size() const override { return m_in->vocab_size(); }
    std::string id_to_piece(int32_t id) const override { return m_in->id_to_piece(id); }
    std::optional<int32_t> piece_to_id(std::string_view p) const override { return m_in->piece_to_id(p); }
    bool is_special(int32_t id) const override {
        if (m_in->is_special(id)) return true;
        for (const auto& v : {m_t.before, m_t.after})
            for (const auto& p : v)
                if (p.first == id) return true;
        return false;
    }
    std::shared_ptr<const Tokenizer> byte_level_bpe() const override { return m_in->byte_level_bpe(); }

private:
    std::shared_ptr<const TextTokenizer> m_in;
    Template m_t;
};

}  // namespace

std::shared_ptr<const TextTokenizer> detail::with_post_processor(std::shared_ptr<const TextTokenizer> tok,
                                                                 const nlohmann::json& root, const std::string& name) {
    Template t;
    try {
        if (root.is_object() && root.contains("post_processor"))
            parse_post_processor(root["post_processor"], name, "post_processor", t);
    } catch (const json::exception& e) {
        fail(name, "post_processor", std::string("unexpected content (") + e.what() + ")");
    }
    for (const auto& v : {t.before, t.after})
        for (const auto& p : v)
            if (p.first < 0 || size_t(p.first) >= tok->vocab_size())
                fail(name, "post_processor", "token id " + std::to_string(p.first) + " is outside the vocabulary");
    if (t.before.empty() && t.after.empty()) return tok;
    return std::make_shared<ByteLevelWithTemplate>(std::move(tok), std::move(t));
}

std::shared_ptr<const TextTokenizer> parse_hf_tokenizer_json(std::string_view text, const std::string& name) {
    json root;
    try {
        root = json::parse(text.begin(), text.end());
    } catch (const json::exception&) {
        (void)parse_tokenizer_json(text, name);  // reports the syntax error with its line and column
        throw std::runtime_error(name + ": JSON cannot be read");
    }
    // byte-level BPE: the established ts::Tokenizer (GPT-2 parity-tested), plus the post-processor
    bool byte_level = false;
    if (root.is_object() && root.contains("pre_tokenizer")) {
        const bool model_bpe = root.contains("model") && root["model"].is_object() &&
                               root["model"].value("type", std::string("BPE")) == "BPE";
        byte_level = model_bpe && root["pre_tokenizer"].dump().find("\"ByteLevel\"") != std::string::npos;
    }
    if (byte_level) return detail::with_post_processor(wrap_byte_level_bpe(parse_tokenizer_json(text, name)), root, name);
    return detail::hf_tokenizer_from_json(root, name);
}

std::shared_ptr<const TextTokenizer> detail::hf_tokenizer_from_json(const nlohmann::json& root, const std::string& name) {
    if (!root.is_object()) fail(name, "top level", "expected a JSON object, found " + describe(root));
    auto p = std::make_shared<HfPipeline>();
    p->name = name.substr(name.find_last_of('/') + 1);
    if (!root.contains("model")) fail(name, "model", "missing");
    try {
        p->model = parse_model(root["model"], name);
    } catch (const json::exception& e) {
        fail(name, "model", std::string("unexpected content (") + e.what() + ")");
    }
    if (auto it = root.find("added_tokens"); it != root.end() && !it->is_null()) {
        if (!it->is_array()) fail(name, "added_tokens", "expected an array, found " + describe(*it));
        for (size_t i = 0; i < it->size(); ++i) {
            const json& a = (*it)[i];
            const std::string f = "added_tokens[" + std::to_string(i) + "]";
            if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || !a.contains("content") ||
                !a["content"].is_string())
                fail(name, f, "expected {\"id\": integer, \"content\": string, ...}, found " + describe(a));
            const int64_t id = a["id"].get<int64_t>();
            if (id < 0 || id > (1 << 22)) fail(name, f + ".id", "id " + std::to_string(id) + " out of range");
            if (a["content"].get<std::string>().empty()) continue;
            p->added.push_back({int32_t(id), a["content"].get<std::string>(), a.value("special", false),
                                a.value("lstrip", false), a.value("rstrip", false)});
        }
    }
    try {
        p->normalizer = parse_normalizer(root.value("normalizer", json()), name, "normalizer");
        p->pre = parse_pre_tokenizer(root.value("pre_tokenizer", json()), name, "pre_tokenizer");
        parse_post_processor(root.value("post_processor", json()), name, "post_processor", p->post);
        p->decoder = parse_decoder(root.value("decoder", json()), name, "decoder");
    } catch (const json::exception& e) {
        fail(name, "pipeline", std::string("unexpected content (") + e.what() + ")");
    }
    for (const auto& v : {p->post.before, p->post.after})
        for (const auto& [id, tok] : v) {
            const bool in_vocab = id >= 0 && size_t(id) < p->model->id_to_token.size() && !p->model->id_to_token[size_t(id)].empty();
            const bool added = std::any_of(p->added.begin(), p->added.end(), [&](const Added& a) { return a.id == id; });
            if (!in_vocab && !added)
                fail(name, "post_processor", "token \"" + tok + "\" has id " + std::to_string(id) +
                                                 ", which is neither in model.vocab nor in added_tokens");
        }
    p->finish();
    return p;
}

std::shared_ptr<const TextTokenizer> parse_wordpiece_vocab_txt(std::string_view text, bool lowercase, const std::string& name) {
    auto p = std::make_shared<HfPipeline>();
    p->name = name.substr(name.find_last_of('/') + 1);
    auto m = std::make_unique<WordPieceModel>();
    size_t line = 0;
    for (size_t pos = 0; pos < text.size(); ++line) {
        size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos) nl = text.size();
        std::string tok(text.substr(pos, nl - pos));
        if (!tok.empty() && tok.back() == '\r') tok.pop_back();
        if (tok.empty() && nl < text.size())
            throw std::runtime_error(name + ": line " + std::to_string(line + 1) + ": empty token (one token per line expected)");
        if (!tok.empty()) {
            if (m->find(tok)) throw std::runtime_error(name + ": line " + std::to_string(line + 1) + ": token \"" + tok + "\" appears twice");
            m->add(tok, int32_t(line));
        }
        pos = nl + 1;
    }
    if (m->id_to_token.empty()) throw std::runtime_error(name + ": expected one token per line, found no tokens");
    for (const char* needed : {"[UNK]", "[CLS]", "[SEP]"})
        if (!m->find(needed)) throw std::runtime_error(name + ": expected the token " + std::string(needed) + ", found none");
    m->unk = m->find("[UNK]");
    p->post.before.emplace_back(*m->find("[CLS]"), "[CLS]");
    p->post.after.emplace_back(*m->find("[SEP]"), "[SEP]");
    for (const char* s : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
        if (auto id = m->find(s)) p->added.push_back({*id, s, true, false, false});
    p->normalizer = bert_normalizer(true, true, lowercase, lowercase);
    p->pre = parse_pre_tokenizer(json{{"type", "BertPreTokenizer"}}, name, "pre_tokenizer");
    p->decoder = parse_decoder(json{{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}, name, "decoder");
    p->model = std::move(m);
    p->finish();
    return p;
}

}  // namespace ts
