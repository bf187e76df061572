# Shared prologue of the xdotool-driven window tests, sourced after `set -euo pipefail` with OUT set:
#   start_xvfb NAME   checks Xvfb, xdotool, xmodmap and python3, starts a 1280x800 Xvfb on a random display, exports DISPLAY,
#                     and kills it (and the app whose pid is in APP_PID, if any) when the script exits; NAME prefixes
#                     the error messages
#   json FILE EXPR    prints a Python expression over the JSON document j in FILE
#   wait_window       waits up to 30 s for the "Transformer Studio" window to be mapped (a click on a window that is
#                     named but not yet mapped goes to the root window), else exits 1
start_xvfb() {
  TEST_NAME=$1
  for tool in Xvfb xdotool xmodmap python3; do
    command -v $tool >/dev/null || { echo "$TEST_NAME: $tool not found"; exit 1; }
  done
  local disp=:$((90 + RANDOM % 100))
  # -noreset: by default the server resets when its last client leaves, and an app started during that reset fails
  # with "Failed to open display" (seen when the layout run had just exited).
  Xvfb $disp -screen 0 1280x800x24 -nolisten tcp -noreset >"$OUT/xvfb.log" 2>&1 &
  XVFB=$!
  APP_PID=
  trap 'cleanup_window_test' EXIT
  export DISPLAY=$disp
  for i in $(seq 50); do xdotool getmouselocation >/dev/null 2>&1 && break; sleep 0.2; done
}
cleanup_window_test() { [ -n "${APP_PID:-}" ] && kill -9 $APP_PID 2>/dev/null; kill $XVFB 2>/dev/null || true; }
json() { python3 -c "import json,sys; j=json.load(open('$1')); print(eval(sys.argv[1]))" "$2"; }
wait_window() {
  for i in $(seq 150); do xdotool search --onlyvisible --name "Transformer Studio" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "$TEST_NAME: the window did not appear"; exit 1
}
