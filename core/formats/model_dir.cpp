// Model folders: our config.json (parse, validate, write) and config.json + model.safetensors as a Model. Loading
// compares the config's implied weights with the safetensors header before decoding anything, and reports weights
// holding NaN/±Inf without refusing the model. Declared in core/formats/safetensors.h.
#include "core/formats/io_util.h"
#include "core/model/nonfinite.h"
#include "core/formats/safetensors.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace ts {

using detail::parse_json_limited;
using detail::write_file_atomic;

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& msg) {
    throw std::runtime_error(what + ": " + msg);
}

}  // namespace

ModelConfig parse_config_json(std::string_view text, const std::string& what) {
    const nlohmann::json j = parse_json_limited(text.data(), text.data() + text.size(), what);
    try {
        ModelConfig c = j.get<ModelConfig>();
        c.validate();
        return c;
    } catch (const std::invalid_argument& e) {
        fail(what, e.what());
    } catch (const nlohmann::json::exception& e) {
        fail(what, e.what());
    }
}

ModelConfig load_config(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path.string(), std::string("cannot open: ") + std::strerror(errno));
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_config_json(ss.str(), path.string());
}

void save_config(const std::filesystem::path& path, const ModelConfig& c) {
    write_file_atomic(path, nlohmann::json(c).dump(2) + "\n");
}

namespace {

/// Every weight the config implies against the header, before anything is decoded or allocated for it.
void check_against_header(const ModelConfig& c, const std::vector<SafetensorsTensorInfo>& header,
                          const std::string& what) {
    std::map<std::string_view, const SafetensorsTensorInfo*> in_file;
    for (const SafetensorsTensorInfo& t : header) in_file.emplace(t.name, &t);
    std::set<std::string, std::less<>> expected_names;
    // Walked lazily: an absurd config stops at its first weight the file lacks, without listing the rest.
    for_each_expected_weight(c, [&](const std::string& name, const std::vector<int64_t>& shape) {
        const auto it = in_file.find(name);
        if (it == in_file.end())
            fail(what, "missing weight '" + name + "' (config.json implies shape " + shape_str(shape) + ")");
        if (it->second->shape != shape)
            fail(what, "weight '" + name + "' has shape " + shape_str(it->second->shape) +
                           " in the file, but config.json implies " + shape_str(shape));
        expected_names.insert(name);
    });
    for (const SafetensorsTensorInfo& t : header)
        if (!expected_names.count(t.name))
            fail(what, "unexpected weight '" + t.name + "' " + shape_str(t.shape) + " (not used by config.json)");
}

}  // namespace

std::shared_ptr<const Model> load_model_dir(const std::filesystem::path& dir) {
    if (!std::filesystem::is_directory(dir)) fail(dir.string(), "model folder does not exist");
    const auto cfg_path = dir / "config.json";
    const auto st_path = dir / "model.safetensors";
    if (!std::filesystem::exists(cfg_path)) fail(dir.string(), "no config.json in model folder");
    if (!std::filesystem::exists(st_path)) fail(dir.string(), "no model.safetensors in model folder");
    ModelConfig c = load_config(cfg_path);
    check_against_header(c, load_safetensors_header(st_path), st_path.string());
    std::vector<NonfiniteTensor> nonfinite;
    SafetensorsReadOptions read;
    read.nonfinite = &nonfinite;
    read.keep_half = [](std::string_view) { return true; };  // F16/BF16 files stay half (widened inside products)
    WeightMap w = load_safetensors(st_path, read);
    std::vector<std::string> warnings;
    for (const NonfiniteTensor& t : nonfinite) warnings.push_back(st_path.string() + ": " + describe(t));
    try {
        return std::make_shared<const Model>(std::move(c), std::move(w), std::move(warnings));
    } catch (const std::invalid_argument& e) {
        fail(st_path.string(), e.what());
    }
}

void save_model_dir(const std::filesystem::path& dir, const Model& m) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) fail(dir.string(), "cannot create folder: " + ec.message());
    save_config(dir / "config.json", m.config());
    save_safetensors(dir / "model.safetensors", m.weights(), {{"format", "pt"}});
}

}  // namespace ts
