// FFN neurons and their max-activating examples (see neurons.h).
#include "core/interp/neurons.h"

#include "core/formats/safetensors.h"
#include "core/kernels/threads.h"
#include "core/util/hash.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <stdexcept>

namespace ts::interp {

namespace {

int stack_layers(const ModelConfig& c) { return c.arch == Arch::EncoderDecoder ? c.n_enc_layers : c.n_layers; }

std::string act_name(const std::string& stack, int layer) {
    return stack + "." + std::to_string(layer) + ".ffn.post_act";
}

// A forward of `ids` through the neurons' stack recording the FFN activations of `layers` only, no logits.
ForwardResult neuron_forward(const Model& m, const std::vector<int>& ids, const std::vector<int>& layers) {
    const ModelConfig& c = m.config();
    const std::string stack = neuron_stack(c);
    std::vector<std::string> names;
    for (const int l : layers) names.push_back(act_name(stack, l));
    ForwardOptions opt;
    opt.capture = CaptureFilter::prefixes(std::move(names));
    opt.compute_logits = false;
    // Nothing after the last asked-for activation is needed: that layer's W_down, the later layers, the decoder.
    if (!layers.empty()) opt.stop_at_ffn_act = *std::max_element(layers.begin(), layers.end());
    // The encoder of an encoder–decoder reads the source alone; the decoder needs some target, so one token runs.
    if (c.arch == Arch::EncoderDecoder) return forward_seq2seq(m, ids, {0}, opt);
    return forward(m, ids, opt);
}

void check_layer(const ModelConfig& c, int layer, const char* what) {
    if (layer < 0 || layer >= stack_layers(c))
        throw std::invalid_argument(std::string(what) + ": layer " + std::to_string(layer) + " outside [0, " +
                                    std::to_string(stack_layers(c)) + ")");
}

// The min(k, F) largest entries of a row of F values, largest first; ties: the lower index first.
std::vector<NeuronValue> largest(const RowVectorF& v, int k) {
    std::vector<int> order(size_t(v.size()));
    std::iota(order.begin(), order.end(), 0);
    const size_t n = std::min(order.size(), size_t(k));
    std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(n), order.end(),
                      [&](int a, int b) { return v[a] > v[b] || (v[a] == v[b] && a < b); });
    std::vector<NeuronValue> out;
    for (size_t i = 0; i < n; ++i) out.push_back({order[i], v[order[i]]});
    return out;
}

}  // namespace

std::string neuron_stack(const ModelConfig& c) { return c.arch == Arch::DecoderOnly ? "dec" : "enc"; }

const Tensor& neuron_activations(const Trace& trace, const std::string& stack, int layer, int d_ff) {
    const std::string name = act_name(stack, layer);
    const Tensor* t = trace.find(name);
    if (!t) throw std::invalid_argument("neurons: " + name + " was not recorded");
    if (t->shape.size() != 2 || t->shape[1] != d_ff || !t->is_f32_rows())
        throw std::invalid_argument("neurons: " + name + " is not (T, d_ff = " + std::to_string(d_ff) + ")");
    return *t;
}

std::vector<NeuronValue> top_neurons_at(const Tensor& acts, int position, int k) {
    if (k < 1) throw std::invalid_argument("top_neurons_at: k must be at least 1");
    if (position < 0 || position >= acts.rows())
        throw std::invalid_argument("top_neurons_at: position " + std::to_string(position) + " outside [0, " +
                                    std::to_string(acts.rows()) + ")");
    return largest(acts.mat().row(position), k);
}

std::vector<NeuronValue> most_active_neurons(const Tensor& acts, int k, int first_row) {
    if (k < 1) throw std::invalid_argument("most_active_neurons: k must be at least 1");
    if (first_row < 0 || acts.rows() <= first_row || acts.cols() < 1)
        throw std::invalid_argument("most_active_neurons: no activations from row " + std::to_string(first_row));
    return largest(acts.mat().bottomRows(acts.rows() - first_row).colwise().maxCoeff(), k);
}

