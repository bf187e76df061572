// Token files, the train/held-out split and random batch windows.
#include "core/train/data.h"

#include "core/train/train_kernels.h"
#include "core/util/file.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

namespace ts::train {

namespace {
constexpr char kMagic[8] = {'T', 'S', 'T', 'O', 'K', 'E', 'N', 'S'};
}

void save_tokens(const std::filesystem::path& path, std::span<const int32_t> ids) {
    uint32_t width = 2;
    for (int32_t id : ids) {
        if (id < 0) throw std::invalid_argument("save_tokens: negative token id " + std::to_string(id));
        if (id > 65535) width = 4;
    }
    std::string bytes(kMagic, 8);
    const uint32_t version = 1;
    bytes.append(reinterpret_cast<const char*>(&version), 4);
    bytes.append(reinterpret_cast<const char*>(&width), 4);
    if (width == 4) {
        bytes.append(reinterpret_cast<const char*>(ids.data()), ids.size() * 4);
    } else {
        std::vector<uint16_t> narrow(ids.begin(), ids.end());
        bytes.append(reinterpret_cast<const char*>(narrow.data()), narrow.size() * 2);
    }
    write_file_atomic(path, bytes);  // core/util/file.h
}

std::vector<int32_t> load_tokens(const std::filesystem::path& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot open token file " + path.string());
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    size_t offset = 0;
    uint32_t width = 2;
    if (bytes.size() >= 16 && std::memcmp(bytes.data(), kMagic, 8) == 0) {
        uint32_t version = 0;
        std::memcpy(&version, bytes.data() + 8, 4);
        std::memcpy(&width, bytes.data() + 12, 4);
        if (version != 1) throw std::runtime_error(path.string() + ": token file version " + std::to_string(version) +
                                                   ", expected 1");
        if (width != 2 && width != 4)
            throw std::runtime_error(path.string() + ": bytes per token id " + std::to_string(width) +
                                     ", expected 2 or 4");
        offset = 16;
    }
    const size_t payload = bytes.size() - offset;
    if (payload % width != 0)
        throw std::runtime_error(path.string() + ": " + std::to_string(payload) + " payload bytes is not a multiple of " +
                                 std::to_string(width));
    std::vector<int32_t> ids(payload / width);
    for (size_t i = 0; i < ids.size(); ++i) {
        if (width == 2) {
            uint16_t v;
            std::memcpy(&v, bytes.data() + offset + 2 * i, 2);
            ids[i] = v;
        } else {
            std::memcpy(&ids[i], bytes.data() + offset + 4 * i, 4);
        }
    }
    return ids;
}

TokenDataset::TokenDataset(std::vector<int32_t> tokens, int vocab_size, int seq_len, double val_fraction)
    : m_tokens(std::move(tokens)), m_T(seq_len) {
    if (seq_len <= 0) throw std::invalid_argument("seq_len must be positive, got " + std::to_string(seq_len));
    if (!(val_fraction >= 0.0 && val_fraction < 1.0))
        throw std::invalid_argument("val_fraction must be in [0, 1), got " + std::to_string(val_fraction));
    for (size_t i = 0; i < m_tokens.size(); ++i)
        if (m_tokens[i] < 0 || m_tokens[i] >= vocab_size)
            throw std::invalid_argument("token " + std::to_string(m_tokens[i]) + " at position " + std::to_string(i) +
                                        " is outside the model's vocabulary [0, " + std::to_string(vocab_size) + ")");
    m_n_train = int64_t(double(m_tokens.size()) * (1.0 - val_fraction));
    if (m_n_train < int64_t(seq_len) + 1)
        throw std::invalid_argument("the training part holds " + std::to_string(m_n_train) + " tokens, need at least " +
                                    std::to_string(seq_len + 1) + " (seq_len + 1)");
}

void TokenDataset::sample_batch(uint64_t seed, uint64_t step, int B, std::vector<int>& inputs,
                                std::vector<int>& targets, double repeat_fraction, int repeat_period,
                                double repeat_random) const {
    inputs.resize(size_t(B) * m_T);
    targets.resize(size_t(B) * m_T);
    const uint64_t n_starts = uint64_t(m_n_train - m_T);  // window [s, s + T] inside the train part
    const uint64_t key = rng_key(seed, step, 0xDA7A);
    for (int b = 0; b < B; ++b) {
        const uint64_t s = mix64(key + uint64_t(b)) % n_starts;
        // A second, independent draw decides whether this window is a doubled passage.
        const double u = double(mix64(key + 0x5EED0000ull + uint64_t(b)) >> 11) * 0x1.0p-53;
        const bool doubled = u < repeat_fraction;
        const int longest = (m_T + 2) / 2, shortest = std::min(8, longest);
        const int half = repeat_period > 0
                             ? std::min(repeat_period, m_T)
                             : shortest + int(mix64(key + 0x9E3779B9ull * uint64_t(b + 1)) % uint64_t(longest - shortest + 1));
        // Some repeated spans are i.i.d. tokens drawn from the train stream (unigram frequencies): with no language to
        // lean on, the later copies can only be predicted by copying.
        const double v = double(mix64(key + 0xC0FFEE00ull + uint64_t(b)) >> 11) * 0x1.0p-53;
        const bool random_span = doubled && v < repeat_random;
        auto token_at = [&](int i) {
            if (!doubled) return m_tokens[s + uint64_t(i)];
            const int j = i % half;
            return random_span ? m_tokens[mix64(key + 0xABCD0000ull * uint64_t(b + 1) + uint64_t(j)) % uint64_t(m_n_train)]
                               : m_tokens[s + uint64_t(j)];
        };
        for (int t = 0; t < m_T; ++t) {
            inputs[size_t(b) * m_T + t] = token_at(t);
            targets[size_t(b) * m_T + t] = token_at(t + 1);
        }
    }
}

int TokenDataset::val_windows() const { return val_size() > m_T ? int((val_size() - 1) / m_T) : 0; }

int TokenDataset::val_batch(int first_window, int B, std::vector<int>& inputs, std::vector<int>& targets) const {
    const int n = std::max(0, std::min(B, val_windows() - first_window));
    inputs.resize(size_t(n) * m_T);
    targets.resize(size_t(n) * m_T);
    for (int b = 0; b < n; ++b) {
        const int64_t s = m_n_train + int64_t(first_window + b) * m_T;
        for (int t = 0; t < m_T; ++t) {
            inputs[size_t(b) * m_T + t] = m_tokens[s + t];
            targets[size_t(b) * m_T + t] = m_tokens[s + t + 1];
        }
    }
    return n;
}

uint64_t TokenDataset::fingerprint() const {
    uint64_t h = 1469598103934665603ull;
    for (int32_t id : m_tokens) {
        h ^= uint64_t(uint32_t(id));
        h *= 1099511628211ull;
    }
    return h ^ uint64_t(m_tokens.size());
}

}  // namespace ts::train
