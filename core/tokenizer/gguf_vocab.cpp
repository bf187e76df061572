// The tokenizer a GGUF file carries in its metadata (tokenizer.ggml.*), built on the pipelines we already have:
//  - "gpt2" (byte-level BPE): the tokenizer.json it stands for (BPE vocab + merges, the pre-tokenizer regexes that
//    tokenizer.ggml.pre names, ByteLevel, control / user-defined tokens as added tokens, a BOS template when the
//    file adds one), parsed by parse_hf_tokenizer_json;
//  - "llama" (SentencePiece BPE with scores and <0xNN> byte fallback): a SentencePiece ModelProto (BPE, identity
//    normalizer, dummy prefix) serialized here and run by libsentencepiece itself;
//  - "bert" (WordPiece in llama.cpp's phantom-space spelling): gguf_vocab_wpm.cpp;
//  - "t5" (SentencePiece unigram with a precompiled character map): gguf_vocab_ugm.cpp.
// The per-`pre` regexes and defaults (add_bos, add_space_prefix, ignore_merges) are llama.cpp's (llama-vocab.cpp),
// which keeps the patterns of the tokenizer.json files they come from.
#include "core/formats/gguf.h"
#include "core/tokenizer/gguf_vocab_detail.h"
#include "core/tokenizer/text_tokenizer.h"
#include "core/util/utf8.h"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace ts {
namespace {

using nlohmann::json;
using namespace gguf_vocab_detail;

constexpr const char* kGpt2Regex =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
constexpr const char* kLlama3Regex =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char* kQwen2Regex =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

struct PreTokenizer {
    std::vector<const char*> names;
    std::vector<const char*> regexes;  ///< applied one after another, each splitting the previous pieces
    bool ignore_merges = false;
    bool add_bos = false;
};

const std::vector<PreTokenizer>& pre_tokenizers() {
    static const std::vector<PreTokenizer> table = {
        {{"gpt-2", "gpt2", "phi-2", "mpt", "olmo", "jais"}, {kGpt2Regex}, false, false},
        {{"llama3", "llama-v3", "llama-bpe", "falcon3"}, {kLlama3Regex}, true, true},
        {{"qwen2", "deepseek-r1-qwen", "stablelm2"}, {kQwen2Regex}, false, false},
        {{"smollm", "codeshell", "exaone"}, {"\\p{N}", kGpt2Regex}, false, false},
        {{"default"}, {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2Regex, "\\p{N}+", "[0-9][0-9][0-9]"}, false, false},
    };
    return table;
}

// --- byte-level BPE ("gpt2") ------------------------------------------------------------------------------------

std::shared_ptr<const TextTokenizer> gpt2_tokenizer(const GgufHeader& h, const std::vector<std::string>& tokens,
                                                    const std::vector<double>& types, const std::string& what) {
    std::string pre_name = "default";
    if (const GgufValue* p = find_typed(h, "tokenizer.ggml.pre", GgufValueType::String, GgufValueType::U8, what))
        pre_name = p->text;
    const PreTokenizer* pre = nullptr;
    std::string known;
    for (const PreTokenizer& p : pre_tokenizers())
        for (const char* n : p.names) {
            known += (known.empty() ? "" : ", ") + std::string(n);
            if (pre_name == n) pre = &p;
        }
    if (!pre) fail(what, "pre-tokenizer '" + pre_name + "' (tokenizer.ggml.pre) is not supported (" + known + " are)");
    const GgufValue* merges = find_typed(h, "tokenizer.ggml.merges", GgufValueType::Array, GgufValueType::String, what);
    // No merges key: a byte-level vocabulary without merges (gguf-py writes no key for an empty list).

    json vocab = json::object();
    json added = json::array();
    for (size_t i = 0; i < tokens.size(); ++i) {
        const int type = i < types.size() ? int(types[i]) : kNormal;
        if (type == kControl || type == kUserDefined) {
            added.push_back({{"id", i}, {"content", tokens[i]}, {"single_word", false}, {"lstrip", false},
                             {"rstrip", false}, {"normalized", false}, {"special", type == kControl}});
        }
        vocab[tokens[i]] = i;  // a duplicate piece keeps its last id, as a dict would
    }
    json merge_list = json::array();
    if (merges)
        for (const std::string& m : merges->strings) merge_list.push_back(m);
    json split = json::array();
    for (const char* re : pre->regexes)
        split.push_back({{"type", "Split"}, {"pattern", {{"Regex", re}}}, {"behavior", "Isolated"}, {"invert", false}});
    split.push_back({{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}});
    json j = {{"version", "1.0"},
              {"added_tokens", added},
              {"normalizer", nullptr},
              {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", split}}},
              {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}},
              {"model", {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", nullptr},
                         {"end_of_word_suffix", nullptr}, {"fuse_unk", false}, {"byte_fallback", false},
                         {"ignore_merges", pre->ignore_merges}, {"vocab", vocab}, {"merges", merge_list}}}};
    const int bos = special_id(h, "tokenizer.ggml.bos_token_id", tokens.size());
    if (flag(h, "tokenizer.ggml.add_bos_token", pre->add_bos) && bos >= 0) {
        const std::string& b = tokens[size_t(bos)];
        j["post_processor"] = {{"type", "TemplateProcessing"},
                               {"single", {{{"SpecialToken", {{"id", b}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
                               {"pair", {{{"SpecialToken", {{"id", b}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                                         {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}}},
                               {"special_tokens", {{b, {{"id", b}, {"ids", {bos}}, {"tokens", {b}}}}}}};
    } else {
        j["post_processor"] = nullptr;
    }
    return parse_hf_tokenizer_json(j.dump(), what + " (tokenizer.ggml, gpt2)");
}

// --- SentencePiece BPE ("llama") --------------------------------------------------------------------------------

std::shared_ptr<const TextTokenizer> llama_tokenizer(const GgufHeader& h, const std::vector<std::string>& tokens,
                                                     const std::vector<double>& types, const std::string& what) {
    const GgufValue* scores = find_typed(h, "tokenizer.ggml.scores", GgufValueType::Array, GgufValueType::F32, what);
    int unk = -1, bytes_found = 0;
    for (size_t i = 0; i < tokens.size(); ++i) {
        const int type = i < types.size() ? int(types[i]) : kNormal;
        if (type == kUnknown) {
            if (unk >= 0) fail(what, "two unknown tokens (ids " + std::to_string(unk) + " and " + std::to_string(i) + ")");
            unk = int(i);
        }
        if (type == kByte) ++bytes_found;
    }
    if (unk < 0) fail(what, "a \"llama\" (SentencePiece) vocabulary needs an unknown token (token type 2)");
    if (bytes_found != 256)
        fail(what, "a \"llama\" (SentencePiece) vocabulary needs all 256 byte tokens <0x00> ... <0xFF> (token type 6); "
                   "this one has " + std::to_string(bytes_found));
    std::vector<float> piece_scores(tokens.size());
    std::vector<int> piece_types(tokens.size());
    for (size_t i = 0; i < tokens.size(); ++i) {
        piece_scores[i] = scores && i < scores->numbers.size() ? float(scores->numbers[i]) : 0.0f;
        piece_types[i] = i < types.size() ? int(types[i]) : kNormal;
    }
    const auto control_id = [&](const char* key) {
        const int id = special_id(h, key, tokens.size());
        return id >= 0 && id < int(types.size()) && int(types[size_t(id)]) == kControl ? id : -1;
    };
    SentencePieceSpec spec;
    spec.model_type = 2;  // BPE
    spec.byte_fallback = true;
    spec.unk = unk;
    spec.bos = control_id("tokenizer.ggml.bos_token_id");
    spec.eos = control_id("tokenizer.ggml.eos_token_id");
    spec.pad = control_id("tokenizer.ggml.padding_token_id");
    spec.add_space_prefix = flag(h, "tokenizer.ggml.add_space_prefix", true);
    spec.remove_extra_whitespaces = flag(h, "tokenizer.ggml.remove_extra_whitespaces", false);
    const std::string model = sentencepiece_model_proto(tokens, piece_scores, piece_types, spec);
    return parse_sentencepiece_model(model, flag(h, "tokenizer.ggml.add_bos_token", true),
                                     flag(h, "tokenizer.ggml.add_eos_token", false), what + " (tokenizer.ggml, llama)");
}

}  // namespace

std::shared_ptr<const TextTokenizer> parse_gguf_tokenizer(const GgufHeader& h, const std::string& what) {
    const GgufValue* model = find_typed(h, "tokenizer.ggml.model", GgufValueType::String, GgufValueType::U8, what);
    if (!model) return nullptr;
    const GgufValue* tokens = find_typed(h, "tokenizer.ggml.tokens", GgufValueType::Array, GgufValueType::String, what);
    if (!tokens || tokens->strings.empty()) fail(what, "tokenizer.ggml.model is set but tokenizer.ggml.tokens is missing or empty");
    std::vector<double> types;
    if (const GgufValue* t = find_typed(h, "tokenizer.ggml.token_type", GgufValueType::Array, GgufValueType::I32, what))
        types = t->numbers;
    // Token texts are UTF-8 in every vocabulary kind (byte-level BPE spells bytes as characters, SentencePiece
    // spells them <0xNN>).
    for (size_t i = 0; i < tokens->strings.size(); ++i)
        if (!is_valid_utf8(tokens->strings[i]))
            fail(what, "token " + std::to_string(i) + " of tokenizer.ggml.tokens is not valid UTF-8");
    if (const GgufValue* m = h.find("tokenizer.ggml.merges"))
        for (size_t i = 0; i < m->strings.size(); ++i)
            if (!is_valid_utf8(m->strings[i]))
                fail(what, "merge " + std::to_string(i) + " of tokenizer.ggml.merges is not valid UTF-8");
    if (model->text == "gpt2") return gpt2_tokenizer(h, tokens->strings, types, what);
    if (model->text == "llama") return llama_tokenizer(h, tokens->strings, types, what);
    if (model->text == "bert") return bert_tokenizer(h, tokens->strings, types, what);
    if (model->text == "t5") return t5_tokenizer(h, tokens->strings, types, what);
    fail(what,
         "tokenizer model '" + model->text + "' (tokenizer.ggml.model) is not supported (gpt2, llama, bert, t5 are)");
}

}  // namespace ts
