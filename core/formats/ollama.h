// Models in Ollama's local store, by their Ollama names ("llama3.2:1b", "qwen2.5", "user/model:tag"). The store
// (`$OLLAMA_MODELS`, else ~/.ollama/models) keeps one JSON manifest per name and tag under
// manifests/<registry>/<namespace>/<model>/<tag>; its layer of media type "application/vnd.ollama.image.model" names
// the GGUF file as a digest "sha256:<hex>", stored as blobs/sha256-<hex>. Names without a registry are
// registry.ollama.ai's, without a namespace "library", without a tag "latest" (Ollama's own defaults).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ts {

/// The store folder: $OLLAMA_MODELS when set, else $HOME/.ollama/models ("" when neither is known).
[[nodiscard]] std::filesystem::path ollama_models_dir();

/// True when `name` reads as an Ollama model name (letters, digits, "._-", at most one ':' for the tag, '/' between
/// parts) rather than a file path (no leading '/', '.', '~'). Never throws.
[[nodiscard]] bool looks_like_ollama_name(const std::string& name);

/// The GGUF blob of an Ollama name in `store` (default: ollama_models_dir()), or nullopt when the store has no such
/// manifest. Throws std::runtime_error "ollama model '<name>': <problem>" when the manifest exists but is malformed,
/// names no model layer, or its blob is missing.
[[nodiscard]] std::optional<std::filesystem::path> resolve_ollama_model(const std::string& name,
                                                                        const std::filesystem::path& store = {});

/// One model of the store: its short name as Ollama prints it ("llama3.2:1b"; namespace and registry only when not
/// the defaults) and its manifest.
struct OllamaModel {
    std::string name;
    std::filesystem::path manifest;
};

/// Every manifest in the store, sorted by name; empty when there is no store. Never throws.
[[nodiscard]] std::vector<OllamaModel> list_ollama_models(const std::filesystem::path& store = {});

}  // namespace ts
