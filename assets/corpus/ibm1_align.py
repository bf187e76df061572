#!/usr/bin/python3
"""IBM Model 1 word alignment (Brown et al. 1993, "The Mathematics of Statistical Machine Translation", §4.1) at the
level of the translation model's own tokens: the reference `transformer-studio eval --alignments` compares
cross-attention with.

For each direction a -> b ("en-zh": English source, Chinese target) it fits the lexical translation table
t(f | e) of target tokens f given source tokens e (plus a NULL source word) by EM on the training pairs, then writes
the Viterbi alignment of every test pair: for each target token j, argmax_i t(f_j | e_i) over the source tokens and
NULL (IBM 1's alignment probabilities are uniform, so the Viterbi alignment is this per-token arg-max; ties go to
the earliest source token; a target token whose best probability is NULL's, or 0, is aligned to NULL = -1).

Tokens are exactly those the model sees: every side is encoded by `transformer-studio tokenizer encode --lines
--no-special` (the same tokenizer call as `train --pairs`: special tokens in the text are plain text), and lines
are read as `read_pair_tsv` (core/train/pair_data.cpp) reads them: split at \\n, a trailing \\r dropped, lines
without exactly one tab between two non-empty sides skipped, line numbers counted from 0 over all lines.

Output (JSON lines; format "ts-ibm1-alignments-1"):
  line 1: a header object {"format", "method", "iterations", "train", "train_pairs", "test", "source_prefix",
          "directions", "log_likelihood_per_target_token", ...}.
  then one object per test pair and direction:
    {"line": L, "direction": "en-zh", "src_len": S, "tgt_len": T, "src_fnv1a": "hex", "tgt_fnv1a": "hex",
     "align": [a_0, ..., a_{T-1}]}
  L: 0-based line of the pair in the test file. S: length of the model's whole encoder input
  ([<2xx>] when source_prefix = 1, the source text tokens, the end token). T: target text tokens (the end token
  is not aligned). a_j: the position in that encoder input of the source token target token j is aligned to
  (source text token i is at source_prefix + i), or -1 for NULL. src_fnv1a / tgt_fnv1a: 64-bit FNV-1a of the
  source / target text token ids as little-endian int32 bytes, so a reader can check it tokenizes the same way.

Usage (a few minutes at most; numpy's bincount does the EM):
  /usr/bin/python3 assets/corpus/ibm1_align.py --ts build/release/transformer-studio \\
      --tokenizer MODEL_DIR --train corpus/zh-en/train.tsv --test corpus/zh-en/test.tsv \\
      --direction both --out MODEL_DIR/ibm1_test_alignments.jsonl
Needs only the standard library and python3-numpy.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

FORMAT = "ts-ibm1-alignments-1"


def read_pairs(path):
    """[(line_no, en_bytes, zh_bytes)] with read_pair_tsv's rules."""
    with open(path, "rb") as f:
        data = f.read()
    pairs = []
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for no, line in enumerate(lines):
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line:
            continue
        parts = line.split(b"\t")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            continue
        pairs.append((no, parts[0], parts[1]))
    if not pairs:
        sys.exit(f"ibm1_align: {path}: no usable pair")
    return pairs


def encode_lines(ts, tokenizer, texts, tmpdir, name):
    """Token ids of every text (bytes without \\n) through `transformer-studio tokenizer encode --lines`."""
    path = os.path.join(tmpdir, name)
    with open(path, "wb") as f:
        for t in texts:
            f.write(t + b"\n")
    out = subprocess.run([ts, "tokenizer", "encode", "--tokenizer", tokenizer, "--lines", path, "--no-special"],
                         check=False, capture_output=True)
    if out.returncode != 0:
        sys.exit("ibm1_align: tokenizer encode failed: " + out.stderr.decode(errors="replace").strip())
    rows = out.stdout.decode().split("\n")
    if rows and rows[-1] == "":
        rows.pop()
    if len(rows) != len(texts):
        sys.exit(f"ibm1_align: tokenizer encode gave {len(rows)} lines for {len(texts)} texts")
    return [np.array([int(x) for x in r.split()], dtype=np.int64) for r in rows]


def fnv1a(ids):
    h = 0xcbf29ce484222325
    for b in np.asarray(ids, dtype="<i4").tobytes():
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


