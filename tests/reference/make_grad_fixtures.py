# Golden fixtures for the trainer (core/train): a decoder-only Transformer written with torch autograd, in float64
# on float32-rounded weights, for one small config per variant family; saves weights (our names), a batch of token
# ids/targets, the loss and every parameter gradient. Encoder-decoder fixtures run torch.nn.Transformer itself
# (float64, dropout 0) with shared embeddings x sqrt(d_model), sinusoidal positions, padding in source and target,
# and a tied output projection. Also an AdamW fixture (torch.optim.AdamW + clip_grad_norm_).
#
# Regenerate (Debian's PyTorch 1.13; CI reads only the committed files):
#     /usr/bin/python3 tests/reference/make_grad_fixtures.py
# Writes tests/golden/grad_<name>.safetensors, tests/golden/grad_encdec_<name>.safetensors and
# tests/golden/adamw_step.safetensors.
#   grad_*: "param.<w>", "grad.<w>", "ids" (B, T), "targets" (B, T, -1 = ignored), "loss" (scalar);
#           metadata: config (our config.json), label_smoothing, z_loss.
#   grad_encdec_*: "param.<w>", "grad.<w>", "src" (B, S), "src_pad" (B, S, 1 = padding), "tgt" (B, T) decoder
#           inputs, "tgt_pad" (B, T), "targets" (B, T, -1 at padding), "loss"; metadata as above.

import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st_io  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, "tests", "golden")

BASE = dict(name="fixture", arch="decoder", vocab_size=50, d_model=32, n_heads=4, n_kv_heads=4, d_ff=64, n_layers=2,
            n_enc_layers=0, max_seq_len=16, norm="layernorm", norm_placement="pre", norm_eps=1e-5, final_norm=True,
            activation="gelu", ffn_bias=True, attn_qkv_bias=True, attn_out_bias=True, norm_bias=True,
            position="learned", sinusoidal_base=10000.0, rope_theta=10000.0, rope_layout="half_split",
            scale_attn=True, qk_norm=False, scale_embeddings=False, tie_embeddings=True)

# name -> (config overrides, label_smoothing, z_loss)
FIXTURES = {
    "gpt2": (dict(activation="gelu_tanh"), 0.0, 0.0),
    "llama": (dict(norm="rmsnorm", position="rope", rope_layout="half_split", activation="swiglu", n_heads=4,
                   n_kv_heads=2, d_ff=48, ffn_bias=False, attn_qkv_bias=False, attn_out_bias=False, norm_bias=False,
                   tie_embeddings=False), 0.0, 0.0),
    "postnorm": (dict(norm_placement="post", activation="relu", position="sinusoidal", final_norm=False,
                      tie_embeddings=False), 0.0, 0.0),
    "geglu_mqa": (dict(activation="geglu", position="rope", rope_layout="interleaved", n_kv_heads=1,
                       attn_out_bias=False, norm_bias=False, qk_norm=True, scale_embeddings=True), 0.0, 0.0),
    "smooth_zloss": (dict(activation="glu", ffn_bias=False), 0.1, 1e-2),
    "misc": (dict(norm="rmsnorm", norm_placement="post", activation="silu", position="none", scale_attn=False,
                  n_heads=2, n_kv_heads=2, tie_embeddings=False), 0.05, 0.0),
    "gelu_gqa": (dict(activation="gelu", n_heads=8, n_kv_heads=2, d_model=32, attn_qkv_bias=False), 0.0, 0.0),
    # Attention-only (d_ff 0: no FFN sub-layer, no ffn_norm), the training lab's induction-head model.
    "attn_only": (dict(d_ff=0, position="learned"), 0.0, 0.0),
    "attn_only_post": (dict(d_ff=0, norm_placement="post", final_norm=False), 0.0, 0.0),
}
B, T = 3, 8


