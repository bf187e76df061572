# Tiny Hugging Face encoder–decoder checkpoint folders (T5, T5 v1.1, Marian, BART layouts: exact file names, tensor
# names, dtypes and config.json keys, random weights) and their reference outputs (encoder + teacher-forced decoder),
# for tests/core/hf_seq2seq_test.cpp.
# Regenerate (needs Debian's torch; transformers is not needed): /usr/bin/python3 tests/reference/make_hf_seq2seq_fixtures.py
# [fixture names...] (no names: all fixtures; e.g. `hf_t5_dkv` rewrites only that folder).
#
# The reference forwards are written in plain torch from the transformers implementations:
#   T5ForConditionalGeneration: T5LayerNorm (no mean, no bias), pre-norm, no 1/sqrt(d_kv) scaling, relative position
#     bias from T5Attention._relative_position_bucket / compute_bias (block 0 of each stack, shared by its blocks;
#     bidirectional in the encoder, causal in the decoder, none in EncDecAttention), DenseReluDense (relu) or
#     DenseGatedActDense (gated-gelu = gelu_new), tied head with sequence_output * d_model**-0.5.
#   MarianMTModel: post-norm, MarianSinusoidalPositionalEmbedding (sines in the first half of the dims, cosines in the
#     second), embed_scale sqrt(d_model), swish, lm_head tied to shared + final_logits_bias.
#   BartForConditionalGeneration: post-norm, BartLearnedPositionalEmbedding (offset 2), layernorm_embedding, gelu,
#     lm_head tied to shared + final_logits_bias.
# Weights are rounded to the file's dtype first, then the forward runs in float64 on the rounded values (bucket ids
# in float32, as torch computes them), so the C++ loader (fp32) must match to fp32 rounding.
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_hf_fixtures as hf  # noqa: E402  (safetensors writer, dtype rounding, folder layout)
import st_io  # noqa: E402

GOLDEN = hf.GOLDEN


