// Pair corpus reading (TSV -> token-id examples per direction) and PairDataset's length-bucketed batches.
#include "core/train/pair_data.h"

#include "core/tokenizer/bpe.h"
#include "core/train/train_kernels.h"

#include <algorithm>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <string>

namespace ts::train {

// --- directions and tokens ----------------------------------------------------------------------------------------

const char* to_string(PairDirection d) {
    switch (d) {
        case PairDirection::EnZh: return "en-zh";
        case PairDirection::ZhEn: return "zh-en";
        case PairDirection::Both: return "both";
    }
    return "?";
}

PairDirection pair_direction_from_string(std::string_view s) {
    if (s == "en-zh") return PairDirection::EnZh;
    if (s == "zh-en") return PairDirection::ZhEn;
    if (s == "both") return PairDirection::Both;
    throw std::invalid_argument("unknown direction '" + std::string(s) + "' (expected en-zh, zh-en or both)");
}

PairTokens find_pair_tokens(const Tokenizer& tok, PairDirection dir) {
    const auto need = [&tok](const char* name) {
        const auto id = tok.token_id(name);
        if (!id || !tok.is_added_token(*id))
            throw std::invalid_argument(std::string("the tokenizer has no special token ") + name +
                                        " (train one with: tokenizer train ... --special \"<|endoftext|>,<pad>,<2en>,"
                                        "<2zh>\")");
        return *id;
    };
    PairTokens t;
    t.end = need(kPairEndToken);
    t.pad = need(kPairPadToken);
    if (dir == PairDirection::Both) {
        t.to_en = need(kPairToEnToken);
        t.to_zh = need(kPairToZhToken);
    }
    return t;
}

std::vector<PairExample> read_pair_tsv(const std::filesystem::path& path, const Tokenizer& tok, PairDirection dir,
                                       const PairTokens& ids, int max_len, PairReadStats* stats) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot read pair file " + path.string());
    PairReadStats st;
    std::vector<PairExample> out;
    EncodeOptions plain;
    plain.match_added_tokens = false;  // "<pad>" inside a message is text, not our token
    std::string line;
    int64_t line_no = -1;
    const auto add = [&](const std::vector<int32_t>& a, const std::vector<int32_t>& b, int32_t lang, int64_t at) {
        PairExample e;
        e.line = at;
        if (lang >= 0) e.src.push_back(lang);
        e.src.insert(e.src.end(), a.begin(), a.end());
        e.src.push_back(ids.end);
        e.tgt = b;
        e.tgt.push_back(ids.end);
        if (int(e.src.size()) > max_len || int(e.tgt.size()) > max_len) {
            ++st.too_long;
            return;
        }
        out.push_back(std::move(e));
    };
    while (std::getline(f, line)) {
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        ++st.lines;
        const size_t tab = line.find('\t');
        if (tab == std::string::npos || tab == 0 || tab + 1 == line.size() ||
            line.find('\t', tab + 1) != std::string::npos) {
            ++st.malformed;
            continue;
        }
        const std::vector<int32_t> en = tok.encode_ids(std::string_view(line).substr(0, tab), plain);
        const std::vector<int32_t> zh = tok.encode_ids(std::string_view(line).substr(tab + 1), plain);
        if (dir != PairDirection::ZhEn) add(en, zh, dir == PairDirection::Both ? ids.to_zh : -1, line_no);
        if (dir != PairDirection::EnZh) add(zh, en, dir == PairDirection::Both ? ids.to_en : -1, line_no);
    }
    st.examples = int64_t(out.size());
    if (stats) *stats = st;
    if (out.empty())
        throw std::runtime_error(path.string() + ": no usable pair (" + std::to_string(st.lines) + " lines, " +
                                 std::to_string(st.malformed) + " without one tab between two non-empty sides, " +
                                 std::to_string(st.too_long) + " longer than " + std::to_string(max_len) +
                                 " tokens)");
    return out;
}

// --- dataset ------------------------------------------------------------------------------------------------------

PairDataset::PairDataset(std::vector<PairExample> train, std::vector<PairExample> valid, int vocab_size,
                         int32_t pad_id, int32_t start_id, PairBatchOptions opt, uint64_t seed)
    : m_train(std::move(train)), m_valid(std::move(valid)), m_pad(pad_id), m_start(start_id), m_opt(opt),
      m_seed(seed) {
    if (m_train.empty()) throw std::invalid_argument("PairDataset: no training pairs");
    if (m_opt.max_pairs < 1)
        throw std::invalid_argument("PairDataset: max_pairs must be >= 1, got " + std::to_string(m_opt.max_pairs));
    const auto in_vocab = [vocab_size](int32_t id) { return id >= 0 && id < vocab_size; };
    if (!in_vocab(pad_id) || !in_vocab(start_id))
        throw std::invalid_argument("PairDataset: pad id " + std::to_string(pad_id) + " or start id " +
                                    std::to_string(start_id) + " outside [0, " + std::to_string(vocab_size) + ")");
    for (const auto* set : {&m_train, &m_valid})
        for (size_t i = 0; i < set->size(); ++i) {
            const PairExample& e = (*set)[i];
            if (e.src.empty() || e.tgt.empty())
                throw std::invalid_argument("PairDataset: example " + std::to_string(i) + " has an empty side");
            for (const auto* side : {&e.src, &e.tgt})
                for (int32_t id : *side)
                    if (!in_vocab(id))
                        throw std::invalid_argument("PairDataset: example " + std::to_string(i) + " holds id " +
                                                    std::to_string(id) + " outside [0, " +
                                                    std::to_string(vocab_size) + ")");
            m_max_len = std::max({m_max_len, int(e.src.size()), int(e.tgt.size())});
        }
    for (const PairExample& e : m_train) m_train_tokens += int64_t(e.src.size() + e.tgt.size());
    m_train_batches = make_batches(m_train, true);
    m_val_batches = make_batches(m_valid, false);
    int64_t padded = 0;
    for (const Batch& b : m_train_batches) {
        size_t S = 0, T = 0;
        for (int32_t i : b) S = std::max(S, m_train[i].src.size()), T = std::max(T, m_train[i].tgt.size());
        padded += int64_t(b.size() * (S + T));
    }
    m_padding_fraction = 1.0 - double(m_train_tokens) / double(padded);
}

