# The trainer's step in PyTorch for a throughput comparison with tests/bench/train_bench.cpp (BM_TrainStep): same
# decoder-only model (4 layers, d_model 256, 4 heads, vocab 8192, T 128, batch 8; GPT-2-style gelu_tanh d_ff 1024 or
# Llama-style RMSNorm/RoPE/SwiGLU d_ff 688), forward + backward + clip_grad_norm_ + AdamW, float32, 1 thread.
#
#     /usr/bin/python3 tests/reference/train_torch.py [--steps 20] [--style gpt2|llama|both]

import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Block(nn.Module):
    def __init__(self, d, H, d_ff, llama, cos, sin):
        super().__init__()
        self.H, self.llama = H, llama
        bias = not llama
        Norm = (lambda n: RMSNorm(n)) if llama else (lambda n: nn.LayerNorm(n))
        self.attn_norm, self.ffn_norm = Norm(d), Norm(d)
        self.wqkv = nn.Linear(d, 3 * d, bias=bias)
        self.wo = nn.Linear(d, d, bias=bias)
        self.w_up = nn.Linear(d, d_ff, bias=bias)
        self.w_gate = nn.Linear(d, d_ff, bias=False) if llama else None
        self.w_down = nn.Linear(d_ff, d, bias=bias)
        self.cos, self.sin = cos, sin

    def rope(self, x):
        D = x.shape[-1]
        x0, x1 = x[..., : D // 2], x[..., D // 2:]
        return torch.cat([x0 * self.cos - x1 * self.sin, x0 * self.sin + x1 * self.cos], dim=-1)

    def forward(self, x, mask):
        B, T, d = x.shape
        h = self.attn_norm(x)
        q, k, v = self.wqkv(h).view(B, T, 3, self.H, d // self.H).permute(2, 0, 3, 1, 4)
        if self.llama:
            q, k = self.rope(q), self.rope(k)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(d // self.H)
        a = torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1) @ v
        x = x + self.wo(a.transpose(1, 2).reshape(B, T, d))
        h = self.ffn_norm(x)
        if self.llama:
            f = F.silu(self.w_gate(h)) * self.w_up(h)
        else:
            f = F.gelu(self.w_up(h), approximate="tanh")
        return x + self.w_down(f)


class Model(nn.Module):
    def __init__(self, llama, V=8192, d=256, H=4, L=4, T=128):
        super().__init__()
        d_ff = 688 if llama else 1024
        D = d // H
        inv = 10000.0 ** (-torch.arange(0, D, 2, dtype=torch.float32) / D)
        ang = torch.arange(T, dtype=torch.float32)[:, None] * inv[None, :]
        cos, sin = torch.cos(ang), torch.sin(ang)
        self.tok_emb = nn.Embedding(V, d)
        self.pos_emb = None if llama else nn.Embedding(T, d)
        self.blocks = nn.ModuleList([Block(d, H, d_ff, llama, cos, sin) for _ in range(L)])
        self.final_norm = RMSNorm(d) if llama else nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, V, bias=False) if llama else None
        self.register_buffer("mask", torch.ones(T, T, dtype=torch.bool).triu(1))

    def forward(self, ids, targets):
        T = ids.shape[1]
        x = self.tok_emb(ids)
        if self.pos_emb is not None:
            x = x + self.pos_emb.weight[:T]
        for b in self.blocks:
            x = b(x, self.mask[:T, :T])
        x = self.final_norm(x)
        logits = self.lm_head(x) if self.lm_head is not None else x @ self.tok_emb.weight.T
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def bench(style, steps, B=8, T=128):
    torch.manual_seed(0)
    model = Model(style == "llama")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1)
    ids = torch.randint(0, 8192, (B, T))
    targets = torch.randint(0, 8192, (B, T))

    def step():
        loss = model(ids, targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    for _ in range(3):
        step()
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        step()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    n = sum(p.numel() for p in model.parameters())
    print(f"torch {torch.__version__} {style}: {n} params, {1000 * cpu / steps:.1f} ms CPU/step "
          f"({1000 * wall / steps:.1f} ms wall), {B * T * steps / cpu:.0f} tokens/s (CPU time), "
          f"{B * T * steps / wall:.0f} tokens/s (wall)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--style", default="both", choices=["gpt2", "llama", "both"])
    a = ap.parse_args()
    torch.set_num_threads(1)
    for s in (["gpt2", "llama"] if a.style == "both" else [a.style]):
        bench(s, a.steps)
