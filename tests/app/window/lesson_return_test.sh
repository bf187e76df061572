#!/usr/bin/env bash
# The Lessons tab gives the student's model and text back when they leave it (#28 items 3 and 7), driven with
# xdotool under Xvfb: type-free set-up with --text, a click on "Lessons" (the lesson loads its own model and
# sentence), a click on "Attention"; the state must hold the student's text again and the log the model reload.
# usage: lesson_return_test.sh APP OUT_DIR
set -euo pipefail
APP=$1
OUT=$2
mkdir -p "$OUT"
source "$(dirname "$0")/window_lib.sh"
start_xvfb lesson_return_test

"$APP" --no-state --size 1280x800 --panel tokens --text "My own sentence." --max-frames 8 \
  --frame-stats "$OUT/layout.json" 2>"$OUT/layout.log"
read -r LX LY < <(json "$OUT/layout.json" "' '.join(str(int((r[0]+r[2])/2)) + ' ' + str(int((r[1]+r[3])/2)) for r in [j['rects']['tab:Lessons']])")
read -r AX AY < <(json "$OUT/layout.json" "' '.join(str(int((r[0]+r[2])/2)) + ' ' + str(int((r[1]+r[3])/2)) for r in [j['rects']['tab:Attention']])")

"$APP" --no-state --size 1280x800 --panel tokens --text "My own sentence." --frame-stats "$OUT/return.json" \
  2>"$OUT/return.log" &
APP_PID=$!
wait_window
sleep 2
xdotool mousemove $LX $LY click 1
sleep 10
xdotool mousemove $AX $AY click 1
sleep 3
xdotool mousemove $AX $AY click 1
sleep 5
kill -TERM $APP_PID
wait $APP_PID
APP_PID=
panel=$(json "$OUT/return.json" "j['panel']")
text=$(json "$OUT/return.json" "j['text']")
echo "after Lessons and back: panel $panel, text '$text'"
[ "$panel" = "Attention" ] || { echo "FAIL: the click on the Attention tab was lost"; exit 1; }
[ "$text" = "My own sentence." ] || { echo "FAIL: the student's text was not given back"; exit 1; }
grep -q "left the lesson" "$OUT/return.log" || { echo "FAIL: no message about leaving the lesson"; exit 1; }
echo "lesson_return_test: ok"
