// Memory estimates and the budget (see core/model/memory_budget.h).
#include "core/model/memory_budget.h"

#include "core/kernels/threads.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ts {

size_t available_memory_bytes() {
    std::ifstream in("/proc/meminfo");
    std::string key;
    size_t kb = 0;
    std::string unit;
    while (in >> key >> kb >> unit)
        if (key == "MemAvailable:") return kb * 1024;
    return 0;
}

size_t default_memory_budget() {
    const size_t avail = available_memory_bytes();
    return avail ? avail / 5 * 4 : size_t(4) << 30;
}

namespace {
// Scratch of one forward for T positions and S keys: projections, head-major copies, head outputs, FFN
// activations, the per-thread (64, S) probability blocks, and the T5 bias when the model has one.
double workspace_bytes(const ModelConfig& c, int T, int S) {
    const double d = c.d_model, hd = double(c.n_heads) * c.d_head(), kd = double(c.n_kv_heads) * c.d_head();
    double floats = double(T) * (6 * d + 3 * hd + 4 * kd + 3 * double(c.d_ff));
    floats += double(compute_threads()) * 64 * S;
    if (c.relative_attention_bias) floats += 2.0 * c.n_heads * double(T) * S;
    return floats * 4;
}

double measured(const Model& m, const ForwardOptions& opt, int n) {
    const ModelConfig& c = m.config();
    ForwardOptions o = opt;
    o.edits.clear();
    // Masks sized for the real text do not fit the dry run's length; what is kept does not depend on them.
    for (MaskSpec* mask : {&o.self_mask, &o.enc_mask}) {
        if (mask->kind == MaskKind::Custom) mask->kind = MaskKind::None;
        mask->custom.clear();
        mask->key_padding.clear();
    }
    const std::vector<int> ids(size_t(n), 0);
    const ForwardResult r = c.arch == Arch::EncoderDecoder ? forward_seq2seq(m, ids, ids, o) : forward(m, ids, o);
    return double(r.trace->bytes() + r.trace->attention_bytes()) + double(r.logits.size() + r.hidden.size()) * 4;
}
}  // namespace

ForwardMemoryFit fit_forward_memory(const Model& m, const ForwardOptions& opt) {
    ForwardMemoryFit f;
    f.config = m.config();
    const int n = std::max(1, std::min(8, m.config().max_seq_len));
    const int n0 = std::max(1, n / 2);
    const double b0 = measured(m, opt, n0), b1 = measured(m, opt, n);
    const int pair = m.config().arch == Arch::EncoderDecoder ? 2 : 1;  // source and target positions both grow
    f.per_token = n > n0 ? std::max(0.0, (b1 - b0) / double(pair * (n - n0))) : b1 / double(pair * n);
    f.fixed = std::max(0.0, b1 - f.per_token * double(pair * n));
    return f;
}

size_t ForwardMemoryFit::bytes(int T, int S_src) const {
    const double positions = double(T) + double(S_src);
    double b = fixed + per_token * positions + workspace_bytes(config, T, T);
    if (S_src > 0) b += workspace_bytes(config, S_src, S_src);
    return size_t(b);
}

size_t parse_memory_budget(const std::string& text, size_t available) {
    const auto bad = [&] {
        return std::invalid_argument("memory budget '" + text +
                                     "' is not a size (e.g. 4G, 512M) or a fraction of available memory in (0, 1]");
    };
    std::istringstream in(text);
    double v = 0;
    if (!(in >> v) || !std::isfinite(v) || v <= 0) throw bad();
    std::string unit;
    in >> unit;
    for (char& ch : unit) ch = char(std::toupper(static_cast<unsigned char>(ch)));
    if (!unit.empty() && unit.back() == 'B' && unit.size() > 1) unit.pop_back();
    if (unit.empty() && v <= 1.0 && text.find('.') != std::string::npos) {
        if (!available) throw std::invalid_argument("memory budget '" + text + "' is a fraction, but this machine's "
                                                    "available memory cannot be read; give a size such as 4G");
        return size_t(v * double(available));
    }
    double mul = 1;
    if (unit == "K" || unit == "KI") mul = 1024.0;
    else if (unit == "M" || unit == "MI") mul = 1024.0 * 1024;
    else if (unit == "G" || unit == "GI") mul = 1024.0 * 1024 * 1024;
    else if (unit == "T" || unit == "TI") mul = 1024.0 * 1024 * 1024 * 1024;
    else if (!unit.empty() && unit != "B") throw bad();
    if (v * mul > 1e18) throw bad();
    return size_t(v * mul);
}

std::string human_bytes(double v) {
    const char* u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int p = 0;
    while (v >= 1024 && p < 4) {
        v /= 1024;
        ++p;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, p ? "%.2f %s" : "%.0f %s", v, u[p]);
    return buf;
}

std::string memory_refusal(const std::string& what, size_t need, size_t budget, const std::string& advice) {
    if (need <= budget) return "";
    return what + " needs about " + human_bytes(double(need)) + ", more than the memory budget of " +
           human_bytes(double(budget)) + ": " + advice;
}

}  // namespace ts
