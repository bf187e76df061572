// The Causal panel's analyses on a background thread (see interp_jobs.h).
#include "app/session/interp_jobs.h"

#include "app/session/forward_spec.h"
#include "app/session/seq2seq.h"
#include "app/i18n/tr.h"
#include "core/util/number.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace ts::studio {

int first_token(const TextCodec& codec, const std::string& text, const char* what) {
    if (text.empty()) return -1;
    std::vector<int> ids;
    std::vector<std::pair<size_t, size_t>> spans;
    codec.encode(text, ids, spans);
    if (ids.empty()) throw std::invalid_argument(std::string(what) + " '" + text + "' encodes to no token");
    return ids.front();
}

int top_prediction(const Snapshot* s) {
    if (!s) return -1;
    const std::span<const float> row = s->logits_row(s->logits_positions() - 1);  // computed here if not yet
    if (row.empty()) return -1;
    return int(std::max_element(row.begin(), row.end()) - row.begin());
}

namespace {

int last_position_argmax(const Model& m, const std::vector<int>& ids, const ForwardOptions& opt) {
    ForwardOptions o = opt;
    o.all_logits = false;
    const ForwardResult r = forward(m, ids, o);
    Eigen::Index best = 0;
    r.logits.row(r.logits.rows() - 1).maxCoeff(&best);
    return int(best);
}

}  // namespace

std::string quoted_token(const std::string& label) {
    std::string q;  // appended piecewise: "'" + s + "'" trips a GCC 12 -Wrestrict false positive
    q.reserve(label.size() + 2);
    q += '\'';
    q += label;
    q += '\'';
    return q;
}

InterpInputs resolve_interp_inputs(const UiState& st, const LoadedModel& m, bool need_corrupt, int fallback_target) {
    if (!m.model || !m.codec) throw std::invalid_argument("no model loaded");
    InterpInputs in;
    const int max_len = m.model->config().max_seq_len;
    const TokenizedText clean = tokenize_text(st.text, *m.codec, max_len);
    if (clean.ids.empty()) throw std::invalid_argument("type a text first: the analyses explain its last position");
    in.ids = clean.ids;
    for (const auto& p : clean.pieces) in.labels.push_back(p.label);
    in.target = first_token(*m.codec, st.interp_target, "target token");
    if (in.target < 0) in.target = fallback_target;
    in.minus = first_token(*m.codec, st.interp_minus, "second token");
    if (need_corrupt) {
        const TokenizedText corrupt = tokenize_text(st.interp_corrupt, *m.codec, max_len);
        if (corrupt.ids.size() != clean.ids.size())
            throw std::invalid_argument("the corrupted prompt has " + std::to_string(corrupt.ids.size()) +
                                        " tokens, the clean text " + std::to_string(clean.ids.size()) +
                                        ": patching needs prompts of the same token length");
        in.corrupt_ids = corrupt.ids;
        in.answer = first_token(*m.codec, st.interp_answer, "answer token");
        in.wrong = first_token(*m.codec, st.interp_wrong, "wrong-answer token");
        if (in.answer < 0 || in.wrong < 0) throw std::invalid_argument("patching needs an answer and a wrong-answer token");
    }
    auto label = [&](int id) { return id >= 0 ? quoted_token(m.codec->label(id)) : std::string(); };
    in.target_label = label(in.target);
    in.minus_label = label(in.minus);
    in.answer_label = label(in.answer);
    in.wrong_label = label(in.wrong);
    in.ablated = ablated_heads_for(st, m.model->config());
    in.ablate_mode = st.ablate_mode;
    return in;
}