def expected_weights(c):
    d, H, K, Dh, Fd = c["d_model"], c["n_heads"], c["n_kv_heads"], c["d_model"] // c["n_heads"], c["d_ff"]
    gated = c["activation"] in ("glu", "swiglu", "geglu")
    out = [("tok_emb.weight", (c["vocab_size"], d))]
    if c["position"] == "learned":
        out.append(("pos_emb.weight", (c["max_seq_len"], d)))

    def norm(name):
        out.append((name + ".weight", (d,)))
        if c["norm"] == "layernorm" and c["norm_bias"]:
            out.append((name + ".bias", (d,)))

    for i in range(c["n_layers"]):
        p = f"dec.{i}."
        norm(p + "attn_norm")
        out += [(p + "attn.wq", (H * Dh, d)), (p + "attn.wk", (K * Dh, d)), (p + "attn.wv", (K * Dh, d)),
                (p + "attn.wo", (d, H * Dh))]
        if c["attn_qkv_bias"]:
            out += [(p + "attn.bq", (H * Dh,)), (p + "attn.bk", (K * Dh,)), (p + "attn.bv", (K * Dh,))]
        if c["attn_out_bias"]:
            out.append((p + "attn.bo", (d,)))
        if c["qk_norm"]:
            out += [(p + "attn.q_norm.weight", (Dh,)), (p + "attn.k_norm.weight", (Dh,))]
        if Fd == 0:
            continue  # attention-only
        norm(p + "ffn_norm")
        out.append((p + "ffn.w_up", (Fd, d)))
        if gated:
            out.append((p + "ffn.w_gate", (Fd, d)))
        out.append((p + "ffn.w_down", (d, Fd)))
        if c["ffn_bias"]:
            out += [(p + "ffn.b_up", (Fd,)), (p + "ffn.b_down", (d,))]
    if c["final_norm"]:
        norm("dec.final_norm")
    if not c["tie_embeddings"]:
        out.append(("lm_head.weight", (c["vocab_size"], d)))
    return out


def random_weights(c, gen):
    """Weights large enough that attention is far from uniform; rounded to float32 then held as float64."""
    w = {}
    for name, shape in expected_weights(c):
        if name.endswith("norm.weight"):
            t = 1.0 + 0.2 * torch.randn(shape, generator=gen, dtype=torch.float64)
        elif len(shape) == 1:
            t = 0.1 * torch.randn(shape, generator=gen, dtype=torch.float64)
        elif "emb" in name or name == "lm_head.weight":
            t = 0.5 * torch.randn(shape, generator=gen, dtype=torch.float64)
        else:
            t = torch.randn(shape, generator=gen, dtype=torch.float64) / math.sqrt(shape[1]) * 1.5
        w[name] = t.to(torch.float32).to(torch.float64).requires_grad_(True)
    return w


def norm(c, x, w, prefix):
    g = w[prefix + ".weight"]
    if c["norm"] == "layernorm":
        b = w.get(prefix + ".bias")
        return F.layer_norm(x, (x.shape[-1],), g, b, c["norm_eps"])
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + c["norm_eps"]) * g


