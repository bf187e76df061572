// `transformer-studio compare`: a model against a reference of the same shape on one text — the quantization lens
// (core/interp/model_diff.h) on the command line: per position the KL of the next-token distributions and whether
// the top-1 tokens agree, per layer the residual stream's relative error, and the heads whose attention moved most.
#include "app/cli/args.h"
#include "app/cli/cli.h"
#include "app/session/worker.h"
#include "core/interp/model_diff.h"
#include "core/kernels/threads.h"
#include "core/util/file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace ts::cli {

int run_compare(int argc, char** argv) {
    static const char* const kUsage =
        "usage: transformer-studio compare --model A --reference B (--text T | --ids 1,2,3) [--json FILE] [--top N]\n"
        "  Runs both models (same architecture and sizes: e.g. a Q4_K_M GGUF file and its F16 twin, or two\n"
        "  checkpoints) on the tokens of A's tokenizer and prints, per position, KL(B || A) of the next-token\n"
        "  distributions in nats and whether the top-1 tokens agree; per layer, the relative L2 error of A's residual\n"
        "  stream against B's; and the N heads (default 8) whose attention probabilities differ most (mean |diff|).\n"
        "  --json writes all of it.\n";
    if (print_help_if_asked(argc, argv, 2, kUsage)) return 0;
    const Args args(argc, argv, 2,
                    {"model", "reference", "text", "ids", "json", "top", "threads", "quant-activations"});
    apply_compute_options(args);
    const studio::LoadedModel a = studio::load_model_folder(args.required("model"), terminal_progress());
    const studio::LoadedModel b = studio::load_model_folder(args.required("reference"), terminal_progress());
    std::vector<int> ids;
    if (args.has("ids")) {
        ids = parse_ids(args.get("ids"));
    } else if (args.has("text")) {
        if (a.codec->ids_only()) throw std::invalid_argument("model A has no tokenizer: pass token ids with --ids");
        ids = studio::tokenize_text(args.get("text"), *a.codec, a.model->config().max_seq_len).ids;
    } else {
        throw std::invalid_argument("give --text or --ids");
    }
    if (ids.empty()) throw std::invalid_argument("no tokens to compare (empty text)");
    const interp::ModelDiff d = interp::diff_models(*a.model, *b.model, ids);
    const int top = int(args.number("top", 8));

    std::printf("A: %s\nB: %s (reference)\n%d tokens: mean KL(B || A) %.3g nats, top-1 agreement %d / %d\n\n",
                a.display_name.c_str(), b.display_name.c_str(), d.T, d.mean_kl, d.top1_agreements, d.T);
    std::printf("%4s  %-16s  %10s  %5s  %s\n", "pos", "token", "KL (nats)", "top-1", "residual rel. error (last layer)");
    for (int t = 0; t < d.T && t < int(d.kl.size()); ++t) {
        // Padded by characters, not bytes ("·is" is 4 bytes, 3 characters).
        std::string label = a.codec->label(ids[size_t(t)]);
        size_t chars = 0, cut = label.size();
        for (size_t i = 0; i < label.size(); ++i)
            if ((static_cast<unsigned char>(label[i]) & 0xC0) != 0x80 && chars++ == 16) cut = i;
        label = label.substr(0, cut) + std::string(chars < 16 ? 16 - chars : 0, ' ');
        std::printf("%4d  %s  %10.3g  %5s  %.3g\n", t, label.c_str(), d.kl[size_t(t)],
                    d.top1_agree[size_t(t)] ? "same" : "DIFF", d.last_resid_rel_error[size_t(t)]);
    }
    std::printf("\n%-10s  %s\n", "layer", "residual stream relative L2 error");
    for (size_t l = 0; l < d.resid_rel_error.size(); ++l)
        std::printf("%-10s  %.3g\n", l == 0 ? "embed" : std::to_string(l - 1).c_str(), d.resid_rel_error[l]);
    std::vector<std::pair<int, int>> heads;
    for (int l = 0; l < int(d.attn_mean_abs_diff.rows()); ++l)
        for (int h = 0; h < int(d.attn_mean_abs_diff.cols()); ++h) heads.emplace_back(l, h);
    std::sort(heads.begin(), heads.end(), [&](auto x, auto y) {
        return d.attn_mean_abs_diff(x.first, x.second) > d.attn_mean_abs_diff(y.first, y.second);
    });
    std::printf("\n%-10s  %s\n", "head", "mean |attention difference|");
    for (int i = 0; i < top && i < int(heads.size()); ++i)
        std::printf("L%d H%-6d  %.3g\n", heads[size_t(i)].first, heads[size_t(i)].second,
                    d.attn_mean_abs_diff(heads[size_t(i)].first, heads[size_t(i)].second));
    if (args.has("json")) {
        nlohmann::json j;
        j["model"] = a.display_name;
        j["reference"] = b.display_name;
        j["ids"] = ids;
        j["kl"] = d.kl;
        j["top1_agree"] = std::vector<int>(d.top1_agree.begin(), d.top1_agree.end());
        j["mean_kl"] = d.mean_kl;
        j["resid_rel_error"] = d.resid_rel_error;
        j["last_resid_rel_error"] = d.last_resid_rel_error;
        std::vector<std::vector<float>> attn(size_t(d.attn_mean_abs_diff.rows()));
        for (int l = 0; l < int(attn.size()); ++l)
            attn[size_t(l)].assign(d.attn_mean_abs_diff.row(l).data(), d.attn_mean_abs_diff.row(l).data() + d.attn_mean_abs_diff.cols());
        j["attn_mean_abs_diff"] = attn;
        write_file_atomic(args.get("json"), j.dump(2) + "\n");
    }
    return 0;
}

}  // namespace ts::cli
