// Attention rollout (product of residual-augmented head-mean attention matrices) and attention flow (exact max-flow
// through the layered attention graph, Edmonds–Karp on a dense residual graph).
#include "core/interp/attention_flow.h"

#include <limits>
#include <stdexcept>

namespace ts::interp {

namespace {

using MatrixRMd = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

int check_stack(const std::vector<MatrixRM>& attn, const char* what) {
    if (attn.empty()) throw std::invalid_argument(std::string(what) + ": no attention layers");
    const Eigen::Index T = attn[0].rows();
    for (size_t l = 0; l < attn.size(); ++l)
        if (attn[l].rows() != T || attn[l].cols() != T || T == 0)
            throw std::invalid_argument(std::string(what) + ": layer " + std::to_string(l) + " attention is (" +
                                        std::to_string(attn[l].rows()) + ", " + std::to_string(attn[l].cols()) +
                                        "), expected (T, T) with T = " + std::to_string(T) + " for every layer");
    return static_cast<int>(T);
}

MatrixRMd augmented_d(const MatrixRM& a) {
    MatrixRMd r = 0.5 * a.cast<double>();
    r.diagonal().array() += 0.5;
    for (Eigen::Index i = 0; i < r.rows(); ++i) r.row(i) /= r.row(i).sum();
    return r;
}

// Max-flow on the layered graph: node (l, i) has id l*T + i; layer l >= 1 has edges (l, i) -> (l-1, j) with
// capacity cap[l-1](i, j). Flows are kept per edge; the residual graph is implicit (forward: cap - flow, backward:
// flow). Everything is preallocated once and reused for every (source, sink) pair.
class LayeredMaxFlow {
public:
    LayeredMaxFlow(std::vector<MatrixRMd> cap, int T)
        : m_cap(std::move(cap)), m_T(T), m_L(static_cast<int>(m_cap.size())), m_parent((m_L + 1) * T),
          m_queue((m_L + 1) * T) {
        for (const MatrixRMd& c : m_cap) m_flow.push_back(MatrixRMd::Zero(c.rows(), c.cols()));
    }

    // Maximum flow from output node (L, out) to input node (0, in).
    double solve(int out, int in) {
        for (MatrixRMd& f : m_flow) f.setZero();
        const int source = m_L * m_T + out, sink = in;
        double total = 0.0;
        while (bfs(source, sink)) {
            double bottleneck = std::numeric_limits<double>::infinity();
            for (int v = sink; v != source; v = m_parent[v]) bottleneck = std::min(bottleneck, residual(m_parent[v], v));
            for (int v = sink; v != source; v = m_parent[v]) push(m_parent[v], v, bottleneck);
            total += bottleneck;
        }
        return total;
    }

private:
    static constexpr double kEps = 1e-12;

    // Residual capacity of u -> v, adjacent layers.
    [[nodiscard]] double residual(int u, int v) const {
        const int lu = u / m_T, iu = u % m_T, lv = v / m_T, iv = v % m_T;
        if (lv == lu - 1) return m_cap[lu - 1](iu, iv) - m_flow[lu - 1](iu, iv);  // along an edge
        return m_flow[lv - 1](iv, iu);                                            // against an edge
    }
    void push(int u, int v, double amount) {
        const int lu = u / m_T, iu = u % m_T, lv = v / m_T, iv = v % m_T;
        if (lv == lu - 1)
            m_flow[lu - 1](iu, iv) += amount;
        else
            m_flow[lv - 1](iv, iu) -= amount;
    }
    // Shortest augmenting path by BFS; fills m_parent. True when the sink is reached.
    bool bfs(int source, int sink) {
        std::fill(m_parent.begin(), m_parent.end(), -1);
        m_parent[source] = source;
        size_t head = 0, tail = 0;
        m_queue[tail++] = source;
        while (head < tail) {
            const int u = m_queue[head++];
            const int l = u / m_T, i = u % m_T;
            if (l >= 1) {
                const double* cap = m_cap[l - 1].data() + size_t(i) * m_T;
                const double* flow = m_flow[l - 1].data() + size_t(i) * m_T;
                for (int j = 0; j < m_T; ++j) {
                    const int v = (l - 1) * m_T + j;
                    if (m_parent[v] < 0 && cap[j] - flow[j] > kEps) {
                        m_parent[v] = u;
                        if (v == sink) return true;
                        m_queue[tail++] = v;
                    }
                }
            }
            if (l < m_L) {
                const MatrixRMd& flow = m_flow[l];
                for (int k = 0; k < m_T; ++k) {
                    const int v = (l + 1) * m_T + k;
                    if (m_parent[v] < 0 && flow(k, i) > kEps) {
                        m_parent[v] = u;
                        m_queue[tail++] = v;
                    }
                }
            }
        }
        return false;
    }