def rms_head(x, g, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * g


def sinusoidal(n, d, base):
    pe = torch.zeros(n, d, dtype=torch.float64)
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    i2 = torch.arange(0, d, 2, dtype=torch.float64)
    ang = pos / base ** (i2 / d)
    pe[:, 0::2] = torch.sin(ang)
    pe[:, 1::2] = torch.cos(ang)
    return pe


def rope(x, theta, layout):
    # x: (B, heads, T, D). Angles p * theta^(-2i/D) (RoFormer eq. 34).
    Tn, D = x.shape[-2], x.shape[-1]
    inv = theta ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    ang = torch.arange(Tn, dtype=torch.float64)[:, None] * inv[None, :]  # (T, D/2)
    cos, sin = torch.cos(ang), torch.sin(ang)
    if layout == "half_split":
        x0, x1 = x[..., : D // 2], x[..., D // 2:]
        return torch.cat([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1).flatten(-2)


def attention(c, x, w, p):
    Bn, Tn, d = x.shape
    H, K = c["n_heads"], c["n_kv_heads"]
    D = d // H
    q = x @ w[p + "wq"].T
    k = x @ w[p + "wk"].T
    v = x @ w[p + "wv"].T
    if c["attn_qkv_bias"]:
        q, k, v = q + w[p + "bq"], k + w[p + "bk"], v + w[p + "bv"]
    q = q.view(Bn, Tn, H, D).transpose(1, 2)
    k = k.view(Bn, Tn, K, D).transpose(1, 2)
    v = v.view(Bn, Tn, K, D).transpose(1, 2)
    if c["qk_norm"]:
        q = rms_head(q, w[p + "q_norm.weight"], c["norm_eps"])
        k = rms_head(k, w[p + "k_norm.weight"], c["norm_eps"])
    if c["position"] == "rope":
        q = rope(q, c["rope_theta"], c["rope_layout"])
        k = rope(k, c["rope_theta"], c["rope_layout"])
    k = k.repeat_interleave(H // K, dim=1)
    v = v.repeat_interleave(H // K, dim=1)
    s = q @ k.transpose(-1, -2)
    if c["scale_attn"]:
        s = s / math.sqrt(D)
    mask = torch.ones(Tn, Tn, dtype=torch.bool).triu(1)
    s = s.masked_fill(mask, float("-inf"))
    a = torch.softmax(s, dim=-1) @ v
    out = a.transpose(1, 2).reshape(Bn, Tn, H * D) @ w[p + "wo"].T
    if c["attn_out_bias"]:
        out = out + w[p + "bo"]
    return out


def act_fn(name, x):
    return {"relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"), "silu": F.silu,
            "glu": torch.sigmoid, "swiglu": F.silu, "geglu": F.gelu}[name](x)


def ffn(c, x, w, p):
    up = x @ w[p + "w_up"].T
    if c["ffn_bias"]:
        up = up + w[p + "b_up"]
    if c["activation"] in ("glu", "swiglu", "geglu"):
        h = act_fn(c["activation"], x @ w[p + "w_gate"].T) * up
    else:
        h = act_fn(c["activation"], up)
    out = h @ w[p + "w_down"].T
    if c["ffn_bias"]:
        out = out + w[p + "b_down"]
    return out


def model_loss(c, w, ids, targets, label_smoothing, z_loss):
    Tn = ids.shape[1]
    x = w["tok_emb.weight"][ids]
    if c["scale_embeddings"]:
        x = x * math.sqrt(c["d_model"])
    if c["position"] == "learned":
        x = x + w["pos_emb.weight"][:Tn]
    elif c["position"] == "sinusoidal":
        x = x + sinusoidal(Tn, c["d_model"], c["sinusoidal_base"])
    for i in range(c["n_layers"]):
        p = f"dec.{i}."
        if c["norm_placement"] == "pre":
            x = x + attention(c, norm(c, x, w, p + "attn_norm"), w, p + "attn.")
            if c["d_ff"]:
                x = x + ffn(c, norm(c, x, w, p + "ffn_norm"), w, p + "ffn.")
        else:
            x = norm(c, x + attention(c, x, w, p + "attn."), w, p + "attn_norm")
            if c["d_ff"]:
                x = norm(c, x + ffn(c, x, w, p + "ffn."), w, p + "ffn_norm")
    if c["final_norm"]:
        x = norm(c, x, w, "dec.final_norm")
    head = w["tok_emb.weight"] if c["tie_embeddings"] else w["lm_head.weight"]
    logits = (x @ head.T).view(-1, c["vocab_size"])
    t = targets.reshape(-1)
    loss = F.cross_entropy(logits, t, label_smoothing=label_smoothing, ignore_index=-1)
    if z_loss:
        valid = t >= 0
        loss = loss + z_loss * torch.logsumexp(logits[valid], dim=-1).pow(2).mean()
    return loss


def make_grad_fixture(name, overrides, label_smoothing, z_loss, seed):
    c = dict(BASE)
    c.update(overrides)
    c["name"] = "fixture_" + name
    gen = torch.Generator().manual_seed(seed)
    w = random_weights(c, gen)
    ids = torch.randint(0, c["vocab_size"], (B, T), generator=gen)
    targets = torch.randint(0, c["vocab_size"], (B, T), generator=gen)
    if label_smoothing or z_loss:
        targets[0, 2] = -1  # an ignored position
        targets[2, 5] = -1
    loss = model_loss(c, w, ids, targets, label_smoothing, z_loss)
    loss.backward()
    out = {"ids": ids, "targets": targets, "loss": loss.detach()}
    for k, t in w.items():
        out["param." + k] = t.detach()
        out["grad." + k] = t.grad.detach()
    meta = {"config": json.dumps(c), "label_smoothing": repr(label_smoothing), "z_loss": repr(z_loss),
            "script": "tests/reference/make_grad_fixtures.py", "torch": torch.__version__}
    path = os.path.join(GOLDEN, f"grad_{name}.safetensors")
    st_io.save(path, out, metadata=meta)
    print(f"{path}: loss {loss.item():.6f}, {len(w)} tensors")


# --- encoder-decoder: torch.nn.Transformer -------------------------------------------------------------------------

ENCDEC_BASE = dict(BASE, arch="encoder_decoder", d_model=24, d_ff=48, n_layers=2, n_enc_layers=2, norm_placement="post",
                   activation="relu", position="sinusoidal", scale_embeddings=True, tie_embeddings=True)

# name -> (config overrides, label_smoothing, source lengths, target lengths). Padding: positions past a length.
ENCDEC_FIXTURES = {
    "post": (dict(norm_placement="post"), 0.1, [7, 4, 5], [6, 3, 5]),
    "pre": (dict(norm_placement="pre"), 0.1, [5, 7, 2], [4, 6, 6]),
    "asym": (dict(norm_placement="post", n_enc_layers=3, n_layers=1, n_heads=2, n_kv_heads=2, d_ff=40), 0.1,
             [3, 5, 5, 1], [8, 2, 7, 5]),
}
PAD = 0


def transformer_param_map(c):
    """Our weight name -> (torch.nn.Transformer parameter name, row slice of it or None)."""
    d = c["d_model"]
    m = {}

    def mha(ours, theirs):
        for j, n in enumerate("qkv"):
            m[f"{ours}.w{n}"] = (f"{theirs}.in_proj_weight", slice(j * d, (j + 1) * d))
            m[f"{ours}.b{n}"] = (f"{theirs}.in_proj_bias", slice(j * d, (j + 1) * d))
        m[f"{ours}.wo"] = (f"{theirs}.out_proj.weight", None)
        m[f"{ours}.bo"] = (f"{theirs}.out_proj.bias", None)

    def layer_norm(ours, theirs):
        m[ours + ".weight"] = (theirs + ".weight", None)
        m[ours + ".bias"] = (theirs + ".bias", None)

    def ffn(ours, theirs):
        m[ours + ".w_up"], m[ours + ".b_up"] = (theirs + ".linear1.weight", None), (theirs + ".linear1.bias", None)
        m[ours + ".w_down"], m[ours + ".b_down"] = (theirs + ".linear2.weight", None), (theirs + ".linear2.bias", None)

    for i in range(c["n_enc_layers"]):
        t = f"encoder.layers.{i}"
        mha(f"enc.{i}.attn", t + ".self_attn")
        layer_norm(f"enc.{i}.attn_norm", t + ".norm1")
        layer_norm(f"enc.{i}.ffn_norm", t + ".norm2")
        ffn(f"enc.{i}.ffn", t)
    layer_norm("enc.final_norm", "encoder.norm")
    for i in range(c["n_layers"]):
        t = f"decoder.layers.{i}"
        mha(f"dec.{i}.attn", t + ".self_attn")
        mha(f"dec.{i}.cross_attn", t + ".multihead_attn")
        layer_norm(f"dec.{i}.attn_norm", t + ".norm1")
        layer_norm(f"dec.{i}.cross_norm", t + ".norm2")
        layer_norm(f"dec.{i}.ffn_norm", t + ".norm3")
        ffn(f"dec.{i}.ffn", t)
    layer_norm("dec.final_norm", "decoder.norm")
    return m


def random_tensor(name, shape, gen):
    """Same spread as random_weights: attention far from uniform; float32-rounded, held as float64."""
    if name.endswith("norm.weight"):
        t = 1.0 + 0.2 * torch.randn(shape, generator=gen, dtype=torch.float64)
    elif len(shape) == 1:
        t = 0.1 * torch.randn(shape, generator=gen, dtype=torch.float64)
    elif "emb" in name:
        t = 0.5 * torch.randn(shape, generator=gen, dtype=torch.float64)
    else:
        t = torch.randn(shape, generator=gen, dtype=torch.float64) / math.sqrt(shape[1]) * 1.5
    return t.to(torch.float32).to(torch.float64)


def make_encdec_fixture(name, overrides, label_smoothing, src_lens, tgt_lens, seed):
    c = dict(ENCDEC_BASE)
    c.update(overrides)
    c["name"] = "fixture_encdec_" + name
    d, V = c["d_model"], c["vocab_size"]
    gen = torch.Generator().manual_seed(seed)
    model = torch.nn.Transformer(d_model=d, nhead=c["n_heads"], num_encoder_layers=c["n_enc_layers"],
                                 num_decoder_layers=c["n_layers"], dim_feedforward=c["d_ff"], dropout=0.0,
                                 activation="relu", layer_norm_eps=c["norm_eps"], batch_first=True,
                                 norm_first=c["norm_placement"] == "pre", dtype=torch.float64)
    theirs = dict(model.named_parameters())
    pmap = transformer_param_map(c)
    assert sorted({t for t, _ in pmap.values()}) == sorted(theirs), "parameter map does not cover nn.Transformer"
    weights = {"tok_emb.weight": random_tensor("tok_emb.weight", (V, d), gen)}
    with torch.no_grad():
        for ours, (t, sl) in pmap.items():
            p = theirs[t] if sl is None else theirs[t][sl]
            w = random_tensor(ours, tuple(p.shape), gen)
            p.copy_(w)
            weights[ours] = w
    emb = weights["tok_emb.weight"].clone().requires_grad_(True)

    B, S, T = len(src_lens), max(src_lens), max(tgt_lens)
    src = torch.randint(1, V, (B, S), generator=gen)
    tgt = torch.randint(1, V, (B, T), generator=gen)
    targets = torch.randint(0, V, (B, T), generator=gen)
    src_pad = torch.arange(S)[None, :] >= torch.tensor(src_lens)[:, None]
    tgt_pad = torch.arange(T)[None, :] >= torch.tensor(tgt_lens)[:, None]
    src[src_pad] = PAD
    tgt[tgt_pad] = PAD
    targets[tgt_pad] = -1

    scale = math.sqrt(d)
    x_src = emb[src] * scale + sinusoidal(S, d, c["sinusoidal_base"])
    x_tgt = emb[tgt] * scale + sinusoidal(T, d, c["sinusoidal_base"])
    causal = torch.ones(T, T, dtype=torch.bool).triu(1)
    out = model(x_src, x_tgt, tgt_mask=causal, src_key_padding_mask=src_pad, tgt_key_padding_mask=tgt_pad,
                memory_key_padding_mask=src_pad)
    logits = (out @ emb.T).reshape(-1, V)
    loss = F.cross_entropy(logits, targets.reshape(-1), label_smoothing=label_smoothing, ignore_index=-1)
    loss.backward()

    res = {"src": src, "tgt": tgt, "targets": targets, "src_pad": src_pad.to(torch.float64),
           "tgt_pad": tgt_pad.to(torch.float64), "loss": loss.detach()}
    res["param.tok_emb.weight"] = weights["tok_emb.weight"]
    res["grad.tok_emb.weight"] = emb.grad.detach()
    for ours, (t, sl) in pmap.items():
        g = theirs[t].grad if sl is None else theirs[t].grad[sl]
        res["param." + ours] = weights[ours]
        res["grad." + ours] = g.detach().clone()
    meta = {"config": json.dumps(c), "label_smoothing": repr(label_smoothing), "z_loss": repr(0.0),
            "script": "tests/reference/make_grad_fixtures.py", "torch": torch.__version__,
            "reference": "torch.nn.Transformer(batch_first=True, dropout=0.0, dtype=float64)"}
    path = os.path.join(GOLDEN, f"grad_encdec_{name}.safetensors")
    st_io.save(path, res, metadata=meta)
    print(f"{path}: loss {loss.item():.6f}, {len(weights)} tensors")


def make_adamw_fixture(seed=7):
    """Three AdamW steps (decay on matrices only) with global-norm clipping, on a few float32 tensors."""
    gen = torch.Generator().manual_seed(seed)
    shapes = {"dec.0.attn.wq": (6, 5), "dec.0.attn.bq": (6,), "dec.0.attn_norm.weight": (5,),
              "tok_emb.weight": (7, 5)}
    decay = {"dec.0.attn.wq"}
    lrs = [1e-2, 3e-2, 2e-2]
    betas, eps, wd, max_norm = (0.9, 0.95), 1e-8, 0.1, 1.0
    params = {k: torch.randn(s, generator=gen, dtype=torch.float32).to(torch.float64) for k, s in shapes.items()}
    out = {"param0." + k: v.clone() for k, v in params.items()}
    ps = {k: torch.nn.Parameter(v.clone()) for k, v in params.items()}
    opt = torch.optim.AdamW([{"params": [ps[k] for k in shapes if k in decay], "weight_decay": wd},
                             {"params": [ps[k] for k in shapes if k not in decay], "weight_decay": 0.0}],
                            lr=lrs[0], betas=betas, eps=eps)
    for step, lr in enumerate(lrs):
        # Step 1 gradients are large enough that clipping engages; later ones are not clipped.
        scale = 3.0 if step == 0 else 0.2
        for k, p in ps.items():
            g = (scale * torch.randn(shapes[k], generator=gen, dtype=torch.float32)).to(torch.float64)
            out[f"grad{step}.{k}"] = g.clone()
            p.grad = g
        torch.nn.utils.clip_grad_norm_(list(ps.values()), max_norm)
        for group in opt.param_groups:
            group["lr"] = lr
        opt.step()
    for k, p in ps.items():
        out["param3." + k] = p.detach()
        out["exp_avg." + k] = opt.state[p]["exp_avg"]
        out["exp_avg_sq." + k] = opt.state[p]["exp_avg_sq"]
    meta = {"lrs": json.dumps(lrs), "beta1": repr(betas[0]), "beta2": repr(betas[1]), "eps": repr(eps),
            "weight_decay": repr(wd), "max_norm": repr(max_norm), "decay": json.dumps(sorted(decay))}
    path = os.path.join(GOLDEN, "adamw_step.safetensors")
    st_io.save(path, out, metadata=meta)
    print(f"{path}: {len(out)} tensors")


if __name__ == "__main__":
    torch.manual_seed(0)
    for i, (name, (ov, ls, zl)) in enumerate(FIXTURES.items()):
        make_grad_fixture(name, ov, ls, zl, seed=100 + i)
    for i, (name, (ov, ls, sl, tl)) in enumerate(ENCDEC_FIXTURES.items()):
        make_encdec_fixture(name, ov, ls, sl, tl, seed=200 + i)
    make_adamw_fixture()
