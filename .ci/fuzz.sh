#!/usr/bin/env bash
# Builds the `fuzz` preset (clang 14, libFuzzer + ASan + UBSan) and runs every fuzz target for a fixed time on its
# committed seed corpus (tests/fuzz/corpus/<target>), two at a time (one per core). New inputs go to a scratch
# corpus under build/fuzz/, never into the repository; a crash leaves its input in build/fuzz/artifacts/ and fails.
#   bash .ci/fuzz.sh              60 s per target (what CI runs)
#   bash .ci/fuzz.sh 600          the long run (>= 10 min per target) whose results go in the issue notes
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
targets=()
for f in tests/fuzz/fuzz_*.cpp; do targets+=("$(basename "$f" .cpp)"); done
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target "${targets[@]}"  # only what the targets link (not ts_train, ts_eval)
mkdir -p build/fuzz/artifacts build/fuzz/scratch
passed=0 failed=0
run_one() {
  local t=$1 scratch=build/fuzz/scratch/$1
  mkdir -p "$scratch"
  # -rss_limit_mb / -malloc_limit_mb: an input that allocates gigabytes is a finding, as is one that takes > 10 s.
  build/fuzz/tests/fuzz/"$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -print_final_stats=1 -artifact_prefix=build/fuzz/artifacts/"$t"- "$scratch" tests/fuzz/corpus/"$t" \
    > build/fuzz/"$t".log 2>&1
}
i=0
while [ $i -lt ${#targets[@]} ]; do
  pids=()
  for t in "${targets[@]:$i:2}"; do run_one "$t" & pids+=("$!:$t"); done
  for p in "${pids[@]}"; do
    if wait "${p%%:*}"; then
      passed=$((passed + 1))
      echo "fuzz ${p#*:}: ok ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' build/fuzz/"${p#*:}".log | grep -o '[0-9]*$') runs in ${seconds} s)"
    else
      failed=$((failed + 1))
      echo "fuzz ${p#*:}: FAILED; its log:"
      tail -40 build/fuzz/"${p#*:}".log
      echo "reproduce: build/fuzz/tests/fuzz/${p#*:} build/fuzz/artifacts/${p#*:}-<file>"
    fi
  done
  i=$((i + 2))
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
