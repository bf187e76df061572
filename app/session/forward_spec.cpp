// ForwardSpec and the rules from knobs to a forward (see forward_spec.h).
#include "app/session/forward_spec.h"

#include "app/session/seq2seq.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ts::studio {

ForwardSpec forward_spec(const UiState& st, const ModelConfig& c, std::optional<Panel> panel) {
    ForwardSpec s;
    s.text = st.text;
    if (c.arch == Arch::EncoderDecoder) {
        s.target = st.target_text;
        s.to = st.translate_to;
        s.beam = std::max(1, st.decode_beam);
    }
    if (st.apply_to_model) {
        s.temperature = st.attn_temperature;
        s.own_mask = false;
        s.mask = st.attn_mask;
        if (s.mask == MaskChoice::Sliding) s.window = std::max(1, st.attn_window);
        if (s.mask == MaskChoice::Padding) s.padding = std::max(0, st.attn_padding);
        if (s.mask == MaskChoice::Custom) {
            s.painted = st.sm_paint;
            s.painted_n = st.sm_paint_n;
        }
    }
    if (c.arch != Arch::EncoderDecoder)  // the analyses and ablations run decoder-only / encoder-only stacks
        for (const auto& h : st.ablated_heads)
            if (h[0] >= 0 && h[0] < c.n_layers && h[1] >= 0 && h[1] < c.n_heads) s.ablated.push_back(h);
    if (!s.ablated.empty()) s.ablation = st.ablate_mode;
    s.quant_activations = parse_quant_activations(st.quant_activations).value_or(QuantActivations::Float);
    if (panel) {
        s.logits = panel_reads_logits(*panel);
        s.lens = panel_shows_lens(*panel);
        // Only a text that may be long: fewer than 1,000 bytes are fewer than 1,024 tokens, so a short text's
        // Attention and Tokens tabs share one forward (switching runs nothing).
        s.attention_only = *panel == Panel::Attention && st.text.size() >= kAttentionOnlyMinBytes;
    }
    return s;
}

ForwardSpec forward_spec(const UiState& st, const LoadedModel& m, std::optional<Panel> panel) {
    if (!m.model) {
        ForwardSpec s = forward_spec(st, ModelConfig{}, panel);
        s.ablated.clear();
        return s;
    }
    ForwardSpec s = forward_spec(st, m.model->config(), panel);
    s.model = m.model.get();
    return s;
}

bool panel_reads_logits(Panel panel) {
    return panel == Panel::Predictions || panel == Panel::Causal || panel == Panel::Lessons;
}
bool panel_shows_lens(Panel panel) { return panel == Panel::Predictions; }

namespace {

// States in which every knob a forward reads is live: the attention knobs applied, each mask that has a knob of its
// own, a head ablated, for a decoder-only and an encoder–decoder model (beam, target, language), on a tab that
// reads logits and shows the lens.
std::vector<std::pair<UiState, ModelConfig>> live_states() {
    std::vector<std::pair<UiState, ModelConfig>> out;
    for (const Arch arch : {Arch::DecoderOnly, Arch::EncoderOnly, Arch::EncoderDecoder})
        for (const MaskChoice mask : kMaskChoices) {
            UiState st;
            st.apply_to_model = true;
            st.attn_mask = mask;
            st.attn_window = 4;
            st.attn_padding = 2;
            st.sm_paint_n = 2;
            st.sm_paint = {1, 0, 1, 1};
            st.ablated_heads = {{0, 0}};
            st.decode_beam = 2;
            ModelConfig c;
            c.arch = arch;
            c.n_layers = c.n_enc_layers = 4;
            c.n_heads = 4;
            out.emplace_back(std::move(st), c);
        }
    return out;
}

}  // namespace

bool knob_changes_forward(const std::string& knob) {
    for (const auto& [st, c] : live_states()) {
        const nlohmann::json j = st;
        const auto it = j.find(knob);
        if (it == j.end() || !it->is_number()) return false;
        const double v = it->get<double>();
        const ForwardSpec before = forward_spec(st, c);
        for (const double w : {v + 1, v - 1, v * 2 + 1, v / 2}) {
            nlohmann::json k = j;
            if (it->is_number_integer()) k[knob] = (long long)std::llround(w);
            else k[knob] = w;
            UiState changed;
            from_json(k, changed);  // clamps, as a lesson's set_knob does
            if (nlohmann::json(changed)[knob] == *it) continue;  // clamped back: try another value
            if (!(forward_spec(changed, c) == before)) return true;
        }
    }
    return false;
}

MaskSpec mask_spec_for(MaskChoice kind, int window, int padding, const std::vector<uint8_t>& painted, int painted_n,
                       int T, bool causal_model) {
    MaskSpec m;
    T = std::max(0, T);
    switch (kind) {
    case MaskChoice::None: m.kind = MaskKind::None; break;
    case MaskChoice::Causal: m.kind = MaskKind::Causal; break;
    case MaskChoice::Sliding:
        m.kind = MaskKind::SlidingWindow;
        m.window = std::max(1, window);
        break;
    case MaskChoice::Custom: m = painted_mask_spec(painted_cells(painted, painted_n, T), T, T, T); break;
    case MaskChoice::Padding: {
        m.kind = causal_model ? MaskKind::Causal : MaskKind::None;
        m.key_padding.assign(size_t(T), 0);
        const int n = std::clamp(padding, 0, std::max(0, T - 1));
        for (int s = T - n; s < T; ++s) m.key_padding[size_t(s)] = 1;
        break;
    }
    }
    return m;
}

