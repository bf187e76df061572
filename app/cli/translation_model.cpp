// Translation model folders for the CLI (see translation_model.h).
#include "app/cli/translation_model.h"
#include "app/session/limits.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ts::cli {

const char* arch_words(Arch a) {
    switch (a) {
        case Arch::DecoderOnly: return "decoder-only";
        case Arch::EncoderOnly: return "encoder-only";
        case Arch::EncoderDecoder: return "encoder-decoder";
    }
    return "?";
}

void require_encoder_decoder(const Model& m, const std::string& dir) {
    const ModelConfig& c = m.config();
    if (c.arch != Arch::EncoderDecoder)
        throw std::invalid_argument("model '" + c.name + "' (" + dir + ") is " +
                                    arch_words(c.arch) +
                                    ", not an encoder-decoder translation model");
}

TranslationModel open_translation_model(studio::LoadedModel lm) {
    require_encoder_decoder(*lm.model, lm.path);
    if (!lm.codec || lm.codec->ids_only())
        throw std::runtime_error(lm.path + ": no usable tokenizer" +
                                 (lm.tokenizer_warning.empty() ? std::string() : " (" + lm.tokenizer_warning + ")") +
                                 ": a translation model folder needs one (or give ids: trace --source-ids)");
    if (!lm.translation)
        throw std::runtime_error(lm.path + ": " +
                                 (lm.translation_warning.empty()
                                      ? std::string("translation.json: cannot open (a translation model folder needs "
                                                    "it, or a Hugging Face encoder-decoder config.json)")
                                      : lm.translation_warning));
    TranslationModel tm;
    tm.spec = *lm.translation;
    tm.source_codec = lm.codec;
    tm.target_codec = lm.target_codec ? lm.target_codec : lm.codec;
    if (tm.spec.direction != "model") {
        tm.tok = lm.codec->tokenizer();
        if (!tm.tok) throw std::runtime_error(lm.path + ": translation.json needs the folder's tokenizer.json");
        if (int64_t(tm.tok->vocab_size()) > lm.model->config().vocab_size)
            throw std::runtime_error(lm.path + ": tokenizer has " + std::to_string(tm.tok->vocab_size()) +
                                     " tokens, more than the model's vocab_size " +
                                     std::to_string(lm.model->config().vocab_size));
    }
    tm.lm = std::move(lm);
    return tm;
}

namespace {

std::vector<int> encode_plain(const TranslationModel& tm, const studio::TextCodec& codec, const std::string& text) {
    if (tm.tok) {
        EncodeOptions eo;
        eo.match_added_tokens = false;
        return tm.tok->encode_ids(text, eo);
    }
    std::vector<int> ids;
    std::vector<std::pair<size_t, size_t>> spans;
    codec.encode(text, ids, spans, /*add_special_tokens=*/false);
    return ids;
}

}  // namespace

std::vector<int> source_ids_for_text(const TranslationModel& tm, const std::string& text, const std::string& to,
                                     std::string* to_used, std::string* note) {
    const std::string lang = to.empty() ? guess_target_language(text) : to;
    if (to_used) *to_used = lang;
    std::vector<int> ids = encode_plain(tm, *tm.source_codec, text);
    const int specials = 1 + (tm.spec.direction == "both" ? 1 : 0) + (tm.spec.source_start_id >= 0 ? 1 : 0);
    const int room = tm.lm.model->config().max_seq_len - specials;
    if (int(ids.size()) > room) {
        if (note)
            *note = "source cut to its first " + std::to_string(room) + " of " + std::to_string(ids.size()) +
                    " tokens (max_seq_len " + std::to_string(tm.lm.model->config().max_seq_len) + ")";
        ids.resize(size_t(std::max(room, 0)));
    }
    return make_source_ids(tm.spec, ids, lang);
}

std::vector<int> target_ids_for_text(const TranslationModel& tm, const std::string& text) {
    return encode_plain(tm, *tm.target_codec, text);
}

std::string decode_target(const TranslationModel& tm, const std::vector<int>& ids) {
    return tm.target_codec->decode(ids);
}

DecodeOptions decode_options_from(const Args& args) {
    DecodeOptions o;
    // The window's beam limit: --beam 10000 asked for gigabytes of hypotheses.
    o.beam = int(args.integer("beam", 1, 1, studio::kMaxBeam));
    o.max_len = int(args.integer("max-len", 128, 1, 1 << 16));
    const double lp = args.number("length-penalty", 1.0);
    if (!std::isfinite(lp)) throw std::invalid_argument("--length-penalty expects a finite number");
    o.length_penalty = float(lp);
    return o;
}

}  // namespace ts::cli
