#!/usr/bin/env python3
"""Writes MODEL_CARD.md for a bundled model from its config.json, train_log.jsonl and an `eval --json` report.

  /usr/bin/python3 assets/models/write_model_card.py --model assets/models/austen-gpt --eval report.json \
      --train-command "transformer-studio train ..." --tokenizer-command "transformer-studio tokenizer train ..."
"""
import argparse
import json
import os

from card_common import loss_table, read_train_log


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--eval", required=True)
    ap.add_argument("--train-command", required=True, action="append", help="repeat for each stage")
    ap.add_argument("--tokenizer-command", required=True)
    ap.add_argument("--eval-command", required=True)
    ap.add_argument("--summary", default="")
    ap.add_argument("--notes-file", default="", help="markdown appended at the end")
    a = ap.parse_args()
    cfg = json.load(open(os.path.join(a.model, "config.json")))
    rep = json.load(open(a.eval))
    log, val = read_train_log(a.model)
    last = log[-1]
    ho, ind, prev = rep["held_out"], rep["induction"], rep["previous_token_head"]
    size_mb = os.path.getsize(os.path.join(a.model, "model.safetensors")) / 1e6
    arch = ", ".join("%s=%s" % (k, cfg[k]) for k in (
        "d_model", "n_layers", "n_heads", "n_kv_heads", "d_ff", "vocab_size", "max_seq_len", "norm",
        "norm_placement", "activation", "position", "tie_embeddings"))
    lines = [
        "# %s" % cfg["name"], "",
        a.summary, "",
        "## Model", "",
        "- Architecture: decoder-only, %s." % arch,
        "- Parameters: %d (%.1f MB as F32 safetensors)." % (rep["parameters"], size_mb),
        "- Tokenizer: byte-level BPE, %d tokens, trained by this project's BPE trainer on the same corpus "
        "(`<|endoftext|>` is id %d)." % (cfg["vocab_size"], cfg["vocab_size"] - 1), "",
        "## Data", "",
        "Real English from two Debian 12 packages, rebuilt by `transformer-studio corpus build --out corpus/` "
        "(assets/corpus/build_corpus.py): Jane Austen's six novels (r-cran-janeaustenr; public-domain text, MIT "
        "packaging) as one paragraph per line, and WordNet 3.0's example sentences (wordnet-base), lines shuffled "
        "with seed 1234. About 5.7 MB of text, 1.38 M tokens; the last 2% of the token stream is held out. "
        "Licences and WordNet's required notice: assets/corpus/SOURCES.md.", "",
        "## Reproduce", "",
        "```", a.tokenizer_command] + a.train_command + [a.eval_command, "```", "",
        "## Training", "",
        "- Steps: %d, wall time %.0f min on a shared 2-core machine (%.0f tokens/s at the end, one thread)."
        % (last["step"], last["elapsed_s"] / 60, last["tokens_per_s"]),
        "- Final train loss %.3f nats; held-out loss %.3f nats at step %d."
        % (last.get("train_loss") or float("nan"), val[-1]["val_loss"], val[-1]["step"]), "",
        "![training curve](loss_curve.svg)", "",
    ] + loss_table(val, with_stage=True)
    lines += [
        "", "## Quality (measured by `transformer-studio eval`)", "",
        "| measure | value |", "|---|---:|",
        "| held-out cross-entropy (%d tokens) | %.3f nats (perplexity %.1f) |"
        % (ho["tokens"], ho["cross_entropy_nats"], ho["perplexity"]),
        "| unigram baseline, same tokenizer (add-one, train split) | %.3f nats (perplexity %.1f) |"
        % (ho["unigram_cross_entropy_nats"], ho["unigram_perplexity"]),
        "| best previous-token head: mean attention to t−1 on held-out prose | %.3f (layer %d, head %d) |"
        % (prev["mean_attention_to_t_minus_1"], prev["layer"], prev["head"]),
    ]
    kinds = {"uniform_random": "50 ids uniform over the vocabulary",
             "frequent_random": "50 ids among the 2000 most frequent training tokens",
             "held_out_text": "a 50-token held-out passage"}
    for k, what in kinds.items():
        r = ind[k]
        lines.append("| induction, %s repeated twice (%d sequences): best head's mean attention from the second copy "
                     "to the token after the earlier occurrence | %.4f (layer %d, head %d) |"
                     % (what, r["sequences"], r["mean_attention_to_token_after_earlier_occurrence"], r["best_layer"],
                        r["best_head"]))
        lines.append("| loss on the first / second copy of those sequences | %.2f / %.2f nats |"
                     % (r["loss_first_copy_nats"], r["loss_second_copy_nats"]))
    lines += [
        "", "## Samples (temperature %.1f, no top-k/top-p)" % rep["samples"]["temperature"], "",
    ]
    for t in rep["samples"]["texts"]:
        lines.append("> " + t.replace("\n", " ⏎ "))
        lines.append("")
    lines += ["## Limits", "",
              "A %.0f-million-parameter model trained for %.0f minutes on 1.4 M tokens: it writes Austen-flavoured, "
              "locally grammatical English with little global sense. It exists to make attention patterns, "
              "activations and predictions in Transformer Studio real rather than random; it is not a language "
              "model to rely on for anything else." % (rep["parameters"] / 1e6, last["elapsed_s"] / 60), ""]
    if a.notes_file:
        lines.append(open(a.notes_file).read())
    open(os.path.join(a.model, "MODEL_CARD.md"), "w").write("\n".join(lines))


if __name__ == "__main__":
    main()
