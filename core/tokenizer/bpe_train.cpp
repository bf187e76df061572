// BPE training with incremental pair counts and a lazily invalidated max-heap (see bpe_train.h).
#include "core/tokenizer/bpe_train.h"

#include "core/tokenizer/byte_level.h"

#include <algorithm>
#include <chrono>
#include <queue>
#include <set>
#include <stdexcept>

namespace ts {

BpeTrainer::BpeTrainer(BpeTrainOptions opt) : m_opt(std::move(opt)), m_pretok(m_opt.patterns) {
    std::set<std::string> seen;
    for (const std::string& s : m_opt.special_tokens) {
        if (s.empty()) throw std::invalid_argument("BPE training: special tokens must not be empty");
        if (!seen.insert(s).second) throw std::invalid_argument("BPE training: special token '" + s + "' repeated");
    }
    const int64_t min_size = 256 + int64_t(m_opt.special_tokens.size());
    if (m_opt.vocab_size < min_size)
        throw std::invalid_argument("BPE training: vocab_size must be at least " + std::to_string(min_size) +
                                    " (256 bytes + special tokens), got " + std::to_string(m_opt.vocab_size));
}

void BpeTrainer::add_text(std::string_view text) {
    std::vector<ByteSpan> pieces;
    const auto count_segment = [&](std::string_view seg) {
        pieces.clear();
        m_pretok.split(seg, pieces);
        for (const auto& [b, e] : pieces) {
            ++m_word_counts[std::string(seg.substr(b, e - b))];
            ++m_total_words;
        }
    };
    // Cut out special tokens (earliest occurrence first, longest at equal positions).
    size_t pos = 0;
    while (pos < text.size()) {
        size_t best = std::string_view::npos, best_len = 0;
        for (const std::string& s : m_opt.special_tokens) {
            const size_t at = text.find(s, pos);
            if (at < best || (at == best && at != std::string_view::npos && s.size() > best_len)) {
                best = at;
                best_len = s.size();
            }
        }
        if (best == std::string_view::npos) break;
        count_segment(text.substr(pos, best - pos));
        pos = best + best_len;
    }
    count_segment(text.substr(pos));
}

namespace {

using PairKey = uint64_t;
inline PairKey pair_key(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }
inline int32_t pair_left(PairKey k) { return int32_t(k >> 32); }
inline int32_t pair_right(PairKey k) { return int32_t(k & 0xFFFFFFFFu); }

struct Word {
    std::vector<int32_t> syms;
    int64_t count;
};

struct HeapEntry {
    int64_t count;
    PairKey pair;
};

}  // namespace

std::shared_ptr<const Tokenizer> BpeTrainer::train() const {
    const auto t0 = std::chrono::steady_clock::now();
    // --- initial vocabulary: bytes in GPT-2 byte-level character order ---
    std::vector<std::string> vocab;
    std::unordered_map<std::string, int32_t> token_to_id;
    {
        std::vector<int> order(256);
        for (int b = 0; b < 256; ++b) order[size_t(b)] = b;
        std::sort(order.begin(), order.end(), [](int a, int b) {
            return byte_to_unicode(static_cast<unsigned char>(a)) < byte_to_unicode(static_cast<unsigned char>(b));
        });
        for (int b : order) {
            token_to_id.emplace(std::string(1, char(b)), int32_t(vocab.size()));
            vocab.emplace_back(1, char(b));
        }
    }
    int32_t byte_id[256];
    for (int b = 0; b < 256; ++b) byte_id[b] = token_to_id.at(std::string(1, char(b)));

    // --- words, sorted by bytes so that everything below is independent of hash-map order ---
    std::vector<std::pair<std::string_view, int64_t>> sorted;
    sorted.reserve(m_word_counts.size());
    for (const auto& [w, c] : m_word_counts) sorted.emplace_back(w, c);
    std::sort(sorted.begin(), sorted.end());
    std::vector<Word> words(sorted.size());
    std::unordered_map<PairKey, int64_t> pair_count;
    std::unordered_map<PairKey, std::vector<uint32_t>> where;  // word indices (may hold stale entries)
    for (size_t wi = 0; wi < sorted.size(); ++wi) {
        Word& w = words[wi];
        w.count = sorted[wi].second;
        for (unsigned char c : sorted[wi].first) w.syms.push_back(byte_id[c]);
        for (size_t i = 0; i + 1 < w.syms.size(); ++i) {
            const PairKey k = pair_key(w.syms[i], w.syms[i + 1]);
            pair_count[k] += w.count;
            auto& list = where[k];
            if (list.empty() || list.back() != uint32_t(wi)) list.push_back(uint32_t(wi));
        }
    }

    // Max-heap: higher count first; equal counts -> smaller (left bytes, right bytes) first.
    const auto worse = [&vocab](const HeapEntry& a, const HeapEntry& b) {
        if (a.count != b.count) return a.count < b.count;
        const std::string& al = vocab[size_t(pair_left(a.pair))];
        const std::string& bl = vocab[size_t(pair_left(b.pair))];
        if (int c = al.compare(bl); c != 0) return c > 0;
        return vocab[size_t(pair_right(a.pair))].compare(vocab[size_t(pair_right(b.pair))]) > 0;
    };
    std::priority_queue<HeapEntry, std::vector<HeapEntry>, decltype(worse)> heap(worse);
    for (const auto& [k, c] : pair_count) heap.push({c, k});

    const size_t n_special = m_opt.special_tokens.size();
    const size_t target_tokens = size_t(m_opt.vocab_size) - n_special;
    BpeTrainProgress progress;
    progress.merges_target = target_tokens - 256;
    std::vector<std::pair<int32_t, int32_t>> merges;
    std::vector<PairKey> touched_pairs;

    while (vocab.size() < target_tokens && !heap.empty()) {
        const HeapEntry top = heap.top();
        heap.pop();
        auto pc = pair_count.find(top.pair);
        const int64_t current = pc == pair_count.end() ? 0 : pc->second;
        if (current != top.count) {  // stale: counts of an existing pair only ever go down
            if (current > 0) heap.push({current, top.pair});
            continue;
        }
        if (top.count < m_opt.min_frequency || top.count <= 0) break;

        const int32_t left = pair_left(top.pair), right = pair_right(top.pair);
        std::string joined = vocab[size_t(left)] + vocab[size_t(right)];
        int32_t new_id;
        if (auto it = token_to_id.find(joined); it != token_to_id.end()) {
            new_id = it->second;  // same bytes reached by another split: reuse the token (as Hugging Face does)
        } else {
            new_id = int32_t(vocab.size());
            token_to_id.emplace(joined, new_id);
            vocab.push_back(std::move(joined));
        }
        merges.emplace_back(left, right);

        std::vector<uint32_t> list = std::move(where[top.pair]);
        where.erase(top.pair);
        touched_pairs.clear();
        for (uint32_t wi : list) {
            Word& w = words[wi];
            bool has = false;
            for (size_t i = 0; i + 1 < w.syms.size(); ++i)
                if (w.syms[i] == left && w.syms[i + 1] == right) { has = true; break; }
            if (!has) continue;  // stale index: an earlier merge consumed this pair in this word
            for (size_t i = 0; i + 1 < w.syms.size(); ++i) pair_count[pair_key(w.syms[i], w.syms[i + 1])] -= w.count;
            // merge left-to-right, non-overlapping
            size_t out = 0;
            for (size_t i = 0; i < w.syms.size(); ++i) {
                if (i + 1 < w.syms.size() && w.syms[i] == left && w.syms[i + 1] == right) {
                    w.syms[out++] = new_id;
                    ++i;
                } else {
                    w.syms[out++] = w.syms[i];
                }
            }
            w.syms.resize(out);
            for (size_t i = 0; i + 1 < w.syms.size(); ++i) {
                const PairKey k = pair_key(w.syms[i], w.syms[i + 1]);
                pair_count[k] += w.count;
                if (w.syms[i] == new_id || w.syms[i + 1] == new_id) {
                    auto& wl = where[k];
                    if (wl.empty() || wl.back() != wi) wl.push_back(wi);
                    touched_pairs.push_back(k);
                }
            }
        }
        pair_count.erase(top.pair);
        std::sort(touched_pairs.begin(), touched_pairs.end());
        touched_pairs.erase(std::unique(touched_pairs.begin(), touched_pairs.end()), touched_pairs.end());
        for (PairKey k : touched_pairs)
            if (auto it = pair_count.find(k); it != pair_count.end() && it->second > 0) heap.push({it->second, k});

        progress.merges_done = merges.size();
        progress.last_count = top.count;
        if (m_opt.on_progress && m_opt.progress_every > 0 && merges.size() % m_opt.progress_every == 0) {
            progress.last_token = bytes_to_byte_level(vocab[size_t(new_id)]);
            progress.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            m_opt.on_progress(progress);
        }
    }
    if (m_opt.on_progress) {
        progress.merges_done = merges.size();
        if (!merges.empty()) {
            const auto& [l, r] = merges.back();
            progress.last_token = bytes_to_byte_level(vocab[size_t(l)] + vocab[size_t(r)]);
        }
        progress.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        m_opt.on_progress(progress);
    }

    std::vector<AddedToken> added;
    for (const std::string& s : m_opt.special_tokens) added.push_back({int32_t(vocab.size() + added.size()), s, true});
    return std::make_shared<const Tokenizer>(std::move(vocab), merges, std::move(added), m_opt.patterns);
}

std::shared_ptr<const Tokenizer> train_bpe(std::span<const std::string> texts, const BpeTrainOptions& opt) {
    BpeTrainer trainer(opt);
    for (const std::string& t : texts) trainer.add_text(t);
    return trainer.train();
}

}  // namespace ts
