// Loading Hugging Face checkpoint folders: hub-cache resolution, shard discovery (single file, index.json, or
// numbered shards), shard-by-shard decoding with progress, and the name/shape mapping of core/formats/hf_names.cpp.
#include "core/formats/hf_checkpoint.h"
#include "core/formats/hf_names.h"
#include "core/model/nonfinite.h"
#include "core/kernels/ops.h"
#include "core/formats/safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace ts {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const fs::path& where, const std::string& msg) {
    throw std::runtime_error(where.string() + ": " + msg);
}

std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) fail(p, "cannot open");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// One safetensors file of the checkpoint and, with an index, the HF names the index places in it.
struct Shard {
    fs::path path;
    std::set<std::string> indexed_names;
};

/// Which files hold the weights: model.safetensors.index.json, else model.safetensors, else numbered shards
/// model-0000k-of-0000n.safetensors (all n must be present).
std::vector<Shard> find_shards(const fs::path& dir) {
    const fs::path index_path = dir / "model.safetensors.index.json";
    if (fs::exists(index_path)) {
        const nlohmann::json j = detail::hf_parse_json(read_text(index_path), index_path.string());
        if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
            fail(index_path, "no \"weight_map\" object (tensor name -> shard file)");
        std::vector<Shard> shards;
        std::map<std::string, size_t> slot;
        for (const auto& [name, file] : j["weight_map"].items()) {
            if (!file.is_string()) fail(index_path, "weight_map entry '" + name + "' is not a file name");
            const std::string f = file.get<std::string>();
            if (f.empty() || f.find('/') != std::string::npos || f.find('\\') != std::string::npos || f == "..")
                fail(index_path, "weight_map entry '" + name + "' names '" + f + "', not a file in this folder");
            if (!slot.count(f)) {
                if (!fs::is_regular_file(dir / f))
                    fail(index_path, "shard file '" + f + "' (holding '" + name + "') is missing from " +
                                         dir.string());
                slot[f] = shards.size();
                shards.push_back({dir / f, {}});
            }
            shards[slot[f]].indexed_names.insert(name);
        }
        if (shards.empty()) fail(index_path, "weight_map is empty");
        std::sort(shards.begin(), shards.end(), [](const Shard& a, const Shard& b) { return a.path < b.path; });
        return shards;
    }
    if (fs::exists(dir / "model.safetensors")) return {{dir / "model.safetensors", {}}};
    // Numbered shards without an index: model-00001-of-00003.safetensors ...
    int n_total = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string f = e.path().filename().string();
        int k = 0, n = 0;
        char tail[32] = {};
        if (std::sscanf(f.c_str(), "model-%5d-of-%5d.%20s", &k, &n, tail) == 3 && std::string(tail) == "safetensors")
            n_total = std::max(n_total, n);
    }
    if (n_total > 0) {
        std::vector<Shard> shards;
        for (int k = 1; k <= n_total; ++k) {
            char f[64];
            std::snprintf(f, sizeof f, "model-%05d-of-%05d.safetensors", k, n_total);
            if (!fs::is_regular_file(dir / f))
                fail(dir, std::string("shard '") + f + "' is missing (and there is no model.safetensors.index.json)");
            shards.push_back({dir / f, {}});
        }
        return shards;
    }
    if (fs::exists(dir / "pytorch_model.bin"))
        fail(dir, "only pytorch_model.bin (pickle) found; convert it to model.safetensors, pickle is not loaded");
    fail(dir, "no model.safetensors, model.safetensors.index.json or model-*-of-*.safetensors shards");
}

