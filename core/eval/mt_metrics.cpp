// chrF and BLEU as sacreBLEU 2.x defines them (sacrebleu/metrics/{chrf,bleu,helpers}.py, sacrebleu/tokenizers/
// tokenizer_{13a,re,zh}.py, read for the definitions; this is an independent implementation). Python's regex
// substitutions are emulated by explicit left-to-right scans with the same non-overlapping match semantics.
#include "core/eval/mt_metrics.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_map>

namespace ts::eval {

// --- text ---------------------------------------------------------------------------------------------------------

bool is_python_space(char32_t c) {
    // Python 3 str.isspace(): bidirectional class WS, B or S, or general category Zs.
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

namespace {

std::vector<std::u32string> split_python(std::u32string_view s) {
    std::vector<std::u32string> out;
    size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && is_python_space(s[i])) ++i;
        const size_t b = i;
        while (i < s.size() && !is_python_space(s[i])) ++i;
        if (i > b) out.emplace_back(s.substr(b, i - b));
    }
    return out;
}

std::u32string rstrip_python(std::u32string s) {
    while (!s.empty() && is_python_space(s.back())) s.pop_back();
    return s;
}

std::u32string strip_python(std::u32string s) {
    s = rstrip_python(std::move(s));
    size_t b = 0;
    while (b < s.size() && is_python_space(s[b])) ++b;
    return s.substr(b);
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
    std::string out;
    size_t i = 0;
    for (size_t at; (at = s.find(from, i)) != std::string::npos; i = at + from.size()) {
        out.append(s, i, at - i);
        out.append(to);
    }
    if (i == 0) return;
    out.append(s, i, std::string::npos);
    s = std::move(out);
}

bool is_digit(char32_t c) { return c >= U'0' && c <= U'9'; }

/// sacreBLEU's TokenizerRegexp (tokenizer_re.py): four regex substitutions, then str.split().
std::vector<std::string> regexp_tokenize(std::u32string s) {
    std::u32string t;
    t.reserve(s.size() * 2);
    // ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> ' \1 '
    for (const char32_t c : s) {
        if ((c >= 0x7B && c <= 0x7E) || (c >= 0x5B && c <= 0x60) || (c >= 0x20 && c <= 0x26) ||
            (c >= 0x28 && c <= 0x2B) || (c >= 0x3A && c <= 0x40) || c == 0x2F) {
            t.push_back(U' ');
            t.push_back(c);
            t.push_back(U' ');
        } else {
            t.push_back(c);
        }
    }
    // Each pattern below matches two characters; re.sub scans left to right without overlapping matches.
    const auto sub2 = [](const std::u32string& in, auto matches, auto emit) {
        std::u32string out;
        out.reserve(in.size() + in.size() / 4);
        size_t i = 0;
        while (i < in.size()) {
            if (i + 1 < in.size() && matches(in[i], in[i + 1])) {
                emit(out, in[i], in[i + 1]);
                i += 2;
            } else {
                out.push_back(in[i++]);
            }
        }
        return out;
    };
    const auto is_pc = [](char32_t c) { return c == U'.' || c == U','; };
    // ([^0-9])([\.,]) -> '\1 \2 '
    t = sub2(t, [&](char32_t a, char32_t b) { return !is_digit(a) && is_pc(b); },
             [](std::u32string& o, char32_t a, char32_t b) { o += a; o += U' '; o += b; o += U' '; });
    // ([\.,])([^0-9]) -> ' \1 \2'
    t = sub2(t, [&](char32_t a, char32_t b) { return is_pc(a) && !is_digit(b); },
             [](std::u32string& o, char32_t a, char32_t b) { o += U' '; o += a; o += U' '; o += b; });
    // ([0-9])(-) -> '\1 \2 '
    t = sub2(t, [&](char32_t a, char32_t b) { return is_digit(a) && b == U'-'; },
             [](std::u32string& o, char32_t a, char32_t b) { o += a; o += U' '; o += b; o += U' '; });
    std::vector<std::string> tokens;
    for (const std::u32string& w : split_python(t)) tokens.push_back(u32_to_utf8(w));
    return tokens;
}

std::vector<std::string> tokenize(std::string_view line, BleuTokenizer tok) {
    // BLEU._preprocess_segment: sent.rstrip() before the tokenizer.
    const std::u32string u = rstrip_python(utf8_to_u32(line));
    switch (tok) {
        case BleuTokenizer::Tok13a: return tokenize_13a(u32_to_utf8(u));
        case BleuTokenizer::Zh: return tokenize_zh(u32_to_utf8(u));
        case BleuTokenizer::None: break;
    }
    std::vector<std::string> out;
    for (const std::u32string& w : split_python(u)) out.push_back(u32_to_utf8(w));
    return out;
}

using NgramCounts = std::unordered_map<std::string, int64_t>;

/// All n-grams of orders 1..kBleuMaxOrder of a token list, keyed by the tokens joined with spaces (tokens hold no
/// whitespace, so the key is unambiguous).
NgramCounts word_ngrams(const std::vector<std::string>& w) {
    NgramCounts c;
    for (int n = 1; n <= kBleuMaxOrder; ++n)
        for (size_t i = 0; i + size_t(n) <= w.size(); ++i) {
            std::string key = w[i];
            for (int k = 1; k < n; ++k) key += ' ' + w[i + size_t(k)];
            ++c[key];
        }
    return c;
}

void check_streams(size_t n_hyps, const std::vector<std::vector<std::string>>& ref_streams) {
    if (ref_streams.empty()) throw std::invalid_argument("corpus score: no reference stream");
    for (size_t r = 0; r < ref_streams.size(); ++r)
        if (ref_streams[r].size() != n_hyps)
            throw std::invalid_argument("corpus score: reference stream " + std::to_string(r) + " has " +
                                        std::to_string(ref_streams[r].size()) + " lines, the hypotheses " +
                                        std::to_string(n_hyps));
}

}  // namespace

