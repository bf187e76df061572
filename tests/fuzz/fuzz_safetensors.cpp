// libFuzzer target: the safetensors parser (header only, and full decode with skipped entries and the non-finite
// count) and the config.json parser on arbitrary bytes. Any exception other than the documented
// std::runtime_error (or a crash/sanitizer report) is a bug, and so is a validated config whose expected weights
// do not add up to its parameter count.
#include "core/formats/safetensors.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        (void)ts::parse_safetensors_header(data, size, "fuzz");
    } catch (const std::runtime_error&) {
    }
    try {
        (void)ts::parse_safetensors(data, size, "fuzz");
    } catch (const std::runtime_error&) {
    }
    try {
        std::vector<ts::NonfiniteTensor> nonfinite;
        ts::SafetensorsReadOptions opt;
        opt.skip = [](std::string_view name) { return !name.empty() && name.back() == 's'; };
        opt.nonfinite = &nonfinite;
        (void)ts::parse_safetensors(data, size, "fuzz", opt);
        for (const auto& t : nonfinite)
            if (t.count.total() <= 0 || t.count.first_index < 0) std::abort();
    } catch (const std::runtime_error&) {
    }
    try {
        const ts::ModelConfig c =
            ts::parse_config_json(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
        if (c.n_layers + c.n_enc_layers <= 64) {  // the walk is linear in layers; keep each input fast
            int64_t total = 0;
            ts::for_each_expected_weight(c, [&](const std::string&, const std::vector<int64_t>& shape) {
                total += ts::Tensor::count(shape);
            });
            if (total != c.parameter_count()) std::abort();
        }
    } catch (const std::runtime_error&) {
    }
    return 0;
}
