#!/usr/bin/env bash
# Builds the `fuzz` preset (clang 14, libFuzzer + ASan + UBSan) and runs every fuzz target on its committed seed
# corpus (tests/fuzz/corpus/<target>), two at a time (one per core). New inputs go to a scratch corpus under
# build/fuzz/, never into the repository; a finding leaves its input in build/fuzz/artifacts/ and fails the script.
#   bash .ci/fuzz.sh        what CI runs: 100,000 inputs per target from a fixed seed (about 15-60 s each here), so
#                           a landing's result is reproducible rather than a matter of luck
#   bash .ci/fuzz.sh 600    the long run: 10 minutes per target from a random seed (results go in the issue notes)
set -euo pipefail
cd "$(dirname "$0")/.."
targets=()
for f in tests/fuzz/fuzz_*.cpp; do targets+=("$(basename "$f" .cpp)"); done
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target "${targets[@]}"  # only what the targets link (not ts_train, ts_eval)
if [ $# -ge 1 ]; then
  budget=(-max_total_time="$1")
  what="$1 s"
else
  budget=(-runs=100000 -seed=1 -max_total_time=300)
  what="100000 inputs, seed 1"
fi
mkdir -p build/fuzz/artifacts build/fuzz/scratch
passed=0 failed=0
run_one() {
  local t=$1 scratch=build/fuzz/scratch/$1
  rm -rf "$scratch" && mkdir -p "$scratch"  # each run starts from the committed seeds alone
  # -rss_limit_mb / -malloc_limit_mb: an input that allocates gigabytes is a finding, as is one that takes > 10 s.
  build/fuzz/tests/fuzz/"$t" "${budget[@]}" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -print_final_stats=1 -artifact_prefix=build/fuzz/artifacts/"$t"- "$scratch" tests/fuzz/corpus/"$t" \
    > build/fuzz/"$t".log 2>&1
}
i=0
while [ $i -lt ${#targets[@]} ]; do
  pids=()
  for t in "${targets[@]:$i:2}"; do run_one "$t" & pids+=("$!:$t"); done
  for p in "${pids[@]}"; do
    t=${p#*:}
    if wait "${p%%:*}"; then
      passed=$((passed + 1))
      runs=$(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' build/fuzz/"$t".log | grep -o '[0-9]*$')
      secs=$(grep -m1 -o 'Done [0-9]* runs in [0-9]* second' build/fuzz/"$t".log | grep -o 'in [0-9]*' | grep -o '[0-9]*' || true)
      echo "fuzz $t: ok ($runs runs${secs:+ in $secs s}; $what)"
    else
      failed=$((failed + 1))
      echo "fuzz $t: FAILED; its log:"
      tail -40 build/fuzz/"$t".log
      echo "reproduce: build/fuzz/tests/fuzz/$t build/fuzz/artifacts/$t-<file>"
    fi
  done
  i=$((i + 2))
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
