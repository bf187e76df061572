# Golden fixtures for the interpretability analyses (core/interp, tests/core/interp_golden_test.cpp), computed in
# float64 on the GPT-2-shaped and Llama-shaped golden models (tests/golden/model_{gpt2,llama}.safetensors, whose
# weights are reused, not copied): head ablation (zero and mean: logits with a set of heads ablated, and the
# per-head sweep of a token's log-probability), activation patching (residual stream over layer x position,
# head outputs over layer x head, normalised logit difference), direct logit attribution (per component and its
# sum), attention rollout and attention flow (max-flow by a plain Edmonds-Karp, no networkx).
# Regenerate (needs Debian's torch): /usr/bin/python3 tests/reference/make_interp_fixtures.py
# (reads the model fixtures, so run it after make_model_fixtures.py when those change; both are deterministic).
#
# Sources: TransformerLens hook_z ablation, patching.get_act_patch_resid_pre / get_act_patch_attn_head_out_all_pos,
# ActivationCache.decompose_resid + apply_ln_to_stack; Wang et al. 2022 (IOI) for the normalised metric;
# Abnar & Zuidema 2020 for rollout/flow (their code: rownorm(A + I), flow from output node to input node).
import collections
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_model_fixtures as mm  # noqa: E402  (rope, rms, norm, ACT: the same reference ops)
import st_io  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")


def load_model(file):
    tensors, meta = st_io.load(os.path.join(GOLDEN, file), with_metadata=True)
    cfg = json.loads(meta["config"])
    W = {k[len("model."):]: v.double() for k, v in tensors.items() if k.startswith("model.")}
    return cfg, W, tensors["in.ids"].long().tolist()


