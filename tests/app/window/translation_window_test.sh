#!/usr/bin/env bash
# Window test of translation (issue #12): trains the tiny encoder–decoder of tests/cli/translate_test.sh (it memorizes
# tests/cli/data/pairs_tiny.tsv in ~2 s), writes a held-out-style examples.tsv next to it, opens it in the real window
# under Xvfb with --translate (beam 2) and the cross-attention source, and checks: exit 0, no "[error]" in the log,
# the log names the decoded translation (the memorized reference), and the Attention and Tokens screenshots are
# non-blank. The bundled translation model gets the same test when it is in assets/models (tests/app_tests.cmake).
# Usage: translation_window_test.sh TRANSFORMER_STUDIO PNG_CHECK OUT_DIR
set -euo pipefail
ts="$1"
check="$2"
out="$3"
data="$(cd "$(dirname "$0")/../../cli/data" && pwd)"
rm -rf "$out"
mkdir -p "$out"
fail() { echo "FAIL: $*"; exit 1; }

bash "$(dirname "$0")/../../cli/train_tiny_translation_model.sh" "$ts" "$out"
head -5 "$data/pairs_tiny.tsv" > "$out/model/examples.tsv"
src=$(head -2 "$data/pairs_tiny.tsv" | tail -1 | cut -f1)
ref=$(head -2 "$data/pairs_tiny.tsv" | tail -1 | cut -f2)

xvfb-run -a -s "-screen 0 1600x1000x24" "$ts" --no-state --screenshot-dir "$out/shots" --frames 3 --panel all \
    --model "$out/model" --text "$src" --translate --beam 2 --attn-source cross > "$out/app.log" 2>&1 \
    || { cat "$out/app.log"; fail "the app exited with an error"; }
if grep -q "\[error\]" "$out/app.log"; then cat "$out/app.log"; fail "the app logged errors"; fi
grep -q "translated (beam): $ref" "$out/app.log" || { cat "$out/app.log"; fail "no beam translation '$ref' in the log"; }
for p in attention tokens predictions; do
    [ -f "$out/shots/$p.png" ] || fail "missing screenshot $p.png"
done
"$check" "$out/shots/attention.png" "$out/shots/tokens.png" "$out/shots/predictions.png" || fail "blank screenshot"
echo "translation_window_test: ok ($src -> $ref)"
