// The view registry (one row and one builder per view), view building, and the forward request shared by app and
// CLI (see views.h); the options of `render` and session files are in view_options.cpp.
#include "app/i18n/tr.h"
#include "app/figures/views.h"
#include "app/session/limits.h"
#include "app/session/neuron_index.h"

#include "app/plot/ticks.h"
#include "app/plot/writers.h"
#include "app/figures/figures.h"
#include "app/session/seq2seq.h"
#include "core/util/json.h"
#include "core/util/number.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

namespace ts::figures {

namespace {

const std::vector<std::string> kForwardKnobs = {"attn-temperature", "attn-mask", "attn-window", "attn-padding", "ablate",
                                                "ablate-mode"};

// The head detectors' knobs (UiState detect_*).
const std::vector<std::string> kDetectorKnobs = {"random-tokens", "random-length", "exclude-bos", "exclude-current"};

std::vector<std::string> with_knobs(std::vector<std::string> v) {
    v.insert(v.end(), kForwardKnobs.begin(), kForwardKnobs.end());
    return v;
}

}  // namespace

const ViewInfo* find_view(const std::string& name) {
    for (const auto& v : all_views())
        if (v.name == name) return &v;
    return nullptr;
}

std::string default_view_for_panel(Panel panel) {
    static const std::pair<Panel, const char*> map[] = {{Panel::Tokens, "tokens"},
                                                        {Panel::Attention, "attention"},
                                                        {Panel::Softmax, "softmax-lab"},
                                                        {Panel::Activations, "activations"},
                                                        {Panel::Neurons, "neuron-heatmap"},
                                                        {Panel::Normalization, "normalization"},
                                                        {Panel::Positions, "positions-table"},
                                                        {Panel::Predictions, "predictions"},
                                                        {Panel::Residual, "residual"},
                                                        {Panel::Model, "parameters"},
                                                        {Panel::Causal, "ablation-sweep"},
                                                        {Panel::Training, "lr-schedule"}};
    for (const auto& [p, v] : map)
        if (panel == p) return v;
    return "";
}

std::string describe_views() {
    std::ostringstream os;
    os << "Views (transformer-studio render --view NAME ...):\n";
    std::optional<Panel> panel;
    for (const auto& v : all_views()) {
        if (v.panel != panel) {
            panel = v.panel;
            os << "\n" << name_of(v.panel) << "\n";
        }
        os << "  " << v.name << std::string(v.name.size() < 22 ? 22 - v.name.size() : 1, ' ') << v.description << "\n";
        if (!v.options.empty()) {
            os << std::string(24, ' ') << "options:";
            for (const auto& o : v.options) os << " --" << o;
            os << "\n";
        }
    }
    os << "\nOption values: --layer N --head N --query N (-1 = last token); --temperature T (softmax: the lab's T, "
          "predictions: sampling T);\n--mask none|causal|sliding|padding|custom (custom: "
          "--set sm_paint=[1,0,...] --set sm_paint_n=N, N×N row-major) --window W --padding K --logits \"2,1,0.1\" "
          "(typed logits instead of a model row);\n--attn-temperature T --attn-mask M --attn-window W (applied to the "
          "model's forward pass); --unit-scale --no-annotate;\n--attn-source decoder|encoder|cross (encoder–decoder "
          "models: decoder self-, encoder self- or cross-attention);\n--alpha A (LeakyReLU) --beta B (Swish) --range R --curves "
          "tanh,sigmoid,relu,leaky_relu,gelu,gelu_tanh,swish,glu,swiglu,geglu;\n--mean M --std S --gamma G --shift B "
          "--eps E; --d-model D --base B --positions N --rope-theta T --interleaved; --top-k K --top-p P;\n--context T; "
          "--ablate L.H,L.H --ablate-mode zero|mean (heads knocked out in every forward); --target TOKEN --minus TOKEN "
          "(text; first token; default: the top prediction);\n--corrupt TEXT --answer TOKEN --wrong TOKEN (activation "
          "patching: corrupted prompt of the same token length, metric logit(answer) − logit(wrong)). "
          "Any other knob: --set key=value (the keys of a session file).\n";
    return os.str();
}

// --- forward ----------------------------------------------------------------------------------------------------------

void check_view_knobs(const UiState& st, const std::string& view, const ModelConfig& c) {
    const ViewInfo* v = find_view(view);
    const auto reads = [&](const char* option) {
        return v && std::find(v->options.begin(), v->options.end(), option) != v->options.end();
    };
    const bool encoder = c.arch == Arch::EncoderDecoder && st.attn_source == AttnSource::Encoder;
    const int layers = encoder ? c.n_enc_layers : c.n_layers;
    const std::string stack =
        c.arch == Arch::EncoderDecoder ? (encoder ? "this model's encoder" : "this model's decoder") : "this model";
    if (reads("layer") && (st.layer < 0 || st.layer >= layers))
        throw std::invalid_argument("--layer " + std::to_string(st.layer) + ": " + stack + " has " +
                                    std::to_string(layers) + " layers (0 to " + std::to_string(layers - 1) + ")");
    if (reads("head") && (st.head < 0 || st.head >= c.n_heads))
        throw std::invalid_argument("--head " + std::to_string(st.head) + ": this model has " +
                                    std::to_string(c.n_heads) + " heads per layer (0 to " +
                                    std::to_string(c.n_heads - 1) + ")");
    if (reads("neuron") && st.neuron >= c.d_ff)
        throw std::invalid_argument("option --neuron " + std::to_string(st.neuron) +
                                    ": the model has d_ff = " + std::to_string(c.d_ff) + " neurons per layer (0 to " +
                                    std::to_string(c.d_ff - 1) + ")");
    for (const auto& h : st.ablated_heads)
        if (h[0] < 0 || h[0] >= c.n_layers || h[1] < 0 || h[1] >= c.n_heads)
            throw std::invalid_argument("--ablate " + std::to_string(h[0]) + "." + std::to_string(h[1]) +
                                        ": no such head (this model has " + std::to_string(c.n_layers) +
                                        " layers of " + std::to_string(c.n_heads) + " heads)");
}

std::shared_ptr<const Snapshot> run_forward_now(const UiState& st, const LoadedModel& m, bool translate,
                                                std::optional<Panel> panel) {
    if (!m.model || !m.codec) throw std::runtime_error("no model loaded");
    auto tokens = std::make_shared<const TokenizedText>(tokenize_text(st.text, *m.codec, m.model->config().max_seq_len));
    ForwardRequest r = make_forward_request(forward_spec(st, m, panel), m, tokens);
    if (translate && r.translation) r.kind = ForwardRequest::Kind::Translate;
    else if (translate) throw std::runtime_error("--translate needs an encoder-decoder model folder with translation.json");
    return run_forward_request(r, 1);
}

// --- building ---------------------------------------------------------------------------------------------------------

/// What a view's builder reads and writes: the state, the forward pass and model it may need, the layer and head it
/// shows (clamped to the model; for encoder–decoder attention views, to the chosen stack), and the figures it adds.
struct ViewBuild {
    const std::string& view;
    const UiState& st;
    const Snapshot* snap;
    const LoadedModel* model;
    ViewFigures out{};
    const Model* m = nullptr;  ///< the snapshot's model, else the loaded one (may be null)
    int layer = 0, head = 0;
    std::string src_tag{};  ///< encoder–decoder attention views: "dec_", "enc_" or "cross_" in file stems
    std::string lh{};       ///< "<src_tag>layerL_headH"

