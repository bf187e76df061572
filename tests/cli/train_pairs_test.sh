#!/usr/bin/env bash
# CLI smoke test of encoder-decoder training on sentence pairs: a BPE tokenizer with the pair format's special
# tokens (one comma-separated --special), then `train --pairs ... --direction both` for 50 steps of a tiny post-norm
# config (the paper's schedule and Adam settings by default). Checks: the model folder loads (config, weights,
# tokenizer.json, translation.json) and the held-out loss fell. Usage: train_pairs_test.sh TRANSFORMER_STUDIO OUT_DIR
set -euo pipefail
ts="$1"
out="$2"
data="$(cd "$(dirname "$0")" && pwd)/data"
rm -rf "$out"
mkdir -p "$out"
"$ts" tokenizer train --input "$data/pairs_tiny.tsv" --vocab-size 380 --min-frequency 1 --out "$out/tok" \
    --special "<|endoftext|>,<pad>,<2en>,<2zh>"
# The four tokens are single ids.
for t in "<|endoftext|>" "<pad>" "<2en>" "<2zh>"; do
    n=$("$ts" tokenizer encode --tokenizer "$out/tok" --text "$t" --json | /usr/bin/python3 -c 'import json,sys; print(len(json.load(sys.stdin)["ids"]))')
    [ "$n" = 1 ] || { echo "special token $t encodes to $n ids"; exit 1; }
done
"$ts" train --config "$data/encdec_tiny.json" --tokenizer "$out/tok/tokenizer.json" --pairs "$data/pairs_tiny.tsv" \
    --direction both --val-fraction 0.1 --out "$out/model" --steps 50 --batch 16 --batch-tokens 256 --warmup 10 \
    --lr-factor 0.5 --eval-every 25 --log-every 10 --seed 3 2> "$out/train.log" || { cat "$out/train.log"; exit 1; }
cat "$out/train.log"
for f in config.json model.safetensors tokenizer.json translation.json train_log.jsonl; do
    [ -f "$out/model/$f" ] || { echo "missing $out/model/$f"; exit 1; }
done
/usr/bin/python3 - "$out/model" <<'PY'
import json, sys
d = sys.argv[1]
log = [json.loads(l) for l in open(d + "/train_log.jsonl")]
first, last = log[0]["val_loss"], log[-1]["val_loss"]
print(f"held-out loss {first:.3f} -> {last:.3f} at step {log[-1]['step']}")
assert log[-1]["step"] == 50, log[-1]
assert last < first - 0.5, (first, last)
t = json.load(open(d + "/translation.json"))
assert t["direction"] == "both" and t["target_language_tokens"]["zh"] == "<2zh>", t
assert json.load(open(d + "/config.json"))["arch"] == "encoder_decoder"
PY
