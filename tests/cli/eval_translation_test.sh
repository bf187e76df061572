#!/usr/bin/env bash
# CLI test of `eval` on a translation model: builds a tiny encoder-decoder folder (BPE tokenizer with the pair
# tokens, 30 training steps on tests/cli/data/pairs_tiny.tsv), checks `tokenizer encode --lines`, makes IBM Model 1
# alignments with assets/corpus/ibm1_align.py (when python3-numpy is there; else a hand-written alignment file),
# runs `eval --pairs --train --alignments --json --hyps` and checks the printed fields and the JSON report, then that
# bad input gives one line on stderr and a non-zero exit.
# Usage: eval_translation_test.sh TRANSFORMER_STUDIO SOURCE_DIR OUT_DIR
set -euo pipefail
ts="$1"
src="$2"
out="$3"
data="$src/tests/cli/data"
py=/usr/bin/python3
rm -rf "$out"
mkdir -p "$out"
"$ts" tokenizer train --input "$data/pairs_tiny.tsv" --vocab-size 380 --min-frequency 1 --out "$out/tok" \
    --special "<|endoftext|>,<pad>,<2en>,<2zh>" > /dev/null 2>&1
"$ts" train --config "$data/encdec_tiny.json" --tokenizer "$out/tok/tokenizer.json" --pairs "$data/pairs_tiny.tsv" \
    --direction both --val-fraction 0.1 --out "$out/model" --steps 30 --batch 16 --batch-tokens 256 --warmup 10 \
    --eval-every 30 --log-every 10 --seed 3 > "$out/train.log" 2>&1 || { cat "$out/train.log"; exit 1; }
head -n 20 "$data/pairs_tiny.tsv" > "$out/test.tsv"

# tokenizer encode --lines: one line of ids per input line, the same ids as --text.
cut -f2 "$out/test.tsv" > "$out/zh.txt"
"$ts" tokenizer encode --tokenizer "$out/model" --lines "$out/zh.txt" --no-special > "$out/zh.ids"
[ "$(wc -l < "$out/zh.ids")" = 20 ] || { echo "--lines gave $(wc -l < "$out/zh.ids") lines for 20"; exit 1; }
first=$(head -n 1 "$out/zh.txt")
want=$("$ts" tokenizer encode --tokenizer "$out/model" --text "$first" --no-special --json |
       $py -c 'import json,sys; print(" ".join(map(str, json.load(sys.stdin)["ids"])))')
[ "$(head -n 1 "$out/zh.ids")" = "$want" ] ||
    { echo "--lines ids differ from --text: $(head -n 1 "$out/zh.ids") vs $want"; exit 1; }

# Reference alignments.
if $py -c 'import numpy' 2> /dev/null; then
    $py "$src/assets/corpus/ibm1_align.py" --ts "$ts" --tokenizer "$out/model" --train "$data/pairs_tiny.tsv" \
        --test "$out/test.tsv" --out "$out/align.jsonl" --iterations 5 2> "$out/align.log" ||
        { cat "$out/align.log"; exit 1; }
    $py - "$out/align.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
h = rows[0]
assert h["format"] == "ts-ibm1-alignments-1" and h["source_prefix"] == 1, h
assert len(rows) == 1 + 2 * 20, len(rows)
for r in rows[1:]:
    assert len(r["align"]) == r["tgt_len"] and all(-1 <= a < r["src_len"] for a in r["align"]), r
    assert any(a >= 1 for a in r["align"]), r  # something aligned, never to the <2xx> token at 0
print("ibm1_align: ok")
PY
else
    echo "python3-numpy missing: writing a diagonal alignment file instead of running ibm1_align.py"
    "$ts" tokenizer encode --tokenizer "$out/model" --lines <(cut -f1 "$out/test.tsv") --no-special > "$out/en.ids"
    $py - "$out" <<'PY'
