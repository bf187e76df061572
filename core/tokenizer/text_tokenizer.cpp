// Which tokenizer a model folder has (text_tokenizer.h), special-token roles, and the byte-level BPE adapter.
#include "core/tokenizer/text_tokenizer.h"

#include "core/formats/gguf.h"

#include "core/tokenizer/byte_level.h"
#include "core/tokenizer/text_tokenizer_detail.h"
#include "core/tokenizer/tokenizer_io.h"
#include "core/util/json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ts {

namespace fs = std::filesystem;
using nlohmann::json;

// --- shared helpers ------------------------------------------------------------------------------------------------

namespace detail {

void finish_spans(std::string_view text, TextEncoding& enc) {
    size_t prev_end = 0;
    for (TokenSpan& s : enc.spans) {
        s.byte_begin = std::min(std::max(s.byte_begin, prev_end), text.size());
        s.byte_end = std::min(std::max(s.byte_end, s.byte_begin), text.size());
        prev_end = s.byte_end;
    }
    // character index of every byte (the character containing it)
    std::vector<size_t> ci(text.size() + 1);
    size_t c = 0;
    for (size_t pos = 0; pos < text.size(); ++c) {
        const size_t len = utf8_char_len(text, pos);
        for (size_t k = 0; k < len; ++k) ci[pos + k] = c;
        pos += len;
    }
    ci[text.size()] = c;
    for (TokenSpan& s : enc.spans) {
        s.char_begin = ci[s.byte_begin];
        s.char_end = s.byte_end > s.byte_begin ? ci[s.byte_end - 1] + 1 : s.char_begin;
    }
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot open file (" + std::strerror(errno) + ")");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string byte_piece(unsigned char b) {
    static const char* hex = "0123456789ABCDEF";
    return std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">";
}

int parse_byte_piece(std::string_view p) {
    if (p.size() != 6 || p.substr(0, 3) != "<0x" || p[5] != '>') return -1;
    int v = 0;
    for (size_t i = 3; i < 5; ++i) {
        const char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= c - '0';
        else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
        else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
        else return -1;
    }
    return v;
}

}  // namespace detail

// --- special tokens ------------------------------------------------------------------------------------------------

std::optional<int32_t> TextTokenizer::special_token_id(std::string_view name) const {
    for (const auto& [role, token] : special_roles)
        if (role == name)
            if (auto id = piece_to_id(token)) return id;
    static const std::vector<std::pair<std::string_view, std::vector<std::string_view>>> defaults = {
        {"bos", {"<s>", "<bos>", "[CLS]", "<|begin_of_text|>", "<|endoftext|>"}},
        {"eos", {"</s>", "<eos>", "[SEP]", "<|end_of_text|>", "<|endoftext|>"}},
        {"unk", {"<unk>", "[UNK]", "<|endoftext|>"}},
        {"pad", {"<pad>", "[PAD]"}},
        {"mask", {"[MASK]", "<mask>", "<mask_1>"}},
        {"cls", {"[CLS]", "<s>"}},
        {"sep", {"[SEP]", "</s>"}},
    };
    for (const auto& [role, spellings] : defaults) {
        if (role != name) continue;
        for (std::string_view s : spellings)
            if (auto id = piece_to_id(s)) return id;
        return std::nullopt;
    }
    return piece_to_id(name);
}

