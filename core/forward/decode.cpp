// Greedy and beam-search decoding for encoder–decoder models (declared in core/forward/decode.h): the encoder runs once,
// every hypothesis carries its own self-attention KV cache (copies share the memory's cross-attention keys/values),
// and every step keeps the top-k of its distribution for the app. Also the translation-direction helpers that need
// no tokenizer (guess_target_language, make_source_ids). load_translation_spec is in core/tokenizer/.
#include "core/forward/decode.h"

#include "core/kernels/attention.h"
#include "core/util/utf8.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>

namespace ts {

// --- languages -------------------------------------------------------------------------------------------------

namespace {

bool is_cjk(char32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) ||    // CJK Unified Ideographs
           (cp >= 0x3400 && cp <= 0x4DBF) ||    // Extension A
           (cp >= 0x20000 && cp <= 0x3134F) ||  // Extensions B..G (planes 2 and 3)
           (cp >= 0xF900 && cp <= 0xFAFF) ||    // Compatibility Ideographs
           (cp >= 0x2E80 && cp <= 0x2FDF) ||    // Radicals Supplement, Kangxi Radicals
           (cp >= 0x3000 && cp <= 0x303F) ||    // CJK Symbols and Punctuation (、。「」)
           (cp >= 0x3040 && cp <= 0x30FF) ||    // Hiragana, Katakana
           (cp >= 0x3100 && cp <= 0x312F) ||    // Bopomofo
           (cp >= 0xAC00 && cp <= 0xD7AF) ||    // Hangul Syllables
           (cp >= 0xFF00 && cp <= 0xFFEF);      // Half-width and Full-width Forms (，！？)
}

}  // namespace

std::string guess_target_language(std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
        const Utf8Char c = utf8_char_at(text, i);  // an invalid byte is one character that is not CJK
        if (c.valid() && is_cjk(c.cp)) return "en";
        i += c.len;
    }
    return "zh";
}

std::vector<std::string> target_languages(const TranslationSpec& spec) {
    if (spec.direction == "both") return {"en", "zh"};
    if (spec.direction == "en-zh") return {"zh"};
    if (spec.direction == "zh-en") return {"en"};
    return {};
}

std::vector<int> make_source_ids(const TranslationSpec& spec, const std::vector<int>& text_ids, const std::string& to) {
    if (spec.direction == "model") {  // a Hugging Face encoder–decoder: what its tokenizer adds, nothing else
        std::vector<int> src;
        if (spec.source_start_id >= 0) src.push_back(spec.source_start_id);
        src.insert(src.end(), text_ids.begin(), text_ids.end());
        if (spec.source_end_id >= 0) src.push_back(spec.source_end_id);
        return src;
    }
    const std::vector<std::string> targets = target_languages(spec);
    if (targets.empty())
        throw std::invalid_argument("make_source_ids: unknown translation direction '" + spec.direction +
                                    "' (expected both, en-zh or zh-en)");
    const std::string lang = to.empty() && targets.size() == 1 ? targets[0] : to;
    if (std::find(targets.begin(), targets.end(), lang) == targets.end()) {
        std::string list;
        for (const std::string& t : targets) list += (list.empty() ? "" : " or ") + t;
        throw std::invalid_argument("this model (" + spec.direction + ") translates into " + list + ", not '" + to +
                                    "'");
    }
    std::vector<int> src;
    src.reserve(text_ids.size() + 2);
    if (spec.direction == "both") {
        const auto it = spec.target_language_ids.find(lang);
        if (it == spec.target_language_ids.end() || it->second < 0)
            throw std::invalid_argument("make_source_ids: the spec has no target-language token for '" + lang + "'");
        src.push_back(it->second);
    }
    src.insert(src.end(), text_ids.begin(), text_ids.end());
    src.push_back(spec.source_end_id);
    return src;
}

// --- building blocks -------------------------------------------------------------------------------------------

