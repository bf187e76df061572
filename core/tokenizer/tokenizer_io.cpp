// Loaders and writer for GPT-2 vocab.json/merges.txt and Hugging Face tokenizer.json (see tokenizer_io.h).
// Every error names the file and the line or JSON field, and says what was expected and what was found.
#include "core/tokenizer/tokenizer_io.h"

#include "core/tokenizer/byte_level.h"
#include "core/util/json.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace ts {
namespace {

using nlohmann::json;
constexpr int64_t kMaxId = 1 << 21;  // ids beyond this are treated as corrupt (largest real vocabs are ~256k)
constexpr const char* kWholeTextPattern = R"([\s\S]+)";

[[noreturn]] void fail(const std::string& name, const std::string& where, const std::string& what) {
    throw std::runtime_error(name + ": " + where + ": " + what);
}

std::string quote(std::string_view s) {
    std::string out = json(std::string(s.substr(0, 60))).dump(-1, ' ', false, json::error_handler_t::replace);
    if (s.size() > 60) out += "...";
    return out;
}

std::string describe(const json& j) { return std::string(j.type_name()) + " " + json_excerpt(j); }

int32_t get_id(const json& v, const std::string& name, const std::string& field) {
    if (!v.is_number_integer()) fail(name, field, "expected an integer token id, found " + describe(v));
    const int64_t id = v.get<int64_t>();
    if (id < 0 || id >= kMaxId)
        fail(name, field, "expected a token id in [0, " + std::to_string(kMaxId) + "), found " + std::to_string(id));
    return int32_t(id);
}

// vocab object {"spelled": id} -> vocab[id] = raw bytes. Ids in `added_ids` keep an empty slot (the added token
// fills it: its spelling in the vocab is its raw content, not byte-level).
std::vector<std::string> parse_vocab(const json& obj, const std::string& name, const std::string& prefix,
                                     const std::unordered_set<int32_t>& added_ids) {
    if (!obj.is_object())
        fail(name, prefix.empty() ? "top level" : prefix, "expected a JSON object {token: id}, found " + describe(obj));
    std::vector<std::string> vocab;
    std::vector<const std::string*> key_of;  // for duplicate-id messages
    for (const auto& [key, val] : obj.items()) {
        const std::string field = prefix.empty() ? "entry " + quote(key) : prefix + "[" + quote(key) + "]";
        const int32_t id = get_id(val, name, field);
        if (size_t(id) >= vocab.size()) {
            vocab.resize(size_t(id) + 1);
            key_of.resize(size_t(id) + 1, nullptr);
        }
        if (key_of[size_t(id)])
            fail(name, field, "id " + std::to_string(id) + " is already used by entry " + quote(*key_of[size_t(id)]));
        key_of[size_t(id)] = &key;
        if (added_ids.count(id)) continue;
        auto bytes = byte_level_to_bytes(key);
        if (!bytes || bytes->empty())
            fail(name, field, "expected a byte-level BPE token (characters from GPT-2's 256-character byte "
                              "alphabet such as \"Ġ\"), found one outside it");
        vocab[size_t(id)] = std::move(*bytes);
    }
    return vocab;
}

struct MergeParser {
    const std::string& name;
    const std::vector<std::string>& vocab;
    std::unordered_map<std::string_view, int32_t> bytes_to_id;
    MergeParser(const std::string& n, const std::vector<std::string>& v) : name(n), vocab(v) {
        for (size_t id = 0; id < vocab.size(); ++id)
            if (!vocab[id].empty()) bytes_to_id.emplace(vocab[id], int32_t(id));
    }
    int32_t lookup(std::string_view spelled, const std::string& where, const char* side) const {
        auto bytes = byte_level_to_bytes(spelled);
        auto it = bytes ? bytes_to_id.find(*bytes) : bytes_to_id.end();
        if (it == bytes_to_id.end())
            fail(name, where, std::string("expected the ") + side + " token to be in the vocabulary, found " +
                                  quote(spelled) + ", which is not");
        return it->second;
    }
    std::pair<int32_t, int32_t> pair(std::string_view a, std::string_view b, const std::string& where) const {
        const int32_t l = lookup(a, where, "left"), r = lookup(b, where, "right");
        if (!bytes_to_id.count(vocab[size_t(l)] + vocab[size_t(r)]))
            fail(name, where, "merging " + quote(a) + " and " + quote(b) + " gives " +
                                  quote(std::string(a) + std::string(b)) + ", which is not in the vocabulary");
        return {l, r};
    }
};

std::string read_text_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error(path + ": cannot open file for reading");
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::string regex_escape(std::string_view s) {
    std::string out;
    for (char c : s) {
        const unsigned char u = static_cast<unsigned char>(c);
        if (u < 0x80 && !std::isalnum(u) && c != ' ') out += '\\';
        out += c;
    }
    return out;
}

std::string get_string(const json& obj, const char* key, const std::string& name, const std::string& field,
                       const std::string& def) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return def;
    if (!it->is_string()) fail(name, field + "." + key, "expected a string, found " + describe(*it));
    return it->get<std::string>();
}

