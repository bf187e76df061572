// FFN neurons: what one unit of a layer's feed-forward hidden layer does on a text, and which contexts of a corpus
// make it fire most ("max-activating examples": Olah et al. 2017 on dataset examples; Bills et al. 2023, OpenAI's
// neuron explainer; Neuronpedia's top activations). A neuron is one column of "<stack>.<layer>.ffn.post_act" (T,
// d_ff): act(x W_upᵀ + b_up), or act(x W_gateᵀ) · (x W_upᵀ + b_up) for gated FFNs — the value W_down reads
// (TransformerLens blocks.L.mlp.hook_post, Hugging Face's input of GPT2MLP.c_proj / LlamaMLP.down_proj).
#pragma once

#include "core/interp/interp_common.h"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace ts::interp {

/// The stack whose neurons an analysis reads: "dec" for decoder-only models, "enc" for encoder-only ones and for
/// the encoder of an encoder–decoder (its neurons read the source text alone).
[[nodiscard]] std::string neuron_stack(const ModelConfig& c);

/// "<stack>.<layer>.ffn.post_act", (T, d_ff), from a trace. Throws std::invalid_argument naming the tensor when it
/// was not recorded or is not (T, d_ff).
[[nodiscard]] const Tensor& neuron_activations(const Trace& trace, const std::string& stack, int layer, int d_ff);

struct NeuronValue {
    int neuron = 0;
    float activation = 0;
};

/// The min(k, F) neurons with the largest activation in row `position` of acts (T, F), largest first; ties keep the
/// lower index first. Throws std::invalid_argument when position is outside [0, T) or k < 1.
[[nodiscard]] std::vector<NeuronValue> top_neurons_at(const Tensor& acts, int position, int k);
/// The min(k, F) neurons whose largest activation over rows first_row..T − 1 is largest, with that maximum, largest
/// first. Throws std::invalid_argument when no row is left or k < 1.
[[nodiscard]] std::vector<NeuronValue> most_active_neurons(const Tensor& acts, int k, int first_row = 0);

/// One neuron's activation at every position of `ids` (T values): a forward pass of `ids` alone, through the
/// encoder for an encoder–decoder. Throws std::invalid_argument for a layer or neuron outside the model, or ids the
/// forward refuses (empty, out of the vocabulary, longer than max_seq_len).
[[nodiscard]] std::vector<float> neuron_activation_over(const Model& m, const std::vector<int>& ids, int layer,
                                                        int neuron);

// --- max-activating examples ----------------------------------------------------------------------------------

/// One context of the corpus where a neuron fired: chunk `chunk` of the index, the position in it with the
/// neuron's largest activation there, and that activation.
struct NeuronExample {
    int chunk = -1;  ///< -1: an unused slot (fewer chunks than top_k)
    int position = 0;
    float activation = -std::numeric_limits<float>::infinity();
};

struct NeuronIndexOptions {
    /// Tokens per chunk: the corpus is cut into chunks of this many tokens, one forward pass each, so a token sees at
    /// most context − 1 tokens before it.
    int context = 64;
    /// Positions of a chunk before this one are not ranked: a token with little or no context (position 0 acts as
    /// an attention sink) often has outlier activations unrelated to its meaning. 1..context − 1.
    int min_position = 8;
    int top_k = 16;                             ///< contexts kept per neuron (one per chunk at most)
    Progress progress;                          ///< (chunks done, chunks)
    const std::atomic<bool>* cancel = nullptr;  ///< stops after the current chunk; the index then says `cancelled`
};

/// Every FFN neuron's top contexts over a corpus (all layers of neuron_stack(config)).
struct NeuronIndex {
    std::string stack;
    int n_layers = 0, d_ff = 0, context = 0, top_k = 0;
    int min_position = 1;                 ///< the first position ranked
    std::vector<int> tokens;              ///< the indexed ids: chunk c is tokens[c · context, (c + 1) · context)
    std::vector<NeuronExample> examples;  ///< (n_layers, d_ff, top_k) row-major; each neuron's slots largest first
    uint64_t model_fingerprint = 0;       ///< model_fingerprint() of the model it was built with
    uint64_t corpus_fingerprint = 0;      ///< tokens_fingerprint() of the ids it was built from (before chunking)
    int chunks_done = 0;                  ///< chunks indexed (< n_chunks() when cancelled)
    bool cancelled = false;

    [[nodiscard]] int n_chunks() const { return context > 0 ? int(tokens.size() / size_t(context)) : 0; }
    /// A neuron's filled slots (chunk >= 0), largest first. Throws std::out_of_range outside the index.
    [[nodiscard]] std::span<const NeuronExample> examples_of(int layer, int neuron) const;
    /// The ids of one chunk. Throws std::out_of_range outside [0, n_chunks()).
    [[nodiscard]] std::vector<int> chunk_ids(int chunk) const;
};

/// Builds the index: the first ⌊tokens / context⌋ · context ids in chunks, a forward pass each (capturing only the
/// FFN activations, no logits), and per neuron the top_k chunks by the neuron's largest activation in the chunk
/// (positions min_position..context − 1). Runs on compute_threads() threads. Throws std::invalid_argument when
/// context < 2, context > max_seq_len (learned positions), min_position outside [1, context), top_k < 1, or there
/// are fewer than `context` tokens.
[[nodiscard]] NeuronIndex build_neuron_index(const Model& m, const std::vector<int>& tokens,
                                             const NeuronIndexOptions& opt);

/// Writes the index as safetensors (F32 tensors "tokens", "chunk", "position", "activation"; sizes and fingerprints
/// in the metadata), atomically. Throws std::runtime_error naming the path when it cannot be written.
void save_neuron_index(const std::filesystem::path& path, const NeuronIndex& index);
/// Reads a file written by save_neuron_index. Throws std::runtime_error naming the path when it is unreadable,
/// not such a file, or inconsistent (shapes that disagree with the metadata, a chunk outside the tokens).
[[nodiscard]] NeuronIndex load_neuron_index(const std::filesystem::path& path);

/// A fingerprint of a model for cache keys (FNV-1a of the config and of the stored weights' values; for a GGUF
/// model's quantized matrices their names, shapes and types only, with every float32 tensor's values).
[[nodiscard]] uint64_t model_fingerprint(const Model& m);
/// FNV-1a of token ids (as little-endian int32).
[[nodiscard]] uint64_t tokens_fingerprint(const std::vector<int>& ids);
/// "neurons-<model>-<corpus>-c<context>-m<min_position>-k<top_k>.safetensors" (fingerprints as 16 hex digits): the
/// cache file name of an index.
[[nodiscard]] std::string neuron_index_file_name(uint64_t model_fp, uint64_t corpus_fp, const NeuronIndexOptions& opt);

}  // namespace ts::interp
