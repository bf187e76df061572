#!/usr/bin/env python3
"""Averages the weights of several safetensors checkpoints of one model, element by element (float32 arithmetic),
as "Attention Is All You Need" did for its base models (the last 5 checkpoints, section 6.1). Every input must hold
the same tensor names, dtypes and shapes; F32, F16 and BF16 tensors are averaged in float32 and written back in
their own dtype (BF16 rounded to nearest even). The header's __metadata__ of the first file is kept.

  /usr/bin/python3 assets/models/average_checkpoints.py --out model.safetensors step14000.safetensors step14500.safetensors ...

Errors (missing file, bad header, mismatched tensors) exit 1 with one line naming the file.
"""
import argparse
import json
import struct
import sys

import numpy as np

DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16}


def read_safetensors(path):
    """-> (header dict without __metadata__, metadata dict or None, raw bytes of the data section)."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError(f"{path}: shorter than a safetensors header")
    (n,) = struct.unpack("<Q", blob[:8])
    if 8 + n > len(blob):
        raise ValueError(f"{path}: header length {n} runs past the end of the file")
    header = json.loads(blob[8:8 + n])
    meta = header.pop("__metadata__", None)
    return header, meta, memoryview(blob)[8 + n:]


def to_f32(raw, dtype, shape):
    a = np.frombuffer(raw, dtype=DTYPES[dtype])
    if dtype == "BF16":
        a = (a.astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float32).reshape(shape)


def from_f32(a, dtype):
    if dtype == "F32":
        return a.astype(np.float32)
    if dtype == "F16":
        return a.astype(np.float16)
    bits = a.astype(np.float32).view(np.uint32)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)  # round to nearest even
    return (rounded >> 16).astype(np.uint16)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    try:
        files = [read_safetensors(p) for p in a.inputs]
        header0, meta0, _ = files[0]
        for p, (h, _, _) in zip(a.inputs[1:], files[1:]):
            if {k: (v["dtype"], v["shape"]) for k, v in h.items()} != {k: (v["dtype"], v["shape"]) for k, v in header0.items()}:
                raise ValueError(f"{p}: tensor names, dtypes or shapes differ from {a.inputs[0]}")
        out_header, chunks, offset = {}, [], 0
        for name in sorted(header0, key=lambda k: header0[k]["data_offsets"][0]):
            info = header0[name]
            if info["dtype"] not in DTYPES:
                raise ValueError(f"{a.inputs[0]}: tensor {name} has dtype {info['dtype']} (F32, F16, BF16 only)")
            acc = np.zeros(info["shape"], dtype=np.float64)
            for h, _, data in files:
                b, e = h[name]["data_offsets"]
                acc += to_f32(data[b:e], info["dtype"], info["shape"])
            raw = from_f32((acc / len(files)).astype(np.float32), info["dtype"]).tobytes()
            out_header[name] = {"dtype": info["dtype"], "shape": info["shape"], "data_offsets": [offset, offset + len(raw)]}
            chunks.append(raw)
            offset += len(raw)
        if meta0 is not None:
            out_header["__metadata__"] = meta0
        text = json.dumps(out_header, separators=(",", ":")).encode()
        text += b" " * (-len(text) % 8)  # keep the data section 8-byte aligned
        with open(a.out, "wb") as f:
            f.write(struct.pack("<Q", len(text)))
            f.write(text)
            for c in chunks:
                f.write(c)
    except (OSError, ValueError, KeyError) as e:
        print(f"average_checkpoints: {e}", file=sys.stderr)
        sys.exit(1)
    print(f"averaged {len(a.inputs)} checkpoints into {a.out}")


if __name__ == "__main__":
    main()
