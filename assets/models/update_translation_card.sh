#!/usr/bin/env bash
# Re-measures the bundled translation model and rewrites its MODEL_CARD.md: IBM Model 1 reference alignments,
# `eval --pairs` on each test split (ui, programs, manuals, and the everyday set: chrF/BLEU greedy and beam against
# the retrieval baseline; alignment hit rates and the loss curve on ui),
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
  --test "$CORPUS/test_ui.tsv" --direction both --out "$dir/ibm1_test_alignments.jsonl"
# One report per test split: the corpus's three domains, then the everyday set (never trained on).
evals=()
for split in ui programs manuals everyday; do
  pairs="$CORPUS/test_$split.tsv"
  extra=()
  [ "$split" = everyday ] && pairs=assets/corpus/everyday/test.tsv
  [ "$split" = ui ] && extra=(--alignments "$dir/ibm1_test_alignments.jsonl" --loss-curve "$dir/loss_curve.svg")
  "$BIN" eval --model "$dir" --pairs "$pairs" --train "$CORPUS/train.tsv" --beam 4 --examples 20 \
    --json "$work/$split.json" --threads 2 "${extra[@]}" | tee "$work/$split.txt"
  evals+=(--eval "$split=$work/$split.json")
done
/usr/bin/python3 assets/corpus/tokens_per_char.py --cli "$BIN" --tokenizer "$dir" --data "$CORPUS/test.tsv" \
  --json "$work/tokens.json" > /dev/null

TRAIN="transformer-studio train --config $dir/config.json --tokenizer $dir/tokenizer.json \\
    --pairs $CORPUS/train.tsv --valid $CORPUS/valid.tsv --direction both --warmup 2000 \\
    --out runs/zh-en --steps STEPS --ckpt-every 1000 --eval-every 1000 --log-every 100 --threads 2 \\
    --keep-checkpoints 5 --average-last 5   # --resume to continue"
/usr/bin/python3 assets/models/write_translation_card.py --model "$dir" "${evals[@]}" \
  --corpus-stats "$CORPUS/stats.json" --tokenizer-stats "$work/tokens.json" \
  --trained-on-en "Trained on software menus and messages, texts of programs and games, manuals and a Chinese-English dictionary from Debian and npm; best on that kind of text, weaker on everyday conversation." \
  --trained-on-zh "训练数据：软件菜单与提示、程序和游戏中的文字、使用手册，以及一部汉英词典（来自 Debian 和 npm）；擅长这类文字，日常对话较弱。" \
  --summary "$(cat assets/models/notes/zh-en-transformer.summary.md)" \
  --notes-file assets/models/notes/zh-en-transformer.md \
  --tokenizer-command "bash .ci/deps.sh --corpus && transformer-studio corpus build --parallel zh-en --out $CORPUS
transformer-studio tokenizer train --input $CORPUS/train.tsv --vocab-size 16000 --special \"<|endoftext|>,<pad>,<2en>,<2zh>\" --out $dir/" \
  --train-command "$TRAIN" \
  --eval-command "bash assets/models/update_translation_card.sh build/release/transformer-studio $CORPUS"
echo "wrote $dir/MODEL_CARD.md"
