// A translation model folder opened for the CLI (translate, trace): the model, its tokenizer and its
// translation.json resolved to ids, text -> encoder input with the pair format's special tokens, and the decoding
// options both subcommands take.
#pragma once

#include "app/cli/args.h"
#include "app/session/worker.h"
#include "core/decode.h"
#include "core/tokenizer/bpe.h"

#include <memory>
#include <string>
#include <vector>

namespace ts::cli {

struct TranslationModel {
    ui::LoadedModel lm;
    std::shared_ptr<const Tokenizer> tok;
    TranslationSpec spec;
};

/// "decoder-only", "encoder-only" or "encoder-decoder", for messages.
[[nodiscard]] const char* arch_words(Arch a);

/// Throws std::invalid_argument "model 'NAME' (DIR) is decoder-only, not an encoder-decoder translation model".
void require_encoder_decoder(const Model& m, const std::string& dir);

/// Opens an already loaded model folder as a translation model: checks the architecture, reads its tokenizer and
/// translation.json. Throws one-line errors naming what is missing.
[[nodiscard]] TranslationModel open_translation_model(ui::LoadedModel lm);

/// Encoder input of one line of text: make_source_ids over the text's tokens (special-token strings in the text
/// stay plain text, as in training); `to` empty -> guess_target_language(text). When the source would exceed the
/// model's max_seq_len the text tokens are cut and `*note` says so. `*to_used` gets the target language.
[[nodiscard]] std::vector<int> source_ids_for_text(const TranslationModel& tm, const std::string& text,
                                                   const std::string& to, std::string* to_used, std::string* note);

/// Bytes of target ids (may end in a partial UTF-8 character when max_len cut the target).
[[nodiscard]] std::string decode_ids(const Tokenizer& tok, const std::vector<int>& ids);

/// --beam N (>= 1), --max-len N (>= 1), --length-penalty A. Throws std::invalid_argument naming the option.
[[nodiscard]] DecodeOptions decode_options_from(const Args& args);

}  // namespace ts::cli
