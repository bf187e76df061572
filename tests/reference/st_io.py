# Minimal safetensors writer/reader in pure Python + torch for the golden-fixture scripts in tests/reference/
# (Debian's torch 1.13 ships no `safetensors` package). Format: 8-byte little-endian header length N, N bytes of
# JSON header {name: {dtype, shape, data_offsets: [begin, end)}, "__metadata__": {str: str}}, then raw LE bytes.
#
# Usage from a sibling script:
#     import sys, os; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
#     import st_io
#     st_io.save("tests/golden/foo.safetensors", {"x": torch.randn(2, 3)}, metadata={"seed": "0"})
#     tensors = st_io.load("tests/golden/foo.safetensors")
#
# save() writes every tensor as F32 (the C++ loader's native dtype): floating tensors are cast to float32, integer
# and bool tensors are cast too but must be exactly representable (|v| <= 2^24), else ValueError.

import json
import os
import struct

import numpy as np
import torch

_DTYPE_TO_NUMPY = {
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "F64": np.dtype("<f8"),
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}


def _as_f32(name, t):
    if not isinstance(t, torch.Tensor):
        t = torch.as_tensor(t)
    t = t.detach().cpu()
    if not t.is_floating_point():
        if t.numel() and t.abs().max().item() > 2 ** 24:
            raise ValueError(f"st_io.save: integer tensor '{name}' has values beyond 2^24, not exact in F32")
        t = t.to(torch.float64)
    return t.to(torch.float32).contiguous()


def save(path, tensors, metadata=None):
    """Writes dict name -> tensor as an F32 safetensors file (names sorted, offsets contiguous, 8-byte aligned
    header as the reference implementation pads with spaces). metadata: dict str -> str, stored as __metadata__."""
    header = {}
    blobs = []
    offset = 0
    for name in sorted(tensors):
        t = _as_f32(name, tensors[name])
        raw = t.numpy().astype("<f4", copy=False).tobytes(order="C")
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * ((8 - len(hjson) % 8) % 8)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def load(path, with_metadata=False):
    """Reads a safetensors file into dict name -> torch.Tensor (dtype kept; BF16 widened to float32).
    with_metadata=True returns (tensors, metadata_dict)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f"{path}: file shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", data[:8])
    if 8 + n > len(data):
        raise ValueError(f"{path}: header length {n} exceeds file size {len(data)}")
    header = json.loads(data[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {}) or {}
    buf = data[8 + n:]
    out = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        if not (0 <= b <= e <= len(buf)):
            raise ValueError(f"{path}: tensor '{name}' offsets [{b}, {e}) outside buffer of {len(buf)} bytes")
        shape = list(info["shape"])
        dt = info["dtype"]
        raw = buf[b:e]
        if dt == "BF16":
            u16 = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            arr = u16.view(np.float32)
        elif dt in _DTYPE_TO_NUMPY:
            arr = np.frombuffer(raw, dtype=_DTYPE_TO_NUMPY[dt])
        else:
            raise ValueError(f"{path}: tensor '{name}' has unsupported dtype {dt}")
        count = int(np.prod(shape)) if shape else 1
        if arr.size != count:
            raise ValueError(f"{path}: tensor '{name}' has {arr.size} values, shape {shape} needs {count}")
        out[name] = torch.from_numpy(arr.copy().reshape(shape))
    return (out, meta) if with_metadata else out


if __name__ == "__main__":
    # Self-check: round trip.
    import tempfile

    g = torch.Generator().manual_seed(0)
    src = {"a": torch.randn(2, 3, generator=g), "b": torch.arange(5), "s": torch.tensor(1.5)}
    with tempfile.TemporaryDirectory() as td:
        p = os.path.join(td, "t.safetensors")
        save(p, src, metadata={"k": "v"})
        back, meta = load(p, with_metadata=True)
    assert meta == {"k": "v"}, meta
    for k, v in src.items():
        assert back[k].shape == v.shape and torch.equal(back[k], v.to(torch.float32)), k
    print("st_io round trip OK")
