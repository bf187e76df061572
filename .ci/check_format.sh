#!/usr/bin/env bash
# Style check: every C++ line changed since the commit in .ci/format-base follows .clang-format (120 columns, 4-space
# indents; docs/architecture.md). Old lines nobody touched are not reformatted wholesale, and a file that only moved
# counts only for the lines that changed in it (renames are detected). A change formats what it writes.
# Fix a failure with: bash .ci/check_format.sh --fix
set -euo pipefail
cd "$(dirname "$0")/.."
base=$(tr -d '[:space:]' < .ci/format-base)
if ! git cat-file -e "${base}^{commit}" 2>/dev/null; then
  echo "check_format: the base commit $base is not in this clone (shallow?): check skipped"
  exit 0
fi
changes() { git diff -U0 -M --no-color "$base" -- 'app/*.cpp' 'app/*.h' 'core/*.cpp' 'core/*.h' 'tests/*.cpp' 'tests/*.h' 'tests/*.c'; }
if [ "${1:-}" = "--fix" ]; then
  changes | clang-format-diff-14 -p1 -i -binary clang-format-14
  echo "check_format: changed lines formatted in place"
  exit 0
fi
out=$(changes | clang-format-diff-14 -p1 -binary clang-format-14)
if [ -z "$out" ]; then echo "check_format: changed lines are formatted"; exit 0; fi
echo "check_format: lines changed since $base do not follow .clang-format (bash .ci/check_format.sh --fix):" >&2
echo "$out" | head -200 >&2
exit 1