std::vector<float> neuron_activation_over(const Model& m, const std::vector<int>& ids, int layer, int neuron) {
    const ModelConfig& c = m.config();
    check_layer(c, layer, "neuron_activation_over");
    if (neuron < 0 || neuron >= c.d_ff)
        throw std::invalid_argument("neuron_activation_over: neuron " + std::to_string(neuron) +
                                    " outside [0, d_ff = " + std::to_string(c.d_ff) + ")");
    const ForwardResult r = neuron_forward(m, ids, {layer});
    const Tensor& a = neuron_activations(*r.trace, neuron_stack(c), layer, c.d_ff);
    std::vector<float> out(size_t(a.rows()));
    for (int64_t t = 0; t < a.rows(); ++t) out[size_t(t)] = a.mat()(t, neuron);
    return out;
}

// --- the index ----------------------------------------------------------------------------------------------------

std::span<const NeuronExample> NeuronIndex::examples_of(int layer, int neuron) const {
    if (layer < 0 || layer >= n_layers || neuron < 0 || neuron >= d_ff)
        throw std::out_of_range("neuron index: layer " + std::to_string(layer) + " neuron " + std::to_string(neuron) +
                                " outside " + std::to_string(n_layers) + " layers × " + std::to_string(d_ff));
    const size_t at = (size_t(layer) * size_t(d_ff) + size_t(neuron)) * size_t(top_k);
    size_t n = 0;
    while (n < size_t(top_k) && examples[at + n].chunk >= 0) ++n;
    return {examples.data() + at, n};
}

std::vector<int> NeuronIndex::chunk_ids(int chunk) const {
    if (chunk < 0 || chunk >= n_chunks())
        throw std::out_of_range("neuron index: chunk " + std::to_string(chunk) + " outside [0, " +
                                std::to_string(n_chunks()) + ")");
    const auto first = tokens.begin() + std::ptrdiff_t(chunk) * context;
    return {first, first + context};
}

NeuronIndex build_neuron_index(const Model& m, const std::vector<int>& tokens, const NeuronIndexOptions& opt) {
    const ModelConfig& c = m.config();
    if (opt.context < 2) throw std::invalid_argument("neuron index: context must be at least 2 tokens");
    if (c.position == PositionKind::Learned && opt.context > c.max_seq_len)
        throw std::invalid_argument("neuron index: context " + std::to_string(opt.context) +
                                    " is longer than the model's " + std::to_string(c.max_seq_len) + " positions");
    if (opt.top_k < 1) throw std::invalid_argument("neuron index: top_k must be at least 1");
    if (opt.min_position < 1 || opt.min_position >= opt.context)
        throw std::invalid_argument("neuron index: min_position " + std::to_string(opt.min_position) +
                                    " outside [1, context = " + std::to_string(opt.context) + ")");
    if (tokens.size() < size_t(opt.context))
        throw std::invalid_argument("neuron index: the corpus has " + std::to_string(tokens.size()) +
                                    " tokens, fewer than one context of " + std::to_string(opt.context));
    NeuronIndex ix;
    ix.stack = neuron_stack(c);
    ix.n_layers = stack_layers(c);
    ix.d_ff = c.d_ff;
    ix.context = opt.context;
    ix.top_k = opt.top_k;
    ix.min_position = opt.min_position;
    ix.corpus_fingerprint = tokens_fingerprint(tokens);
    ix.model_fingerprint = model_fingerprint(m);
    const size_t n_chunks = tokens.size() / size_t(opt.context);
    ix.tokens.assign(tokens.begin(), tokens.begin() + std::ptrdiff_t(n_chunks * size_t(opt.context)));
    ix.examples.assign(size_t(ix.n_layers) * size_t(ix.d_ff) * size_t(ix.top_k), NeuronExample{});
    std::vector<int> layers(size_t(ix.n_layers));
    std::iota(layers.begin(), layers.end(), 0);
    const size_t K = size_t(ix.top_k), LF = size_t(ix.n_layers) * size_t(ix.d_ff);
    // Chunks run compute_threads() at a time, one forward per thread: at T = context the products are too small to
    // split well, while whole forwards side by side keep every core busy (their own parallel regions are nested
    // inside this one, so they run on one thread each). Each chunk leaves its per-neuron peak (value, position);
    // the peaks are merged into the slots in chunk order, so the result does not depend on the thread count.
    const int W = std::max(1, compute_threads());
    std::vector<float> peak(size_t(W) * LF);
    std::vector<int> peak_pos(size_t(W) * LF);
    std::vector<std::string> failures(static_cast<size_t>(W));
    for (size_t first = 0; first < n_chunks; first += size_t(W)) {
        if (cancelled(opt.cancel)) {
            ix.cancelled = true;
            break;
        }
        const int round = int(std::min(size_t(W), n_chunks - first));
#pragma omp parallel for num_threads(W) schedule(static, 1)
        for (int w = 0; w < round; ++w) {
            try {
                const ForwardResult r = neuron_forward(m, ix.chunk_ids(int(first) + w), layers);
                for (int l = 0; l < ix.n_layers; ++l) {
                    const auto a = neuron_activations(*r.trace, ix.stack, l, ix.d_ff).mat();
                    float* pv = peak.data() + size_t(w) * LF + size_t(l) * size_t(ix.d_ff);
                    int* pp = peak_pos.data() + size_t(w) * LF + size_t(l) * size_t(ix.d_ff);
                    // Each neuron's first largest value from min_position on (NeuronIndexOptions), row by row
                    // (the activations are row-major).
                    const float* row0 = a.data() + size_t(opt.min_position) * size_t(ix.d_ff);
                    std::copy(row0, row0 + ix.d_ff, pv);
                    std::fill(pp, pp + ix.d_ff, opt.min_position);
                    for (int t = opt.min_position + 1; t < a.rows(); ++t) {
                        const float* row = a.data() + size_t(t) * size_t(ix.d_ff);
                        for (int f = 0; f < ix.d_ff; ++f)
                            if (row[f] > pv[f]) {
                                pv[f] = row[f];
                                pp[f] = t;
                            }
                    }
                }
            } catch (const std::exception& e) {
                failures[size_t(w)] = e.what();
            }
        }
        for (int w = 0; w < round; ++w) {
            if (!failures[size_t(w)].empty()) throw std::invalid_argument("neuron index: " + failures[size_t(w)]);
            const int ch = int(first) + w;
            for (size_t n = 0; n < LF; ++n) {
                const float best = peak[size_t(w) * LF + n];
                NeuronExample* slot = ix.examples.data() + n * K;
                if (!(best > slot[K - 1].activation)) continue;  // also drops NaN
                size_t i = K - 1;  // insertion into the sorted slots; an earlier chunk wins a tie
                while (i > 0 && best > slot[i - 1].activation) {
                    slot[i] = slot[i - 1];
                    --i;
                }
                slot[i] = {ch, peak_pos[size_t(w) * LF + n], best};
            }
            ix.chunks_done = ch + 1;
        }
        if (opt.progress) opt.progress(ix.chunks_done, int(n_chunks));
    }
    return ix;
}

