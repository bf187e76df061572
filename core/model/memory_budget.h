// A memory budget every long forward respects: how much a forward of T positions will hold (fitted from two tiny
// dry runs of the same model and capture, so it follows whatever the forward records) and how much the machine can
// give, so the app and the CLI refuse an over-budget request in one line instead of being killed by the kernel.
#pragma once

#include "core/model/model.h"

#include <cstddef>
#include <string>

namespace ts {

/// Bytes of /proc/meminfo's MemAvailable; 0 when unknown.
[[nodiscard]] size_t available_memory_bytes();

/// Memory a forward holds beyond the weights, linear in the number of positions: trace entries, the attention
/// sources (AttentionRows) and logits, fitted from dry runs; plus the forward's own scratch (estimated from the
/// config) and the T5 position bias (H · T · S per stack), the only (T, S) tensors a forward still builds.
struct ForwardMemoryFit {
    double fixed = 0, per_token = 0;
    ModelConfig config;
    /// Bytes for T query positions (and S_src encoder positions for encoder-decoder models; 0 otherwise).
    [[nodiscard]] size_t bytes(int T, int S_src = 0) const;
};
/// Runs `opt` (its capture, logits settings and temperature; no edits) on 4 and 8 positions and fits the line.
/// Throws what forward() throws.
[[nodiscard]] ForwardMemoryFit fit_forward_memory(const Model& m, const ForwardOptions& opt);

/// "4G", "512M", "1.5GB", "800K", a plain byte count, or a fraction of available memory in (0, 1] ("0.8").
/// Throws std::invalid_argument naming the text.
[[nodiscard]] size_t parse_memory_budget(const std::string& text, size_t available);
/// Default budget: 80 % of the memory available now (4 GiB when it cannot be read).
[[nodiscard]] size_t default_memory_budget();

/// "" when `need` fits in `budget`; else one line: what was asked, what it needs, the budget, and what to do.
[[nodiscard]] std::string memory_refusal(const std::string& what, size_t need, size_t budget, const std::string& advice);

/// Binary units: "512 B", "1.90 GiB", "12.00 KiB".
[[nodiscard]] std::string human_bytes(double bytes);

}  // namespace ts
