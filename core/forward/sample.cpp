// Next-token sampling and generation (see core/forward/sample.h).
#include "core/forward/sample.h"

#include "core/util/random.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace ts {

std::vector<float> sampling_distribution(std::span<const float> logits, const SamplingOptions& opt) {
    if (!(opt.temperature > 0))
        throw std::invalid_argument("sampling temperature must be > 0, got " + std::to_string(opt.temperature));
    if (!(opt.top_p > 0.0f && opt.top_p <= 1.0f))
        throw std::invalid_argument("sampling top_p must be in (0, 1], got " + std::to_string(opt.top_p));
    const int vocab = int(logits.size());
    std::vector<float> p(logits.size(), 0.0f);
    float mx = -INFINITY;
    for (float v : logits)
        if (std::isfinite(v)) mx = std::max(mx, v);
    if (!std::isfinite(mx)) return p;
    std::vector<int> order(logits.size());
    std::iota(order.begin(), order.end(), 0);
    const auto key = [&](int i) { return std::isfinite(logits[size_t(i)]) ? logits[size_t(i)] : -INFINITY; };
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) > key(b); });
    const int k = opt.top_k > 0 ? std::min(opt.top_k, vocab) : vocab;
    double z = 0;
    for (int r = 0; r < k; ++r) {
        const size_t i = size_t(order[size_t(r)]);
        const float v = std::isfinite(logits[i]) ? std::exp((logits[i] - mx) / opt.temperature) : 0.0f;
        p[i] = v;
        z += v;
    }
    for (int r = 0; r < k; ++r) p[size_t(order[size_t(r)])] = float(p[size_t(order[size_t(r)])] / z);
    if (opt.top_p < 1.0f) {
        double cum = 0;
        int keep = 0;
        for (int r = 0; r < k; ++r) {
            cum += p[size_t(order[size_t(r)])];
            ++keep;
            if (cum >= opt.top_p) break;
        }
        double z2 = 0;
        for (int r = 0; r < k; ++r) {
            if (r >= keep) p[size_t(order[size_t(r)])] = 0.0f;
            else z2 += p[size_t(order[size_t(r)])];
        }
        for (int r = 0; r < keep; ++r) p[size_t(order[size_t(r)])] = float(p[size_t(order[size_t(r)])] / z2);
    }
    return p;
}

int sample_index(std::span<const float> probs, uint64_t& state) {
    double total = 0;
    for (float w : probs)
        if (w > 0) total += w;
    if (!(total > 0)) throw std::invalid_argument("sample_index: no positive weight to draw from");
    const double u = uniform01(splitmix64(state)) * total;
    double cum = 0;
    int last = -1;
    for (size_t i = 0; i < probs.size(); ++i) {
        if (!(probs[i] > 0)) continue;
        cum += probs[i];
        last = int(i);
        if (u < cum) return last;
    }
    return last;  // u within rounding of the total: the last positive weight
}

namespace {
// Whether appending to a KV cache gives the logits of a full forward of the context under these options.
bool cache_reproduces(const ForwardOptions& o) {
    return o.edits.empty() && o.self_mask.kind == MaskKind::Causal && o.self_mask.key_padding.empty();
}
}  // namespace

Generation generate(const Model& m, const std::vector<int>& prompt, const GenerateOptions& opt) {
    if (prompt.empty()) throw std::invalid_argument("generate: the prompt has no tokens");
    if (!has_lm_head(m)) throw std::invalid_argument("this model has no LM head to sample from");
    (void)sampling_distribution(std::span<const float>(), opt.sampling);  // bad knobs fail before any forward
    const ModelConfig& c = m.config();
    const bool seq2seq = c.arch == Arch::EncoderDecoder;
    if (seq2seq && opt.source_ids.empty()) throw std::invalid_argument("generate: an encoder–decoder model needs source ids");
    const int max_len = c.max_seq_len;
    ForwardOptions fo = opt.forward;
    fo.all_logits = false;
    fo.compute_logits = true;
    fo.capture = CaptureFilter::none();
    const bool cached = !seq2seq && cache_reproduces(fo);
    Generation g;
    std::vector<int> ids = prompt;
    uint64_t state = opt.seed;
    KVCache cache;
    ForwardResult out;
    for (int step = 0; step < opt.max_new_tokens; ++step) {
        const bool full = !cached || step == 0 || cache.n_past + 1 > max_len;
        if (full) {
            std::vector<int> ctx = ids;
            if (max_len > 0 && int(ctx.size()) > max_len) ctx.erase(ctx.begin(), ctx.end() - max_len);
            cache.reset();
            out = seq2seq ? forward_seq2seq(m, opt.source_ids, ctx, fo) : forward(m, ctx, fo, cached ? &cache : nullptr);
            ++g.full_forwards;
        } else {
            out = forward(m, {ids.back()}, fo, &cache);
        }
        if (out.logits.rows() == 0) throw std::invalid_argument("this model has no LM head to sample from");
        const auto row = out.logits.row(out.logits.rows() - 1);
        const std::vector<float> p = sampling_distribution(std::span<const float>(row.data(), size_t(row.size())), opt.sampling);
        const int next = sample_index(p, state);
        ids.push_back(next);
        g.ids.push_back(next);
        g.probs.push_back(p[size_t(next)]);
    }
    return g;
}

}  // namespace ts
