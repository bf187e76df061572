# Regenerate: /usr/bin/python3 tests/reference/make_op_fixtures.py
# Golden fixtures for core/ops (tests/core/ops_golden_test.cpp): PyTorch 1.13 outputs of activations (+ autograd
# derivatives), norms, BatchNorm running stats, sinusoidal table, RoPE (both layouts), softmax family and losses.
# Fixed seeds, small tensors, written as F32 safetensors via st_io.py; scalar settings go in __metadata__.

import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st_io  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
GOLDEN = os.path.join(ROOT, "tests", "golden")


def out_path(name):
    return os.path.join(GOLDEN, name)


def value_and_grad(fn, x):
    """y = fn(x) and dy/dx element-wise via autograd (sum of an element-wise map)."""
    xg = x.clone().requires_grad_(True)
    y = fn(xg)
    (g,) = torch.autograd.grad(y.sum(), xg)
    return y.detach(), g.detach()


def make_activations():
    g = torch.Generator().manual_seed(1)
    # A grid through the interesting region (0 included: relu's subgradient convention) plus random points.
    x = torch.cat([torch.linspace(-6.0, 6.0, 97), torch.randn(31, generator=g) * 3.0])
    beta, alpha = 1.7, 0.1
    fns = {
        "tanh": torch.tanh,
        "sigmoid": torch.sigmoid,
        "relu": torch.relu,
        "leaky_relu": lambda t: F.leaky_relu(t, negative_slope=alpha),
        "gelu": lambda t: F.gelu(t),
        "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
        "silu": F.silu,
        "swish_beta": lambda t: t * torch.sigmoid(beta * t),
    }
    tensors = {"x": x}
    for name, fn in fns.items():
        y, dy = value_and_grad(fn, x)
        tensors[name + ".y"] = y
        tensors[name + ".dy"] = dy
    st_io.save(out_path("ops_activations.safetensors"), tensors,
               metadata={"leaky_relu_alpha": repr(alpha), "swish_beta": repr(beta), "torch": torch.__version__})


def rms_norm_torch(x, gamma, eps):
    # HF LlamaRMSNorm: x * rsqrt(mean(x^2) + eps) * weight
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * gamma


def make_norms():
    g = torch.Generator().manual_seed(2)
    n, d, eps = 5, 16, 1e-5
    x = torch.randn(n, d, generator=g) * 3.0 + 1.0
    gamma = 1.0 + 0.5 * torch.randn(d, generator=g)
    beta = 0.5 * torch.randn(d, generator=g)

    ln = torch.nn.LayerNorm(d, eps=eps)
    with torch.no_grad():
        ln.weight.copy_(gamma)
        ln.bias.copy_(beta)
        ln_y = ln(x)
        rms_y = rms_norm_torch(x, gamma, eps)

    # BatchNorm1d: one training step (batch statistics, running stats updated) then eval on a different batch.
    nb, momentum = 8, 0.1
    xb = torch.randn(nb, d, generator=g) * 2.0 + 3.0
    xe = torch.randn(4, d, generator=g) * 2.0 + 3.0
    bn = torch.nn.BatchNorm1d(d, eps=eps, momentum=momentum)
    with torch.no_grad():
        bn.weight.copy_(gamma)
        bn.bias.copy_(beta)
        bn.train()
        bn_train_y = bn(xb)
        running_mean = bn.running_mean.clone()
        running_var = bn.running_var.clone()
        bn.eval()
        bn_eval_y = bn(xe)
    st_io.save(out_path("ops_norms.safetensors"), {
        "x": x, "gamma": gamma, "beta": beta,
        "layer_norm.y": ln_y, "rms_norm.y": rms_y,
        "batch_norm.x_train": xb, "batch_norm.y_train": bn_train_y,
        "batch_norm.running_mean": running_mean, "batch_norm.running_var": running_var,
        "batch_norm.x_eval": xe, "batch_norm.y_eval": bn_eval_y,
    }, metadata={"eps": repr(eps), "momentum": repr(momentum), "torch": torch.__version__})


