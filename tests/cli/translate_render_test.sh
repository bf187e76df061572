#!/usr/bin/env bash
# `render` on the bundled translation model: the three attention sources of an encoder–decoder, after --translate
# and with a typed --target. Each CSV is the head's (query × key) weights: encoder self-attention source × source,
# decoder self-attention target × target (causal: zero above the diagonal), cross-attention target × source; every
# row sums to 1; the decoded translation is printed and its tokens label the target axis.
# Usage: translate_render_test.sh TRANSFORMER_STUDIO MODEL_DIR OUT_DIR
set -euo pipefail
ts="$1"
model="$2"
out="$3"
rm -rf "$out"
mkdir -p "$out"
fail() { echo "FAIL: $*"; exit 1; }
src="Delete the selected layer"

"$ts" translate --model "$model" --text "$src" > "$out/translation.txt"
[ -s "$out/translation.txt" ] || fail "translate printed nothing"
for s in encoder decoder cross; do
    "$ts" render --model "$model" --source "$src" --translate --view attention --attn-source "$s" --layer 2 --head 1 \
        --out "$out/$s.csv" 2> "$out/$s.log" || { cat "$out/$s.log"; fail "render --attn-source $s"; }
    grep -q "translation: $(cat "$out/translation.txt")" "$out/$s.log" || fail "$s: render's translation differs from translate's"
    "$ts" render --model "$model" --source "$src" --translate --view attention --attn-source "$s" --out "$out/$s.png" \
        2> /dev/null || fail "render $s.png"
done
# Shapes and row sums (python3 only for arithmetic on the CSVs).
/usr/bin/python3 - "$out" <<'PY' || fail "attention CSVs"
import csv, sys
out = sys.argv[1]
def load(name):
    rows = list(csv.reader(open(f"{out}/{name}.csv", encoding="utf-8")))
    return rows[0][1:], [r[0] for r in rows[1:]], [[float(v) for v in r[1:]] for r in rows[1:]]
ek, eq, ev = load("encoder")
dk, dq, dv = load("decoder")
ck, cq, cv = load("cross")
S, T = len(ek), len(dk)
assert ek[0] == "<2zh>" and ek[-1] == "<|endoftext|>", ek
assert eq == ek, "encoder rows and columns are the source"
assert dq == dk and dk[0] == "<|endoftext|>", "decoder rows and columns are the target, <start> first"
assert ck == ek and cq == dk, "cross-attention: target rows, source columns"
for name, m, n in (("encoder", ev, S), ("decoder", dv, T), ("cross", cv, S)):
    for i, row in enumerate(m):
        assert len(row) == n, (name, i, len(row), n)
        assert abs(sum(row) - 1) < 1e-4, (name, i, sum(row))
for t in range(T):
    assert all(v == 0 for v in dv[t][t + 1:]), f"decoder row {t} attends to a later position"
print(f"ok: S={S} T={T}")
PY
# A typed target is teacher-forced: its tokens label the rows.
"$ts" render --model "$model" --source "$src" --target "删除图层" --view attention --attn-source cross \
    --out "$out/forced.csv" 2> /dev/null || fail "render --target"
head -2 "$out/forced.csv" | tail -1 | grep -q "^<|endoftext|>," || fail "teacher-forced rows start with <start>"
# Usage errors are one line.
if "$ts" render --model "$model" --source "$src" --target x --translate --view attention --out "$out/x.csv" 2> "$out/err.txt"; then
    fail "--translate with --target should fail"
fi
[ "$(wc -l < "$out/err.txt")" -eq 1 ] || fail "error is not one line: $(cat "$out/err.txt")"
echo "translate_render_test: ok"
