// Encoder–decoder inputs as the app and `render` build them: the source text becomes the encoder input (with a
// translation model's target-language token and end token), the target text the decoder input (decoder start token
// first, teacher forcing), both as TokenizedText so every panel can label its rows and columns. Also the held-out
// example pairs a translation model folder ships (examples.tsv).
#pragma once

#include "app/session/text_codec.h"
#include "core/forward/decode.h"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ts::studio {

struct LoadedModel;

/// The encoder input and the decoder input of one encoder–decoder forward.
struct Seq2SeqTokens {
    std::shared_ptr<const TokenizedText> source;  ///< encoder input (S tokens)
    std::shared_ptr<const TokenizedText> target;  ///< decoder input (T tokens)
    std::string to;                               ///< target language ("en" | "zh"; "" without translation.json)
};

/// "en" | "zh" for the setting "en" | "zh" | "auto" ("auto": English for text with a CJK character, else Chinese).
/// A model trained for one direction always gets its own target language.
[[nodiscard]] std::string resolve_target_language(const TranslationSpec& spec, const std::string& to_setting,
                                                  std::string_view source_text);

/// With a translation spec: source = [<2to>] (models of both directions) + encode(source_text) + [source end],
/// target = [decoder start] + encode(target_text) — exactly what training fed the model (core/train/pair_data.h).
/// Special tokens have empty byte spans (at the start or the end of their text). Each side is truncated to fit
/// max_seq_len, with a notice. Without a spec (an encoder–decoder without translation.json, e.g. random weights):
/// the source text feeds both stacks, as a plain tokenization.
[[nodiscard]] Seq2SeqTokens make_seq2seq_tokens(const LoadedModel& m, const std::string& source_text,
                                                const std::string& target_text, const std::string& to_setting);

/// The decoder input for a decoded target: [decoder start] + ids, labelled, with the decoded text.
[[nodiscard]] std::shared_ptr<const TokenizedText> decoded_target_tokens(const TextCodec& codec,
                                                                        const TranslationSpec& spec,
                                                                        const std::vector<int>& ids);

/// One held-out pair of a translation model folder: English, Chinese, and the domain it was held out from ("ui",
/// "programs", "manuals", "everyday", ...; empty when the file names none).
struct ExamplePair {
    std::string en, zh, domain;
};
/// examples.tsv of a model folder ("English<TAB>Chinese" or "English<TAB>Chinese<TAB>domain" per line); empty when
/// the file is absent. Other lines are skipped.
[[nodiscard]] std::vector<ExamplePair> read_example_pairs(const std::filesystem::path& model_dir);
/// The text of an examples.tsv, as read_example_pairs. Pairs whose sides are not valid UTF-8 are skipped too.
[[nodiscard]] std::vector<ExamplePair> parse_example_pairs(std::string_view text);

}  // namespace ts::studio
