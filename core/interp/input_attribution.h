// Input attribution: how much each input token contributed to one prediction. Three methods, as in Captum and
// Inseq, on the token embeddings (positions are kept):
//   gradient × input      score_i = Σ_d x_id ∂f/∂x_id (Shrikumar et al. 2016; Captum InputXGradient)
//   integrated gradients  score_i = Σ_d x_id · (1/m) Σ_k ∂f/∂x_id at α_k x, α_k = (k − ½)/m (Sundararajan et al.
//                         2017 eq. 3 with the midpoint rule, or an adaptive rule: IgRule; baseline: every token
//                         embedding 0); Σ_i score_i ≈ f(x) − f(0) ("completeness"), and the gap is reported
//   occlusion             score_i = f(x) − f(x with token i's embedding 0) (Zeiler & Fergus 2014; Captum Occlusion
//                         with a zero baseline); with a span w, the mean over the w-wide windows covering token i
// f is a token's log-probability at a position, or a contrast logit(A) − logit(B) ("why A and not B", Yin & Neubig
// 2022). Gradients come from the training backward (core/train/train_model.h, GradMode::InputsOnly), so they exist
// for the families TrainModel covers; occlusion runs the inference forward and works on every model.
#pragma once

#include "core/interp/interp_common.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ts::train {
class TrainModel;
}

