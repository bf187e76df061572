// The quantization lens's job (app/session/compare_job.h).
#include "app/session/compare_job.h"

#include "core/formats/gguf_model.h"
#include "core/model/memory_budget.h"

#include <chrono>
#include <stdexcept>

namespace ts::studio {

bool has_quantized_matrices(const Model& m) {
    for (const auto& [name, t] : m.stored_weights())
        if (t.is_ggml()) return true;
    return false;
}

LoadedModel load_compare_reference(const LoadedModel& m, const std::string& reference) {
    if (!m.model) throw std::invalid_argument("no model loaded");
    if (reference != kFloatTwin) {
        if (reference.empty()) throw std::invalid_argument("name a reference model (a folder or a .gguf file)");
        return load_model_folder(reference);
    }
    size_t need = 0;
    for (const auto& [name, t] : m.model->stored_weights()) need += size_t(t.numel()) * sizeof(float);
    if (!m.gguf || !has_quantized_matrices(*m.model) || m.path.empty())
        throw std::invalid_argument(
            "this model has no quantized matrices to widen: name another model as the reference");
    const std::string why = memory_refusal("this file's weights in float32", need, forward_memory_budget(),
                                           "compare with the original file instead, or start the app with a larger "
                                           "--memory-budget");
    if (!why.empty()) throw std::runtime_error(why);
    GgufLoadOptions opt;
    opt.keep_quantized = false;
    opt.keep_half = false;
    LoadedModel r;
    r.model = load_gguf_model(m.path, opt);
    r.codec = m.codec;
    r.path = m.path;
    r.display_name = m.display_name + " (float32)";
    return r;
}

CompareResult compare_models(const LoadedModel& m, const LoadedModel& reference, const std::vector<int>& ids,
                             QuantActivations arithmetic) {
    CompareResult r;
    r.model_name = m.display_name;
    r.reference_name = reference.display_name;
    r.arithmetic = arithmetic;
    r.ids = ids;
    r.float_twin = !reference.path.empty() && reference.path == m.path;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        if (!m.model || !reference.model) throw std::invalid_argument("no model loaded");
        if (ids.empty()) throw std::invalid_argument("type a text first: there are no tokens to compare");
        set_quant_activations(arithmetic);
        r.diff = interp::diff_models(*m.model, *reference.model, ids);
        for (const int id : ids) r.labels.push_back(m.codec ? m.codec->label(id) : std::to_string(id));
    } catch (const std::exception& e) {
        r.error = e.what();
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

CompareJob::~CompareJob() {
    if (m_future.valid()) m_future.wait();
}

bool CompareJob::start(const LoadedModel& m, const std::string& reference, std::vector<int> ids,
                       QuantActivations arithmetic, std::function<void()> on_done) {
    if (busy()) return false;
    m_future = std::async(
        std::launch::async,
        [m, reference, ids = std::move(ids), arithmetic, cache = m_cache, on_done = std::move(on_done)] {
            CompareResult r;
            try {
                if (cache->model.lock() != m.model || cache->reference != reference || !cache->loaded.model) {
                    cache->loaded = LoadedModel{};  // the old reference goes before the new one loads
                    cache->loaded = load_compare_reference(m, reference);
                    cache->model = m.model;
                    cache->reference = reference;
                }
                r = compare_models(m, cache->loaded, ids, arithmetic);
            } catch (const std::exception& e) {
                r.model_name = m.display_name;
                r.error = e.what();
            }
            if (on_done) on_done();
            return r;
        });
    return true;
}

bool CompareJob::poll() {
    if (!m_future.valid() || m_future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
    m_latest = std::make_shared<const CompareResult>(m_future.get());
    return true;
}

}  // namespace ts::studio
