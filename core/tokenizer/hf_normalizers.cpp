// Hugging Face tokenizer.json normalizers (the `tokenizers` library's normalizers/): BertNormalizer, the Unicode
// forms through ICU, Lowercase, StripAccents, Replace, Prepend, Precompiled (SentencePiece's character map) and
// Sequence, each keeping every normalized byte aligned to the input bytes it came from.
#include "core/tokenizer/hf_components.h"

namespace ts::hf_detail {

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
                std::string spaced(1, ' ');  // (built by appends: GCC 12 warns falsely, -Wrestrict, on " " + b + " ")
                spaced.append(b);
                spaced.push_back(' ');
                return spaced;
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

}  // namespace ts::hf_detail
