# Golden fixtures for the head detectors (core/interp/head_detectors.h, tests/core/interp_golden_test.cpp): on the
# GPT-2-shaped and Llama-shaped golden models (tests/golden/model_{gpt2,llama}.safetensors, weights reused), the
# model's ids followed by the same ids again (so duplicate and induction patterns are not empty), the attention of
# every head from the float64 reference forward of make_interp_fixtures.py, and each head's score for each kind.
# Definitions (facts, written here independently): TransformerLens head_detector.py — detection patterns of
# previous-token, duplicate-token and induction heads, score "mul" = sum(A * P) / sum(A) after zeroing key 0
# (exclude_bos) and the diagonal (exclude_current_token); first token (attention sink, Xiao et al. 2023): the mean of
# A[i, 0] over queries 1..T-1.
# Regenerate (needs Debian's torch): /usr/bin/python3 tests/reference/make_head_detector_fixtures.py
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_interp_fixtures as mi  # noqa: E402  (load_model, forward: the reference forward with a cache)
import st_io  # noqa: E402

KINDS = ["previous_token", "duplicate_token", "induction", "first_token"]


def pattern(kind, ids):
    T = len(ids)
    p = torch.zeros(T, T, dtype=torch.float64)
    for i in range(T):
        for j in range(i + 1):
            if kind == "previous_token":
                p[i, j] = float(j == i - 1)
            elif kind == "duplicate_token":
                p[i, j] = float(j < i and ids[j] == ids[i])
            elif kind == "induction":
                p[i, j] = float(j >= 1 and ids[j - 1] == ids[i])
            else:
                p[i, j] = float(j == 0 and i >= 1)
    return p


def score(a, kind, p, exclude_bos, exclude_current):
    if kind == "first_token":
        return a[1:, 0].mean()
    a = a.clone()
    if exclude_bos:
        a[:, 0] = 0.0
    if exclude_current:
        a.fill_diagonal_(0.0)
    total = a.sum()
    return (a * p).sum() / total if total > 0 else torch.tensor(0.0, dtype=torch.float64)


def make(model_file, out_file):
    cfg, W, ids = mi.load_model(model_file)
    ids = ids + ids
    out = {"in.ids": torch.tensor(ids)}
    cache = {}
    with torch.no_grad():
        mi.forward(cfg, W, ids, cache=cache)
    L, H = cfg["n_layers"], cfg["n_heads"]
    for excl in (False, True):
        for kind in KINDS:
            p = pattern(kind, ids)
            s = torch.zeros(L, H, dtype=torch.float64)
            for layer in range(L):
                probs = cache[f"dec.{layer}.attn.probs"]
                for h in range(H):
                    s[layer, h] = score(probs[h], kind, p, excl, excl)
            out[f"out.{kind}" + ("_excluded" if excl else "")] = s
            out[f"out.pattern_{kind}"] = p
    st_io.save(os.path.join(mi.GOLDEN, out_file), out,
               metadata={"model": model_file, "generator": "tests/reference/make_head_detector_fixtures.py"})
    print(f"wrote {out_file}: T = {len(ids)}, {L} layers x {H} heads")


def main():
    torch.set_default_dtype(torch.float64)
    make("model_gpt2.safetensors", "heads_gpt2.safetensors")
    make("model_llama.safetensors", "heads_llama.safetensors")


if __name__ == "__main__":
    main()
