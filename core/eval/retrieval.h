// Translation-memory baseline: the training translation whose source is most similar to the test source, by cosine
// similarity of character n-gram TF-IDF vectors (as scikit-learn's TfidfVectorizer(analyzer="char", ngram_range,
// smooth_idf=True, sublinear_tf=False, norm="l2") defines them), computed exactly through an inverted index.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ts::eval {

struct CharNgramOptions {
    int min_n = 1, max_n = 3;
    bool lowercase = true;     ///< ASCII A-Z -> a-z before counting (Latin words inside Chinese text too)
    /// true: whitespace runs become one space and the text is padded with a space at both ends, so n-grams see word
    /// boundaries (English); false: whitespace is removed (Chinese, which does not separate words).
    bool word_boundaries = false;
};

/// Defaults used by `transformer-studio eval`. English sources: 2..4-grams with word boundaries (letters alone carry
/// almost no information; 2..4-grams cover stems, affixes and short function words, and a boundary space marks
/// prefixes and suffixes). Chinese sources: 1..3-grams without spaces (a character is already a morpheme, most words
/// are 1..2 characters, 3-grams catch short compounds and word pairs).
[[nodiscard]] CharNgramOptions english_ngram_options();
[[nodiscard]] CharNgramOptions chinese_ngram_options();

/// The n-grams (UTF-8 code-point n-grams, as strings) of one text, in order of occurrence, repeats included.
[[nodiscard]] std::vector<std::string> char_ngrams(std::string_view text, const CharNgramOptions& opt);

struct RetrievalMatch {
    int doc = -1;          ///< index into the indexed documents; -1 when no n-gram is shared with any document
    double cosine = 0;     ///< in [0, 1]
};

/// Inverted index of L2-normalised TF-IDF vectors: weight(g, d) = tf(g, d) * idf(g), idf(g) = ln((1 + N) / (1 +
/// df(g))) + 1, N = number of documents. A query is weighted with the same idf (n-grams no document holds get
/// idf ln(1 + N) + 1 and only lengthen the query vector). Scoring walks the postings of the query's n-grams into a
/// dense accumulator, so the result is the exact arg-max cosine (ties: the lowest document index).
class CharNgramIndex {
public:
    /// Throws std::invalid_argument when min_n < 1 or max_n < min_n.
    CharNgramIndex(const std::vector<std::string>& docs, const CharNgramOptions& opt);

    [[nodiscard]] RetrievalMatch best_match(std::string_view query) const;
    [[nodiscard]] int64_t n_docs() const { return m_n_docs; }
    [[nodiscard]] int64_t n_terms() const { return int64_t(m_idf.size()); }
    [[nodiscard]] int64_t n_postings() const { return int64_t(m_post_doc.size()); }

private:
    CharNgramOptions m_opt;
    int64_t m_n_docs = 0;
    std::vector<double> m_idf;             // per term
    std::vector<int64_t> m_post_begin;     // CSR offsets per term (n_terms + 1)
    std::vector<int32_t> m_post_doc;       // document of each posting, ascending within a term
    std::vector<float> m_post_weight;      // normalised tf-idf weight of the term in that document
    std::unordered_map<std::string, int32_t> m_term_ids;
};

}  // namespace ts::eval