bool get_bool(const json& obj, const char* key, const std::string& name, const std::string& field, bool def) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return def;
    if (!it->is_boolean()) fail(name, field + "." + key, "expected true or false, found " + describe(*it));
    return it->get<bool>();
}

// One pre_tokenizer step -> appends its pattern(s); records whether a ByteLevel step was seen.
void pre_tokenizer_step(const json& step, const std::string& name, const std::string& field,
                        std::vector<std::string>& patterns, bool& byte_level) {
    if (!step.is_object()) fail(name, field, "expected a pre-tokenizer object, found " + describe(step));
    const std::string type = get_string(step, "type", name, field, "");
    if (type == "ByteLevel") {
        byte_level = true;
        if (get_bool(step, "add_prefix_space", name, field, false))
            fail(name, field + ".add_prefix_space", "expected false, found true (adding a prefix space is not supported)");
        if (get_bool(step, "use_regex", name, field, true)) patterns.emplace_back(kGpt2Pattern);
    } else if (type == "Split") {
        auto p = step.find("pattern");
        if (p == step.end() || !p->is_object())
            fail(name, field + ".pattern", "expected {\"Regex\": ...} or {\"String\": ...}, found " +
                                               (p == step.end() ? std::string("nothing") : describe(*p)));
        if (p->contains("Regex") && (*p)["Regex"].is_string()) {
            patterns.push_back((*p)["Regex"].get<std::string>());
        } else if (p->contains("String") && (*p)["String"].is_string()) {
            patterns.push_back(regex_escape((*p)["String"].get<std::string>()));
        } else {
            fail(name, field + ".pattern", "expected {\"Regex\": string} or {\"String\": string}, found " + describe(*p));
        }
        const std::string behavior = get_string(step, "behavior", name, field, "Isolated");
        if (behavior != "Isolated")
            fail(name, field + ".behavior", "expected \"Isolated\" (the only split behavior supported), found " +
                                                quote(behavior));
        if (get_bool(step, "invert", name, field, false))
            fail(name, field + ".invert", "expected false, found true (inverted splits are not supported)");
    } else if (type == "Digits") {
        patterns.emplace_back(get_bool(step, "individual_digits", name, field, false) ? "[0-9]" : "[0-9]+");
    } else if (type == "Sequence") {
        auto list = step.find("pretokenizers");
        if (list == step.end() || !list->is_array())
            fail(name, field + ".pretokenizers", "expected an array of pre-tokenizers");
        for (size_t i = 0; i < list->size(); ++i)
            pre_tokenizer_step((*list)[i], name, field + ".pretokenizers[" + std::to_string(i) + "]", patterns,
                               byte_level);
    } else {
        fail(name, field + ".type", "expected ByteLevel, Split, Digits or Sequence, found " + quote(type));
    }
}

}  // namespace

// --- GPT-2 vocab.json + merges.txt ---------------------------------------------------------------------------------

std::shared_ptr<const Tokenizer> parse_gpt2_tokenizer(std::string_view vocab_json, std::string_view merges_txt,
                                                      const std::string& vocab_name, const std::string& merges_name) {
    std::vector<std::string> vocab = parse_vocab(parse_json(vocab_json, vocab_name), vocab_name, "", {});
    std::vector<AddedToken> added;
    for (size_t id = 0; id < vocab.size(); ++id) {
        if (vocab[id] == "<|endoftext|>") {
            added.push_back({int32_t(id), vocab[id], true});
        }
    }
    MergeParser mp(merges_name, vocab);
    std::vector<std::pair<int32_t, int32_t>> merges;
    size_t line_no = 0, pos = 0;
    while (pos < merges_txt.size()) {
        size_t end = merges_txt.find('\n', pos);
        if (end == std::string_view::npos) end = merges_txt.size();
        std::string_view line = merges_txt.substr(pos, end - pos);
        pos = end + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) continue;
        if (line_no == 1 && line.rfind("#version", 0) == 0) continue;
        const std::string where = "line " + std::to_string(line_no);
        const size_t sp = line.find(' ');
        if (sp == std::string_view::npos || sp == 0 || sp + 1 == line.size() ||
            line.find(' ', sp + 1) != std::string_view::npos)
            fail(merges_name, where, "expected two tokens separated by one space, found " + quote(line));
        merges.push_back(mp.pair(line.substr(0, sp), line.substr(sp + 1), where));
    }
    try {
        return std::make_shared<const Tokenizer>(std::move(vocab), merges, std::move(added));
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(vocab_name + " + " + merges_name + ": " + e.what());
    }
}

