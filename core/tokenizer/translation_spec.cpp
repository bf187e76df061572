// translation.json of a translation model folder (written by `transformer-studio train` on a pair corpus) read and
// resolved to ids of the folder's tokenizer. Declared in core/forward/decode.h; lives in ts_tokenizer because it needs the
// Tokenizer, while the decoding itself (core/forward/decode.cpp) needs only the model.
#include "core/forward/decode.h"
#include "core/util/json.h"
#include "core/tokenizer/bpe.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ts {

namespace {

constexpr const char* kFormat = "ts-translation-1";

[[noreturn]] void fail_at(const std::string& where, const std::string& msg) {
    throw std::runtime_error(where + ": " + msg);
}

}  // namespace

TranslationSpec load_translation_spec(const std::filesystem::path& model_dir, const Tokenizer& tok) {
    const std::filesystem::path path = model_dir / "translation.json";
    const std::string where = path.string();
    const auto fail = [&](const std::string& msg) { fail_at(where, msg); };

    std::ifstream in(path, std::ios::binary);
    if (!in) {
        const std::string why = std::strerror(errno);
        fail("cannot open (" + why +
             "); a translation model folder holds translation.json, written by `transformer-studio train` on a "
             "pair corpus");
    }
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_translation_spec(ss.str(), tok, where);
}

TranslationSpec parse_translation_spec(std::string_view text, const Tokenizer& tok, const std::string& where) {
    const auto fail = [&](const std::string& msg) { fail_at(where, msg); };
    const nlohmann::json j = parse_json(text, where);
    if (!j.is_object()) fail("expected a JSON object, found " + std::string(j.type_name()));

    const auto str = [&](const nlohmann::json& obj, const char* key, const std::string& field) -> std::string {
        const auto it = obj.find(key);
        if (it == obj.end()) fail("missing key \"" + field + "\"");
        if (!it->is_string()) fail("\"" + field + "\": expected a string, found " + std::string(it->type_name()));
        return it->get<std::string>();
    };
    const auto id_of = [&](const std::string& token, const std::string& field) -> int {
        const std::optional<int32_t> id = tok.token_id(token);
        if (!id) fail("\"" + field + "\": token " + json_excerpt(token) + " is not in the model's tokenizer");
        return *id;
    };

    const std::string format = str(j, "format", "format");
    if (format != kFormat) fail("unknown format " + json_excerpt(format) + " (expected \"" + kFormat + "\")");
    TranslationSpec spec;
    spec.direction = str(j, "direction", "direction");
    if (spec.direction != "both" && spec.direction != "en-zh" && spec.direction != "zh-en")
        fail("\"direction\": expected \"both\", \"en-zh\" or \"zh-en\", found " + json_excerpt(spec.direction));
    spec.source_end_id = id_of(str(j, "source_end", "source_end"), "source_end");
    spec.decoder_start_id = id_of(str(j, "decoder_start", "decoder_start"), "decoder_start");
    spec.target_end_id = id_of(str(j, "target_end", "target_end"), "target_end");
    spec.pad_id = id_of(str(j, "pad", "pad"), "pad");
    if (spec.direction == "both") {
        const auto it = j.find("target_language_tokens");
        if (it == j.end()) fail("missing key \"target_language_tokens\" (needed by a \"both\" model)");
        if (!it->is_object())
            fail("\"target_language_tokens\": expected an object, found " + std::string(it->type_name()));
        for (const char* lang : {"en", "zh"}) {
            const std::string field = std::string("target_language_tokens.") + lang;
            spec.target_language_ids[lang] = id_of(str(*it, lang, field), field);
        }
    }
    if (const auto it = j.find("trained_on"); it != j.end()) {
        if (!it->is_object()) fail("\"trained_on\": expected an object, found " + std::string(it->type_name()));
        for (const auto& [lang, line] : it->items()) {
            const std::string field = "trained_on." + lang;
            if (!line.is_string()) fail("\"" + field + "\": expected a string, found " + std::string(line.type_name()));
            const std::string& text = line.get_ref<const std::string&>();  // UTF-8: the JSON parser checked it
            if (text.size() > 1000 || text.find('\n') != std::string::npos)
                fail("\"" + field + "\": expected one line of at most 1000 bytes");
            spec.trained_on[lang] = text;
        }
    }
    return spec;
}

}  // namespace ts
