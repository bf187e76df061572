// Byte-level BPE encode/decode (see bpe.h). The per-word merge loop uses a min-heap of (rank, position) over a
// linked list of symbols, so long words cost O(n log n); pieces seen before come from a bounded cache.
#include "core/tokenizer/bpe.h"

#include "core/tokenizer/byte_level.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace ts {

Tokenizer::Tokenizer(std::vector<std::string> vocab, const std::vector<std::pair<int32_t, int32_t>>& merges,
                     std::vector<AddedToken> added, std::vector<std::string> patterns)
    : m_vocab(std::move(vocab)), m_added(std::move(added)), m_pretok(std::move(patterns)) {
    for (const AddedToken& a : m_added) {
        if (a.id < 0) throw std::invalid_argument("added token '" + a.content + "' has negative id");
        if (a.content.empty()) throw std::invalid_argument("added token with id " + std::to_string(a.id) + " is empty");
        if (size_t(a.id) >= m_vocab.size()) m_vocab.resize(size_t(a.id) + 1);
    }
    m_is_added.assign(m_vocab.size(), 0);
    for (const AddedToken& a : m_added) {
        std::string& slot = m_vocab[size_t(a.id)];
        if (!slot.empty() && slot != a.content)
            throw std::invalid_argument("added token '" + a.content + "' has id " + std::to_string(a.id) +
                                        ", which the vocabulary already uses for a different token");
        if (m_is_added[size_t(a.id)])
            throw std::invalid_argument("two added tokens share id " + std::to_string(a.id));
        slot = a.content;
        m_is_added[size_t(a.id)] = 1;
    }
    m_token_to_id.reserve(m_vocab.size());
    for (size_t id = 0; id < m_vocab.size(); ++id) {
        if (m_vocab[id].empty() || m_is_added[id]) continue;
        auto [it, inserted] = m_token_to_id.emplace(m_vocab[id], int32_t(id));
        if (!inserted)
            throw std::invalid_argument("token '" + bytes_to_byte_level(m_vocab[id]) + "' has two ids: " +
                                        std::to_string(it->second) + " and " + std::to_string(id));
    }
    for (int b = 0; b < 256; ++b) {
        const char c = char(b);
        auto it = m_token_to_id.find(std::string_view(&c, 1));
        m_byte_id[b] = it == m_token_to_id.end() ? -1 : it->second;
    }
    m_merges.reserve(merges.size());
    m_merge_rank.reserve(merges.size());
    for (size_t r = 0; r < merges.size(); ++r) {
        const auto [a, b] = merges[r];
        const auto valid = [&](int32_t id) {
            return id >= 0 && size_t(id) < m_vocab.size() && !m_vocab[size_t(id)].empty() && !m_is_added[size_t(id)];
        };
        if (!valid(a) || !valid(b))
            throw std::invalid_argument("merge #" + std::to_string(r) + " refers to id " +
                                        std::to_string(valid(a) ? b : a) + ", which is not a vocabulary token");
        const std::string joined = m_vocab[size_t(a)] + m_vocab[size_t(b)];
        auto it = m_token_to_id.find(joined);
        if (it == m_token_to_id.end())
            throw std::invalid_argument("merge #" + std::to_string(r) + " ('" + bytes_to_byte_level(m_vocab[size_t(a)]) +
                                        "' + '" + bytes_to_byte_level(m_vocab[size_t(b)]) + "') makes '" +
                                        bytes_to_byte_level(joined) + "', which is not in the vocabulary");
        m_merges.push_back({a, b, it->second});
        m_merge_rank.emplace(pair_key(a, b), MergeInfo{int32_t(r), it->second});  // first rank wins
    }
}

const std::string& Tokenizer::token_bytes(int32_t id) const {
    if (id < 0 || size_t(id) >= m_vocab.size())
        throw std::out_of_range("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                                std::to_string(m_vocab.size()) + ")");
    return m_vocab[size_t(id)];
}

std::optional<int32_t> Tokenizer::token_id(std::string_view bytes) const {
    if (auto it = m_token_to_id.find(bytes); it != m_token_to_id.end()) return it->second;
    for (const AddedToken& a : m_added)
        if (a.content == bytes) return a.id;
    return std::nullopt;
}

