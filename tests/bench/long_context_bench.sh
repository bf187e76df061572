#!/usr/bin/env bash
# Long-context memory benchmark (#30): peak RSS and time of `trace` on a tiny Llama-shaped checkpoint (d_model 64,
# 2 layers, 8 heads, 2 KV heads, max_position_embeddings 8192, random weights) at T = 2048, 4096, 8192, writing
# every tensor but the T x T matrices plus one head's full probability matrix, and the refusal of an over-budget
# request. Usage: long_context_bench.sh BUILD/transformer-studio [WORKDIR]. Needs /usr/bin/time and python3.
set -euo pipefail
bin=$1
work=${2:-$(mktemp -d)}
mkdir -p "$work/llama"
python3 - "$work/llama" <<'PY'
import json, struct, sys, random
d = sys.argv[1]
cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
       "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 256,
       "max_position_embeddings": 8192, "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": False,
       "hidden_act": "silu", "torch_dtype": "float32"}
json.dump(cfg, open(d + "/config.json", "w"))
shapes = {"model.embed_tokens.weight": [256, 64], "model.norm.weight": [64], "lm_head.weight": [256, 64]}
for l in range(2):
    p = f"model.layers.{l}."
    shapes.update({p + "self_attn.q_proj.weight": [64, 64], p + "self_attn.k_proj.weight": [16, 64],
                   p + "self_attn.v_proj.weight": [16, 64], p + "self_attn.o_proj.weight": [64, 64],
                   p + "mlp.gate_proj.weight": [128, 64], p + "mlp.up_proj.weight": [128, 64],
                   p + "mlp.down_proj.weight": [64, 128], p + "input_layernorm.weight": [64],
                   p + "post_attention_layernorm.weight": [64]})
rng = random.Random(7)
header, blobs, off = {}, [], 0
for name, shape in sorted(shapes.items()):
    n = 1
    for s in shape: n *= s
    vals = [1.0] * n if name.endswith("norm.weight") else [rng.uniform(-0.3, 0.3) for _ in range(n)]
    b = struct.pack("<%df" % n, *vals)
    header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [off, off + len(b)]}
    blobs.append(b); off += len(b)
h = json.dumps(header).encode()
h += b" " * ((8 - (8 + len(h)) % 8) % 8)
with open(d + "/model.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(h))); f.write(h); [f.write(b) for b in blobs]
PY
ids() { python3 -c "import sys; print(','.join(str((i * 37 + 11) % 256) for i in range(int(sys.argv[1]))))" "$1"; }
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
for T in 2048 4096 8192; do
    /usr/bin/time -f "T=$T: peak RSS %M KB, %e s" "$bin" trace --model "$work/llama" --ids "$(ids $T)" \
        --out "$work/t$T.safetensors" --exclude '*.scores*,*.probs' --head dec.1.attn.probs:3 --threads 2 \
        2>&1 | grep -E "^T=|error" || true
    ls -l "$work/t$T.safetensors" | awk '{printf "  file %.1f MB\n", $5 / 1e6}'
    rm -f "$work/t$T.safetensors"
done
# A request over the budget is refused in one line, non-zero, before anything runs.
if "$bin" trace --model "$work/llama" --ids "$(ids 8192)" --out "$work/x.safetensors" --memory-budget 64M 2>"$work/err"; then
    echo "FAIL: an over-budget trace ran"; exit 1
fi
echo "refusal: $(tail -1 "$work/err")"
