// Hugging Face tokenizer.json pre-tokenizers (the `tokenizers` library's pre_tokenizers/): Metaspace, Split,
// BertPreTokenizer, Whitespace, WhitespaceSplit, Digits, Punctuation, Sequence, with HF's split behaviours.
#include "core/tokenizer/hf_components.h"

namespace ts::hf_detail {

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
            replace_pattern(t, Pattern{" ", nullptr, {}}, rep);
            const bool starts = t.s.compare(0, rep.size(), rep) == 0;
            if (!starts && (scheme == "always" || (scheme == "first" && t.origin_begin == 0))) prepend(t, rep);
            if (!split) {
                if (!t.s.empty()) out.push_back(std::move(t));
                return;
            }
            split_by(t, Pattern{rep, nullptr, {}}.find_all(t.s), Behavior::MergedWithNext, false, out);
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
        return each_split([d](const NormText& t, Splits& out) { split_by(t, Pattern{d, nullptr, {}}.find_all(t.s), Behavior::Removed, false, out); });
    }
    if (type == "UnicodeScripts") fail(name, field + ".type", "pre-tokenizer \"UnicodeScripts\" is not supported");
    if (type == "ByteLevel")
        fail(name, field + ".type", "ByteLevel pre-tokenizer with a model other than BPE is not supported");
    fail(name, field + ".type", "pre-tokenizer \"" + type + "\" is not supported");
}

}  // namespace ts::hf_detail
