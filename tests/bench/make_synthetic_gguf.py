#!/usr/bin/python3
"""A synthetic Llama-shaped GGUF file for the GGUF benchmarks (tests/bench/gguf_bench.sh): random weights
(normal, std 0.02; norms 1), quantized by ggml's own quantizer (ggml_quantize_chunk in llama.cpp's libggml-base.so,
through ctypes) in the mix llama.cpp's "Q4_K_M" uses: Q4_K for most matrices, Q6_K for the output and every other
ffn_down and attn_v, F32 vectors; or one type throughout (Q8_0, Q4_0, F32). Q and K are written in llama.cpp's
permuted row order, as its converter does (the values are random, so only the layout matters).

usage: make_synthetic_gguf.py LLAMA_CPP_DIR OUT.gguf [--type Q4_K_M|Q8_0|Q4_0|F32] [--shape 1b|gpt2|tiny]
  LLAMA_CPP_DIR: as tests/reference/fetch_llama_cpp.sh makes it (src/gguf-py, lib/libggml-base.so)
  shapes: 1b   d_model 2048, 16 layers, 32 heads / 8 KV heads, d_ff 8192, vocab 32000 (about 1.1 B parameters)
          gpt2 d_model 768, 12 layers, 12 heads, d_ff 3072, vocab 50304 (GPT-2-small's size)
          tiny d_model 256, 2 layers, 4 heads, d_ff 768, vocab 4096
"""
import argparse
import ctypes
import os
import sys

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("llama_cpp")
ap.add_argument("out")
ap.add_argument("--type", default="Q4_K_M")
ap.add_argument("--shape", default="1b")
args = ap.parse_args()
sys.path.insert(0, os.path.join(args.llama_cpp, "src", "gguf-py"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
from gpt2_bytes import bytes_to_unicode  # noqa: E402
import gguf  # noqa: E402
from gguf import GGMLQuantizationType as Q  # noqa: E402

ggml = ctypes.CDLL(os.path.join(args.llama_cpp, "lib", "libggml-base.so"))
ggml.ggml_quantize_chunk.restype = ctypes.c_size_t
ggml.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                     ctypes.c_int64, ctypes.c_void_p]

shapes = {"1b": (2048, 16, 32, 8, 8192, 32000), "gpt2": (768, 12, 12, 12, 3072, 50304), "tiny": (256, 2, 4, 4, 768, 4096)}
D, L, H, K, F, V = shapes[args.shape]
dh = D // H
rng = np.random.default_rng(0)


def quantize(x, qt):
    rows, cols = x.shape
    block, size = gguf.GGML_QUANT_SIZES[qt]
    if cols % block:
        return x.astype(np.float16), None
    out = np.empty((rows, cols // block * size), dtype=np.uint8)
    src = np.ascontiguousarray(x, dtype=np.float32)
    ggml.ggml_quantize_chunk(int(qt), src.ctypes.data, out.ctypes.data, 0, rows, cols, None)
    return out, qt


def type_for(name, layer):
    if args.type == "F32":
        return Q.F32
    if args.type != "Q4_K_M":
        return Q[args.type]
    if name == "output.weight" or (name.split(".")[-2] in ("ffn_down", "attn_v") and layer % 2 == 0):
        return Q.Q6_K
    return Q.Q4_K


w = gguf.GGUFWriter(args.out, "llama")
w.add_name(f"synthetic-{args.shape}-{args.type}")
a = "llama."
for key, val in [("context_length", 8192), ("embedding_length", D), ("block_count", L), ("feed_forward_length", F),
                 ("attention.head_count", H), ("attention.head_count_kv", K), ("rope.dimension_count", dh)]:
    w.add_uint32(a + key, val)
w.add_float32(a + "attention.layer_norm_rms_epsilon", 1e-5)
w.add_float32(a + "rope.freq_base", 10000.0)
w.add_tokenizer_model("gpt2")
w.add_tokenizer_pre("gpt-2")
table = bytes_to_unicode()
tokens = [table[b] for b in range(256)] + [table[32] * 2] + [f"<|x{i}|>" for i in range(V - 257)]
w.add_token_list(tokens)
w.add_token_types([1] * 257 + [3] * (V - 257))
w.add_token_merges([table[32] + " " + table[32]])


def put(name, shape, layer=0, norm=False):
    if norm:
        w.add_tensor(name, np.ones(shape, dtype=np.float32))
        return
    x = (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float32)
    qt = type_for(name, layer)
    if qt == Q.F32:
        w.add_tensor(name, x)
        return
    raw, qt = quantize(x, qt)
    if qt is None:
        w.add_tensor(name, raw)
    else:
        w.add_tensor(name, raw, raw_shape=raw.shape, raw_dtype=qt)


put("token_embd.weight", (V, D))
for i in range(L):
    b = f"blk.{i}."
    put(b + "attn_norm.weight", (D,), norm=True)
    put(b + "attn_q.weight", (H * dh, D), i)
    put(b + "attn_k.weight", (K * dh, D), i)
    put(b + "attn_v.weight", (K * dh, D), i)
    put(b + "attn_output.weight", (D, H * dh), i)
    put(b + "ffn_norm.weight", (D,), norm=True)
    put(b + "ffn_gate.weight", (F, D), i)
    put(b + "ffn_up.weight", (F, D), i)
    put(b + "ffn_down.weight", (D, F), i)
put("output_norm.weight", (D,), norm=True)
put("output.weight", (V, D))
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
print(args.out, os.path.getsize(args.out), "bytes")
