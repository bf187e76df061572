#!/usr/bin/env bash
# Regenerates the README's screenshots (docs/images/*.png) from the real window under Xvfb, at 1280 × 800, with
# the bundled models. usage: bash docs/screenshots.sh [BUILD_DIR]   (default build/release; needs xvfb-run)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
exe=${1:-$src/build/release}/transformer-studio
out=$src/docs/images
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shot() {  # name, panel, then app options
  local name=$1 panel=$2
  shift 2
  mkdir -p "$tmp/$name"
  # The pointer starts mid-screen, where a hover tooltip would cover the figure: park it in the corner first.
  xvfb-run -a -s "-screen 0 1280x800x24" sh -c 'xdotool mousemove 1279 799; exec "$@"' sh \
    "$exe" --no-state --size 1280x800 --screenshot-dir "$tmp/$name" --panel "$panel" --frames 30 "$@" >/dev/null 2>&1
  local png
  png=$(ls "$tmp/$name"/*.png | head -1)
  cp "$png" "$out/$name.png"
  echo "$out/$name.png ($(du -h "$out/$name.png" | cut -f1))"
}
mkdir -p "$out"
shot attention Attention --text "The cat sat on the mat because it was tired."
shot translation Attention --model "$src/assets/models/zh-en-transformer" \
  --text "Write file to original location (overwrite existing file)" --translate --attn-source cross
shot lesson-zh Lessons --lang zh --lesson encoder-decoder:4
shot training Training --text "The cat sat on the mat."
