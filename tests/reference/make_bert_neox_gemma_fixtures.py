# Tiny Hugging Face checkpoint folders of the BERT, GPT-NeoX (Pythia) and Gemma families (exact file names, tensor
# names, dtypes and config.json keys; random weights) and their reference outputs, for
# tests/core/hf_families_test.cpp. A sibling of make_hf_fixtures.py (GPT-2 / Llama family), whose writers it reuses.
# Regenerate (needs Debian's torch; transformers is not needed):
#   /usr/bin/python3 tests/reference/make_bert_neox_gemma_fixtures.py
#
# The reference forwards are written in plain torch from the equations of transformers' BertForMaskedLM,
# GPTNeoXForCausalLM and GemmaForCausalLM: weights are rounded to the file's dtype first, then the forward runs in
# float64 on the rounded values (float32 semantics where HF rounds on purpose: Gemma's embedding normalizer).

import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_hf_fixtures import GOLDEN, IDS, rms_norm, rotate_half, rounded, write_folder  # noqa: E402
from gpt2_bytes import byte_level_alphabet  # noqa: E402


def randn(gen):
    return lambda *s, std=1.0: torch.randn(*s, generator=gen, dtype=torch.float64) * std  # noqa: E731


def attention(q, k, v, causal):
    """q, k, v: (H, T, Dh) -> probs (H, T, T), context (T, H * Dh); scores / sqrt(Dh) (all three families)."""
    H, T, Dh = q.shape
    w = (q @ k.transpose(-1, -2)) / math.sqrt(Dh)
    if causal:
        w = w.masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool)), float("-inf"))
    probs = torch.softmax(w, dim=-1)
    return probs, (probs @ v).transpose(0, 1).reshape(T, H * Dh)


