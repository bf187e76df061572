// Loads a golden model fixture (tests/reference/make_model_fixtures.py: weights under "model.<name>", inputs "in.*",
// outputs "out.*", config and options in the metadata) for tests that run the C++ model on PyTorch's weights.
#pragma once

#include "core/model/model.h"
#include "core/formats/safetensors.h"
#include "tests/test_util.h"

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ts::test {

struct GoldenModel {
    std::shared_ptr<const Model> model;
    WeightMap tensors;  ///< everything that is not a weight (in.*, out.*, or a fixture's own names)

    [[nodiscard]] const Tensor& at(const std::string& name) const {
        auto it = tensors.find(name);
        if (it == tensors.end()) throw std::out_of_range("fixture has no tensor '" + name + "'");
        return it->second;
    }
    [[nodiscard]] std::vector<int> ids(const std::string& name) const {
        std::vector<int> r;
        for (float v : at(name).data) r.push_back(static_cast<int>(v));
        return r;
    }
};

inline GoldenModel load_golden_model(const std::string& file) {
    std::map<std::string, std::string> meta;
    WeightMap all = load_safetensors(golden_path(file), &meta);
    const ModelConfig config = parse_config_json(meta.at("config"), file);
    GoldenModel g;
    WeightMap weights;
    for (auto& [name, t] : all) {
        if (name.rfind("model.", 0) == 0)
            weights.emplace(name.substr(6), std::move(t));
        else
            g.tensors.emplace(name, std::move(t));
    }
    g.model = std::make_shared<const Model>(config, std::move(weights));
    return g;
}

}  // namespace ts::test
