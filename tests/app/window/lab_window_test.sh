#!/usr/bin/env bash
# The training lab in the window (#33): --lab starts a short run on the Training tab, screenshot mode waits for it to
# finish and saves the tab (its six curves); the run's snapshot then opens like any model folder (what the timeline
# does) and its curves render headless.
# usage: lab_window_test.sh APP SETTINGS.json OUT_DIR
set -euo pipefail
APP=$1
SETTINGS=$2
OUT=$3
rm -rf "$OUT"
mkdir -p "$OUT"
source "$(dirname "$0")/window_lib.sh"
start_xvfb lab_window_test

"$APP" --no-state --size 1280x800 --threads 1 --lab "$SETTINGS" --lab-out "$OUT/run" --screenshot-dir "$OUT/shots" \
  --frames 3 2>"$OUT/lab.log"
[ -s "$OUT/shots/training.png" ] || { cat "$OUT/lab.log"; echo "FAIL: no screenshot of the Training tab"; exit 1; }
last=$(tail -n 1 "$OUT/run/lab_log.jsonl")
case "$last" in *'"step":20'*) ;; *) echo "FAIL: the run did not reach step 20: $last"; exit 1 ;; esac
[ -s "$OUT/run/snapshots/step-00000010/model.safetensors" ] || { echo "FAIL: no snapshot at step 10"; exit 1; }

"$APP" --no-state --size 1280x800 --model "$OUT/run/snapshots/step-00000010" --text "qwertyqwerty" --panel attention \
  --screenshot-dir "$OUT/shots" --frames 3 2>"$OUT/snapshot.log"
[ -s "$OUT/shots/attention.png" ] || { cat "$OUT/snapshot.log"; echo "FAIL: the snapshot did not open"; exit 1; }
grep -q "error" "$OUT/snapshot.log" && { cat "$OUT/snapshot.log"; echo "FAIL: errors opening the snapshot"; exit 1; }
"$APP" render --lab-run "$OUT/run" --view lab-curves --lab-step 10 --out "$OUT/curves.svg" >/dev/null
grep -q "Induction and previous-token heads" "$OUT/curves.svg" || { echo "FAIL: curves.svg lacks the heads figure"; exit 1; }
echo "lab_window_test: ok"