/// Applies one table rule: moves or rearranges the HF tensor `raw` into `ours`. Tensors to be compared once every
/// shard is read are parked under "hf.<kind>:<raw name>".
void apply_rule(const detail::HfTensorRule& rule, const std::string& raw, Tensor&& t, WeightMap& ours) {
    using detail::HfTransform;
    switch (rule.transform) {
        case HfTransform::SharedEmbedding:
            if (!ours.count(rule.ours[0])) ours[rule.ours[0]] = std::move(t);
            else ours["hf.copy:" + raw] = std::move(t);
            break;
        case HfTransform::SliceOffset2: {  // rows 2.. : BART's positions p are stored at row p + 2
            const int64_t rows = t.shape[0] - 2, cols = t.shape[1];
            Tensor out;
            out.shape = {rows, cols};
            out.storage = t.storage;
            if (t.is_half()) out.half.assign(t.half.begin() + 2 * cols, t.half.end());
            else out.data.assign(t.data.begin() + 2 * cols, t.data.end());
            ours[rule.ours[0]] = std::move(out);
            break;
        }
        case HfTransform::FlattenRow:
            t.shape = {t.shape[1]};
            ours[rule.ours[0]] = std::move(t);
            break;
        case HfTransform::SinusoidalCheck:
            ours["hf.sinusoidal:" + raw] = std::move(t);
            break;
        case HfTransform::Move:
            ours[rule.ours[0]] = std::move(t);
            break;
        case HfTransform::Transpose: {
            if (t.is_half()) {
                using HalfRM = Eigen::Matrix<uint16_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
                Tensor out;
                out.shape = {t.shape[1], t.shape[0]};
                out.storage = t.storage;
                out.half.resize(t.half.size());
                Eigen::Map<HalfRM>(out.half.data(), t.shape[1], t.shape[0]) =
                    Eigen::Map<const HalfRM>(t.half.data(), t.shape[0], t.shape[1]).transpose();
                ours[rule.ours[0]] = std::move(out);
                break;
            }
            Tensor out({t.shape[1], t.shape[0]});
            out.mat() = t.mat().transpose();
            ours[rule.ours[0]] = std::move(out);
            break;
        }
        case HfTransform::SplitQkvW: {  // (d_in, 3 d) Conv1D: columns [j d, (j+1) d) are q, k, v
            const int64_t d_in = t.shape[0], d = t.shape[1] / 3;
            if (t.is_half()) {
                using HalfRM = Eigen::Matrix<uint16_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
                const Eigen::Map<const HalfRM> src(t.half.data(), d_in, 3 * d);
                for (int j = 0; j < 3; ++j) {
                    Tensor out;
                    out.shape = {d, d_in};
                    out.storage = t.storage;
                    out.half.resize(size_t(d * d_in));
                    Eigen::Map<HalfRM>(out.half.data(), d, d_in) = src.middleCols(j * d, d).transpose();
                    ours[rule.ours[j]] = std::move(out);
                }
                break;
            }
            for (int j = 0; j < 3; ++j) {
                Tensor out({d, d_in});
                out.mat() = t.mat().middleCols(j * d, d).transpose();
                ours[rule.ours[j]] = std::move(out);
            }
            break;
        }
        case HfTransform::SplitQkvB: {
            const int64_t d = t.shape[0] / 3;
            for (int j = 0; j < 3; ++j)
                ours[rule.ours[j]] = Tensor({d}, std::vector<float>(t.data.begin() + j * d, t.data.begin() + (j + 1) * d));
            break;
        }
        case HfTransform::TiedHead:
            ours["hf.tied:" + rule.ours[0]] = std::move(t);  // compared with ours[0] once every shard is read
            break;
        case HfTransform::SplitQkvPerHeadW:
        case HfTransform::SplitQkvPerHeadB: {
            // GPT-NeoX: the fused projection's output viewed as (n_heads, 3, d_head): head h's rows are
            // [q_h; k_h; v_h], each d_head long. Rows (or bias entries) are copied, so half precision stays half.
            const bool w = rule.transform == HfTransform::SplitQkvPerHeadW;
            const int64_t H = rule.heads, rows = t.shape[0], Dh = rows / (3 * H), cols = w ? t.shape[1] : 1;
            for (int j = 0; j < 3; ++j) {
                Tensor out;
                out.shape = w ? std::vector<int64_t>{H * Dh, cols} : std::vector<int64_t>{H * Dh};
                out.storage = t.storage;
                (t.is_half() ? out.half.resize(size_t(H * Dh * cols)) : out.data.resize(size_t(H * Dh * cols)));
                for (int64_t h = 0; h < H; ++h) {
                    const size_t src = size_t((h * 3 + j) * Dh * cols), dst = size_t(h * Dh * cols), n = size_t(Dh * cols);
                    if (t.is_half()) std::copy_n(t.half.data() + src, n, out.half.data() + dst);
                    else std::copy_n(t.data.data() + src, n, out.data.data() + dst);
                }
                ours[rule.ours[j]] = std::move(out);
            }
            break;
        }
        case HfTransform::AddOne:  // Gemma RMSNorm weight: the file holds w, the layer multiplies by (1 + w)
            for (float& v : t.data) v = 1.0f + v;  // vectors are always widened to float32 (float32 sum as HF)
            ours[rule.ours[0]] = std::move(t);
            break;
    }
}