import json, struct, sys
d = sys.argv[1]
def fnv(ids):
    h = 0xcbf29ce484222325
    for b in b"".join(struct.pack("<i", i) for i in ids):
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"
en = [[int(x) for x in l.split()] for l in open(d + "/en.ids")]
zh = [[int(x) for x in l.split()] for l in open(d + "/zh.ids")]
with open(d + "/align.jsonl", "w") as f:
    f.write(json.dumps({"format": "ts-ibm1-alignments-1", "source_prefix": 1}) + "\n")
    for line, (e, z) in enumerate(zip(en, zh)):
        for name, s, t in (("en-zh", e, z), ("zh-en", z, e)):
            al = [1 + min(j * len(s) // max(1, len(t)), len(s) - 1) for j in range(len(t))]
            f.write(json.dumps({"line": line, "direction": name, "src_len": len(s) + 2, "tgt_len": len(t),
                                "src_fnv1a": fnv(s), "tgt_fnv1a": fnv(t), "align": al}) + "\n")
PY
fi

"$ts" eval --model "$out/model" --pairs "$out/test.tsv" --train "$data/pairs_tiny.tsv" --alignments "$out/align.jsonl" \
    --beam 2 --examples 5 --json "$out/report.json" --hyps "$out/hyps" > "$out/eval.out" 2> "$out/eval.err" ||
    { cat "$out/eval.out" "$out/eval.err"; exit 1; }
cat "$out/eval.out"
for want in "en-zh (20 pairs; BLEU tokenizer zh)" "zh-en (20 pairs; BLEU tokenizer 13a)" "held-out cross-entropy" \
            "greedy     chrF" "beam 2     chrF" "retrieval  chrF" "best head L" "best layer head-average L"; do
    grep -qF "$want" "$out/eval.out" || { echo "eval output lacks: $want"; exit 1; }
done
grep -q "eval en-zh: 20/20 pairs" "$out/eval.err" || { echo "no progress on stderr"; cat "$out/eval.err"; exit 1; }
$py - "$out" <<'PY'
import json, math, sys
d = sys.argv[1]
r = json.load(open(d + "/report.json"))
for name in ("en-zh", "zh-en"):
    x = r["directions"][name]
    assert x["pairs"] == 20, x["pairs"]
    for s in ("greedy", "beam", "retrieval"):
        assert 0 <= x[s]["chrf"] <= 100 + 1e-9 and 0 <= x[s]["bleu"] <= 100 + 1e-9, (name, s, x[s])
        hyps = open(f"{d}/hyps/{name}.{s}.txt", encoding="utf-8", errors="replace").read().split("\n")[:-1]
        assert len(hyps) == 20, (name, s, len(hyps))
    # The test pairs are training pairs: retrieval finds each one itself, so it reproduces the references (BLEU
    # can still be 0: sacreBLEU gives 0 to a corpus with no 4-gram, as these 2-3 word English messages).
    assert x["retrieval"]["chrf"] > 99.9 and x["retrieval"]["mean_cosine"] > 0.999, x["retrieval"]
    assert x["held_out"]["cross_entropy_nats"] > 0 and math.isfinite(x["held_out"]["perplexity"])
    a = x["alignment_hits"]
    assert a["end_token_counted"] is False and a["counted_tokens"] > 0, a
    assert len(a["producing_step"]["per_layer_head"]) == 2 and len(a["producing_step"]["per_layer_head"][0]) == 4
    assert 0 <= a["producing_step"]["best_head"]["rate"] <= 1
    ex = x["examples"]
    assert len(ex) == 5 and all(k in ex[0] for k in ("source", "reference", "greedy", "beam", "retrieval")), ex[0]
print("eval report: ok")
PY

# Bad input: one line on stderr, non-zero exit.
fails() {  # fails REGEX CMD...
    local regex="$1"
    shift
    if "$@" > "$out/bad.out" 2> "$out/bad.err"; then echo "expected failure: $*"; exit 1; fi
    [ "$(wc -l < "$out/bad.err")" = 1 ] || { echo "expected one line on stderr for: $*"; cat "$out/bad.err"; exit 1; }
    grep -qE -- "$regex" "$out/bad.err" || { echo "stderr lacks /$regex/: $(cat "$out/bad.err")"; exit 1; }
}
fails "cannot read --pairs .*/missing.tsv" "$ts" eval --model "$out/model" --pairs "$out/missing.tsv"
fails "cannot read --train" "$ts" eval --model "$out/model" --pairs "$out/test.tsv" --train "$out/missing.tsv"
fails "cannot read alignment file" "$ts" eval --model "$out/model" --pairs "$out/test.tsv" --alignments "$out/nope"
fails "encoder-decoder model: evaluate it on pairs with --pairs" "$ts" eval --model "$out/model"
fails "--beam: expected a whole number from 1 to 16" "$ts" eval --model "$out/model" --pairs "$out/test.tsv" --beam 0
# Alignments made on other tokens (here: another test file) are refused, naming the line.
tail -n 5 "$data/pairs_tiny.tsv" > "$out/other.tsv"
fails "line 0 en-zh was aligned on other tokens" "$ts" eval --model "$out/model" --pairs "$out/other.tsv" \
    --alignments "$out/align.jsonl"
printf 'no tab here\n' > "$out/bad.tsv"
fails "no \"English<TAB>Chinese\" pair" "$ts" eval --model "$out/model" --pairs "$out/bad.tsv"
echo "eval translation: ok"
