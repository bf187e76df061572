// Checks a SentencePiece precompiled character map before libsentencepiece walks it: its normalizer follows the
// darts-clone trie without bounds checks, so a corrupt .model crashed the app while normalising (issue #27).
// Format (SentencePiece normalizer.cc): uint32 little-endian trie size in bytes, the trie's uint32 units, then the
// NUL-terminated replacement strings the trie's values point into.
#include "core/tokenizer/text_tokenizer_detail.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ts::detail {

namespace {

uint32_t read_u32(std::string_view s, size_t at) {
    uint32_t v = 0;
    for (int k = 3; k >= 0; --k) v = (v << 8) | static_cast<unsigned char>(s[at + size_t(k)]);
    return v;
}

// darts-clone's unit layout (the same as libsentencepiece's bundled copy).
size_t unit_offset(uint32_t u) { return size_t(u >> 10) << ((u & (1u << 9)) >> 6); }
uint32_t unit_label(uint32_t u) { return u & ((1u << 31) | 0xFF); }
bool unit_has_leaf(uint32_t u) { return ((u >> 8) & 1) != 0; }
uint32_t unit_value(uint32_t u) { return u & ((1u << 31) - 1); }

// A protobuf varint at s[pos]; advances pos. False when truncated or longer than 10 bytes.
bool read_varint(std::string_view s, size_t& pos, uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64 && pos < s.size(); shift += 7) {
        const auto b = static_cast<unsigned char>(s[pos++]);
        v |= uint64_t(b & 0x7F) << shift;
        if ((b & 0x80) == 0) return true;
    }
    return false;
}

// Every length-delimited field `field` of the message `msg` (protobuf wire format). Throws on malformed framing.
std::vector<std::string_view> fields_of(std::string_view msg, uint32_t field, const std::string& name) {
    std::vector<std::string_view> out;
    size_t pos = 0;
    while (pos < msg.size()) {
        uint64_t key = 0, len = 0;
        if (!read_varint(msg, pos, key)) throw std::runtime_error(name + ": not a SentencePiece model (bad framing)");
        switch (key & 7) {
            case 0:
                if (!read_varint(msg, pos, len)) throw std::runtime_error(name + ": not a SentencePiece model (bad varint)");
                break;
            case 1: pos += 8; break;
            case 5: pos += 4; break;
            case 2:
                if (!read_varint(msg, pos, len) || len > msg.size() - std::min(pos, msg.size()))
                    throw std::runtime_error(name + ": not a SentencePiece model (a field runs past the end)");
                if ((key >> 3) == field) out.push_back(msg.substr(pos, size_t(len)));
                pos += size_t(len);
                break;
            default: throw std::runtime_error(name + ": not a SentencePiece model (unknown wire type)");
        }
    }
    if (pos > msg.size()) throw std::runtime_error(name + ": not a SentencePiece model (truncated)");
    return out;
}

}  // namespace

void check_precompiled_charsmap(std::string_view blob, const std::string& name) {
    if (blob.empty()) return;  // no map: SentencePiece copies characters through
    const auto bad = [&](const std::string& why) {
        throw std::runtime_error(name + ": precompiled_charsmap is corrupt (" + why + ")");
    };
    if (blob.size() < 4) bad("shorter than its 4-byte header");
    const uint32_t trie_bytes = read_u32(blob, 0);
    if (trie_bytes % 4 != 0 || size_t(trie_bytes) > blob.size() - 4) bad("trie size does not fit the blob");
    const size_t n = trie_bytes / 4;
    if (n == 0) bad("empty trie");
    std::vector<uint32_t> units(n);
    for (size_t i = 0; i < n; ++i) units[i] = read_u32(blob, 4 + 4 * i);
    const std::string_view pool = blob.substr(4 + trie_bytes);

    // Walk every node reachable from the root the way the normalizer does: for each byte c, the unit at node ^ c
    // is read, and followed when its label is c. Every read must stay inside the trie, every value must point at a
    // NUL-terminated string inside the pool. A visited set guards against cycles in a corrupt trie.
    std::vector<uint8_t> visited(n, 0);
    std::vector<size_t> stack;
    const size_t root = unit_offset(units[0]);
    if (root >= n) bad("root points outside the trie");
    stack.push_back(root);
    while (!stack.empty()) {
        const size_t node = stack.back();
        stack.pop_back();
        if (visited[node]) continue;
        visited[node] = 1;
        for (uint32_t c = 0; c < 256; ++c) {
            const size_t child = node ^ c;
            if (child >= n) bad("a node's children lie outside the trie");
            const uint32_t u = units[child];
            if (unit_label(u) != c) continue;
            const size_t next = child ^ unit_offset(u);
            if (next >= n) bad("an edge points outside the trie");
            if (unit_has_leaf(u)) {
                const uint32_t v = unit_value(units[next]);
                if (v >= pool.size() || pool.find('\0', v) == std::string_view::npos)
                    bad("a replacement lies outside the string pool");
            }
            stack.push_back(next);
        }
    }
}

void check_sentencepiece_model(std::string_view proto, const std::string& name) {
    // ModelProto: normalizer_spec = 3, denormalizer_spec = 5; NormalizerSpec: precompiled_charsmap = 2.
    for (const uint32_t spec_field : {3u, 5u})
        for (const std::string_view spec : fields_of(proto, spec_field, name))
            for (const std::string_view map : fields_of(spec, 2, name)) check_precompiled_charsmap(map, name);
}

}  // namespace ts::detail