class IBM1:
    """t(f | e) over token ids; e = null_id is the NULL word. Sparse: only (e, f) pairs that co-occur in a training
    pair exist (others have t = 0), stored as sorted keys e * stride + f."""

    def __init__(self, src, tgt, vocab_size, iterations, log=print):
        self.null_id = vocab_size
        self.stride = vocab_size + 1
        e_cells, f_cells, groups, lens = [], [], [], []
        g0 = 0
        for s, t in zip(src, tgt):
            se = np.append(s, self.null_id)
            e_cells.append(np.tile(se, len(t)))
            f_cells.append(np.repeat(t, len(se)))
            groups.append(np.repeat(np.arange(g0, g0 + len(t)), len(se)))
            lens.append(np.full(len(t), len(se)))
            g0 += len(t)
        keys = np.concatenate(e_cells) * self.stride + np.concatenate(f_cells)
        group = np.concatenate(groups)
        n_targets = g0
        log_len = np.log(np.concatenate(lens).astype(np.float64))
        self.keys, cell = np.unique(keys, return_inverse=True)
        key_e = self.keys // self.stride
        # Uniform start t(f | e) = 1 / |target vocabulary|: the first E-step gives every source word the same share.
        t = np.full(len(self.keys), 1.0 / len(np.unique(self.keys % self.stride)))
        self.log_likelihood = []
        for it in range(iterations):
            p = t[cell]
            z = np.bincount(group, weights=p, minlength=n_targets)  # sum_i t(f_j | e_i) per target token
            # log p(f | e) = sum_j log(sum_i t(f_j | e_i) / (l + 1)): rises monotonically under EM.
            ll = float(np.sum(np.log(z) - log_len)) / n_targets
            self.log_likelihood.append(ll)
            counts = np.bincount(cell, weights=p / z[group], minlength=len(self.keys))  # expected c(e, f)
            total_e = np.bincount(key_e, weights=counts, minlength=self.stride)
            t = counts / total_e[key_e]
            log(f"  EM iteration {it + 1}/{iterations}: mean log-likelihood per target token {ll:.4f} nats")
        self.t = t

    def lookup(self, e, f):
        """t(f | e) for arrays e, f of the same shape (0 for pairs never seen together)."""
        k = np.asarray(e) * self.stride + np.asarray(f)
        pos = np.clip(np.searchsorted(self.keys, k), 0, len(self.keys) - 1)
        return np.where(self.keys[pos] == k, self.t[pos], 0.0)

    def viterbi(self, s, t):
        """For each target token: the index of its source token, or -1 (NULL)."""
        if len(t) == 0:
            return []
        se = np.append(s, self.null_id)
        probs = self.lookup(se[None, :], np.asarray(t)[:, None])  # (len(t), len(s) + 1); NULL last
        best = np.argmax(probs, axis=1)  # first maximum: the earliest source token, NULL only when strictly best
        best_p = probs[np.arange(len(t)), best]
        return [int(b) if (b < len(s) and p > 0) else -1 for b, p in zip(best, best_p)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ts", required=True, help="the transformer-studio executable")
    ap.add_argument("--tokenizer", required=True, help="tokenizer.json or a model folder holding one")
    ap.add_argument("--train", required=True, help="training pairs, English<TAB>Chinese")
    ap.add_argument("--test", required=True, help="test pairs to align, English<TAB>Chinese")
    ap.add_argument("--out", required=True)
    ap.add_argument("--direction", default="both", choices=["both", "en-zh", "zh-en"],
                    help="the model's direction: both (source starts with <2xx>: source_prefix 1) or one")
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--also-fit-test", action="store_true",
                    help="also run EM on the test pairs (unsupervised, as GIZA++ is usually run); off by default")
    args = ap.parse_args()
    if args.iterations < 1:
        sys.exit("ibm1_align: --iterations must be >= 1")
    t_start = time.time()

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    train = read_pairs(args.train)
    test = read_pairs(args.test)
    with tempfile.TemporaryDirectory() as tmp:
        ids = {}
        for split, pairs in (("train", train), ("test", test)):
            for side, col in (("en", 1), ("zh", 2)):
                ids[split, side] = encode_lines(args.ts, args.tokenizer, [p[col] for p in pairs], tmp,
                                                f"{split}.{side}.txt")
    vocab_size = 1 + max(int(a.max()) for v in ids.values() for a in v if len(a))
    log(f"ibm1_align: {len(train)} training pairs, {len(test)} test pairs, ids < {vocab_size} "
        f"({time.time() - t_start:.1f} s)")

    directions = ["en-zh", "zh-en"] if args.direction == "both" else [args.direction]
    prefix = 1 if args.direction == "both" else 0
    records = []
    ll = {}
    for d in directions:
        a, b = d.split("-")
        src, tgt = list(ids["train", a]), list(ids["train", b])
        if args.also_fit_test:
            src += ids["test", a]
            tgt += ids["test", b]
        log(f"ibm1_align: {d}: fitting t({b} token | {a} token) on {len(src)} pairs")
        model = IBM1(src, tgt, vocab_size, args.iterations, log)
        ll[d] = model.log_likelihood
        aligned = nulls = 0
        for k, (line, _, _) in enumerate(test):
            s, t = ids["test", a][k], ids["test", b][k]
            al = model.viterbi(s, t)
            nulls += sum(1 for x in al if x < 0)
            aligned += len(al)
            records.append({"line": line, "direction": d, "src_len": prefix + len(s) + 1, "tgt_len": len(t),
                            "src_fnv1a": fnv1a(s), "tgt_fnv1a": fnv1a(t),
                            "align": [x + prefix if x >= 0 else -1 for x in al]})
        log(f"ibm1_align: {d}: {aligned} test target tokens, {nulls} aligned to NULL "
            f"({time.time() - t_start:.1f} s)")

    header = {
        "format": FORMAT,
        "method": "IBM Model 1 (Brown et al. 1993): EM with a NULL source word, uniform start; Viterbi = per "
                  "target token argmax_i t(f_j | e_i), ties to the earliest source token",
        "iterations": args.iterations,
        "train": os.path.basename(args.train),
        "train_pairs": len(train),
        "test": os.path.basename(args.test),
        "test_pairs": len(test),
        "also_fit_test": args.also_fit_test,
        "tokenizer": os.path.basename(os.path.normpath(args.tokenizer)),
        "source_prefix": prefix,
        "directions": directions,
        "log_likelihood_per_target_token": ll,
        "fields": "align[j] = position in the encoder input ([<2xx>] + source tokens + [end]) of the source token "
                  "aligned to target token j (end token not aligned), -1 = NULL",
    }
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(header, ensure_ascii=False) + "\n")
        for r in records:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    log(f"ibm1_align: wrote {args.out}: {len(records)} alignments ({time.time() - t_start:.1f} s)")


if __name__ == "__main__":
    main()
