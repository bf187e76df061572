# Golden fixtures for the C++ forward pass (tests/core/forward_golden_test.cpp): small models with fixed seeds,
# weights saved under OUR names ("model.<name>"), inputs ("in.*") and PyTorch outputs ("out.*"), computed in float64.
# Regenerate (needs Debian's torch): /usr/bin/python3 tests/reference/make_model_fixtures.py
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st_io  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")


def base_config(**kw):
    c = dict(name="fixture", arch="decoder", vocab_size=64, d_model=32, n_heads=4, n_kv_heads=4, d_ff=64,
             n_layers=2, n_enc_layers=0, max_seq_len=16, norm="layernorm", norm_placement="pre", norm_eps=1e-5,
             final_norm=True, activation="gelu", ffn_bias=True, attn_qkv_bias=True, attn_out_bias=True,
             norm_bias=True, position="learned", sinusoidal_base=10000.0, rope_theta=10000.0,
             rope_layout="half_split", scale_attn=True, qk_norm=False, scale_embeddings=False, tie_embeddings=True)
    c.update(kw)
    return c


def save(file, cfg, weights, tensors, options):
    out = {"model." + k: v for k, v in weights.items()}
    out.update(tensors)
    st_io.save(os.path.join(GOLDEN, file), out,
               metadata={"config": json.dumps(cfg), "options": json.dumps(options),
                         "generator": "tests/reference/make_model_fixtures.py"})
    print(f"wrote {file}: {len(out)} tensors")


