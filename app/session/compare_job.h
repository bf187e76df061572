// The quantization lens in the app (#31): the loaded model against a reference of the same shape on the text's
// tokens (core/interp/model_diff.h), off the UI thread. The reference is another model (a GGUF file's F16 / F32
// original, another checkpoint) or this GGUF file's own weights dequantized to float32: with llama.cpp's arithmetic
// on, that isolates what rounding the activations to 8 bits costs. GL-free.
#pragma once

#include "app/session/worker.h"
#include "core/interp/model_diff.h"
#include "core/kernels/quant_gemm.h"

#include <future>
#include <memory>
#include <string>
#include <vector>

namespace ts::studio {

/// The state's compare_reference value naming this GGUF file's own weights dequantized to float32.
inline constexpr const char* kFloatTwin = "float-twin";

/// One comparison: the diff and what it was run on, or `error`.
struct CompareResult {
    interp::ModelDiff diff;
    std::vector<int> ids;             ///< the tokens compared
    std::vector<std::string> labels;  ///< the tokens' labels (the model's tokenizer)
    std::string model_name, reference_name;
    QuantActivations arithmetic = QuantActivations::Float;  ///< the model's products (the reference's too, if GGUF)
    bool float_twin = false;  ///< the reference is this same file (loaded as its weights in float32: kFloatTwin)
    std::string error;
    double seconds = 0;
};

/// Whether some stored matrix of `m` is block-quantized (a GGUF file's Q4_0 ... Q6_K kept as stored).
[[nodiscard]] bool has_quantized_matrices(const Model& m);

/// The reference `reference` names for model `m`: kFloatTwin (this GGUF file's weights dequantized to float32;
/// refused for a model that is not a quantized GGUF file, or when the copy would not fit the memory budget) or a
/// model path as load_model_folder takes. Throws std::runtime_error / std::invalid_argument with one line.
[[nodiscard]] LoadedModel load_compare_reference(const LoadedModel& m, const std::string& reference);

/// Runs the comparison on `ids` (the text's tokens) with the products' arithmetic `arithmetic`; errors are returned
/// in CompareResult::error, not thrown.
[[nodiscard]] CompareResult compare_models(const LoadedModel& m, const LoadedModel& reference,
                                           const std::vector<int>& ids, QuantActivations arithmetic);

/// The Model panel's comparison job: one at a time; the last reference loaded is kept for the next run.
class CompareJob {
public:
    ~CompareJob();
    /// Starts a comparison (false, ignored, while one runs). `on_done` runs on the job's thread at the end.
    bool start(const LoadedModel& m, const std::string& reference, std::vector<int> ids, QuantActivations arithmetic,
               std::function<void()> on_done = {});
    [[nodiscard]] bool busy() const { return m_future.valid(); }
    /// Takes a finished result; true when one arrived this call.
    bool poll();
    [[nodiscard]] std::shared_ptr<const CompareResult> latest() const { return m_latest; }
    void clear() { m_latest.reset(); }

private:
    struct Cache {
        std::weak_ptr<const Model> model;  ///< the model the reference was loaded for
        std::string reference;
        LoadedModel loaded;
    };
    std::future<CompareResult> m_future;
    std::shared_ptr<Cache> m_cache = std::make_shared<Cache>();
    std::shared_ptr<const CompareResult> m_latest;
};

}  // namespace ts::studio