MaskSpec attention_mask(const ForwardSpec& s, const ModelConfig& c, int T) {
    if (s.own_mask) {
        MaskSpec m;
        if (c.arch == Arch::EncoderOnly) m.kind = MaskKind::None;
        return m;
    }
    return mask_spec_for(s.mask, s.window, s.padding, s.painted, s.painted_n, T, c.arch != Arch::EncoderOnly);
}

std::vector<ActivationEdit> ablation_edits(const ForwardSpec& s, const ModelConfig& c) {
    if (s.ablated.empty()) return {};
    std::vector<interp::HeadRef> heads;
    for (const auto& h : s.ablated) heads.push_back({h[0], h[1]});
    return interp::head_ablation_edits(c, heads, s.ablation);
}

ForwardOptions forward_options(const ForwardSpec& s, const ModelConfig& c, int T) {
    ForwardOptions o;
    o.temperature = s.temperature;
    if (c.arch == Arch::EncoderOnly) o.enc_mask = attention_mask(s, c, T);
    else o.self_mask = attention_mask(s, c, T);
    o.edits = ablation_edits(s, c);
    return o;
}

ForwardRequest make_forward_request(const ForwardSpec& s, const LoadedModel& m,
                                    std::shared_ptr<const TokenizedText> tokens) {
    if (!m.model) throw std::invalid_argument("make_forward_request: no model loaded");
    const ModelConfig& c = m.model->config();
    ForwardRequest r;
    r.model = m.model;
    r.codec = m.codec;
    if (c.arch == Arch::EncoderDecoder && m.codec) {
        // Encoder–decoder: the text is the source, the target teacher-forced (app/session/seq2seq.h).
        Seq2SeqTokens io = make_seq2seq_tokens(m, s.text, s.target, s.to);
        r.source_tokens = io.source;
        tokens = io.target;
        r.translation = m.translation;
        r.target_codec = m.target_codec;
        r.decode.beam = s.beam;
        // The traced forward reads <start> + the decoded ids: keep that within max_seq_len.
        r.decode.max_len = std::max(1, std::min(r.decode.max_len, c.max_seq_len - 1));
    }
    r.temperature = s.temperature;
    r.mask = attention_mask(s, c, tokens ? int(tokens->ids.size()) : 0);
    r.edits = ablation_edits(s, c);
    r.logits = s.logits;
    r.logit_lens = s.lens;
    r.attention_only = s.attention_only;
    r.quant_activations = s.quant_activations;
    r.tokens = std::move(tokens);
    return r;
}

ForwardRequest make_forward_request(const UiState& st, const LoadedModel& m,
                                    std::shared_ptr<const TokenizedText> text_tokens) {
    return make_forward_request(forward_spec(st, m), m, std::move(text_tokens));
}

MaskSpec attention_mask_for(const UiState& st, const ModelConfig& c, int T) {
    return attention_mask(forward_spec(st, c), c, T);
}

std::vector<ActivationEdit> ablation_edits_for(const UiState& st, const ModelConfig& c) {
    return ablation_edits(forward_spec(st, c), c);
}

std::vector<interp::HeadRef> ablated_heads_for(const UiState& st, const ModelConfig& c) {
    std::vector<interp::HeadRef> heads;
    for (const auto& h : forward_spec(st, c).ablated) heads.push_back({h[0], h[1]});
    return heads;
}

std::vector<uint8_t> painted_cells(const std::vector<uint8_t>& sm_paint, int sm_paint_n, int n) {
    n = std::max(0, n);
    if (sm_paint_n == n && sm_paint.size() == size_t(n) * size_t(n)) return sm_paint;
    std::vector<uint8_t> c(size_t(n) * size_t(n), 0);
    for (int t = 0; t < n; ++t)
        for (int s = 0; s <= t; ++s) c[size_t(t) * size_t(n) + size_t(s)] = 1;
    return c;
}

std::vector<uint8_t> painted_cells(const UiState& st, int n) { return painted_cells(st.sm_paint, st.sm_paint_n, n); }

void paint_cell(UiState& st, int n, int row, int col, bool visible) {
    std::vector<uint8_t> c = painted_cells(st, n);
    if (row >= 0 && row < n && col >= 0 && col < n) c[size_t(row) * size_t(n) + size_t(col)] = visible ? 1 : 0;
    st.sm_paint = std::move(c);
    st.sm_paint_n = std::max(0, n);
}

MaskSpec painted_mask_spec(const std::vector<uint8_t>& cells, int n, int T, int S) {
    if (n < 0 || cells.size() != size_t(n) * size_t(n))
        throw std::invalid_argument("painted_mask_spec: expected " + std::to_string(n) + "² = " +
                                    std::to_string(int64_t(n) * n) + " cells, got " + std::to_string(cells.size()));
    if (T < 0 || S < 0)
        throw std::invalid_argument("painted_mask_spec: T and S must be >= 0, got " + std::to_string(T) + ", " +
                                    std::to_string(S));
    MaskSpec m;
    m.kind = MaskKind::Custom;
    m.custom.assign(size_t(T) * size_t(S), 0);
    for (int t = 0; t < T; ++t)
        for (int s = 0; s < S; ++s)
            m.custom[size_t(t) * size_t(S) + size_t(s)] =
                (t < n && s < n) ? (cells[size_t(t) * size_t(n) + size_t(s)] ? 1 : 0) : uint8_t(s <= t);
    return m;
}

}  // namespace ts::studio