MatrixRM encode_source(const Model& m, const std::vector<int>& src_ids) {
    const ModelConfig& c = m.config();
    if (c.arch != Arch::EncoderDecoder)
        throw std::invalid_argument("encode_source: model '" + c.name + "' is " + to_string(c.arch) +
                                    ", not encoder_decoder");
    if (src_ids.empty()) throw std::invalid_argument("encode_source: empty source ids (need at least one token)");
    Trace trace;
    const MatrixRM x = detail::embed(m, src_ids, 0, trace, "enc.", detail::StackEdits{});
    return encoder_stack_forward(m, x, ForwardOptions{}, trace);
}

namespace {

// The decoder's final hidden state (1, d_model) after token `id` at position cache.n_past.
MatrixRM decoder_hidden(const Model& m, const MatrixRM& memory, int id, KVCache& cache) {
    Trace trace;
    const MatrixRM x = detail::embed(m, {id}, cache.n_past, trace, "", detail::StackEdits{});
    return decoder_stack_forward(m, x, &memory, ForwardOptions{}, trace, &cache, cache.n_past);
}

}  // namespace

MatrixRM decoder_step(const Model& m, const MatrixRM& memory, int id, KVCache& cache) {
    return detail::lm_head(m, decoder_hidden(m, memory, id, cache), false);
}

// --- search ----------------------------------------------------------------------------------------------------

namespace {

/// One step's distribution of one hypothesis: log-probabilities (log_softmax of the logits, in double), the top-k
/// for the record, and the best `n_cand` ids that may be produced (banned ids skipped), best first, ties to lower id.
struct StepDist {
    std::vector<double> logp;
    std::vector<std::pair<int, float>> top;
    std::vector<int> cand;
};

// z: one row of logits (V values).
void step_dist(const float* z, int V, int top_k, int n_cand, const std::vector<char>& banned, StepDist& d,
               std::vector<int>& order) {
    const float zmax = *std::max_element(z, z + V);
    double sum = 0;
    for (int v = 0; v < V; ++v) sum += std::exp(double(z[v]) - zmax);
    const double log_norm = double(zmax) + std::log(sum);
    d.logp.resize(V);
    for (int v = 0; v < V; ++v) d.logp[v] = double(z[v]) - log_norm;
    const auto better = [&](int a, int b) { return d.logp[a] > d.logp[b] || (d.logp[a] == d.logp[b] && a < b); };

    order.resize(V);
    std::iota(order.begin(), order.end(), 0);
    const int k = std::min(top_k, V);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), better);
    d.top.clear();
    for (int r = 0; r < k; ++r) d.top.emplace_back(order[r], float(std::exp(d.logp[order[r]])));

    order.clear();
    for (int v = 0; v < V; ++v)
        if (!banned[v]) order.push_back(v);
    const int nc = std::min<int>(n_cand, static_cast<int>(order.size()));
    std::partial_sort(order.begin(), order.begin() + nc, order.end(), better);
    d.cand.assign(order.begin(), order.begin() + nc);
}

double length_score(double log_prob, size_t length, float alpha) {
    return log_prob / std::pow(double(std::max<size_t>(length, 1)), double(alpha));
}

struct Hyp {
    std::vector<int> ids;
    std::vector<DecodeStep> steps;
    double log_prob = 0;
    KVCache cache;
};

DecodeResult to_result(std::vector<int> ids, std::vector<DecodeStep> steps, double log_prob, bool finished,
                       float alpha) {
    DecodeResult r;
    r.ids = std::move(ids);
    r.steps = std::move(steps);
    r.log_prob = log_prob;
    r.finished = finished;
    r.score = length_score(log_prob, r.steps.size(), alpha);
    return r;
}

/// The `beam` best results by score; among equal scores the earlier one stays ahead.
struct FinishedList {
    size_t capacity = 1;
    std::vector<DecodeResult> items;  // sorted by score, best first

    void add(DecodeResult r) {
        const auto pos = std::upper_bound(items.begin(), items.end(), r.score,
                                          [](double s, const DecodeResult& x) { return s > x.score; });
        items.insert(pos, std::move(r));
        if (items.size() > capacity) items.pop_back();
    }
    [[nodiscard]] bool full() const { return items.size() >= capacity; }
    [[nodiscard]] double worst() const { return items.back().score; }
};

