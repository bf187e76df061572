// Hugging Face tokenizer.json models (the `tokenizers` library's models/): BPE with byte_fallback, Unigram
// (Viterbi), WordPiece, and their vocabularies.
#include "core/tokenizer/hf_components.h"

#include <mutex>

namespace ts::hf_detail {

// --- models --------------------------------------------------------------------------------------------------------

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

// A byte trie over a vocabulary: node 0 is the root; each node keeps its children sorted by byte and the id of the
// piece that ends there (-1: none). Built once, read by any number of threads.
struct PieceTrie {
    static constexpr uint32_t kNone = 0xFFFFFFFF;
    struct Node {
        std::vector<std::pair<unsigned char, uint32_t>> children;
        int32_t id = -1;
    };
    std::vector<Node> nodes{Node{}};
    uint32_t child(uint32_t node, unsigned char b) const {
        const auto& c = nodes[node].children;
        const auto it = std::lower_bound(c.begin(), c.end(), std::make_pair(b, uint32_t(0)));
        return it != c.end() && it->first == b ? it->second : kNone;
    }
    void insert(std::string_view piece, int32_t id) {
        uint32_t node = 0;
        for (const char ch : piece) {
            const auto b = static_cast<unsigned char>(ch);
            uint32_t next = child(node, b);
            if (next == kNone) {
                next = uint32_t(nodes.size());
                nodes.emplace_back();
                auto& c = nodes[node].children;
                c.insert(std::lower_bound(c.begin(), c.end(), std::make_pair(b, uint32_t(0))), {b, next});
            }
            node = next;
        }
        if (nodes[node].id < 0) nodes[node].id = id;
    }
};

class UnigramModel final : public Model {
public:
    std::vector<double> scores;
    mutable std::once_flag trie_once;
    mutable PieceTrie trie;
    const PieceTrie& piece_trie() const {
        std::call_once(trie_once, [this] {
            for (size_t id = 0; id < id_to_token.size(); ++id)
                if (!id_to_token[id].empty()) {
                    const auto found = find(id_to_token[id]);  // the id the hash lookup gives (first of duplicates)
                    trie.insert(id_to_token[id], found ? *found : int32_t(id));
                }
        });
        return trie;
    }
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
                // The pieces starting here, from a byte trie of the vocabulary: the walk stops as soon as no piece
                // continues, so a vocabulary holding one 100k-byte piece no longer costs 100k lookups per position.
                const PieceTrie& pieces = piece_trie();
                uint32_t node = 0;
                for (size_t len = 1; len <= max_len && pos + len <= n; ++len) {
                    node = pieces.child(node, static_cast<unsigned char>(w[pos + len - 1]));
                    if (node == PieceTrie::kNone) break;
                    const int32_t tid = pieces.nodes[node].id;
                    if (tid < 0) continue;
                    const std::optional<int32_t> id = tid;
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
            // Longest match first, but never longer than the longest token: O(word x longest token), not O(word^2)
            // (a file may raise max_input_chars_per_word to anything).
            const size_t budget = max_token_bytes + bounds[si] - (si > 0 ? std::min(prefix.size(), max_token_bytes) : 0);
            size_t ei = bounds.size() - 1;
            while (ei > si + 1 && bounds[ei] > budget) --ei;
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


std::unique_ptr<Model> make_wordpiece_model() { return std::make_unique<WordPieceModel>(); }

}  // namespace ts::hf_detail
