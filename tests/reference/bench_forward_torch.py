# PyTorch counterpart of tests/bench/forward_bench.cpp: a GPT-2-small-shaped decoder (12 layers, d_model 768,
# 12 heads, d_ff 3072, vocab 50257, pre-LayerNorm, GELU-tanh, learned positions, tied head), 1 thread, fp32.
# T = 16, 64, 256, 1024 (every logits row, as BM_ForwardGpt2SmallApp) on 1 and 2 threads, T = 64 also with logits
# for the last position only (ForwardOptions::all_logits = false on our side).
# Run: /usr/bin/python3 tests/reference/bench_forward_torch.py [THREADS...]   (default 1 2; prints wall and CPU ms
# per forward; CPU time of all threads, comparable with ts_bench's process CPU time on a busy machine)
# Debian's torch does its matrix products in OpenBLAS (libopenblas0-pthread), whose own thread pool
# torch.set_num_threads does not reach: "1 thread" ran OpenBLAS on every core (wall 52 ms, CPU 103 ms at T = 16 on
# the 2-core VM). The script sets OpenBLAS's count too (openblas_set_num_threads) and prints both.
import ctypes
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

V, D, H, L, FF, MAXLEN = 50257, 768, 12, 12, 3072, 1024


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(D), torch.nn.LayerNorm(D)
        self.qkv, self.proj = torch.nn.Linear(D, 3 * D), torch.nn.Linear(D, D)
        self.up, self.down = torch.nn.Linear(D, FF), torch.nn.Linear(FF, D)

    def forward(self, x, mask):
        T = x.shape[0]
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=-1)
        q, k, v = (t.view(T, H, D // H).transpose(0, 1) for t in (q, k, v))
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(D // H)
        probs = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        x = x + self.proj((probs @ v).transpose(0, 1).reshape(T, D))
        return x + self.down(F.gelu(self.up(self.ln2(x)), approximate="tanh"))


class Gpt2(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok, self.pos = torch.nn.Embedding(V, D), torch.nn.Embedding(MAXLEN, D)
        self.blocks = torch.nn.ModuleList(Block() for _ in range(L))
        self.ln_f = torch.nn.LayerNorm(D)

    def forward(self, ids, all_logits=True):
        T = ids.shape[0]
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        x = self.tok(ids) + self.pos(torch.arange(T))
        for b in self.blocks:
            x = b(x, mask)
        h = self.ln_f(x)
        return (h if all_logits else h[-1:]) @ self.tok.weight.T


def openblas_libraries():
    """OpenBLAS libraries mapped into this process (after `import torch`), as ctypes handles."""
    paths = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "openblas" in path and ".so" in path:
                paths.add(path)
    libs = []
    for p in sorted(paths):
        try:
            lib = ctypes.CDLL(p)
            lib.openblas_get_num_threads  # raises AttributeError when absent
            libs.append(lib)
        except (OSError, AttributeError):
            pass
    return libs


def set_threads(n, blas):
    torch.set_num_threads(n)
    for lib in blas:
        lib.openblas_set_num_threads(n)
    return [lib.openblas_get_num_threads() for lib in blas]


def main():
    torch.manual_seed(0)
    model = Gpt2().eval()
    threads = [int(a) for a in sys.argv[1:]] or [1, 2]
    blas = openblas_libraries()
    print(f"torch {torch.__version__}, load average {os.getloadavg()[0]:.2f}, OpenBLAS libraries: {len(blas)}")
    cases = ((16, True), (64, True), (128, True), (256, True), (1024, True), (64, False))
    with torch.no_grad():
        for n in threads:
            blas_threads = set_threads(n, blas)
            for T, all_logits in cases:
                ids = torch.arange(T) * 7919 % V
                model(ids, all_logits)
                times, cpu = [], []
                for _ in range(10 if T < 256 else 5 if T < 1024 else 3):
                    t0, c0 = time.perf_counter(), time.process_time()
                    model(ids, all_logits)
                    times.append((time.perf_counter() - t0) * 1e3)
                    cpu.append((time.process_time() - c0) * 1e3)
                what = "" if all_logits else ", last-position logits only"
                print(f"gpt2_small T={T} threads={torch.get_num_threads()} (OpenBLAS {blas_threads}){what}: "
                      f"{statistics.median(times):.1f} ms per forward, {statistics.median(cpu):.1f} ms CPU "
                      f"(all threads; median of {len(times)})")

if __name__ == "__main__":
    main()