// --- Hugging Face tokenizer.json -----------------------------------------------------------------------------------

std::shared_ptr<const Tokenizer> parse_tokenizer_json(std::string_view json_text, const std::string& name) {
    const json root = parse_json(json_text, name);
    if (!root.is_object()) fail(name, "top level", "expected a JSON object, found " + describe(root));

    // added_tokens
    std::vector<AddedToken> added;
    std::unordered_set<int32_t> added_ids;
    if (auto it = root.find("added_tokens"); it != root.end() && !it->is_null()) {
        if (!it->is_array()) fail(name, "added_tokens", "expected an array, found " + describe(*it));
        for (size_t i = 0; i < it->size(); ++i) {
            const json& a = (*it)[i];
            const std::string field = "added_tokens[" + std::to_string(i) + "]";
            if (!a.is_object()) fail(name, field, "expected an object {id, content, ...}, found " + describe(a));
            if (!a.contains("id")) fail(name, field + ".id", "missing");
            const int32_t id = get_id(a["id"], name, field + ".id");
            const std::string content = get_string(a, "content", name, field, "");
            if (content.empty()) fail(name, field + ".content", "expected a non-empty string");
            if (!added_ids.insert(id).second)
                fail(name, field + ".id", "id " + std::to_string(id) + " is used by an earlier added token");
            added.push_back({id, content, get_bool(a, "special", name, field, false)});
        }
    }

    // model
    auto model_it = root.find("model");
    if (model_it == root.end() || !model_it->is_object())
        fail(name, "model", "expected an object, found " + (model_it == root.end() ? std::string("nothing") : describe(*model_it)));
    const json& model = *model_it;
    const std::string type = get_string(model, "type", name, "model", "BPE");
    if (type != "BPE") fail(name, "model.type", "expected \"BPE\", found " + quote(type));
    if (!get_string(model, "continuing_subword_prefix", name, "model", "").empty() ||
        !get_string(model, "end_of_word_suffix", name, "model", "").empty())
        fail(name, "model", "expected no continuing_subword_prefix / end_of_word_suffix (byte-level BPE)");
    if (!model.contains("vocab")) fail(name, "model.vocab", "missing");
    std::vector<std::string> vocab = parse_vocab(model["vocab"], name, "model.vocab", added_ids);

    std::vector<std::pair<int32_t, int32_t>> merges;
    if (auto it = model.find("merges"); it != model.end() && !it->is_null()) {
        if (!it->is_array()) fail(name, "model.merges", "expected an array, found " + describe(*it));
        MergeParser mp(name, vocab);
        merges.reserve(it->size());
        for (size_t i = 0; i < it->size(); ++i) {
            const json& m = (*it)[i];
            const std::string field = "model.merges[" + std::to_string(i) + "]";
            if (m.is_string()) {
                const std::string& s = m.get_ref<const std::string&>();
                const size_t sp = s.find(' ');
                if (sp == std::string::npos || sp == 0 || sp + 1 == s.size() || s.find(' ', sp + 1) != std::string::npos)
                    fail(name, field, "expected \"left right\" (two tokens separated by one space), found " + quote(s));
                merges.push_back(mp.pair(std::string_view(s).substr(0, sp), std::string_view(s).substr(sp + 1), field));
            } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
                merges.push_back(mp.pair(m[0].get_ref<const std::string&>(), m[1].get_ref<const std::string&>(), field));
            } else {
                fail(name, field, "expected \"left right\" or [\"left\", \"right\"], found " + describe(m));
            }
        }
    }

    // normalizer / pre_tokenizer
    if (auto it = root.find("normalizer"); it != root.end() && !it->is_null()) {
        const std::string ntype = it->is_object() ? get_string(*it, "type", name, "normalizer", "") : "";
        if (ntype != "NFC")
            fail(name, "normalizer", "expected null or NFC, found " + describe(*it) + " (not supported)");
    }
    std::vector<std::string> patterns;
    bool byte_level = false;
    auto pre_it = root.find("pre_tokenizer");
    if (pre_it == root.end() || pre_it->is_null())
        fail(name, "pre_tokenizer", "expected a ByteLevel pre-tokenizer (byte-level BPE), found none");
    pre_tokenizer_step(*pre_it, name, "pre_tokenizer", patterns, byte_level);
    if (!byte_level)
        fail(name, "pre_tokenizer", "expected a ByteLevel step (only byte-level BPE is supported), found none");
    if (patterns.empty()) patterns.emplace_back(kWholeTextPattern);

    try {
        return std::make_shared<const Tokenizer>(std::move(vocab), merges, std::move(added), std::move(patterns));
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(name + ": " + e.what());
    }
}

// --- files and folders ---------------------------------------------------------------------------------------------