std::vector<std::string> tokenize_13a(std::string_view line) {
    std::string s(line);
    replace_all(s, "<skipped>", "");
    replace_all(s, "-\n", "");
    replace_all(s, "\n", " ");
    if (s.find('&') != std::string::npos) {
        replace_all(s, "&quot;", "\"");
        replace_all(s, "&amp;", "&");
        replace_all(s, "&lt;", "<");
        replace_all(s, "&gt;", ">");
    }
    // f' {line} ' (built by appending: GCC 12 warns falsely, -Wrestrict, on the u32string concatenation)
    std::u32string padded(1, U' ');
    padded += utf8_to_u32(s);
    padded.push_back(U' ');
    return regexp_tokenize(std::move(padded));
}

bool is_zh_tokenizer_char(char32_t c) {
    struct Range {
        char32_t lo, hi;
    };
    // sacrebleu/tokenizers/tokenizer_zh.py _UCODE_RANGES as Python evaluates them: '\u20000'..'\u2a6d6' compares
    // a single character c as U+2000 < c <= U+2A6D, '\u2f800'..'\u2fa1d' as U+2F80 < c <= U+2FA1.
    static constexpr Range kRanges[] = {
        {0x3400, 0x4DB5}, {0x4E00, 0x9FA5}, {0x9FA6, 0x9FBB}, {0xF900, 0xFA2D}, {0xFA30, 0xFA6A}, {0xFA70, 0xFAD9},
        {0x2001, 0x2A6D}, {0x2F81, 0x2FA1}, {0xFF00, 0xFFEF}, {0x2E80, 0x2EFF}, {0x3000, 0x303F}, {0x31C0, 0x31EF},
        {0x2F00, 0x2FDF}, {0x2FF0, 0x2FFF}, {0x3100, 0x312F}, {0x31A0, 0x31BF}, {0xFE10, 0xFE1F}, {0xFE30, 0xFE4F},
        {0x2600, 0x26FF}, {0x2700, 0x27BF}, {0x3200, 0x32FF}, {0x3300, 0x33FF},
    };
    for (const Range& r : kRanges)
        if (c >= r.lo && c <= r.hi) return true;
    return false;
}

