// Reading the training lab's runs (see training_lab.h): the recorded runs bundled with the app, a run folder's
// log (steps, evaluations, probes, snapshots) and the probe's attention at a step of one or two runs. The writing
// side, LabRun, is in training_lab.cpp.
#include "app/session/training_lab.h"

#include "app/session/worker.h"  // asset_roots
#include "core/util/json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <stdexcept>

namespace ts::studio {

namespace fs = std::filesystem;

namespace {

MatrixRM matrix_from_json(const nlohmann::json& j, int rows, int cols, const std::string& what) {
    if (!j.is_array() || int(j.size()) != rows)
        throw std::runtime_error(what + ": not " + std::to_string(rows) + " rows");
    MatrixRM m(rows, cols);
    for (int r = 0; r < rows; ++r) {
        const auto& row = j[size_t(r)];
        if (!row.is_array() || int(row.size()) != cols)
            throw std::runtime_error(what + ": a row is not " + std::to_string(cols) + " numbers");
        for (int c = 0; c < cols; ++c) {
            if (!row[size_t(c)].is_number()) throw std::runtime_error(what + ": not a number");
            m(r, c) = row[size_t(c)].get<float>();
        }
    }
    return m;
}

}  // namespace

std::vector<fs::path> bundled_lab_runs() {
    // Installed data does not change while the app runs: scanned once (resolve_lab_run asks on every lesson measure).
    static const std::vector<fs::path> runs = [] {
        std::vector<fs::path> out;
        std::vector<std::string> names;
        for (const auto& root : asset_roots()) {
            std::error_code ec;
            std::vector<fs::path> found;
            for (const auto& e : fs::directory_iterator(root / "lab-runs", ec))
                if (e.is_directory(ec) && fs::exists(e.path() / "lab_log.jsonl", ec) &&
                    fs::exists(e.path() / "settings.json", ec))
                    found.push_back(e.path());
            std::sort(found.begin(), found.end());
            for (const auto& p : found) {
                const std::string name = p.filename().string();
                if (std::find(names.begin(), names.end(), name) != names.end()) continue;  // first root wins
                names.push_back(name);
                out.push_back(p.lexically_normal());
            }
        }
        return out;
    }();
    return runs;
}

fs::path resolve_lab_run(const std::string& name_or_dir) {
    std::error_code ec;
    if (name_or_dir.empty() || fs::is_directory(name_or_dir, ec)) return name_or_dir;
    if (name_or_dir.find('/') == std::string::npos)
        for (const auto& p : bundled_lab_runs())
            if (p.filename() == name_or_dir) return p;
    return name_or_dir;
}

ProbeAttention probe_attention(const LabHistory& h, int64_t step, int layer, int head) {
    const std::pair<int64_t, std::string>* snap = nullptr;
    for (const auto& s : h.snapshots)
        if (s.first <= step) snap = &s;
    if (!snap) throw std::runtime_error("the run has no snapshot at or before step " + std::to_string(step));
    const LoadedModel lm = load_model_folder(snap->second);
    const ModelConfig& c = lm.model->config();
    if (layer < 0 || layer >= c.n_layers || head < 0 || head >= c.n_heads)
        throw std::invalid_argument("layer " + std::to_string(layer) + " head " + std::to_string(head) +
                                    " does not exist (the model has " + std::to_string(c.n_layers) + " layers of " +
                                    std::to_string(c.n_heads) + " heads)");
    const std::string point = "dec." + std::to_string(layer) + ".attn.probs";
    ForwardOptions opt;
    opt.capture = CaptureFilter::prefixes({point});
    opt.compute_logits = false;
    const ForwardResult r = forward(*lm.model, lab_probe_ids(), opt);
    const Tensor& probs = r.trace->at(point);  // (H, T, T)
    ProbeAttention a;
    a.step = snap->first;
    a.T = int(lab_probe_ids().size());
    const size_t n = size_t(a.T) * size_t(a.T);
    a.probs.assign(probs.data.begin() + std::ptrdiff_t(size_t(head) * n),
                   probs.data.begin() + std::ptrdiff_t(size_t(head + 1) * n));
    return a;
}

ProbePair probe_attention_pair(const LabHistory& a, const LabHistory& b, int64_t step, int layer, int head) {
    if (a.snapshots.empty() || b.snapshots.empty()) throw std::runtime_error("a run has no snapshots");
    if (step < 0) step = std::min(a.snapshots.back().first, b.snapshots.back().first);
    ProbePair p;
    p.layer = std::clamp(layer, 0, std::min(a.config.n_layers, b.config.n_layers) - 1);
    p.head = std::clamp(head, 0, std::min(a.config.n_heads, b.config.n_heads) - 1);
    p.a = probe_attention(a, step, p.layer, p.head);
    p.b = probe_attention(b, step, p.layer, p.head);
    return p;
}

LabHistory load_lab_history(const fs::path& run_dir) {
    LabHistory h;
    const LabSettings s = load_lab_settings(run_dir / "settings.json");
    try {
        h.config = lab_model_config(s);
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error((run_dir / "settings.json").string() + ": " + e.what());
    }
    h.total_steps = s.train.steps;
    if (s.corpus == LabCorpus::RepeatedRandom) {
        h.alphabet = s.repeat.alphabet;
        h.uniform_loss = std::log(double(s.repeat.alphabet));
    }
    const fs::path log_path = run_dir / "lab_log.jsonl";
    std::ifstream in(log_path);
    if (!in) throw std::runtime_error("cannot read " + log_path.string());
    const int L = h.config.n_layers, H = h.config.n_heads;
    std::string line;
    int line_no = 0;
    while (std::getline(in, line)) {
        ++line_no;
        if (line.empty()) continue;
        const std::string where = log_path.string() + " line " + std::to_string(line_no);
        nlohmann::json j;
        try {
            j = parse_json(line, where);
        } catch (const std::runtime_error&) {
            continue;  // a torn last line of an interrupted run
        }
        if (!j.is_object() || !j.contains("step") || !j["step"].is_number_integer()) continue;
        const int64_t step = j["step"].get<int64_t>();
        if (j.contains("elapsed_s") && j["elapsed_s"].is_number()) h.elapsed_s = j["elapsed_s"].get<double>();
        const auto num = [&j](const char* k) {
            return j.contains(k) && j[k].is_number() ? j[k].get<double>() : std::numeric_limits<double>::quiet_NaN();
        };
        if (j.contains("loss")) {
            train::StepStats st;
            st.step = step - 1;
            st.loss = float(num("loss"));
            st.lr = float(num("lr"));
            st.grad_norm = num("grad_norm");
            st.max_logit = float(num("max_logit"));
            st.max_logsumexp = float(num("max_logsumexp"));
            if (j.contains("layer_grad_norms") && j["layer_grad_norms"].is_array())
                for (const auto& v : j["layer_grad_norms"])
                    st.layer_grad_norms.push_back(v.is_number() ? v.get<double>() : 0.0);
            h.steps.push_back(std::move(st));
        }
        if (j.contains("val_loss")) h.val.emplace_back(step, num("val_loss"));
        if (j.contains("entropy") && j.contains("induction") && j.contains("prev_token")) {
            LabProbe p;
            p.step = step;
            p.entropy = matrix_from_json(j["entropy"], L, H, where + " 'entropy'");
            p.induction = matrix_from_json(j["induction"], L, H, where + " 'induction'");
            p.prev_token = matrix_from_json(j["prev_token"], L, H, where + " 'prev_token'");
            h.probes.push_back(std::move(p));
        }
    }
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(run_dir / "snapshots", ec)) {
        const std::optional<int64_t> step = train::step_of_name(e.path().filename().string(), "");
        if (!step || !fs::is_regular_file(e.path() / "model.safetensors", ec)) continue;
        h.snapshots.emplace_back(*step, e.path().string());
    }
    std::sort(h.snapshots.begin(), h.snapshots.end());
    return h;
}

}  // namespace ts::studio