namespace {

// Input attribution on an encoder–decoder: the text is the source; the typed target, or else the model's translation
// (beam as the state says), is what is explained, one row per generated token (the end token last when the model
// produced it). Beside it the cross-attention of the same forward, averaged over decoder layers and heads.
void attribute_translation_for(InterpResult& r, const UiState& st, const LoadedModel& m, interp::GradientModel* grad,
                               const interp::AttributionOptions& o) {
    const Model& model = *m.model;
    const ModelConfig& c = model.config();
    if (!m.translation || !m.codec)
        throw std::invalid_argument("input attribution of a translation needs the model's translation.json");
    const TranslationSpec& spec = *m.translation;
    const Seq2SeqTokens io = make_seq2seq_tokens(m, st.text, st.target_text, st.translate_to);
    const std::vector<int>& src = io.source->ids;
    if (src.empty()) throw std::invalid_argument("the text is empty: type a sentence to translate");
    std::shared_ptr<const TokenizedText> target = io.target;
    bool finished = false;
    const TextCodec& tcodec = m.target_codec ? *m.target_codec : *m.codec;
    if (st.target_text.empty()) {
        DecodeOptions d;
        d.beam = std::max(1, st.decode_beam);
        d.max_len = std::max(1, std::min(d.max_len, c.max_seq_len - 1));
        const DecodeResult res = translate_ids(model, spec, src, d);
        target = decoded_target_tokens(tcodec, spec, res.ids);
        finished = res.finished;
    }
    std::vector<int> dec_in = target->ids, out;
    for (size_t t = 1; t < dec_in.size(); ++t) out.push_back(dec_in[t]);
    if (finished && spec.target_end_id >= 0) out.push_back(spec.target_end_id);
    else dec_in.pop_back();  // the last decoder input predicts nothing we know
    if (dec_in.empty()) throw std::invalid_argument("the translation is empty: nothing to explain");
    r.inputs_seq2seq = interp::attribute_translation(model, grad, src, dec_in, out, o);
    for (int id : src) r.source_labels.push_back(m.codec->label(id));
    for (int id : out) r.output_labels.push_back(tcodec.label(id));
    r.in.ids = dec_in;
    r.in.labels.clear();
    for (int id : dec_in) r.in.labels.push_back(tcodec.label(id));
    // Cross-attention over the same pairs.
    ForwardOptions fo;
    fo.capture = CaptureFilter::prefixes({"dec."});
    fo.compute_logits = false;
    const ForwardResult fr = forward_seq2seq(model, src, dec_in, fo);
    if (!fr.trace) throw std::invalid_argument("the forward recorded no cross-attention");
    r.cross_attn_mean = interp::mean_of(interp::head_mean_attention(*fr.trace, "dec", c.n_layers, "cross_attn"));
    r.cross_attn_layers = c.n_layers;
    r.cross_attn_heads = c.n_heads;
    r.rank_corr = interp::attention_attribution_rank_corr(r.inputs_seq2seq->source, r.cross_attn_mean);
}

}  // namespace

interp::AttributionOptions attribution_options(const UiState& st) {
    interp::AttributionOptions o;
    o.method =
        interp::parse_attribution_method(st.attr_method).value_or(interp::AttributionMethod::IntegratedGradients);
    o.steps = st.attr_steps;
    o.span = st.attr_span;
    o.baseline =
        interp::parse_attribution_baseline(st.attr_baseline).value_or(interp::AttributionBaseline::MeanEmbedding);
    o.rule = interp::parse_ig_rule(st.attr_ig_rule).value_or(interp::IgRule::Adaptive);
    return o;
}