namespace {

// tokenizer_config.json + special_tokens_map.json of a folder.
struct FolderConfig {
    std::vector<std::pair<std::string, std::string>> roles;
    std::optional<bool> add_bos, add_eos, do_lower_case;
    std::string tokenizer_class;
};

FolderConfig read_folder_config(const fs::path& dir) {
    FolderConfig c;
    for (const char* file : {"special_tokens_map.json", "tokenizer_config.json"}) {
        const fs::path p = dir / file;
        std::error_code ec;
        if (!fs::is_regular_file(p, ec)) continue;
        const json j = ts::parse_json(detail::read_file(p.string()), p.string());
        if (!j.is_object()) throw std::runtime_error(p.string() + ": expected a JSON object at the top level");
        for (const char* role : {"bos", "eos", "unk", "pad", "mask", "cls", "sep"}) {
            auto it = j.find(std::string(role) + "_token");
            if (it == j.end()) continue;
            std::string content;
            if (it->is_string()) content = it->get<std::string>();
            else if (it->is_object() && it->contains("content") && (*it)["content"].is_string())
                content = (*it)["content"].get<std::string>();
            if (content.empty()) continue;
            auto r = std::find_if(c.roles.begin(), c.roles.end(), [&](const auto& x) { return x.first == role; });
            if (r != c.roles.end()) r->second = content;
            else c.roles.emplace_back(role, content);
        }
        if (auto it = j.find("add_bos_token"); it != j.end() && it->is_boolean()) c.add_bos = it->get<bool>();
        if (auto it = j.find("add_eos_token"); it != j.end() && it->is_boolean()) c.add_eos = it->get<bool>();
        if (auto it = j.find("do_lower_case"); it != j.end() && it->is_boolean()) c.do_lower_case = it->get<bool>();
        if (auto it = j.find("tokenizer_class"); it != j.end() && it->is_string()) c.tokenizer_class = it->get<std::string>();
    }
    return c;
}

std::shared_ptr<const TextTokenizer> with_roles(std::shared_ptr<const TextTokenizer> t, const FolderConfig& c) {
    if (!t) return t;
    auto m = std::const_pointer_cast<TextTokenizer>(t);  // freshly made by us, not shared yet
    for (const auto& r : c.roles) {
        auto it = std::find_if(m->special_roles.begin(), m->special_roles.end(), [&](const auto& x) { return x.first == r.first; });
        if (it != m->special_roles.end()) it->second = r.second;
        else m->special_roles.push_back(r);
    }
    return t;
}

// --- byte-level BPE adapter ----------------------------------------------------------------------------------------

class ByteLevelBpe final : public TextTokenizer {
public:
    explicit ByteLevelBpe(std::shared_ptr<const Tokenizer> t) : m_tok(std::move(t)) {}
    std::string description() const override {
        return "byte-level BPE (" + std::to_string(m_tok->vocab_size()) + " tokens)";
    }
    TextEncoding encode(std::string_view text, bool) const override {
        const Encoding e = m_tok->encode(text);
        TextEncoding out;
        out.ids = e.ids;
        out.spans = e.spans;
        for (int32_t id : e.ids) {
            out.pieces.push_back(id_to_piece(id));
            out.special.push_back(m_tok->is_added_token(id) ? 1 : 0);
        }
        return out;
    }
    std::string decode(std::span<const int32_t> ids, bool skip_special) const override {
        if (!skip_special) return m_tok->decode(ids);
        std::vector<int32_t> kept;
        for (int32_t id : ids)
            if (!(id >= 0 && size_t(id) < m_tok->vocab_size() && m_tok->is_added_token(id))) kept.push_back(id);
        return m_tok->decode(kept);
    }
    size_t vocab_size() const override { return m_tok->vocab_size(); }
    std::string id_to_piece(int32_t id) const override {
        (void)m_tok->token_bytes(id);  // range check
        return m_tok->is_added_token(id) ? m_tok->token_bytes(id) : bytes_to_byte_level(m_tok->token_bytes(id));
    }
    std::optional<int32_t> piece_to_id(std::string_view piece) const override {
        for (const AddedToken& a : m_tok->added_tokens())
            if (a.content == piece) return a.id;
        if (auto b = byte_level_to_bytes(piece)) return m_tok->token_id(*b);
        return std::nullopt;
    }
    bool is_special(int32_t id) const override {
        return id >= 0 && size_t(id) < m_tok->vocab_size() && m_tok->is_added_token(id);
    }
    std::shared_ptr<const Tokenizer> byte_level_bpe() const override { return m_tok; }

private:
    std::shared_ptr<const Tokenizer> m_tok;
};

bool is_file(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
}

// tokenizer.json: byte-level BPE (the existing, parity-tested path) or any other supported pipeline.
std::shared_ptr<const TextTokenizer> load_tokenizer_json_any(const fs::path& p) {
    return parse_hf_tokenizer_json(detail::read_file(p.string()), p.string());
}

std::shared_ptr<const TextTokenizer> load_spm_file(const fs::path& p, const FolderConfig& c) {
    const std::string fname = p.filename().string();
    const bool t5_like = fname == "spiece.model" || c.tokenizer_class.rfind("T5", 0) == 0 ||
                         c.tokenizer_class.rfind("Marian", 0) == 0 || c.tokenizer_class.rfind("Albert", 0) == 0;
    const bool add_bos = c.add_bos.value_or(!t5_like);
    const bool add_eos = c.add_eos.value_or(t5_like);
    return parse_sentencepiece_model(detail::read_file(p.string()), add_bos, add_eos, p.string());
}

std::shared_ptr<const TextTokenizer> load_vocab_txt(const fs::path& p, const FolderConfig& c) {
    return parse_wordpiece_vocab_txt(detail::read_file(p.string()), c.do_lower_case.value_or(true), p.string());
}

}  // namespace

