// `transformer-studio trace`: runs one forward pass with full capture and writes every recorded tensor to a
// safetensors file (plus token ids), for analysis outside the app (numpy, torch, safetensors readers).
#include "app/cli/cli.h"
#include "app/cli/args.h"
#include "app/session/text_codec.h"
#include "app/session/worker.h"
#include "core/model.h"
#include "core/safetensors.h"

#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace ts::cli {

namespace {
std::vector<int> parse_ids(const std::string& s) {
    std::vector<int> ids;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        try {
            size_t pos = 0;
            const int v = std::stoi(item, &pos);
            if (pos != item.size()) throw std::invalid_argument("");
            ids.push_back(v);
        } catch (...) {
            throw std::invalid_argument("--ids expects comma-separated integers, got '" + item + "'");
        }
    }
    return ids;
}
}  // namespace

int run_trace(int argc, char** argv) {
    static const char* const kUsage =
        "usage: transformer-studio trace --model DIR (--text T | --ids 1,2,3) --out FILE.safetensors\n"
        "         [--temperature X] [--filter PREFIX] [--last-logits-only]\n"
        "  Runs one forward pass and writes every recorded intermediate (README: Trace names) plus input_ids to\n"
        "  one safetensors file. --temperature scales the attention softmax; --filter keeps names starting with\n"
        "  PREFIX (e.g. dec.1.attn.); --last-logits-only computes logits for the last position only.\n";
    if (print_help_if_asked(argc, argv, 2, kUsage)) return 0;
    const Args args(argc, argv, 2, {"model", "text", "ids", "out", "temperature", "filter"}, {"last-logits-only"});
    const std::string out = args.required("out");
    const ui::LoadedModel lm = ui::load_model_folder(args.required("model"), terminal_progress());
    print_warnings("trace", lm.weight_warnings);

    std::vector<int> ids;
    if (args.has("ids")) {
        ids = parse_ids(args.get("ids"));
    } else if (args.has("text")) {
        if (lm.codec->ids_only())
            throw std::invalid_argument("model folder has no tokenizer (tokenizer.json): pass token ids with --ids");
        const ui::TokenizedText tt = ui::tokenize_text(args.get("text"), *lm.codec, lm.model->config().max_seq_len);
        for (const auto& n : tt.notices) std::fprintf(stderr, "note: %s\n", n.c_str());
        ids = tt.ids;
    } else {
        throw std::invalid_argument("give --text or --ids");
    }
    if (ids.empty()) throw std::invalid_argument("no tokens to trace (empty text)");

    ForwardOptions opt;
    opt.temperature = float(args.number("temperature", 1.0));
    opt.capture = args.has("filter") ? CaptureFilter::prefixes({args.get("filter")}) : CaptureFilter::all();
    opt.all_logits = !args.flag("last-logits-only");
    const ForwardResult r = forward(*lm.model, ids, opt);

    WeightMap tensors;
    for (const auto& name : r.trace->names()) tensors.emplace(name, r.trace->at(name));
    Tensor id_tensor({int64_t(ids.size())});
    for (size_t i = 0; i < ids.size(); ++i) id_tensor.data[i] = float(ids[i]);
    tensors.emplace("input_ids", std::move(id_tensor));
    std::string order;
    for (const auto& name : r.trace->names()) order += (order.empty() ? "" : ",") + name;
    save_safetensors(out, tensors, {{"model", args.get("model")}, {"trace_order", order}});
    std::fprintf(stderr, "wrote %zu tensors for %zu tokens to %s\n", tensors.size(), ids.size(), out.c_str());
    return 0;
}

}  // namespace ts::cli