InterpResult run_interp(InterpResult::Kind kind, const UiState& st, const LoadedModel& m, int fallback_target,
                        const interp::Progress& progress, const std::atomic<bool>* cancel, int patch_parts) {
    const auto t0 = std::chrono::steady_clock::now();
    InterpResult r;
    r.kind = kind;
    try {
        if (!m.model) throw std::invalid_argument("no model loaded");
        const Model& model = *m.model;
        const ModelConfig& c = model.config();
        if (kind == InterpResult::Kind::Heads && st.detect_random) {
            // The usual induction probe: random tokens said twice (a fixed seed: the same probe every run).
            if (!m.codec) throw std::invalid_argument("no model loaded");
            const int half = std::min(st.detect_half, (c.max_seq_len - 1) / 2);
            r.in.ids = interp::repeated_random_tokens(c.vocab_size, half, kDetectSeed);
            for (int id : r.in.ids) r.in.labels.push_back(m.codec->label(id));
            r.in.ablated = ablated_heads_for(st, c);
            r.in.ablate_mode = st.ablate_mode;
            r.heads_on_random = true;
        } else {
            r.in = resolve_interp_inputs(st, m, kind == InterpResult::Kind::Patching, fallback_target);
        }
        // The analyses start from the forward the window runs: the same spec, so the same temperature, mask and
        // ablations (the edits are split off: some analyses stack them, the sweep replaces them).
        const int T = int(r.in.ids.size());
        ForwardOptions base = forward_options(forward_spec(st, m), c, T);
        const std::vector<ActivationEdit> ablation = std::move(base.edits);
        base.edits.clear();
        // Sweep and attribution explain a token: the typed one, else the top prediction of the run they analyse.
        auto resolve_target = [&](const ForwardOptions& o) {
            if (r.in.target < 0) r.in.target = last_position_argmax(model, r.in.ids, o);
            if (r.in.target_label.empty()) r.in.target_label = quoted_token(m.codec->label(r.in.target));
        };
        switch (kind) {
        case InterpResult::Kind::Sweep: {
            // The sweep measures each head alone against the clean run: the state's ablations are not stacked.
            resolve_target(base);
            interp::AblationSweepOptions o;
            o.kind = st.ablate_mode;
            o.targets = {{-1, r.in.target}};
            o.base = base;
            o.progress = progress;
            o.cancel = cancel;
            r.sweep = interp::head_ablation_sweep(model, r.in.ids, o);
            break;
        }
        case InterpResult::Kind::Patching: {
            base.edits = ablation;
            r.baseline = interp::prepare_patching(model, r.in.ids, r.in.corrupt_ids, r.in.answer, r.in.wrong, base);
            const int L = c.n_layers, H = c.n_heads;
            const bool resid = patch_parts & kPatchResid, heads = patch_parts & kPatchHeads;
            const int total = (resid ? L * T : 0) + (heads ? L * H : 0), before_heads = resid ? L * T : 0;
            if (resid)
                r.patch_resid = interp::patch_resid_pre(model, *r.baseline, [&](int d, int) { if (progress) progress(d, total); }, cancel);
            if (heads && !(r.patch_resid && r.patch_resid->cancelled))
                r.patch_heads = interp::patch_head_out(model, *r.baseline, [&](int d, int) { if (progress) progress(before_heads + d, total); }, cancel);
            break;
        }
        case InterpResult::Kind::Attribution: {
            base.edits = ablation;
            resolve_target(base);
            r.attribution = interp::direct_logit_attribution(model, r.in.ids, -1, r.in.target, r.in.minus, base);
            r.attr_heads = MatrixRM::Constant(c.n_layers, c.n_heads, NAN);
            const std::string stack = c.arch == Arch::EncoderOnly ? "enc" : "dec";
            for (size_t i = 0; i < r.attribution->names.size(); ++i)
                for (int l = 0; l < c.n_layers; ++l) {
                    const std::string prefix = stack + "." + std::to_string(l) + ".attn.head";
                    const std::string& n = r.attribution->names[i];
                    if (n.rfind(prefix, 0) != 0) continue;
                    const int64_t h = parse_int(std::string_view(n).substr(prefix.size())).value_or(-1);
                    if (h >= 0 && h < c.n_heads) r.attr_heads(l, int(h)) = r.attribution->values[i];
                }
            break;
        }
        case InterpResult::Kind::Heads: {
            if (T < 2) throw std::invalid_argument("the head detectors need at least 2 tokens");
            base.edits = ablation;
            const std::string stack = c.arch == Arch::EncoderOnly ? "enc" : "dec";
            std::vector<std::string> probs;
            for (int l = 0; l < c.n_layers; ++l) probs.push_back(stack + "." + std::to_string(l) + ".attn.probs");
            base.capture = CaptureFilter::prefixes(probs);
            base.compute_logits = false;
            const ForwardResult fr = c.arch == Arch::EncoderDecoder ? ForwardResult{} : forward(model, r.in.ids, base);
            if (!fr.trace) throw std::invalid_argument("the head detectors need a decoder-only or encoder-only model");
            const interp::DetectOptions o{st.detect_exclude_bos, st.detect_exclude_current};
            r.heads_options = o;
            for (const interp::HeadKind k : interp::kHeadKinds)
                r.head_scores.push_back(interp::detect_heads(*fr.trace, stack, c.n_layers, r.in.ids, k, o));
            break;
        }
        case InterpResult::Kind::Inputs: {
            if (c.arch == Arch::EncoderOnly)
                throw std::invalid_argument(
                    "input attribution explains a prediction of a decoder-only or "
                    "encoder-decoder model; this model is encoder-only");
            interp::AttributionOptions o = attribution_options(st);
            o.progress = progress;
            o.cancel = cancel;
            std::shared_ptr<interp::GradientModel> grad;
            if (o.method != interp::AttributionMethod::Occlusion)
                grad = m.gradients ? m.gradients->lease(model) : std::make_shared<interp::GradientModel>(model);
            r.inputs_options = o;
            r.inputs_options.progress = {};
            r.inputs_options.cancel = nullptr;
            if (c.arch == Arch::EncoderDecoder) {
                attribute_translation_for(r, st, m, grad.get(), o);
                break;
            }
            // The prediction after the selected token (UiState::query; -1 = the last), as in the Predictions tab.
            const int q = st.query < 0 || st.query >= T ? T - 1 : st.query;
            if (r.in.target < 0) {
                const std::vector<int> prefix(r.in.ids.begin(), r.in.ids.begin() + q + 1);
                r.in.target = last_position_argmax(model, prefix, base);
            }
            if (r.in.target_label.empty()) r.in.target_label = quoted_token(m.codec->label(r.in.target));
            r.inputs = interp::attribute_tokens(model, grad.get(), r.in.ids, {q, r.in.target, r.in.minus}, o);
            if (!ablation.empty() || st.apply_to_model)
                r.inputs_note = TS_N_("the forward's knobs (temperature, masks, ablated heads) are not applied");
            break;
        }
        case InterpResult::Kind::Flow: {
            if (T > interp::kMaxFlowPositions)
                throw std::invalid_argument("attention flow is exact max-flow: at most " +
                                            std::to_string(interp::kMaxFlowPositions) + " tokens (the text has " +
                                            std::to_string(T) + ")");
            base.edits = ablation;
            const std::string stack = c.arch == Arch::EncoderOnly ? "enc" : "dec";
            base.capture = CaptureFilter::prefixes({stack + "."});
            base.all_logits = false;
            const ForwardResult fr = c.arch == Arch::EncoderDecoder ? ForwardResult{} : forward(model, r.in.ids, base);
            if (!fr.trace) throw std::invalid_argument("attention flow needs a decoder-only or encoder-only model");
            r.flow = interp::attention_flow(interp::head_mean_attention(*fr.trace, stack, c.n_layers), progress, cancel);
            break;
        }
        }
    } catch (const std::exception& e) {
        r.error = e.what();
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

InterpJobs::~InterpJobs() {
    cancel();
    if (m_future.valid()) m_future.wait();
}

bool InterpJobs::start(InterpResult::Kind kind, const UiState& st, const LoadedModel& m, int fallback_target,
                       std::function<void()> on_done) {
    if (busy()) return false;
    m_kind = kind;
    m_progress = std::make_shared<std::atomic<float>>(0.0f);
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    if (!on_done) on_done = m_on_done;
    m_future = std::async(std::launch::async, [kind, st, m, fallback_target, prog = m_progress, cancel = m_cancel,
                                               on_done = std::move(on_done)]() {
        InterpResult r = run_interp(kind, st, m, fallback_target,
                                    [prog](int done, int total) { prog->store(total > 0 ? float(done) / float(total) : 1.0f); },
                                    cancel.get());
        if (on_done) on_done();
        return r;
    });
    return true;
}

bool InterpJobs::poll() {
    if (!m_future.valid() || m_future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
    auto r = std::make_shared<const InterpResult>(m_future.get());
    m_latest[int(r->kind)] = r;
    return true;
}

std::shared_ptr<const InterpResult> InterpJobs::latest(InterpResult::Kind kind) const { return m_latest[int(kind)]; }

void InterpJobs::clear() {
    for (auto& l : m_latest) l.reset();
}

}  // namespace ts::studio
