#!/usr/bin/env bash
# The logit lens runs only while the Predictions panel is open (issue #14), driven with xdotool under Xvfb:
#   1. on the Attention panel the forward computes no lens and no logits (no panel there reads them);
#   2. a click on the Predictions tab re-runs the text with the lens: one lens row per layer, every logits row;
#   3. on the Causal panel (opened at start) the forward computes the last position's logits only, no lens;
#   4. no errors logged.
# usage: lens_on_demand_test.sh APP MODEL_DIR OUT_DIR
set -euo pipefail
APP=$1
MODEL=$2
OUT=$3
rm -rf "$OUT"
mkdir -p "$OUT"
source "$(dirname "$0")/window_lib.sh"
start_xvfb lens_on_demand_test
text="The cat sat on the mat because it"
layers=$(python3 -c "import json; print(json.load(open('$MODEL/config.json'))['n_layers'])")

# Where the Predictions tab is (a few frames with stats, then exit).
"$APP" --no-state --size 1280x800 --panel attention --model "$MODEL" --text "$text" --max-frames 8 \
  --frame-stats "$OUT/layout.json" 2>"$OUT/layout.log"
read -r PX PY < <(json "$OUT/layout.json" "' '.join(str(int((r[0]+r[2])/2)) + ' ' + str(int((r[1]+r[3])/2)) for r in [j['rects']['tab:Predictions']])")

run_until_done() {  # $1: stats file; clicks the Predictions tab first when $2 = click; $3: the panel at start
  "$APP" --no-state --size 1280x800 --panel "${3:-attention}" --model "$MODEL" --text "$text" --frame-stats "$1" \
    2>"$1.log" &
  APP_PID=$!
  wait_window
  sleep 5  # the first forward is shown (a loaded machine starts slowly)
  if [ "${2:-}" = click ]; then
    # Hover first, then click: this test is about what the click starts, not about quick clicks (input_test.sh).
    xdotool mousemove $PX $PY
    sleep 1
    xdotool click 1
    sleep 6
  fi
  kill -TERM $APP_PID
  wait $APP_PID
  APP_PID=
}
run_until_done "$OUT/attention.json"
run_until_done "$OUT/predictions.json" click
run_until_done "$OUT/causal.json" noclick causal
for f in attention predictions causal; do
  echo "$f: panel $(json "$OUT/$f.json" "j['panel']"), lens layers $(json "$OUT/$f.json" "j['lens_layers']"), logits rows $(json "$OUT/$f.json" "j['logits_rows']"), forwards $(json "$OUT/$f.json" "j['forwards_completed']")"
done
tokens=$(json "$OUT/attention.json" "j['tokens']")
[ "$(json "$OUT/attention.json" "j['lens_layers']")" = 0 ] || { echo "FAIL: the lens ran for the Attention panel"; exit 1; }
[ "$(json "$OUT/attention.json" "j['logits_rows']")" = 0 ] || { echo "FAIL: the forward ran the LM head for the Attention panel"; exit 1; }
[ "$(json "$OUT/causal.json" "j['panel']")" = Causal ] || { echo "FAIL: the Causal panel did not open"; exit 1; }
[ "$(json "$OUT/causal.json" "j['logits_rows']")" = 1 ] || { echo "FAIL: the Causal panel's forward did not compute the last logits row only"; exit 1; }
[ "$(json "$OUT/causal.json" "j['lens_layers']")" = 0 ] || { echo "FAIL: the lens ran for the Causal panel"; exit 1; }
[ "$(json "$OUT/predictions.json" "j['panel']")" = Predictions ] || { echo "FAIL: the click on Predictions was lost"; exit 1; }
[ "$(json "$OUT/predictions.json" "j['lens_layers']")" = "$layers" ] || { echo "FAIL: no lens after opening Predictions"; exit 1; }
[ "$(json "$OUT/predictions.json" "j['logits_rows']")" = "$tokens" ] || { echo "FAIL: the lens did not fill every logits row"; exit 1; }
if grep -q "\[error\]" "$OUT"/*.log; then echo "FAIL: errors logged"; grep "\[error\]" "$OUT"/*.log; exit 1; fi
echo "lens_on_demand_test: ok"