std::shared_ptr<const Tokenizer> load_gpt2_tokenizer(const std::string& vocab_path, const std::string& merges_path) {
    return parse_gpt2_tokenizer(read_text_file(vocab_path), read_text_file(merges_path), vocab_path, merges_path);
}

std::shared_ptr<const Tokenizer> load_tokenizer_json(const std::string& path) {
    return parse_tokenizer_json(read_text_file(path), path);
}

std::shared_ptr<const Tokenizer> find_tokenizer(const std::string& dir) {
    namespace fs = std::filesystem;
    const fs::path d(dir);
    if (fs::is_regular_file(d / "tokenizer.json")) return load_tokenizer_json((d / "tokenizer.json").string());
    if (fs::is_regular_file(d / "vocab.json") && fs::is_regular_file(d / "merges.txt"))
        return load_gpt2_tokenizer((d / "vocab.json").string(), (d / "merges.txt").string());
    if (fs::is_regular_file(d / "encoder.json") && fs::is_regular_file(d / "vocab.bpe"))
        return load_gpt2_tokenizer((d / "encoder.json").string(), (d / "vocab.bpe").string());
    return nullptr;
}

std::shared_ptr<const Tokenizer> load_tokenizer(const std::string& file_or_dir) {
    namespace fs = std::filesystem;
    const fs::path p(file_or_dir);
    if (fs::is_directory(p)) {
        if (auto tok = find_tokenizer(file_or_dir)) return tok;
        throw std::runtime_error(file_or_dir + ": expected tokenizer.json, vocab.json + merges.txt or encoder.json + "
                                               "vocab.bpe in this folder, found none");
    }
    if (!fs::exists(p)) throw std::runtime_error(file_or_dir + ": no such file or folder");
    const std::string fname = p.filename().string();
    if (fname == "vocab.json" || fname == "encoder.json") {
        const fs::path merges = p.parent_path() / (fname == "vocab.json" ? "merges.txt" : "vocab.bpe");
        if (!fs::is_regular_file(merges))
            throw std::runtime_error(file_or_dir + ": expected " + merges.string() + " next to it, found none");
        return load_gpt2_tokenizer(file_or_dir, merges.string());
    }
    return load_tokenizer_json(file_or_dir);
}

std::string tokenizer_to_json(const Tokenizer& tok) {
    using ojson = nlohmann::ordered_json;
    ojson added = ojson::array();
    for (const AddedToken& a : tok.added_tokens())
        added.push_back({{"id", a.id}, {"content", a.content}, {"single_word", false}, {"lstrip", false},
                         {"rstrip", false}, {"normalized", false}, {"special", a.special}});
    const auto byte_level = [](bool use_regex) {
        return ojson{{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", use_regex}};
    };
    ojson pre;
    if (tok.patterns() == std::vector<std::string>{kGpt2Pattern}) {
        pre = byte_level(true);
    } else {
        ojson steps = ojson::array();
        for (const std::string& p : tok.patterns())
            steps.push_back({{"type", "Split"}, {"pattern", {{"Regex", p}}}, {"behavior", "Isolated"}, {"invert", false}});
        steps.push_back(byte_level(false));
        pre = {{"type", "Sequence"}, {"pretokenizers", steps}};
    }
    ojson vocab = ojson::object();
    for (size_t id = 0; id < tok.vocab_size(); ++id) {
        const std::string& b = tok.vocab()[id];
        if (b.empty()) continue;
        vocab[tok.is_added_token(int32_t(id)) ? b : bytes_to_byte_level(b)] = id;
    }
    ojson merges = ojson::array();
    for (const MergeRule& m : tok.merges())
        merges.push_back(bytes_to_byte_level(tok.vocab()[size_t(m.left)]) + " " +
                         bytes_to_byte_level(tok.vocab()[size_t(m.right)]));
    ojson root = {{"version", "1.0"},
                  {"truncation", nullptr},
                  {"padding", nullptr},
                  {"added_tokens", added},
                  {"normalizer", nullptr},
                  {"pre_tokenizer", pre},
                  {"post_processor", byte_level(true)},
                  {"decoder", byte_level(true)},
                  {"model",
                   {{"type", "BPE"},
                    {"dropout", nullptr},
                    {"unk_token", nullptr},
                    {"continuing_subword_prefix", nullptr},
                    {"end_of_word_suffix", nullptr},
                    {"fuse_unk", false},
                    {"byte_fallback", false},
                    {"vocab", vocab},
                    {"merges", merges}}}};
    // Added tokens may hold any bytes: replace invalid UTF-8 rather than throw (they are user-chosen text).
    return root.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
}

void save_tokenizer_json(const Tokenizer& tok, const std::string& path) {
    const std::string text = tokenizer_to_json(tok);
    std::ofstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error(path + ": cannot open file for writing");
    f << text;
    if (!f) throw std::runtime_error(path + ": write failed");
}

}  // namespace ts