// --- files and fingerprints ---------------------------------------------------------------------------------------

uint64_t tokens_fingerprint(const std::vector<int>& ids) { return fnv1a_ids(ids); }

uint64_t model_fingerprint(const Model& m) {
    nlohmann::json j = m.config();
    const std::string cfg = j.dump();
    uint64_t h = fnv1a(cfg.data(), cfg.size());
    for (const auto& [name, t] : m.stored_weights()) {
        h = fnv1a(name.data(), name.size(), h);
        h = fnv1a(t.shape.data(), t.shape.size() * sizeof(int64_t), h);
        const auto storage = uint8_t(t.storage);
        h = fnv1a(&storage, 1, h);
        if (t.is_f32_rows()) h = fnv1a(t.data.data(), t.data.size() * sizeof(float), h);
        else if (t.is_half()) h = fnv1a(t.half.data(), t.half.size() * sizeof(uint16_t), h);
        else if (t.in_panels()) h = fnv1a(t.panels.data(), t.panels.size() * sizeof(float), h);
        else h = fnv1a(&t.ggml_type, sizeof t.ggml_type, h);
    }
    return h;
}

std::string neuron_index_file_name(uint64_t model_fp, uint64_t corpus_fp, const NeuronIndexOptions& opt) {
    char buf[112];
    std::snprintf(buf, sizeof buf, "neurons-%016llx-%016llx-c%d-m%d-k%d.safetensors",
                  static_cast<unsigned long long>(model_fp), static_cast<unsigned long long>(corpus_fp), opt.context,
                  opt.min_position, opt.top_k);
    return buf;
}

namespace {

constexpr int kIndexFormat = 1;

// Ids and positions are stored as float32, exact below 2^24.
constexpr size_t kExactFloatInt = size_t(1) << 24;

std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

}  // namespace

