// Decoding for encoder–decoder translation models: a model folder's translation.json resolved to token ids, the
// encoder input of a sentence, and greedy / beam search over the decoder with a KV cache (encoder run once,
// cross-attention keys/values of the memory projected once per layer), recording the top-k candidates of every step.
#pragma once

#include "core/model/model.h"

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ts {

class Tokenizer;

/// translation.json of a model folder, resolved to ids of its tokenizer.
struct TranslationSpec {
    /// "both" | "en-zh" | "zh-en" (translation.json); "model" for a Hugging Face encoder–decoder, whose direction
    /// (or task) is fixed by the checkpoint: no target-language token, `to` is ignored.
    std::string direction;
    int pad_id = -1, decoder_start_id = -1, source_end_id = -1, target_end_id = -1;
    int source_start_id = -1;  ///< put before the source text when >= 0 (BART's <s>)
    std::map<std::string, int> target_language_ids;  ///< "en" -> id of <2en>, "zh" -> id of <2zh> (both only)
    /// What the model was trained on, one line per interface language ("en", "zh"), for the app to state; from the
    /// optional "trained_on" object of translation.json. Empty when absent.
    std::map<std::string, std::string> trained_on;
};

/// Reads `model_dir`/translation.json (format "ts-translation-1", written by `transformer-studio train` for pair
/// corpora) and looks its tokens up in `tok`. Throws std::runtime_error naming the file and the problem (missing,
/// bad JSON, unknown format or direction, a key missing, a token not in the vocabulary).
/// Implemented in core/tokenizer/translation_spec.cpp (library ts_tokenizer, since it needs the Tokenizer).
[[nodiscard]] TranslationSpec load_translation_spec(const std::filesystem::path& model_dir, const Tokenizer& tok);
/// The text of a translation.json, as load_translation_spec; `where` names it in errors.
[[nodiscard]] TranslationSpec parse_translation_spec(std::string_view text, const Tokenizer& tok,
                                                     const std::string& where);

/// "en" or "zh": the language to translate into when the user did not say: "en" when `text` (UTF-8) holds any CJK
/// character (ideographs and their extensions, CJK punctuation, full-width forms, kana, bopomofo, hangul), else "zh".
[[nodiscard]] std::string guess_target_language(std::string_view text);

/// The target languages a model translates into: {"en", "zh"} for "both", {"zh"} for "en-zh", {"en"} for "zh-en".
[[nodiscard]] std::vector<std::string> target_languages(const TranslationSpec& spec);

/// Encoder input for text already tokenized (no specials): [source_start] + [<2to>] (both) + text_ids + [source_end], as
/// core/train/pair_data.h builds it for training. Throws std::invalid_argument when `to` is not a target of this
/// model (e.g. "en" for an "en-zh" model); an empty `to` means the only target of a one-direction model.
[[nodiscard]] std::vector<int> make_source_ids(const TranslationSpec& spec, const std::vector<int>& text_ids,
                                               const std::string& to);

struct DecodeOptions {
    int beam = 1;                 ///< 1: greedy search; > 1: beam search with this many live hypotheses
    float length_penalty = 1.0f;  ///< alpha in score = log_prob / length^alpha (HF generate's length_penalty)
    int max_len = 128;            ///< most target tokens produced, the end token included (clamped to max_seq_len)
    int top_k = 5;                ///< candidates recorded per step (DecodeStep::top); 0 records none
    /// Beam search only. false (HF generate's default, early_stopping=False): stop when `beam` hypotheses have
    /// finished and the best live one, were it to end at the next step at no further cost, would not beat the worst
    /// of them. true: stop only when no live hypothesis can beat it at any length up to max_len (exact: the result is
    /// then the best of everything beam search ever reached).
    bool exact_stop = false;
};

/// One produced token: its id and probability, and the top-k (id, probability) of that step's distribution (the
/// softmax of the logits over the whole vocabulary, temperature 1), highest first.
struct DecodeStep {
    int id = -1;
    float prob = 0;
    std::vector<std::pair<int, float>> top;
};

struct DecodeResult {
    std::vector<int> ids;          ///< target ids: no decoder_start, no end token
    /// One per produced token on the returned hypothesis' path: ids.size() + 1 entries when finished (the last is
    /// the end token's step), ids.size() when max_len stopped it.
    std::vector<DecodeStep> steps;
    double log_prob = 0;           ///< natural log of the probability of steps' ids (end token included when finished)
    double score = 0;              ///< log_prob / length^length_penalty, length = steps.size() (end token counted)
    bool finished = false;         ///< the end token was produced (false: cut at max_len)
};

/// Greedy (beam == 1: the most probable token at every step until the end token, like HF generate with num_beams=1)
/// or beam search (beam > 1: HF generate's num_beams / fairseq's SequenceGenerator). The encoder runs once; the
/// decoder runs one position per step with a KV cache. Beam search keeps `beam` live hypotheses; each step every
/// live one proposes its 2*beam best continuations, the 2*beam best of all are taken in order of log_prob: an end
/// token among the first `beam` finishes that hypothesis (kept if among the `beam` best finished by score), other
/// tokens continue until `beam` live ones are chosen. Ties are broken by earlier hypothesis, then lower id.
/// At max_len the live hypotheses join the finished ones (finished = false); the best score wins.
/// pad and target-language tokens (spec.pad_id, spec.target_language_ids) are never produced.
/// src_ids: the full encoder input (make_source_ids). Throws std::invalid_argument when the model is not
/// encoder-decoder, src_ids is empty or holds an id outside [0, vocab_size), the spec's decoder_start /
/// target_end ids are outside the vocabulary, beam < 1, max_len < 1 or top_k < 0.
[[nodiscard]] DecodeResult translate_ids(const Model& m, const TranslationSpec& spec, const std::vector<int>& src_ids,
                                         const DecodeOptions& opt);

// --- building blocks (used by translate_ids; public for tests, benchmarks and the app) ---------------------------
/// Encoder memory of a source: enc.final_norm(encoder(embed(src_ids))), (S, d_model), as inside forward_seq2seq.
/// Throws std::invalid_argument as forward_seq2seq does (not encoder-decoder, empty, ids out of range).
[[nodiscard]] MatrixRM encode_source(const Model& m, const std::vector<int>& src_ids);

/// One incremental decoder step: token `id` at position cache.n_past, attending to the cached positions and to
/// `memory` (whose cross-attention keys/values the cache keeps after its first step). Returns the logits of the
/// next token (1, vocab). Equal (up to float rounding) to row n_past of forward_seq2seq's logits for the target
/// ids fed so far. A cache belongs to one memory: reset() it for another source.
[[nodiscard]] MatrixRM decoder_step(const Model& m, const MatrixRM& memory, int id, KVCache& cache);

}  // namespace ts