DecodeStep make_step(int id, const StepDist& d) {
    DecodeStep s;
    s.id = id;
    s.prob = float(std::exp(d.logp[id]));
    s.top = d.top;
    return s;
}

DecodeResult greedy(const Model& m, const TranslationSpec& spec, const MatrixRM& memory, int max_len,
                    const DecodeOptions& opt, const std::vector<char>& banned) {
    KVCache cache;
    StepDist d;
    std::vector<int> order;
    std::vector<int> ids;
    std::vector<DecodeStep> steps;
    double log_prob = 0;
    int prev = spec.decoder_start_id;
    for (int t = 0; t < max_len; ++t) {
        const MatrixRM logits = decoder_step(m, memory, prev, cache);
        step_dist(logits.data(), int(logits.cols()), opt.top_k, 1, banned, d, order);
        if (d.cand.empty()) break;
        const int best = d.cand[0];
        steps.push_back(make_step(best, d));
        log_prob += d.logp[best];
        if (best == spec.target_end_id)
            return to_result(std::move(ids), std::move(steps), log_prob, true, opt.length_penalty);
        ids.push_back(best);
        prev = best;
    }
    return to_result(std::move(ids), std::move(steps), log_prob, false, opt.length_penalty);
}

DecodeResult beam_search(const Model& m, const TranslationSpec& spec, const MatrixRM& memory, int max_len,
                         const DecodeOptions& opt, const std::vector<char>& banned) {
    const int B = opt.beam;
    const float alpha = opt.length_penalty;
    std::vector<Hyp> live(1);
    FinishedList finished;
    finished.capacity = size_t(B);
    std::vector<StepDist> dists;
    std::vector<int> order;
    MatrixRM hidden;

    struct Cand {
        double log_prob;
        int hyp, id;
    };
    std::vector<Cand> cands;
    bool done = false;
    for (int t = 0; t < max_len && !done; ++t) {
        // --- every live hypothesis proposes its 2B best continuations; one LM-head GEMM for all of them ---
        hidden.resize(Eigen::Index(live.size()), m.config().d_model);
        for (size_t h = 0; h < live.size(); ++h) {
            const int prev = live[h].ids.empty() ? spec.decoder_start_id : live[h].ids.back();
            hidden.row(Eigen::Index(h)) = decoder_hidden(m, memory, prev, live[h].cache);
        }
        const MatrixRM logits = detail::lm_head(m, hidden, true);
        dists.resize(live.size());
        cands.clear();
        for (size_t h = 0; h < live.size(); ++h) {
            step_dist(logits.row(Eigen::Index(h)).data(), int(logits.cols()), opt.top_k, 2 * B, banned, dists[h],
                      order);
            for (const int id : dists[h].cand) cands.push_back({live[h].log_prob + dists[h].logp[id], int(h), id});
        }
        std::sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
            if (a.log_prob != b.log_prob) return a.log_prob > b.log_prob;
            if (a.hyp != b.hyp) return a.hyp < b.hyp;
            return a.id < b.id;
        });
        if (cands.size() > size_t(2 * B)) cands.resize(size_t(2 * B));

        // --- the first B candidates may finish; the rest only continue, until B are live ---
        std::vector<size_t> chosen;  // indices into cands of the continuing ones
        for (size_t r = 0; r < cands.size() && chosen.size() < size_t(B); ++r) {
            const Cand& cd = cands[r];
            if (cd.id == spec.target_end_id) {
                if (r >= size_t(B)) continue;
                std::vector<DecodeStep> steps = live[cd.hyp].steps;
                steps.push_back(make_step(cd.id, dists[cd.hyp]));
                finished.add(to_result(live[cd.hyp].ids, std::move(steps), cd.log_prob, true, alpha));
            } else {
                chosen.push_back(r);
            }
        }
        // A parent's cache is moved into its last child and copied for the others (copies share cross K/V).
        std::vector<int> children(live.size(), 0);
        for (const size_t r : chosen) ++children[cands[r].hyp];
        std::vector<Hyp> next(chosen.size());
        for (size_t j = 0; j < chosen.size(); ++j) {
            const Cand& cd = cands[chosen[j]];
            Hyp& parent = live[cd.hyp];
            Hyp& child = next[j];
            child.ids = parent.ids;
            child.ids.push_back(cd.id);
            child.steps = parent.steps;
            child.steps.push_back(make_step(cd.id, dists[cd.hyp]));
            child.log_prob = cd.log_prob;
            child.cache = --children[cd.hyp] == 0 ? std::move(parent.cache) : parent.cache;
        }
        live = std::move(next);
        if (live.empty()) break;

        // --- stop when no live hypothesis can beat the worst kept finished one ---
        if (finished.full()) {
            double best_bound = -std::numeric_limits<double>::infinity();
            for (const Hyp& h : live) {
                // Future tokens only lower log_prob (<= 0); the length that flatters it most is the longest one
                // (max_len) for alpha > 0 and the shortest one (ending next step) otherwise.
                const size_t len = opt.exact_stop && alpha > 0 ? size_t(max_len) : h.ids.size() + 1;
                best_bound = std::max(best_bound, length_score(h.log_prob, len, alpha));
            }
            done = best_bound <= finished.worst();
        }
    }
    if (!done)
        for (Hyp& h : live) finished.add(to_result(std::move(h.ids), std::move(h.steps), h.log_prob, false, alpha));
    if (finished.items.empty()) return to_result({}, {}, 0.0, false, alpha);  // unreachable: the end token is never banned
    return std::move(finished.items.front());
}

}  // namespace

