// Corpus-level machine-translation metrics with sacreBLEU 2.x's definitions and defaults: chrF (Popović 2015;
// sacreBLEU's CHRF: character 6-grams, no word n-grams, beta 2, whitespace removed, statistics summed over the corpus,
// effective-order averaging) and BLEU (Papineni et al. 2002; sacreBLEU's corpus_bleu: 4-grams, brevity penalty,
// 'exp' smoothing = NIST's mteval-v13a smoothing, Chen & Cherry 2014 method 3) with the '13a' and 'zh' tokenizers.
// Text is UTF-8; characters are Unicode code points as in Python's str (an invalid byte counts as one U+FFFD).
#pragma once

#include "core/util/utf8.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ts::eval {

// --- tokenizers (sacrebleu/tokenizers) ----------------------------------------------------------------------------

/// mteval-v13a tokenization as sacreBLEU's Tokenizer13a: drops "<skipped>", joins "-\n", newlines to spaces, unescapes
/// &quot; &amp; &lt; &gt;, pads with spaces, then separates ASCII punctuation/symbols (except ' - . ,), periods and
/// commas not between digits, and a dash after a digit; whitespace runs (Python's str.split set) become one space.
/// Returns the tokens (what sacreBLEU's output would give after str.split()).
[[nodiscard]] std::vector<std::string> tokenize_13a(std::string_view line);

/// sacreBLEU's TokenizerZh: strip, surround every "Chinese character" with spaces, then 13a's regex part (without
/// 13a's unescaping/<skipped> handling). "Chinese character" follows sacreBLEU's table literally, including its quirk
/// that the Python literals '\u20000' and '\u2f800' are two characters, so the "Extension B" row really covers
/// U+2001..U+2A6D (general punctuation such as — “ ” …, arrows, math symbols) and Extension B itself is not split.
[[nodiscard]] std::vector<std::string> tokenize_zh(std::string_view line);

/// True when sacreBLEU's zh tokenizer puts code point `cp` in a token of its own (see tokenize_zh).
[[nodiscard]] bool is_zh_tokenizer_char(char32_t cp);

/// UTF-8 <-> code points: core's codec (core/util/utf8.h; invalid bytes become U+FFFD as Python's
/// errors="replace" does). Python's str.isspace() set is given by is_python_space.
using ts::utf8_to_u32;
using ts::u32_to_utf8;
[[nodiscard]] bool is_python_space(char32_t cp);

// --- BLEU ---------------------------------------------------------------------------------------------------------

enum class BleuTokenizer { Tok13a, Zh, None };

inline constexpr int kBleuMaxOrder = 4;

/// Sufficient statistics, summed over segments: hypothesis and (closest) reference lengths in tokens, clipped n-gram
/// matches and hypothesis n-gram totals per order 1..4.
struct BleuStats {
    int64_t hyp_len = 0, ref_len = 0;
    std::array<int64_t, kBleuMaxOrder> correct{}, total{};
    BleuStats& operator+=(const BleuStats& o);
};

struct BleuScore {
    double score = 0;          ///< 0..100
    double bp = 0;             ///< brevity penalty exp(1 - r/c) when c < r, else 1
    std::array<double, kBleuMaxOrder> precisions{};  ///< percent, after smoothing
    BleuStats stats;
};

/// Statistics of one hypothesis against one or more references (sacreBLEU: every line rstripped then tokenized;
/// n-gram counts clipped by the max count over references; reference length = the closest to the hypothesis
/// length, the shorter on ties). Throws std::invalid_argument when `refs` is empty.
[[nodiscard]] BleuStats bleu_segment_stats(std::string_view hyp, const std::vector<std::string>& refs,
                                           BleuTokenizer tok = BleuTokenizer::Tok13a);

/// BLEU from summed statistics with 'exp' smoothing (sacreBLEU's default for corpus_bleu; BLEU.compute_bleu): a
/// zero match count at order n gets precision 100 / (2^k * total_n), k counting the zero orders so far; 0 when no
/// n-gram matched at all or an order has no hypothesis n-grams.
[[nodiscard]] BleuScore bleu_from_stats(const BleuStats& stats);

/// sacreBLEU corpus_bleu(hyps, ref_streams): ref_streams[r][i] is the r-th reference of segment i (every stream as
/// long as hyps). Throws std::invalid_argument on no stream or a stream of another length.
[[nodiscard]] BleuScore corpus_bleu(const std::vector<std::string>& hyps,
                                    const std::vector<std::vector<std::string>>& ref_streams,
                                    BleuTokenizer tok = BleuTokenizer::Tok13a);

// --- chrF ---------------------------------------------------------------------------------------------------------

struct ChrfOptions {
    int char_order = 6;
    double beta = 2;
    bool whitespace = false;     ///< true: keep whitespace inside the character n-grams (sacreBLEU's whitespace=True)
    bool eps_smoothing = false;  ///< sacreBLEU 2.x default false: average P and R over orders with both counts > 0
};

/// Per order n (index n-1): hypothesis n-grams (0 when the reference has no n-gram of that order), reference n-grams,
/// clipped matches — summed over segments.
struct ChrfStats {
    std::vector<std::array<int64_t, 3>> per_order;  ///< {hyp, ref, match}
};

/// Statistics of one hypothesis: with several references, those of the reference with the best segment chrF.
[[nodiscard]] ChrfStats chrf_segment_stats(std::string_view hyp, const std::vector<std::string>& refs,
                                           const ChrfOptions& opt = {});
/// chrF (0..100) from summed statistics (sacreBLEU CHRF._compute_f_score).
[[nodiscard]] double chrf_from_stats(const ChrfStats& stats, const ChrfOptions& opt = {});
/// sacreBLEU corpus_chrf(hyps, ref_streams): statistics summed over the corpus, then one F-score.
/// Throws std::invalid_argument as corpus_bleu does, or when char_order < 1 or beta < 0.
[[nodiscard]] double corpus_chrf(const std::vector<std::string>& hyps,
                                 const std::vector<std::vector<std::string>>& ref_streams, const ChrfOptions& opt = {});

}  // namespace ts::eval
