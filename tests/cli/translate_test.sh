#!/usr/bin/env bash
# CLI test of `translate` and `trace` on encoder-decoder models. Trains its own tiny model first (1-2 s): the
# tokenizer and config of tests/cli/train_pairs_test.sh, 400 steps without dropout or label smoothing, which
# memorizes tests/cli/data/pairs_tiny.tsv. Checks: training pairs translate back exactly both ways (greedy and beam
# search, the direction guessed or given by --to), one output line per input line (empty lines stay empty),
# --max-len bounds the steps --show-steps prints, trace --translate holds the greedy translation (each logits row's
# best producible token is the next target token, the text equals `translate`'s), trace --source/--target shapes,
# and a folder without translation.json fails with one line. Then a Hugging Face BART folder (the golden fixture's
# random weights with a byte-level BPE tokenizer.json trained here): one line per input line, --to ignored with a
# note, trace --translate greedy-consistent with the checkpoint's own start/end/pad ids, no tokenizer -> one line.
# Usage: translate_test.sh TRANSFORMER_STUDIO OUT_DIR
set -euo pipefail
ts="$1"
out="$2"
data="$(cd "$(dirname "$0")" && pwd)/data"
rm -rf "$out"
mkdir -p "$out"
fail() { echo "FAIL: $*"; exit 1; }

bash "$(dirname "$0")/train_tiny_translation_model.sh" "$ts" "$out"
tail -1 "$out/train.log"
model="$out/model"

# --- memorized pairs translate back, both ways ---
head -6 "$data/pairs_tiny.tsv" | cut -f1 > "$out/en.txt"
head -6 "$data/pairs_tiny.tsv" | cut -f2 > "$out/zh.txt"
for opts in "" "--beam 3" "--beam 4 --length-penalty 0.6"; do
    # shellcheck disable=SC2086
    "$ts" translate --model "$model" $opts < "$out/en.txt" > "$out/o.txt"
    diff "$out/o.txt" "$out/zh.txt" || fail "en -> zh ($opts) does not reproduce the training pairs"
    # shellcheck disable=SC2086
    "$ts" translate --model "$model" $opts < "$out/zh.txt" > "$out/o.txt"
    diff "$out/o.txt" "$out/en.txt" || fail "zh -> en ($opts) does not reproduce the training pairs"
done
"$ts" translate --model "$model" --to zh --text "$(head -1 "$out/en.txt")" > "$out/o.txt"
diff "$out/o.txt" <(head -1 "$out/zh.txt") || fail "--to zh"

# --- one line out per line in, empty lines kept ---
printf 'Open the file\n\n打开文件\nSave as\n' > "$out/in.txt"
for opts in "" "--beam 3 --length-penalty 0.6" "--to zh" "--beam 2 --max-len 3"; do
    # shellcheck disable=SC2086
    "$ts" translate --model "$model" $opts < "$out/in.txt" > "$out/o.txt"
    n=$(wc -l < "$out/o.txt")
    [ "$n" = 4 ] || fail "translate $opts: $n output lines for 4 input lines"
    [ -z "$(sed -n 2p "$out/o.txt")" ] || fail "translate $opts: empty input line gave '$(sed -n 2p "$out/o.txt")'"
done
"$ts" translate --model "$model" --text "$(printf 'a\n\nb')" > "$out/o.txt"
[ "$(wc -l < "$out/o.txt")" = 3 ] || fail "--text with two newlines should give 3 lines"

# --- --show-steps: at most --max-len steps, then a summary line ---
"$ts" translate --model "$model" --text "Open folder" --max-len 3 --show-steps > "$out/steps.txt"
cat "$out/steps.txt"
steps=$(grep -c '^  step ' "$out/steps.txt" || true)
[ "$steps" -ge 1 ] && [ "$steps" -le 3 ] || fail "--max-len 3 printed $steps steps"
grep -Eq '^  (finished|cut at --max-len), log p = -?[0-9.]+, score = -?[0-9.]+$' "$out/steps.txt" || fail "no summary line"
grep -Eq "^  step 1: '.*' p=[0-9.]+   top: '.*' [0-9.]+ \| '" "$out/steps.txt" || fail "step line format"

# --- trace --translate: the traced target is the greedy translation ---
"$ts" translate --model "$model" --text "Open folder" --to zh --max-len 12 > "$out/greedy.txt"
"$ts" trace --model "$model" --source "Open folder" --to zh --translate --max-len 12 \
    --out "$out/tr.safetensors" 2> "$out/tr.log" || { cat "$out/tr.log"; fail "trace --translate"; }
cat "$out/tr.log"
"$ts" trace --model "$model" --source "Open the file" --target "打开文件" --out "$out/tf.safetensors" 2> "$out/tf.log" \
    || { cat "$out/tf.log"; fail "trace --source --target"; }
/usr/bin/python3 - "$model" "$out" <<'PY'
import json, struct, sys
model, out = sys.argv[1], sys.argv[2]