# --- BERT (BertForMaskedLM) --------------------------------------------------------------------------------------------
def bert_forward(cfg, W, ids):
    D, H, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"]
    Dh, T = D // H, len(ids)
    ln = lambda x, p: F.layer_norm(x, (D,), W[p + ".weight"], W[p + ".bias"], eps)  # noqa: E731
    lin = lambda x, p: F.linear(x, W[p + ".weight"], W[p + ".bias"])  # noqa: E731
    # BertEmbeddings: word + absolute position + token type (token_type_ids default to zeros), then LayerNorm.
    e = "bert.embeddings."
    x = W[e + "word_embeddings.weight"][ids] + W[e + "position_embeddings.weight"][:T] + \
        W[e + "token_type_embeddings.weight"][torch.zeros(T, dtype=torch.long)]
    x = ln(x, e + "LayerNorm")
    out = {}
    for i in range(cfg["num_hidden_layers"]):
        p = f"bert.encoder.layer.{i}."
        q, k, v = (lin(x, p + "attention.self." + n).view(T, H, Dh).transpose(0, 1) for n in ("query", "key", "value"))
        probs, ctx = attention(q, k, v, causal=False)  # all-ones attention_mask: nothing masked
        out[f"enc.{i}.attn.probs"] = probs
        x = ln(lin(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")  # BertSelfOutput
        h = F.gelu(lin(x, p + "intermediate.dense"))  # hidden_act "gelu": erf form
        x = ln(lin(h, p + "output.dense") + x, p + "output.LayerNorm")  # BertOutput
    # BertLMPredictionHead: transform (dense, act, LayerNorm), decoder tied to the word embeddings + its bias.
    t = ln(F.gelu(lin(x, "cls.predictions.transform.dense")), "cls.predictions.transform.LayerNorm")
    out["logits"] = t @ W["bert.embeddings.word_embeddings.weight"].T + W["cls.predictions.bias"]
    return out


def make_bert(gen):
    D, H, L, V, P, Fd, TV = 32, 4, 2, 300, 64, 64, 2
    cfg = {"architectures": ["BertForMaskedLM"], "attention_probs_dropout_prob": 0.1, "classifier_dropout": None,
           "gradient_checkpointing": False, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": D,
           "initializer_range": 0.02, "intermediate_size": Fd, "layer_norm_eps": 1e-12, "max_position_embeddings": P,
           "model_type": "bert", "num_attention_heads": H, "num_hidden_layers": L, "pad_token_id": 0,
           "position_embedding_type": "absolute", "torch_dtype": "float32", "transformers_version": "4.35.0",
           "type_vocab_size": TV, "use_cache": True, "vocab_size": V}
    r = randn(gen)
    e = "bert.embeddings."
    W = {e + "word_embeddings.weight": r(V, D, std=0.5), e + "position_embeddings.weight": r(P, D, std=0.3),
         e + "token_type_embeddings.weight": r(TV, D, std=0.3),
         e + "LayerNorm.weight": 1 + r(D, std=0.1), e + "LayerNorm.bias": r(D, std=0.1)}
    for i in range(L):
        p = f"bert.encoder.layer.{i}."
        for n in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            W.update({p + n + ".weight": r(D, D, std=D ** -0.5), p + n + ".bias": r(D, std=0.1)})
        W.update({p + "attention.output.LayerNorm.weight": 1 + r(D, std=0.1),
                  p + "attention.output.LayerNorm.bias": r(D, std=0.1),
                  p + "intermediate.dense.weight": r(Fd, D, std=D ** -0.5), p + "intermediate.dense.bias": r(Fd, std=0.1),
                  p + "output.dense.weight": r(D, Fd, std=Fd ** -0.5), p + "output.dense.bias": r(D, std=0.1),
                  p + "output.LayerNorm.weight": 1 + r(D, std=0.1), p + "output.LayerNorm.bias": r(D, std=0.1)})
    W.update({"cls.predictions.transform.dense.weight": r(D, D, std=D ** -0.5),
              "cls.predictions.transform.dense.bias": r(D, std=0.1),
              "cls.predictions.transform.LayerNorm.weight": 1 + r(D, std=0.1),
              "cls.predictions.transform.LayerNorm.bias": r(D, std=0.1), "cls.predictions.bias": r(V, std=0.3)})
    W = {k: rounded("F32", v) for k, v in W.items()}
    expected = bert_forward(cfg, W, IDS)
    expected["ids"] = torch.tensor(IDS)
    # save_pretrained drops the tied copies (cls.predictions.decoder.weight / .bias): the file has neither.
    write_folder("hf_bert", cfg, {k: ("F32", v) for k, v in W.items()}, "F32", expected)
    write_bert_tokenizer(os.path.join(GOLDEN, "hf_bert"), V)


def write_bert_tokenizer(folder, vocab_size):
    """A byte-level BPE tokenizer.json (the format our loader reads today) with "[MASK]" as an added special token at
    the last id, so the app can type "The capital of France is [MASK]." into the synthetic BERT. Real BERT folders
    ship a WordPiece tokenizer; this stand-in keeps the app test independent of WordPiece support."""
    byte_order, alphabet = byte_level_alphabet()
    spelling = dict(zip(byte_order, alphabet))  # byte value -> its byte-level character
    vocab = {alphabet[i]: i for i in range(256)}
    merges = []
    words = [" capital", " France", "The", " is", " of", " Paris", " the", " city", " London", " Berlin", " Rome",
             " Madrid", " Spain", " Italy", " town", " river"]
    n_merges = vocab_size - 1 - 256
    enc = lambda w: "".join(spelling[b] for b in w.encode())  # noqa: E731
    for w in words:
        chars = enc(w)
        for k in range(2, len(chars) + 1):
            if len(merges) == n_merges:
                break
            if chars[:k] in vocab:
                continue
            merges.append(chars[:k - 1] + " " + chars[k - 1])
            vocab[chars[:k]] = len(vocab)
    assert len(merges) == n_merges, len(merges)
    mask_id = len(vocab)
    vocab["[MASK]"] = mask_id
    tok = {"version": "1.0", "truncation": None, "padding": None,
           "added_tokens": [{"id": mask_id, "content": "[MASK]", "single_word": False, "lstrip": False,
                             "rstrip": False, "normalized": False, "special": True}],
           "normalizer": None,
           "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
           "post_processor": None,
           "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
           "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                     "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
                     "merges": merges}}
    import json
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, indent=1, ensure_ascii=False)
        f.write("\n")


# --- GPT-NeoX / Pythia (GPTNeoXForCausalLM) -------------------------------------------------------------------------------
def neox_forward(cfg, W, ids):
    D, H, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"]
    Dh, T = D // H, len(ids)
    R = int(Dh * cfg["rotary_pct"])  # rotary_ndims
    inv_freq = 1.0 / (cfg["rotary_emb_base"] ** (torch.arange(0, R, 2, dtype=torch.float64) / R))
    freqs = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()  # (T, R)
    ln = lambda x, p: F.layer_norm(x, (D,), W[p + ".weight"], W[p + ".bias"], eps)  # noqa: E731
    lin = lambda x, p: F.linear(x, W[p + ".weight"], W.get(p + ".bias"))  # noqa: E731
    x = W["gpt_neox.embed_in.weight"][ids]
    out = {}
    for i in range(cfg["num_hidden_layers"]):
        p = f"gpt_neox.layers.{i}."
        # query_key_value output viewed as (T, H, 3 * Dh): per head [q_h, k_h, v_h].
        qkv = lin(ln(x, p + "input_layernorm"), p + "attention.query_key_value").view(T, H, 3 * Dh)
        q, k, v = (qkv[..., j * Dh:(j + 1) * Dh].transpose(0, 1) for j in range(3))
        rot = lambda t: torch.cat((t[..., :R] * cos + rotate_half(t[..., :R]) * sin, t[..., R:]), dim=-1)  # noqa
        probs, ctx = attention(rot(q), rot(k), v, causal=True)
        out[f"dec.{i}.attn.probs"] = probs
        attn = lin(ctx, p + "attention.dense")
        mlp = lambda h: lin(F.gelu(lin(h, p + "mlp.dense_h_to_4h")), p + "mlp.dense_4h_to_h")  # noqa: E731
        if cfg["use_parallel_residual"]:  # x = x + attn(ln1(x)) + mlp(ln2(x))
            x = mlp(ln(x, p + "post_attention_layernorm")) + attn + x
        else:
            x = x + attn
            x = mlp(ln(x, p + "post_attention_layernorm")) + x
    x = ln(x, "gpt_neox.final_layer_norm")
    out["logits"] = x @ W["embed_out.weight"].T
    return out


