#!/usr/bin/env bash
# GGUF forward speed against llama.cpp on the same files, same run. Makes GPT-2-small-shaped synthetic files
# (tests/bench/make_synthetic_gguf.py --shape gpt2; Q8_0, Q4_0, and Q4_K_M) in BUILD/bench-gguf, then times
#  - llama.cpp: llama_decode of T tokens, last position's logits (tests/reference/llama_cpp_reference.c, bench mode)
#  - ours: BM_GgufForward (tests/bench/gguf_bench.cpp), recording every intermediate, last position's logits
# at T = 64 and 256, 1 and 2 threads. llama.cpp comes from the test set-up (BUILD/testdata/llama_cpp) or npm.
# With "long" (#30): an F32 file of the same shape at T = 1024 and 4096 on 2 threads, llama.cpp with flash attention
# off and on against BM_GgufLongForward (nothing recorded, and what the app's Attention tab keeps of a long text).
#   usage: tests/bench/gguf_bench.sh [BUILD] [long]     (default build/release; ts_bench must be built)
set -euo pipefail
build=${1:-build/release}
mode=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ll="$build/testdata/llama_cpp"
[ -x "$ll/llama_cpp_reference" ] || bash "$root/tests/reference/llama_cpp_reference.sh" "$ll" "$build/testdata"
[ -x "$ll/llama_cpp_reference" ] || { echo "gguf_bench: llama.cpp is not available" >&2; exit 1; }
out="$build/bench-gguf"
mkdir -p "$out"
if [ "$mode" = long ]; then
  f="$out/gpt2-shape-F32.gguf"
  [ -f "$f" ] || /usr/bin/python3 "$here/make_synthetic_gguf.py" "$ll/llama.cpp" "$f" --shape gpt2 --type F32 >/dev/null
  echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  for T in 1024 4096; do
    for fl in "" flash; do
      # shellcheck disable=SC2086
      "$ll/llama_cpp_reference" "$ll/llama.cpp/lib" bench "$f" "$T" 2 3 $fl
    done
  done
  TS_GGUF_BENCH="$f" "$build/tests/ts_bench" --benchmark_filter='BM_GgufLongForward'
  exit 0
fi
files=()
for t in Q8_0 Q4_0 Q4_K_M; do
  f="$out/gpt2-shape-$t.gguf"
  [ -f "$f" ] || /usr/bin/python3 "$here/make_synthetic_gguf.py" "$ll/llama.cpp" "$f" --shape gpt2 --type "$t" >/dev/null
  files+=("$f")
done
echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
for f in "${files[@]}"; do
  for T in 64 256; do
    for th in 1 2; do "$ll/llama_cpp_reference" "$ll/llama.cpp/lib" bench "$f" "$T" "$th" 9; done
  done
done
TS_GGUF_BENCH=$(IFS=:; echo "${files[*]}") "$build/tests/ts_bench" --benchmark_filter='BM_GgufForward/file:[012]/' \
  --benchmark_min_time=1
