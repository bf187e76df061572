// Activation patching over (layer, position) of the residual stream and over (layer, head) of the head outputs,
// each cell one forward of the corrupted input with one Set edit taken from the cached clean run.
#include "core/interp/patching.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace ts::interp {

namespace {

float logit_diff(const ForwardResult& r, int answer, int wrong) {
    const Eigen::Index last = r.logits.rows() - 1;
    return r.logits(last, answer) - r.logits(last, wrong);
}

// Runs the corrupted forward once per cell, cell (r, c) patched by edit_of(r, c), into a (rows, cols) result.
// A cell whose clean values equal the corrupted run's (same_of(r, c): e.g. positions before the first differing
// token of a causal model) would reproduce the corrupted run exactly, so it is filled without a forward. The
// remaining cells are shared by up to two threads (results are identical to a serial sweep: every forward is
// independent and deterministic); `progress` is called under a mutex.
template <class EditOf, class SameOf>
PatchingResult sweep(const Model& m, const PatchingBaseline& b, int rows, int cols, const EditOf& edit_of,
                     const SameOf& same_of, const Progress& progress, const std::atomic<bool>* cancel) {
    PatchingResult out;
    out.normalized = MatrixRM::Constant(rows, cols, std::numeric_limits<float>::quiet_NaN());
    out.metric = out.normalized;
    const float denom = b.clean_metric - b.corrupt_metric;
    const int total = rows * cols;
    std::vector<int> todo;
    for (int i = 0; i < total; ++i) {
        if (same_of(i / cols, i % cols)) {
            out.metric(i / cols, i % cols) = b.corrupt_metric;
            out.normalized(i / cols, i % cols) = 0.0f;
        } else {
            todo.push_back(i);
        }
    }
    std::mutex mu;
    int done = total - int(todo.size());
    std::atomic<size_t> next{0};
    std::atomic<bool> stopped{false};
    if (progress && done > 0) progress(done, total);
    auto work = [&] {
        ForwardOptions opt = b.base;
        opt.edits.push_back({});
        for (size_t k = next++; k < todo.size(); k = next++) {
            if (cancelled(cancel)) {
                stopped = true;
                return;
            }
            const int i = todo[k];
            opt.edits.back() = edit_of(i / cols, i % cols);
            const float mval = logit_diff(forward(m, b.corrupt_ids, opt), b.answer, b.wrong);
            std::lock_guard lk(mu);
            out.metric(i / cols, i % cols) = mval;
            out.normalized(i / cols, i % cols) = (mval - b.corrupt_metric) / denom;
            ++done;
            if (progress) progress(done, total);
        }
    };
    const unsigned n_threads = std::clamp(std::thread::hardware_concurrency(), 1u, 2u);
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < n_threads && todo.size() > 1; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    out.cancelled = stopped.load();
    return out;
}

bool same_floats(const Tensor& a, const Tensor& b, size_t offset, size_t n) {
    return std::memcmp(a.data.data() + offset, b.data.data() + offset, n * sizeof(float)) == 0;
}

}  // namespace

PatchingBaseline prepare_patching(const Model& m, const std::vector<int>& clean_ids,
                                  const std::vector<int>& corrupt_ids, int answer, int wrong,
                                  const ForwardOptions& base) {
    const ModelConfig& c = m.config();
    PatchingBaseline b;
    b.stack = analysis_stack(c, "prepare_patching");
    if (clean_ids.empty() || clean_ids.size() != corrupt_ids.size())
        throw std::invalid_argument("prepare_patching: clean and corrupted inputs must have the same, non-zero "
                                    "length; got " + std::to_string(clean_ids.size()) + " and " +
                                    std::to_string(corrupt_ids.size()) + " tokens");
    check_token(c, answer, "prepare_patching", "answer token");
    check_token(c, wrong, "prepare_patching", "wrong-answer token");
    b.clean_ids = clean_ids;
    b.corrupt_ids = corrupt_ids;
    b.answer = answer;
    b.wrong = wrong;
    b.base = base;
    b.base.capture = CaptureFilter::none();
    b.base.all_logits = false;

    std::vector<std::string> points{"embed.out"};
    for (int l = 0; l < c.n_layers; ++l) {
        points.push_back(b.stack + "." + std::to_string(l) + ".resid_ffn");
        points.push_back(b.stack + "." + std::to_string(l) + ".attn.head_out");
    }
    ForwardOptions clean_opt = b.base;
    clean_opt.capture = CaptureFilter::prefixes(points);
    const ForwardResult clean = forward(m, clean_ids, clean_opt);
    b.clean = clean.trace;
    b.clean_metric = logit_diff(clean, answer, wrong);
    const ForwardResult corrupt = forward(m, corrupt_ids, clean_opt);
    b.corrupt = corrupt.trace;
    b.corrupt_metric = logit_diff(corrupt, answer, wrong);
    if (b.clean_metric == b.corrupt_metric)
        throw std::invalid_argument("prepare_patching: clean and corrupted runs give the same logit difference (" +
                                    std::to_string(b.clean_metric) + "); the normalised metric is undefined");
    return b;
}

PatchingResult patch_resid_pre(const Model& m, const PatchingBaseline& b, const Progress& progress,
                               const std::atomic<bool>* cancel) {
    const int L = m.config().n_layers, T = static_cast<int>(b.corrupt_ids.size()), d = m.config().d_model;
    std::vector<std::string> points;
    for (int l = 0; l < L; ++l) points.push_back(resid_pre_point(b.stack, l));
    const auto edit_of = [&](int l, int p) {
        const Tensor& src = b.clean->at(points[l]);
        return ActivationEdit::set(points[l], {src.data.begin() + size_t(p) * d, src.data.begin() + size_t(p + 1) * d},
                                   -1, p);
    };
    const auto same_of = [&](int l, int p) {
        return b.corrupt && same_floats(b.clean->at(points[l]), b.corrupt->at(points[l]), size_t(p) * d, size_t(d));
    };
    return sweep(m, b, L, T, edit_of, same_of, progress, cancel);
}

PatchingResult patch_head_out(const Model& m, const PatchingBaseline& b, const Progress& progress,
                              const std::atomic<bool>* cancel) {
    const ModelConfig& c = m.config();
    const int T = static_cast<int>(b.corrupt_ids.size());
    const size_t block = size_t(T) * c.d_head();
    const auto edit_of = [&](int l, int h) {
        const std::string point = b.stack + "." + std::to_string(l) + ".attn.head_out";
        const Tensor& src = b.clean->at(point);  // (H, T, D)
        return ActivationEdit::set(point, {src.data.begin() + h * block, src.data.begin() + (h + 1) * block}, h);
    };
    const auto same_of = [&](int l, int h) {
        const std::string point = b.stack + "." + std::to_string(l) + ".attn.head_out";
        return b.corrupt && same_floats(b.clean->at(point), b.corrupt->at(point), h * block, block);
    };
    return sweep(m, b, c.n_layers, c.n_heads, edit_of, same_of, progress, cancel);
}

}  // namespace ts::interp
