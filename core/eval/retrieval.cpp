// Character n-gram TF-IDF index and exact cosine arg-max over it (see retrieval.h).
#include "core/eval/retrieval.h"

#include "core/eval/mt_metrics.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ts::eval {

CharNgramOptions english_ngram_options() { return {2, 4, true, true}; }
CharNgramOptions chinese_ngram_options() { return {1, 3, true, false}; }

namespace {

/// Normalised text as UTF-8 plus the byte offset of every code point (and the end), so n-grams are substrings.
struct NormalisedText {
    std::string utf8;
    std::vector<size_t> offsets;
};

NormalisedText normalise(std::string_view text, const CharNgramOptions& opt) {
    std::u32string u = utf8_to_u32(text);
    if (opt.lowercase)
        for (char32_t& c : u)
            if (c >= U'A' && c <= U'Z') c += U'a' - U'A';
    std::u32string t;
    t.reserve(u.size() + 2);
    if (opt.word_boundaries) {
        t.push_back(U' ');
        for (const char32_t c : u) {
            if (is_python_space(c)) {
                if (t.back() != U' ') t.push_back(U' ');
            } else {
                t.push_back(c);
            }
        }
        if (t.back() != U' ') t.push_back(U' ');
        if (t.size() == 1) t.clear();  // blank text: no n-grams at all
    } else {
        for (const char32_t c : u)
            if (!is_python_space(c)) t.push_back(c);
    }
    NormalisedText n;
    n.offsets.reserve(t.size() + 1);
    for (const char32_t c : t) {
        n.offsets.push_back(n.utf8.size());
        n.utf8 += u32_to_utf8(std::u32string_view(&c, 1));
    }
    n.offsets.push_back(n.utf8.size());
    return n;
}

template <typename F>
void for_each_ngram(std::string_view text, const CharNgramOptions& opt, F&& f) {
    const NormalisedText t = normalise(text, opt);
    const size_t len = t.offsets.size() - 1;
    for (int n = opt.min_n; n <= opt.max_n; ++n)
        for (size_t i = 0; i + size_t(n) <= len; ++i)
            f(std::string_view(t.utf8).substr(t.offsets[i], t.offsets[i + size_t(n)] - t.offsets[i]));
}

void check_options(const CharNgramOptions& opt) {
    if (opt.min_n < 1 || opt.max_n < opt.min_n)
        throw std::invalid_argument("character n-grams: need 1 <= min_n <= max_n, got " + std::to_string(opt.min_n) +
                                    ".." + std::to_string(opt.max_n));
}

}  // namespace

std::vector<std::string> char_ngrams(std::string_view text, const CharNgramOptions& opt) {
    check_options(opt);
    std::vector<std::string> out;
    for_each_ngram(text, opt, [&](std::string_view g) { out.emplace_back(g); });
    return out;
}

CharNgramIndex::CharNgramIndex(const std::vector<std::string>& docs, const CharNgramOptions& opt)
    : m_opt(opt), m_n_docs(int64_t(docs.size())) {
    check_options(opt);
    // Per document: (term, tf) pairs, flat.
    std::vector<int64_t> doc_begin{0};
    std::vector<std::pair<int32_t, int32_t>> doc_terms;
    std::unordered_map<int32_t, int32_t> counts;
    std::vector<int32_t> df;
    for (const std::string& d : docs) {
        counts.clear();
        for_each_ngram(d, opt, [&](std::string_view g) {
            auto [it, fresh] = m_term_ids.try_emplace(std::string(g), int32_t(m_term_ids.size()));
            if (fresh) df.push_back(0);
            ++counts[it->second];
        });
        for (const auto& [term, tf] : counts) {
            doc_terms.emplace_back(term, tf);
            ++df[size_t(term)];
        }
        doc_begin.push_back(int64_t(doc_terms.size()));
    }
    const double n = double(m_n_docs);
    m_idf.resize(df.size());
    for (size_t t = 0; t < df.size(); ++t) m_idf[t] = std::log((1.0 + n) / (1.0 + df[t])) + 1.0;
    // CSR by term, documents ascending (documents are visited in order).
    m_post_begin.assign(df.size() + 1, 0);
    for (size_t t = 0; t < df.size(); ++t) m_post_begin[t + 1] = m_post_begin[t] + df[t];
    m_post_doc.resize(doc_terms.size());
    m_post_weight.resize(doc_terms.size());
    std::vector<int64_t> fill(m_post_begin.begin(), m_post_begin.end() - 1);
    for (size_t d = 0; d < docs.size(); ++d) {
        double norm2 = 0;
        for (int64_t k = doc_begin[d]; k < doc_begin[d + 1]; ++k) {
            const double w = doc_terms[size_t(k)].second * m_idf[size_t(doc_terms[size_t(k)].first)];
            norm2 += w * w;
        }
        const double inv = norm2 > 0 ? 1.0 / std::sqrt(norm2) : 0.0;
        for (int64_t k = doc_begin[d]; k < doc_begin[d + 1]; ++k) {
            const auto [term, tf] = doc_terms[size_t(k)];
            const int64_t at = fill[size_t(term)]++;
            m_post_doc[size_t(at)] = int32_t(d);
            m_post_weight[size_t(at)] = float(tf * m_idf[size_t(term)] * inv);
        }
    }
}

RetrievalMatch CharNgramIndex::best_match(std::string_view query) const {
    std::unordered_map<std::string, int32_t> tf;
    for_each_ngram(query, m_opt, [&](std::string_view g) { ++tf[std::string(g)]; });
    const double unseen_idf = std::log(1.0 + double(m_n_docs)) + 1.0;
    double q_norm2 = 0;
    std::vector<std::pair<int32_t, double>> q;  // known terms and their query weights
    for (const auto& [g, c] : tf) {
        const auto it = m_term_ids.find(g);
        const double w = c * (it == m_term_ids.end() ? unseen_idf : m_idf[size_t(it->second)]);
        q_norm2 += w * w;
        if (it != m_term_ids.end()) q.emplace_back(it->second, w);
    }
    RetrievalMatch best;
    if (q.empty() || m_n_docs == 0) return best;
    std::vector<float> acc(size_t(m_n_docs), 0.0f);
    for (const auto& [term, w] : q) {
        const float fw = float(w);
        for (int64_t k = m_post_begin[size_t(term)]; k < m_post_begin[size_t(term) + 1]; ++k)
            acc[size_t(m_post_doc[size_t(k)])] += fw * m_post_weight[size_t(k)];
    }
    const auto it = std::max_element(acc.begin(), acc.end());  // first maximum: lowest document index on ties
    if (*it <= 0) return best;
    best.doc = int(it - acc.begin());
    best.cosine = std::min(1.0, double(*it) / std::sqrt(q_norm2));
    return best;
}

}  // namespace ts::eval