def write_folder(name, config, entries, dtype, expected, generation_config=None):
    d = os.path.join(GOLDEN, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    if generation_config is not None:
        with open(os.path.join(d, "generation_config.json"), "w") as f:
            json.dump(generation_config, f, indent=2, sort_keys=True)
            f.write("\n")
    hf.write_safetensors(os.path.join(d, "model.safetensors"), entries)
    st_io.save(os.path.join(d, "expected.safetensors"), expected,
               metadata={"generator": "tests/reference/make_hf_seq2seq_fixtures.py", "dtype": dtype})
    print(f"wrote {name}: {len(entries)} tensors ({dtype}), logits {tuple(expected['logits'].shape)}")


def gen_normal(gen):
    return lambda *s, std=1.0: torch.randn(*s, generator=gen, dtype=torch.float64) * std  # noqa: E731


def attention(q_in, kv_in, wq, wk, wv, wo, H, scale, bias=None, causal=False, bq=None, bk=None, bv=None, bo=None):
    """Multi-head attention as the HF modules compute it; returns (output (T, D), probs (H, T, S))."""
    T, S = q_in.shape[0], kv_in.shape[0]
    Dh = wq.shape[0] // H
    q = F.linear(q_in, wq, bq).view(T, H, Dh).transpose(0, 1)
    k = F.linear(kv_in, wk, bk).view(S, H, Dh).transpose(0, 1)
    v = F.linear(kv_in, wv, bv).view(S, H, Dh).transpose(0, 1)
    w = (q @ k.transpose(-1, -2)) * scale
    if bias is not None:
        w = w + bias
    if causal:
        w = w.masked_fill(~torch.tril(torch.ones(T, S, dtype=torch.bool)), float("-inf"))
    probs = torch.softmax(w, dim=-1)
    out = (probs @ v).transpose(0, 1).reshape(T, H * Dh)
    return F.linear(out, wo, bo), probs


# --- T5 ----------------------------------------------------------------------------------------------------------
def t5_bucket(rel, bidirectional, num_buckets, max_distance):
    """T5Attention._relative_position_bucket (the float ops in float32, as torch runs them)."""
    ret = torch.zeros_like(rel)
    if bidirectional:
        num_buckets //= 2
        ret += (rel > 0).to(torch.long) * num_buckets
        n = torch.abs(rel)
    else:
        n = -torch.min(rel, torch.zeros_like(rel))
    max_exact = num_buckets // 2
    is_small = n < max_exact
    large = max_exact + (torch.log(n.float() / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return ret + torch.where(is_small, n, large)


def t5_position_bias(table, q_len, k_len, bidirectional, cfg):
    """T5Attention.compute_bias: (H, q_len, k_len) from the (num_buckets, H) table."""
    rel = torch.arange(k_len)[None, :] - torch.arange(q_len)[:, None]
    b = t5_bucket(rel, bidirectional, cfg["relative_attention_num_buckets"], cfg["relative_attention_max_distance"])
    return table[b].permute(2, 0, 1)


def t5_norm(x, w, eps):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def t5_ffn(x, W, p, gated):
    if gated:
        h = hf.gelu_new(F.linear(x, W[p + "DenseReluDense.wi_0.weight"])) * F.linear(x, W[p + "DenseReluDense.wi_1.weight"])
    else:
        h = torch.relu(F.linear(x, W[p + "DenseReluDense.wi.weight"]))
    return F.linear(h, W[p + "DenseReluDense.wo.weight"])


def t5_forward(cfg, W, src, tgt):
    H, eps, D = cfg["num_heads"], cfg["layer_norm_epsilon"], cfg["d_model"]
    gated = cfg["feed_forward_proj"].startswith("gated")
    out = {}

    def attn(x, kv, p, bias, causal):
        return attention(x, kv, W[p + "q.weight"], W[p + "k.weight"], W[p + "v.weight"], W[p + "o.weight"], H, 1.0,
                         bias, causal)

    x = W["shared.weight"][src]
    S, T = len(src), len(tgt)
    bias = t5_position_bias(W["encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"], S, S, True, cfg)
    out["enc.position_bias"] = bias
    for i in range(cfg["num_layers"]):
        p = f"encoder.block.{i}.layer."
        h = t5_norm(x, W[p + "0.layer_norm.weight"], eps)
        a, probs = attn(h, h, p + "0.SelfAttention.", bias, False)
        out[f"enc.{i}.attn.probs"] = probs
        x = x + a
        x = x + t5_ffn(t5_norm(x, W[p + "1.layer_norm.weight"], eps), W, p + "1.", gated)
    memory = t5_norm(x, W["encoder.final_layer_norm.weight"], eps)

    y = W["shared.weight"][tgt]
    bias = t5_position_bias(W["decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"], T, T, False, cfg)
    out["dec.position_bias"] = bias
    for i in range(cfg.get("num_decoder_layers") or cfg["num_layers"]):
        p = f"decoder.block.{i}.layer."
        h = t5_norm(y, W[p + "0.layer_norm.weight"], eps)
        a, probs = attn(h, h, p + "0.SelfAttention.", bias, True)
        out[f"dec.{i}.attn.probs"] = probs
        y = y + a
        h = t5_norm(y, W[p + "1.layer_norm.weight"], eps)
        a, probs = attn(h, memory, p + "1.EncDecAttention.", None, False)  # no position bias in cross-attention
        out[f"dec.{i}.cross_attn.probs"] = probs
        y = y + a
        y = y + t5_ffn(t5_norm(y, W[p + "2.layer_norm.weight"], eps), W, p + "2.", gated)
    y = t5_norm(y, W["decoder.final_layer_norm.weight"], eps)
    if cfg.get("tie_word_embeddings", True):
        out["logits"] = (y * D ** -0.5) @ W["shared.weight"].T
    else:
        out["logits"] = y @ W["lm_head.weight"].T
    return out


def make_t5(name, cfg, gen, dtype, src, tgt, embed_copies):
    r = gen_normal(gen)
    D, Fd, H, V = cfg["d_model"], cfg["d_ff"], cfg["num_heads"], cfg["vocab_size"]
    inner = H * cfg["d_kv"]
    gated = cfg["feed_forward_proj"].startswith("gated")
    W = {"shared.weight": r(V, D, std=1.0)}
    for stack, n in (("encoder", cfg["num_layers"]), ("decoder", cfg.get("num_decoder_layers") or cfg["num_layers"])):
        W[f"{stack}.block.0.layer.0.SelfAttention.relative_attention_bias.weight"] = r(
            cfg["relative_attention_num_buckets"], H, std=1.0)
        for i in range(n):
            p = f"{stack}.block.{i}.layer."
            blocks = ["0.SelfAttention."] + (["1.EncDecAttention."] if stack == "decoder" else [])
            for b in blocks:
                W.update({p + b + "q.weight": r(inner, D, std=D ** -0.5 * cfg["d_kv"] ** -0.25),
                          p + b + "k.weight": r(inner, D, std=D ** -0.5 * cfg["d_kv"] ** -0.25),
                          p + b + "v.weight": r(inner, D, std=D ** -0.5),
                          p + b + "o.weight": r(D, inner, std=inner ** -0.5)})
            for k in range(len(blocks) + 1):
                W[p + f"{k}.layer_norm.weight"] = 1 + r(D, std=0.1)
            f = p + ("2." if stack == "decoder" else "1.")
            if gated:
                W[f + "DenseReluDense.wi_0.weight"] = r(Fd, D, std=D ** -0.5)
                W[f + "DenseReluDense.wi_1.weight"] = r(Fd, D, std=D ** -0.5)
            else:
                W[f + "DenseReluDense.wi.weight"] = r(Fd, D, std=D ** -0.5)
            W[f + "DenseReluDense.wo.weight"] = r(D, Fd, std=Fd ** -0.5)
        W[f"{stack}.final_layer_norm.weight"] = 1 + r(D, std=0.1)
    if not cfg.get("tie_word_embeddings", True):
        W["lm_head.weight"] = r(V, D, std=D ** -0.5)
    W = {k: hf.rounded(dtype, v) for k, v in W.items()}
    expected = t5_forward(cfg, W, src, tgt)
    expected["src_ids"] = torch.tensor(src)
    expected["tgt_ids"] = torch.tensor(tgt)
    # T5 bucket ids of the default configuration over a range of relative positions (key - query), both directions.
    rel = torch.arange(-300, 301)
    expected["buckets.rel"] = rel
    expected["buckets.bidirectional"] = t5_bucket(rel, True, 32, 128)
    expected["buckets.causal"] = t5_bucket(rel, False, 32, 128)
    expected["buckets.bidirectional_8_12"] = t5_bucket(rel, True, 8, 12)
    entries = {k: (dtype, v) for k, v in W.items()}
    for copy in embed_copies:  # older exports keep the tied copies of shared.weight
        entries[copy] = (dtype, W["shared.weight"])
    if embed_copies:  # ... and an unused cross-attention bias table (transformers ignores it on load)
        entries["decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight"] = (
            dtype, torch.zeros(cfg["relative_attention_num_buckets"], H))
    write_folder(name, cfg, entries, dtype, expected)


# --- Marian and BART ---------------------------------------------------------------------------------------------
def marian_sinusoidal(n_pos, dim):
    """MarianSinusoidalPositionalEmbedding._init_weight: numpy float64, then float32."""
    enc = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)])
    out = torch.empty(n_pos, dim, dtype=torch.float32)
    half = dim // 2 if dim % 2 == 0 else dim // 2 + 1
    out[:, 0:half] = torch.FloatTensor(np.sin(enc[:, 0::2]))
    out[:, half:] = torch.FloatTensor(np.cos(enc[:, 1::2]))
    return out.to(torch.float64)


