# A tiny model folder in our format (config.json + model.safetensors) whose weights hold a NaN and a +Inf in one
# tensor (dec.0.attn.wq), for the CLI test that `trace` still opens it and warns naming the tensor
# (tests/cli_tests.cmake, trace_nonfinite_weights). Pure Python (no torch/numpy), fixed seed.
# Regenerate: python3 tests/reference/make_nonfinite_fixture.py
import json
import os
import random
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "nonfinite_model")
CONFIG = {"name": "nonfinite-demo", "arch": "decoder", "vocab_size": 16, "d_model": 8, "n_heads": 2,
          "n_kv_heads": 2, "d_ff": 16, "n_layers": 1, "max_seq_len": 8, "norm": "layernorm", "activation": "gelu",
          "position": "learned", "tie_embeddings": True}


def weights():
    """Names and shapes of core/model/model.h for CONFIG (LayerNorm with bias, biased attention and FFN, learned
    positions, tied head), with normal(0, 0.02) matrices, unit norm weights and zero biases."""
    d, f, v, t = CONFIG["d_model"], CONFIG["d_ff"], CONFIG["vocab_size"], CONFIG["max_seq_len"]
    shapes = {"tok_emb.weight": [v, d], "pos_emb.weight": [t, d]}
    for norm in ("dec.0.attn_norm", "dec.0.ffn_norm", "dec.final_norm"):
        shapes[norm + ".weight"] = [d]
        shapes[norm + ".bias"] = [d]
    for w in ("wq", "wk", "wv", "wo"):
        shapes["dec.0.attn." + w] = [d, d]
    for b in ("bq", "bk", "bv", "bo"):
        shapes["dec.0.attn." + b] = [d]
    shapes.update({"dec.0.ffn.w_up": [f, d], "dec.0.ffn.w_down": [d, f], "dec.0.ffn.b_up": [f],
                   "dec.0.ffn.b_down": [d]})
    rng = random.Random(0)
    out = {}
    for name, shape in shapes.items():
        n = 1
        for s in shape:
            n *= s
        if name.endswith("norm.weight"):
            vals = [1.0] * n
        elif len(shape) == 1:
            vals = [0.0] * n
        else:
            vals = [rng.gauss(0.0, 0.02) for _ in range(n)]
        out[name] = (shape, vals)
    q = out["dec.0.attn.wq"][1]
    q[3] = float("nan")
    q[10] = float("inf")
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "config.json"), "w") as fh:
        json.dump(CONFIG, fh, indent=2)
        fh.write("\n")
    tensors = weights()
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(tensors):
        shape, vals = tensors[name]
        raw = struct.pack("<%df" % len(vals), *vals)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(os.path.join(OUT, "model.safetensors"), "wb") as fh:
        fh.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


if __name__ == "__main__":
    main()
