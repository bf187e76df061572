# Golden fixtures for FFN neurons and embedding maps (core/interp/neurons.h, embedding_map.h;
# tests/core/neurons_golden_test.cpp), in float64 on the GPT-2-shaped and Llama-shaped golden models
# (tests/golden/model_{gpt2,llama}.safetensors, weights reused):
#   - a seeded random token stream cut into chunks of CONTEXT ids; each chunk's FFN activations (post_act = act(x W_up^T
#     + b_up), or act(x W_gate^T) * (x W_up^T + b_up) when gated: the input of W_down, TransformerLens hook_post) from
#     the reference forward of make_interp_fixtures.py; per neuron the TOP_K chunks ranked by the neuron's largest
#     activation in the chunk over positions MIN_POSITION..CONTEXT-1 (earlier ones are not ranked), with that position;
#   - PCA of the token embedding matrix and of the stacked residual stream of chunk 0 (embed.out, then each layer's
#     resid_ffn), from torch.linalg.svd of the centered rows, each component's largest-magnitude entry made positive;
#   - the cosine nearest neighbours of one token's embedding.
# Regenerate (needs Debian's torch): /usr/bin/python3 tests/reference/make_neuron_fixtures.py
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_interp_fixtures as mi  # noqa: E402  (load_model, forward)
import make_model_fixtures as mm  # noqa: E402  (norm, ACT)
import st_io  # noqa: E402

CONTEXT, N_CHUNKS, EXTRA, TOP_K, MIN_POSITION = 8, 6, 3, 3, 2
PCA_K = 3
QUERY_TOKEN, N_NEIGHBOURS = 5, 4


def post_acts(cfg, W, ids):
    cache = {}
    with torch.no_grad():
        mi.forward(cfg, W, ids, cache=cache)
    out = []
    for layer in range(cfg["n_layers"]):
        p = f"dec.{layer}"
        x = mm.norm(cfg, W, p + ".ffn_norm", cache[p + ".resid_attn"])
        act = mm.ACT[cfg["activation"]]
        up = F.linear(x, W[p + ".ffn.w_up"], W.get(p + ".ffn.b_up"))
        gated = cfg["activation"] in ("glu", "swiglu", "geglu")
        out.append(act(F.linear(x, W[p + ".ffn.w_gate"])) * up if gated else act(up))
    return out, cache


def pca(x, k):
    mean = x.mean(dim=0)
    xc = x - mean
    _, s, vh = torch.linalg.svd(xc, full_matrices=False)
    comp = vh[:k].clone()
    for i in range(k):
        if comp[i, comp[i].abs().argmax()] < 0:
            comp[i] = -comp[i]
    var = s**2 / (x.shape[0] - 1)
    return comp, var[:k], var[:k] / var.sum(), xc @ comp.T


def make(model_file, out_file):
    cfg, W, _ = mi.load_model(model_file)
    gen = torch.Generator().manual_seed(11)
    stream = torch.randint(0, cfg["vocab_size"], (CONTEXT * N_CHUNKS + EXTRA,), generator=gen).tolist()
    L, Fd = cfg["n_layers"], cfg["d_ff"]
    best = torch.full((N_CHUNKS, L, Fd), float("-inf"))
    best_pos = torch.zeros(N_CHUNKS, L, Fd, dtype=torch.long)
    out = {"in.tokens": torch.tensor(stream, dtype=torch.float64)}
    for c in range(N_CHUNKS):
        ids = stream[c * CONTEXT:(c + 1) * CONTEXT]
        acts, cache = post_acts(cfg, W, ids)
        for layer in range(L):
            a = acts[layer][MIN_POSITION:]
            v, pos = a.max(dim=0)
            best[c, layer] = v
            best_pos[c, layer] = pos + MIN_POSITION
            if c == 0:
                out[f"out.post_act.{layer}"] = acts[layer]
        if c == 0:
            resid = torch.cat([cache["embed.out"]] + [cache[f"dec.{i}.resid_ffn"] for i in range(L)], dim=0)
            comp, var, ratio, proj = pca(resid, 2)
            out.update({"out.resid.stack": resid, "out.resid.components": comp, "out.resid.ratio": ratio,
                        "out.resid.projected": proj})
    chunk = torch.zeros(L, Fd, TOP_K)
    pos = torch.zeros(L, Fd, TOP_K)
    act = torch.zeros(L, Fd, TOP_K)
    for layer in range(L):
        for f in range(Fd):
            order = sorted(range(N_CHUNKS), key=lambda c: (-best[c, layer, f].item(), c))[:TOP_K]
            for i, c in enumerate(order):
                chunk[layer, f, i] = c
                pos[layer, f, i] = best_pos[c, layer, f]
                act[layer, f, i] = best[c, layer, f]
    out.update({"out.chunk": chunk, "out.position": pos, "out.activation": act})
    emb = W["tok_emb.weight"]
    comp, var, ratio, proj = pca(emb, PCA_K)
    out.update({"out.emb.components": comp, "out.emb.variance": var, "out.emb.ratio": ratio, "out.emb.projected": proj,
                "out.emb.mean": emb.mean(dim=0)})
    cos = F.cosine_similarity(emb, emb[QUERY_TOKEN][None, :], dim=1)
    cos[QUERY_TOKEN] = float("-inf")
    v, i = cos.topk(N_NEIGHBOURS)
    out.update({"out.neighbours": i.double(), "out.neighbour_cosines": v})
    st_io.save(os.path.join(mi.GOLDEN, out_file), out,
               metadata={"model": model_file, "generator": "tests/reference/make_neuron_fixtures.py",
                         "context": str(CONTEXT), "top_k": str(TOP_K), "min_position": str(MIN_POSITION), "pca_k": str(PCA_K),
                         "query_token": str(QUERY_TOKEN)})
    print(f"wrote {out_file}: {len(stream)} tokens, {L} layers x {Fd} neurons")


def main():
    torch.set_default_dtype(torch.float64)
    make("model_gpt2.safetensors", "neurons_gpt2.safetensors")
    make("model_llama.safetensors", "neurons_llama.safetensors")


if __name__ == "__main__":
    main()