    std::vector<MatrixRMd> m_cap, m_flow;
    int m_T, m_L;
    std::vector<int> m_parent, m_queue;
};

}  // namespace

std::vector<MatrixRM> head_mean_attention(const Trace& trace, const std::string& stack, int n_layers,
                                          const std::string& part) {
    if (part != "attn" && part != "cross_attn")
        throw std::invalid_argument("head_mean_attention: part is '" + part + "', expected attn or cross_attn");
    std::vector<MatrixRM> out;
    for (int l = 0; l < n_layers; ++l) {
        const std::string name = stack + "." + std::to_string(l) + "." + part + ".probs";
        const Tensor* t = trace.find(name);
        if (!t) throw std::invalid_argument("head_mean_attention: trace has no '" + name + "' (capture it)");
        if (t->rank() != 3 || (part == "attn" && t->shape[1] != t->shape[2]))
            throw std::invalid_argument("head_mean_attention: '" + name + "' is " + t->shape_str() +
                                        (part == "attn" ? ", expected (H, T, T)" : ", expected (H, T, S)"));
        const int64_t H = t->shape[0], T = t->shape[1], K = t->shape[2];
        MatrixRM mean = MatrixRM::Zero(T, K);
        for (int64_t h = 0; h < H; ++h) mean += ConstMapRM(t->data.data() + size_t(h) * T * K, T, K);
        out.push_back(mean / float(H));
    }
    return out;
}

MatrixRM mean_of(const std::vector<MatrixRM>& ms) {
    if (ms.empty()) throw std::invalid_argument("mean_of: no matrices");
    MatrixRM sum = ms.front();
    for (size_t i = 1; i < ms.size(); ++i) {
        if (ms[i].rows() != sum.rows() || ms[i].cols() != sum.cols())
            throw std::invalid_argument("mean_of: matrix " + std::to_string(i) + " has another shape");
        sum += ms[i];
    }
    return sum / float(ms.size());
}

MatrixRM residual_augmented(const MatrixRM& a) {
    if (a.rows() != a.cols())
        throw std::invalid_argument("residual_augmented: attention is (" + std::to_string(a.rows()) + ", " +
                                    std::to_string(a.cols()) + "), expected square (T, T)");
    return augmented_d(a).cast<float>();
}

MatrixRM attention_rollout(const std::vector<MatrixRM>& attn) {
    const int T = check_stack(attn, "attention_rollout");
    MatrixRMd r = MatrixRMd::Identity(T, T);
    for (const MatrixRM& a : attn) r = augmented_d(a) * r;  // later layers multiply from the left
    return r.cast<float>();
}

AttentionFlow attention_flow(const std::vector<MatrixRM>& attn, const Progress& progress,
                             const std::atomic<bool>* cancel) {
    const int T = check_stack(attn, "attention_flow");
    if (T > kMaxFlowPositions)
        throw std::invalid_argument("attention_flow: " + std::to_string(T) + " positions; exact max-flow is limited to " +
                                    std::to_string(kMaxFlowPositions) + " (cost grows as T^4 per layer)");
    std::vector<MatrixRMd> cap;
    for (const MatrixRM& a : attn) cap.push_back(augmented_d(a));
    LayeredMaxFlow solver(std::move(cap), T);
    AttentionFlow out;
    out.flow = MatrixRM::Constant(T, T, std::numeric_limits<float>::quiet_NaN());
    out.normalized = out.flow;
    for (int i = 0; i < T; ++i) {
        double sum = 0.0;
        std::vector<double> row(T);
        for (int j = 0; j < T; ++j) {
            if (cancelled(cancel)) {
                out.cancelled = true;
                return out;
            }
            row[j] = solver.solve(i, j);
            sum += row[j];
        }
        for (int j = 0; j < T; ++j) {
            out.flow(i, j) = static_cast<float>(row[j]);
            out.normalized(i, j) = static_cast<float>(sum > 0.0 ? row[j] / sum : 0.0);
        }
        if (progress) progress(i + 1, T);
    }
    return out;
}

}  // namespace ts::interp
