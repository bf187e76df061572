// Figure builders of every panel, GL-free and ImGui-free: the window's panels and the headless `render` command
// call the same functions, so an exported file shows exactly what the window shows. Each takes the UI state (every
// knob) and the newest Snapshot and returns plot::Figures (pure data).
#pragma once

#include "app/plot/figure.h"
#include "app/session/compare_job.h"
#include "app/session/interp_jobs.h"
#include "app/session/state.h"
#include "app/session/training_lab.h"
#include "app/session/worker.h"
#include "core/interp/embedding_map.h"
#include "core/interp/neurons.h"
#include "core/model/memory_budget.h"  // human_bytes

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ts::figures {

using namespace ts::studio;  // the session layer (app/session) below: state, ForwardSpec, worker, snapshots

// --- shared helpers ---------------------------------------------------------------------------------------------------
/// Token labels of the snapshot ("3:cat" style when `with_index`), one per position.
[[nodiscard]] std::vector<std::string> snapshot_token_labels(const Snapshot& s, bool with_index = false);
/// Encoder–decoder snapshots: the encoder input's labels (the source); otherwise the same as snapshot_token_labels.
[[nodiscard]] std::vector<std::string> snapshot_source_labels(const Snapshot& s, bool with_index = false);
/// One head's (rows, cols) slice of a (H, rows, cols) tensor (copy). Empty when absent.
[[nodiscard]] std::vector<float> tensor_head_slice(const Tensor* t, int head, int* rows, int* cols);
/// The state's layer / head clamped to the model; query -1 (last token) resolved against T tokens.
[[nodiscard]] int clamp_layer(const UiState& st, const Model* m);
[[nodiscard]] int clamp_head(const UiState& st, const Model* m);
[[nodiscard]] int resolve_query(const UiState& st, int T);

// --- names shown for configuration values ---------------------------------------------------------------------------
/// The architecture as the interface names it, translated ("encoder–decoder", 中文 "编码器–解码器"); config.json keeps
/// its own spelling (to_string).
[[nodiscard]] const char* arch_label(Arch a);
/// The position encoding as the interface names it, translated ("sinusoidal" → 正弦).
[[nodiscard]] const char* position_label(PositionKind p);

// --- tokens -----------------------------------------------------------------------------------------------------------
/// Bytes per token (bars) with the tokens as categories; hover/CSV label "id N". source: the encoder input of an
/// encoder–decoder snapshot.
[[nodiscard]] plot::Figure tokens_figure(const Snapshot& s, bool source = false);

// --- attention --------------------------------------------------------------------------------------------------------
/// True when the snapshot's model is encoder–decoder: then UiState::attn_source picks encoder self-attention,
/// decoder self-attention or cross-attention.
[[nodiscard]] bool has_attention_sources(const Snapshot& s);
/// Trace prefix of one layer's attention: "dec.3.attn." (decoder self; encoder-only models: "enc.3.attn."),
/// "enc.3.attn." (source "encoder") or "dec.3.cross_attn." (source "cross", probs (n_heads, T, S)). The source is
/// ignored unless has_attention_sources(s).
[[nodiscard]] std::string attention_prefix(const Snapshot& s, AttnSource source, int layer);
/// Layers of that stack (n_enc_layers for "encoder" on encoder–decoder models, else n_layers).
[[nodiscard]] int attention_layers(const Snapshot& s, AttnSource source);
/// "decoder self-attention" | "encoder self-attention" | "cross-attention" | "" (not encoder–decoder).
[[nodiscard]] std::string attention_source_title(const Snapshot& s, AttnSource source);
/// The selected head's attention weights (query rows × key columns), st.attn_unit_scale / st.attn_annotate,
/// st.attn_source (encoder–decoder models; cross-attention: decoder (target) rows × encoder (source) columns).
/// No heatmap when the trace has no `<prefix>probs` (see attention_prefix).
[[nodiscard]] plot::Figure attention_head_figure(const Snapshot& s, int layer, int head, const UiState& st);
/// The settings a forward of the app runs with, in a few words for a figure title: "temperature 1.5 · sliding-window
/// mask (4) · 2 heads ablated (zero)", or "the model as trained" when none is changed. Reads st.apply_to_model,
/// attn_temperature, attn_mask, attn_window, attn_padding, ablated_heads and ablate_mode.
[[nodiscard]] std::string forward_settings_label(const UiState& st);
/// One model, one text, two settings (the Attention panel's "pin as A", #33): the selected head's weights in forward
/// A (pinned earlier) and forward B (the current one), drawn as attention_head_figure draws them but on one colour
/// range, and B − A (diverging, symmetric about 0 over at least ±0.01; a cell masked in both forwards is grey, one masked in only one
/// shows the weight it gained or lost). Titles carry `label_a` / `label_b`. Throws std::invalid_argument when the two
/// forwards are of different models or texts, or either lacks the head's weights.
[[nodiscard]] std::vector<plot::Figure> attention_ab_figures(const Snapshot& a, const Snapshot& b, int layer, int head,
                                                             const UiState& st, const std::string& label_a,
                                                             const std::string& label_b);
/// Thumbnail of one head for the layer × head grid (no labels). Above 256 queries or keys its overview pools to at
/// most 96 × 96 blocks (the big heatmap's to 256 × 256).
[[nodiscard]] plot::Figure attention_thumb_figure(const Snapshot& s, int layer, int head, bool unit_scale,
                                                  AttnSource source = AttnSource::Decoder);
/// True when `layer`'s attention (source `source`) has more than 256 queries or keys, so that its heads are drawn
/// as pooled overviews (each cell the largest weight of a block), computed per head on first use.
[[nodiscard]] bool attention_overview_pooled(const Snapshot& s, int layer, AttnSource source);
/// Computes the pooled overview of one head that attention_thumb_figure draws (with step_kinds, also the ones
/// attention_head_figure and the step view draw) and keeps it in the attention block's cache, so that they then
/// only copy it (app/figures/overview_jobs.h). Nothing for a head that is not pooled or not recorded. Thread-safe:
/// any thread may call it on a snapshot it holds.
void warm_attention_overview(const Snapshot& s, int layer, int head, AttnSource source, bool step_kinds = false);
/// Every head of a layer, or every layer × head (grid_all): full small figures titled "layer l, head h" on one
/// shared 0..1 color scale.
[[nodiscard]] std::vector<plot::Figure> attention_head_grid(const Snapshot& s, int layer, bool grid_all,
                                                            AttnSource source = AttnSource::Decoder);
/// QKᵀ, ÷√d_head, + mask, softmax, ·V for one head (5 figures; a step that was not recorded has no heatmap).
[[nodiscard]] std::vector<plot::Figure> attention_step_figures(const Snapshot& s, int layer, int head,
                                                               AttnSource source = AttnSource::Decoder);

// --- softmax lab ------------------------------------------------------------------------------------------------------
/// "2, 1, 0.1" -> numbers; on error returns {} and sets *error.
[[nodiscard]] std::vector<float> parse_logits(const std::string& s, std::string* error);

struct SoftmaxLab {
    bool typed = false;                  ///< typed logits (else one query row of the model)
    std::string source;                  ///< "layer 1, head 3, query 5 'cat'" or "typed logits"
    std::string error;                   ///< parse error of typed logits, or "no scores recorded"
    std::vector<float> logits;           ///< z (S)
    std::vector<std::string> labels;     ///< key labels (S)
    std::vector<uint8_t> mask;           ///< 1 = visible
    std::vector<float> probs, probs_t1;  ///< softmax at T and at T = 1
    float entropy = 0, pmax = 0;
    int amax = 0, n_visible = 0, qpos = 0;
    /// Scores as bars, probabilities at T (bars) vs T = 1 (dots), entropy against temperature.
    std::vector<plot::Figure> figures;
    /// The mask of every query row (S × S, 1 = visible, masked cells grey) under st.sm_mask; the Softmax lab paints
    /// it in "custom" mode. Row qpos is the row shown in the bars.
    plot::Figure mask_figure;
};
/// Everything the Softmax lab shows, from the state (sm_* knobs) and the snapshot's scaled scores.
[[nodiscard]] SoftmaxLab softmax_lab(const UiState& st, const Snapshot* snap);

// --- activations ------------------------------------------------------------------------------------------------------
struct ActivationDef {
    const char* name;
    const char* formula;
    std::function<float(float)> f, df;
};
/// The 10 curves of the panel (index = UiState::act_shown index), LeakyReLU slope alpha, Swish beta.
[[nodiscard]] std::vector<ActivationDef> activation_defs(float alpha, float beta);
/// x = −2, −0.5, 0, 0.5, 2 (the course's example points).
[[nodiscard]] const std::vector<float>& activation_examples();
/// Curves f(x) (grad = false) or f′(x) over ±st.act_range with example dots, for the shown activations.
[[nodiscard]] plot::Figure activation_curves(const UiState& st, bool grad);
/// Draws the histogram of the model's real FFN pre-activations at `layer` behind the curves of `curves` (from
/// activation_curves): 60 bins over the curve plot's x range, density scaled so the tallest bar reaches 90% of the
/// curves' y range, drawn from the bottom of that range (first series, so it lies in the background), legend entry
/// "real pre-activations (layer L, density scaled)", hover label = the true density. Adds the share of values
/// outside the x range to the note. Returns false (figure unchanged) when the trace has no `<stack>.L.ffn.pre_act`.
bool overlay_ffn_pre_activations(plot::Figure& curves, const Snapshot& s, int layer);
/// Histogram of the model's FFN pre-activations (and post-activations) at `layer`; nullopt when not recorded.
[[nodiscard]] std::optional<plot::Figure> ffn_histogram(const Snapshot& s, int layer);

// --- normalization ----------------------------------------------------------------------------------------------------
/// The fixed-seed synthetic batch (64, 128) ~ N(norm_mean, norm_std²) the Normalization panel normalizes.
[[nodiscard]] MatrixRM normalization_synthetic_batch(const UiState& st);
/// LayerNorm, RMSNorm, BatchNorm on a fixed-seed synthetic batch 64 × 128 ~ N(norm_mean, norm_std²).
[[nodiscard]] std::vector<plot::Figure> normalization_synthetic_figures(const UiState& st);
/// LayerNorm and RMSNorm on the residual stream after `layer`'s attention; empty when not recorded.
/// *caption gets one line describing the data.
[[nodiscard]] std::vector<plot::Figure> normalization_model_figures(const UiState& st, const Snapshot& s, int layer,
                                                                    std::string* caption = nullptr);

// --- positions --------------------------------------------------------------------------------------------------------
/// 0 sinusoidal table, 1 chosen dimensions, 2 similarity vs offset, 3 RoPE angle per pair, 4 RoPE dot vs offset.
[[nodiscard]] std::vector<plot::Figure> position_figures(const UiState& st);
/// T5's relative position buckets (app/figures/relative_bias_figures.cpp): bucket against key − query, encoder and
/// decoder, for these settings.
[[nodiscard]] plot::Figure relative_bucket_figure(int num_buckets, int max_distance);
/// The learned bias of every head of `stack` ("enc" | "dec") against key − query; nullopt without
/// relative_attention_bias.
[[nodiscard]] std::optional<plot::Figure> relative_bias_heads_figure(const Model& m, const std::string& stack);
/// One head's bias over (query i, key j) for n_tokens positions (2..128); future keys masked in the decoder.
[[nodiscard]] std::optional<plot::Figure> relative_bias_heatmap_figure(const Model& m, const std::string& stack,
                                                                       int head, int n_tokens);

// --- predictions ------------------------------------------------------------------------------------------------------
/// Next-token distribution after position q under sample_temperature / top_k / top_p (bars) vs plain softmax.
[[nodiscard]] plot::Figure next_token_figure(const Snapshot& s, const UiState& st, int q);
/// The mask token of the snapshot's tokenizer ("[MASK]", else "<mask>"), or -1 when it has none.
[[nodiscard]] int mask_token_id(const Snapshot& s);
/// True when the snapshot's model has a masked-LM head (BERT) and logits for every position.
[[nodiscard]] bool has_fill_mask(const Snapshot& s);
/// Positions of the mask token in the snapshot's text (empty without a mask token).
[[nodiscard]] std::vector<int> mask_positions(const Snapshot& s);
/// Fill-mask: for each mask position, the `top` most likely tokens under softmax(logits) of the masked-LM head
/// (bars, probability printed above each). Empty when the model has no MLM head or the text no mask token.
[[nodiscard]] std::vector<plot::Figure> fill_mask_figures(const Snapshot& s, int top = 10);
/// Logit lens heatmap (layers × last ≤ 48 positions); nullopt when not computed.
[[nodiscard]] std::optional<plot::Figure> logit_lens_figure(const Snapshot& s);

// --- training (Training panel) ---------------------------------------------------------------------------------------
/// Learning rate at `step` (≥ 1) of Vaswani et al. 2017, eq. 3: d_model^-0.5 · min(step^-0.5, step · warmup^-1.5);
/// warmup 0 = no warm-up (inverse square root from the first step). Throws std::invalid_argument for step < 1.
[[nodiscard]] double noam_lr(double step, double d_model, double warmup);
/// A weight after `steps` SGD updates with L2 weight decay: w ← w − lr · (grad + λ · w).
[[nodiscard]] double weight_after_decay(double w, double lr, double lambda, double grad, int steps);
/// Cross-entropy (nats) of `target` under softmax(logits) with label smoothing ε, as PyTorch's
/// CrossEntropyLoss(label_smoothing=ε): (1 − ε) · (−log p_y) + ε · mean over all V classes of (−log p_j).
/// Throws std::invalid_argument for a target outside the logits or ε outside [0, 1].
[[nodiscard]] double smoothed_cross_entropy(std::span<const float> logits, int target, double eps);
/// Keep (1) / drop (0) flags for n units, each dropped with probability p; deterministic in `seed`.
[[nodiscard]] std::vector<uint8_t> dropout_mask(size_t n, double p, uint64_t seed);
/// The warm-up schedule at the state's train_d_model / train_warmup, against the same without warm-up (log axes).
[[nodiscard]] plot::Figure lr_schedule_figure(const UiState& st);
/// Inverted dropout (p = train_dropout) on the query token's residual vector after the state's layer: before/after
/// bars of its first features, and the mean over 1000 masks against x (on the diagonal: E[y] = x).
[[nodiscard]] std::vector<plot::Figure> dropout_figures(const UiState& st, const Snapshot& s);
/// One weight over steps with decay λ = train_weight_decay, learning rate train_lr, gradient 0 and train_grad.
[[nodiscard]] plot::Figure weight_decay_figure(const UiState& st);
/// Label smoothing (ε = train_label_smoothing) on a 10-token vocabulary: the target distribution, and the loss
/// against the correct token's probability (minimum at 1 − ε + ε/V instead of 1).
[[nodiscard]] std::vector<plot::Figure> label_smoothing_figures(const UiState& st);

// --- the training lab (Training panel, topic "lab"; render --lab-run DIR) ------------------------------------------
/// The lab's live curves against the optimizer step, `marker` (≥ 0) drawn as a vertical line on each (the
/// timeline's step): [0] train loss (thin: per step; thick: 20-step mean) and held-out loss, nats/token;
/// [1] learning rate; [2] gradient L2 norm per layer before clipping (log scale); [3] the largest logit and the
/// largest log Z (PaLM's z-loss penalises (log Z)²); [4] attention entropy of every head on the probe, nats;
/// [5] the best induction and previous-token scores on the probe (a threshold line at 0.5). Empty history: the
/// figures have no series and a note saying the run has not started.
[[nodiscard]] std::vector<plot::Figure> lab_figures(const LabHistory& h, int64_t marker = -1);
/// One lab figure by name: "loss", "lr", "grad-norm", "logits", "entropy", "heads" (lab_figures' order).
[[nodiscard]] const std::vector<std::string>& lab_figure_names();
/// Two lab runs side by side (view lab-compare; the Training tab's "compare with"): [0] held-out loss of A (solid)
/// and B (dashed), nats/token; [1] B − A of the held-out loss at A's evaluation steps (B interpolated linearly;
/// below 0: B is ahead); [2] gradient L2 norm of all parameters before clipping (10-step means, log scale);
/// [3] the largest logit; [4] the best induction score on the probe. Run names label the curves ("A: name").
[[nodiscard]] std::vector<plot::Figure> lab_compare_figures(const LabHistory& a, const LabHistory& b,
                                                            const std::string& name_a, const std::string& name_b);
/// One head's attention on the lab's probe in two runs at one step, and their difference: A, B (viridis, 0..1) and
/// B − A (diverging, symmetric). Rows are queries, columns keys, labelled with the probe's letters.
[[nodiscard]] std::vector<plot::Figure> lab_compare_attention_figures(const ProbeAttention& a, const ProbeAttention& b,
                                                                      const std::string& name_a,
                                                                      const std::string& name_b, int layer, int head);
/// Names of lab_compare_figures' figures in order: "val-loss", "val-loss-diff", "grad-norm", "logits", "induction".
[[nodiscard]] const std::vector<std::string>& lab_compare_figure_names();

// --- neurons (Neurons panel) and embedding maps (Residual panel) ----------------------------------------------------
// Neurons are the FFN hidden units of interp::neuron_stack (the encoder of an encoder–decoder) at a layer clamped to
// that stack; the builders throw std::runtime_error / std::invalid_argument when the snapshot lacks the activations.
/// st.neuron when it is a neuron of the model, else the most active neuron at `position`.
[[nodiscard]] int selected_neuron(const UiState& st, const Snapshot& s, int layer, int position);
/// Neuron × token heatmap of the `rows` neurons most active on the text; `row_neurons` receives each row's neuron.
[[nodiscard]] plot::Figure neuron_heatmap_figure(const Snapshot& s, int layer, int rows,
                                                 std::vector<int>* row_neurons = nullptr);
/// Bars: the k neurons with the largest activation at one token.
[[nodiscard]] plot::Figure neuron_top_figure(const Snapshot& s, int layer, int position, int k = 12);
/// Bars: one neuron's activation at every token.
[[nodiscard]] plot::Figure neuron_text_figure(const Snapshot& s, int layer, int neuron);
/// The neuron's max-activating contexts from an index: a row per example, `before` + 1 + `after` token columns
/// around its peak, each token's own activation as colour and the token as cell text (one forward per example).
[[nodiscard]] plot::Figure neuron_examples_figure(const interp::NeuronIndex& ix, const Model& m, const TextCodec& codec,
                                                  int layer, int neuron, int before = 10, int after = 3);
/// PCA (2 components) of the model's token embeddings, computed once per model and kept while the model lives.
[[nodiscard]] std::shared_ptr<const interp::Pca> embedding_pca(const std::shared_ptr<const Model>& m);
/// Scatter of every token (at most ~6000, coloured Latin-script / Chinese / other) on PC1–PC2 of `p`, the text's
/// tokens labelled with their cosine nearest neighbours on hover; explained variance on the axes.
[[nodiscard]] plot::Figure embedding_map_figure(const Snapshot& s, const TextCodec& codec, const interp::Pca& p);
/// Each token's residual stream (embedding, then after every layer) as a path on the PCA of all of them.
[[nodiscard]] plot::Figure residual_map_figure(const Snapshot& s);

// --- residual stream --------------------------------------------------------------------------------------------------
[[nodiscard]] plot::Figure residual_norm_figure(const Snapshot& s, int q);
struct NormCurves {
    std::vector<std::string> names;
    std::vector<double> pre, post;
    std::string error;
};
/// Mean token L2 norm after every sub-layer of two random 16-layer models differing only in norm placement
/// (deterministic seeds; a few ms).
[[nodiscard]] NormCurves random_init_curves();
[[nodiscard]] std::vector<plot::Figure> prepost_norm_figures(const NormCurves& nc);

// --- model ------------------------------------------------------------------------------------------------------------
struct ParameterCounts {
    std::vector<std::pair<std::string, double>> by_component;  ///< sorted by name
    double total = 0;
    [[nodiscard]] double get(const std::string& component) const;
};
[[nodiscard]] ParameterCounts parameter_counts(const Model& m);
[[nodiscard]] std::string human_count(double v, const char* unit);
[[nodiscard]] plot::Figure parameter_figure(const Model& m);
/// KV-cache bytes (fp16) against context length for MHA / GQA / MQA variants; a marker line at `context`.
[[nodiscard]] plot::Figure kv_cache_figure(const Model& m, int context);
/// The quantization lens (the Model panel's comparison, view quant-lens): per position KL(reference || model) of the
/// next-token distributions (bars; positions whose top-1 tokens differ in the second colour), per layer the residual
/// stream's relative L2 error (log scale), and per layer and head the mean |Δ attention probability|. Values are
/// r.diff's (core/interp/model_diff.h). Empty when r holds an error.
[[nodiscard]] std::vector<plot::Figure> compare_figures(const studio::CompareResult& r);

// --- causal analyses (core/interp) ------------------------------------------------------------------------------------
/// (n_layers, n_heads) heatmap of Δ log p(target) when each head alone is ablated.
[[nodiscard]] plot::Figure ablation_sweep_figure(const InterpResult& r);
/// Restored metric heatmaps: residual stream (layer × position) and head outputs (layer × head), −1..1.
[[nodiscard]] std::vector<plot::Figure> patching_figures(const InterpResult& r);
/// Direct logit attribution: bars by layer (embeddings, attention, MLP) and a layer × head heatmap.
[[nodiscard]] std::vector<plot::Figure> logit_attribution_figures(const InterpResult& r, int n_layers);
/// Attention rollout of the snapshot's attention (output position × input token, rows sum to 1).
[[nodiscard]] plot::Figure attention_rollout_figure(const Snapshot& s);
/// Attention flow (normalised rows) of an InterpResult of kind Flow.
[[nodiscard]] plot::Figure attention_flow_figure(const InterpResult& r);
/// The head detectors' scores, one layer × head heatmap (0..1, share of attention) per kind of interp::kHeadKinds:
/// previous-token, duplicate-token, induction, first token. Views head-detectors (all four) and one per kind.
[[nodiscard]] std::vector<plot::Figure> head_detector_figures(const InterpResult& r);
/// Input attribution of the last position's prediction: one bar per input token (blue raises f, red lowers it),
/// with f(x), f(0) and the completeness gap in the note. View input-attribution.
[[nodiscard]] plot::Figure input_attribution_figure(const InterpResult& r);
/// Decoder-only: input_attribution_figure. Encoder–decoder: the attribution of every generated token to the source
/// tokens (diverging heatmap) and, beside it, the cross-attention of the same pairs, with the rank correlation.
[[nodiscard]] std::vector<plot::Figure> input_attribution_figures(const InterpResult& r);

}  // namespace ts::figures
