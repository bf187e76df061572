// Activation edits: parsing trace-point names into (stack, layer, site), validating them against the model and the
// call, and applying Zero / Mean / Set in place on the forward's row-major buffers.
#include "core/trace/edit_plan.h"
#include "core/util/number.h"

#include <charconv>
#include <stdexcept>
#include <string_view>

namespace ts {

std::string describe(const ActivationEdit& e) {
    std::string s = e.point;
    if (e.head >= 0) s += " head " + std::to_string(e.head);
    if (e.position >= 0) s += " @" + std::to_string(e.position);
    switch (e.kind) {
        case EditKind::Zero: s += " := 0"; break;
        case EditKind::Mean: s += " := mean over positions"; break;
        case EditKind::Set: s += " := " + std::to_string(e.values.size()) + " given values"; break;
    }
    if (e.position < 0) s += " (all positions)";
    return s;
}

std::string resid_pre_point(const std::string& stack, int layer) {
    if (layer < 0) throw std::invalid_argument("resid_pre_point: negative layer " + std::to_string(layer));
    return layer == 0 ? std::string("embed.out") : stack + "." + std::to_string(layer - 1) + ".resid_ffn";
}

namespace detail {

namespace {

constexpr const char* kEditable =
    "editable: embed.out, s.i.resid_attn, s.i.resid_cross, s.i.resid_ffn, s.i.attn.out, s.i.attn.head_out, "
    "s.i.cross_attn.out, s.i.cross_attn.head_out, s.i.ffn.out, s.i.ffn.post_act with s = enc|dec";

[[noreturn]] void fail(const ActivationEdit& e, const std::string& why) {
    throw std::invalid_argument("activation edit '" + e.point + "': " + why);
}

std::vector<std::string_view> split_dots(std::string_view s) {
    std::vector<std::string_view> parts;
    size_t b = 0;
    while (true) {
        const size_t d = s.find('.', b);
        parts.push_back(s.substr(b, d == std::string_view::npos ? std::string_view::npos : d - b));
        if (d == std::string_view::npos) break;
        b = d + 1;
    }
    return parts;
}

bool parse_layer(std::string_view s, int& out) {
    if (s.empty() || s.size() > 6 || s[0] == '-') return false;
    const auto v = parse_int(s);
    if (!v) return false;
    out = int(*v);
    return true;
}

bool site_of(const std::vector<std::string_view>& p, EditSite& site) {
    if (p.size() == 3) {
        if (p[2] == "resid_attn") site = EditSite::ResidAttn;
        else if (p[2] == "resid_cross") site = EditSite::ResidCross;
        else if (p[2] == "resid_ffn") site = EditSite::ResidFfn;
        else return false;
        return true;
    }
    if (p.size() != 4) return false;
    if (p[2] == "attn" && p[3] == "out") site = EditSite::AttnOut;
    else if (p[2] == "attn" && p[3] == "head_out") site = EditSite::AttnHeadOut;
    else if (p[2] == "cross_attn" && p[3] == "out") site = EditSite::CrossOut;
    else if (p[2] == "cross_attn" && p[3] == "head_out") site = EditSite::CrossHeadOut;
    else if (p[2] == "ffn" && p[3] == "out") site = EditSite::FfnOut;
    else if (p[2] == "ffn" && p[3] == "post_act") site = EditSite::FfnPostAct;
    else return false;
    return true;
}

// Checks head, position and values of an edit on a point of `width` columns, `n_heads` heads (0: no heads).
void check_selection(const ActivationEdit& e, int n_heads, int width, int start, int T) {
    if (e.head >= 0 || e.head < -1) {
        if (n_heads == 0) fail(e, "head " + std::to_string(e.head) + " given, but this point has no heads");
        if (e.head >= n_heads)
            fail(e, "head " + std::to_string(e.head) + " out of range [0, n_heads = " + std::to_string(n_heads) + ")");
        if (e.head < -1) fail(e, "head must be -1 (all) or a head index, got " + std::to_string(e.head));
    }
    if (e.position < -1 || (e.position >= 0 && (e.position < start || e.position >= start + T)))
        fail(e, "position " + std::to_string(e.position) + " outside this call's positions [" +
                    std::to_string(start) + ", " + std::to_string(start + T) + ")");
    const int64_t heads = n_heads == 0 ? 1 : (e.head < 0 ? n_heads : 1);
    const int64_t rows = e.position < 0 ? T : 1;
    const int64_t need = heads * rows * width;
    if (e.kind == EditKind::Set && static_cast<int64_t>(e.values.size()) != need) {
        std::string shape = "(";
        if (n_heads) shape += std::to_string(heads) + ", ";
        shape += std::to_string(rows) + ", " + std::to_string(width) + ")";
        fail(e, "Set needs " + std::to_string(need) + " values " + shape + " for the selection, got " +
                    std::to_string(e.values.size()));
    }
    if (e.kind != EditKind::Set && !e.values.empty())
        fail(e, "values given for a Zero/Mean edit (only Set takes values)");
}

}  // namespace

EditPlan plan_edits(const ModelConfig& c, const std::vector<ActivationEdit>& edits, const EditScope& scope) {
    EditPlan plan;
    plan.enc.T = scope.enc_T;
    plan.dec.T = scope.dec_T;
    plan.dec.start_pos = scope.dec_start;
    if (edits.empty()) return plan;
    const int enc_layers = c.arch == Arch::EncoderDecoder ? c.n_enc_layers : (c.has_encoder() ? c.n_layers : 0);
    const int dec_layers = c.has_decoder() ? c.n_layers : 0;
    const int D = c.d_head();
    for (const ActivationEdit& e : edits) {
        const std::vector<std::string_view> p = split_dots(e.point);
        // --- embeddings ---
        const bool is_embed = e.point == "embed.out" || e.point == "enc.embed.out";
        if (is_embed) {
            StackEdits* st = nullptr;
            if (scope.enc_embed && e.point == scope.enc_embed) st = &plan.enc;
            if (scope.dec_embed && e.point == scope.dec_embed) st = &plan.dec;
            if (!st) fail(e, "this call has no such embedding point (forward_seq2seq: enc.embed.out feeds the encoder, "
                             "embed.out the decoder; stack entry points take embeddings and have none)");
            check_selection(e, 0, c.d_model, st->start_pos, st->T);
            st->embed.push_back(&e);
            continue;
        }
        // --- per-layer points ---
        EditSite site{};
        int layer = 0;
        if (p.size() < 3 || (p[0] != "enc" && p[0] != "dec") || !parse_layer(p[1], layer) || !site_of(p, site))
            fail(e, std::string("not an editable trace point (") + kEditable + ")");
        const bool enc = p[0] == "enc";
        const int n = enc ? enc_layers : dec_layers;
        if (n == 0)
            fail(e, "model '" + c.name + "' (" + to_string(c.arch) + ") has no '" + std::string(p[0]) + "' stack");
        if (layer >= n)
            fail(e, "layer " + std::to_string(layer) + " out of range [0, " + std::to_string(n) + ") of the " +
                        std::string(p[0]) + " stack");
        if (!(enc ? scope.has_enc : scope.has_dec)) fail(e, "this call does not run the " + std::string(p[0]) + " stack");
        const bool cross = site == EditSite::CrossHeadOut || site == EditSite::CrossOut || site == EditSite::ResidCross;
        if (cross && (enc || c.arch != Arch::EncoderDecoder))
            fail(e, "cross-attention exists only in the decoder of an encoder-decoder model");
        StackEdits& st = enc ? plan.enc : plan.dec;
        const bool heads = site == EditSite::AttnHeadOut || site == EditSite::CrossHeadOut;
        const int width = heads ? D : site == EditSite::FfnPostAct ? c.d_ff : c.d_model;
        check_selection(e, heads ? c.n_heads : 0, width, st.start_pos, st.T);
        if (st.sites.empty()) st.sites.resize(size_t(n) * kEditSites);
        st.sites[size_t(layer) * kEditSites + size_t(site)].push_back(&e);
    }
    return plan;
}

void apply_row_edits(EditList edits, int start_pos, MatrixRM& x) {
    const Eigen::Index T = x.rows();
    for (const ActivationEdit* e : edits) {
        const Eigen::Index r0 = e->position < 0 ? 0 : e->position - start_pos;
        const Eigen::Index nr = e->position < 0 ? T : 1;
        switch (e->kind) {
            case EditKind::Zero: x.middleRows(r0, nr).setZero(); break;
            case EditKind::Mean: {
                const RowVectorF mean = x.colwise().mean();
                x.middleRows(r0, nr).rowwise() = mean;
                break;
            }
            case EditKind::Set: x.middleRows(r0, nr) = ConstMapRM(e->values.data(), nr, x.cols()); break;
        }
    }
}

void apply_head_edits(EditList edits, int start_pos, int H, int T, MatrixRM& x) {
    const Eigen::Index D = x.cols();
    for (const ActivationEdit* e : edits) {
        const int h0 = e->head < 0 ? 0 : e->head, nh = e->head < 0 ? H : 1;
        const int r0 = e->position < 0 ? 0 : e->position - start_pos, nr = e->position < 0 ? T : 1;
        for (int k = 0; k < nh; ++k) {
            Eigen::Ref<MatrixRM> block = x.middleRows(Eigen::Index(h0 + k) * T, T);
            switch (e->kind) {
                case EditKind::Zero: block.middleRows(r0, nr).setZero(); break;
                case EditKind::Mean: {
                    const RowVectorF mean = block.colwise().mean();
                    block.middleRows(r0, nr).rowwise() = mean;
                    break;
                }
                case EditKind::Set:
                    block.middleRows(r0, nr) = ConstMapRM(e->values.data() + size_t(k) * nr * D, nr, D);
                    break;
            }
        }
    }
}

}  // namespace detail
}  // namespace ts
