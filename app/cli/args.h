// A small command-line parser shared by the subcommands: --key value, --flag, positional arguments.
// Unknown options are an error that names them (the CLI then exits non-zero with one line).
#pragma once

#include "core/kernels/quant_gemm.h"
#include "core/kernels/threads.h"
#include "core/util/json.h"
#include "core/util/number.h"

#include <limits>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <unistd.h>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ts::cli {

class Args {
public:
    /// `flags` take no value; `options` take exactly one; `multi` take one or more (until the next --x).
    Args(int argc, char** argv, int first, std::set<std::string> options, std::set<std::string> flags = {},
         std::set<std::string> multi = {}) {
        for (int i = first; i < argc; ++i) {
            std::string a = argv[i];
            if (a.rfind("--", 0) == 0) {
                std::string key = a.substr(2);
                std::optional<std::string> inline_value;
                if (auto eq = key.find('='); eq != std::string::npos) {
                    inline_value = key.substr(eq + 1);
                    key = key.substr(0, eq);
                }
                if (flags.count(key)) {
                    m_flags.insert(key);
                } else if (options.count(key)) {
                    if (inline_value) m_values[key] = {*inline_value};
                    else if (i + 1 < argc) m_values[key] = {argv[++i]};
                    else throw std::invalid_argument("option --" + key + " needs a value");
                } else if (multi.count(key)) {
                    auto& v = m_values[key];
                    if (inline_value) v.push_back(*inline_value);
                    while (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) v.push_back(argv[++i]);
                    if (v.empty()) throw std::invalid_argument("option --" + key + " needs at least one value");
                } else {
                    throw std::invalid_argument("unknown option --" + key);
                }
            } else {
                m_positional.push_back(a);
            }
        }
    }
    [[nodiscard]] bool flag(const std::string& k) const { return m_flags.count(k) > 0; }
    [[nodiscard]] bool has(const std::string& k) const { return m_values.count(k) > 0; }
    [[nodiscard]] std::string get(const std::string& k, const std::string& def = "") const {
        auto it = m_values.find(k);
        return it == m_values.end() ? def : it->second.front();
    }
    [[nodiscard]] std::string required(const std::string& k) const {
        if (!has(k)) throw std::invalid_argument("missing required option --" + k);
        return get(k);
    }
    [[nodiscard]] const std::vector<std::string>& all(const std::string& k) const {
        static const std::vector<std::string> empty;
        auto it = m_values.find(k);
        return it == m_values.end() ? empty : it->second;
    }
    /// A finite number (the whole value: "1e3x", "nan" and "inf" are refused). Throws std::invalid_argument.
    [[nodiscard]] double number(const std::string& k, double def) const {
        if (!has(k)) return def;
        const std::optional<double> v = parse_real(get(k));
        if (!v) throw std::invalid_argument("option --" + k + " expects a number, got " + quote_value(get(k)));
        return *v;
    }
    /// A number within [lo, hi] (the same bounds as the window's control where there is one).
    [[nodiscard]] double real(const std::string& k, double def, double lo, double hi) const {
        return has(k) ? parse_real_in(get(k), lo, hi, "option --" + k) : def;
    }
    /// A whole number within [lo, hi]: "2.5", "1e9" beyond hi and "-3" below lo are refused, never truncated or
    /// clamped. Throws std::invalid_argument naming the option and the range.
    [[nodiscard]] int64_t integer(const std::string& k, int64_t def, int64_t lo, int64_t hi) const {
        return has(k) ? parse_int_in(get(k), lo, hi, "option --" + k) : def;
    }
    [[nodiscard]] const std::vector<std::string>& positional() const { return m_positional; }

private:
    std::map<std::string, std::vector<std::string>> m_values;
    std::set<std::string> m_flags;
    std::vector<std::string> m_positional;
};

/// --help or -h anywhere from argv[first] on: prints `usage` to stdout and returns true; the subcommand then
/// returns 0. Every subcommand calls this before parsing, so `SUBCOMMAND --help` always answers with its usage
/// while usage errors stay one line on stderr with a non-zero exit.
/// "1,2,3" -> {1, 2, 3} (the value of --ids); throws std::invalid_argument naming the first item that is not an integer.
[[nodiscard]] inline std::vector<int> parse_ids(const std::string& s) {
    std::vector<int> ids;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        const auto v = parse_int(item);  // core/util/number.h: the whole item
        if (!v || *v < std::numeric_limits<int>::min() || *v > std::numeric_limits<int>::max())
            throw std::invalid_argument("--ids expects comma-separated integers, got " + quote_value(item));
        ids.push_back(int(*v));
    }
    return ids;
}

[[nodiscard]] inline bool print_help_if_asked(int argc, char** argv, int first, const char* usage) {
    for (int i = first; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(usage, stdout);
            return true;
        }
    }
    return false;
}

/// Prints each warning as one line "transformer-studio <cmd>: warning: <text>" on stderr; the command goes on.
inline void print_warnings(const char* cmd, const std::vector<std::string>& warnings) {
    for (const std::string& w : warnings) std::fprintf(stderr, "transformer-studio %s: warning: %s\n", cmd, w.c_str());
}

/// A progress callback that draws "loading weights [#####     ]  52%" on stderr (for model loading).
inline std::function<void(uint64_t, uint64_t)> terminal_progress(const char* what = "loading weights") {
    return [what, last = -1, tty = isatty(2) != 0](uint64_t done, uint64_t total) mutable {
        const int pct = total ? int(100.0 * double(done) / double(total)) : 100;
        if (pct == last || !tty) return;  // only on a terminal: logs and error output stay one line
        last = pct;
        char bar[31];
        for (int i = 0; i < 30; ++i) bar[i] = i < pct * 30 / 100 ? '#' : ' ';
        bar[30] = 0;
        std::fprintf(stderr, "\r%s [%s] %3d%%%s", what, bar, pct, pct >= 100 ? "\n" : "");
    };
}

/// The compute settings every command that runs a model takes: --threads N (an integer in [1, 256]) and
/// --quant-activations float|int8 (products with a GGUF file's Q4_0 / Q8_0 weights: exact, or llama.cpp's arithmetic;
/// core/kernels/quant_gemm.h). Options a command does not declare are simply absent. Throws std::invalid_argument.
inline void apply_compute_options(const Args& args) {
    if (args.has("threads")) set_compute_threads(parse_thread_count(args.get("threads")));
    if (args.has("quant-activations")) {
        const auto a = parse_quant_activations(args.get("quant-activations"));
        if (!a)
            throw std::invalid_argument("--quant-activations expects float or int8, got " +
                                        quote_value(args.get("quant-activations")));
        set_quant_activations(*a);
    }
}

}  // namespace ts::cli
