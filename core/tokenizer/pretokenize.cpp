// Regex pre-tokenization with PCRE2 (UTF + UCP + MATCH_INVALID_UTF, JIT-compiled); see pretokenize.h.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "core/tokenizer/pretokenize.h"

#include <pcre2.h>

#include <stdexcept>

namespace ts {

struct PreTokenizer::Impl {
    pcre2_code* code = nullptr;
    bool jit = false;
    ~Impl() {
        if (code) pcre2_code_free(code);
    }
};

namespace {

std::string pcre2_message(int err) {
    PCRE2_UCHAR buf[256];
    pcre2_get_error_message(err, buf, sizeof(buf));
    return reinterpret_cast<const char*>(buf);
}

// RAII for a match data block and an optional larger JIT stack (used only when the default 32 KiB runs out).
struct MatchScratch {
    pcre2_match_data* md = nullptr;
    pcre2_match_context* mctx = nullptr;
    pcre2_jit_stack* stack = nullptr;
    ~MatchScratch() {
        if (md) pcre2_match_data_free(md);
        if (mctx) pcre2_match_context_free(mctx);
        if (stack) pcre2_jit_stack_free(stack);
    }
    void grow_jit_stack() {
        if (stack) throw std::runtime_error("pre-tokenizer: PCRE2 JIT stack limit exceeded even with 64 MiB");
        stack = pcre2_jit_stack_create(32 * 1024, 64 * 1024 * 1024, nullptr);
        mctx = pcre2_match_context_create(nullptr);
        if (!stack || !mctx) throw std::runtime_error("pre-tokenizer: out of memory for the PCRE2 JIT stack");
        pcre2_jit_stack_assign(mctx, nullptr, stack);
    }
};

}  // namespace

PreTokenizer::PreTokenizer(std::vector<std::string> patterns) : m_patterns(std::move(patterns)) {
    if (m_patterns.empty()) throw std::invalid_argument("pre-tokenizer needs at least one pattern, got none");
    for (const std::string& pattern : m_patterns) {
        auto impl = std::make_unique<Impl>();
        int err = 0;
        PCRE2_SIZE err_offset = 0;
        impl->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &err_offset, nullptr);
        if (!impl->code)
            throw std::invalid_argument("pre-tokenizer pattern does not compile: " + pcre2_message(err) +
                                        " at offset " + std::to_string(err_offset) + " in '" + pattern + "'");
        impl->jit = pcre2_jit_compile(impl->code, PCRE2_JIT_COMPLETE) == 0;  // interpreter fallback otherwise
        m_impls.push_back(std::move(impl));
    }
}

PreTokenizer::~PreTokenizer() = default;

void PreTokenizer::split(std::string_view text, std::vector<ByteSpan>& out) const {
    if (m_impls.size() == 1) {
        split_stage(0, text, 0, out);
        return;
    }
    std::vector<ByteSpan> cur, next;
    split_stage(0, text, 0, cur);
    for (size_t stage = 1; stage < m_impls.size(); ++stage) {
        next.clear();
        for (const auto& [b, e] : cur) split_stage(stage, text.substr(b, e - b), b, next);
        cur.swap(next);
    }
    out.insert(out.end(), cur.begin(), cur.end());
}

void PreTokenizer::split_stage(size_t stage, std::string_view text, size_t offset, std::vector<ByteSpan>& out) const {
    if (text.empty()) return;
    const Impl& impl = *m_impls[stage];
    MatchScratch scratch;
    scratch.md = pcre2_match_data_create_from_pattern(impl.code, nullptr);
    if (!scratch.md) throw std::runtime_error("pre-tokenizer: out of memory for PCRE2 match data");
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    size_t covered = 0;  // bytes [0, covered) are in emitted pieces
    size_t start = 0;    // where the next search begins
    while (start < text.size()) {
        int rc = pcre2_match(impl.code, subject, text.size(), start, 0, scratch.md, scratch.mctx);
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
            scratch.grow_jit_stack();
            continue;
        }
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) throw std::runtime_error("pre-tokenizer: PCRE2 match error: " + pcre2_message(rc));
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(scratch.md);
        const size_t b = ov[0], e = ov[1];
        if (e <= b) {  // empty match (only custom patterns can do this): step over one byte, leave it to a gap
            start = b + 1;
            continue;
        }
        if (b > covered) out.emplace_back(offset + covered, offset + b);
        out.emplace_back(offset + b, offset + e);
        covered = start = e;
    }
    if (covered < text.size()) out.emplace_back(offset + covered, offset + text.size());
}

}  // namespace ts
