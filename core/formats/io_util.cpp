// Small file helpers shared by the safetensors reader/writer and the model-folder IO (core/formats/io_util.h).
#include "core/formats/io_util.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>

namespace ts::detail {

namespace {
constexpr int kMaxHeaderDepth = 16;  // a safetensors header is two levels deep
}  // namespace

nlohmann::json parse_json_limited(const char* begin, const char* end, const std::string& what,
                                  bool unique_tensor_keys) {
    std::set<std::string> keys;
    try {
        return nlohmann::json::parse(begin, end, [&](int depth, nlohmann::json::parse_event_t event,
                                                     nlohmann::json& parsed) {
            if (depth > kMaxHeaderDepth)
                throw std::runtime_error(what + ": JSON nested deeper than " + std::to_string(kMaxHeaderDepth) +
                                         " levels");
            if (unique_tensor_keys && depth == 1 && event == nlohmann::json::parse_event_t::key &&
                !keys.insert(parsed.get<std::string>()).second)
                throw std::runtime_error(what + ": tensor '" + parsed.get<std::string>() +
                                         "' appears twice in the header");
            return true;
        });
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(what + ": invalid JSON: " + e.what());
    }
}


}  // namespace ts::detail
