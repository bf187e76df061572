// Trace: the named intermediate tensors of one forward pass, and the capture filter that decides which are kept.
// Names follow <stack>.<layer>.<block>.<tensor>, e.g. "dec.2.attn.probs" (n_heads, T, S). Full list: docs/models.md.
// Storage comes from an optional TensorPool (buffers reused across forwards, handed back when the Trace dies), and
// entries can be registered as derived: computed on first find()/at() instead of being stored by the forward (the
// attention scores and probabilities, from the block's AttentionRows: core/kernels/attention_rows.h).
#pragma once

#include "core/model/tensor.h"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace ts {

class AttentionRows;  // core/kernels/attention_rows.h

/// Decides which trace names are recorded. Asked before anything is copied, so an unwatched tensor costs nothing.
class CaptureFilter {
public:
    static CaptureFilter all() { return CaptureFilter(Mode::All); }
    static CaptureFilter none() { return CaptureFilter(Mode::None); }
    /// Record names that start with any of the prefixes ("dec.1.attn." or "logits").
    static CaptureFilter prefixes(std::vector<std::string> p) {
        CaptureFilter f(Mode::Prefixes);
        f.m_patterns = std::move(p);
        return f;
    }
    /// Every name except those ending with one of the suffixes (".ffn.pre_act"): what a long text keeps when the
    /// whole trace would not fit the memory budget (the worker's long-text capture).
    static CaptureFilter all_except(std::vector<std::string> suffixes) {
        CaptureFilter f(Mode::AllExcept);
        f.m_patterns = std::move(suffixes);
        return f;
    }
    /// The names `keep` accepts (e.g. the trace command's --only / --exclude / --layers, globs included, so that
    /// nothing it will not write is recorded). `key` names the rule for key(): two filters with equal keys must
    /// keep the same names. `keep` is called from the forward's thread.
    static CaptureFilter custom(std::function<bool(std::string_view)> keep, std::string key) {
        CaptureFilter f(Mode::Custom);
        f.m_keep = std::make_shared<const std::function<bool(std::string_view)>>(std::move(keep));
        f.m_patterns = {std::move(key)};
        return f;
    }
    [[nodiscard]] bool wants(std::string_view name) const {
        switch (m_mode) {
        case Mode::All: return true;
        case Mode::None: return false;
        case Mode::Custom: return (*m_keep)(name);
        case Mode::AllExcept:
            for (const auto& p : m_patterns)
                if (name.ends_with(p)) return false;
            return true;
        case Mode::Prefixes: break;
        }
        for (const auto& p : m_patterns)
            if (name.starts_with(p)) return true;
        return false;
    }
    [[nodiscard]] bool captures_anything() const { return m_mode != Mode::None; }
    [[nodiscard]] bool captures_all() const { return m_mode == Mode::All; }
    /// All but some names (all_except): a trace that lacks the same names at every length, so an incremental
    /// forward can splice it like a whole one.
    [[nodiscard]] bool captures_all_but_some() const { return m_mode == Mode::AllExcept; }
    /// Identifies the filter ("all", "none", "prefixes:a,b", "except:a,b", "custom:KEY"): equal keys record the same
    /// names.
    [[nodiscard]] std::string key() const {
        std::string k = m_mode == Mode::All ? "all"
            : m_mode == Mode::None          ? "none"
            : m_mode == Mode::Prefixes      ? "prefixes:"
            : m_mode == Mode::Custom        ? "custom:"
                                            : "except:";
        for (const auto& p : m_patterns) k += p + ",";
        return k;
    }

private:
    enum class Mode { All, None, Prefixes, AllExcept, Custom };
    explicit CaptureFilter(Mode m) : m_mode(m) {}
    Mode m_mode;
    std::vector<std::string> m_patterns;  ///< Prefixes: prefixes; AllExcept: suffixes; Custom: {key}
    std::shared_ptr<const std::function<bool(std::string_view)>> m_keep;  ///< Custom only
};

