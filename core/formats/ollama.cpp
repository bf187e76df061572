// Ollama's local store (see core/formats/ollama.h).
#include "core/formats/ollama.h"

#include "core/formats/io_util.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ts {
namespace {

namespace fs = std::filesystem;

constexpr const char* kRegistry = "registry.ollama.ai";
constexpr const char* kNamespace = "library";
constexpr const char* kModelMedia = "application/vnd.ollama.image.model";

[[noreturn]] void fail(const std::string& name, const std::string& msg) {
    throw std::runtime_error("ollama model '" + name + "': " + msg);
}

fs::path store_or_default(const fs::path& store) { return store.empty() ? ollama_models_dir() : store; }

}  // namespace

fs::path ollama_models_dir() {
    if (const char* d = std::getenv("OLLAMA_MODELS"); d && *d) return fs::path(d);
    if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".ollama" / "models";
    return {};
}

bool looks_like_ollama_name(const std::string& name) {
    if (name.empty() || name.size() > 256 || name.front() == '/' || name.front() == '.' || name.front() == '~')
        return false;
    int colons = 0;
    for (const char c : name) {
        if (c == ':') ++colons;
        else if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '/')) return false;
    }
    return colons <= 1 && name.back() != ':' && name.find("//") == std::string::npos && name.find("..") == std::string::npos;
}

std::optional<fs::path> resolve_ollama_model(const std::string& name, const fs::path& store_in) {
    if (!looks_like_ollama_name(name)) return std::nullopt;
    const fs::path store = store_or_default(store_in);
    if (store.empty()) return std::nullopt;
    std::string model = name, tag = "latest";
    if (const size_t colon = name.rfind(':'); colon != std::string::npos && name.find('/', colon) == std::string::npos)
        model = name.substr(0, colon), tag = name.substr(colon + 1);
    std::vector<std::string> parts;
    for (std::stringstream ss(model); std::getline(ss, model, '/');) parts.push_back(model);
    if (parts.empty() || parts.size() > 3) return std::nullopt;
    if (parts.size() == 1) parts.insert(parts.begin(), kNamespace);
    if (parts.size() == 2) parts.insert(parts.begin(), kRegistry);
    const fs::path manifest = store / "manifests" / parts[0] / parts[1] / parts[2] / tag;
    std::error_code ec;
    if (!fs::is_regular_file(manifest, ec)) return std::nullopt;
    nlohmann::json j;
    try {
        std::ifstream in(manifest, std::ios::binary);
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (text.size() > (1u << 20)) fail(name, manifest.string() + " is larger than 1 MB: not a manifest");
        j = detail::parse_json_limited(text.data(), text.data() + text.size(), manifest.string());
    } catch (const std::runtime_error& e) {
        fail(name, e.what());
    }
    if (!j.is_object() || !j.contains("layers") || !j["layers"].is_array()) fail(name, manifest.string() + " has no layers");
    for (const auto& layer : j["layers"]) {
        if (!layer.is_object() || layer.value("mediaType", "") != kModelMedia) continue;
        const std::string digest = layer.value("digest", "");
        if (digest.rfind("sha256:", 0) != 0 || digest.size() != 7 + 64 ||
            digest.find_first_not_of("0123456789abcdef", 7) != std::string::npos)
            fail(name, "the model layer's digest '" + digest + "' is not sha256:<64 hex digits>");
        const fs::path blob = store / "blobs" / ("sha256-" + digest.substr(7));
        if (!fs::is_regular_file(blob, ec)) fail(name, "its model file " + blob.string() + " is missing (pull it again)");
        return blob;
    }
    fail(name, manifest.string() + " names no model layer (" + kModelMedia + ")");
}

std::vector<OllamaModel> list_ollama_models(const fs::path& store_in) {
    std::vector<OllamaModel> out;
    const fs::path root = store_or_default(store_in) / "manifests";
    std::error_code ec;
    if (root.empty() || !fs::is_directory(root, ec)) return out;
    for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
         it.increment(ec)) {
        if (it.depth() != 3 || !it->is_regular_file(ec)) continue;
        const fs::path rel = it->path().lexically_relative(root);  // registry/namespace/model/tag
        std::vector<std::string> p;
        for (const auto& part : rel) p.push_back(part.string());
        if (p.size() != 4) continue;
        std::string name = (p[0] == kRegistry ? "" : p[0] + "/") + (p[0] == kRegistry && p[1] == kNamespace ? "" : p[1] + "/") +
                           p[2] + ":" + p[3];
        out.push_back({std::move(name), it->path()});
    }
    std::sort(out.begin(), out.end(), [](const OllamaModel& a, const OllamaModel& b) { return a.name < b.name; });
    return out;
}

}  // namespace ts