namespace ts::interp {

enum class AttributionMethod { GradientTimesInput, IntegratedGradients, Occlusion };
/// "grad-x-input", "integrated-gradients", "occlusion".
[[nodiscard]] std::string_view name_of(AttributionMethod m);
/// The method named `name` (name_of's spelling); nullopt for another name.
[[nodiscard]] std::optional<AttributionMethod> parse_attribution_method(std::string_view name);

/// What is explained. Decoder-only: the prediction at query `position` (-1 = the last) of the input ids:
/// f = log softmax(logits[position])[token] (nats), or with contrast >= 0 f = logits[position][token] −
/// logits[position][contrast] (logit units).
struct AttributionTarget {
    int position = -1;
    int token = 0;
    int contrast = -1;
};

/// The reference input the methods compare with: every token embedding 0 (Captum's and Inseq's default), or the
/// mean of the token-embedding table (× √d_model when scale_embeddings) for every token. Positions stay in both.
/// The zero baseline is degenerate for models without additive positions whose first sub-layer starts with a norm
/// (RoPE + RMSNorm: every αx has the same direction, so f(0) is not the limit of f(αx)); the mean one is not.
enum class AttributionBaseline { Zero, MeanEmbedding };
/// "zero", "mean".
[[nodiscard]] std::string_view name_of(AttributionBaseline b);
[[nodiscard]] std::optional<AttributionBaseline> parse_attribution_baseline(std::string_view name);

/// Where integrated gradients evaluate the path.
///   Midpoint  α_k = (k − ½)/m, k = 1..m (Sundararajan et al. eq. 3 with the midpoint rule; Captum's "riemann_middle")
///   Adaptive  the trapezoid rule on the 16 intervals of α = j/16 (15 points inside, the ends' gradients are
///             computed anyway), then the intervals whose share of the scores is furthest from f(end) − f(start)
///             are halved, one new point each, until those errors sum to under kAdaptiveTolerance · |f(x) − f(b)|
///             or m points are used. For a path on which f changes by nats within a thousandth of it (the bundled
///             translation model's sharp heads) the midpoint rule needs thousands of points; the adaptive rule
///             spends its points there. Needs m ≥ 15 (below, the midpoint rule is used).
enum class IgRule { Midpoint, Adaptive };
/// "midpoint", "adaptive".
[[nodiscard]] std::string_view name_of(IgRule r);
[[nodiscard]] std::optional<IgRule> parse_ig_rule(std::string_view name);
inline constexpr int kAdaptiveStart = 15;
inline constexpr double kAdaptiveTolerance = 0.005;

struct AttributionOptions {
    AttributionMethod method = AttributionMethod::IntegratedGradients;
    AttributionBaseline baseline = AttributionBaseline::Zero;
    IgRule rule = IgRule::Midpoint;
    int steps = 50;     ///< integrated gradients: points on the path (1..4096; Adaptive: at most this many)
    int batch = 16;     ///< integrated gradients: points per forward/backward (1..4096)
    int span = 1;       ///< occlusion: tokens hidden at once (1..T)
    Progress progress;  ///< optional, after each forward (occlusion) or forward/backward (gradients)
    const std::atomic<bool>* cancel = nullptr;
};

/// Why gradients are not available for a config ("" when they are): encoder-only models and the switches
/// TrainModel has no backward pass for (parallel residual, partial rotary, embedding norm, relative position bias,
/// final_logits_bias, scale_lm_head, half-split sinusoids, token types, MLM head), and a sliding window shorter
/// than `seq_len` tokens.
[[nodiscard]] std::string gradient_unsupported(const ModelConfig& c, int seq_len = 0);

/// The backward pass of a Model: a TrainModel (GradMode::InputsOnly) over a float32 copy of its weights, made once
/// and reused across attributions (for GPT-2 small about 500 MB). Throws std::invalid_argument with
/// gradient_unsupported()'s reason.
class GradientModel {
public:
    explicit GradientModel(const Model& m);
    ~GradientModel();
    GradientModel(const GradientModel&) = delete;
    GradientModel& operator=(const GradientModel&) = delete;
    [[nodiscard]] train::TrainModel& net() { return *m_net; }
    [[nodiscard]] const ModelConfig& config() const;
    /// tok_emb[id] (× √d_model when scale_embeddings): the inputs being attributed, (ids.size(), d_model).
    [[nodiscard]] MatrixRM token_embeddings(const std::vector<int>& ids) const;
    /// The baseline's token-embedding row (d_model).
    [[nodiscard]] RowVectorF baseline_row(AttributionBaseline b) const;

private:
    std::unique_ptr<train::TrainModel> m_net;
};

/// Keeps one GradientModel made for one Model, so that repeated attributions of that model reuse its float32 copy
/// of the weights instead of making it again. Thread-safe. A lease is exclusive: while one is out, another lease
/// builds a GradientModel of its own, which is not kept. A lease for another Model replaces the kept one when it
/// ends.
class GradientModelCache {
public:
    GradientModelCache();
    /// The kept GradientModel of `m` (made now when none is kept, or the kept one is another model's), returned to
    /// the cache when the last copy of the pointer is gone. Throws as GradientModel's constructor.
    [[nodiscard]] std::shared_ptr<GradientModel> lease(const Model& m);
    /// Frees the kept GradientModel (a lease that is out is kept when it ends).
    void clear();

private:
    struct Slot;
    std::shared_ptr<Slot> m_slot;
};

/// Scores of one prediction of a decoder-only model.
struct Attribution {
    AttributionMethod method = AttributionMethod::IntegratedGradients;
    AttributionTarget target;   ///< position resolved (never -1)
    std::vector<float> scores;  ///< (position + 1): one per input token 0..position, in f's unit
    float value = 0;            ///< f(x)
    float baseline_value = 0;   ///< f with every token embedding at the baseline (the gradient methods')
    /// Integrated gradients: Σ scores − (value − baseline_value); NaN for the other methods.
    float completeness_gap = 0;
    bool cancelled = false;  ///< scores of unfinished work are NaN
};

/// Attribution of one prediction to the input tokens ids[0..position] (later tokens cannot matter to a causal
/// model). `grad` may be null for occlusion; the gradient methods need it (std::invalid_argument otherwise).
/// Throws std::invalid_argument for an encoder model, empty ids, a position outside [0, T), a token or contrast
/// outside the vocabulary, options out of range, and gradient_unsupported() reasons.
[[nodiscard]] Attribution attribute_tokens(const Model& m, GradientModel* grad, const std::vector<int>& ids,
                                           const AttributionTarget& target, const AttributionOptions& opt);

/// Attribution of every generated token of a translation. Row t explains f_t = log p(out[t] | src, dec_in[0..t])
/// (dec_in: the decoder inputs, the start token then the generated tokens shifted right; out: the tokens being
/// explained, out.size() == dec_in.size()).
struct Seq2SeqAttribution {
    AttributionMethod method = AttributionMethod::IntegratedGradients;
    MatrixRM source;  ///< (T, S): row t, the score of each source token
    MatrixRM target;  ///< (T, T): row t, the score of decoder inputs 0..t; NaN above the diagonal
    std::vector<float> value, baseline_value, completeness_gap;  ///< (T) each, as Attribution's
    bool cancelled = false;
};

/// Encoder–decoder attribution by gradient × input, integrated gradients (the source and target embeddings scaled
/// together along the path) or occlusion (one source or target token hidden at a time). Throws
/// std::invalid_argument for a model that is not encoder–decoder, empty or mismatched inputs, ids outside the
/// vocabulary, options out of range and gradient_unsupported() reasons.
[[nodiscard]] Seq2SeqAttribution attribute_translation(const Model& m, GradientModel* grad, const std::vector<int>& src,
                                                       const std::vector<int>& dec_in, const std::vector<int>& out,
                                                       const AttributionOptions& opt);

/// Spearman's rank correlation of two equally long vectors (average ranks for ties; scipy.stats.spearmanr), NaN
/// when either is constant or shorter than 2. Throws std::invalid_argument on different lengths.
[[nodiscard]] float spearman(const std::vector<float>& a, const std::vector<float>& b);

/// Per generated token t, Spearman's ρ of |source(t, ·)| (a Seq2SeqAttribution's source scores) with attn(t, ·) (the
/// cross-attention over the same pairs, e.g. the mean over decoder layers and heads): where attention and
/// attribution agree on which source tokens matter (Jain & Wallace 2019). (T) values, NaN for constant rows. Throws
/// std::invalid_argument when the shapes differ.
[[nodiscard]] std::vector<float> attention_attribution_rank_corr(const MatrixRM& source, const MatrixRM& attn);

}  // namespace ts::interp