/// Float buffers recycled between traces: take() returns a buffer with capacity >= n (the smallest held one that
/// fits, else a fresh one; never zero-filled), give() keeps it for the next taker. A worker doing back-to-back
/// forwards owns one pool and passes it in ForwardOptions::pool, so a steady stream of forwards faults in no fresh
/// pages (the kernel's page clearing was a third of a GPT-2-small forward at T = 256). Thread-safe: the UI thread
/// releases snapshots while the worker takes.
class TensorPool {
public:
    /// `max_bytes`: buffers given back beyond this total are freed instead of kept.
    explicit TensorPool(size_t max_bytes = size_t(4) << 30) : m_max_bytes(max_bytes) {}
    TensorPool(const TensorPool&) = delete;
    TensorPool& operator=(const TensorPool&) = delete;
    /// Empty vector (size 0) whose capacity is at least n floats.
    [[nodiscard]] std::vector<float> take(size_t n);
    void give(std::vector<float>&& buf);
    /// Bytes held for reuse (capacity of the kept buffers).
    [[nodiscard]] size_t bytes_held() const;
    /// Frees every kept buffer (e.g. after loading a smaller model).
    void clear();

private:
    mutable std::mutex m_mutex;
    std::multimap<size_t, std::vector<float>> m_free;  ///< by capacity
    size_t m_bytes = 0, m_max_bytes;
};

class Trace {
public:
    /// Fills `out` (an empty buffer with enough capacity) with a derived tensor's values (its registered shape's
    /// element count) computed from other entries of `trace` (which it may find()).
    using DeriveFn = std::function<void(const Trace& trace, std::vector<float>& out)>;

    explicit Trace(CaptureFilter filter = CaptureFilter::none(), std::shared_ptr<TensorPool> pool = nullptr)
        : m_filter(std::move(filter)), m_pool(std::move(pool)) {}
    /// Hands every buffer back to the pool (when there is one).
    ~Trace();
    Trace(const Trace&) = delete;
    Trace& operator=(const Trace&) = delete;

    [[nodiscard]] bool wants(std::string_view name) const { return m_filter.wants(name); }
    /// Copies `data` (row-major, `shape`) under `name` if the filter wants it. Re-recording a name replaces it.
    void record(const std::string& name, std::vector<int64_t> shape, const float* data);
    void record(const std::string& name, const MatrixRM& m) {
        if (wants(name)) record(name, {m.rows(), m.cols()}, m.data());
    }
    /// Records `name` (if the filter wants it) with values appended by `fill` to an empty buffer taken from the
    /// pool (no zero-fill, no intermediate copy). `fill` must append exactly the shape's element count.
    void record_with(const std::string& name, std::vector<int64_t> shape, const DeriveFn& fill);
    /// Registers `name` (if the filter wants it) as computed on first access by `make`, which may read other
    /// entries of this trace. Listed in names() at this point of the recording order like a recorded tensor.
    void record_derived(const std::string& name, std::vector<int64_t> shape, DeriveFn make);
    /// nullptr when absent. A derived entry is computed here on first access (thread-safe; the pointer stays valid
    /// for the Trace's lifetime).
    [[nodiscard]] const Tensor* find(std::string_view name) const;
    /// Throws std::out_of_range naming the tensor when absent.
    [[nodiscard]] const Tensor& at(std::string_view name) const;
    /// Names in recording order (derived entries included).
    [[nodiscard]] const std::vector<std::string>& names() const { return m_order; }
    [[nodiscard]] size_t size() const { return m_order.size(); }
    [[nodiscard]] const CaptureFilter& filter() const { return m_filter; }
    /// True when `name` is recorded or registered as derived (computes nothing).
    [[nodiscard]] bool contains(std::string_view name) const;
    /// True when `name` is registered as derived and not computed yet (costs nothing until asked).
    [[nodiscard]] bool is_pending(std::string_view name) const;
    /// Bytes of tensor data currently held (derived entries count once computed; attention() sources excluded).
    [[nodiscard]] size_t bytes() const;

    /// Keeps `rows` as the on-demand attention of the block `block_prefix` ("dec.3.attn.", "dec.0.cross_attn."):
    /// any rows of any head's scores or probabilities, without the (H, T, S) tensors (core/kernels/attention_rows.h).
    void set_attention(const std::string& block_prefix, std::shared_ptr<const AttentionRows> rows);
    /// The block's on-demand attention; null when the forward kept none (the filter wanted none of its scores or
    /// probabilities).
    [[nodiscard]] std::shared_ptr<const AttentionRows> attention(std::string_view block_prefix) const;
    /// Bytes the attention() sources keep (queries, keys, masks).
    [[nodiscard]] size_t attention_bytes() const;

private:
    struct Entry {
        Tensor tensor;
        DeriveFn derive;  ///< set while the entry waits to be computed
    };
    CaptureFilter m_filter;
    std::shared_ptr<TensorPool> m_pool;
    mutable std::map<std::string, Entry, std::less<>> m_tensors;
    std::vector<std::string> m_order;
    std::map<std::string, std::shared_ptr<const AttentionRows>, std::less<>> m_attention;
    mutable std::recursive_mutex m_derive_mutex;  ///< a recipe may find() its sources
};

}  // namespace ts
