// libFuzzer target: the safetensors parser and the config.json parser on arbitrary bytes. Any exception other
// than the documented std::runtime_error (or a crash/sanitizer report) is a bug.
#include "core/safetensors.h"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        (void)ts::parse_safetensors(data, size, "fuzz");
    } catch (const std::runtime_error&) {
    }
    try {
        (void)ts::parse_config_json(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    } catch (const std::runtime_error&) {
    }
    return 0;
}
