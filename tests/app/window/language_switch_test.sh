#!/usr/bin/env bash
# Interface language switch at run time (issue #16), driven with xdotool under Xvfb, on a fresh config folder:
#   1. English at start (--lang en); a click on "中文" in the sidebar switches the interface to Chinese;
#   2. the choice is saved in state.json ("language": "zh") when the window closes;
#   3. a restart without --lang, under LANG=C, comes back in Chinese (remembered, not from the locale).
# usage: language_switch_test.sh APP OUT_DIR
set -euo pipefail
APP=$1
OUT=$2
rm -rf "$OUT"
mkdir -p "$OUT/config"
export XDG_CONFIG_HOME="$OUT/config" LANG=C LC_ALL= LC_MESSAGES= LANGUAGE=
source "$(dirname "$0")/window_lib.sh"
start_xvfb language_switch_test

"$APP" --lang en --size 1280x800 --panel attention --text "The cat sat" --frame-stats "$OUT/en.json" 2>"$OUT/en.log" &
APP_PID=$!
wait_window
sleep 3
# Where the "中文" radio button is: the rect the app recorded (written at exit, so ask a twin run first).
"$APP" --no-state --lang en --size 1280x800 --panel attention --text "The cat sat" --max-frames 8 \
  --frame-stats "$OUT/layout.json" 2>"$OUT/layout.log"
read -r ZX ZY < <(json "$OUT/layout.json" "' '.join(str(int((r[0]+r[2])/2)) + ' ' + str(int((r[1]+r[3])/2)) for r in [j['rects']['lang:zh']])")
xdotool search --name "Transformer Studio" windowactivate --sync >/dev/null 2>&1 || true
xdotool mousemove $ZX $ZY click 1
sleep 3
kill -TERM $APP_PID
wait $APP_PID
APP_PID=
lang=$(json "$OUT/en.json" "j['language']")
saved=$(json "$OUT/config/transformer-studio/state.json" "j.get('language')")
echo "after the click: $lang; saved: $saved"
[ "$lang" = "zh" ] || { echo "FAIL: the click on 中文 did not switch the interface"; exit 1; }
[ "$saved" = "zh" ] || { echo "FAIL: state.json does not remember the language"; exit 1; }

"$APP" --size 1280x800 --panel attention --text "The cat sat" --max-frames 5 --frame-stats "$OUT/again.json" 2>"$OUT/again.log"
again=$(json "$OUT/again.json" "j['language']")
echo "after a restart under LANG=C: $again"
[ "$again" = "zh" ] || { echo "FAIL: the remembered language was not restored"; exit 1; }
if grep -q "\[error\]" "$OUT"/*.log; then echo "FAIL: errors logged"; grep "\[error\]" "$OUT"/*.log; exit 1; fi
echo "language_switch_test: ok"