bool Tokenizer::is_added_token(int32_t id) const {
    return id >= 0 && size_t(id) < m_is_added.size() && m_is_added[size_t(id)];
}

std::string Tokenizer::display_token(int32_t id) const {
    const std::string& b = token_bytes(id);
    return is_added_token(id) ? b : bytes_to_byte_level(b);
}

// --- BPE of one word ---------------------------------------------------------------------------------------------

namespace {
struct Sym {
    int32_t id, prev, next;
};
struct Candidate {
    int32_t rank, pos, left, right;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};
}  // namespace

void Tokenizer::bpe_word(std::string_view word, std::vector<int32_t>& out) const {
    thread_local std::vector<Sym> syms;
    thread_local std::vector<Candidate> heap;
    const int32_t n = int32_t(word.size());
    syms.resize(size_t(n));
    heap.clear();
    for (int32_t i = 0; i < n; ++i) {
        const int32_t id = m_byte_id[static_cast<unsigned char>(word[size_t(i)])];
        if (id < 0) {
            char hex[8];
            std::snprintf(hex, sizeof(hex), "0x%02X", unsigned(static_cast<unsigned char>(word[size_t(i)])));
            throw std::runtime_error(std::string("byte ") + hex + " has no token in this vocabulary");
        }
        syms[size_t(i)] = {id, i - 1, i + 1 < n ? i + 1 : -1};
    }
    const auto push_pair = [&](int32_t pos) {
        const int32_t nx = syms[size_t(pos)].next;
        if (nx < 0) return;
        auto it = m_merge_rank.find(pair_key(syms[size_t(pos)].id, syms[size_t(nx)].id));
        if (it == m_merge_rank.end()) return;
        heap.push_back({it->second.rank, pos, syms[size_t(pos)].id, syms[size_t(nx)].id});
        std::push_heap(heap.begin(), heap.end(), std::greater<>());
    };
    for (int32_t i = 0; i + 1 < n; ++i) push_pair(i);
    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), std::greater<>());
        const Candidate c = heap.back();
        heap.pop_back();
        Sym& s = syms[size_t(c.pos)];
        if (s.id != c.left || s.next < 0 || syms[size_t(s.next)].id != c.right) continue;  // stale
        const int32_t removed = s.next;
        s.id = m_merge_rank.find(pair_key(c.left, c.right))->second.merged;
        s.next = syms[size_t(removed)].next;
        if (s.next >= 0) syms[size_t(s.next)].prev = c.pos;
        syms[size_t(removed)].id = -1;  // dead: any candidate at this position is now stale
        if (s.prev >= 0) push_pair(s.prev);
        push_pair(c.pos);
    }
    for (int32_t i = n > 0 ? 0 : -1; i >= 0; i = syms[size_t(i)].next) out.push_back(syms[size_t(i)].id);
}

std::vector<std::vector<std::string>> Tokenizer::merge_steps(std::string_view word) const {
    // Replays bpe_word's merge order one merge at a time. Same heap discipline: (rank, position) ascending.
    std::vector<std::vector<std::string>> steps;
    std::vector<std::string> pieces;
    for (char c : word) pieces.emplace_back(1, c);
    steps.push_back(pieces);
    if (word.empty()) return steps;
    std::vector<int32_t> ids;
    for (char c : word) {
        const int32_t id = m_byte_id[static_cast<unsigned char>(c)];
        if (id < 0) throw std::runtime_error("a byte of the word has no token in this vocabulary");
        ids.push_back(id);
    }
    // Positions are indices into the current piece list; equal ranks go left to right, matching bpe_word, because
    // a merge at position p never changes the pairs left of p-1.
    while (true) {
        int32_t best_rank = -1;
        size_t best_pos = 0;
        for (size_t i = 0; i + 1 < ids.size(); ++i) {
            auto it = m_merge_rank.find(pair_key(ids[i], ids[i + 1]));
            if (it != m_merge_rank.end() && (best_rank < 0 || it->second.rank < best_rank)) {
                best_rank = it->second.rank;
                best_pos = i;
            }
        }
        if (best_rank < 0) break;
        ids[best_pos] = m_merge_rank.find(pair_key(ids[best_pos], ids[best_pos + 1]))->second.merged;
        ids.erase(ids.begin() + std::ptrdiff_t(best_pos) + 1);
        pieces[best_pos] += pieces[best_pos + 1];
        pieces.erase(pieces.begin() + std::ptrdiff_t(best_pos) + 1);
        steps.push_back(pieces);
    }
    return steps;
}

