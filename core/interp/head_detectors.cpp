// Head detectors (see head_detectors.h).
#include "core/interp/head_detectors.h"

#include "core/trace/trace.h"
#include "core/util/random.h"

#include <stdexcept>

namespace ts::interp {

std::string_view name_of(HeadKind kind) {
    switch (kind) {
    case HeadKind::PreviousToken: return "previous-token";
    case HeadKind::DuplicateToken: return "duplicate-token";
    case HeadKind::Induction: return "induction";
    case HeadKind::FirstToken: return "first-token";
    }
    return "?";
}

std::optional<HeadKind> parse_head_kind(std::string_view name) {
    for (const HeadKind k : kHeadKinds)
        if (name_of(k) == name) return k;
    return std::nullopt;
}

MatrixRM detection_pattern(HeadKind kind, const std::vector<int>& ids) {
    const int T = int(ids.size());
    MatrixRM p = MatrixRM::Zero(T, T);
    for (int i = 0; i < T; ++i) {
        switch (kind) {
        case HeadKind::PreviousToken:
            if (i >= 1) p(i, i - 1) = 1.0f;
            break;
        case HeadKind::DuplicateToken:
            for (int j = 0; j < i; ++j) p(i, j) = ids[size_t(j)] == ids[size_t(i)] ? 1.0f : 0.0f;
            break;
        case HeadKind::Induction:  // the duplicate pattern moved one key to the right, inside the causal triangle
            for (int j = 1; j <= i; ++j) p(i, j) = ids[size_t(j - 1)] == ids[size_t(i)] ? 1.0f : 0.0f;
            break;
        case HeadKind::FirstToken:
            if (i >= 1) p(i, 0) = 1.0f;
            break;
        }
    }
    return p;
}

float head_score(const Eigen::Ref<const MatrixRM>& attn, HeadKind kind, const MatrixRM& pattern,
                 const DetectOptions& opt) {
    const int64_t T = attn.rows();
    if (attn.cols() != T || pattern.rows() != T || pattern.cols() != T)
        throw std::invalid_argument("head_score: attention (" + std::to_string(attn.rows()) + ", " +
                                    std::to_string(attn.cols()) + ") and pattern (" + std::to_string(pattern.rows()) +
                                    ", " + std::to_string(pattern.cols()) + ") must both be (T, T)");
    if (kind == HeadKind::FirstToken) {
        if (T < 2) return 0.0f;
        double sum = 0.0;
        for (int64_t i = 1; i < T; ++i) sum += attn(i, 0);
        return float(sum / double(T - 1));
    }
    double hit = 0.0, all = 0.0;
    for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j) {
            if ((opt.exclude_bos && j == 0) || (opt.exclude_current_token && j == i)) continue;
            all += attn(i, j);
            hit += double(attn(i, j)) * pattern(i, j);
        }
    return all > 0.0 ? float(hit / all) : 0.0f;
}

MatrixRM detect_heads(const Trace& trace, const std::string& stack, int n_layers, const std::vector<int>& ids,
                      HeadKind kind, const DetectOptions& opt) {
    const int64_t T = int64_t(ids.size());
    if (T < 2) throw std::invalid_argument("head detectors need at least 2 tokens");
    const MatrixRM pattern = detection_pattern(kind, ids);
    MatrixRM scores;
    for (int l = 0; l < n_layers; ++l) {
        const std::string name = stack + "." + std::to_string(l) + ".attn.probs";
        const Tensor* t = trace.find(name);
        if (!t) throw std::invalid_argument("detect_heads: trace has no '" + name + "' (capture it)");
        if (t->rank() != 3 || t->shape[1] != T || t->shape[2] != T)
            throw std::invalid_argument("detect_heads: '" + name + "' is " + t->shape_str() + ", expected (H, " +
                                        std::to_string(T) + ", " + std::to_string(T) + ")");
        const int64_t H = t->shape[0];
        if (l == 0) scores = MatrixRM::Zero(n_layers, H);
        for (int64_t h = 0; h < H; ++h)
            scores(l, h) = head_score(ConstMapRM(t->data.data() + size_t(h * T * T), T, T), kind, pattern, opt);
    }
    return scores;
}

std::vector<int> repeated_random_tokens(int vocab_size, int half, uint64_t seed, std::optional<int> first) {
    if (half < 1) throw std::invalid_argument("repeated_random_tokens: half must be >= 1, got " + std::to_string(half));
    if (vocab_size < 2)
        throw std::invalid_argument("repeated_random_tokens: vocab_size must be >= 2, got " +
                                    std::to_string(vocab_size));
    std::vector<int> ids;
    if (first) ids.push_back(*first);
    std::vector<int> r(static_cast<size_t>(half));
    uint64_t state = seed;
    for (int& id : r) id = int(uniform01(splitmix64(state)) * vocab_size);
    ids.insert(ids.end(), r.begin(), r.end());
    ids.insert(ids.end(), r.begin(), r.end());
    return ids;
}

}  // namespace ts::interp
