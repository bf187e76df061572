// Embedding maps: principal component analysis of token embeddings or of the residual stream, for a 2-D scatter
// where words sit in the model's space, and cosine nearest neighbours (LIT's embedding projector; Mikolov et al. 2013
// for analogies in such spaces). PCA as sklearn.decomposition.PCA / torch.pca_lowrank on centered rows: the
// components are the top eigenvectors of the covariance XcᵀXc / (N − 1), computed in double precision.
#pragma once

#include "core/interp/interp_common.h"

#include <string>
#include <vector>

namespace ts::interp {

struct Pca {
    RowVectorF mean;                      ///< (d): the mean row that was subtracted
    MatrixRM components;                  ///< (k, d): unit principal directions, largest variance first; each row's
                                          ///< largest-magnitude entry is positive (a fixed sign, as a test can compare)
    std::vector<double> variance;         ///< (k): variance along each component (eigenvalue of the covariance)
    std::vector<double> explained_ratio;  ///< (k): variance / total variance of the rows, in [0, 1]
    MatrixRM projected;  ///< (N, k): the fitted rows in component coordinates, (x − mean) componentsᵀ
};

/// Fits k components to the rows of x (N, d). Throws std::invalid_argument when N < 2, k < 1 or k > d, or x holds a
/// value that is not finite.
[[nodiscard]] Pca fit_pca(const Eigen::Ref<const MatrixRM>& x, int k);
/// Rows of x (M, d) in the components' coordinates, (M, k). Throws std::invalid_argument when d differs.
[[nodiscard]] MatrixRM pca_project(const Pca& p, const Eigen::Ref<const MatrixRM>& x);

struct Neighbour {
    int row = 0;
    float cosine = 0;
};
/// The k rows of `rows` (N, d) with the largest cosine similarity to `query` (d), largest first, leaving out row
/// `exclude` (−1: none) and zero rows. Throws std::invalid_argument when d differs or k < 1.
[[nodiscard]] std::vector<Neighbour> nearest_by_cosine(const Eigen::Ref<const MatrixRM>& rows,
                                                       const Eigen::Ref<const RowVectorF>& query, int k,
                                                       int exclude = -1);

/// The residual stream of every layer of a trace, stacked layer-major: rows [l · T, (l + 1) · T) hold the input of
/// layer l ("<stack>.embed.out"-equivalent: "embed.out", or "enc.embed.out" for an encoder–decoder's encoder) for
/// l = 0 and the output of layer l − 1 ("<stack>.<l − 1>.resid_ffn") after it: ((n_layers + 1) · T, d_model).
/// Throws std::invalid_argument naming a tensor that was not recorded.
[[nodiscard]] MatrixRM residual_stack(const Trace& trace, const std::string& stack, int n_layers);

}  // namespace ts::interp
