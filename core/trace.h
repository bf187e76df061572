// Trace: the named intermediate tensors of one forward pass, and the capture filter that decides which are kept.
// Names follow <stack>.<layer>.<block>.<tensor>, e.g. "dec.2.attn.probs" (n_heads, T, S). Full list: README.
#pragma once

#include "core/tensor.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ts {

/// Decides which trace names are recorded. Asked before anything is copied, so an unwatched tensor costs nothing.
class CaptureFilter {
public:
    static CaptureFilter all() { return CaptureFilter(Mode::All); }
    static CaptureFilter none() { return CaptureFilter(Mode::None); }
    /// Record names that start with any of the prefixes ("dec.1.attn." or "logits").
    static CaptureFilter prefixes(std::vector<std::string> p) {
        CaptureFilter f(Mode::Prefixes);
        f.m_prefixes = std::move(p);
        return f;
    }
    [[nodiscard]] bool wants(std::string_view name) const {
        if (m_mode == Mode::All) return true;
        if (m_mode == Mode::None) return false;
        for (const auto& p : m_prefixes)
            if (name.substr(0, p.size()) == p) return true;
        return false;
    }
    [[nodiscard]] bool captures_anything() const { return m_mode != Mode::None; }

private:
    enum class Mode { All, None, Prefixes };
    explicit CaptureFilter(Mode m) : m_mode(m) {}
    Mode m_mode;
    std::vector<std::string> m_prefixes;
};

class Trace {
public:
    explicit Trace(CaptureFilter filter = CaptureFilter::none()) : m_filter(std::move(filter)) {}

    [[nodiscard]] bool wants(std::string_view name) const { return m_filter.wants(name); }
    /// Copies `data` (row-major, `shape`) under `name` if the filter wants it. Re-recording a name replaces it.
    void record(const std::string& name, std::vector<int64_t> shape, const float* data);
    void record(const std::string& name, const MatrixRM& m) {
        if (wants(name)) record(name, {m.rows(), m.cols()}, m.data());
    }
    /// nullptr when absent.
    [[nodiscard]] const Tensor* find(std::string_view name) const;
    /// Throws std::out_of_range naming the tensor when absent.
    [[nodiscard]] const Tensor& at(std::string_view name) const;
    /// Names in recording order.
    [[nodiscard]] const std::vector<std::string>& names() const { return m_order; }
    [[nodiscard]] size_t size() const { return m_order.size(); }
    [[nodiscard]] const CaptureFilter& filter() const { return m_filter; }

private:
    CaptureFilter m_filter;
    std::map<std::string, Tensor, std::less<>> m_tensors;
    std::vector<std::string> m_order;
};

}  // namespace ts