void save_neuron_index(const std::filesystem::path& path, const NeuronIndex& ix) {
    if (ix.tokens.size() >= kExactFloatInt)
        throw std::runtime_error("cannot write " + path.string() + ": more than 2^24 tokens");
    WeightMap t;
    const auto n_tokens = int64_t(ix.tokens.size());
    t["tokens"] = Tensor({n_tokens}, std::vector<float>(ix.tokens.begin(), ix.tokens.end()));
    const std::vector<int64_t> shape = {ix.n_layers, ix.d_ff, ix.top_k};
    std::vector<float> chunk, pos, act;
    for (const NeuronExample& e : ix.examples) {
        chunk.push_back(float(e.chunk));
        pos.push_back(float(e.position));
        act.push_back(e.activation);
    }
    t["chunk"] = Tensor(shape, std::move(chunk));
    t["position"] = Tensor(shape, std::move(pos));
    t["activation"] = Tensor(shape, std::move(act));
    const std::map<std::string, std::string> meta = {
        {"format", "transformer-studio neuron index " + std::to_string(kIndexFormat)},
        {"stack", ix.stack},
        {"context", std::to_string(ix.context)},
        {"min_position", std::to_string(ix.min_position)},
        {"chunks_done", std::to_string(ix.chunks_done)},
        {"cancelled", ix.cancelled ? "1" : "0"},
        {"model_fingerprint", hex(ix.model_fingerprint)},
        {"corpus_fingerprint", hex(ix.corpus_fingerprint)}};
    save_safetensors(path, t, meta);
}

NeuronIndex load_neuron_index(const std::filesystem::path& path) {
    std::map<std::string, std::string> meta;
    const WeightMap t = load_safetensors(path, &meta);
    const std::string what = path.string() + ": ";
    auto bad = [&](const std::string& why) { return std::runtime_error(what + "not a neuron index: " + why); };
    if (meta["format"] != "transformer-studio neuron index " + std::to_string(kIndexFormat))
        throw bad("format is '" + meta["format"] + "'");
    NeuronIndex ix;
    try {
        ix.stack = meta.at("stack");
        ix.context = std::stoi(meta.at("context"));
        ix.min_position = std::stoi(meta.at("min_position"));
        ix.chunks_done = std::stoi(meta.at("chunks_done"));
        ix.cancelled = meta.at("cancelled") == "1";
        ix.model_fingerprint = std::stoull(meta.at("model_fingerprint"), nullptr, 16);
        ix.corpus_fingerprint = std::stoull(meta.at("corpus_fingerprint"), nullptr, 16);
    } catch (const std::exception& e) {
        throw bad(std::string("metadata: ") + e.what());
    }
    const auto find = [&](const char* name) -> const Tensor& {
        const auto it = t.find(name);
        if (it == t.end()) throw bad(std::string("no tensor '") + name + "'");
        return it->second;
    };
    const Tensor& tok = find("tokens");
    const Tensor& chunk = find("chunk");
    const Tensor& pos = find("position");
    const Tensor& act = find("activation");
    if (tok.shape.size() != 1 || chunk.shape.size() != 3 || pos.shape != chunk.shape || act.shape != chunk.shape)
        throw bad("tensor shapes disagree");
    ix.n_layers = int(chunk.shape[0]);
    ix.d_ff = int(chunk.shape[1]);
    ix.top_k = int(chunk.shape[2]);
    if (ix.context < 2 || ix.top_k < 1 || tok.shape[0] % ix.context != 0) throw bad("sizes disagree");
    for (const float v : tok.data) {
        if (!(v >= 0 && v < float(kExactFloatInt))) throw bad("a token id is not a non-negative integer");
        ix.tokens.push_back(int(v));
    }
    const int n_chunks = ix.n_chunks();
    ix.examples.resize(chunk.data.size());
    for (size_t i = 0; i < chunk.data.size(); ++i) {
        NeuronExample& e = ix.examples[i];
        e.chunk = int(chunk.data[i]);
        e.position = int(pos.data[i]);
        e.activation = act.data[i];
        if (e.chunk >= n_chunks || e.chunk < -1 || (e.chunk >= 0 && (e.position < 0 || e.position >= ix.context)))
            throw bad("an example outside the indexed tokens");
    }
    return ix;
}

}  // namespace ts::interp
