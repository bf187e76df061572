// Shared pieces of the interpretability analyses: stack choice, token checks, log-probabilities.
#include "core/interp/interp_common.h"

#include <cmath>
#include <stdexcept>

namespace ts::interp {

std::string analysis_stack(const ModelConfig& c, const char* what) {
    if (c.arch == Arch::EncoderDecoder)
        throw std::invalid_argument(std::string(what) + ": model '" + c.name +
                                    "' is encoder-decoder; this analysis runs decoder-only or encoder-only models");
    return c.arch == Arch::EncoderOnly ? "enc" : "dec";
}

float log_prob(const Eigen::Ref<const RowVectorF>& logits, int token) {
    if (token < 0 || token >= logits.size())
        throw std::invalid_argument("log_prob: token " + std::to_string(token) + " outside the logits row [0, " +
                                    std::to_string(logits.size()) + ")");
    const double mx = logits.maxCoeff();
    double sum = 0.0;
    for (Eigen::Index i = 0; i < logits.size(); ++i) sum += std::exp(double(logits[i]) - mx);
    return static_cast<float>(double(logits[token]) - mx - std::log(sum));
}

void check_token(const ModelConfig& c, int token, const char* what, const char* name) {
    if (token < 0 || token >= c.vocab_size)
        throw std::invalid_argument(std::string(what) + ": " + name + " " + std::to_string(token) +
                                    " outside [0, vocab_size = " + std::to_string(c.vocab_size) + ")");
}

}  // namespace ts::interp