/// "org/name" for a hub cache path .../models--org--name/snapshots/<hash>, else the folder's name.
std::string model_name_for(const fs::path& dir) {
    for (const auto& part : dir) {
        std::string s = part.string();
        if (s.rfind("models--", 0) == 0) {
            s = s.substr(8);
            const size_t k = s.find("--");
            if (k != std::string::npos) s = s.substr(0, k) + "/" + s.substr(k + 2);
            return s;
        }
    }
    const fs::path clean = dir.filename().empty() ? dir.parent_path() : dir;
    return clean.filename().string();
}

}  // namespace

fs::path resolve_model_dir(const fs::path& path) {
    if (fs::is_regular_file(path / "config.json")) return path;
    const fs::path snapshots = path / "snapshots";
    if (!fs::is_directory(snapshots)) {
        if (!fs::exists(path)) fail(path, "model folder does not exist");
        fail(path, "no config.json, and not a hub cache entry (models--org--name with snapshots/)");
    }
    const fs::path ref = path / "refs" / "main";
    if (fs::is_regular_file(ref)) {
        std::string hash = read_text(ref);
        hash.erase(std::remove_if(hash.begin(), hash.end(), [](unsigned char ch) { return std::isspace(ch); }),
                   hash.end());
        const fs::path snap = snapshots / hash;
        if (hash.empty() || hash.find('/') != std::string::npos || !fs::is_directory(snap))
            fail(ref, "names snapshot '" + hash + "', which is not a folder under " + snapshots.string());
        if (!fs::is_regular_file(snap / "config.json")) fail(snap, "snapshot has no config.json");
        return snap;
    }
    fs::path best;
    fs::file_time_type best_time{};
    for (const auto& e : fs::directory_iterator(snapshots)) {
        if (!e.is_directory() || !fs::is_regular_file(e.path() / "config.json")) continue;
        const auto t = fs::last_write_time(e.path());
        if (best.empty() || t > best_time) best = e.path(), best_time = t;
    }
    if (best.empty()) fail(snapshots, "no snapshot folder with a config.json");
    return best;
}

bool is_hf_model_dir(const fs::path& dir) {
    try {
        const fs::path cfg = resolve_model_dir(dir) / "config.json";
        const nlohmann::json j = detail::hf_parse_json(read_text(cfg), cfg.string());
        return j.is_object() && j.contains("model_type");
    } catch (...) {
        return false;
    }
}

