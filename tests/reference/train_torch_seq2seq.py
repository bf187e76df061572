# The encoder–decoder trainer's step in PyTorch, for the throughput comparison with tests/bench/train_bench.cpp
# (BM_TrainEncDecStep): torch.nn.Transformer (post-norm, ReLU, batch_first) with one embedding table shared by source,
# target and the output projection (×√d_model), sinusoidal positions, dropout 0.1, label smoothing 0.1, key padding
# masks and a causal target mask, clip_grad_norm_(1.0), Adam(β2 0.98, eps 1e-9); float32, the same six batch shapes
# in the same order, 2 threads by default (as `train --threads 2`).
#
#     /usr/bin/python3 tests/reference/train_torch_seq2seq.py [--d-model 256 --layers 3] [--steps 24] [--threads 2]

import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPES = [(256, 7, 6), (146, 14, 12), (85, 24, 20), (56, 36, 31), (32, 64, 55), (18, 110, 96)]


class Seq2Seq(nn.Module):
    def __init__(self, V, d, H, L, d_ff, max_len=128):
        super().__init__()
        self.d = d
        self.emb = nn.Embedding(V, d)
        self.core = nn.Transformer(d, H, L, L, d_ff, dropout=0.1, activation="relu", batch_first=True)
        pos = torch.arange(max_len, dtype=torch.float32)[:, None]
        div = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
        pe = torch.zeros(max_len, d)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
        self.register_buffer("pe", pe)
        self.drop = nn.Dropout(0.1)

    def embed(self, ids):
        return self.drop(self.emb(ids) * math.sqrt(self.d) + self.pe[: ids.shape[1]])

    def forward(self, src, tgt, src_pad, tgt_pad):
        T = tgt.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool).triu(1)
        h = self.core(self.embed(src), self.embed(tgt), tgt_mask=causal, src_key_padding_mask=src_pad,
                      tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)
        return h @ self.emb.weight.T


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--d-model", type=int, default=256)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--steps", type=int, default=24)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    V, d = 8192, a.d_model
    d_ff = 512 if d == 256 else 4 * d
    model = Seq2Seq(V, d, d // 64, a.layers, d_ff)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    batches = []
    for B, S, T in SHAPES:
        src = torch.arange(B * S).reshape(B, S).mul(7919).add(5).remainder(V)
        tgt = torch.arange(B * T).reshape(B, T).mul(104729).add(3).remainder(V)
        targets = torch.arange(B * T).reshape(B, T).mul(31337).add(1).remainder(V)
        batches.append((src, tgt, targets, torch.zeros(B, S, dtype=torch.bool), torch.zeros(B, T, dtype=torch.bool)))

    def step(i):
        src, tgt, targets, sp, tp = batches[i % len(batches)]
        logits = model(src, tgt, sp, tp)
        loss = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return src.numel() + tgt.numel()

    for i in range(len(SHAPES)):
        step(i)
    t0, positions = time.perf_counter(), 0
    for i in range(a.steps):
        positions += step(i)
    wall = time.perf_counter() - t0
    n = sum(p.numel() for p in model.parameters())
    print(f"torch {torch.__version__} nn.Transformer d_model {d}, {a.layers}+{a.layers} layers, {a.threads} threads: "
          f"{n} params, {1000 * wall / a.steps:.1f} ms/step, {positions / wall:.0f} tokens/s (B*(S+T) positions)")


if __name__ == "__main__":
    main()