ACT = {"swish": F.silu, "gelu": lambda x: F.gelu(x), "relu": torch.relu}


def bart_like_forward(kind, cfg, W, src, tgt):
    D, H = cfg["d_model"], cfg["encoder_attention_heads"]
    scale = math.sqrt(D) if cfg.get("scale_embedding") else 1.0
    act = ACT[cfg["activation_function"]]
    emb = W["model.shared.weight"]
    Dh = D // H
    out = {}

    def positions(stack, n):
        if kind == "marian":
            return marian_sinusoidal(cfg["max_position_embeddings"], D)[:n]
        return W[f"model.{stack}.embed_positions.weight"][2:2 + n]  # BartLearnedPositionalEmbedding offset 2

    def ln(x, p):
        return F.layer_norm(x, (D,), W[p + ".weight"], W[p + ".bias"], 1e-5)

    def attn(x, kv, p, causal):
        return attention(x, kv, W[p + "q_proj.weight"], W[p + "k_proj.weight"], W[p + "v_proj.weight"],
                         W[p + "out_proj.weight"], H, Dh ** -0.5, None, causal, W[p + "q_proj.bias"],
                         W[p + "k_proj.bias"], W[p + "v_proj.bias"], W[p + "out_proj.bias"])

    def embed(stack, ids):
        x = emb[ids] * scale + positions(stack, len(ids))
        return ln(x, f"model.{stack}.layernorm_embedding") if kind == "bart" else x

    def ffn(x, p):
        return F.linear(act(F.linear(x, W[p + "fc1.weight"], W[p + "fc1.bias"])), W[p + "fc2.weight"], W[p + "fc2.bias"])

    x = embed("encoder", src)
    for i in range(cfg["encoder_layers"]):
        p = f"model.encoder.layers.{i}."
        a, probs = attn(x, x, p + "self_attn.", False)
        out[f"enc.{i}.attn.probs"] = probs
        x = ln(x + a, p + "self_attn_layer_norm")
        x = ln(x + ffn(x, p), p + "final_layer_norm")
    memory = x
    y = embed("decoder", tgt)
    for i in range(cfg["decoder_layers"]):
        p = f"model.decoder.layers.{i}."
        a, probs = attn(y, y, p + "self_attn.", True)
        out[f"dec.{i}.attn.probs"] = probs
        y = ln(y + a, p + "self_attn_layer_norm")
        a, probs = attn(y, memory, p + "encoder_attn.", False)
        out[f"dec.{i}.cross_attn.probs"] = probs
        y = ln(y + a, p + "encoder_attn_layer_norm")
        y = ln(y + ffn(y, p), p + "final_layer_norm")
    out["logits"] = y @ emb.T + W["final_logits_bias"][0]
    return out


