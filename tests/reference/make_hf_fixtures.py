# Tiny Hugging Face checkpoint folders (GPT-2, Llama, Qwen2, Mistral layouts: exact file names, tensor names,
# dtypes and config.json keys, random weights) and their reference outputs, for tests/core/hf_checkpoint_test.cpp.
# Regenerate (needs Debian's torch; transformers is not needed): /usr/bin/python3 tests/reference/make_hf_fixtures.py
#
# The reference forwards below are written from the transformers implementations (GPT2LMHeadModel with Conv1D and
# gelu_new; LlamaForCausalLM with RMSNorm, rotate_half RoPE, SwiGLU, repeat_kv GQA; Mistral = Llama; Qwen2 = Llama
# + q/k/v biases). Weights are rounded to the file's dtype (F16/BF16) first, then the forward runs in float64 on
# the rounded values, so the C++ loader (which widens to fp32 exactly) must match to fp32 rounding.
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st_io  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")
IDS = [1, 17, 254, 3, 99, 42, 7]


# --- a safetensors writer with per-tensor dtypes (F32, F16, BF16, BOOL, U8), like HF's save_file ------------------
def to_bytes(dtype, t):
    t = t.detach().contiguous()
    if dtype == "F32":
        return t.to(torch.float32).numpy().astype("<f4").tobytes()
    if dtype == "F16":
        return t.to(torch.float16).numpy().astype("<f2").tobytes()
    if dtype == "BF16":
        return t.to(torch.bfloat16).view(torch.int16).numpy().astype("<i2").tobytes()
    if dtype in ("BOOL", "U8"):
        return t.to(torch.uint8).numpy().tobytes()
    raise ValueError(dtype)


def write_safetensors(path, entries):
    """entries: dict name -> (dtype, tensor). Writes with __metadata__ {"format": "pt"} as transformers does."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(entries):
        dtype, t = entries[name]
        raw = to_bytes(dtype, t)
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    return offset


def rounded(dtype, t):
    """The float64 value the loader will see after the file's dtype rounding."""
    if dtype == "F16":
        return t.to(torch.float16).to(torch.float64)
    if dtype == "BF16":
        return t.to(torch.bfloat16).to(torch.float64)
    return t.to(torch.float32).to(torch.float64)


def write_folder(name, config, weights, dtype, expected, shards=None):
    """weights: HF name -> float tensor. shards: list of name lists (one per file) for a sharded checkpoint."""
    d = os.path.join(GOLDEN, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    if shards is None:
        write_safetensors(os.path.join(d, "model.safetensors"), weights)
    else:
        n = len(shards)
        weight_map, total = {}, 0
        for k, names in enumerate(shards):
            fname = f"model-{k + 1:05d}-of-{n:05d}.safetensors"
            total += write_safetensors(os.path.join(d, fname), {m: weights[m] for m in names})
            weight_map.update({m: fname for m in names})
        with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}, f,
                      indent=2)
            f.write("\n")
    st_io.save(os.path.join(d, "expected.safetensors"), expected,
               metadata={"generator": "tests/reference/make_hf_fixtures.py", "dtype": dtype})
    print(f"wrote {name}: {len(weights)} tensors ({dtype}), logits {tuple(expected['logits'].shape)}")


# --- GPT-2 (transformers GPT2LMHeadModel) ----------------------------------------------------------------------------
def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def conv1d(x, w, b):  # transformers Conv1D: weight (in, out); y = x @ w + b
    return torch.addmm(b, x, w)


