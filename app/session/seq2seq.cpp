// Encoder–decoder inputs for the app and render (see seq2seq.h).
#include "app/session/seq2seq.h"

#include "app/session/worker.h"
#include "app/i18n/tr.h"

#include <algorithm>
#include <fstream>

namespace ts::studio {

namespace {

TokenPiece special_piece(const TextCodec& codec, int id, size_t at) {
    return TokenPiece{id, codec.label(id), at, at};
}

// Truncates `t` so that `reserve` more tokens still fit in max_len, with the notice tokenize_text would give.
void fit(TokenizedText& t, int max_len, int reserve, const char* side) {
    const int room = std::max(0, max_len - reserve);
    if (int(t.ids.size()) <= room) return;
    t.ids.resize(size_t(room));
    t.pieces.resize(size_t(room));
    t.truncated = true;
    t.notices.push_back(std::string(side) == "source"
                            ? trf("source truncated to %d of %zu tokens (max_seq_len %d)", room, size_t(t.total_tokens), max_len)
                            : trf("target truncated to %d of %zu tokens (max_seq_len %d)", room, size_t(t.total_tokens), max_len));
}

}  // namespace

std::string resolve_target_language(const TranslationSpec& spec, const std::string& to_setting,
                                    std::string_view source_text) {
    if (spec.direction == "model") return "";  // a Hugging Face checkpoint: its direction is its own
    if (spec.direction == "en-zh") return "zh";
    if (spec.direction == "zh-en") return "en";
    if (to_setting == "en" || to_setting == "zh") return to_setting;
    return guess_target_language(source_text);
}

Seq2SeqTokens make_seq2seq_tokens(const LoadedModel& m, const std::string& source_text, const std::string& target_text,
                                  const std::string& to_setting) {
    Seq2SeqTokens out;
    const int max_len = m.model ? m.model->config().max_seq_len : 0;
    if (!m.codec) return out;
    if (!m.translation) {
        out.source = std::make_shared<const TokenizedText>(tokenize_text(source_text, *m.codec, max_len));
        out.target = out.source;
        return out;
    }
    const TranslationSpec& spec = *m.translation;
    out.to = resolve_target_language(spec, to_setting, source_text);

    // The spec adds the model's own specials (language token, <s>, </s>, decoder start): not the post-processor's too.
    TokenizedText src = tokenize_text(source_text, *m.codec, -1, /*add_special_tokens=*/false);
    const bool lang_token = spec.direction == "both";
    fit(src, max_len, (lang_token ? 2 : 1) + (spec.source_start_id >= 0 ? 1 : 0), "source");
    if (lang_token) {
        const int lid = spec.target_language_ids.at(out.to);
        src.ids.insert(src.ids.begin(), lid);
        src.pieces.insert(src.pieces.begin(), special_piece(*m.codec, lid, 0));
    }
    if (spec.source_start_id >= 0) {  // BART: <s> first
        src.ids.insert(src.ids.begin(), spec.source_start_id);
        src.pieces.insert(src.pieces.begin(), special_piece(*m.codec, spec.source_start_id, 0));
    }
    if (!source_text.empty()) {
        src.ids.push_back(spec.source_end_id);
        src.pieces.push_back(special_piece(*m.codec, spec.source_end_id, source_text.size()));
    }
    out.source = std::make_shared<const TokenizedText>(std::move(src));

    const TextCodec& target_codec = m.target_codec ? *m.target_codec : *m.codec;  // Marian: target.spm
    TokenizedText tgt = tokenize_text(target_text, target_codec, -1, /*add_special_tokens=*/false);
    fit(tgt, max_len, 1, "target");
    // "type some text" belongs to the source box; an empty target is normal (the decoder predicts its first token).
    tgt.notices.erase(std::remove_if(tgt.notices.begin(), tgt.notices.end(),
                                     [](const std::string& n) { return n.rfind("type some text", 0) == 0; }),
                      tgt.notices.end());
    tgt.ids.insert(tgt.ids.begin(), spec.decoder_start_id);
    tgt.pieces.insert(tgt.pieces.begin(), special_piece(*m.codec, spec.decoder_start_id, 0));
    if (source_text.empty()) tgt.ids.clear(), tgt.pieces.clear();  // nothing to translate: nothing to run
    out.target = std::make_shared<const TokenizedText>(std::move(tgt));
    return out;
}

std::shared_ptr<const TokenizedText> decoded_target_tokens(const TextCodec& codec, const TranslationSpec& spec,
                                                          const std::vector<int>& ids) {
    auto t = std::make_shared<TokenizedText>();
    t->ids.push_back(spec.decoder_start_id);
    t->pieces.push_back(special_piece(codec, spec.decoder_start_id, 0));
    for (int id : ids) {
        const size_t begin = t->text.size();
        t->text += codec.decode({id});
        t->ids.push_back(id);
        t->pieces.push_back(TokenPiece{id, codec.label(id), begin, t->text.size()});
    }
    t->total_tokens = t->ids.size();
    return t;
}

std::vector<ExamplePair> read_example_pairs(const std::filesystem::path& model_dir) {
    std::ifstream f(model_dir / "examples.tsv", std::ios::binary);
    if (!f) return {};
    // A held-out list is a few kilobytes; read at most 4 MB so a stray huge file cannot stall the app.
    std::string text(size_t(4) << 20, '\0');
    f.read(text.data(), std::streamsize(text.size()));
    text.resize(size_t(f.gcount()));
    return parse_example_pairs(text);
}

std::vector<ExamplePair> parse_example_pairs(std::string_view text) {
    std::vector<ExamplePair> out;
    for (size_t pos = 0; pos < text.size();) {
        size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos) nl = text.size();
        std::string line(text.substr(pos, nl - pos));
        pos = nl + 1;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const size_t tab = line.find('\t');
        if (tab == std::string::npos) continue;
        size_t tab2 = line.find('\t', tab + 1);
        if (tab2 != std::string::npos && line.find('\t', tab2 + 1) != std::string::npos) continue;
        if (tab2 == std::string::npos) tab2 = line.size();
        ExamplePair p{line.substr(0, tab), line.substr(tab + 1, tab2 - tab - 1),
                      tab2 < line.size() ? line.substr(tab2 + 1) : std::string()};
        if (!p.en.empty() && !p.zh.empty() && is_valid_utf8(p.en) && is_valid_utf8(p.zh) && is_valid_utf8(p.domain))
            out.push_back(std::move(p));
    }
    return out;
}

}  // namespace ts::studio