// --- encode / decode -----------------------------------------------------------------------------------------------

void Tokenizer::encode_plain(std::string_view text, size_t offset, Encoding& enc, std::vector<ByteSpan>& pieces) const {
    pieces.clear();
    m_pretok.split(text, pieces);
    std::vector<int32_t> ids;
    for (const auto& [b, e] : pieces) {
        const std::string_view word = text.substr(b, e - b);
        ids.clear();
        bool cached = false;
        const bool cacheable = m_cache_capacity > 0 && word.size() <= 64;
        if (cacheable) {
            std::lock_guard<std::mutex> lock(m_cache_mutex);
            if (auto it = m_cache.find(word); it != m_cache.end()) {
                ids = it->second;
                cached = true;
            }
        }
        if (!cached) {
            bpe_word(word, ids);
            if (cacheable) {
                std::lock_guard<std::mutex> lock(m_cache_mutex);
                if (m_cache.size() >= m_cache_capacity) m_cache.clear();
                m_cache.emplace(std::string(word), ids);
            }
        }
        size_t pos = offset + b;
        for (int32_t id : ids) {
            const size_t len = m_vocab[size_t(id)].size();
            enc.ids.push_back(id);
            enc.spans.push_back({pos, pos + len, 0, 0});
            pos += len;
        }
    }
}

Encoding Tokenizer::encode(std::string_view text, const EncodeOptions& opt) const {
    Encoding enc;
    enc.ids.reserve(text.size() / 3 + 4);
    enc.spans.reserve(text.size() / 3 + 4);
    std::vector<ByteSpan> pieces;
    if (!opt.match_added_tokens || m_added.empty()) {
        encode_plain(text, 0, enc, pieces);
    } else {
        // Next occurrence of each added token at or after `pos` (npos when none); refreshed lazily.
        std::vector<size_t> next(m_added.size());
        for (size_t k = 0; k < m_added.size(); ++k) next[k] = text.find(m_added[k].content);
        size_t pos = 0;
        while (pos < text.size()) {
            size_t best = std::string_view::npos;
            size_t best_k = 0;
            for (size_t k = 0; k < m_added.size(); ++k) {
                if (next[k] != std::string_view::npos && next[k] < pos) next[k] = text.find(m_added[k].content, pos);
                if (next[k] == std::string_view::npos) continue;
                // earliest start; at equal starts the longest token wins
                if (next[k] < best || (next[k] == best && m_added[k].content.size() > m_added[best_k].content.size())) {
                    best = next[k];
                    best_k = k;
                }
            }
            if (best == std::string_view::npos) break;
            if (best > pos) encode_plain(text.substr(pos, best - pos), pos, enc, pieces);
            const size_t end = best + m_added[best_k].content.size();
            enc.ids.push_back(m_added[best_k].id);
            enc.spans.push_back({best, end, 0, 0});
            pos = end;
        }
        if (pos < text.size()) encode_plain(text.substr(pos), pos, enc, pieces);
    }
    // Character spans: walk characters once; a token gets every character its bytes touch.
    size_t char_pos = 0, char_idx = 0, char_len = text.empty() ? 0 : utf8_char_len(text, 0);
    const auto char_at = [&](size_t byte) {
        while (byte >= char_pos + char_len) {
            char_pos += char_len;
            ++char_idx;
            char_len = utf8_char_len(text, char_pos);
        }
        return char_idx;
    };
    for (TokenSpan& s : enc.spans) {
        s.char_begin = char_at(s.byte_begin);
        s.char_end = char_at(s.byte_end - 1) + 1;
    }
    return enc;
}

std::vector<int32_t> Tokenizer::encode_ids(std::string_view text, const EncodeOptions& opt) const {
    return encode(text, opt).ids;
}

std::string Tokenizer::decode(std::span<const int32_t> ids) const {
    std::string out;
    for (int32_t id : ids) {
        const std::string& b = token_bytes(id);
        if (b.empty()) throw std::out_of_range("token id " + std::to_string(id) + " is not used by this vocabulary");
        out += b;
    }
    return out;
}

}  // namespace ts
