#!/usr/bin/env bash
# Re-measures a bundled model (`transformer-studio eval`, loss curve) and rewrites its MODEL_CARD.md with the exact
# commands that trained it. Needs the corpus (corpus/corpus.txt, see MODEL_CARD.md) and a built binary.
#   bash assets/models/update_cards.sh [BINARY] [austen-gpt|austen-llama ...]
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-build/release/app/transformer-studio}
shift || true
MODELS=("$@")
[ ${#MODELS[@]} -gt 0 ] || MODELS=(austen-gpt austen-llama)

PREP="bash .ci/deps.sh --corpus && transformer-studio corpus build --out corpus/
transformer-studio tokenizer train --input corpus/corpus.txt --vocab-size 8192 --out vocab/   # 0.3 s"
COMMON="--batch 8 --seq-len 256 --weight-decay 0.1 --grad-clip 1.0 --attn-dropout 0.0 --eval-every 250 --eval-batches 16 --ckpt-every 250 --log-every 50"
LM="--steps 3500 --lr 1e-3 --min-lr 1e-4 --warmup 150 --dropout 0.1 --seed 1"
IND="--repeat-fraction 0.5 --repeat-period 0 --repeat-random 0.5 --steps 2500 --lr 1e-3 --min-lr 1e-4 --warmup 50 --dropout 0.0 --seed 4"
IND2_LLAMA="--repeat-fraction 0.5 --repeat-period 0 --repeat-random 0.5 --steps 1500 --lr 5e-4 --min-lr 1e-4 --warmup 50 --dropout 0.0 --seed 5"
IND2_GPT="--repeat-fraction 0.5 --repeat-period 0 --repeat-random 0.5 --steps 3500 --lr 6e-4 --min-lr 1e-4 --warmup 50 --dropout 0.0 --seed 5"
POLISH="--repeat-fraction 0.1 --repeat-period 0 --repeat-random 0.5 --steps 1000 --lr 3e-4 --min-lr 3e-5 --warmup 50 --dropout 0.1 --seed 6"

for m in "${MODELS[@]}"; do
  dir=assets/models/$m
  train="transformer-studio train --config $dir/config.json --tokenizer vocab/tokenizer.json --data corpus/corpus.txt"
  case $m in
    austen-llama) ind2=$IND2_LLAMA ;;
    austen-gpt) ind2=$IND2_GPT ;;
    *) echo "update_cards: unknown model $m" >&2; exit 1 ;;
  esac
  eval_cmd="transformer-studio eval --model $dir --data corpus/corpus.txt --json report.json --loss-curve $dir/loss_curve.svg"
  report=$(mktemp)
  "$BIN" eval --model "$dir" --data corpus/corpus.txt --json "$report" --loss-curve "$dir/loss_curve.svg" >/dev/null
  /usr/bin/python3 assets/models/write_model_card.py --model "$dir" --eval "$report" \
    --summary "$(cat assets/models/notes/$m.summary.md)" --notes-file "assets/models/notes/$m.md" \
    --tokenizer-command "$PREP" \
    --train-command "$train --out runs/$m-lm $LM $COMMON" \
    --train-command "$train --out runs/$m-ind --init-from runs/$m-lm $IND $COMMON" \
    --train-command "$train --out runs/$m-ind2 --init-from runs/$m-ind $ind2 $COMMON" \
    --train-command "$train --out runs/$m --init-from runs/$m-ind2 $POLISH $COMMON
cp runs/$m/model.safetensors $dir/" \
    --eval-command "$eval_cmd"
  rm -f "$report"
  echo "wrote $dir/MODEL_CARD.md"
done