std::vector<std::string> tokenize_zh(std::string_view line) {
    const std::u32string s = strip_python(utf8_to_u32(line));
    std::u32string t;
    t.reserve(s.size() * 3);
    for (const char32_t c : s) {
        if (is_zh_tokenizer_char(c)) {
            t.push_back(U' ');
            t.push_back(c);
            t.push_back(U' ');
        } else {
            t.push_back(c);
        }
    }
    return regexp_tokenize(std::move(t));
}

// --- BLEU ---------------------------------------------------------------------------------------------------------

BleuStats& BleuStats::operator+=(const BleuStats& o) {
    hyp_len += o.hyp_len;
    ref_len += o.ref_len;
    for (size_t n = 0; n < size_t(kBleuMaxOrder); ++n) {
        correct[n] += o.correct[n];
        total[n] += o.total[n];
    }
    return *this;
}

BleuStats bleu_segment_stats(std::string_view hyp, const std::vector<std::string>& refs, BleuTokenizer tok) {
    if (refs.empty()) throw std::invalid_argument("bleu_segment_stats: no reference");
    NgramCounts ref_max;
    std::vector<int64_t> ref_lens;
    for (const std::string& r : refs) {
        const std::vector<std::string> w = tokenize(r, tok);
        ref_lens.push_back(int64_t(w.size()));
        for (const auto& [g, c] : word_ngrams(w)) ref_max[g] = std::max(ref_max[g], c);
    }
    const std::vector<std::string> h = tokenize(hyp, tok);
    BleuStats st;
    st.hyp_len = int64_t(h.size());
    // Closest reference length; the shorter one on ties (BLEU._get_closest_ref_len).
    int64_t best = -1, best_diff = -1;
    for (const int64_t len : ref_lens) {
        const int64_t d = std::abs(st.hyp_len - len);
        if (best_diff < 0 || d < best_diff || (d == best_diff && len < best)) best = len, best_diff = d;
    }
    st.ref_len = best;
    for (const auto& [g, c] : word_ngrams(h)) {
        const size_t n = size_t(std::count(g.begin(), g.end(), ' '));
        st.total[n] += c;
        if (const auto it = ref_max.find(g); it != ref_max.end()) st.correct[n] += std::min(c, it->second);
    }
    return st;
}

BleuScore bleu_from_stats(const BleuStats& stats) {
    BleuScore s;
    s.stats = stats;
    s.bp = 1.0;
    if (stats.hyp_len < stats.ref_len)
        s.bp = stats.hyp_len > 0 ? std::exp(1.0 - double(stats.ref_len) / double(stats.hyp_len)) : 0.0;
    if (std::all_of(stats.correct.begin(), stats.correct.end(), [](int64_t c) { return c == 0; })) return s;
    double smooth = 1.0;
    for (int n = 0; n < kBleuMaxOrder; ++n) {
        const double total = double(stats.total[size_t(n)]);
        if (total == 0) break;  // this and higher orders keep precision 0
        if (stats.correct[size_t(n)] == 0) {
            smooth *= 2;
            s.precisions[size_t(n)] = 100.0 / (smooth * total);
        } else {
            s.precisions[size_t(n)] = 100.0 * double(stats.correct[size_t(n)]) / total;
        }
    }
    // sacrebleu.utils.my_log floors log(0) at -9999999999, so a zero precision gives a score of 0.
    double log_sum = 0;
    for (const double p : s.precisions) log_sum += p > 0 ? std::log(p) : -9999999999.0;
    s.score = s.bp * std::exp(log_sum / kBleuMaxOrder);
    return s;
}

BleuScore corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::vector<std::string>>& ref_streams,
                      BleuTokenizer tok) {
    check_streams(hyps.size(), ref_streams);
    BleuStats sum;
    std::vector<std::string> refs(ref_streams.size());
    for (size_t i = 0; i < hyps.size(); ++i) {
        for (size_t r = 0; r < ref_streams.size(); ++r) refs[r] = ref_streams[r][i];
        sum += bleu_segment_stats(hyps[i], refs, tok);
    }
    return bleu_from_stats(sum);
}

// --- chrF ---------------------------------------------------------------------------------------------------------

