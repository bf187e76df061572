// Hugging Face tokenizer.json decoders (the `tokenizers` library's decoders/): ids' pieces -> text.
#include "core/tokenizer/hf_components.h"

namespace ts::hf_detail {

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
                    else t = std::string(1, ' ') + t;  // (not t.insert(0, " "): GCC 12 warns falsely, -Wrestrict)
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

}  // namespace ts::hf_detail
