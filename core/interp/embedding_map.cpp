// PCA, cosine neighbours and the stacked residual stream (see embedding_map.h).
#include "core/interp/embedding_map.h"

#include "core/trace/trace.h"

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace ts::interp {

Pca fit_pca(const Eigen::Ref<const MatrixRM>& x, int k) {
    const Eigen::Index n = x.rows(), d = x.cols();
    if (n < 2) throw std::invalid_argument("PCA needs at least 2 rows, got " + std::to_string(n));
    if (k < 1 || k > d)
        throw std::invalid_argument("PCA: " + std::to_string(k) + " components of " + std::to_string(d) +
                                    " dimensions");
    if (!x.allFinite()) throw std::invalid_argument("PCA: the rows hold a value that is not finite");
    const Eigen::MatrixXd xd = x.cast<double>();
    const Eigen::RowVectorXd mean = xd.colwise().mean();
    const Eigen::MatrixXd xc = xd.rowwise() - mean;
    const Eigen::MatrixXd cov = (xc.transpose() * xc) / double(n - 1);
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(cov);
    if (es.info() != Eigen::Success) throw std::invalid_argument("PCA: the eigen-decomposition did not converge");
    const double total = std::max(cov.trace(), 0.0);
    Pca p;
    p.mean = mean.cast<float>();
    Eigen::MatrixXd comp(k, d);
    for (int i = 0; i < k; ++i) {  // eigenvalues come ascending
        const Eigen::Index col = d - 1 - i;
        Eigen::RowVectorXd v = es.eigenvectors().col(col).transpose();
        Eigen::Index arg = 0;
        v.cwiseAbs().maxCoeff(&arg);
        if (v[arg] < 0) v = -v;
        comp.row(i) = v;
        const double var = std::max(es.eigenvalues()[col], 0.0);
        p.variance.push_back(var);
        p.explained_ratio.push_back(total > 0 ? var / total : 0.0);
    }
    p.components = comp.cast<float>();
    p.projected = (xc * comp.transpose()).cast<float>();
    return p;
}

MatrixRM pca_project(const Pca& p, const Eigen::Ref<const MatrixRM>& x) {
    if (x.cols() != p.components.cols())
        throw std::invalid_argument("PCA projection: rows of " + std::to_string(x.cols()) + " values, components of " +
                                    std::to_string(p.components.cols()));
    return (x.rowwise() - p.mean) * p.components.transpose();
}

std::vector<Neighbour> nearest_by_cosine(const Eigen::Ref<const MatrixRM>& rows,
                                         const Eigen::Ref<const RowVectorF>& query, int k, int exclude) {
    if (k < 1) throw std::invalid_argument("nearest_by_cosine: k must be at least 1");
    if (rows.cols() != query.size())
        throw std::invalid_argument("nearest_by_cosine: rows of " + std::to_string(rows.cols()) + " values, query of " +
                                    std::to_string(query.size()));
    const double qn = query.cast<double>().norm();
    std::vector<Neighbour> all;
    for (Eigen::Index i = 0; i < rows.rows(); ++i) {
        if (i == exclude) continue;
        const double rn = rows.row(i).cast<double>().norm();
        if (!(rn > 0) || !(qn > 0)) continue;
        all.push_back({int(i), float(rows.row(i).cast<double>().dot(query.cast<double>()) / (rn * qn))});
    }
    const size_t n = std::min(all.size(), size_t(k));
    std::partial_sort(all.begin(), all.begin() + std::ptrdiff_t(n), all.end(),
                      [](const Neighbour& a, const Neighbour& b) {
                          return a.cosine > b.cosine || (a.cosine == b.cosine && a.row < b.row);
                      });
    all.resize(n);
    return all;
}

MatrixRM residual_stack(const Trace& trace, const std::string& stack, int n_layers) {
    auto need = [&](const std::string& name) -> const Tensor& {
        const Tensor* t = trace.find(name);
        if (!t || !t->is_f32_rows() || t->shape.size() != 2)
            throw std::invalid_argument("residual stream: " + name + " was not recorded");
        return *t;
    };
    const Tensor& x0 = need(stack == "enc" && trace.find("enc.embed.out") ? "enc.embed.out" : "embed.out");
    const Eigen::Index T = x0.rows(), d = x0.cols();
    MatrixRM out(T * (n_layers + 1), d);
    out.topRows(T) = x0.mat();
    for (int l = 0; l < n_layers; ++l) {
        const Tensor& r = need(stack + "." + std::to_string(l) + ".resid_ffn");
        if (r.rows() != T || r.cols() != d)
            throw std::invalid_argument("residual stream: " + stack + "." + std::to_string(l) +
                                        ".resid_ffn is not (T, d_model)");
        out.middleRows(T * (l + 1), T) = r.mat();
    }
    return out;
}

}  // namespace ts::interp
