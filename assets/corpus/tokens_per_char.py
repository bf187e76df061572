#!/usr/bin/env python3
"""Measures how a byte-level BPE vocabulary cuts the pair corpus: mean tokens per Chinese character and per English
word on a TSV split (English<TAB>Chinese), by running `transformer-studio tokenizer encode --json`.

  /usr/bin/python3 assets/corpus/tokens_per_char.py --cli build/release/transformer-studio \
      --tokenizer runs/bpe-zh-en-8k --data corpus/zh-en/valid.tsv [--json out.json]

Definitions (each side is encoded one sentence a line, in chunks of lines):
  * tokens per Chinese character: tokens whose character span covers at least one CJK character, divided by the
    number of CJK characters (a token "文件" counts once for two characters; the three byte-tokens of an unmerged
    character count three times for one).
  * tokens per Chinese-side character: all tokens of the Chinese side (punctuation and Latin included) divided by its
    characters.
  * tokens per English word: all tokens of the English side divided by its whitespace-separated words.
  * CJK characters left as bytes: the share of CJK characters that no token covers whole (rare characters).
  * common words: the 30 most frequent two-character CJK runs of the split, and how many tokens each becomes.
Only the standard library is used.
"""
import argparse
import collections
import json
import re
import subprocess
import sys

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
CHUNK_LINES = 200  # keeps each --text argument far below Linux's 128 KiB limit for one argument


def encode(cli, tokenizer, text):
    r = subprocess.run([cli, "tokenizer", "encode", "--tokenizer", tokenizer, "--no-special", "--json", "--text",
                        text], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("tokens_per_char: tokenizer encode failed: " + r.stderr.strip())
    return json.loads(r.stdout)["tokens"]


def side_tokens(cli, tokenizer, lines):
    """-> list of (text, tokens) per chunk; newline-only tokens dropped (they only join the chunk's lines)."""
    out = []
    for i in range(0, len(lines), CHUNK_LINES):
        text = "\n".join(lines[i:i + CHUNK_LINES])
        toks = [t for t in encode(cli, tokenizer, text) if text[t["chars"][0]:t["chars"][1]].strip("\n") != ""
                or t["chars"][0] == t["chars"][1]]
        out.append((text, toks))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True, help="the transformer-studio executable")
    ap.add_argument("--tokenizer", required=True, help="tokenizer.json or its folder")
    ap.add_argument("--data", required=True, help="a TSV split (English<TAB>Chinese)")
    ap.add_argument("--json", help="also write the numbers here")
    args = ap.parse_args()
    en_lines, zh_lines = [], []
    with open(args.data, encoding="utf-8") as f:
        for line in f:
            en, zh = line.rstrip("\n").split("\t")
            en_lines.append(en)
            zh_lines.append(zh)

    cjk_chars = sum(len(CJK.findall(z)) for z in zh_lines)
    zh_chars = sum(len(z) for z in zh_lines)
    cjk_tokens = zh_tokens = split_chars = 0
    for text, toks in side_tokens(args.cli, args.tokenizer, zh_lines):
        zh_tokens += len(toks)
        # Characters left as byte pieces: a token shorter than the UTF-8 bytes of the one character it sits in.
        split_chars += len({t["chars"][0] for t in toks if t["chars"][1] - t["chars"][0] == 1
                            and CJK.match(text[t["chars"][0]])
                            and t["bytes"][1] - t["bytes"][0] < len(text[t["chars"][0]].encode("utf-8"))})
        # A byte-fragment token of a character may have an empty span at that character: widen it to one char.
        cjk_tokens += sum(1 for t in toks if CJK.search(text[t["chars"][0]:max(t["chars"][1], t["chars"][0] + 1)]))
    en_words = sum(len(e.split()) for e in en_lines)
    en_tokens = sum(len(toks) for _, toks in side_tokens(args.cli, args.tokenizer, en_lines))

    runs = collections.Counter()
    for z in zh_lines:
        for run in re.findall(r"[\u4e00-\u9fff]+", z):
            runs.update(run[i:i + 2] for i in range(len(run) - 1))
    common = [w for w, _ in runs.most_common(30)]
    common_tokens = {w: len(encode(args.cli, args.tokenizer, w)) for w in common}

    result = {
        "data": args.data, "tokenizer": args.tokenizer, "pairs": len(en_lines),
        "tokens_per_cjk_char": round(cjk_tokens / max(1, cjk_chars), 3),
        "tokens_per_zh_side_char": round(zh_tokens / max(1, zh_chars), 3),
        "cjk_chars_left_as_bytes": round(split_chars / max(1, cjk_chars), 4),
        "tokens_per_en_word": round(en_tokens / max(1, en_words), 3),
        "mean_tokens_per_sentence": {"en": round(en_tokens / max(1, len(en_lines)), 2),
                                     "zh": round(zh_tokens / max(1, len(zh_lines)), 2)},
        "common_2char_words_tokens": common_tokens,
        "common_2char_words_mean_tokens": round(sum(common_tokens.values()) / max(1, len(common_tokens)), 2),
    }
    print(json.dumps(result, ensure_ascii=False, indent=2))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, ensure_ascii=False, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
