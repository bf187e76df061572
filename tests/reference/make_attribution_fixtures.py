# Golden fixtures for input attribution (core/interp/input_attribution.h, tests/core/interp_golden_test.cpp): on the
# GPT-2-shaped and Llama-shaped golden models (tests/golden/model_{gpt2,llama}.safetensors, weights reused), in
# float64 with torch autograd through the reference forward of make_interp_fixtures.py, for two explained
# predictions (a token's log-probability at the last position; a contrast logit(A) - logit(B) at a middle one):
#   the gradient of f with respect to the token embeddings;
#   gradient x input: sum over d of x * df/dx per token (Captum InputXGradient);
#   integrated gradients from the all-zero embedding baseline, 50 midpoint steps (Sundararajan et al. 2017, eq. 3);
#   occlusion: f(x) - f(x with a token's embedding zeroed), span 1, and span 2 as the mean over covering windows
#   (Captum Occlusion with a zero baseline; positions kept);
#   and the log-probability case again with the mean token embedding as the baseline (path b + a (x - b)).
# Encoder-decoder (attribute_translation): torch.nn.Transformer itself (float64) with the weights of the trainer's
# fixtures tests/golden/grad_encdec_{pre,post}.safetensors (make_grad_fixtures.py: shared embeddings x sqrt(d_model),
# sinusoidal positions, tied output), batch row 0 unpadded: for every target row t, f_t = log p(out[t]) and the
# source (S) and decoder-input (T) scores of gradient x input, integrated gradients (the source and target embeddings
# scaled together) and occlusion (one token's embedding zeroed).
# Regenerate (needs Debian's torch): /usr/bin/python3 tests/reference/make_attribution_fixtures.py
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_grad_fixtures as mg  # noqa: E402  (transformer_param_map, sinusoidal)
import make_interp_fixtures as mi  # noqa: E402  (load_model, forward: the reference forward with hooks)
import st_io  # noqa: E402

STEPS = 50


def f_of(cfg, W, ids, x_tok, pos, token, contrast):
    """f at query `pos` with the token embeddings replaced by x_tok (T, d); positions are kept."""
    tok = W["tok_emb.weight"][ids]
    hooks = {"embed.out": lambda x: x - tok + x_tok}
    logits = mi.forward(cfg, W, ids, hooks=hooks)[pos]
    if contrast >= 0:
        return logits[token] - logits[contrast]
    return torch.log_softmax(logits, dim=-1)[token]


def grad_at(cfg, W, ids, x_tok, pos, token, contrast):
    x = x_tok.clone().requires_grad_(True)
    f = f_of(cfg, W, ids, x, pos, token, contrast)
    (g,) = torch.autograd.grad(f, x)
    return f.detach(), g


def make(model_file, out_file):
    cfg, W, ids = mi.load_model(model_file)
    T = len(ids)
    with torch.no_grad():
        logits = mi.forward(cfg, W, ids)
    last_top = int(torch.argmax(logits[T - 1]))
    mid = T // 2
    mid_top = int(torch.argmax(logits[mid]))
    # name -> (position, token, contrast, baseline): baseline 0 = all-zero token embeddings, 1 = the mean row of the
    # token-embedding table for every token (AttributionBaseline::MeanEmbedding).
    cases = {
        "logprob": (T - 1, last_top, -1, 0),
        "contrast": (mid, ids[mid + 1], mid_top if mid_top != ids[mid + 1] else (mid_top + 1) % cfg["vocab_size"], 0),
        "mean_baseline": (T - 1, last_top, -1, 1),
    }
    out = {"in.ids": torch.tensor(ids)}
    for name, (pos, token, contrast, base_kind) in cases.items():
        p_ids = ids[: pos + 1]
        x = W["tok_emb.weight"][p_ids].clone()
        b = W["tok_emb.weight"].mean(dim=0) if base_kind else torch.zeros(x.shape[1], dtype=torch.float64)
        value, g = grad_at(cfg, W, p_ids, x, pos, token, contrast)
        with torch.no_grad():
            baseline = f_of(cfg, W, p_ids, b.expand_as(x).clone(), pos, token, contrast)
        ig = torch.zeros_like(x)
        for k in range(1, STEPS + 1):
            ig += grad_at(cfg, W, p_ids, b + (x - b) * ((k - 0.5) / STEPS), pos, token, contrast)[1]
        ig = ((x - b) * ig / STEPS).sum(dim=1)
        occ1 = torch.zeros(pos + 1, dtype=torch.float64)
        with torch.no_grad():
            for i in range(pos + 1):
                xo = x.clone()
                xo[i] = b
                occ1[i] = value - f_of(cfg, W, p_ids, xo, pos, token, contrast)
            occ2 = torch.zeros(pos + 1, dtype=torch.float64)
            cnt = torch.zeros(pos + 1, dtype=torch.float64)
            for s in range(pos):
                xo = x.clone()
                xo[s:s + 2] = b
                delta = value - f_of(cfg, W, p_ids, xo, pos, token, contrast)
                occ2[s:s + 2] += delta
                cnt[s:s + 2] += 1
            occ2 /= cnt
        pre = f"out.{name}."
        out[pre + "target"] = torch.tensor([pos, token, contrast])
        out[pre + "value"] = value.reshape(1)
        out[pre + "baseline"] = baseline.reshape(1)
        out[pre + "grad"] = g
        out[pre + "grad_x_input"] = ((x - b) * g).sum(dim=1)
        out[pre + "baseline_kind"] = torch.tensor([base_kind])
        out[pre + "integrated_gradients"] = ig
        out[pre + "occlusion"] = occ1
        out[pre + "occlusion_span2"] = occ2
        gap = float(ig.sum() - (value - baseline))
        print(f"{out_file} {name}: pos {pos} token {token} contrast {contrast} f {float(value):.4f} "
              f"f(0) {float(baseline):.4f} IG gap {gap:.2e}")
    st_io.save(os.path.join(mi.GOLDEN, out_file), out,
               metadata={"model": model_file, "generator": "tests/reference/make_attribution_fixtures.py"})


