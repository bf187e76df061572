// SentencePiece .model files (Llama-2's tokenizer.model, T5's spiece.model, Marian's source.spm / target.spm)
// through libsentencepiece: its own normalizer, unigram or BPE model and byte fallback; spans come from its
// ImmutableSentencePieceText (begin/end byte offsets of each piece's surface in the input).
#include "core/tokenizer/text_tokenizer.h"
#include "core/tokenizer/text_tokenizer_detail.h"
#include "core/util/json.h"

#include <nlohmann/json.hpp>
#include <sentencepiece_processor.h>

#include <filesystem>
#include <stdexcept>
#include <unordered_map>

namespace ts {
namespace {

std::unique_ptr<sentencepiece::SentencePieceProcessor> load_spm(std::string_view proto, const std::string& name) {
    // libsentencepiece trusts the character map's trie offsets; a corrupt one crashed it while normalising.
    detail::check_sentencepiece_model(proto, name);
    auto sp = std::make_unique<sentencepiece::SentencePieceProcessor>();
    const auto st = sp->LoadFromSerializedProto(proto);
    if (!st.ok() || sp->GetPieceSize() <= 0)
        throw std::runtime_error(name + ": not a SentencePiece model (" +
                                 (st.ok() ? std::string("no pieces") : std::string(st.message())) + ")");
    return sp;
}

class SentencePieceTokenizer final : public TextTokenizer {
public:
    SentencePieceTokenizer(std::string_view proto, bool add_bos, bool add_eos, std::string name)
        : m_sp(load_spm(proto, name)), m_add_bos(add_bos && m_sp->bos_id() >= 0), m_add_eos(add_eos && m_sp->eos_id() >= 0),
          m_name(std::move(name)) {
        for (int i = 0; i < m_sp->GetPieceSize(); ++i) m_index.emplace(m_sp->IdToPiece(i), i);
        for (const auto& [role, id] : {std::pair{"bos", m_sp->bos_id()}, {"eos", m_sp->eos_id()}, {"unk", m_sp->unk_id()},
                                       {"pad", m_sp->pad_id()}})
            if (id >= 0) special_roles.emplace_back(role, m_sp->IdToPiece(id));
    }
    std::string description() const override {
        return "SentencePiece (" + m_name.substr(m_name.find_last_of('/') + 1) + ", " + std::to_string(vocab_size()) + " tokens)";
    }
    TextEncoding encode(std::string_view text, bool add_special) const override {
        TextEncoding enc;
        const auto push = [&](int32_t id, size_t b, size_t e, bool special) {
            enc.ids.push_back(id);
            enc.pieces.push_back(m_sp->IdToPiece(id));
            enc.spans.push_back(TokenSpan{b, e, 0, 0});
            enc.special.push_back(special ? 1 : 0);
        };
        if (add_special && m_add_bos) push(m_sp->bos_id(), 0, 0, true);
        const sentencepiece::ImmutableSentencePieceText spt = m_sp->EncodeAsImmutableProto(text);
        for (const auto& p : spt.pieces()) push(int32_t(p.id()), p.begin(), p.end(), m_sp->IsControl(int(p.id())));
        if (add_special && m_add_eos) push(m_sp->eos_id(), text.size(), text.size(), true);
        detail::finish_spans(text, enc);
        return enc;
    }
    std::string decode(std::span<const int32_t> ids, bool skip_special) const override {
        std::vector<int> v;
        for (int32_t id : ids) {
            if (id < 0 || id >= m_sp->GetPieceSize())
                throw std::out_of_range("token id " + std::to_string(id) + " is not in the vocabulary of " + m_name);
            if (skip_special && is_special(id)) continue;
            v.push_back(id);
        }
        std::string out;
        const auto st = m_sp->Decode(v, &out);
        if (!st.ok()) throw std::runtime_error(m_name + ": decode failed (" + std::string(st.message()) + ")");
        return out;
    }
    size_t vocab_size() const override { return size_t(m_sp->GetPieceSize()); }
    std::string id_to_piece(int32_t id) const override {
        if (id < 0 || id >= m_sp->GetPieceSize())
            throw std::out_of_range("token id " + std::to_string(id) + " is not in the vocabulary of " + m_name);
        return m_sp->IdToPiece(id);
    }
    std::optional<int32_t> piece_to_id(std::string_view piece) const override {
        auto it = m_index.find(std::string(piece));
        if (it == m_index.end()) return std::nullopt;
        return it->second;
    }
    bool is_special(int32_t id) const override {
        return id >= 0 && id < m_sp->GetPieceSize() && (m_sp->IsControl(id) || m_sp->IsUnknown(id));
    }
    const sentencepiece::SentencePieceProcessor& sp() const { return *m_sp; }

private:
    std::unique_ptr<sentencepiece::SentencePieceProcessor> m_sp;
    bool m_add_bos, m_add_eos;
    std::string m_name;
    std::unordered_map<std::string, int32_t> m_index;
};

// Marian: pieces from one .spm, ids from the shared vocab.json; </s> appended (MarianTokenizer).
class MarianSide final : public TextTokenizer {
public:
    MarianSide(std::string_view proto, const std::string& vocab_json, std::string spm_name, const std::string& vocab_name)
        : m_sp(load_spm(proto, spm_name)), m_name(std::move(spm_name)) {
        const nlohmann::json j = parse_json(vocab_json, vocab_name);
        if (!j.is_object() || j.empty()) throw std::runtime_error(vocab_name + ": expected a JSON object {piece: id}");
        for (auto it = j.begin(); it != j.end(); ++it) {
            if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 || it.value().get<int64_t>() > (1 << 22))
                throw std::runtime_error(vocab_name + ": entry \"" + it.key() + "\": expected a non-negative integer id");
            const auto id = size_t(it.value().get<int64_t>());
            if (id >= m_pieces.size()) m_pieces.resize(id + 1);
            m_pieces[id] = it.key();
            m_index.emplace(it.key(), int32_t(id));
        }
        for (const char* s : {"</s>", "<unk>"})
            if (!m_index.count(s)) throw std::runtime_error(vocab_name + ": expected the token " + std::string(s) + ", found none");
        m_eos = m_index.at("</s>");
        m_unk = m_index.at("<unk>");
        special_roles = {{"eos", "</s>"}, {"unk", "<unk>"}};
        if (m_index.count("<pad>")) special_roles.emplace_back("pad", "<pad>");
    }
    std::string description() const override {
        return "SentencePiece (" + m_name.substr(m_name.find_last_of('/') + 1) + " + vocab.json, " +
               std::to_string(vocab_size()) + " tokens)";
    }
    TextEncoding encode(std::string_view text, bool add_special) const override {
        TextEncoding enc;
        const sentencepiece::ImmutableSentencePieceText spt = m_sp->EncodeAsImmutableProto(text);
        for (const auto& p : spt.pieces()) {
            auto it = m_index.find(p.piece());
            enc.ids.push_back(it == m_index.end() ? m_unk : it->second);
            enc.pieces.push_back(it == m_index.end() ? "<unk>" : p.piece());
            enc.spans.push_back(TokenSpan{p.begin(), p.end(), 0, 0});
            enc.special.push_back(0);
        }
        if (add_special) {
            enc.ids.push_back(m_eos);
            enc.pieces.emplace_back("</s>");
            enc.spans.push_back(TokenSpan{text.size(), text.size(), 0, 0});
            enc.special.push_back(1);
        }
        detail::finish_spans(text, enc);
        return enc;
    }
    std::string decode(std::span<const int32_t> ids, bool skip_special) const override {
        std::vector<std::string> pieces;
        std::string out;
        for (int32_t id : ids) {
            const std::string p = id_to_piece(id);
            if (is_special(id)) {
                if (skip_special) continue;
                // control tokens are not in the .spm: decode what is pending, then append the token as written
                std::string part;
                (void)m_sp->Decode(pieces, &part);
                out += part + p;
                pieces.clear();
                continue;
            }
            pieces.push_back(p);
        }
        std::string part;
        const auto st = m_sp->Decode(pieces, &part);
        if (!st.ok()) throw std::runtime_error(m_name + ": decode failed (" + std::string(st.message()) + ")");
        return out + part;
    }
    size_t vocab_size() const override { return m_pieces.size(); }
    std::string id_to_piece(int32_t id) const override {
        if (id < 0 || size_t(id) >= m_pieces.size() || m_pieces[size_t(id)].empty())
            throw std::out_of_range("token id " + std::to_string(id) + " is not in vocab.json");
        return m_pieces[size_t(id)];
    }
    std::optional<int32_t> piece_to_id(std::string_view piece) const override {
        auto it = m_index.find(std::string(piece));
        if (it == m_index.end()) return std::nullopt;
        return it->second;
    }
    bool is_special(int32_t id) const override {
        if (id < 0 || size_t(id) >= m_pieces.size()) return false;
        const std::string& p = m_pieces[size_t(id)];
        return p == "</s>" || p == "<pad>" || p == "<unk>";
    }

private:
    std::unique_ptr<sentencepiece::SentencePieceProcessor> m_sp;
    std::string m_name;
    std::vector<std::string> m_pieces;
    std::unordered_map<std::string, int32_t> m_index;
    int32_t m_eos = 0, m_unk = 0;
};

}  // namespace

std::shared_ptr<const TextTokenizer> parse_sentencepiece_model(std::string_view proto, bool add_bos, bool add_eos,
                                                               const std::string& name) {
    return std::make_shared<SentencePieceTokenizer>(proto, add_bos, add_eos, name);
}

std::shared_ptr<const TextTokenizer> load_marian_side(const std::filesystem::path& dir, const std::string& spm_name) {
    const std::string spm = (dir / spm_name).string(), vocab = (dir / "vocab.json").string();
    return std::make_shared<MarianSide>(detail::read_file(spm), detail::read_file(vocab), spm, vocab);
}

}  // namespace ts
