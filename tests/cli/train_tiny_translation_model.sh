#!/usr/bin/env bash
# Trains the tiny encoder–decoder the translation tests share (~2 s): a 380-token BPE on tests/cli/data/pairs_tiny.tsv
# and 400 steps without dropout or label smoothing, which memorizes those pairs both ways. Writes OUT_DIR/tok and
# OUT_DIR/model (the training log in OUT_DIR/train.log); exits 1 with the log when training fails.
# Usage: train_tiny_translation_model.sh TRANSFORMER_STUDIO OUT_DIR
set -euo pipefail
ts="$1"
out="$2"
data="$(cd "$(dirname "$0")" && pwd)/data"
"$ts" tokenizer train --input "$data/pairs_tiny.tsv" --vocab-size 380 --min-frequency 1 --out "$out/tok" \
    --special "<|endoftext|>,<pad>,<2en>,<2zh>" > /dev/null
"$ts" train --config "$data/encdec_tiny.json" --tokenizer "$out/tok/tokenizer.json" --pairs "$data/pairs_tiny.tsv" \
    --direction both --val-fraction 0.1 --out "$out/model" --steps 400 --batch 16 --batch-tokens 256 \
    --schedule cosine --lr 3e-3 --warmup 20 --label-smoothing 0 --dropout 0 --eval-every 400 --log-every 400 \
    --seed 3 2> "$out/train.log" || { cat "$out/train.log"; echo "FAIL: training the test model"; exit 1; }