DecodeResult translate_ids(const Model& m, const TranslationSpec& spec, const std::vector<int>& src_ids,
                           const DecodeOptions& opt) {
    const ModelConfig& c = m.config();
    if (c.arch != Arch::EncoderDecoder)
        throw std::invalid_argument("translate_ids: model '" + c.name + "' is " + to_string(c.arch) +
                                    ", not encoder_decoder (translation needs an encoder-decoder model)");
    if (src_ids.empty()) throw std::invalid_argument("translate_ids: empty source ids (need at least one token)");
    for (size_t i = 0; i < src_ids.size(); ++i)
        if (src_ids[i] < 0 || src_ids[i] >= c.vocab_size)
            throw std::invalid_argument("translate_ids: source token id " + std::to_string(src_ids[i]) +
                                        " at position " + std::to_string(i) + " is outside [0, vocab_size = " +
                                        std::to_string(c.vocab_size) + ")");
    const auto check_id = [&](int id, const char* what) {
        if (id < 0 || id >= c.vocab_size)
            throw std::invalid_argument(std::string("translate_ids: ") + what + " id " + std::to_string(id) +
                                        " is outside [0, vocab_size = " + std::to_string(c.vocab_size) + ")");
    };
    check_id(spec.decoder_start_id, "decoder_start");
    check_id(spec.target_end_id, "target_end");
    if (opt.beam < 1) throw std::invalid_argument("translate_ids: beam must be >= 1, got " + std::to_string(opt.beam));
    if (opt.max_len < 1)
        throw std::invalid_argument("translate_ids: max_len must be >= 1, got " + std::to_string(opt.max_len));
    if (opt.top_k < 0)
        throw std::invalid_argument("translate_ids: top_k must be >= 0, got " + std::to_string(opt.top_k));
    if (!std::isfinite(opt.length_penalty))
        throw std::invalid_argument("translate_ids: length_penalty must be finite");

    std::vector<char> banned(size_t(c.vocab_size), 0);
    const auto ban = [&](int id) {
        if (id >= 0 && id < c.vocab_size && id != spec.target_end_id) banned[size_t(id)] = 1;
    };
    ban(spec.pad_id);
    for (const auto& [lang, id] : spec.target_language_ids) ban(id);

    const int max_len = std::min(opt.max_len, c.max_seq_len);
    const MatrixRM memory = encode_source(m, src_ids);
    return opt.beam == 1 ? greedy(m, spec, memory, max_len, opt, banned)
                         : beam_search(m, spec, memory, max_len, opt, banned);
}

}  // namespace ts
