#!/usr/bin/env bash
# Window test of the fill-mask view (issue #13): opens a synthetic BERT folder (tests/golden/hf_bert: the tiny
# BertForMaskedLM checkpoint of tests/reference/make_bert_neox_gemma_fixtures.py, random weights) in the real
# window under Xvfb with the text "The capital of France is [MASK]." and checks: exit 0, no "[error]" in the log,
# non-blank Predictions / Attention / Model screenshots. Through `render --view fill-mask --out CSV`, the same text
# gives ten candidates for its one mask (probabilities in (0, 1], most likely first), a two-mask text one figure
# per mask titled with its position, and a text without a mask is refused with the reason.
# The synthetic folder's tokenizer.json is byte-level BPE with "[MASK]" as an added special token — real BERT
# folders ship WordPiece, which the tokenizer work adds separately; this keeps the test independent of it. With
# random weights the candidates are arbitrary: the test checks that the view is there, not what it guesses.
# Usage: fill_mask_window_test.sh TRANSFORMER_STUDIO PNG_CHECK OUT_DIR
set -euo pipefail
ts="$1"
check="$2"
out="$3"
golden="$(cd "$(dirname "$0")/../../golden/hf_bert" && pwd)"
rm -rf "$out"
mkdir -p "$out/model"
fail() { echo "FAIL: $*"; exit 1; }
for f in config.json model.safetensors tokenizer.json; do cp "$golden/$f" "$out/model/"; done
text="The capital of France is [MASK]."

xvfb-run -a -s "-screen 0 1600x1000x24" "$ts" --no-state --screenshot-dir "$out/shots" --frames 3 --panel all \
    --model "$out/model" --text "$text" > "$out/app.log" 2>&1 || { cat "$out/app.log"; fail "the app exited with an error"; }
if grep -q "\[error\]" "$out/app.log"; then cat "$out/app.log"; fail "the app logged errors"; fi
for p in predictions attention model; do
    [ -f "$out/shots/$p.png" ] || fail "missing screenshot $p.png"
done
"$check" "$out/shots/predictions.png" "$out/shots/attention.png" "$out/shots/model.png" || fail "blank screenshot"

# The fill-mask figures themselves, as data: one mask -> ten candidates, most likely first, probabilities in (0, 1];
# two masks -> one figure per mask, titled with its position (byte-level BPE: "The", " ", "[MASK]", ... -> 2 and 7).
"$ts" render --model "$out/model" --text "$text" --view fill-mask --out "$out/fill_mask.csv" > "$out/render.log" 2>&1 \
    || { cat "$out/render.log"; fail "render --view fill-mask failed"; }
"$ts" render --model "$out/model" --text "The [MASK] of France is [MASK]." --view fill-mask --out "$out/two.csv" \
    > "$out/render_two.log" 2>&1 || { cat "$out/render_two.log"; fail "render --view fill-mask (two masks) failed"; }
python3 - "$out/fill_mask.csv" "$out/two.csv" <<'PY' || fail "fill-mask CSV content"
import csv, sys
one = list(csv.DictReader(open(sys.argv[1], encoding="utf-8")))
probs = [float(r["probability"]) for r in one]
print("one mask:", len(one), "candidates:", [(r["label"].split("'")[1], round(p, 4)) for r, p in zip(one, probs)])
assert len(one) == 10, len(one)
assert all(0 < p <= 1 for p in probs) and probs == sorted(probs, reverse=True), probs
two = list(csv.DictReader(open(sys.argv[2], encoding="utf-8")))
titles = sorted({r["figure"] for r in two})
print("two masks:", titles)
assert len(two) == 20 and len(titles) == 2, (len(two), titles)
assert titles[0].endswith("position 2") and titles[1].endswith("position 7"), titles
PY
if "$ts" render --model "$out/model" --text "The capital of France is Paris." --view fill-mask --out "$out/none.csv" \
    > "$out/render_none.log" 2>&1; then
    fail "render accepted a text without a mask token"
fi
grep -q "no mask token" "$out/render_none.log" || { cat "$out/render_none.log"; fail "the refusal does not say why"; }
echo "fill_mask_window_test: ok"