def make_encdec(name):
    t, meta = st_io.load(os.path.join(mi.GOLDEN, f"grad_encdec_{name}.safetensors"), with_metadata=True)
    c = json.loads(meta["config"])
    d, V = c["d_model"], c["vocab_size"]
    model = torch.nn.Transformer(d_model=d, nhead=c["n_heads"], num_encoder_layers=c["n_enc_layers"],
                                 num_decoder_layers=c["n_layers"], dim_feedforward=c["d_ff"], dropout=0.0,
                                 activation="relu", layer_norm_eps=c["norm_eps"], batch_first=True,
                                 norm_first=c["norm_placement"] == "pre", dtype=torch.float64)
    theirs = dict(model.named_parameters())
    with torch.no_grad():
        for ours, (pt, sl) in mg.transformer_param_map(c).items():
            dst = theirs[pt] if sl is None else theirs[pt][sl]
            dst.copy_(t["param." + ours].double())
    emb = t["param.tok_emb.weight"].double()
    pad = t["src_pad"][0].bool()
    src = [int(v) for v in t["src"][0][~pad].tolist()]
    tgt_pad = t["tgt_pad"][0].bool()
    dec_in = [int(v) for v in t["tgt"][0][~tgt_pad].tolist()]
    S, T = len(src), len(dec_in)
    out_ids = [(dec_in[i + 1] if i + 1 < T else 3) for i in range(T)]
    scale = math.sqrt(d)
    causal = torch.ones(T, T, dtype=torch.bool).triu(1)
    pe_s, pe_t = mg.sinusoidal(S, d, c["sinusoidal_base"]), mg.sinusoidal(T, d, c["sinusoidal_base"])

    def logp(xs, xt):  # (S, d), (T, d) token parts -> (T,) log p(out[t])
        y = model((xs + pe_s)[None], (xt + pe_t)[None], tgt_mask=causal)[0]
        lp = torch.log_softmax(y @ emb.T, dim=-1)
        return lp[torch.arange(T), torch.tensor(out_ids)]

    xs, xt = emb[src] * scale, emb[dec_in] * scale

    def grads(alpha):
        a = (xs * alpha).clone().requires_grad_(True)
        b = (xt * alpha).clone().requires_grad_(True)
        f = logp(a, b)
        gs, gt = [], []
        for r in range(T):
            g1, g2 = torch.autograd.grad(f[r], (a, b), retain_graph=True)
            gs.append(g1)
            gt.append(g2)
        return f.detach(), torch.stack(gs), torch.stack(gt)  # (T,), (T, S, d), (T, T, d)

    value, gs1, gt1 = grads(1.0)
    with torch.no_grad():
        baseline = logp(torch.zeros_like(xs), torch.zeros_like(xt))
    igs, igt = torch.zeros_like(gs1), torch.zeros_like(gt1)
    for k in range(1, STEPS + 1):
        _, a, b = grads((k - 0.5) / STEPS)
        igs += a
        igt += b
    res = {"in.src": torch.tensor(src), "in.dec_in": torch.tensor(dec_in), "in.out": torch.tensor(out_ids),
           "out.value": value, "out.baseline": baseline,
           "out.grad_x_input.source": (gs1 * xs).sum(-1), "out.grad_x_input.target": (gt1 * xt).sum(-1),
           "out.integrated_gradients.source": (igs * xs).sum(-1) / STEPS,
           "out.integrated_gradients.target": (igt * xt).sum(-1) / STEPS}
    occ_s, occ_t = torch.zeros(T, S), torch.zeros(T, T)
    with torch.no_grad():
        for j in range(S):
            z = xs.clone()
            z[j] = 0
            occ_s[:, j] = value - logp(z, xt)
        for i in range(T):
            z = xt.clone()
            z[i] = 0
            occ_t[:, i] = value - logp(xs, z)
    res["out.occlusion.source"] = occ_s
    res["out.occlusion.target"] = occ_t.tril()  # a later decoder input cannot matter (exactly 0 up to rounding)
    st_io.save(os.path.join(mi.GOLDEN, f"attribution_encdec_{name}.safetensors"), res,
               metadata={"model": f"grad_encdec_{name}.safetensors", "config": meta["config"],
                         "generator": "tests/reference/make_attribution_fixtures.py",
                         "reference": "torch.nn.Transformer(batch_first=True, dropout=0.0, dtype=float64)"})
    gap = (res["out.integrated_gradients.source"].sum(1) + res["out.integrated_gradients.target"].sum(1)
           - (value - baseline)).abs().max()
    print(f"attribution_encdec_{name}: S {S} T {T}, max IG gap {float(gap):.2e}")


def main():
    torch.set_default_dtype(torch.float64)
    make("model_gpt2.safetensors", "attribution_gpt2.safetensors")
    make("model_llama.safetensors", "attribution_llama.safetensors")
    make_encdec("pre")
    make_encdec("post")


if __name__ == "__main__":
    main()
