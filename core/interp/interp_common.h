// Shared pieces of the interpretability analyses (core/interp): which stack an analysis runs on, head references,
// progress/cancel plumbing and the log-probability of one token. The analyses run forward() (decoder-only or
// encoder-only models); encoder-decoder models are refused with a message.
#pragma once

#include "core/model/model.h"

#include <atomic>
#include <functional>
#include <string>

namespace ts::interp {

/// Called after each finished forward of a sweep with (done, total).
using Progress = std::function<void(int done, int total)>;

/// One attention head of the analysed stack's self-attention.
struct HeadRef {
    int layer = 0;
    int head = 0;
};

/// "dec" for decoder-only, "enc" for encoder-only models. Throws std::invalid_argument naming `what` for
/// encoder-decoder models (their analyses would need forward_seq2seq and a source sentence).
[[nodiscard]] std::string analysis_stack(const ModelConfig& c, const char* what);

/// log softmax(logits)[token] in nats, computed in double. Throws std::invalid_argument when token is outside the row.
[[nodiscard]] float log_prob(const Eigen::Ref<const RowVectorF>& logits, int token);

/// Throws std::invalid_argument "<what>: <name> <token> outside [0, vocab_size = V)".
void check_token(const ModelConfig& c, int token, const char* what, const char* name);

/// True when the caller asked to stop.
[[nodiscard]] inline bool cancelled(const std::atomic<bool>* cancel) {
    return cancel && cancel->load(std::memory_order_relaxed);
}

}  // namespace ts::interp
