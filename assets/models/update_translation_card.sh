#!/usr/bin/env bash
# Re-measures the bundled translation model and rewrites its MODEL_CARD.md: IBM Model 1 reference alignments,
# `eval --pairs` (chrF/BLEU greedy and beam against the retrieval baseline, alignment hit rates, loss curve),
# tokens per Chinese character, then assets/models/write_translation_card.py. Needs the pair corpus
# (`transformer-studio corpus build --parallel zh-en --out corpus/zh-en`) and a binary.
#   bash assets/models/update_translation_card.sh [BINARY] [CORPUS_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-build/release/transformer-studio}
CORPUS=${2:-corpus/zh-en}
dir=assets/models/zh-en-transformer
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 assets/corpus/ibm1_align.py --ts "$BIN" --tokenizer "$dir" --train "$CORPUS/train.tsv" \
  --test "$CORPUS/test.tsv" --direction both --out "$dir/ibm1_test_alignments.jsonl"
"$BIN" eval --model "$dir" --pairs "$CORPUS/test.tsv" --train "$CORPUS/train.tsv" --beam 4 \
  --alignments "$dir/ibm1_test_alignments.jsonl" --examples 20 --json "$work/report.json" \
  --loss-curve "$dir/loss_curve.svg" --threads 2 | tee "$work/report.txt"
/usr/bin/python3 assets/corpus/tokens_per_char.py --cli "$BIN" --tokenizer "$dir" --data "$CORPUS/test.tsv" \
  --json "$work/tokens.json" > /dev/null

TRAIN="transformer-studio train --config $dir/config.json --tokenizer $dir/tokenizer.json \\
    --pairs $CORPUS/train.tsv --valid $CORPUS/valid.tsv --direction both --warmup 1500 \\
    --out runs/zh-en --steps STEPS --ckpt-every 500 --eval-every 500 --log-every 100 --threads 2   # --resume to continue"
/usr/bin/python3 assets/models/write_translation_card.py --model "$dir" --eval "$work/report.json" \
  --corpus-stats "$CORPUS/stats.json" --tokenizer-stats "$work/tokens.json" \
  --summary "$(cat assets/models/notes/zh-en-transformer.summary.md)" \
  --notes-file assets/models/notes/zh-en-transformer.md \
  --tokenizer-command "bash .ci/deps.sh --corpus && transformer-studio corpus build --parallel zh-en --out $CORPUS
transformer-studio tokenizer train --input $CORPUS/train.tsv --vocab-size 8192 --special \"<|endoftext|>,<pad>,<2en>,<2zh>\" --out $dir/" \
  --train-command "$TRAIN" \
  --eval-command "bash assets/models/update_translation_card.sh build/release/transformer-studio $CORPUS"
echo "wrote $dir/MODEL_CARD.md"
