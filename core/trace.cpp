// Trace storage: named copies of intermediate tensors, kept in recording order.
#include "core/trace.h"

#include <algorithm>
#include <stdexcept>

namespace ts {

void Trace::record(const std::string& name, std::vector<int64_t> shape, const float* data) {
    if (!wants(name)) return;
    const int64_t n = Tensor::count(shape);
    auto it = m_tensors.find(name);
    if (it == m_tensors.end()) {
        m_order.push_back(name);
        it = m_tensors.emplace(name, Tensor{}).first;
    }
    it->second.shape = std::move(shape);
    it->second.data.assign(data, data + n);
}

const Tensor* Trace::find(std::string_view name) const {
    auto it = m_tensors.find(name);
    return it == m_tensors.end() ? nullptr : &it->second;
}

const Tensor& Trace::at(std::string_view name) const {
    if (const Tensor* t = find(name)) return *t;
    throw std::out_of_range("trace has no tensor named '" + std::string(name) + "'");
}

}  // namespace ts
