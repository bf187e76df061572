// GGUF "bert" vocabularies (llama.cpp's WPM tokenizer) mapped back onto our Hugging Face WordPiece pipeline.
// llama.cpp's converter (conversion/bert.py, BertModel.set_vocab) respells BERT's vocab.txt in "phantom space" form:
// control tokens unchanged, "##xx" continuations as "xx", every other token as "▁xx". Its tokenizer
// (llm_tokenizer_wpm_session) then prefixes each word with ▁ and matches greedily, longest first; that is WordPiece
// with the prefixes moved, so undoing the respelling gives back BERT's pipeline.
#include "core/formats/gguf.h"
#include "core/tokenizer/gguf_vocab_detail.h"
#include "core/tokenizer/text_tokenizer.h"
#include "core/tokenizer/text_tokenizer_detail.h"

#include <nlohmann/json.hpp>

namespace ts::gguf_vocab_detail {
namespace {

using nlohmann::json;

constexpr std::string_view kPhantomSpace = "\xE2\x96\x81";  // U+2581

/// BERT's spelling of a phantom-space token: "▁xx" -> "xx", control tokens as they are, any other "xx" -> "##xx".
std::string bert_spelling(const std::string& token, int type) {
    if (type == kControl) return token;
    if (token.compare(0, kPhantomSpace.size(), kPhantomSpace) == 0) return token.substr(kPhantomSpace.size());
    return "##" + token;
}

/// The id under key; else the token of `type` (when type > 0), else the token spelled `spelling`; else nullopt.
std::optional<int> find_special(const GgufHeader& h, const char* key, const std::vector<std::string>& tokens,
                                const std::vector<double>& types, int type, std::string_view spelling,
                                const std::string& what) {
    if (auto id = token_id_key(h, key, tokens.size(), what)) return id;
    if (type > 0)
        for (size_t i = 0; i < types.size(); ++i)
            if (int(types[i]) == type) return int(i);
    for (size_t i = 0; i < tokens.size(); ++i)
        if (tokens[i] == spelling) return int(i);
    return std::nullopt;
}

}  // namespace

/// A "bert" GGUF vocabulary as the tokenizer.json of BERT it came from, parsed by our pipeline:
///   BertNormalizer (clean text, CJK spacing, strip_accents per tokenizer.ggml.normalizer.strip_accents, lowercase
///   per tokenizer.ggml.normalizer.lowercase; both default true, strip_accents defaulting to lowercase, as in
///   llama_vocab::impl::load), BertPreTokenizer (whitespace, then every punctuation character alone; llama.cpp's
///   WPM preprocess also isolates the ASCII symbols $+<=>^`|~, which BERT counts as punctuation too),
///   WordPiece("##", no word-length limit: llama.cpp has none), decoder WordPiece with cleanup (readable text),
///   [CLS] $A [SEP] with CLS = tokenizer.ggml.bos_token_id and SEP = tokenizer.ggml.seperator_token_id (else the
///   tokens spelled [CLS] / [SEP]). Like llm_tokenizer_wpm / llama_vocab::impl::tokenize, add_special_tokens
///   always adds both, whatever tokenizer.ggml.add_bos_token / add_sep_token say.
/// Control tokens are added tokens, so "[MASK]" in a text is the mask token (llama_tokenize with parse_special).
/// Known difference from llama.cpp, kept because BERT's own tokenizer does the same: llama.cpp's NFD keeps only
/// the first code point of each decomposition (unicode_cpts_normalize_nfd), so a Hangul syllable becomes its
/// leading jamo alone; here it decomposes fully (L V [T]), as BertNormalizer's NFD does. Rarer ones, also BERT's:
/// llama.cpp drops every mark (\p{M}) where BERT drops nonspacing ones (Mn), splits words at U+000B, U+000C and
/// U+0085 where BERT deletes them (control characters), and keeps unassigned code points, which BERT deletes.
/// Throws "<what>: <problem>" when the unknown, CLS or SEP token is missing, a special id is out of range or
/// mistyped, or token_type does not match the token list.
std::shared_ptr<const TextTokenizer> bert_tokenizer(const GgufHeader& h, const std::vector<std::string>& tokens,
                                                    const std::vector<double>& types, const std::string& what) {
    if (!types.empty() && types.size() != tokens.size())
        fail(what,
             "tokenizer.ggml.token_type has " + std::to_string(types.size()) + " entries for " +
                 std::to_string(tokens.size()) + " tokens");
    const auto type_of = [&](size_t i) { return i < types.size() ? int(types[i]) : int(kNormal); };
    const std::optional<int> unk =
        find_special(h, "tokenizer.ggml.unknown_token_id", tokens, types, kUnknown, "[UNK]", what);
    if (!unk)
        fail(what,
             "a \"bert\" vocabulary needs an unknown token (tokenizer.ggml.unknown_token_id, a token of type 2, "
             "or [UNK])");
    const std::optional<int> cls = find_special(h, "tokenizer.ggml.bos_token_id", tokens, types, 0, "[CLS]", what);
    const std::optional<int> sep =
        find_special(h, "tokenizer.ggml.seperator_token_id", tokens, types, 0, "[SEP]", what);
    if (!cls || !sep)
        fail(what,
             std::string("a \"bert\" vocabulary needs its ") + (cls ? "[SEP]" : "[CLS]") + " token (tokenizer.ggml." +
                 (cls ? "seperator_token_id" : "bos_token_id") + ", or a token spelled so)");
    // Checked for their type only: the ids of the other roles, which TextTokenizer::special_token_id finds by spelling.
    for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.padding_token_id",
                            "tokenizer.ggml.mask_token_id", "tokenizer.ggml.cls_token_id"})
        (void)token_id_key(h, key, tokens.size(), what);

    std::vector<std::string> pieces(tokens.size());
    json vocab = json::object();
    json added = json::array();
    for (size_t i = 0; i < tokens.size(); ++i) {
        pieces[i] = bert_spelling(tokens[i], type_of(i));
        vocab[pieces[i]] = i;  // a duplicate keeps its last id, as llama.cpp's token_to_id does
        if (type_of(i) == kControl && !tokens[i].empty())
            added.push_back({{"id", i},
                             {"content", tokens[i]},
                             {"single_word", false},
                             {"lstrip", false},
                             {"rstrip", false},
                             {"normalized", false},
                             {"special", true}});
    }
    const bool lowercase = flag(h, "tokenizer.ggml.normalizer.lowercase", true);
    const bool strip_accents = flag(h, "tokenizer.ggml.normalizer.strip_accents", lowercase);
    const std::string& cls_piece = pieces[size_t(*cls)];
    const std::string& sep_piece = pieces[size_t(*sep)];
    const auto special = [](const std::string& piece, int id) {
        return json{{"id", piece}, {"ids", {id}}, {"tokens", {piece}}};
    };
    json specials = json::object();
    specials[cls_piece] = special(cls_piece, *cls);
    specials[sep_piece] = special(sep_piece, *sep);
    const json single = {{{"SpecialToken", {{"id", cls_piece}, {"type_id", 0}}}},
                         {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                         {{"SpecialToken", {{"id", sep_piece}, {"type_id", 0}}}}};
    const json j = {
        {"version", "1.0"},
        {"added_tokens", added},
        {"normalizer",
         {{"type", "BertNormalizer"},
          {"clean_text", true},
          {"handle_chinese_chars", true},
          {"strip_accents", strip_accents},
          {"lowercase", lowercase}}},
        {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
        {"post_processor", {{"type", "TemplateProcessing"}, {"single", single}, {"special_tokens", specials}}},
        {"decoder", {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}},
        {"model",
         {{"type", "WordPiece"},
          {"unk_token", pieces[size_t(*unk)]},
          {"continuing_subword_prefix", "##"},
          {"max_input_chars_per_word", uint64_t(1) << 40},
          {"vocab", vocab}}}};
    return detail::hf_tokenizer_from_json(j, what + " (tokenizer.ggml, bert)");
}

}  // namespace ts::gguf_vocab_detail