std::shared_ptr<const TextTokenizer> load_marian_side(const fs::path& dir, const std::string& spm_name);

std::shared_ptr<const TextTokenizer> wrap_byte_level_bpe(std::shared_ptr<const Tokenizer> tok) {
    if (!tok) throw std::invalid_argument("wrap_byte_level_bpe: null tokenizer");
    return std::make_shared<ByteLevelBpe>(std::move(tok));
}

std::shared_ptr<const TextTokenizer> find_text_tokenizer(const std::string& dir_s) {
    const fs::path d(dir_s);
    const auto config = [&] { return read_folder_config(d); };
    if (is_file(d / "tokenizer.json")) return with_roles(load_tokenizer_json_any(d / "tokenizer.json"), config());
    if (auto bpe = find_tokenizer(dir_s)) return with_roles(wrap_byte_level_bpe(std::move(bpe)), config());
    if (is_file(d / "source.spm") && is_file(d / "vocab.json")) return with_roles(load_marian_side(d, "source.spm"), config());
    for (const char* f : {"tokenizer.model", "spiece.model", "sentencepiece.bpe.model"})
        if (is_file(d / f)) {
            const FolderConfig c = config();
            return with_roles(load_spm_file(d / f, c), c);
        }
    if (is_file(d / "vocab.txt")) {
        const FolderConfig c = config();
        return with_roles(load_vocab_txt(d / "vocab.txt", c), c);
    }
    return nullptr;
}

std::shared_ptr<const TextTokenizer> load_text_tokenizer(const std::string& file_or_dir) {
    const fs::path p(file_or_dir);
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
        if (auto t = find_text_tokenizer(file_or_dir)) return t;
        throw std::runtime_error(file_or_dir +
                                 ": expected a tokenizer in this folder (tokenizer.json, vocab.json + merges.txt, "
                                 "tokenizer.model, spiece.model, source.spm + vocab.json or vocab.txt), found none");
    }
    if (!fs::exists(p, ec)) throw std::runtime_error(file_or_dir + ": no such file or folder");
    if (is_gguf_file(p)) {
        const GgufFile f(p);
        if (auto t = parse_gguf_tokenizer(f.header(), file_or_dir)) return t;
        throw std::runtime_error(file_or_dir + ": this GGUF file has no tokenizer (tokenizer.ggml.model)");
    }
    const std::string fname = p.filename().string();
    const FolderConfig c = read_folder_config(p.parent_path().empty() ? fs::path(".") : p.parent_path());
    const auto ends_with = [&](std::string_view suf) {
        return fname.size() >= suf.size() && fname.compare(fname.size() - suf.size(), suf.size(), suf) == 0;
    };
    if (ends_with(".model") || ends_with(".spm")) return with_roles(load_spm_file(p, c), c);
    if (ends_with(".txt")) return with_roles(load_vocab_txt(p, c), c);
    if (fname == "vocab.json" || fname == "encoder.json") return with_roles(wrap_byte_level_bpe(load_tokenizer(file_or_dir)), c);
    return with_roles(load_tokenizer_json_any(p), c);
}

TokenizerPair find_tokenizer_pair(const std::string& dir_s) {
    const fs::path d(dir_s);
    if (!is_file(d / "tokenizer.json") && is_file(d / "source.spm") && is_file(d / "target.spm") &&
        is_file(d / "vocab.json")) {
        const FolderConfig c = read_folder_config(d);
        return {with_roles(load_marian_side(d, "source.spm"), c), with_roles(load_marian_side(d, "target.spm"), c)};
    }
    auto t = find_text_tokenizer(dir_s);
    return {t, t};
}

}  // namespace ts
