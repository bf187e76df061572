// Trace storage: named copies of intermediate tensors, kept in recording order, their buffers taken from and handed
// back to a TensorPool; derived entries computed on first access.
#include "core/trace/trace.h"

#include "core/kernels/attention_rows.h"

#include <algorithm>
#include <stdexcept>

namespace ts {

// --- pool -------------------------------------------------------------------------------------------------------

std::vector<float> TensorPool::take(size_t n) {
    {
        std::lock_guard lk(m_mutex);
        auto it = m_free.lower_bound(n);
        // Best fit, but never waste a buffer more than 4x too big on a small tensor (it is needed for a big one).
        if (it != m_free.end() && (it->first <= 4 * n || n >= (size_t(1) << 16))) {
            std::vector<float> v = std::move(it->second);
            m_bytes -= it->first * sizeof(float);
            m_free.erase(it);
            v.clear();
            return v;
        }
    }
    std::vector<float> v;
    v.reserve(n);  // no zero-fill: the caller assigns every element
    return v;
}

void TensorPool::give(std::vector<float>&& buf) {
    const size_t cap = buf.capacity();
    if (cap == 0) return;
    std::lock_guard lk(m_mutex);
    if (m_bytes + cap * sizeof(float) > m_max_bytes) return;  // freed when buf goes out of scope at the caller
    m_bytes += cap * sizeof(float);
    m_free.emplace(cap, std::move(buf));
}

size_t TensorPool::bytes_held() const {
    std::lock_guard lk(m_mutex);
    return m_bytes;
}

void TensorPool::clear() {
    std::lock_guard lk(m_mutex);
    m_free.clear();
    m_bytes = 0;
}

// --- trace ------------------------------------------------------------------------------------------------------

Trace::~Trace() {
    if (!m_pool) return;
    for (auto& [name, e] : m_tensors) m_pool->give(std::move(e.tensor.data));
}

void Trace::record(const std::string& name, std::vector<int64_t> shape, const float* data) {
    if (!wants(name)) return;
    const int64_t n = Tensor::count(shape);
    auto it = m_tensors.find(name);
    if (it == m_tensors.end()) {
        m_order.push_back(name);
        it = m_tensors.emplace(name, Entry{}).first;
    }
    Entry& e = it->second;
    e.derive = nullptr;
    e.tensor.shape = std::move(shape);
    if (m_pool && e.tensor.data.capacity() < size_t(n)) {
        m_pool->give(std::move(e.tensor.data));
        e.tensor.data = m_pool->take(size_t(n));
    }
    e.tensor.data.assign(data, data + n);
}

void Trace::record_with(const std::string& name, std::vector<int64_t> shape, const DeriveFn& fill) {
    if (!wants(name)) return;
    const size_t n = size_t(Tensor::count(shape));
    auto it = m_tensors.find(name);
    if (it == m_tensors.end()) {
        m_order.push_back(name);
        it = m_tensors.emplace(name, Entry{}).first;
    }
    Entry& e = it->second;
    e.derive = nullptr;
    e.tensor.shape = std::move(shape);
    if (m_pool) {
        m_pool->give(std::move(e.tensor.data));
        e.tensor.data = m_pool->take(n);
    } else {
        e.tensor.data.clear();
        e.tensor.data.reserve(n);
    }
    fill(*this, e.tensor.data);
    if (e.tensor.data.size() != n) throw std::logic_error("trace: '" + name + "' filled with the wrong size");
}

void Trace::record_derived(const std::string& name, std::vector<int64_t> shape, DeriveFn make) {
    if (!wants(name)) return;
    auto it = m_tensors.find(name);
    if (it == m_tensors.end()) {
        m_order.push_back(name);
        it = m_tensors.emplace(name, Entry{}).first;
    }
    it->second.tensor.shape = std::move(shape);
    it->second.tensor.data.clear();
    it->second.derive = std::move(make);
}

const Tensor* Trace::find(std::string_view name) const {
    auto it = m_tensors.find(name);
    if (it == m_tensors.end()) return nullptr;
    Entry& e = it->second;
    std::lock_guard lk(m_derive_mutex);
    if (e.derive) {
        const size_t n = size_t(Tensor::count(e.tensor.shape));
        std::vector<float> buf = m_pool ? m_pool->take(n) : std::vector<float>();
        if (!m_pool) buf.reserve(n);
        e.derive(*this, buf);
        if (buf.size() != n) throw std::logic_error("trace: derived tensor '" + it->first + "' has the wrong size");
        e.tensor.data = std::move(buf);
        e.derive = nullptr;
    }
    return &e.tensor;
}

const Tensor& Trace::at(std::string_view name) const {
    if (const Tensor* t = find(name)) return *t;
    throw std::out_of_range("trace has no tensor named '" + std::string(name) + "'");
}

bool Trace::contains(std::string_view name) const {  // the map's keys are fixed once recording ends
    return m_tensors.find(name) != m_tensors.end();
}

bool Trace::is_pending(std::string_view name) const {
    auto it = m_tensors.find(name);
    std::lock_guard lk(m_derive_mutex);
    return it != m_tensors.end() && it->second.derive != nullptr;
}

size_t Trace::bytes() const {
    std::lock_guard lk(m_derive_mutex);
    size_t b = 0;
    for (const auto& [name, e] : m_tensors) b += e.tensor.data.size() * sizeof(float);
    return b;
}

void Trace::set_attention(const std::string& block_prefix, std::shared_ptr<const AttentionRows> rows) {
    m_attention[block_prefix] = std::move(rows);
}

std::shared_ptr<const AttentionRows> Trace::attention(std::string_view block_prefix) const {
    const auto it = m_attention.find(block_prefix);
    return it == m_attention.end() ? nullptr : it->second;
}

size_t Trace::attention_bytes() const {
    size_t b = 0;
    for (const auto& [name, rows] : m_attention) b += rows->bytes_held();
    return b;
}

}  // namespace ts
