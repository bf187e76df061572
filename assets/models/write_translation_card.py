#!/usr/bin/env python3
"""Writes MODEL_CARD.md for the bundled translation model from its config.json, train_log.jsonl, the corpus
statistics of `corpus build --parallel zh-en`, the tokenizer measurement of assets/corpus/tokens_per_char.py and
one `eval --pairs --json` report per test split (--eval NAME=report.json, repeated: ui, programs, manuals — the
corpus's test split per domain — and everyday, the project's own set of everyday sentences never trained on; a
bare path is one split called "test"). With --trained-on-en / --trained-on-zh it also sets translation.json's
"trained_on" lines, which the app's sidebar shows.

  /usr/bin/python3 assets/models/write_translation_card.py --model assets/models/zh-en-transformer \
      --eval ui=ui.json --eval everyday=everyday.json --corpus-stats corpus/zh-en/stats.json \
      --tokenizer-stats tok.json --tokenizer-command "..." --train-command "..." --eval-command "..."
"""
import argparse
import json
import os

from card_common import loss_table, read_train_log


def md_cell(s):
    return s.replace("|", "\\|").replace("\n", " ")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--eval", required=True, action="append", help="NAME=report.json, repeated (or one path)")
    ap.add_argument("--corpus-stats", required=True)
    ap.add_argument("--tokenizer-stats", required=True, help="assets/corpus/tokens_per_char.py --json output")
    ap.add_argument("--tokenizer-command", required=True)
    ap.add_argument("--train-command", required=True, action="append", help="repeat for each stage")
    ap.add_argument("--eval-command", required=True)
    ap.add_argument("--summary", default="")
    ap.add_argument("--notes-file", default="", help="markdown appended at the end")
    ap.add_argument("--examples-per-direction", type=int, default=10)
    ap.add_argument("--examples-per-split-in-app", type=int, default=12, help="pairs per split in examples.tsv")
    ap.add_argument("--trained-on-en", default="")
    ap.add_argument("--trained-on-zh", default="")
    a = ap.parse_args()
    cfg = json.load(open(os.path.join(a.model, "config.json")))
    spec = json.load(open(os.path.join(a.model, "translation.json")))
    reports = []  # (split name, report), in the order given
    for item in a.eval:
        name, path = item.split("=", 1) if "=" in item else ("test", item)
        reports.append((name, json.load(open(path))))
    rep = reports[0][1]
    if a.trained_on_en or a.trained_on_zh:
        spec["trained_on"] = {k: v for k, v in (("en", a.trained_on_en), ("zh", a.trained_on_zh)) if v}
        with open(os.path.join(a.model, "translation.json"), "w", encoding="utf-8") as f:
            json.dump(spec, f, indent=2, ensure_ascii=False, sort_keys=True)
            f.write("\n")
    stats = json.load(open(a.corpus_stats))
    log, val = read_train_log(a.model)
    last = log[-1]
    size_mb = os.path.getsize(os.path.join(a.model, "model.safetensors")) / 1e6
    tok = json.load(open(a.tokenizer_stats))
    arch = ", ".join("%s=%s" % (k, cfg[k]) for k in (
        "d_model", "n_enc_layers", "n_layers", "n_heads", "d_ff", "vocab_size", "max_seq_len", "norm",
        "norm_placement", "activation", "position", "scale_embeddings", "tie_embeddings"))
    lines = [
        "# %s" % cfg["name"], "",
        a.summary, "",
        "## Model", "",
        "- Architecture: encoder-decoder as in \"Attention Is All You Need\" at small scale: %s." % arch,
        "- Parameters: %d (%.1f MB as F32 safetensors)." % (rep["parameters"], size_mb),
        "- One model for both directions: the source starts with a target-language token (%s), as in multilingual "
        "NMT (Johnson et al. 2017). Decoder start and end token: `%s`."
        % (", ".join("`%s` → %s" % (v, k) for k, v in sorted(spec["target_language_tokens"].items())),
           spec["decoder_start"]),
        "- Tokenizer: one byte-level BPE vocabulary of %d tokens shared by both languages, trained by this project's "
        "BPE trainer on the training split. On the held-out Chinese side (%s) it uses %.2f tokens per Chinese "
        "character (raw UTF-8 bytes would be 3), %.1f%% of Chinese characters stay split into bytes, and the 30 most "
        "common two-character words become %.2f tokens on average; English takes %.2f tokens per word."
        % (cfg["vocab_size"], os.path.basename(tok["data"]), tok["tokens_per_cjk_char"],
           100 * tok["cjk_chars_left_as_bytes"], tok["common_2char_words_mean_tokens"], tok["tokens_per_en_word"]),
        "",
        "## Data", "",
        "Human English ↔ Simplified Chinese translations from Debian 12 and npm, rebuilt by `transformer-studio "
        "corpus build --parallel zh-en` (assets/corpus/build_parallel.py); sources, versions, licences and counts in "
        "assets/corpus/SOURCES.md. The text is not committed.", "",
    ]
    if "per_domain" in stats:
        dom = stats["per_domain"]
        lines += ["- Software menus and messages (gettext catalogs): %d pairs; programs and games (Firefox, "
                  "Thunderbird, KDE education apps, Krita, Wesnoth, Qt, GCompris, CLDR names, ...): %d; manuals "
                  "(LibreOffice help, Debian's manuals, GNOME help, package descriptions): %d; CC-CEDICT word pairs "
                  "(training only): %d." % (dom["ui"], dom["programs"], dom["manuals"], stats.get("lexicon_pairs", 0)),
                  "- Never trained on: the project's everyday set (assets/corpus/everyday), written for this purpose; "
                  "no corpus pair shares a side with it.", ""]
    lines += ["| split | pairs |", "|---|---:|"]
    for k in [k for k in stats["pairs"] if k.startswith(("train", "valid", "test"))]:
        lines.append("| %s | %d |" % (k, stats["pairs"][k]))
    lines += [
        "", "Held-out splits are chosen by a hash of the normalised English side, so one English string never "
        "lands on both sides. Mean length: %.1f English characters (%.1f words), %.1f Chinese characters."
        % (stats["mean_chars"]["en"], stats["mean_en_words"], stats["mean_chars"]["zh"]), "",
        "## Reproduce", "",
        "```", a.tokenizer_command] + a.train_command + [a.eval_command, "```", "",
        "## Training", "",
        "- Steps: %d, wall time %.0f min on a shared 2-core machine (%.0f tokens/s at the end)."
        % (last["step"], last["elapsed_s"] / 60, last["tokens_per_s"]),
        "- Final train loss %.3f nats (label-smoothed, with dropout); held-out loss %.3f nats at step %d."
        % (last.get("train_loss") or float("nan"), val[-1]["val_loss"], val[-1]["step"]), "",
        "![training curve](loss_curve.svg)", "",
        "## Quality on the held-out test splits", "",
        "chrF (chrF2, character 6-grams) and BLEU as sacreBLEU 2.x computes them (BLEU tokenizer `zh` for Chinese "
        "output, `13a` for English). Retrieval is the baseline: the training translation of the most similar "
        "training source by character n-gram TF-IDF cosine. Beam width %d, length penalty %.1f."
        % (rep["beam"], rep.get("length_penalty", 1.0)), "",
        "| split | direction | pairs | held-out CE (nats/token) | greedy chrF / BLEU | beam chrF / BLEU | retrieval "
        "chrF / BLEU | beam − retrieval chrF |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for split, sr in reports:
        for d, r in sorted(sr["directions"].items()):
            beam = r.get("beam") or r["greedy"]
            ret = r.get("retrieval")
            lines.append("| %s | %s | %d | %.3f | %.1f / %.1f | %.1f / %.1f | %s | %s |" % (
                split, d, r["pairs"], r["held_out"]["cross_entropy_nats"], r["greedy"]["chrf"], r["greedy"]["bleu"],
                beam["chrf"], beam["bleu"], "%.1f / %.1f" % (ret["chrf"], ret["bleu"]) if ret else "-",
                "%+.1f" % (beam["chrf"] - ret["chrf"]) if ret else "-"))
    al_split, al_rep = next(((n, r) for n, r in reports
                             if any(d.get("alignment_hits") for d in r["directions"].values())), reports[0])
    lines += ["", "## Cross-attention alignment", "",
              "How often the cross-attention argmax of a target token lands on a source token that IBM Model 1 "
              "(assets/corpus/ibm1_align.py, fitted on the training split) aligns to it, on held-out pairs (the %s "
              "split). The query is either the decoder step that produces the token or the step that reads it (one "
              "step later)." % al_split, "",
              "| direction | query | best head | rate | best layer (head average) | rate | chance |",
              "|---|---|---|---:|---|---:|---:|"]
    for d, r in sorted(al_rep["directions"].items()):
        al = r.get("alignment_hits")
        if not al:
            continue
        for key, name in (("producing_step", "producing"), ("reading_step_shift1", "reading")):
            if key not in al:
                continue
            h, l = al[key]["best_head"], al[key]["best_layer_head_average"]
            lines.append("| %s | %s | L%d H%d | %.3f | L%d | %.3f | %.3f |" % (
                d, name, h["layer"], h["head"], h["rate"], l["layer"], l["rate"], al["chance_rate"]))
    lines += ["", "## Held-out examples", "",
              "The first examples of each split and direction as `eval` lists them, good and bad alike.", ""]
    for split, sr in reports:
        for d, r in sorted(sr["directions"].items()):
            lines += ["### %s, %s" % (split, d), "", "| source | reference | ours (beam) | retrieval |",
                      "|---|---|---|---|"]
            for e in r["examples"][:a.examples_per_direction]:
                lines.append("| %s | %s | %s | %s |" % tuple(md_cell(e.get(k, "")) for k in
                                                           ("source", "reference", "beam", "retrieval")))
            lines.append("")
    # The app's examples picker (examples.tsv: English, Chinese, domain): the first en-zh examples of each split,
    # grouped by split in the order given.
    with open(os.path.join(a.model, "examples.tsv"), "w", encoding="utf-8", newline="\n") as f:
        for split, sr in reports:
            en_zh = sr["directions"].get("en-zh")
            for e in (en_zh["examples"] if en_zh else [])[:a.examples_per_split_in_app]:
                en, zh = e.get("source", ""), e.get("reference", "")
                if en and zh and "\t" not in en + zh and "\n" not in en + zh:
                    f.write("%s\t%s\t%s\n" % (en, zh, split))
    lines += ["## Training log", ""] + loss_table(val, with_stage=False)
    if a.notes_file:
        lines += ["", open(a.notes_file).read().rstrip()]
    with open(os.path.join(a.model, "MODEL_CARD.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines).rstrip() + "\n")


if __name__ == "__main__":
    main()
