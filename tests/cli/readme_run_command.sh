#!/usr/bin/env bash
# README's run command must work verbatim from a fresh clone: extract it (the line after <!-- run-command -->, as
# .ci/run does for the test command), run its build part, check the path it launches exists, and launch that path
# under Xvfb for a few frames (the window opens, draws, exits 0). CTest runs this serially: re-running the
# configure and build steps is then a no-op on the tree being tested.
# usage: readme_run_command.sh SOURCE_DIR OUT_DIR
set -euo pipefail
SRC=$1
OUT=$2
mkdir -p "$OUT"
cd "$SRC"
cmd=$(awk '/<!-- run-command -->/{getline; getline; print; exit}' README.md)
[ -n "$cmd" ] || { echo "readme_run_command: no run command after <!-- run-command --> in README.md"; exit 1; }
echo "run command: $cmd"
launch=${cmd##*&& }
build=${cmd% && "$launch"}
[ "$build" != "$cmd" ] || { echo "readme_run_command: expected 'BUILD && ./PATH', got: $cmd"; exit 1; }
exe=${launch%% *}
echo "build part: $build"
echo "launches: $exe"
bash -c "set -euo pipefail; $build" >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; echo "FAIL: the build part failed"; exit 1; }
[ -x "$exe" ] || { echo "FAIL: README launches $exe, which does not exist after the build"; exit 1; }
xvfb-run -a -s "-screen 0 1280x800x24" "$exe" ${launch#"$exe"} --no-state --max-frames 5 \
  --frame-stats "$OUT/frames.json" 2>"$OUT/app.log" || { cat "$OUT/app.log"; echo "FAIL: the app exited non-zero"; exit 1; }
frames=$(python3 -c "import json; print(len(json.load(open('$OUT/frames.json'))['frame_ms']))")
echo "window drew $frames frames"
[ "$frames" -ge 5 ] || { echo "FAIL: expected 5 frames"; exit 1; }
if grep -q "random-weight demo" "$OUT/app.log"; then echo "FAIL: the app did not find the bundled model"; exit 1; fi
if grep -q "\[error\]" "$OUT/app.log"; then grep "\[error\]" "$OUT/app.log"; echo "FAIL: errors logged"; exit 1; fi
echo "readme_run_command: ok"