namespace {

using CharNgrams = std::vector<std::unordered_map<std::u32string, int64_t>>;  // per order

CharNgrams char_ngrams(std::string_view line, const ChrfOptions& opt) {
    std::u32string s = utf8_to_u32(line);
    if (!opt.whitespace) {  // ''.join(line.split())
        std::u32string t;
        for (const char32_t c : s)
            if (!is_python_space(c)) t.push_back(c);
        s = std::move(t);
    }
    CharNgrams out(size_t(opt.char_order));
    for (int n = 1; n <= opt.char_order; ++n)
        for (size_t i = 0; i + size_t(n) <= s.size(); ++i) ++out[size_t(n - 1)][s.substr(i, size_t(n))];
    return out;
}

void check_chrf_options(const ChrfOptions& opt) {
    if (opt.char_order < 1) throw std::invalid_argument("chrF: char_order must be >= 1");
    if (!(opt.beta >= 0)) throw std::invalid_argument("chrF: beta must be >= 0");
}

}  // namespace

double chrf_from_stats(const ChrfStats& stats, const ChrfOptions& opt) {
    constexpr double kEps = 1e-16;
    const double factor = opt.beta * opt.beta;
    double score = 0, avg_prec = 0, avg_rec = 0;
    int effective_order = 0;
    for (const auto& [n_hyp, n_ref, n_match] : stats.per_order) {
        const double prec = n_hyp > 0 ? double(n_match) / double(n_hyp) : kEps;
        const double rec = n_ref > 0 ? double(n_match) / double(n_ref) : kEps;
        const double denom = factor * prec + rec;
        score += denom > 0 ? (1 + factor) * prec * rec / denom : kEps;
        if (n_hyp > 0 && n_ref > 0) {
            avg_prec += prec;
            avg_rec += rec;
            ++effective_order;
        }
    }
    if (opt.eps_smoothing) return stats.per_order.empty() ? 0.0 : 100 * score / double(stats.per_order.size());
    if (effective_order == 0) return 0.0;
    avg_prec /= effective_order;
    avg_rec /= effective_order;
    if (avg_prec + avg_rec == 0) return 0.0;
    return 100 * (1 + factor) * avg_prec * avg_rec / (factor * avg_prec + avg_rec);
}

ChrfStats chrf_segment_stats(std::string_view hyp, const std::vector<std::string>& refs, const ChrfOptions& opt) {
    check_chrf_options(opt);
    if (refs.empty()) throw std::invalid_argument("chrf_segment_stats: no reference");
    const CharNgrams h = char_ngrams(hyp, opt);
    ChrfStats best;
    double best_f = -1;
    for (const std::string& r : refs) {
        const CharNgrams rc = char_ngrams(r, opt);
        ChrfStats st;
        for (size_t n = 0; n < h.size(); ++n) {
            int64_t hyp_count = 0, ref_count = 0, match = 0;
            for (const auto& [g, c] : h[n]) {
                hyp_count += c;
                if (const auto it = rc[n].find(g); it != rc[n].end()) match += std::min(c, it->second);
            }
            for (const auto& [g, c] : rc[n]) ref_count += c;
            // sacreBLEU counts no hypothesis n-grams of an order the reference has none of.
            st.per_order.push_back({rc[n].empty() ? 0 : hyp_count, ref_count, match});
        }
        const double f = chrf_from_stats(st, opt);
        if (f > best_f) best_f = f, best = std::move(st);
    }
    return best;
}

double corpus_chrf(const std::vector<std::string>& hyps, const std::vector<std::vector<std::string>>& ref_streams,
                   const ChrfOptions& opt) {
    check_chrf_options(opt);
    check_streams(hyps.size(), ref_streams);
    ChrfStats sum;
    sum.per_order.assign(size_t(opt.char_order), {0, 0, 0});
    std::vector<std::string> refs(ref_streams.size());
    for (size_t i = 0; i < hyps.size(); ++i) {
        for (size_t r = 0; r < ref_streams.size(); ++r) refs[r] = ref_streams[r][i];
        const ChrfStats st = chrf_segment_stats(hyps[i], refs, opt);
        for (size_t n = 0; n < st.per_order.size(); ++n)
            for (size_t k = 0; k < 3; ++k) sum.per_order[n][k] += st.per_order[n][k];
    }
    return chrf_from_stats(sum, opt);
}

}  // namespace ts::eval