def gpt2_forward(cfg, W, ids):
    D, H, eps = cfg["n_embd"], cfg["n_head"], cfg["layer_norm_epsilon"]
    Dh, T = D // H, len(ids)
    x = W["wte.weight"][ids] + W["wpe.weight"][:T]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    out = {}
    for i in range(cfg["n_layer"]):
        p = f"h.{i}."
        h = F.layer_norm(x, (D,), W[p + "ln_1.weight"], W[p + "ln_1.bias"], eps)
        q, k, v = conv1d(h, W[p + "attn.c_attn.weight"], W[p + "attn.c_attn.bias"]).split(D, dim=1)
        q, k, v = (t.view(T, H, Dh).transpose(0, 1) for t in (q, k, v))
        w = (q @ k.transpose(-1, -2)) / math.sqrt(Dh)
        w = torch.where(causal, w, torch.tensor(float("-inf"), dtype=w.dtype))
        probs = torch.softmax(w, dim=-1)
        out[f"dec.{i}.attn.probs"] = probs
        a = (probs @ v).transpose(0, 1).reshape(T, D)
        x = x + conv1d(a, W[p + "attn.c_proj.weight"], W[p + "attn.c_proj.bias"])
        h = F.layer_norm(x, (D,), W[p + "ln_2.weight"], W[p + "ln_2.bias"], eps)
        h = gelu_new(conv1d(h, W[p + "mlp.c_fc.weight"], W[p + "mlp.c_fc.bias"]))
        x = x + conv1d(h, W[p + "mlp.c_proj.weight"], W[p + "mlp.c_proj.bias"])
    x = F.layer_norm(x, (D,), W["ln_f.weight"], W["ln_f.bias"], eps)
    out["logits"] = x @ W["wte.weight"].T  # lm_head tied to wte
    return out


def make_gpt2(gen):
    D, H, L, V, P = 32, 4, 2, 300, 32
    Fd = 4 * D
    cfg = {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
           "bos_token_id": V - 1, "embd_pdrop": 0.1, "eos_token_id": V - 1, "initializer_range": 0.02,
           "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": P, "n_embd": D, "n_head": H, "n_inner": None,
           "n_layer": L, "n_positions": P, "reorder_and_upcast_attn": False, "resid_pdrop": 0.1,
           "scale_attn_by_inverse_layer_idx": False, "scale_attn_weights": True, "summary_activation": None,
           "summary_first_dropout": 0.1, "summary_proj_to_labels": True, "summary_type": "cls_index",
           "summary_use_proj": True, "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50}},
           "transformers_version": "4.35.0", "use_cache": True, "vocab_size": V}
    r = lambda *s, std=1.0: torch.randn(*s, generator=gen, dtype=torch.float64) * std  # noqa: E731
    W = {"wte.weight": r(V, D, std=0.5), "wpe.weight": r(P, D, std=0.3)}
    for i in range(L):
        p = f"h.{i}."
        W.update({p + "ln_1.weight": 1 + r(D, std=0.1), p + "ln_1.bias": r(D, std=0.1),
                  p + "attn.c_attn.weight": r(D, 3 * D, std=D ** -0.5), p + "attn.c_attn.bias": r(3 * D, std=0.1),
                  p + "attn.c_proj.weight": r(D, D, std=D ** -0.5), p + "attn.c_proj.bias": r(D, std=0.1),
                  p + "ln_2.weight": 1 + r(D, std=0.1), p + "ln_2.bias": r(D, std=0.1),
                  p + "mlp.c_fc.weight": r(D, Fd, std=D ** -0.5), p + "mlp.c_fc.bias": r(Fd, std=0.1),
                  p + "mlp.c_proj.weight": r(Fd, D, std=Fd ** -0.5), p + "mlp.c_proj.bias": r(D, std=0.1)})
    W.update({"ln_f.weight": 1 + r(D, std=0.1), "ln_f.bias": r(D, std=0.1)})
    W = {k: rounded("F32", v) for k, v in W.items()}
    expected = gpt2_forward(cfg, W, IDS)
    expected["ids"] = torch.tensor(IDS)
    # GPT2LMHeadModel.save_pretrained: "transformer." prefix, lm_head.weight equal to wte, plus the old
    # non-persistent causal-mask buffers some exports carry (BOOL / U8 / scalar F32) that the loader must skip.
    entries = {"transformer." + k: ("F32", v) for k, v in W.items()}
    entries["lm_head.weight"] = ("F32", W["wte.weight"])
    entries["transformer.h.0.attn.bias"] = ("BOOL", torch.tril(torch.ones(P, P)).view(1, 1, P, P))
    entries["transformer.h.1.attn.bias"] = ("U8", torch.tril(torch.ones(P, P)).view(1, 1, P, P))
    for i in range(L):
        entries[f"transformer.h.{i}.attn.masked_bias"] = ("F32", torch.tensor(-1e4))
    write_folder("hf_gpt2", cfg, entries, "F32", expected)


