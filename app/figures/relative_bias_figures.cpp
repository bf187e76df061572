// T5's relative position bias as figures for the Positions panel: which bucket each relative distance falls in, the
// learned bias of every head against the distance, and one head's bias over (query i, key j) — the scalar added to
// the attention score before the softmax, T5's answer to "how does attention know about order".
#include "app/figures/figures.h"
#include "app/i18n/tr.h"
#include "core/kernels/ops.h"

#include <algorithm>
#include <cmath>

namespace ts::figures {

namespace {

/// Relative positions key − query shown on the x axes: out to a little beyond max_distance, where buckets saturate.
int distance_range(int max_distance) { return std::clamp(max_distance + max_distance / 4, 8, 256); }

const Tensor* bias_table(const Model& m, const std::string& stack) {
    return m.config().relative_attention_bias ? m.find_weight(stack + ".relative_attention_bias") : nullptr;
}

std::string stack_name(const std::string& stack) {
    return stack == "enc" ? tr("encoder") : tr("decoder");
}

}  // namespace

plot::Figure relative_bucket_figure(int num_buckets, int max_distance) {
    plot::Figure f;
    f.title = tr("Relative position buckets (T5)");
    f.view = "relative-buckets";
    f.formula = tr("bucket(j − i): exact for |j − i| < buckets/4 (encoder) or buckets/2 (decoder), then logarithmic up to "
                   "max_distance, one shared bucket beyond; the encoder gives half its buckets to keys after the query, the "
                   "decoder sees no future (Raffel et al. 2020 §2.1)");
    f.x.label = tr("relative position j − i (key − query)");
    f.x.unit = tr("tokens");
    f.y.label = tr("bucket");
    const int R = distance_range(max_distance);
    for (int k = 0; k < 2; ++k) {
        plot::Series s;
        s.name = k == 0 ? tr("encoder (bidirectional)") : tr("decoder (causal)");
        s.color = plot::palette(k);
        s.dashed = k == 1;
        for (int r = -R; r <= R; ++r) {
            s.x.push_back(r);
            s.y.push_back(relative_position_bucket(r, k == 0, num_buckets, max_distance));
        }
        f.series.push_back(std::move(s));
    }
    f.ref_lines.push_back({true, double(-max_distance), "±max_distance"});
    f.ref_lines.push_back({true, double(max_distance), ""});
    f.note = trf("%d buckets, max_distance %d tokens", num_buckets, max_distance);
    return f;
}

std::optional<plot::Figure> relative_bias_heads_figure(const Model& m, const std::string& stack) {
    const Tensor* table = bias_table(m, stack);
    if (!table) return std::nullopt;
    const ModelConfig& c = m.config();
    const int H = c.n_heads, B = c.relative_attention_num_buckets, R = distance_range(c.relative_attention_max_distance);
    plot::Figure f;
    f.title = trf("Bias per head against j − i, %s", stack_name(stack).c_str());
    f.view = "relative-bias-heads";
    f.formula = tr("score(i, j) = q_i · k_j + b_h[bucket(j − i)]: one learned scalar per (bucket, head), shared by every "
                   "layer of the stack; no 1/√d_head scaling in T5");
    f.x.label = tr("relative position j − i (key − query)");
    f.x.unit = tr("tokens");
    f.y.label = tr("bias added to the score");
    for (int h = 0; h < H; ++h) {
        plot::Series s;
        s.name = trf("head %d", h);
        s.color = plot::palette(h);
        s.width = 1.5f;
        for (int r = -R; r <= R; ++r) {
            const int b = relative_position_bucket(r, stack == "enc", B, c.relative_attention_max_distance);
            s.x.push_back(r);
            s.y.push_back(table->data[size_t(b) * H + h]);
        }
        f.series.push_back(std::move(s));
    }
    f.legend = H <= 16;
    f.note = stack == "enc"
                 ? trf("%s: %d buckets, max_distance %d tokens, bidirectional (encoder)", m.config().name.c_str(), B,
                       c.relative_attention_max_distance)
                 : trf("%s: %d buckets, max_distance %d tokens, causal (decoder self-attention)", m.config().name.c_str(),
                       B, c.relative_attention_max_distance);
    return f;
}

std::optional<plot::Figure> relative_bias_heatmap_figure(const Model& m, const std::string& stack, int head,
                                                         int n_tokens) {
    const Tensor* table = bias_table(m, stack);
    if (!table) return std::nullopt;
    const ModelConfig& c = m.config();
    const int H = c.n_heads, N = std::clamp(n_tokens, 2, 128);
    head = std::clamp(head, 0, H - 1);
    MatrixRM bias;
    relative_position_bias(table->data.data(), c.relative_attention_num_buckets, H, N, N, 0, stack == "enc",
                           c.relative_attention_max_distance, bias);
    plot::Figure f;
    f.title = trf("Position bias of head %d, %s", head, stack_name(stack).c_str());
    f.view = "relative-bias";
    f.formula = tr("bias[h][i][j] = relative_attention_bias[bucket(j − i)][h], added to q_i · k_j before the softmax; "
                   "constant along each diagonal (it depends on j − i only)");
    const float* rows = bias.data() + size_t(head) * N * N;
    f.heatmap = plot::make_heatmap(N, N, std::span<const float>(rows, size_t(N) * N), plot::Colormap::Diverging,
                                   tr("bias"));
    if (stack != "enc")  // the causal mask hides j > i in the decoder: draw those cells as masked
        for (int i = 0; i < N; ++i)
            for (int j = i + 1; j < N; ++j) f.heatmap->values[size_t(i) * N + j] = -INFINITY;
    f.heatmap->row_name = tr("query i");
    f.heatmap->col_name = tr("key j");
    f.x.label = tr("key position j");
    f.x.unit = tr("tokens");
    f.y.label = tr("query position i");
    f.y.unit = tr("tokens");
    f.square_cells = true;
    f.note = stack != "enc" ? trf("%s, %d positions; gray: future keys, masked in the decoder", m.config().name.c_str(), N)
                            : trf("%s, %d positions", m.config().name.c_str(), N);
    return f;
}

}  // namespace ts::figures
