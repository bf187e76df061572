// Incremental forward for typing: when the new token ids keep a prefix of the previous call's, a decoder-only model
// with a causal mask computes only the changed tail (its keys/values from a KVCache, its trace rows fresh) and the
// prefix's trace rows are reused without being copied: each entry of the new trace is composed from the earlier
// traces on first read (Trace::record_derived). The result equals a full forward (≤ 1e-6,
// tests/core/perf_paths_test.cpp, Incremental.*).
#pragma once

#include "core/model/model.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ts {

/// How one entry of an incremental trace is composed when first read: rows come from `pieces`, oldest first. The
/// first piece is a trace holding the entry in full (offset 0); each later one is the tail forward of one call, whose
/// row 0 is position `offset` and which overrides every earlier piece from there on. Keeping pieces instead of
/// copying the prefix makes a keystroke cost the tail's forward, not a copy of the whole trace.
struct TraceSplice {
    struct Piece {
        std::shared_ptr<const Trace> src;
        int offset = 0;
    };
    std::vector<Piece> pieces;
};

/// Unread entries are extended across calls up to this many pieces; then the previous call's entry is composed once
/// and becomes the new base (bounds the tails kept alive; the copy is paid once per this many keystrokes).
inline constexpr size_t kMaxSplicePieces = 16;

/// What forward_incremental remembers between calls (one per compute thread; not thread-safe).
struct IncrementalState {
    const Model* model = nullptr;         ///< the model the state belongs to (compared by address)
    std::vector<int> ids;                 ///< ids of the last call
    KVCache cache;                        ///< keys/values of every position of `ids`
    std::shared_ptr<const Trace> trace;   ///< the last call's full trace
    MatrixRM hidden;                      ///< its ForwardResult::hidden
    MatrixRM logits;                      ///< its ForwardResult::logits when all_logits, else empty
    /// How each spliced entry of `trace` is composed (empty after a full forward).
    std::map<std::string, std::shared_ptr<const TraceSplice>, std::less<>> splices;
    std::string knobs;                    ///< temperature, mask, capture and logits setting the state was made with
    void reset() { *this = IncrementalState(); }
};

/// How the last call ran.
struct IncrementalStats {
    int reused = 0;       ///< prefix positions taken from the state
    int computed = 0;     ///< positions run through the model
    std::string full_reason;  ///< why everything was recomputed ("" when the prefix was reused)
};

/// forward(m, ids, opt) for a decoder-only model, reusing the longest prefix `ids` shares with `state.ids` when the
/// state was made by the same model with the same knobs. Reuse needs: Arch::DecoderOnly, a Causal self-mask without
/// key padding, no activation edits, capture all or none. Everything else — encoders (each position sees every
/// other, so one new token changes every row), non-causal or sliding masks, padding, edits —
/// is a full recompute (then stats->full_reason says why; the state is emptied). A changed first token or other settings
/// (temperature, capture, all_logits) recompute everything too and keep this call for the next one.
/// Errors as forward(). state is left empty when it throws.
[[nodiscard]] ForwardResult forward_incremental(const Model& m, const std::vector<int>& ids, const ForwardOptions& opt,
                                                IncrementalState& state, IncrementalStats* stats = nullptr);

}  // namespace ts
