// Cross-attention arg-max vs reference alignment counts (see alignment_hits.h).
#include "core/eval/alignment_hits.h"

#include "core/util/json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <string>

namespace ts::eval {

AlignmentHitCounter::AlignmentHitCounter(int n_layers, int n_heads) : m_n_layers(n_layers), m_n_heads(n_heads) {
    if (n_layers < 1 || n_heads < 1)
        throw std::invalid_argument("AlignmentHitCounter: need n_layers >= 1 and n_heads >= 1, got " +
                                    std::to_string(n_layers) + " and " + std::to_string(n_heads));
    m_hits.assign(size_t(n_layers) * size_t(n_heads + 1), 0);
}

void AlignmentHitCounter::add(const std::vector<const Tensor*>& cross_probs, const PairLinks& links, int shift) {
    if (int(cross_probs.size()) != m_n_layers)
        throw std::invalid_argument("alignment hits: expected cross-attention of " + std::to_string(m_n_layers) +
                                    " layers, got " + std::to_string(cross_probs.size()));
    int64_t T = -1, S = -1;
    for (int l = 0; l < m_n_layers; ++l) {
        const Tensor* p = cross_probs[size_t(l)];
        if (!p || p->rank() != 3 || p->dim(0) != m_n_heads || (T >= 0 && (p->dim(1) != T || p->dim(2) != S)))
            throw std::invalid_argument("alignment hits: layer " + std::to_string(l) +
                                        " cross-attention is not (n_heads=" + std::to_string(m_n_heads) +
                                        ", T, S) like the others" + (p ? ", got " + p->shape_str() : ""));
        T = p->dim(1);
        S = p->dim(2);
    }
    for (const std::vector<int>& l : links)
        for (const int s : l)
            if (s < 0 || s >= S)
                throw std::invalid_argument("alignment hits: link to source position " + std::to_string(s) +
                                            " outside [0, " + std::to_string(S) + ")");
    std::vector<double> mean(static_cast<size_t>(S));
    for (size_t j = 0; j < links.size(); ++j) {
        const int64_t t = int64_t(j) + shift;
        if (links[j].empty() || t < 0 || t >= T) continue;
        const auto is_link = [&](int64_t s) {
            return std::find(links[j].begin(), links[j].end(), int(s)) != links[j].end();
        };
        ++m_counted;
        std::vector<int> unique(links[j]);
        std::sort(unique.begin(), unique.end());
        unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
        m_chance += double(unique.size()) / double(S);
        for (int l = 0; l < m_n_layers; ++l) {
            const float* base = cross_probs[size_t(l)]->data.data();
            std::fill(mean.begin(), mean.end(), 0.0);
            for (int h = 0; h < m_n_heads; ++h) {
                const float* row = base + (int64_t(h) * T + t) * S;
                m_hits[size_t(l * (m_n_heads + 1) + h)] += is_link(std::max_element(row, row + S) - row);
                for (int64_t s = 0; s < S; ++s) mean[size_t(s)] += row[s];
            }
            const int64_t mean_argmax = std::max_element(mean.begin(), mean.end()) - mean.begin();
            m_hits[size_t(l * (m_n_heads + 1) + m_n_heads)] += is_link(mean_argmax);
        }
    }
}

double AlignmentHitCounter::rate(int layer, int head) const {
    if (layer < 0 || layer >= m_n_layers || head < -1 || head >= m_n_heads)
        throw std::out_of_range("alignment hits: no layer " + std::to_string(layer) + " head " + std::to_string(head));
    const int col = head < 0 ? m_n_heads : head;
    return m_counted ? double(m_hits[size_t(layer * (m_n_heads + 1) + col)]) / double(m_counted) : 0.0;
}

HeadHitRate AlignmentHitCounter::best_head() const {
    HeadHitRate best;
    for (int l = 0; l < m_n_layers; ++l)
        for (int h = 0; h < m_n_heads; ++h)
            if (best.layer < 0 || rate(l, h) > best.rate) best = {l, h, rate(l, h)};
    return best;
}

HeadHitRate AlignmentHitCounter::best_layer_average() const {
    HeadHitRate best;
    for (int l = 0; l < m_n_layers; ++l)
        if (best.layer < 0 || rate(l, -1) > best.rate) best = {l, -1, rate(l, -1)};
    return best;
}

// --- alignment files ----------------------------------------------------------------------------------------------

PairLinks links_of(const AlignmentRecord& r) {
    PairLinks links(r.align.size());
    for (size_t j = 0; j < r.align.size(); ++j)
        if (r.align[j] >= 0) links[j] = {r.align[j]};
    return links;
}

AlignmentFile load_alignment_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read alignment file " + path.string());
    AlignmentFile f;
    std::string line;
    int64_t no = 0;
    const auto bad = [&](const std::string& why) {
        return std::runtime_error(path.string() + ":" + std::to_string(no) + ": " + why);
    };
    while (std::getline(in, line)) {
        ++no;
        if (line.empty()) continue;
        nlohmann::json j;
        try {
            j = parse_json(line, "line");
        } catch (const std::runtime_error&) {
            throw bad("not a JSON object");
        }
        if (!j.is_object()) throw bad("not a JSON object");
        try {
            if (no == 1) {
                if (j.value("format", std::string()) != "ts-ibm1-alignments-1")
                    throw bad("expected a header with \"format\": \"ts-ibm1-alignments-1\" (made by "
                              "assets/corpus/ibm1_align.py)");
                f.source_prefix = j.at("source_prefix").get<int>();
                continue;
            }
            AlignmentRecord r;
            r.src_len = j.at("src_len").get<int>();
            r.tgt_len = j.at("tgt_len").get<int>();
            r.src_fnv1a = std::stoull(j.at("src_fnv1a").get<std::string>(), nullptr, 16);
            r.tgt_fnv1a = std::stoull(j.at("tgt_fnv1a").get<std::string>(), nullptr, 16);
            r.align = j.at("align").get<std::vector<int>>();
            if (int(r.align.size()) != r.tgt_len)
                throw bad("align has " + std::to_string(r.align.size()) + " entries, tgt_len is " +
                          std::to_string(r.tgt_len));
            for (const int a : r.align)
                if (a < -1 || a >= r.src_len)
                    throw bad("position " + std::to_string(a) + " outside [-1, " + std::to_string(r.src_len) + ")");
            f.records[{j.at("line").get<int64_t>(), j.at("direction").get<std::string>()}] = std::move(r);
        } catch (const nlohmann::json::exception& e) {
            throw bad(std::string("bad record: ") + e.what());
        } catch (const std::logic_error& e) {  // stoull
            throw bad(std::string("bad hash: ") + e.what());
        }
    }
    if (no == 0) throw std::runtime_error("alignment file " + path.string() + " is empty");
    return f;
}

}  // namespace ts::eval