def make_bart_like(kind, name, cfg, gen, dtype, src, tgt, generation_config=None):
    r = gen_normal(gen)
    D, Fd, V, P = cfg["d_model"], cfg["encoder_ffn_dim"], cfg["vocab_size"], cfg["max_position_embeddings"]
    W = {"model.shared.weight": r(V, D, std=0.5 if kind == "bart" else 0.5 / math.sqrt(D)),
         "final_logits_bias": r(1, V, std=0.5)}
    for stack, n in (("encoder", cfg["encoder_layers"]), ("decoder", cfg["decoder_layers"])):
        if kind == "bart":
            W[f"model.{stack}.embed_positions.weight"] = r(P + 2, D, std=0.3)
            W[f"model.{stack}.layernorm_embedding.weight"] = 1 + r(D, std=0.1)
            W[f"model.{stack}.layernorm_embedding.bias"] = r(D, std=0.1)
        for i in range(n):
            p = f"model.{stack}.layers.{i}."
            blocks = ["self_attn"] + (["encoder_attn"] if stack == "decoder" else [])
            for b in blocks:
                for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
                    W[f"{p}{b}.{proj}.weight"] = r(D, D, std=D ** -0.5)
                    W[f"{p}{b}.{proj}.bias"] = r(D, std=0.1)
                W[f"{p}{b}_layer_norm.weight"] = 1 + r(D, std=0.1)
                W[f"{p}{b}_layer_norm.bias"] = r(D, std=0.1)
            W.update({p + "fc1.weight": r(Fd, D, std=D ** -0.5), p + "fc1.bias": r(Fd, std=0.1),
                      p + "fc2.weight": r(D, Fd, std=Fd ** -0.5), p + "fc2.bias": r(D, std=0.1),
                      p + "final_layer_norm.weight": 1 + r(D, std=0.1), p + "final_layer_norm.bias": r(D, std=0.1)})
    W = {k: hf.rounded(dtype, v) for k, v in W.items()}
    expected = bart_like_forward(kind, cfg, W, src, tgt)
    expected["src_ids"] = torch.tensor(src)
    expected["tgt_ids"] = torch.tensor(tgt)
    entries = {k: (dtype, v) for k, v in W.items()}
    # save_pretrained keeps one copy of tied tensors; older exports carry all of them (and Marian's sinusoidal tables).
    entries["lm_head.weight"] = (dtype, W["model.shared.weight"])
    if kind == "marian":
        for stack in ("encoder", "decoder"):
            entries[f"model.{stack}.embed_positions.weight"] = ("F32", marian_sinusoidal(P, D))
    else:
        entries["model.encoder.embed_tokens.weight"] = (dtype, W["model.shared.weight"])
    write_folder(name, cfg, entries, dtype, expected, generation_config)