# --- Llama family (transformers LlamaForCausalLM; Mistral identical; Qwen2 adds q/k/v biases) -------------------------
def rms_norm(x, w, eps):  # LlamaRMSNorm: x * rsqrt(mean(x^2) + eps) * w (HF upcasts to fp32; we are in fp64)
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def llama_forward(cfg, W, ids):
    D, H = cfg["hidden_size"], cfg["num_attention_heads"]
    K = cfg.get("num_key_value_heads") or H
    Dh, T, eps = D // H, len(ids), cfg["rms_norm_eps"]
    inv_freq = 1.0 / (cfg.get("rope_theta", 10000.0) ** (torch.arange(0, Dh, 2, dtype=torch.float64) / Dh))
    freqs = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()  # (T, Dh)
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    # Sliding window as current transformers define it (MistralAttention / Qwen2's layer_types): query t sees keys
    # t - w + 1 .. t (w keys, itself included; releases before 4.42 let it see w + 1). Mistral: every layer; Qwen2
    # with use_sliding_window: layers i >= max_window_layers.
    window = cfg.get("sliding_window") if (cfg["model_type"] == "mistral" or cfg.get("use_sliding_window")) else None
    pos = torch.arange(T)
    in_window = (pos[:, None] - pos[None, :]) < (window or T + 1)
    x = W["model.embed_tokens.weight"][ids]
    out = {}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        slides = window is not None and (cfg["model_type"] == "mistral" or i >= cfg.get("max_window_layers", 0))
        allowed = causal & in_window if slides else causal
        h = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        q = F.linear(h, W[p + "self_attn.q_proj.weight"], W.get(p + "self_attn.q_proj.bias"))
        k = F.linear(h, W[p + "self_attn.k_proj.weight"], W.get(p + "self_attn.k_proj.bias"))
        v = F.linear(h, W[p + "self_attn.v_proj.weight"], W.get(p + "self_attn.v_proj.bias"))
        q = q.view(T, H, Dh).transpose(0, 1)
        k = k.view(T, K, Dh).transpose(0, 1)
        v = v.view(T, K, Dh).transpose(0, 1)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k = k[:, None].expand(K, H // K, T, Dh).reshape(H, T, Dh)  # repeat_kv
        v = v[:, None].expand(K, H // K, T, Dh).reshape(H, T, Dh)
        w = (q @ k.transpose(-1, -2)) / math.sqrt(Dh)
        w = w.masked_fill(~allowed, float("-inf"))
        probs = torch.softmax(w, dim=-1)
        out[f"dec.{i}.attn.probs"] = probs
        a = (probs @ v).transpose(0, 1).reshape(T, H * Dh)
        x = x + F.linear(a, W[p + "self_attn.o_proj.weight"])
        h = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        h = F.silu(F.linear(h, W[p + "mlp.gate_proj.weight"])) * F.linear(h, W[p + "mlp.up_proj.weight"])
        x = x + F.linear(h, W[p + "mlp.down_proj.weight"])
    x = rms_norm(x, W["model.norm.weight"], eps)
    head = W["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else W["lm_head.weight"]
    out["logits"] = x @ head.T
    return out


def llama_weights(cfg, gen, qkv_bias):
    D, H, L, V, Fd = (cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"], cfg["vocab_size"],
                      cfg["intermediate_size"])
    K = cfg["num_key_value_heads"]
    Dh = D // H
    r = lambda *s, std=1.0: torch.randn(*s, generator=gen, dtype=torch.float64) * std  # noqa: E731
    W = {"model.embed_tokens.weight": r(V, D, std=0.5)}
    for i in range(L):
        p = f"model.layers.{i}."
        W.update({p + "input_layernorm.weight": 1 + r(D, std=0.1),
                  p + "self_attn.q_proj.weight": r(H * Dh, D, std=D ** -0.5),
                  p + "self_attn.k_proj.weight": r(K * Dh, D, std=D ** -0.5),
                  p + "self_attn.v_proj.weight": r(K * Dh, D, std=D ** -0.5),
                  p + "self_attn.o_proj.weight": r(D, H * Dh, std=D ** -0.5),
                  p + "post_attention_layernorm.weight": 1 + r(D, std=0.1),
                  p + "mlp.gate_proj.weight": r(Fd, D, std=D ** -0.5),
                  p + "mlp.up_proj.weight": r(Fd, D, std=D ** -0.5),
                  p + "mlp.down_proj.weight": r(D, Fd, std=Fd ** -0.5)})
        if qkv_bias:
            W.update({p + "self_attn.q_proj.bias": r(H * Dh, std=0.1), p + "self_attn.k_proj.bias": r(K * Dh, std=0.1),
                      p + "self_attn.v_proj.bias": r(K * Dh, std=0.1)})
    W["model.norm.weight"] = 1 + r(D, std=0.1)
    if not cfg["tie_word_embeddings"]:
        W["lm_head.weight"] = r(V, D, std=0.5)
    return W


def make_llama_family(name, cfg, gen, dtype, shards_split=None):
    W = llama_weights(cfg, gen, qkv_bias=cfg["model_type"] == "qwen2")
    W = {k: rounded(dtype, v) for k, v in W.items()}
    expected = llama_forward(cfg, W, IDS)
    expected["ids"] = torch.tensor(IDS)
    entries = {k: (dtype, v) for k, v in W.items()}
    shards = None
    if shards_split:
        first = sorted(k for k in W if shards_split(k))
        shards = [first, sorted(k for k in W if k not in first)]
    write_folder(name, cfg, entries, dtype, expected, shards)


def main():
    torch.manual_seed(0)
    make_gpt2(torch.Generator().manual_seed(1))

    llama = {"architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
             "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 32,
             "initializer_range": 0.02, "intermediate_size": 88, "max_position_embeddings": 64,
             "model_type": "llama", "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
             "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": None, "rope_theta": 10000.0,
             "tie_word_embeddings": False, "torch_dtype": "float32", "transformers_version": "4.35.0",
             "use_cache": True, "vocab_size": 256}
    make_llama_family("hf_llama", llama, torch.Generator().manual_seed(2), "F32")

    qwen2 = {"architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 0,
             "eos_token_id": 0, "hidden_act": "silu", "hidden_size": 48, "initializer_range": 0.02,
             "intermediate_size": 128, "max_position_embeddings": 128, "max_window_layers": 2, "model_type": "qwen2",
             "num_attention_heads": 6, "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
             "rope_theta": 1000000.0, "sliding_window": 128, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
             "transformers_version": "4.40.1", "use_cache": True, "use_sliding_window": False, "vocab_size": 272}
    make_llama_family("hf_qwen2", qwen2, torch.Generator().manual_seed(3), "BF16",
                      shards_split=lambda k: k.startswith("model.embed_tokens") or k.startswith("model.layers.0."))

    mistral = {"architectures": ["MistralForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 1,
               "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 32, "initializer_range": 0.02,
               "intermediate_size": 96, "max_position_embeddings": 256, "model_type": "mistral",
               "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 1, "rms_norm_eps": 1e-05,
               "rope_theta": 10000.0, "sliding_window": 4096, "tie_word_embeddings": False,
               "torch_dtype": "float16", "transformers_version": "4.35.0", "use_cache": True, "vocab_size": 256}
    make_llama_family("hf_mistral", mistral, torch.Generator().manual_seed(4), "F16")

    # Windows shorter than the text (7 tokens): Mistral slides in every layer, Qwen2 only from max_window_layers on.
    mistral_window = dict(mistral, sliding_window=4, torch_dtype="float32")
    make_llama_family("hf_mistral_window", mistral_window, torch.Generator().manual_seed(5), "F32")
    qwen2_window = dict(qwen2, use_sliding_window=True, sliding_window=3, max_window_layers=1,
                        torch_dtype="float32", num_hidden_layers=2)
    make_llama_family("hf_qwen2_window", qwen2_window, torch.Generator().manual_seed(6), "F32")


if __name__ == "__main__":
    np.random.seed(0)
    main()