std::vector<PairDataset::Batch> PairDataset::make_batches(const std::vector<PairExample>& ex,
                                                          bool shuffle_ties) const {
    std::vector<int32_t> order(ex.size());
    std::iota(order.begin(), order.end(), 0);
    const auto tie = [this, shuffle_ties](int32_t i) { return shuffle_ties ? mix64(m_seed ^ mix64(uint64_t(i))) : uint64_t(i); };
    std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
        const size_t sa = ex[a].src.size(), sb = ex[b].src.size(), ta = ex[a].tgt.size(), tb = ex[b].tgt.size();
        if (sa != sb) return sa < sb;
        if (ta != tb) return ta < tb;
        return tie(a) < tie(b);
    });
    std::vector<Batch> batches;
    Batch cur;
    size_t S = 0, T = 0;
    for (int32_t i : order) {
        const size_t s = std::max(S, ex[i].src.size()), t = std::max(T, ex[i].tgt.size());
        const bool over_tokens = m_opt.max_tokens > 0 && int64_t(cur.size() + 1) * int64_t(std::max(s, t)) >
                                                             int64_t(m_opt.max_tokens);
        if (!cur.empty() && (int(cur.size()) >= m_opt.max_pairs || over_tokens)) {
            batches.push_back(std::move(cur));
            cur.clear();
            S = T = 0;
        }
        cur.push_back(i);
        S = std::max(S, ex[i].src.size());
        T = std::max(T, ex[i].tgt.size());
    }
    if (!cur.empty()) batches.push_back(std::move(cur));
    return batches;
}

void PairDataset::fill(const std::vector<PairExample>& ex, const Batch& idx, PairBatch& out) const {
    int S = 0, T = 0;
    for (int32_t i : idx) S = std::max(S, int(ex[i].src.size())), T = std::max(T, int(ex[i].tgt.size()));
    const int B = int(idx.size());
    out.B = B;
    out.S = S;
    out.T = T;
    out.src.assign(size_t(B) * S, m_pad);
    out.src_pad.assign(size_t(B) * S, 1);
    out.tgt.assign(size_t(B) * T, m_pad);
    out.tgt_pad.assign(size_t(B) * T, 1);
    out.targets.assign(size_t(B) * T, -1);
    for (int b = 0; b < B; ++b) {
        const PairExample& e = ex[idx[b]];
        for (size_t j = 0; j < e.src.size(); ++j) {
            out.src[size_t(b) * S + j] = e.src[j];
            out.src_pad[size_t(b) * S + j] = 0;
        }
        for (size_t j = 0; j < e.tgt.size(); ++j) {  // decoder input: the target shifted right behind the start token
            out.tgt[size_t(b) * T + j] = j == 0 ? m_start : e.tgt[j - 1];
            out.tgt_pad[size_t(b) * T + j] = 0;
            out.targets[size_t(b) * T + j] = e.tgt[j];
        }
    }
}

void PairDataset::train_batch(uint64_t step, PairBatch& out) const {
    const uint64_t n = m_train_batches.size();
    const uint64_t epoch = step / n, pos = step % n;
    // The epoch's order: a Fisher-Yates shuffle driven by counter-based draws of (seed, epoch). Only the first pos + 1
    // swaps decide slot pos, so the prefix is all we run.
    std::vector<int32_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    for (uint64_t i = 0; i <= pos; ++i) {
        const uint64_t j = i + rng_key(m_seed, epoch, i) % (n - i);
        std::swap(perm[i], perm[j]);
    }
    fill(m_train, m_train_batches[perm[pos]], out);
}

void PairDataset::val_batch(int i, PairBatch& out) const {
    if (i < 0 || i >= val_batches())
        throw std::out_of_range("PairDataset::val_batch: batch " + std::to_string(i) + " outside [0, " +
                                std::to_string(val_batches()) + ")");
    fill(m_valid, m_val_batches[i], out);
}

uint64_t PairDataset::fingerprint() const {
    uint64_t h = 1469598103934665603ull;
    const auto add = [&h](int64_t v) {
        for (int k = 0; k < 4; ++k) {
            h ^= uint64_t((v >> (8 * k)) & 0xff);
            h *= 1099511628211ull;
        }
    };
    for (const auto* set : {&m_train, &m_valid}) {
        add(int64_t(set->size()));
        for (const PairExample& e : *set) {
            add(int64_t(e.src.size()));
            for (int32_t id : e.src) add(id);
            add(int64_t(e.tgt.size()));
            for (int32_t id : e.tgt) add(id);
        }
    }
    return h;
}

}  // namespace ts::train
