// Hugging Face tokenizer.json pipelines other than byte-level BPE, and BERT's vocab.txt (text_tokenizer.h):
// added tokens -> normalizer -> pre-tokenizer -> model (BPE with byte_fallback, Unigram, WordPiece) ->
// post-processor, and the decoder for ids -> text. Component semantics follow the Hugging Face `tokenizers` library
// (normalizers/, pre_tokenizers/, models/, processors/, decoders/ of its Rust sources); Unicode properties and
// normalization forms come from ICU.
//
// Alignment: every byte of the normalized text remembers the [begin, end) bytes of the input it came from, so a
// token's span in the input is the union of its normalized bytes' origins (HF's NormalizedString does the same).
#include "core/tokenizer/byte_level.h"
#include "core/tokenizer/hf_components.h"
#include "core/tokenizer/text_tokenizer.h"

#include <cmath>
#include <queue>

namespace ts {
namespace {

using namespace hf_detail;

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
    // For many added tokens: content -> index of its first (longest-first) entry, and their distinct lengths, longest
    // first. A position then costs one lookup per distinct length instead of a scan of every token with that byte.
    std::unordered_map<std::string_view, uint32_t> added_index;
    std::vector<size_t> added_lengths;
    Normalizer normalizer;
    hf_detail::PreTokenizer pre;
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
            const std::vector<uint32_t>& candidates = by_first_byte[(unsigned char)text[pos]];
            if (candidates.size() <= added_lengths.size()) {
                for (const uint32_t k : candidates)
                    if (text.compare(pos, added[k].content.size(), added[k].content) == 0) {
                        hit = &added[k];
                        break;
                    }
            } else {
                for (const size_t len : added_lengths) {
                    if (pos + len > text.size()) continue;
                    const auto it = added_index.find(text.substr(pos, len));
                    if (it != added_index.end()) {
                        hit = &added[it->second];
                        break;
                    }
                }
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
        for (size_t k = 0; k < added.size(); ++k) {
            by_first_byte[(unsigned char)added[k].content[0]].push_back(uint32_t(k));
            added_index.emplace(std::string_view(added[k].content), uint32_t(k));  // keeps the first
            if (added_lengths.empty() || added_lengths.back() != added[k].content.size())
                added_lengths.push_back(added[k].content.size());
        }
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
    const json root = parse_json(text, name);  // bounded nesting: the pipeline parsers below recurse
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
        for (const auto& entry : v) {
            // Named copies, not a structured binding: clang before 16 cannot capture a binding in the lambda below.
            const int32_t id = entry.first;
            const std::string& tok = entry.second;
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
    std::unique_ptr<Model> m = make_wordpiece_model();
    size_t line = 0;
    for (size_t pos = 0; pos < text.size(); ++line) {
        size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos) nl = text.size();
        std::string tok(text.substr(pos, nl - pos));
        if (!tok.empty() && tok.back() == '\r') tok.pop_back();
        if (tok.empty() && nl < text.size())
            throw std::runtime_error(name + ": line " + std::to_string(line + 1) + ": empty token (one token per line expected)");
        if (!tok.empty()) {
            if (line >= (size_t(1) << 22))
                throw std::runtime_error(name + ": line " + std::to_string(line + 1) +
                                         ": more than 4194304 tokens (one token per line; is this a vocab.txt?)");
            if (m->find(tok))
                throw std::runtime_error(name + ": line " + std::to_string(line + 1) + ": token " + quote_value(tok) +
                                         " appears twice");
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