# --- reference forward with hooks -------------------------------------------------------------------------------
# hooks: point name -> fn(tensor) -> tensor, applied where the C++ forward applies ActivationEdits; cache: dict that
# receives every point (after its hook). head_out is (H, T, D).
def forward(cfg, W, ids, hooks=None, cache=None):
    hooks = hooks or {}
    cache = {} if cache is None else cache

    def point(name, x):
        if name in hooks:
            x = hooks[name](x.clone())
        cache[name] = x
        return x

    T, H, K = len(ids), cfg["n_heads"], cfg["n_kv_heads"]
    D = cfg["d_model"] // H
    x = W["tok_emb.weight"][ids]
    cache["tok_emb.out"] = x
    if cfg["position"] == "learned":
        cache["pos.out"] = W["pos_emb.weight"][:T]
        x = x + cache["pos.out"]
    x = point("embed.out", x)
    t = torch.arange(T)
    allowed = t[None, :] <= t[:, None]
    for i in range(cfg["n_layers"]):
        p = f"dec.{i}"
        h = mm.norm(cfg, W, p + ".attn_norm", x)
        a = p + ".attn"
        q = F.linear(h, W[a + ".wq"], W.get(a + ".bq")).view(T, H, D).transpose(0, 1)
        k = F.linear(h, W[a + ".wk"], W.get(a + ".bk")).view(T, K, D).transpose(0, 1)
        v = F.linear(h, W[a + ".wv"], W.get(a + ".bv")).view(T, K, D).transpose(0, 1)
        if cfg["position"] == "rope":
            q = mm.rope(q, 0, cfg["rope_theta"], cfg["rope_layout"])
            k = mm.rope(k, 0, cfg["rope_theta"], cfg["rope_layout"])
        k = k.repeat_interleave(H // K, dim=0)
        v = v.repeat_interleave(H // K, dim=0)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(D)
        probs = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        cache[a + ".probs"] = probs
        z = point(a + ".head_out", probs @ v)  # (H, T, D): TransformerLens hook_z
        out = point(a + ".out", F.linear(z.transpose(0, 1).reshape(T, H * D), W[a + ".wo"], W.get(a + ".bo")))
        x = point(p + ".resid_attn", x + out)
        f = mm.ffn(cfg, W, p + ".ffn", mm.norm(cfg, W, p + ".ffn_norm", x))
        x = point(p + ".resid_ffn", x + point(p + ".ffn.out", f))
    if cfg["final_norm"]:
        x = mm.norm(cfg, W, "dec.final_norm", x)
    head = W["tok_emb.weight"] if cfg["tie_embeddings"] else W["lm_head.weight"]
    return x @ head.T


def log_softmax_at(logits_row, token):
    return torch.log_softmax(logits_row, dim=-1)[token]


# --- ablation ------------------------------------------------------------------------------------------------------
def ablate_hook(head, kind):
    def fn(z):
        z[head] = 0.0 if kind == "zero" else z[head].mean(dim=0, keepdim=True)
        return z
    return fn


def ablation_hooks(heads, kind):
    hooks = {}
    for layer, head in heads:
        name = f"dec.{layer}.attn.head_out"
        prev = hooks.get(name)
        fn = ablate_hook(head, kind)
        hooks[name] = fn if prev is None else (lambda z, a=prev, b=fn: b(a(z)))
    return hooks


def ablation_sweep(cfg, W, ids, token, kind):
    clean = log_softmax_at(forward(cfg, W, ids)[-1], token)
    out = torch.zeros(cfg["n_layers"], cfg["n_heads"], dtype=torch.float64)
    for layer in range(cfg["n_layers"]):
        for head in range(cfg["n_heads"]):
            logits = forward(cfg, W, ids, ablation_hooks([(layer, head)], kind))
            out[layer, head] = log_softmax_at(logits[-1], token) - clean
    return out, clean


# --- activation patching -------------------------------------------------------------------------------------------
def logit_diff(logits, answer, wrong):
    return logits[-1, answer] - logits[-1, wrong]


def patching(cfg, W, clean_ids, corrupt_ids, answer, wrong):
    cache = {}
    m_clean = logit_diff(forward(cfg, W, clean_ids, cache=cache), answer, wrong)
    m_corrupt = logit_diff(forward(cfg, W, corrupt_ids), answer, wrong)
    L, T, H = cfg["n_layers"], len(clean_ids), cfg["n_heads"]

    def norm_metric(hooks):
        return (logit_diff(forward(cfg, W, corrupt_ids, hooks), answer, wrong) - m_corrupt) / (m_clean - m_corrupt)

    resid = torch.zeros(L, T, dtype=torch.float64)
    for layer in range(L):
        name = "embed.out" if layer == 0 else f"dec.{layer - 1}.resid_ffn"  # TransformerLens resid_pre
        for pos in range(T):
            def hook(x, name=name, pos=pos):
                x[pos] = cache[name][pos]
                return x
            resid[layer, pos] = norm_metric({name: hook})
    heads = torch.zeros(L, H, dtype=torch.float64)
    for layer in range(L):
        name = f"dec.{layer}.attn.head_out"
        for head in range(H):
            def hook(z, name=name, head=head):
                z[head] = cache[name][head]
                return z
            heads[layer, head] = norm_metric({name: hook})
    return resid, heads, m_clean, m_corrupt


# --- direct logit attribution (TransformerLens decompose_resid + apply_ln_to_stack) ----------------------------------
def dla(cfg, W, ids, pos, token, minus=None):
    cache = {}
    logits = forward(cfg, W, ids, cache=cache)
    H = cfg["n_heads"]
    D = cfg["d_model"] // H
    names, comps = ["tok_emb.out"], [cache["tok_emb.out"][pos]]
    if "pos.out" in cache:
        names.append("pos.out")
        comps.append(cache["pos.out"][pos])
    for i in range(cfg["n_layers"]):
        a = f"dec.{i}.attn"
        z = cache[a + ".head_out"][:, pos]  # (H, D)
        for h in range(H):
            names.append(f"{a}.head{h}")
            comps.append(W[a + ".wo"][:, h * D:(h + 1) * D] @ z[h])
        if a + ".bo" in W:
            names.append(a + ".bo")
            comps.append(W[a + ".bo"])
        names.append(f"dec.{i}.ffn.out")
        comps.append(cache[f"dec.{i}.ffn.out"][pos])
    stack = torch.stack(comps)  # (n_components, d_model)
    x = cache[f"dec.{cfg['n_layers'] - 1}.resid_ffn"][pos]
    assert torch.allclose(stack.sum(0), x, atol=1e-10)
    head = W["tok_emb.weight"] if cfg["tie_embeddings"] else W["lm_head.weight"]
    u = head[token] - (head[minus] if minus is not None else 0.0)
    w = W["dec.final_norm.weight"]
    if cfg["norm"] == "layernorm":
        scale = torch.sqrt(x.var(unbiased=False) + cfg["norm_eps"])
        stack = (stack - stack.mean(-1, keepdim=True)) / scale
    else:
        scale = torch.sqrt((x * x).mean() + cfg["norm_eps"])
        stack = stack / scale
    values = (stack * w) @ u
    if "dec.final_norm.bias" in W:
        names.append("dec.final_norm.bias")
        values = torch.cat([values, (W["dec.final_norm.bias"] @ u)[None]])
    logit = logits[pos, token] - (logits[pos, minus] if minus is not None else 0.0)
    assert abs(values.sum().item() - logit.item()) < 1e-9, (values.sum().item(), logit.item())
    return names, values, logit


# --- attention rollout and flow (Abnar & Zuidema 2020) -------------------------------------------------------------
def augmented(cfg, cache):
    mats = []
    for i in range(cfg["n_layers"]):
        a = cache[f"dec.{i}.attn.probs"].mean(0)
        a = 0.5 * a + 0.5 * torch.eye(a.shape[0], dtype=a.dtype)
        mats.append(a / a.sum(-1, keepdim=True))
    return mats


def rollout(mats):
    r = torch.eye(mats[0].shape[0], dtype=torch.float64)
    for a in mats:
        r = a @ r
    return r


def max_flow(cap, source, sink):
    """Edmonds-Karp on a dense capacity matrix (list of lists), float64."""
    n = len(cap)
    flow = [[0.0] * n for _ in range(n)]
    total = 0.0
    while True:
        parent = [-1] * n
        parent[source] = source
        queue = collections.deque([source])
        while queue and parent[sink] < 0:
            u = queue.popleft()
            for v in range(n):
                if parent[v] < 0 and cap[u][v] - flow[u][v] > 1e-12:
                    parent[v] = u
                    queue.append(v)
        if parent[sink] < 0:
            return total
        b, v = float("inf"), sink
        while v != source:
            b = min(b, cap[parent[v]][v] - flow[parent[v]][v])
            v = parent[v]
        v = sink
        while v != source:
            flow[parent[v]][v] += b
            flow[v][parent[v]] -= b
            v = parent[v]
        total += b


def attention_flow(mats):
    L, T = len(mats), mats[0].shape[0]
    n = (L + 1) * T
    cap = [[0.0] * n for _ in range(n)]
    for layer in range(1, L + 1):  # edge (layer, i) -> (layer - 1, j), capacity A_layer[i, j]
        for i in range(T):
            for j in range(T):
                cap[layer * T + i][(layer - 1) * T + j] = mats[layer - 1][i, j].item()
    flow = torch.zeros(T, T, dtype=torch.float64)
    for i in range(T):
        for j in range(T):
            flow[i, j] = max_flow(cap, L * T + i, j)
    return flow, flow / flow.sum(-1, keepdim=True)


# --- fixtures ------------------------------------------------------------------------------------------------------
def make(model_file, out_file, ablated_heads, corrupt_changes):
    cfg, W, ids = load_model(model_file)
    T = len(ids)
    out = {"in.ids": torch.tensor(ids)}
    with torch.no_grad():
        logits = forward(cfg, W, ids)
        target = int(logits[-1].argmax())
        out["in.target"] = torch.tensor(target)
        out["in.ablated_heads"] = torch.tensor(ablated_heads)
        for kind in ("zero", "mean"):
            out[f"out.ablated_logits_{kind}"] = forward(cfg, W, ids, ablation_hooks(ablated_heads, kind))
            delta, clean_lp = ablation_sweep(cfg, W, ids, target, kind)
            out[f"out.sweep_{kind}"] = delta
            out["out.clean_log_prob"] = clean_lp

        corrupt = list(ids)
        for pos, tok in corrupt_changes:
            corrupt[pos] = tok
        answer = target
        wrong = int(forward(cfg, W, corrupt)[-1].argmax())
        assert wrong != answer, "corrupted input must change the top prediction"
        resid, heads, m_clean, m_corrupt = patching(cfg, W, ids, corrupt, answer, wrong)
        out.update({"in.corrupt_ids": torch.tensor(corrupt), "in.answer": torch.tensor(answer),
                    "in.wrong": torch.tensor(wrong), "out.patch_resid_pre": resid, "out.patch_head_out": heads,
                    "out.clean_metric": m_clean, "out.corrupt_metric": m_corrupt})

        names, values, logit = dla(cfg, W, ids, T - 1, target)
        names_d, values_d, logit_d = dla(cfg, W, ids, 2, answer, wrong)
        out.update({"out.dla_values": values, "out.dla_logit": logit, "in.dla_diff_position": torch.tensor(2),
                    "out.dla_diff_values": values_d, "out.dla_diff_logit": logit_d})

        cache = {}
        forward(cfg, W, ids, cache=cache)
        mats = augmented(cfg, cache)
        flow, flow_norm = attention_flow(mats)
        out.update({"out.rollout": rollout(mats), "out.flow": flow, "out.flow_normalized": flow_norm})
    st_io.save(os.path.join(GOLDEN, out_file), out,
               metadata={"model": model_file, "dla_names": json.dumps(names),
                         "generator": "tests/reference/make_interp_fixtures.py"})
    print(f"wrote {out_file}: {len(out)} tensors; target {target}, answer {answer} vs {wrong}, "
          f"patch metric clean {m_clean.item():.4f} corrupt {m_corrupt.item():.4f}")


def main():
    torch.set_default_dtype(torch.float64)
    # GPT-2 shape (T = 7, 2 layers x 4 heads, LayerNorm with bias, learned positions, biases, tied head).
    make("model_gpt2.safetensors", "interp_gpt2.safetensors", [[0, 1], [1, 2]], [(1, 11), (4, 30)])
    # Llama shape (T = 6, 2 layers x 8 heads over 2 KV heads, RMSNorm, RoPE, SwiGLU, no biases, untied head).
    make("model_llama.safetensors", "interp_llama.safetensors", [[0, 5], [1, 0], [1, 7]], [(0, 3), (3, 17)])


if __name__ == "__main__":
    main()
