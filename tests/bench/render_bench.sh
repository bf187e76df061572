#!/usr/bin/env bash
# Render benchmark: (1) a 1920×1080 PNG of the attention grid (every layer × head) from a warm process
# (`render --repeat N` reports each render after the first warms the font atlas and GL objects), and (2) the cold
# start of a headless `render` to a PNG file, as wall time of the whole process. Uses the bundled model when
# assets/models/austen-gpt exists, else the random demo model (printed).
# Usage: tests/bench/render_bench.sh [path/to/transformer-studio]   (targets: warm <= 0.5 s, cold <= 1.5 s)
set -euo pipefail
APP=${1:-build/release/transformer-studio}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
TEXT="It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife."
MODEL=()
if [ -d assets/models/austen-gpt ]; then MODEL=(--model assets/models/austen-gpt); echo "model: assets/models/austen-gpt"; else echo "model: random demo (no bundled model)"; fi
echo "warm: 1920x1080 attention grid PNG, 6 renders in one process"
"$APP" render "${MODEL[@]}" --quiet --view attention-grid --text "$TEXT" --width 1920 --height 1080 --out "$OUT/grid.png" --repeat 6
echo "cold: whole process, render to PNG (3 runs)"
for i in 1 2 3; do
  s=$(date +%s.%N)
  "$APP" render "${MODEL[@]}" --quiet --view attention-grid --text "$TEXT" --width 1920 --height 1080 --out "$OUT/grid.png"
  e=$(date +%s.%N)
  echo "  run $i: $(echo "$e - $s" | bc) s"
done
s=$(date +%s.%N)
"$APP" render "${MODEL[@]}" --quiet --view attention-grid --text "$TEXT" --out "$OUT/grid.svg"
e=$(date +%s.%N)
echo "cold SVG (no GL): $(echo "$e - $s" | bc) s"
