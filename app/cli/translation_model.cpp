// Translation model folders for the CLI (see translation_model.h).
#include "app/cli/translation_model.h"

#include "core/tokenizer/tokenizer_io.h"

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

TranslationModel open_translation_model(ui::LoadedModel lm) {
    require_encoder_decoder(*lm.model, lm.path);
    TranslationModel tm;
    tm.tok = find_tokenizer(lm.path);
    if (!tm.tok) throw std::runtime_error(lm.path + ": no tokenizer.json (a translation model folder needs one)");
    if (int64_t(tm.tok->vocab_size()) > lm.model->config().vocab_size)
        throw std::runtime_error(lm.path + ": tokenizer has " + std::to_string(tm.tok->vocab_size()) +
                                 " tokens, more than the model's vocab_size " +
                                 std::to_string(lm.model->config().vocab_size));
    tm.spec = load_translation_spec(lm.path, *tm.tok);
    tm.lm = std::move(lm);
    return tm;
}

std::vector<int> source_ids_for_text(const TranslationModel& tm, const std::string& text, const std::string& to,
                                     std::string* to_used, std::string* note) {
    const std::string lang = to.empty() ? guess_target_language(text) : to;
    if (to_used) *to_used = lang;
    EncodeOptions eo;
    eo.match_added_tokens = false;
    std::vector<int> ids = tm.tok->encode_ids(text, eo);
    const int specials = tm.spec.direction == "both" ? 2 : 1;
    const int room = tm.lm.model->config().max_seq_len - specials;
    if (int(ids.size()) > room) {
        if (note)
            *note = "source cut to its first " + std::to_string(room) + " of " + std::to_string(ids.size()) +
                    " tokens (max_seq_len " + std::to_string(tm.lm.model->config().max_seq_len) + ")";
        ids.resize(size_t(std::max(room, 0)));
    }
    return make_source_ids(tm.spec, ids, lang);
}

std::string decode_ids(const Tokenizer& tok, const std::vector<int>& ids) {
    return tok.decode(std::span<const int32_t>(ids.data(), ids.size()));
}

DecodeOptions decode_options_from(const Args& args) {
    DecodeOptions o;
    const auto count = [&](const char* key, int def) {
        const double v = args.number(key, def);
        if (!(v >= 1 && v <= 1e6) || v != std::floor(v))
            throw std::invalid_argument(std::string("--") + key + " expects a whole number >= 1, got '" +
                                        args.get(key) + "'");
        return int(v);
    };
    o.beam = count("beam", 1);
    o.max_len = count("max-len", 128);
    const double lp = args.number("length-penalty", 1.0);
    if (!std::isfinite(lp)) throw std::invalid_argument("--length-penalty expects a finite number");
    o.length_penalty = float(lp);
    return o;
}

}  // namespace ts::cli