std::shared_ptr<const Model> load_hf_model(const fs::path& path, const HfLoadOptions& options) {
    const fs::path dir = resolve_model_dir(path);
    const fs::path cfg_path = dir / "config.json";
    HfConfig hf = parse_hf_config(read_text(cfg_path), cfg_path.string());
    const std::string& type = hf.model_type;
    if (hf.config.name == type || hf.config.name.empty()) hf.config.name = model_name_for(dir);
    const std::vector<Shard> shards = find_shards(dir);
    if (type == "bert") {
        // A BertModel folder (no cls.predictions.*) still opens, for its attention: encoder-only without an output
        // head (tie_embeddings false: no logits, ModelConfig's meaning for an encoder).
        bool head = false;
        for (const Shard& shard : shards)
            for (const SafetensorsTensorInfo& t : load_safetensors_header(shard.path))
                head = head || t.name.rfind("cls.predictions.", 0) == 0;
        if (!head) hf.config.mlm_head = hf.config.tie_embeddings = false;
    }
    const detail::HfTable table = detail::hf_tensor_table(type, hf.config);

    uint64_t total = 0, done = 0;
    for (const Shard& s : shards) total += fs::file_size(s.path);
    if (options.progress) options.progress(0, total);

    // Pass 1, headers only: every tensor of every shard against the table the config implies (names, shapes,
    // index listing, duplicates, missing ones), so a config.json with absurd sizes is refused before any weight
    // is decoded or allocated.
    auto ignored = [&](std::string_view raw) {
        return detail::hf_is_ignored_buffer(type, detail::hf_canonical_name(type, raw));
    };
    bool prefixed = false;  // the file uses the model-class prefix ("transformer." / "model."): name missing ones so
    std::map<std::string, std::string, std::less<>> found;  // canonical HF name -> file it came from
    for (const Shard& shard : shards) {
        const std::string file = shard.path.filename().string();
        for (const SafetensorsTensorInfo& t : load_safetensors_header(shard.path)) {
            const std::string& raw = t.name;
            const std::string name = detail::hf_canonical_name(type, raw);
            prefixed = prefixed || name != raw;
            if (!shard.indexed_names.empty() && !shard.indexed_names.count(raw) && !ignored(raw))
                fail(shard.path, "tensor '" + raw + "' is not listed for this file in model.safetensors.index.json");
            if (ignored(raw)) continue;  // not decoded, but the header checks above held for it too
            const auto rule = table.find(name);
            if (rule == table.end())
                fail(shard.path, "unexpected tensor '" + raw + "' " + shape_str(t.shape) + ": not part of a " +
                                     type + " checkpoint with this config.json");
            if (auto [prev, fresh] = found.emplace(name, file); !fresh)
                fail(shard.path, "tensor '" + raw + "' appears twice (also in " + prev->second + ")");
            if (t.shape != rule->second.shape)
                fail(shard.path, "tensor '" + raw + "' has shape " + shape_str(t.shape) + ", expected " +
                                     shape_str(rule->second.shape) + " from config.json");
        }
        for (const std::string& n : shard.indexed_names)
            if (!found.count(detail::hf_canonical_name(type, n)) && !ignored(n))
                fail(shard.path, "model.safetensors.index.json places tensor '" + n + "' in this file, which lacks it");
    }
    const std::string prefix = !prefixed ? "" : std::string(detail::hf_model_prefix(type));
    const auto file_name = [&](const std::string& name, bool outside_prefix) {  // heads outside the model class
        return (outside_prefix || name == "lm_head.weight" || name == "final_logits_bias" ? "" : prefix) + name;
    };
    for (const auto& [name, rule] : table)
        if (!rule.optional && !found.count(name))
            fail(dir, "missing tensor '" + file_name(name, rule.outside_prefix) + "' " + shape_str(rule.shape) +
                          " required by config.json (" + type + ")");
    bool has_embedding = false;  // encoder–decoders: shared.weight or one of its copies
    for (const auto& [name, rule] : table)
        has_embedding = has_embedding || (rule.transform == detail::HfTransform::SharedEmbedding && found.count(name));
    if (detail::hf_is_seq2seq_type(type) && !has_embedding)
        fail(dir, "missing tensor '" + file_name("shared.weight", false) + "' (" + std::to_string(hf.config.vocab_size) +
                      ", " + std::to_string(hf.config.d_model) + ") (or encoder.embed_tokens.weight) required by "
                      "config.json (" + type + ")");

    // Pass 2: decode shard by shard, counting NaN/±Inf under the file's tensor names.
    WeightMap ours;
    std::vector<std::string> warnings = hf.warnings;
    SafetensorsReadOptions read;
    read.skip = ignored;
    if (options.keep_half)
        read.keep_half = [&](std::string_view raw) {
            const auto rule = table.find(detail::hf_canonical_name(type, raw));
            return rule != table.end() && rule->second.shape.size() == 2 &&
                   rule->second.transform != detail::HfTransform::SinusoidalCheck &&
                   rule->second.transform != detail::HfTransform::FlattenRow;
        };
    for (const Shard& shard : shards) {
        const uint64_t file_bytes = fs::file_size(shard.path);
        if (options.progress)
            read.progress = [&, base = done](uint64_t d, uint64_t n) {
                options.progress(base + (n ? d * file_bytes / n : 0), total);
            };
        std::vector<NonfiniteTensor> nonfinite;
        read.nonfinite = &nonfinite;
        WeightMap tensors = load_safetensors(shard.path, read);
        for (const NonfiniteTensor& t : nonfinite) warnings.push_back(shard.path.string() + ": " + describe(t));
        for (auto it = tensors.begin(); it != tensors.end(); it = tensors.erase(it)) {
            const auto rule = table.find(detail::hf_canonical_name(type, it->first));
            // Checked in pass 1; checked again because the file could have changed in between.
            if (rule == table.end() || it->second.shape != rule->second.shape)
                fail(shard.path, "tensor '" + it->first + "' changed while the checkpoint was loading");
            apply_rule(rule->second, it->first, std::move(it->second), ours);
        }
        done += file_bytes;
        if (options.progress) options.progress(done, total);
    }
    // Parked copies of the shared vocabulary must equal the one kept; Marian's stored sinusoidal tables must equal
    // the table the forward computes (HF computes them in float64 and rounds, as we do: 1e-5 covers libm ulps).
    const auto same = [](const Tensor& a, const Tensor& b) {
        return a.data == b.data && a.half == b.half && a.storage == b.storage;
    };
    for (auto it = ours.lower_bound(std::string_view("hf.")); it != ours.end() && it->first.rfind("hf.", 0) == 0;) {
        const std::string& key = it->first;
        if (key.rfind("hf.copy:", 0) == 0) {
            if (!same(it->second, ours.at("tok_emb.weight")))
                fail(dir, "'" + key.substr(8) + "' differs from the shared token embeddings (" + type +
                              " shares one vocabulary between encoder, decoder and LM head)");
            it = ours.erase(it);
        } else if (key.rfind("hf.sinusoidal:", 0) == 0) {
            const ModelConfig& c = hf.config;
            const MatrixRM want = sinusoidal_table(c.max_seq_len, c.d_model, c.sinusoidal_base, c.sinusoidal_layout);
            const float err = (it->second.mat() - want).cwiseAbs().maxCoeff();
            // transformers recomputes this table at load and never reads the stored one: neither do we, but a
            // difference is worth a line in the model panel.
            if (!(err <= 1e-5f))
                warnings.push_back(dir.string() + ": '" + key.substr(14) +
                                   "' differs from the sinusoidal table (sines, then cosines) the forward computes (max "
                                   "|difference| " + std::to_string(err) + "); the stored table is not used, as in "
                                   "transformers");
            it = ours.erase(it);
        } else {
            ++it;
        }
    }
    if (hf.config.final_logits_bias && !ours.count("final_logits_bias"))  // HF: missing buffer -> zeros
        ours["final_logits_bias"] = Tensor({int64_t(hf.config.vocab_size)});
    for (const auto& [name, rule] : table) {
        if (rule.transform != detail::HfTransform::TiedHead) continue;
        const auto copy = ours.find("hf.tied:" + rule.ours[0]);
        if (copy == ours.end()) continue;
        const Tensor& kept = ours.at(rule.ours[0]);
        if (copy->second.data != kept.data || copy->second.half != kept.half || copy->second.storage != kept.storage)
            fail(dir, name + " differs from the tensor it is tied to (" +
                          (rule.ours[0] == "tok_emb.weight" ? std::string("the token embeddings") : rule.ours[0]) +
                          ") although tie_word_embeddings is true");
        ours.erase(copy);
    }
    try {
        return std::make_shared<const Model>(std::move(hf.config), std::move(ours), std::move(warnings));
    } catch (const std::invalid_argument& e) {
        fail(dir, e.what());
    }
}

