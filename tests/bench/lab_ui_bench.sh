#!/usr/bin/env bash
# The training lab's target of issue #33, measured (never asserted): the default lab run (a 2-layer attention-only
# model on the repeated-random curriculum) headless (`train --lab`) and in the window under Xvfb on the Training tab
# (`--lab`, its six curves redrawn as it trains), the same settings and threads. Reports steps/s of each (training
# time only, from each run's lab_log.jsonl), their ratio (target >= 0.8), the step at which the best induction score
# first reached 0.5 and the seconds to it (target <= 60 s), and the window's frame times while it trained.
# Usage: tests/bench/lab_ui_bench.sh [BUILD_DIR] [THREADS]   Needs xvfb-run and /usr/bin/python3 (json only).
set -euo pipefail
BUILD=${1:-build/release}
THREADS=${2:-2}
APP=$BUILD/transformer-studio
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo '{"format": "ts-lab-1"}' > "$TMP/settings.json"   # every default
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)   cores: $(nproc)   threads: $THREADS"
"$APP" train --lab "$TMP/settings.json" --out "$TMP/headless" --threads "$THREADS" 2>&1 | tail -n 1
xvfb-run -a -s "-screen 0 1600x1000x24" "$APP" --no-state --size 1600x1000 --threads "$THREADS" \
  --lab "$TMP/settings.json" --lab-out "$TMP/window" --screenshot-dir "$TMP/shots" --frame-stats "$TMP/frames.json" \
  > "$TMP/window.log" 2>&1 || { cat "$TMP/window.log"; exit 1; }
/usr/bin/python3 - "$TMP" <<'PY'
import json, sys
tmp = sys.argv[1]
def run(name):
    lines = [json.loads(l) for l in open(f"{tmp}/{name}/lab_log.jsonl") if l.strip()]
    last = lines[-1]
    first = next((l for l in lines if l.get("best_induction", 0) >= 0.5), None)
    return last["step"], last["elapsed_s"], first
for name in ("headless", "window"):
    steps, secs, first = run(name)
    when = f"induction >= 0.5 first at step {first['step']} ({first['elapsed_s']:.1f} s)" if first else "no induction head >= 0.5"
    print(f"{name:8s}: {steps} steps in {secs:.1f} s = {steps / secs:.1f} steps/s; {when}")
h = run("headless"); w = run("window")
print(f"window / headless steps/s: {(w[0] / w[1]) / (h[0] / h[1]):.2f} (target >= 0.8)")
f = json.load(open(f"{tmp}/frames.json"))["frame_ms"]
q = lambda v, p: sorted(v)[min(len(v) - 1, int(len(v) * p))]
b = json.load(open(f"{tmp}/frames.json"))["build_ms"]
print(f"window frames while training: {len(f)}, median {q(f, 0.5):.1f} ms, p95 {q(f, 0.95):.1f} ms "
      f"(of which the app's own UI work: median {q(b, 0.5):.1f} ms; the rest is Mesa's software rasterizer under Xvfb)")
PY