def load(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    t = {}
    for name, info in header.items():
        a, b = info["data_offsets"]
        vals = struct.unpack("<%df" % ((b - a) // 4), data[a:b])
        t[name] = (info["shape"], vals)
    return t, meta

vocab = {t["content"]: t["id"] for t in json.load(open(model + "/tokenizer.json"))["added_tokens"]}
spec = json.load(open(model + "/translation.json"))
end, start, pad = vocab[spec["target_end"]], vocab[spec["decoder_start"]], vocab[spec["pad"]]
banned = {pad} | {vocab[v] for v in spec.get("target_language_tokens", {}).values()}

t, meta = load(out + "/tr.safetensors")
src = [int(v) for v in t["source_ids"][1]]
tgt = [int(v) for v in t["target_ids"][1]]
(rows, V), logits = t["logits"]
assert src[0] == vocab["<2zh>"] and src[-1] == end, src
assert tgt[0] == start and rows == len(tgt), (tgt, rows)
assert t["enc.out"][0][0] == len(src), t["enc.out"][0]
def best(i):
    row = logits[i * V:(i + 1) * V]
    return max((v for v in range(V) if v not in banned), key=lambda v: (row[v], -v))
for i in range(rows - 1):
    assert best(i) == tgt[i + 1], (i, best(i), tgt)
if len(tgt) - 1 < 12:  # finished before max_len: the last row predicts the end token
    assert best(rows - 1) == end, (best(rows - 1), end)
greedy = open(out + "/greedy.txt", encoding="utf-8", errors="surrogateescape").read().rstrip("\n")
assert meta["translation"] == greedy == "打开文件夹", (meta["translation"], greedy)
assert len(tgt) >= 3, tgt
print("trace --translate: %d target tokens, greedy-consistent, text %r" % (len(tgt) - 1, greedy))

t, meta = load(out + "/tf.safetensors")
tgt = [int(v) for v in t["target_ids"][1]]
assert tgt[0] == start and len(tgt) >= 2 and t["logits"][0][0] == len(tgt), (tgt, t["logits"][0])
assert "translation" not in meta
print("trace --source --target: %d source, %d decoder positions" % (len(t["source_ids"][1]), len(tgt)))
PY

# --- a folder without translation.json: one line, non-zero exit ---
mkdir -p "$out/no_spec"
cp "$model/config.json" "$model/model.safetensors" "$model/tokenizer.json" "$out/no_spec/"
if "$ts" translate --model "$out/no_spec" --text hi > /dev/null 2> "$out/err.txt"; then fail "no translation.json: exit 0"; fi
cat "$out/err.txt"
[ "$(wc -l < "$out/err.txt")" = 1 ] || fail "no translation.json: expected one stderr line"
grep -q "translation.json: cannot open" "$out/err.txt" || fail "no translation.json: message"
# --- a Hugging Face encoder-decoder folder (BART: <s> before the source, decoder_start = eos = 2, pad = 1) ---
hf="$out/hf_bart"
mkdir -p "$hf"
cp "$(dirname "$0")/../golden/hf_bart/config.json" "$(dirname "$0")/../golden/hf_bart/model.safetensors" "$hf/"
cut -f1,2 "$data/pairs_tiny.tsv" | tr '\t' '\n' > "$out/hf_text.txt"
"$ts" tokenizer train --input "$out/hf_text.txt" --vocab-size 300 --out "$hf/" > /dev/null
printf 'Open the file\n\nSave as\n' | "$ts" translate --model "$hf" --max-len 6 > "$out/hf.txt" 2> "$out/hf.err" \
    || { cat "$out/hf.err"; fail "translate with a BART folder"; }
[ "$(wc -l < "$out/hf.txt")" = 3 ] && [ -z "$(sed -n 2p "$out/hf.txt")" ] || fail "BART folder: one line per input line"
"$ts" translate --model "$hf" --to zh --text "Open" --max-len 4 > /dev/null 2> "$out/hf_to.err" || fail "BART --to"
grep -q "to is ignored" "$out/hf_to.err" || fail "BART --to: no note"
"$ts" translate --model "$hf" --text "Open the file" --max-len 6 > "$out/hf_greedy.txt"
"$ts" trace --model "$hf" --source "Open the file" --translate --max-len 6 --out "$out/hf_tr.safetensors" \
    2> "$out/hf_tr.log" || { cat "$out/hf_tr.log"; fail "trace --translate with a BART folder"; }
/usr/bin/python3 - "$out" <<'PY'
import json, struct, sys
out = sys.argv[1]
with open(out + "/hf_tr.safetensors", "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    data = f.read()
meta = header.pop("__metadata__", {})
t = {k: (v["shape"], struct.unpack("<%df" % ((v["data_offsets"][1] - v["data_offsets"][0]) // 4),
                                    data[v["data_offsets"][0]:v["data_offsets"][1]])) for k, v in header.items()}
src = [int(v) for v in t["source_ids"][1]]
tgt = [int(v) for v in t["target_ids"][1]]
(rows, V), logits = t["logits"]
bos, eos, pad = 0, 2, 1  # tests/golden/hf_bart/config.json
assert src[0] == bos and src[-1] == eos and len(src) > 2, src
assert tgt[0] == eos and rows == len(tgt), (tgt, rows)
best = lambda i: max((v for v in range(V) if v != pad), key=lambda v: (logits[i * V + v], -v))
for i in range(rows - 1):
    assert best(i) == tgt[i + 1], (i, best(i), tgt)
greedy = open(out + "/hf_greedy.txt", encoding="utf-8", errors="surrogateescape").read().rstrip("\n")
assert meta["translation"] == greedy, (meta["translation"], greedy)
print("BART folder: trace --translate greedy-consistent over %d steps" % (rows - 1))
PY
mkdir -p "$out/hf_no_tok"
cp "$hf/config.json" "$hf/model.safetensors" "$out/hf_no_tok/"
if "$ts" translate --model "$out/hf_no_tok" --text hi > /dev/null 2> "$out/err2.txt"; then fail "no tokenizer: exit 0"; fi
cat "$out/err2.txt"
[ "$(wc -l < "$out/err2.txt")" = 1 ] && grep -q "no usable tokenizer" "$out/err2.txt" || fail "no tokenizer: message"
echo "translate CLI: ok"
