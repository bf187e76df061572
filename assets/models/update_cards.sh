#!/usr/bin/env bash
# Re-measures a bundled model (`transformer-studio eval`, loss curve) and rewrites its MODEL_CARD.md with the exact
# commands that trained it, stage by stage. Needs the corpus (corpus/corpus.txt, see MODEL_CARD.md) and a binary.
#   bash assets/models/update_cards.sh [BINARY] [austen-gpt|austen-llama ...]
# Summary and stage notes come from assets/models/notes/<model>.summary.md and <model>.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-build/release/transformer-studio}
shift || true
MODELS=("$@")
[ ${#MODELS[@]} -gt 0 ] || MODELS=(austen-gpt austen-llama)

PREP="bash .ci/deps.sh --corpus && transformer-studio corpus build --out corpus/
transformer-studio tokenizer train --input corpus/corpus.txt --vocab-size 8192 --out vocab/   # 0.3 s"
COMMON="--batch 8 --seq-len 256 --grad-clip 1.0 --attn-dropout 0.0 --eval-every 250 --eval-batches 16 --ckpt-every 250 --log-every 50"
CURRICULUM="--repeat-fraction 0.5 --repeat-period 0 --repeat-random 0.5 --warmup 50 --dropout 0.0 --weight-decay 0.1"
# Stage arguments: name|flags. Every stage after the first starts from the one before it (--init-from).
LM="lm|--steps 3500 --lr 1e-3 --min-lr 1e-4 --warmup 150 --dropout 0.1 --weight-decay 0.1 --seed 1"
IND="ind|$CURRICULUM --steps 2500 --lr 1e-3 --min-lr 1e-4 --seed 4"
POLISH="|--repeat-fraction 0.1 --repeat-period 0 --repeat-random 0.5 --steps 1000 --lr 3e-4 --min-lr 3e-5 --warmup 50 --dropout 0.1 --weight-decay 0.1 --seed 6"

for m in "${MODELS[@]}"; do
  dir=assets/models/$m
  case $m in
    austen-llama) stages=("$LM" "$IND" "ind2|$CURRICULUM --steps 1500 --lr 5e-4 --min-lr 1e-4 --seed 5" "$POLISH") ;;
    austen-gpt) stages=("$LM" "$IND" "ind2|$CURRICULUM --steps 3500 --lr 6e-4 --min-lr 1e-4 --seed 5"
                        "ind3|$CURRICULUM --steps 2500 --lr 6e-4 --min-lr 1e-4 --seed 7"
                        "|--repeat-fraction 0.25 --repeat-period 0 --repeat-random 0.5 --steps 1000 --lr 3e-4 --min-lr 3e-5 --warmup 50 --dropout 0.0 --weight-decay 0.1 --seed 6") ;;
    *) echo "update_cards: unknown model $m" >&2; exit 1 ;;
  esac
  train="transformer-studio train --config $dir/config.json --tokenizer vocab/tokenizer.json --data corpus/corpus.txt"
  cmds=()
  prev=""
  for st in "${stages[@]}"; do
    name=${st%%|*}
    flags=${st#*|}
    out=runs/$m${name:+-$name}
    cmd="$train --out $out ${prev:+--init-from $prev }$flags $COMMON"
    [ -n "$name" ] || cmd="$cmd
cp $out/model.safetensors $dir/"
    cmds+=(--train-command "$cmd")
    prev=$out
  done
  report=$(mktemp)
  "$BIN" eval --model "$dir" --data corpus/corpus.txt --json "$report" --loss-curve "$dir/loss_curve.svg" >/dev/null
  /usr/bin/python3 assets/models/write_model_card.py --model "$dir" --eval "$report" \
    --summary "$(cat assets/models/notes/$m.summary.md)" --notes-file "assets/models/notes/$m.md" \
    --tokenizer-command "$PREP" "${cmds[@]}" \
    --eval-command "transformer-studio eval --model $dir --data corpus/corpus.txt --json report.json --loss-curve $dir/loss_curve.svg"
  rm -f "$report"
  echo "wrote $dir/MODEL_CARD.md"
done