    const Snapshot& need_snap() const {
        if (!snap) throw std::runtime_error("view " + view + " needs a forward pass of the text");
        if (!snap->error.empty()) throw std::runtime_error("the forward pass failed: " + snap->error);
        if (!snap->trace || !snap->tokens || snap->tokens->ids.empty())
            throw std::runtime_error("view " + view + " needs some text (the text is empty)");
        return *snap;
    }
    const Model& need_model() const {
        if (model && model->model) return *model->model;
        if (snap && snap->model) return *snap->model;
        throw std::runtime_error("view " + view + " needs a model");
    }
    /// Runs one analysis on the loaded model; `patch` (kPatchResid, kPatchHeads) says what patching restores.
    InterpResult need_interp(InterpResult::Kind kind, int patch = kPatchResid) const {
        if (!model || !model->model) throw std::runtime_error("view " + view + " needs a model");
        InterpResult r = run_interp(kind, st, *model, -1, {}, nullptr, patch);
        if (!r.error.empty()) throw std::runtime_error(r.error);
        return r;
    }
    void add(plot::Figure f, std::string name) {
        out.figures.push_back(std::move(f));
        out.names.push_back(std::move(name));
    }
};

namespace {

// --- the builders, one per view or family of views (all_views says which view each builds) -------------------------

void build_tokens(ViewBuild& b) { b.add(tokens_figure(b.need_snap(), true), "tokens"); }

void build_ablation_sweep(ViewBuild& b) {
    b.add(ablation_sweep_figure(b.need_interp(InterpResult::Kind::Sweep)), "ablation_sweep");
}

// Patching restores the residual stream (layer × position) or the head outputs (layer × head); the figure of
// that kind is the one whose view is the view asked for.
void add_patching(ViewBuild& b, int patch, const char* file) {
    for (const auto& f : patching_figures(b.need_interp(InterpResult::Kind::Patching, patch)))
        if (f.view == b.view) b.add(f, file);
}
void build_patching_resid(ViewBuild& b) { add_patching(b, kPatchResid, "patching_resid"); }
void build_patching_heads(ViewBuild& b) { add_patching(b, kPatchHeads, "patching_heads"); }

// Direct logit attribution: figure 0 by layer, 1 by head (logit_attribution_figures' order).
void add_logit_attribution(ViewBuild& b, size_t pick, const char* file) {
    const InterpResult r = b.need_interp(InterpResult::Kind::Attribution);
    if (r.attribution && !r.attribution->error.empty()) throw std::runtime_error(r.attribution->error);
    auto figs = logit_attribution_figures(r, b.need_model().config().n_layers);
    b.add(std::move(figs.at(pick)), file);
}
void build_logit_attribution(ViewBuild& b) { add_logit_attribution(b, 0, "logit_attribution_layers"); }
void build_logit_attribution_heads(ViewBuild& b) { add_logit_attribution(b, 1, "logit_attribution_heads"); }

void build_attention_rollout(ViewBuild& b) { b.add(attention_rollout_figure(b.need_snap()), "attention_rollout"); }

// The head detectors: all four kinds (interp::kHeadKinds' order), or one.
void add_head_detectors(ViewBuild& b, int pick) {
    const InterpResult r = b.need_interp(InterpResult::Kind::Heads);
    auto figs = head_detector_figures(r);
    const char* files[] = {"heads_previous_token", "heads_duplicate_token", "heads_induction", "heads_first_token"};
    for (int k = 0; k < int(figs.size()); ++k)
        if (pick < 0 || pick == k) b.add(std::move(figs[size_t(k)]), files[k]);
    if (pick < 0) b.out.columns = 2;
}
void build_head_detectors(ViewBuild& b) { add_head_detectors(b, -1); }
void build_heads_previous_token(ViewBuild& b) { add_head_detectors(b, 0); }
void build_heads_duplicate_token(ViewBuild& b) { add_head_detectors(b, 1); }
void build_heads_induction(ViewBuild& b) { add_head_detectors(b, 2); }
void build_heads_first_token(ViewBuild& b) { add_head_detectors(b, 3); }

void build_input_attribution(ViewBuild& b) {
    const InterpResult r = b.need_interp(InterpResult::Kind::Inputs);
    auto figs = input_attribution_figures(r);
    const char* files[] = {"input_attribution", "cross_attention"};
    for (size_t i = 0; i < figs.size() && i < 2; ++i) b.add(std::move(figs[i]), files[i]);
    if (figs.size() > 1) b.out.columns = 2;
}

void build_attention_flow(ViewBuild& b) {
    b.add(attention_flow_figure(b.need_interp(InterpResult::Kind::Flow)), "attention_flow");
}

void build_attention(ViewBuild& b) {
    plot::Figure f = attention_head_figure(b.need_snap(), b.layer, b.head, b.st);
    if (!f.heatmap)
        throw std::runtime_error("attention probabilities of layer " + std::to_string(b.layer) + " were not recorded");
    b.add(std::move(f), "attention_" + b.lh);
}

// One head under two settings of the model on the same text: A (the model as trained, or --ab-set's changes to the
// current settings) and B (the current settings), and B − A: the Attention panel's "pin these settings as A".
void build_attention_ab(ViewBuild& b) {
    const Snapshot& snap_b = b.need_snap();
    if (!b.model || !b.model->model) throw std::runtime_error("view attention-ab needs a model");
    UiState st_a = b.st;
    if (st_a.ab_set.empty()) {
        st_a.apply_to_model = false;
        st_a.ablated_heads.clear();
    }
    for (const std::string& assignment : b.st.ab_set) set_state_field(st_a, assignment);
    check_view_knobs(st_a, b.view, b.m->config());
    const auto snap_a = run_forward_now(st_a, *b.model, false, Panel::Attention);
    if (!snap_a->error.empty()) throw std::runtime_error("forward A failed: " + snap_a->error);
    auto figs = attention_ab_figures(*snap_a, snap_b, b.layer, b.head, b.st, forward_settings_label(st_a),
                                     forward_settings_label(b.st));
    const char* names[] = {"attention_a_", "attention_b_", "attention_b_minus_a_"};
    for (size_t i = 0; i < figs.size(); ++i) b.add(std::move(figs[i]), names[i] + b.lh);
    b.out.columns = 3;
}

// Every head of the chosen layer, or (all) of every layer, on one shared 0..1 scale.
void add_attention_heads(ViewBuild& b, bool all) {
    const Snapshot& s = b.need_snap();
    b.out.figures = attention_head_grid(s, b.layer, all, b.st.attn_source);
    if (b.out.figures.empty()) throw std::runtime_error("no attention probabilities were recorded");
    const int H = s.model->config().n_heads;
    b.out.columns = H;
    for (size_t i = 0; i < b.out.figures.size(); ++i)
        b.out.names.push_back(b.src_tag + "layer" + std::to_string(all ? int(i) / H : b.layer) + "_head" +
                              std::to_string(int(i) % H));
}
void build_attention_layer(ViewBuild& b) { add_attention_heads(b, false); }
void build_attention_grid(ViewBuild& b) { add_attention_heads(b, true); }

void build_attention_steps(ViewBuild& b) {
    b.out.figures = attention_step_figures(b.need_snap(), b.layer, b.head, b.st.attn_source);
    b.out.columns = 5;
    const char* steps[] = {"1_scores", "2_scaled", "3_masked", "4_softmax", "5_values"};
    for (int k = 0; k < 5; ++k) b.out.names.push_back(b.lh + "_" + steps[k]);
}

// The Softmax lab's figures: 0 scores, 1 probabilities, 2 entropy (softmax_lab's order), 3 the mask; -1 the first
// three side by side.
void add_softmax_lab(ViewBuild& b, int pick) {
    if (!b.st.sm_use_typed) b.need_snap();
    SoftmaxLab lab = softmax_lab(b.st, b.snap);
    if (!lab.error.empty()) throw std::runtime_error("softmax lab: " + lab.error);
    if (pick == 3) return b.add(lab.mask_figure, "softmax_mask");
    const char* names[] = {"softmax_scores", "softmax_probs", "softmax_entropy"};
    for (int k = 0; k < 3; ++k)
        if (pick < 0 || pick == k) b.add(lab.figures[size_t(k)], names[k]);
    if (pick < 0) b.out.columns = 3;
}
void build_softmax_scores(ViewBuild& b) { add_softmax_lab(b, 0); }
void build_softmax(ViewBuild& b) { add_softmax_lab(b, 1); }
void build_softmax_entropy(ViewBuild& b) { add_softmax_lab(b, 2); }
void build_softmax_mask(ViewBuild& b) { add_softmax_lab(b, 3); }
void build_softmax_lab(ViewBuild& b) { add_softmax_lab(b, -1); }

// The activation functions (or their derivatives). With a forward pass at hand (the app's Export; `render` runs
// none for these views) the real FFN pre-activations go behind the curves, as in the window.
void add_activations(ViewBuild& b, bool derivative, const char* file) {
    plot::Figure f = activation_curves(b.st, derivative);
    if (b.snap && b.snap->trace && b.st.act_overlay) overlay_ffn_pre_activations(f, *b.snap, b.layer);
    b.add(std::move(f), file);
}
void build_activations(ViewBuild& b) { add_activations(b, false, "activations"); }
void build_activations_grad(ViewBuild& b) { add_activations(b, true, "activations_grad"); }

void build_ffn_histogram(ViewBuild& b) {
    auto f = ffn_histogram(b.need_snap(), b.layer);
    if (!f) throw std::runtime_error("FFN pre-activations of layer " + std::to_string(b.layer) + " were not recorded");
    b.add(std::move(*f), "ffn_histogram_layer" + std::to_string(b.layer));
}

// --- neurons and embedding maps ---

void build_neuron_heatmap(ViewBuild& b) {
    b.add(neuron_heatmap_figure(b.need_snap(), b.layer, b.st.neuron_rows), "neurons_layer" + std::to_string(b.layer));
}
int view_query(const ViewBuild& b) {
    const Snapshot& s = b.need_snap();
    const TokenizedText* t = s.source_tokens ? s.source_tokens.get() : s.tokens.get();
    return resolve_query(b.st, int(t->ids.size()));
}
void build_neuron_top(ViewBuild& b) {
    b.add(neuron_top_figure(b.need_snap(), b.layer, view_query(b)), "neuron_top_layer" + std::to_string(b.layer));
}
void build_neuron_text(ViewBuild& b) {
    const int n = selected_neuron(b.st, b.need_snap(), b.layer, view_query(b));
    b.add(neuron_text_figure(b.need_snap(), b.layer, n),
          "neuron_L" + std::to_string(b.layer) + "N" + std::to_string(n));
}
void build_neuron_examples(ViewBuild& b) {
    const int n = selected_neuron(b.st, b.need_snap(), b.layer, view_query(b));
    if (!b.model || !b.model->model || !b.model->codec) throw std::runtime_error("view " + b.view + " needs a model");
    const NeuronIndexResult r = obtain_neuron_index(b.st, *b.model);
    if (!r.error.empty()) throw std::runtime_error(r.error);
    plot::Figure f =
        neuron_examples_figure(*r.index, *b.model->model, *b.model->codec, std::min(b.layer, r.index->n_layers - 1), n);
    f.note += "; " + std::filesystem::path(r.corpus).filename().string();
    b.add(std::move(f), "neuron_examples_L" + std::to_string(b.layer) + "N" + std::to_string(n));
}
void build_embedding_map(ViewBuild& b) {
    const Snapshot& s = b.need_snap();
    if (!b.model || !b.model->codec) throw std::runtime_error("view " + b.view + " needs a model with a tokenizer");
    b.add(embedding_map_figure(s, *b.model->codec, *embedding_pca(s.model)), "embedding_map");
}
void build_residual_map(ViewBuild& b) { b.add(residual_map_figure(b.need_snap()), "residual_map"); }

void build_normalization(ViewBuild& b) {
    const char* names[] = {"layernorm", "rmsnorm", "batchnorm"};
    auto figs = normalization_synthetic_figures(b.st);
    for (size_t k = 0; k < figs.size(); ++k) b.add(std::move(figs[k]), names[k]);
    b.out.columns = 3;
}

void build_normalization_model(ViewBuild& b) {
    auto figs = normalization_model_figures(b.st, b.need_snap(), b.layer);
    if (figs.empty())
        throw std::runtime_error("the residual stream of layer " + std::to_string(b.layer) + " was not recorded");
    b.add(std::move(figs[0]), "layernorm_layer" + std::to_string(b.layer));
    b.add(std::move(figs[1]), "rmsnorm_layer" + std::to_string(b.layer));
    b.out.columns = 2;
}

// One of position_figures' five: 0 the sinusoidal table, 1 its curves, 2 PE·PE against the offset, 3 the RoPE
// angle, 4 the RoPE dot product.
void add_position_figure(ViewBuild& b, size_t pick, const char* file) {
    auto figs = position_figures(b.st);
    b.add(std::move(figs.at(pick)), file);
}
void build_positions_table(ViewBuild& b) { add_position_figure(b, 0, "positions_table"); }
void build_positions_curves(ViewBuild& b) { add_position_figure(b, 1, "positions_curves"); }
void build_positions_similarity(ViewBuild& b) { add_position_figure(b, 2, "positions_similarity"); }
void build_rope_angle(ViewBuild& b) { add_position_figure(b, 3, "rope_angle"); }
void build_rope_dot(ViewBuild& b) { add_position_figure(b, 4, "rope_dot"); }

// T5's relative position bias of the encoder's or the decoder's stack (attn_source): one head over (query, key), or
// every head against key − query.
const Model& relative_bias_model(ViewBuild& b) {
    const Model& mm = b.need_model();
    if (!mm.config().relative_attention_bias)
        throw std::runtime_error("model '" + mm.config().name + "' has no relative position bias (T5 has)");
    return mm;
}
std::string relative_bias_stack(const ViewBuild& b) { return b.st.attn_source == AttnSource::Encoder ? "enc" : "dec"; }
void build_relative_bias(ViewBuild& b) {
    const Model& mm = relative_bias_model(b);
    const std::string stack = relative_bias_stack(b);
    auto f = relative_bias_heatmap_figure(mm, stack, b.head, std::min(b.st.pe_positions, 128));
    b.add(std::move(*f), "relative_bias_" + stack + "_head" + std::to_string(b.head));
}
void build_relative_bias_heads(ViewBuild& b) {
    const Model& mm = relative_bias_model(b);
    const std::string stack = relative_bias_stack(b);
    b.add(std::move(*relative_bias_heads_figure(mm, stack)), "relative_bias_heads_" + stack);
}

void build_relative_buckets(ViewBuild& b) {
    const ModelConfig* c = b.m && b.m->config().relative_attention_bias ? &b.m->config() : nullptr;
    b.add(relative_bucket_figure(c ? c->relative_attention_num_buckets : 32,
                                 c ? c->relative_attention_max_distance : 128),
          "relative_buckets");
}

void build_predictions(ViewBuild& b) {
    const Snapshot& s = b.need_snap();
    if (s.logits_positions() == 0) throw std::runtime_error("this model has no LM head: no next-token predictions");
    b.add(next_token_figure(s, b.st, resolve_query(b.st, s.logits_positions())), "predictions");
}

void build_fill_mask(ViewBuild& b) {
    const Snapshot& s = b.need_snap();
    if (!has_fill_mask(s)) throw std::runtime_error("this model has no masked-LM head (fill-mask needs e.g. BERT)");
    if (mask_token_id(s) < 0) throw std::runtime_error("the tokenizer has no mask token ([MASK] or <mask>)");
    auto figs = fill_mask_figures(s);
    if (figs.empty())
        throw std::runtime_error("the text has no mask token: type [MASK] where a word should be guessed");
    const std::vector<int> pos = mask_positions(s);
    for (size_t k = 0; k < figs.size(); ++k) b.add(std::move(figs[k]), "fill_mask_pos" + std::to_string(pos[k]));
}

void build_logit_lens(ViewBuild& b) {
    auto f = logit_lens_figure(b.need_snap());
    if (!f) throw std::runtime_error("the logit lens was not computed for this model");
    b.add(std::move(*f), "logit_lens");
}

void build_residual(ViewBuild& b) {
    const Snapshot& s = b.need_snap();
    b.add(residual_norm_figure(s, resolve_query(b.st, int(s.tokens->ids.size()))), "residual_norm");
}

void build_prepost_norm(ViewBuild& b) {
    const NormCurves nc = random_init_curves();
    if (!nc.error.empty()) throw std::runtime_error("pre/post-norm comparison failed: " + nc.error);
    auto figs = prepost_norm_figures(nc);
    b.add(std::move(figs[0]), "prenorm");
    b.add(std::move(figs[1]), "postnorm");
    b.out.columns = 2;
}

void build_parameters(ViewBuild& b) { b.add(parameter_figure(b.need_model()), "parameters"); }

void build_kv_cache(ViewBuild& b) { b.add(kv_cache_figure(b.need_model(), b.st.kv_context), "kv_cache"); }

// The quantization lens on the text's tokens against --reference (a model path, or float-twin: this GGUF file's
// weights in float32), with the state's arithmetic.
void build_quant_lens(ViewBuild& b) {
    const Snapshot& s = b.need_snap();
    if (!b.model || !b.model->model) throw std::invalid_argument("view quant-lens needs --model");
    const std::string ref = b.st.compare_reference.empty() ? std::string(studio::kFloatTwin) : b.st.compare_reference;
    const LoadedModel reference = studio::load_compare_reference(*b.model, ref);
    const studio::CompareResult r =
        studio::compare_models(*b.model, reference, s.tokens->ids,
                               parse_quant_activations(b.st.quant_activations).value_or(QuantActivations::Float));
    if (!r.error.empty()) throw std::runtime_error(r.error);
    std::vector<plot::Figure> figs = compare_figures(r);
    const char* files[] = {"quant_lens_kl", "quant_lens_residual", "quant_lens_heads"};
    for (size_t i = 0; i < figs.size() && i < 3; ++i) b.add(std::move(figs[i]), files[i]);
}

// The two runs a comparison view reads (--lab-run A, --lab-compare B: folders or recorded runs' names).
std::pair<LabHistory, LabHistory> two_lab_runs(const ViewBuild& b, const char* view) {
    if (b.st.lab_run.empty() || b.st.lab_compare.empty())
        throw std::invalid_argument(std::string("view ") + view +
                                    " needs --lab-run DIR and --lab-compare DIR (two training-lab runs)");
    return {load_lab_history(resolve_lab_run(b.st.lab_run)), load_lab_history(resolve_lab_run(b.st.lab_compare))};
}

void build_lab_compare(ViewBuild& b) {
    const auto [a, c] = two_lab_runs(b, "lab-compare");
    std::vector<plot::Figure> figs =
        lab_compare_figures(a, c, lab_run_name(b.st.lab_run), lab_run_name(b.st.lab_compare));
    for (size_t i = 0; i < figs.size(); ++i) b.add(std::move(figs[i]), "lab_compare_" + lab_compare_figure_names()[i]);
    b.out.columns = 3;
}

// One head's attention on the probe in two runs' snapshots and B − A (a view of its own: heatmaps and curves do not
// share one CSV table).
void build_lab_compare_attention(ViewBuild& b) {
    const auto [a, c] = two_lab_runs(b, "lab-compare-attention");
    if (a.snapshots.empty() || c.snapshots.empty())
        throw std::invalid_argument(
            "view lab-compare-attention needs snapshots in both runs (train --lab keeps them "
            "every train.snapshot_every steps)");
    // The newest snapshot at or before --lab-step in each (default: the last step both reached).
    const ProbePair p = probe_attention_pair(a, c, b.st.lab_step, b.st.layer, b.st.head);
    auto att = lab_compare_attention_figures(p.a, p.b, lab_run_name(b.st.lab_run), lab_run_name(b.st.lab_compare),
                                             p.layer, p.head);
    const char* names[] = {"lab_compare_attention_a", "lab_compare_attention_b", "lab_compare_attention_diff"};
    for (size_t i = 0; i < att.size(); ++i) b.add(std::move(att[i]), names[i]);
    b.out.columns = 3;
}

void build_lr_schedule(ViewBuild& b) { b.add(lr_schedule_figure(b.st), "lr_schedule"); }

void build_lab_curves(ViewBuild& b) {
    if (b.st.lab_run.empty())
        throw std::invalid_argument(
            "view lab-curves needs --lab-run DIR (a folder of the Training tab's lab or train --lab)");
    const LabHistory h = load_lab_history(resolve_lab_run(b.st.lab_run));
    std::vector<plot::Figure> figs = lab_figures(h, b.st.lab_step);
    for (size_t i = 0; i < figs.size(); ++i) b.add(std::move(figs[i]), "lab_" + lab_figure_names()[i]);
    b.out.columns = 3;
}

void build_dropout(ViewBuild& b) {
    auto figs = dropout_figures(b.st, b.need_snap());
    b.add(std::move(figs[0]), "dropout");
    b.add(std::move(figs[1]), "dropout_mean");
    b.out.columns = 2;
}

void build_weight_decay(ViewBuild& b) { b.add(weight_decay_figure(b.st), "weight_decay"); }

void build_label_smoothing(ViewBuild& b) {
    auto figs = label_smoothing_figures(b.st);
    b.add(std::move(figs[0]), "label_target");
    b.add(std::move(figs[1]), "label_loss");
    b.out.columns = 2;
}

}  // namespace

// The one table of views: name, tab, description, the CLI options (knobs) it reads, whether it needs a forward pass,
// and its builder.
const std::vector<ViewInfo>& all_views() {
    // The Softmax lab's views all read the same knobs.
    const std::vector<std::string> softmax_knobs =
        with_knobs({"layer", "head", "query", "temperature", "mask", "window", "padding", "logits"});
    static const std::vector<ViewInfo> v = {
        {"tokens", Panel::Tokens, "bytes per token of the text (bars, tokens as categories)", with_knobs({}), true,
         build_tokens},
        {"attention", Panel::Attention, "attention weights of one head (query × key heatmap)",
         with_knobs({"layer", "head", "attn-source", "unit-scale", "no-annotate"}), true, build_attention},
        {"attention-ab", Panel::Attention,
         "one head under two settings of the model on one text: A (the model as trained, or as --ab-set KEY=VALUE "
         "changes B; repeatable), B (the current settings, --set) and B - A",
         with_knobs({"layer", "head", "attn-source", "unit-scale", "ab-set"}), true, build_attention_ab},
        {"attention-layer", Panel::Attention, "every head of one layer, one shared 0..1 scale",
         with_knobs({"layer", "attn-source"}), true, build_attention_layer},
        {"attention-grid", Panel::Attention, "every layer × head, one shared 0..1 scale", with_knobs({"attn-source"}),
         true, build_attention_grid},
        {"attention-steps", Panel::Attention, "Q·Kᵀ → ÷√d_head → + mask → softmax → ·V for one head",
         with_knobs({"layer", "head", "attn-source"}), true, build_attention_steps},
        {"softmax", Panel::Softmax, "softmax of one query row (or typed logits) at temperature T vs T = 1",
         softmax_knobs, true, build_softmax},
        {"softmax-scores", Panel::Softmax, "the scores z of that row, masked keys marked", softmax_knobs, true,
         build_softmax_scores},
        {"softmax-entropy", Panel::Softmax, "entropy of softmax(z / T) against T", softmax_knobs, true,
         build_softmax_entropy},
        {"softmax-mask", Panel::Softmax, "the mask of every query row (1 = visible; custom: the painted cells)",
         softmax_knobs, true, build_softmax_mask},
        {"softmax-lab", Panel::Softmax, "scores, probabilities and entropy side by side", softmax_knobs, true,
         build_softmax_lab},
        {"activations",
         Panel::Activations,
         "activation functions f(x) with the example points",
         {"alpha", "beta", "range", "curves"},
         false,
         build_activations},
        {"activations-grad",
         Panel::Activations,
         "their derivatives f′(x)",
         {"alpha", "beta", "range", "curves"},
         false,
         build_activations_grad},
        {"ffn-histogram", Panel::Activations, "histogram of the model's FFN pre-activations at a layer",
         with_knobs({"layer"}), true, build_ffn_histogram},
        {"neuron-heatmap", Panel::Neurons, "FFN neurons × tokens at a layer: the neurons most active on the text",
         with_knobs({"layer", "neuron-rows"}), true, build_neuron_heatmap},
        {"neuron-top", Panel::Neurons, "the neurons most active at the selected token (bars)",
         with_knobs({"layer", "query"}), true, build_neuron_top},
        {"neuron-text", Panel::Neurons, "one neuron's activation at every token (default: the top one at the token)",
         with_knobs({"layer", "query", "neuron"}), true, build_neuron_text},
        {"neuron-examples", Panel::Neurons,
         "a neuron's max-activating contexts from a corpus (index cached beside the model)",
         with_knobs({"layer", "query", "neuron", "corpus", "chunk"}), true, build_neuron_examples},
        {"normalization",
         Panel::Normalization,
         "LayerNorm, RMSNorm, BatchNorm on synthetic data (before/after histograms)",
         {"mean", "std", "gamma", "shift", "eps"},
         false,
         build_normalization},
        {"normalization-model", Panel::Normalization, "LayerNorm and RMSNorm on the model's residual stream at a layer",
         with_knobs({"layer", "gamma", "shift", "eps"}), true, build_normalization_model},
        {"positions-table",
         Panel::Positions,
         "sinusoidal position table (position × dimension heatmap)",
         {"d-model", "base", "positions"},
         false,
         build_positions_table},
        {"positions-curves",
         Panel::Positions,
         "a few sinusoidal dimensions against position",
         {"d-model", "base", "positions"},
         false,
         build_positions_curves},
        {"positions-similarity",
         Panel::Positions,
         "PE(pos)·PE(pos+k) against the offset k",
         {"d-model", "base", "positions"},
         false,
         build_positions_similarity},
        {"rope-angle",
         Panel::Positions,
         "RoPE rotation angle per pair against position",
         {"d-model", "positions", "rope-theta"},
         false,
         build_rope_angle},
        {"rope-dot",
         Panel::Positions,
         "⟨RoPE(q, m), RoPE(k, n)⟩ against m − n",
         {"d-model", "positions", "rope-theta", "interleaved"},
         false,
         build_rope_dot},
        {"relative-bias",
         Panel::Positions,
         "T5 relative position bias of one head over (query i, key j)",
         {"head", "positions", "attn-source"},
         true,
         build_relative_bias},
        {"relative-bias-heads",
         Panel::Positions,
         "T5 relative position bias of every head against key − query",
         {"attn-source"},
         true,
         build_relative_bias_heads},
        {"relative-buckets",
         Panel::Positions,
         "T5 relative position bucket against key − query (the model's settings)",
         {},
         false,
         build_relative_buckets},
        {"predictions", Panel::Predictions, "next-token distribution (temperature, top-k, top-p) vs plain softmax",
         with_knobs({"query", "temperature", "top-k", "top-p"}), true, build_predictions},
        {"logit-lens", Panel::Predictions, "argmax next token after each layer at each position", with_knobs({}), true,
         build_logit_lens},
        {"fill-mask", Panel::Predictions, "masked-LM models (BERT): top candidates for each mask token in the text",
         with_knobs({}), true, build_fill_mask},
        {"residual", Panel::Residual, "residual-stream L2 norm after every sub-layer, per token and mean",
         with_knobs({"query"}), true, build_residual},
        {"prepost-norm",
         Panel::Residual,
         "pre-norm vs post-norm residual norm at random init (16 layers)",
         {},
         false,
         build_prepost_norm},
        {"embedding-map", Panel::Residual,
         "token embeddings on their first two principal components, the text's tokens labelled", with_knobs({}), true,
         build_embedding_map},
        {"residual-map", Panel::Residual, "each token's residual stream through the layers on two principal components",
         with_knobs({}), true, build_residual_map},
        {"parameters", Panel::Model, "parameters per component of the model", {}, false, build_parameters},
        {"kv-cache",
         Panel::Model,
         "KV-cache bytes against context length for MHA / GQA / MQA",
         {"context"},
         false,
         build_kv_cache},
        {"quant-lens", Panel::Model,
         "quantization lens: the model against a reference of the same shape (--reference PATH, or float-twin: this "
         "GGUF file's weights in float32): KL per position, residual drift per layer, attention change per head",
         with_knobs({"reference"}), true, build_quant_lens},
        {"lab-curves",
         Panel::Training,
         "a training-lab run's curves: losses, learning rate, gradient norms, largest logit, head entropy, "
         "induction and previous-token scores",
         {"lab-run", "lab-step"},
         false,
         build_lab_curves},
        {"lab-compare",
         Panel::Training,
         "two training-lab runs side by side: held-out loss and its difference, gradient norm, largest logit, "
         "induction score",
         {"lab-run", "lab-compare"},
         false,
         build_lab_compare},
        {"lab-compare-attention",
         Panel::Training,
         "one head's attention on the lab's probe in two training-lab runs (their snapshots at one step) and B - A",
         {"lab-run", "lab-compare", "lab-step", "layer", "head"},
         false,
         build_lab_compare_attention},
        {"lr-schedule",
         Panel::Training,
         "learning rate with warm-up (Vaswani et al. 2017) against the same without",
         {},
         false,
         build_lr_schedule},
        {"dropout", Panel::Training, "inverted dropout on one token's residual vector, and the mean over many masks",
         with_knobs({"layer", "query"}), true, build_dropout},
        {"weight-decay",
         Panel::Training,
         "one weight over training steps under weight decay",
         {},
         false,
         build_weight_decay},
        {"label-smoothing",
         Panel::Training,
         "label smoothing: the target distribution and the loss against p(correct)",
         {},
         false,
         build_label_smoothing},
        {"ablation-sweep", Panel::Causal, "change of log p(target) when each head alone is ablated (layer × head)",
         with_knobs({"target"}), true, build_ablation_sweep},
        {"patching-resid", Panel::Causal,
         "activation patching, residual stream: restored logit difference (layer × position)",
         with_knobs({"corrupt", "answer", "wrong"}), true, build_patching_resid},
        {"patching-heads", Panel::Causal, "activation patching, head outputs: restored logit difference (layer × head)",
         with_knobs({"corrupt", "answer", "wrong"}), true, build_patching_heads},
        {"logit-attribution", Panel::Causal, "direct logit attribution of a token (or a difference), by layer (bars)",
         with_knobs({"target", "minus"}), true, build_logit_attribution},
        {"logit-attribution-heads", Panel::Causal, "direct logit attribution of a token (or a difference), by head",
         with_knobs({"target", "minus"}), true, build_logit_attribution_heads},
        {"attention-rollout", Panel::Causal, "attention rollout (Abnar & Zuidema 2020): output position × input token",
         with_knobs({}), true, build_attention_rollout},
        {"head-detectors", Panel::Causal,
         "head detectors: previous-token, duplicate-token, induction heads and attention sinks (layer × head)",
         with_knobs(kDetectorKnobs), true, build_head_detectors},
        {"heads-previous-token", Panel::Causal, "previous-token head scores (layer × head)", with_knobs(kDetectorKnobs),
         true, build_heads_previous_token},
        {"heads-duplicate-token", Panel::Causal, "duplicate-token head scores (layer × head)",
         with_knobs(kDetectorKnobs), true, build_heads_duplicate_token},
        {"heads-induction", Panel::Causal, "induction head scores (layer × head)", with_knobs(kDetectorKnobs), true,
         build_heads_induction},
        {"heads-first-token", Panel::Causal, "attention-sink scores: attention on the first token (layer × head)",
         with_knobs(kDetectorKnobs), true, build_heads_first_token},
        {"input-attribution", Panel::Causal,
         "input attribution: how much each input token moves the prediction (integrated gradients, gradient × "
         "input or occlusion)",
         with_knobs({"query", "target", "minus", "method", "steps", "ig-rule", "span", "baseline"}), true,
         build_input_attribution},
        {"attention-flow", Panel::Causal, "attention flow, exact max-flow (at most 64 tokens)", with_knobs({}), true,
         build_attention_flow},
    };
    return v;
}

ViewFigures build_view(const std::string& view, const UiState& st, const Snapshot* snap, const LoadedModel* model) {
    const ViewInfo* info = find_view(view);
    if (!info) throw std::invalid_argument("unknown view '" + view + "' (see --view list)");
    ViewBuild b{view, st, snap, model};
    b.m = snap && snap->model ? snap->model.get() : (model ? model->model.get() : nullptr);
    b.layer = clamp_layer(st, b.m);
    b.head = clamp_head(st, b.m);
    // Encoder–decoder models: the attention views show st.attn_source (the encoder may have fewer layers).
    if (info->panel == Panel::Attention && snap && has_attention_sources(*snap)) {
        b.layer = std::min(b.layer, std::max(0, attention_layers(*snap, st.attn_source) - 1));
        b.src_tag = st.attn_source == AttnSource::Decoder ? "dec_"
            : st.attn_source == AttnSource::Encoder       ? "enc_"
                                                          : "cross_";
    }
    b.lh = b.src_tag + "layer" + std::to_string(b.layer) + "_head" + std::to_string(b.head);
    info->build(b);
    // A model with random weights teaches nothing: say so on every model figure.
    if (info->needs_forward && model && model->random_weights)
        for (auto& f : b.out.figures) f.note = (f.note.empty() ? "" : f.note + "; ") + "random-weight demo model";
    return std::move(b.out);
}

}  // namespace ts::figures