def main(only):
    def want(name):
        return not only or name in only

    t5 = {"architectures": ["T5ForConditionalGeneration"], "d_ff": 64, "d_kv": 8, "d_model": 32,
          "decoder_start_token_id": 0, "dense_act_fn": "relu", "dropout_rate": 0.1, "eos_token_id": 1,
          "feed_forward_proj": "relu", "initializer_factor": 1.0, "is_encoder_decoder": True, "is_gated_act": False,
          "layer_norm_epsilon": 1e-06, "model_type": "t5", "n_positions": 64, "num_decoder_layers": 2,
          "num_heads": 4, "num_layers": 2, "output_past": True, "pad_token_id": 0,
          "relative_attention_max_distance": 12, "relative_attention_num_buckets": 8,
          "task_specific_params": {"translation_en_to_de": {"prefix": "translate English to German: "}},
          "torch_dtype": "float32", "transformers_version": "4.35.0", "use_cache": True, "vocab_size": 300}
    if want("hf_t5"):
        make_t5("hf_t5", t5, torch.Generator().manual_seed(11), "F32", [37, 5, 120, 8, 250, 17, 1],
                [0, 44, 7, 199, 3, 60],
                embed_copies=["encoder.embed_tokens.weight", "decoder.embed_tokens.weight", "lm_head.weight"])

    t5_v11 = dict(t5, d_ff=48, dense_act_fn="gelu_new", feed_forward_proj="gated-gelu", is_gated_act=True,
                  num_decoder_layers=3, num_layers=2, tie_word_embeddings=False, torch_dtype="bfloat16",
                  relative_attention_num_buckets=10, relative_attention_max_distance=16,
                  architectures=["T5ForConditionalGeneration"])
    del t5_v11["task_specific_params"]
    if want("hf_t5_v11"):
        make_t5("hf_t5_v11", t5_v11, torch.Generator().manual_seed(12), "BF16", [3, 99, 42, 7, 280, 1],
                [0, 12, 250, 5, 9], embed_copies=[])

    # T5 v1.1 / Flan-T5 small shape: num_heads * d_kv (3 * 16 = 48) != d_model (32), so q/k/v are (48, 32) and
    # o is (32, 48). F32 so the attention probabilities compare to 1e-5.
    t5_dkv = dict(t5_v11, d_kv=16, num_heads=3, torch_dtype="float32")
    if want("hf_t5_dkv"):
        make_t5("hf_t5_dkv", t5_dkv, torch.Generator().manual_seed(15), "F32", [21, 140, 6, 77, 299, 1],
                [0, 88, 3, 161, 40], embed_copies=[])

    # The T5 that GGUF files describe: llama.cpp keeps no relative_attention_max_distance and assumes 128
    # (llama_relative_position_bucket), so tests/reference/make_gguf_fixtures.py converts this one. Few buckets so
    # that the logarithmic buckets (where max_distance counts) are reached within a short sentence. More encoder than
    # decoder layers: llama.cpp (3.21.1's) cannot load a T5 whose decoder is the deeper stack (its per-layer
    # hyperparameters are sized by the encoder's block_count).
    t5_gguf = dict(t5_dkv, relative_attention_num_buckets=6, relative_attention_max_distance=128, num_layers=3,
                   num_decoder_layers=2)
    if want("hf_t5_gguf"):
        make_t5("hf_t5_gguf", t5_gguf, torch.Generator().manual_seed(16), "F32", [21, 140, 6, 77, 299, 5, 64, 1],
                [0, 88, 3, 161, 40, 9, 250], embed_copies=[])

    V = 320
    marian = {"activation_dropout": 0.0, "activation_function": "swish", "add_bias_logits": False,
              "add_final_layer_norm": False, "architectures": ["MarianMTModel"], "attention_dropout": 0.0,
              "bad_words_ids": [[V - 1]], "bos_token_id": 0, "classif_dropout": 0.0, "classifier_dropout": 0.0,
              "d_model": 32, "decoder_attention_heads": 4, "decoder_ffn_dim": 64, "decoder_layerdrop": 0.0,
              "decoder_layers": 2, "decoder_start_token_id": V - 1, "decoder_vocab_size": V, "dropout": 0.1,
              "encoder_attention_heads": 4, "encoder_ffn_dim": 64, "encoder_layerdrop": 0.0, "encoder_layers": 2,
              "eos_token_id": 0, "forced_eos_token_id": 0, "init_std": 0.02, "is_encoder_decoder": True,
              "max_length": 512, "max_position_embeddings": 64, "model_type": "marian", "normalize_before": False,
              "normalize_embedding": False, "num_beams": 4, "num_hidden_layers": 2, "pad_token_id": V - 1,
              "scale_embedding": True, "share_encoder_decoder_embeddings": True, "static_position_embeddings": True,
              "torch_dtype": "float32", "transformers_version": "4.35.0", "use_cache": True, "vocab_size": V}
    gen_cfg = {"bad_words_ids": [[V - 1]], "bos_token_id": 0, "decoder_start_token_id": V - 1, "eos_token_id": 0,
               "forced_eos_token_id": 0, "max_length": 512, "num_beams": 4, "pad_token_id": V - 1,
               "transformers_version": "4.35.0"}
    if want("hf_marian"):
        make_bart_like("marian", "hf_marian", marian, torch.Generator().manual_seed(13), "F32",
                       [15, 230, 7, 88, 4, 0], [V - 1, 31, 200, 9, 70], gen_cfg)

    bart = {"activation_dropout": 0.1, "activation_function": "gelu", "add_bias_logits": False,
            "add_final_layer_norm": False, "architectures": ["BartModel"], "attention_dropout": 0.1,
            "bos_token_id": 0, "classif_dropout": 0.1, "classifier_dropout": 0.0, "d_model": 32,
            "decoder_attention_heads": 4, "decoder_ffn_dim": 80, "decoder_layerdrop": 0.0, "decoder_layers": 2,
            "decoder_start_token_id": 2, "dropout": 0.1, "early_stopping": True, "encoder_attention_heads": 4,
            "encoder_ffn_dim": 80, "encoder_layerdrop": 0.0, "encoder_layers": 2, "eos_token_id": 2,
            "forced_bos_token_id": 0, "forced_eos_token_id": 2, "init_std": 0.02, "is_encoder_decoder": True,
            "max_position_embeddings": 40, "model_type": "bart", "no_repeat_ngram_size": 3,
            "normalize_before": False, "normalize_embedding": True, "num_beams": 4, "num_hidden_layers": 2,
            "pad_token_id": 1, "scale_embedding": False, "torch_dtype": "float32", "transformers_version": "4.35.0",
            "use_cache": True, "vocab_size": 310}
    if want("hf_bart"):
        make_bart_like("bart", "hf_bart", bart, torch.Generator().manual_seed(14), "F32",
                       [0, 100, 57, 3, 290, 2], [2, 0, 77, 14, 5, 300])


if __name__ == "__main__":
    torch.manual_seed(0)
    main(set(sys.argv[1:]))