# --- a generic reference model in torch (float64), mirroring ModelConfig's switches ---------------------------------
def sinusoidal(n_pos, d, base):
    pos = torch.arange(n_pos, dtype=torch.float64)[:, None]
    i2 = torch.arange(0, d, 2, dtype=torch.float64)[None, :]
    ang = pos / base ** (i2 / d)
    pe = torch.zeros(n_pos, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(ang)
    pe[:, 1::2] = torch.cos(ang)
    return pe


def rope(x, start, theta, layout):  # x: (heads, T, D)
    D = x.shape[-1]
    T = x.shape[-2]
    inv = 1.0 / theta ** (torch.arange(0, D, 2, dtype=torch.float64) / D)  # (D/2)
    ang = (start + torch.arange(T, dtype=torch.float64))[:, None] * inv[None, :]  # (T, D/2)
    cos, sin = torch.cos(ang), torch.sin(ang)
    if layout == "half_split":  # HF Llama rotate_half
        x1, x2 = x[..., : D // 2], x[..., D // 2:]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
    xe, xo = x[..., 0::2], x[..., 1::2]  # RoFormer eq. 34
    out = torch.empty_like(x)
    out[..., 0::2] = xe * cos - xo * sin
    out[..., 1::2] = xe * sin + xo * cos
    return out


def rms(x, w, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w


def norm(cfg, W, name, x):
    if cfg["norm"] == "layernorm":
        return F.layer_norm(x, (x.shape[-1],), W[name + ".weight"], W.get(name + ".bias"), cfg["norm_eps"])
    return rms(x, W[name + ".weight"], cfg["norm_eps"])


ACT = {"relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "silu": F.silu,
       "glu": torch.sigmoid, "swiglu": F.silu, "geglu": F.gelu}


def attention(cfg, W, p, xq, xkv, allowed, start, temperature, use_rope, rec):
    H, K = cfg["n_heads"], cfg["n_kv_heads"]
    D = cfg["d_model"] // H
    T, S = xq.shape[0], xkv.shape[0]
    q = F.linear(xq, W[p + ".wq"], W.get(p + ".bq")).view(T, H, D).transpose(0, 1)
    k = F.linear(xkv, W[p + ".wk"], W.get(p + ".bk")).view(S, K, D).transpose(0, 1)
    v = F.linear(xkv, W[p + ".wv"], W.get(p + ".bv")).view(S, K, D).transpose(0, 1)
    if cfg["qk_norm"]:
        q = rms(q, W[p + ".q_norm.weight"], cfg["norm_eps"])
        k = rms(k, W[p + ".k_norm.weight"], cfg["norm_eps"])
    if use_rope:
        q = rope(q, start, cfg["rope_theta"], cfg["rope_layout"])
        k = rope(k, start, cfg["rope_theta"], cfg["rope_layout"])
    k = k.repeat_interleave(H // K, dim=0)  # query head h uses kv head h // (H/K)
    v = v.repeat_interleave(H // K, dim=0)
    scores = q @ k.transpose(-1, -2)
    if cfg["scale_attn"]:
        scores = scores / math.sqrt(D)
    scores = scores.masked_fill(~allowed, float("-inf"))
    probs = torch.nan_to_num(torch.softmax(scores / temperature, dim=-1), nan=0.0)
    rec[p + ".probs"] = probs
    out = (probs @ v).transpose(0, 1).reshape(T, H * D)
    return F.linear(out, W[p + ".wo"], W.get(p + ".bo"))


def ffn(cfg, W, p, x):
    act = ACT[cfg["activation"]]
    up = F.linear(x, W[p + ".w_up"], W.get(p + ".b_up"))
    h = act(F.linear(x, W[p + ".w_gate"])) * up if cfg["activation"] in ("glu", "swiglu", "geglu") else act(up)
    return F.linear(h, W[p + ".w_down"], W.get(p + ".b_down"))


def reference_forward(cfg, W, ids, allowed, temperature):
    """Decoder-only or encoder-only forward. allowed: (T, T) bool. Returns logits (T, V), hidden, probs dict."""
    stack = "enc" if cfg["arch"] == "encoder" else "dec"
    T = len(ids)
    x = W["tok_emb.weight"][ids]
    if cfg["scale_embeddings"]:
        x = x * math.sqrt(cfg["d_model"])
    if cfg["position"] == "learned":
        x = x + W["pos_emb.weight"][:T]
    elif cfg["position"] == "sinusoidal":
        x = x + sinusoidal(T, cfg["d_model"], cfg["sinusoidal_base"])
    rec = {}
    pre = cfg["norm_placement"] == "pre"
    use_rope = cfg["position"] == "rope"
    for i in range(cfg["n_layers"]):
        p = f"{stack}.{i}"
        if pre:
            h = norm(cfg, W, p + ".attn_norm", x)
            x = x + attention(cfg, W, p + ".attn", h, h, allowed, 0, temperature, use_rope, rec)
            x = x + ffn(cfg, W, p + ".ffn", norm(cfg, W, p + ".ffn_norm", x))
        else:
            x = norm(cfg, W, p + ".attn_norm", x + attention(cfg, W, p + ".attn", x, x, allowed, 0, temperature,
                                                              use_rope, rec))
            x = norm(cfg, W, p + ".ffn_norm", x + ffn(cfg, W, p + ".ffn", x))
    if cfg["final_norm"]:
        x = norm(cfg, W, stack + ".final_norm", x)
    head = W["tok_emb.weight"] if cfg["tie_embeddings"] else W["lm_head.weight"]
    return x @ head.T, x, rec


def random_weights(cfg, gen, std=0.2):
    """Our weight names (same list as core/model/model.cpp expected_weights for decoder/encoder-only configs)."""
    D, H, K, Fd = cfg["d_model"], cfg["n_heads"], cfg["n_kv_heads"], cfg["d_ff"]
    Dh = D // H
    ln_bias = cfg["norm"] == "layernorm" and cfg["norm_bias"]
    shapes = {"tok_emb.weight": (cfg["vocab_size"], D)}
    if cfg["position"] == "learned":
        shapes["pos_emb.weight"] = (cfg["max_seq_len"], D)
    stack = "enc" if cfg["arch"] == "encoder" else "dec"
    norms = []
    for i in range(cfg["n_layers"]):
        p = f"{stack}.{i}"
        norms += [p + ".attn_norm", p + ".ffn_norm"]
        shapes.update({p + ".attn.wq": (H * Dh, D), p + ".attn.wk": (K * Dh, D), p + ".attn.wv": (K * Dh, D),
                       p + ".attn.wo": (D, H * Dh), p + ".ffn.w_up": (Fd, D), p + ".ffn.w_down": (D, Fd)})
        if cfg["attn_qkv_bias"]:
            shapes.update({p + ".attn.bq": (H * Dh,), p + ".attn.bk": (K * Dh,), p + ".attn.bv": (K * Dh,)})
        if cfg["attn_out_bias"]:
            shapes[p + ".attn.bo"] = (D,)
        if cfg["qk_norm"]:
            shapes.update({p + ".attn.q_norm.weight": (Dh,), p + ".attn.k_norm.weight": (Dh,)})
        if cfg["activation"] in ("glu", "swiglu", "geglu"):
            shapes[p + ".ffn.w_gate"] = (Fd, D)
        if cfg["ffn_bias"]:
            shapes.update({p + ".ffn.b_up": (Fd,), p + ".ffn.b_down": (D,)})
    if cfg["final_norm"]:
        norms.append(stack + ".final_norm")
    for n in norms:
        shapes[n + ".weight"] = (D,)
        if ln_bias:
            shapes[n + ".bias"] = (D,)
    if not cfg["tie_embeddings"] and cfg["arch"] != "encoder":
        shapes["lm_head.weight"] = (cfg["vocab_size"], D)
    W = {}
    for name in sorted(shapes):
        t = torch.randn(shapes[name], generator=gen, dtype=torch.float32)
        if name.endswith("norm.weight"):
            t = 1.0 + 0.1 * t
        elif len(shapes[name]) == 1:
            t = 0.1 * t
        else:
            t = std * t
        W[name] = t
    return W


def make_decoder_fixture(file, cfg, seed, T, mask, temperature=1.0, window=0, key_padding=None):
    gen = torch.Generator().manual_seed(seed)
    W32 = random_weights(cfg, gen)
    ids = torch.randint(0, cfg["vocab_size"], (T,), generator=gen)
    t = torch.arange(T)
    if mask == "causal":
        allowed = t[None, :] <= t[:, None]
    elif mask == "sliding_window":
        allowed = (t[None, :] <= t[:, None]) & (t[None, :] > t[:, None] - window)
    else:
        allowed = torch.ones(T, T, dtype=torch.bool)
    tensors = {"in.ids": ids}
    if key_padding is not None:
        kp = torch.tensor(key_padding, dtype=torch.bool)
        allowed = allowed & ~kp[None, :]
        tensors["in.key_padding"] = kp.float()
    W = {k: v.double() for k, v in W32.items()}
    with torch.no_grad():
        logits, hidden, rec = reference_forward(cfg, W, ids.tolist(), allowed, temperature)
    tensors["out.logits"] = logits
    tensors["out.hidden"] = hidden
    for k, v in rec.items():
        tensors["out." + k] = v
    save(file, cfg, W32, tensors, {"mask": mask, "window": window, "temperature": temperature})


# --- torch.nn.Transformer (encoder-decoder, post-norm, ReLU) ---------------------------------------------------------
def make_nn_transformer_fixture():
    torch.manual_seed(1234)
    d, H, Fd, V = 16, 4, 32, 20
    S, T = 6, 5
    cfg = base_config(name="nn_transformer", arch="encoder_decoder", vocab_size=V, d_model=d, n_heads=H,
                      n_kv_heads=H, d_ff=Fd, n_layers=2, n_enc_layers=2, max_seq_len=32, norm_placement="post",
                      activation="relu", position="sinusoidal", scale_embeddings=True)
    model = torch.nn.Transformer(d_model=d, nhead=H, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=Fd,
                                 dropout=0.0, activation="relu", batch_first=True, norm_first=False).double().eval()
    gen = torch.Generator().manual_seed(99)
    with torch.no_grad():
        for name, p in model.named_parameters():
            r = torch.randn(p.shape, generator=gen, dtype=torch.float32)
            p.copy_((1.0 + 0.1 * r) if ("norm" in name and name.endswith("weight")) else (0.3 * r))
    tok_emb = (0.5 * torch.randn(V, d, generator=gen, dtype=torch.float32))
    W = {"tok_emb.weight": tok_emb}

    def put_mha(prefix, mha):
        wq, wk, wv = mha.in_proj_weight.float().chunk(3, dim=0)
        bq, bk, bv = mha.in_proj_bias.float().chunk(3, dim=0)
        W.update({prefix + ".wq": wq, prefix + ".wk": wk, prefix + ".wv": wv, prefix + ".bq": bq,
                  prefix + ".bk": bk, prefix + ".bv": bv, prefix + ".wo": mha.out_proj.weight.float(),
                  prefix + ".bo": mha.out_proj.bias.float()})

    def put_norm(prefix, ln):
        W[prefix + ".weight"] = ln.weight.float()
        W[prefix + ".bias"] = ln.bias.float()

    def put_ffn(prefix, layer):
        W.update({prefix + ".w_up": layer.linear1.weight.float(), prefix + ".b_up": layer.linear1.bias.float(),
                  prefix + ".w_down": layer.linear2.weight.float(), prefix + ".b_down": layer.linear2.bias.float()})

    for i, layer in enumerate(model.encoder.layers):
        put_mha(f"enc.{i}.attn", layer.self_attn)
        put_norm(f"enc.{i}.attn_norm", layer.norm1)
        put_norm(f"enc.{i}.ffn_norm", layer.norm2)
        put_ffn(f"enc.{i}.ffn", layer)
    for i, layer in enumerate(model.decoder.layers):
        put_mha(f"dec.{i}.attn", layer.self_attn)
        put_mha(f"dec.{i}.cross_attn", layer.multihead_attn)
        put_norm(f"dec.{i}.attn_norm", layer.norm1)
        put_norm(f"dec.{i}.cross_norm", layer.norm2)
        put_norm(f"dec.{i}.ffn_norm", layer.norm3)
        put_ffn(f"dec.{i}.ffn", layer)
    put_norm("enc.final_norm", model.encoder.norm)
    put_norm("dec.final_norm", model.decoder.norm)
    W = {k: v.detach().clone().contiguous() for k, v in W.items()}

    src_ids = torch.randint(0, V, (S,), generator=gen)
    tgt_ids = torch.randint(0, V, (T,), generator=gen)
    emb = tok_emb.double()
    src_x = emb[src_ids] * math.sqrt(d) + sinusoidal(S, d, 10000.0)
    tgt_x = emb[tgt_ids] * math.sqrt(d) + sinusoidal(T, d, 10000.0)
    tgt_mask = model.generate_square_subsequent_mask(T).double()

    # Inputs of every layer via forward pre-hooks, then each layer's attention weights recomputed from them.
    inputs = {}
    hooks = []
    for i, layer in enumerate(model.encoder.layers):
        hooks.append(layer.register_forward_pre_hook(lambda mod, args, i=i: inputs.__setitem__(f"enc.{i}", args[0])))
    for i, layer in enumerate(model.decoder.layers):
        hooks.append(layer.register_forward_pre_hook(lambda mod, args, i=i: inputs.__setitem__(f"dec.{i}", args[0])))
    out = {}
    with torch.no_grad():
        memory = model.encoder(src_x[None])
        dec_out = model.decoder(tgt_x[None], memory, tgt_mask=tgt_mask)
        full = model(src_x[None], tgt_x[None], tgt_mask=tgt_mask)
        assert torch.allclose(full, dec_out)
        for h in hooks:
            h.remove()
        for i, layer in enumerate(model.encoder.layers):
            x = inputs[f"enc.{i}"]
            _, w = layer.self_attn(x, x, x, need_weights=True, average_attn_weights=False)
            out[f"out.enc.{i}.attn.probs"] = w[0]
        for i, layer in enumerate(model.decoder.layers):
            x = inputs[f"dec.{i}"]
            sa, w = layer.self_attn(x, x, x, attn_mask=tgt_mask, need_weights=True, average_attn_weights=False)
            out[f"out.dec.{i}.attn.probs"] = w[0]
            x1 = layer.norm1(x + sa)
            _, wc = layer.multihead_attn(x1, memory, memory, need_weights=True, average_attn_weights=False)
            out[f"out.dec.{i}.cross_attn.probs"] = wc[0]
        logits = dec_out[0] @ emb.T
    out.update({"in.src_ids": src_ids, "in.tgt_ids": tgt_ids, "in.src_x": src_x, "in.tgt_x": tgt_x,
                "out.enc_out": memory[0], "out.dec_out": dec_out[0], "out.logits": logits})
    save("model_nn_transformer.safetensors", cfg, W, out, {"mask": "causal", "window": 0, "temperature": 1.0})


def main():
    make_nn_transformer_fixture()
    # GPT-2 shape: pre-LayerNorm, learned positions, GELU-tanh, MHA, biases, tied embeddings.
    make_decoder_fixture("model_gpt2.safetensors",
                         base_config(name="gpt2_like", activation="gelu_tanh", d_ff=128), seed=1, T=7, mask="causal")
    # Llama shape: pre-RMSNorm, RoPE half-split, SwiGLU, GQA 8 query / 2 KV heads, no biases, untied head.
    make_decoder_fixture("model_llama.safetensors",
                         base_config(name="llama_like", vocab_size=40, n_heads=8, n_kv_heads=2, d_ff=48,
                                     norm="rmsnorm", norm_eps=1e-6, norm_bias=False, activation="swiglu",
                                     ffn_bias=False, attn_qkv_bias=False, attn_out_bias=False, position="rope",
                                     tie_embeddings=False), seed=2, T=6, mask="causal")
    # Interleaved RoPE with qk-norm, MQA, GeGLU, bias-free LayerNorm, sliding window 3, temperature 0.7.
    make_decoder_fixture("model_rope_interleaved.safetensors",
                         base_config(name="rope_interleaved", vocab_size=30, n_heads=4, n_kv_heads=1, d_ff=48,
                                     norm_bias=False, activation="geglu", position="rope", rope_theta=100.0,
                                     rope_layout="interleaved", qk_norm=True), seed=3, T=7,
                         mask="sliding_window", window=3, temperature=0.7)
    # Encoder-only, post-RMSNorm, sinusoidal positions, scaled embeddings, unscaled scores, key padding.
    make_decoder_fixture("model_encoder_sinusoidal.safetensors",
                         base_config(name="encoder_sinusoidal", arch="encoder", vocab_size=24, d_model=16, n_heads=2,
                                     n_kv_heads=2, d_ff=32, norm="rmsnorm", norm_placement="post", final_norm=False,
                                     activation="gelu", position="sinusoidal", scale_embeddings=True,
                                     scale_attn=False), seed=4, T=6, mask="none",
                         key_padding=[0, 0, 0, 0, 1, 1])


if __name__ == "__main__":
    main()