def sinusoidal_torch(n_pos, d_model, base):
    # Vaswani et al. §3.5 in float64: PE[p, 2i] = sin(p / base^(2i/d)), PE[p, 2i+1] = cos(...)
    pos = torch.arange(n_pos, dtype=torch.float64)[:, None]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angle = pos / base ** (two_i / d_model)
    pe = torch.zeros(n_pos, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)[:, : d_model // 2]
    return pe.float()


def rope_inv_freq(d_head, theta):
    return theta ** (-torch.arange(0, d_head, 2, dtype=torch.float64) / d_head)  # theta_i = theta^(-2i/d)


def rope_interleaved_torch(x, start_pos, theta):
    # RoFormer eq. 34: pairs (2i, 2i+1) rotated by pos * theta_i, written as a complex product.
    T, d = x.shape
    pos = torch.arange(start_pos, start_pos + T, dtype=torch.float64)
    ang = pos[:, None] * rope_inv_freq(d, theta)[None, :]
    xc = torch.view_as_complex(x.double().reshape(T, d // 2, 2).contiguous())
    out = torch.view_as_real(xc * torch.polar(torch.ones_like(ang), ang)).reshape(T, d)
    return out.float()


def rope_half_split_torch(x, start_pos, theta):
    # HF Llama: x * cos + rotate_half(x) * sin, rotate_half(x) = cat(-x2, x1), cos/sin = cat(freqs, freqs).
    T, d = x.shape
    pos = torch.arange(start_pos, start_pos + T, dtype=torch.float64)
    freqs = pos[:, None] * rope_inv_freq(d, theta)[None, :]
    emb = torch.cat([freqs, freqs], dim=-1)
    xd = x.double()
    x1, x2 = xd[:, : d // 2], xd[:, d // 2:]
    rotated = torch.cat([-x2, x1], dim=-1)
    return (xd * emb.cos() + rotated * emb.sin()).float()


def make_positions():
    g = torch.Generator().manual_seed(3)
    n_pos, d_model, base = 12, 10, 10000.0
    T, d_head, start_pos = 6, 8, 3
    x = torch.randn(T, d_head, generator=g)
    tensors = {"sinusoidal": sinusoidal_torch(n_pos, d_model, base), "rope.x": x}
    for theta in (10000.0, 500.0):
        tag = str(int(theta))
        tensors[f"rope.interleaved.{tag}"] = rope_interleaved_torch(x, start_pos, theta)
        tensors[f"rope.half_split.{tag}"] = rope_half_split_torch(x, start_pos, theta)
    st_io.save(out_path("ops_positions.safetensors"), tensors, metadata={
        "n_pos": str(n_pos), "d_model": str(d_model), "base": repr(base), "start_pos": str(start_pos),
        "torch": torch.__version__})


def make_softmax():
    g = torch.Generator().manual_seed(4)
    x = torch.randn(5, 9, generator=g) * 4.0
    x[1, 2] = -math.inf                         # masked entries (a causal mask uses -inf)
    x[1, 7] = -math.inf
    x[3] += 1000.0                              # large scores: the naive formula would overflow
    temperature = 0.7
    clean = torch.randn(4, 9, generator=g) * 3.0
    clean[2] += 50.0                            # shifted row: logsumexp must not lose it
    st_io.save(out_path("ops_softmax.safetensors"), {
        "x": x,
        "softmax.t1": torch.softmax(x, dim=-1),
        "softmax.t": torch.softmax(x / temperature, dim=-1),
        "clean": clean,
        "log_softmax": torch.log_softmax(clean, dim=-1),
        "logsumexp": torch.logsumexp(clean, dim=-1),
    }, metadata={"temperature": repr(temperature), "torch": torch.__version__})


def make_losses():
    g = torch.Generator().manual_seed(5)
    n, V = 7, 11
    logits = torch.randn(n, V, generator=g) * 2.0
    targets = torch.tensor([3, -1, 0, 10, 5, -1, 3])
    ls, z_coef = 0.1, 1e-4
    keep = targets != -1
    lse = torch.logsumexp(logits, dim=-1)
    st_io.save(out_path("ops_losses.safetensors"), {
        "logits": logits,
        "targets": targets,
        "ce.smooth": F.cross_entropy(logits, targets, ignore_index=-1, label_smoothing=ls),
        "ce.plain": F.cross_entropy(logits, targets, ignore_index=-1),
        "z_loss": z_coef * (lse[keep] ** 2).mean(),  # PaLM §5, mean over non-ignored rows
    }, metadata={"label_smoothing": repr(ls), "z_coef": repr(z_coef), "torch": torch.__version__})


if __name__ == "__main__":
    torch.manual_seed(0)
    make_activations()
    make_norms()
    make_positions()
    make_softmax()
    make_losses()
    for f in sorted(os.listdir(GOLDEN)):
        if f.startswith("ops_"):
            print(f, os.path.getsize(out_path(f)), "bytes")
