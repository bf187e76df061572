// A translation model folder opened for the CLI (translate, trace): the model, its tokenizer and its
// translation.json resolved to ids, text -> encoder input with the pair format's special tokens, and the decoding
// options both subcommands take.
#pragma once

#include "app/cli/args.h"
#include "app/session/worker.h"
#include "core/forward/decode.h"
#include "core/tokenizer/bpe.h"

#include <memory>
#include <string>
#include <vector>

namespace ts::cli {

/// An encoder–decoder model folder opened for translation: this project's (translation.json) or a Hugging Face one
/// (T5, Marian, BART: config.json and generation_config.json give the start and end tokens, the task or the
/// direction is the checkpoint's own).
struct TranslationModel {
    studio::LoadedModel lm;
    std::shared_ptr<const studio::TextCodec> source_codec;  ///< text -> encoder ids
    std::shared_ptr<const studio::TextCodec>
        target_codec;  ///< decoder ids <-> text (Marian: target.spm; else the same)
    /// This project's byte-level BPE (translation.json folders): encoded with special-token strings kept as plain
    /// text, as training fed them. Null for Hugging Face folders.
    std::shared_ptr<const Tokenizer> tok;
    TranslationSpec spec;
};

/// "decoder-only", "encoder-only" or "encoder-decoder", for messages.
[[nodiscard]] const char* arch_words(Arch a);

/// Throws std::invalid_argument "model 'NAME' (DIR) is decoder-only, not an encoder-decoder translation model".
void require_encoder_decoder(const Model& m, const std::string& dir);

/// Opens an already loaded model folder as a translation model: checks the architecture, that the folder has a
/// tokenizer (studio::load_model_folder's codecs) and a source/target format (translation.json, or a Hugging Face
/// encoder–decoder's config). Throws one-line errors naming what is missing.
[[nodiscard]] TranslationModel open_translation_model(studio::LoadedModel lm);

/// Encoder input of one line of text: make_source_ids over the text's tokens (without the tokenizer's own
/// post-processor specials: the model's start/end tokens are added as training or the checkpoint defines them);
/// `to` empty -> guess_target_language(text) (ignored by Hugging Face folders). When the source would exceed the
/// model's max_seq_len the text tokens are cut and `*note` says so. `*to_used` gets the target language.
[[nodiscard]] std::vector<int> source_ids_for_text(const TranslationModel& tm, const std::string& text,
                                                   const std::string& to, std::string* to_used, std::string* note);

/// Target-side ids of a typed target text (teacher forcing), without start or end tokens.
[[nodiscard]] std::vector<int> target_ids_for_text(const TranslationModel& tm, const std::string& text);

/// Bytes of target ids (may end in a partial UTF-8 character when max_len cut the target).
[[nodiscard]] std::string decode_target(const TranslationModel& tm, const std::vector<int>& ids);

/// --beam N (>= 1), --max-len N (>= 1), --length-penalty A. Throws std::invalid_argument naming the option.
[[nodiscard]] DecodeOptions decode_options_from(const Args& args);

}  // namespace ts::cli