def make_neox(name, gen, dtype, parallel, rotary_pct, bias_buffers, D=64):
    H, L, V, P = 4, 2, 320, 128
    Fd = 4 * D
    cfg = {"architectures": ["GPTNeoXForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 0,
           "classifier_dropout": 0.1, "eos_token_id": 0, "hidden_act": "gelu", "hidden_dropout": 0.0,
           "hidden_size": D, "initializer_range": 0.02, "intermediate_size": Fd, "layer_norm_eps": 1e-05,
           "max_position_embeddings": P, "model_type": "gpt_neox", "num_attention_heads": H,
           "num_hidden_layers": L, "rope_scaling": None, "rotary_emb_base": 10000, "rotary_pct": rotary_pct,
           "tie_word_embeddings": False, "torch_dtype": "float16" if dtype == "F16" else "float32",
           "transformers_version": "4.35.0", "use_cache": True, "use_parallel_residual": parallel, "vocab_size": V}
    r = randn(gen)
    W = {"gpt_neox.embed_in.weight": r(V, D, std=0.5)}
    for i in range(L):
        p = f"gpt_neox.layers.{i}."
        W.update({p + "input_layernorm.weight": 1 + r(D, std=0.1), p + "input_layernorm.bias": r(D, std=0.1),
                  p + "post_attention_layernorm.weight": 1 + r(D, std=0.1),
                  p + "post_attention_layernorm.bias": r(D, std=0.1),
                  p + "attention.query_key_value.weight": r(3 * D, D, std=D ** -0.5),
                  p + "attention.query_key_value.bias": r(3 * D, std=0.1),
                  p + "attention.dense.weight": r(D, D, std=D ** -0.5), p + "attention.dense.bias": r(D, std=0.1),
                  p + "mlp.dense_h_to_4h.weight": r(Fd, D, std=D ** -0.5), p + "mlp.dense_h_to_4h.bias": r(Fd, std=0.1),
                  p + "mlp.dense_4h_to_h.weight": r(D, Fd, std=Fd ** -0.5), p + "mlp.dense_4h_to_h.bias": r(D, std=0.1)})
    W.update({"gpt_neox.final_layer_norm.weight": 1 + r(D, std=0.1), "gpt_neox.final_layer_norm.bias": r(D, std=0.1),
              "embed_out.weight": r(V, D, std=0.5)})
    W = {k: rounded(dtype, v) for k, v in W.items()}
    expected = neox_forward(cfg, W, IDS)
    expected["ids"] = torch.tensor(IDS)
    entries = {k: (dtype, v) for k, v in W.items()}
    if bias_buffers:  # older Pythia exports carry the causal-mask and inv_freq buffers; the loader skips them
        for i in range(L):
            p = f"gpt_neox.layers.{i}.attention."
            entries[p + "bias"] = ("BOOL", torch.tril(torch.ones(P, P)).view(1, 1, P, P))
            entries[p + "masked_bias"] = ("F32", torch.tensor(-1e9))
            R = int(D // H * rotary_pct)
            entries[p + "rotary_emb.inv_freq"] = ("F32", 1.0 / (10000 ** (torch.arange(0, R, 2).float() / R)))
    write_folder(name, cfg, entries, dtype, expected)


# --- Gemma (GemmaForCausalLM) ---------------------------------------------------------------------------------------------
def gemma_rms_norm(x, w, eps):  # GemmaRMSNorm: x * rsqrt(mean(x^2) + eps) * (1 + w)
    return rms_norm(x, 1.0 + w, eps)


def gelu_tanh(x):  # gelu_pytorch_tanh
    return F.gelu(x, approximate="tanh")


def gemma_forward(cfg, W, ids):
    D, H, K, Dh = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    T, eps = len(ids), cfg["rms_norm_eps"]
    inv_freq = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, Dh, 2, dtype=torch.float64) / Dh))
    freqs = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    # GemmaModel: hidden * torch.tensor(hidden_size ** 0.5, dtype=model dtype); float32 here (the model run in F32).
    normalizer = torch.tensor(D ** 0.5, dtype=torch.float32).to(torch.float64)
    x = W["model.embed_tokens.weight"][ids] * normalizer
    out = {}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = gemma_rms_norm(x, W[p + "input_layernorm.weight"], eps)
        q = F.linear(h, W[p + "self_attn.q_proj.weight"]).view(T, H, Dh).transpose(0, 1)
        k = F.linear(h, W[p + "self_attn.k_proj.weight"]).view(T, K, Dh).transpose(0, 1)
        v = F.linear(h, W[p + "self_attn.v_proj.weight"]).view(T, K, Dh).transpose(0, 1)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k = k[:, None].expand(K, H // K, T, Dh).reshape(H, T, Dh)  # repeat_kv (MQA: K = 1)
        v = v[:, None].expand(K, H // K, T, Dh).reshape(H, T, Dh)
        probs, ctx = attention(q, k, v, causal=True)  # scaling head_dim ** -0.5
        out[f"dec.{i}.attn.probs"] = probs
        x = x + F.linear(ctx, W[p + "self_attn.o_proj.weight"])
        h = gemma_rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        h = gelu_tanh(F.linear(h, W[p + "mlp.gate_proj.weight"])) * F.linear(h, W[p + "mlp.up_proj.weight"])
        x = x + F.linear(h, W[p + "mlp.down_proj.weight"])
    x = gemma_rms_norm(x, W["model.norm.weight"], eps)
    out["logits"] = x @ W["model.embed_tokens.weight"].T  # tie_word_embeddings: true
    return out


def make_gemma(gen):
    D, H, K, Dh, L, V, Fd = 32, 4, 1, 16, 2, 288, 96  # head_dim 16 != hidden_size / heads = 8; MQA
    cfg = {"architectures": ["GemmaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
           "bos_token_id": 2, "eos_token_id": 1, "head_dim": Dh, "hidden_act": "gelu_pytorch_tanh",
           "hidden_activation": "gelu_pytorch_tanh", "hidden_size": D, "initializer_range": 0.02,
           "intermediate_size": Fd, "max_position_embeddings": 128, "model_type": "gemma",
           "num_attention_heads": H, "num_hidden_layers": L, "num_key_value_heads": K, "pad_token_id": 0,
           "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 10000.0, "tie_word_embeddings": True,
           "torch_dtype": "bfloat16", "transformers_version": "4.38.0", "use_cache": True, "vocab_size": V}
    r = randn(gen)
    W = {"model.embed_tokens.weight": r(V, D, std=0.1)}
    for i in range(L):
        p = f"model.layers.{i}."
        W.update({p + "input_layernorm.weight": r(D, std=0.3),  # stored w; the layer multiplies by (1 + w)
                  p + "self_attn.q_proj.weight": r(H * Dh, D, std=D ** -0.5),
                  p + "self_attn.k_proj.weight": r(K * Dh, D, std=D ** -0.5),
                  p + "self_attn.v_proj.weight": r(K * Dh, D, std=D ** -0.5),
                  p + "self_attn.o_proj.weight": r(D, H * Dh, std=(H * Dh) ** -0.5),
                  p + "post_attention_layernorm.weight": r(D, std=0.3),
                  p + "mlp.gate_proj.weight": r(Fd, D, std=D ** -0.5),
                  p + "mlp.up_proj.weight": r(Fd, D, std=D ** -0.5),
                  p + "mlp.down_proj.weight": r(D, Fd, std=Fd ** -0.5)})
    W["model.norm.weight"] = r(D, std=0.3)
    W = {k: rounded("BF16", v) for k, v in W.items()}
    expected = gemma_forward(cfg, W, IDS)
    expected["ids"] = torch.tensor(IDS)
    write_folder("hf_gemma", cfg, {k: ("BF16", v) for k, v in W.items()}, "BF16", expected)


def main():
    torch.manual_seed(0)
    make_bert(torch.Generator().manual_seed(11))
    make_neox("hf_gpt_neox", torch.Generator().manual_seed(12), "F16", parallel=True, rotary_pct=0.25,
              bias_buffers=True)
    make_neox("hf_gpt_neox_sequential", torch.Generator().manual_seed(13), "F32", parallel=False, rotary_pct=1.0,
              bias_buffers=False, D=32)
    make_gemma(torch.Generator().manual_seed(14))


if __name__ == "__main__":
    np.random.seed(0)
    main()