TranslationSpec hf_translation_spec(const fs::path& path) {
    const fs::path dir = resolve_model_dir(path);
    const fs::path cfg_path = dir / "config.json";
    const HfConfig hf = parse_hf_config(read_text(cfg_path), cfg_path.string());
    if (hf.config.arch != Arch::EncoderDecoder)
        fail(cfg_path, "model_type '" + hf.model_type + "' is not an encoder-decoder: no source/target path");
    int start = hf.decoder_start_token_id, eos = hf.eos_token_id, pad = hf.pad_token_id, bos = hf.bos_token_id;
    const fs::path gen_path = dir / "generation_config.json";
    if (fs::is_regular_file(gen_path)) {
        const nlohmann::json g = detail::hf_parse_json(read_text(gen_path), gen_path.string());
        const auto id = [&](const char* key, int& out) {
            if (!g.is_object() || !g.contains(key) || g[key].is_null()) return false;
            const nlohmann::json& v = g[key].is_array() && !g[key].empty() ? g[key][0] : g[key];
            if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= hf.config.vocab_size)
                fail(gen_path, "key '" + std::string(key) + "' must be a token id in [0, vocab_size), found " +
                                   v.dump());
            out = v.get<int>();
            return true;
        };
        id("decoder_start_token_id", start);
        id("eos_token_id", eos);
        id("pad_token_id", pad);
        id("bos_token_id", bos);
    }
    if (start < 0) fail(cfg_path, "no decoder_start_token_id (nor in generation_config.json): the decoder's first "
                                  "token is unknown");
    if (eos < 0) fail(cfg_path, "no eos_token_id (nor in generation_config.json): the end token is unknown");
    TranslationSpec spec;
    spec.direction = "model";
    spec.decoder_start_id = start;
    spec.source_end_id = spec.target_end_id = eos;
    spec.pad_id = pad;
    if (hf.model_type == "bart") spec.source_start_id = bos;
    return spec;
}

}  // namespace ts
