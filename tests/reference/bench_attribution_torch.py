# PyTorch counterpart of BM_InputAttributionGpt2Small (tests/bench/interp_bench.cpp): integrated gradients of one
# target (log p of a token at the last position) on the GPT-2-small shape of bench_forward_torch.py at T = 64,
# 50 midpoint steps run 10 at a time plus the α = 1 and α = 0 points, gradients with respect to the token embeddings
# only (no parameter gradients), fp32, on 2 threads (OpenBLAS's count set too). Also gradient x input (the two
# points) and occlusion (64 forwards, last-position logits).
# Run: /usr/bin/python3 tests/reference/bench_attribution_torch.py
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_forward_torch as bf  # noqa: E402  (Gpt2, set_threads, openblas_libraries)

T, STEPS, BATCH = 64, 50, 10


def logp(model, x_tok, ids, token):
    """x_tok: (B, T, D) token embeddings -> (B,) log p(token) at the last position (positions added)."""
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    outs = []
    for b in range(x_tok.shape[0]):  # the reference Block is unbatched; the products dominate either way
        x = x_tok[b] + model.pos(torch.arange(T))
        for blk in model.blocks:
            x = blk(x, mask)
        h = model.ln_f(x[-1:])
        outs.append(torch.log_softmax(h @ model.tok.weight.T, dim=-1)[0, token])
    return torch.stack(outs)


def main():
    torch.manual_seed(0)
    model = bf.Gpt2().eval()
    for p in model.parameters():
        p.requires_grad_(False)
    blas = bf.openblas_libraries()
    bf.set_threads(2, blas)
    ids = torch.arange(T) * 7919 % bf.V
    x = model.tok(ids)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, load average {os.getloadavg()[0]:.2f}")

    def run(alphas):
        total = torch.zeros(T, bf.D)
        for i in range(0, len(alphas), BATCH):
            a = torch.tensor(alphas[i:i + BATCH])[:, None, None]
            xb = (x[None] * a).requires_grad_(True)
            f = logp(model, xb, ids, 1)
            (g,) = torch.autograd.grad(f.sum(), xb)
            total += g.sum(0)
        return total

    t0 = time.perf_counter()
    run([1.0, 0.0])
    print(f"grad x input: {time.perf_counter() - t0:.2f} s")
    t0 = time.perf_counter()
    run([1.0, 0.0] + [(k - 0.5) / STEPS for k in range(1, STEPS + 1)])
    print(f"integrated gradients ({STEPS} steps, batch {BATCH}): {time.perf_counter() - t0:.2f} s")
    t0 = time.perf_counter()
    with torch.no_grad():
        for i in range(T):
            xo = x.clone()
            xo[i] = 0
            logp(model, xo[None], ids, 1)
    print(f"occlusion ({T} forwards): {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
