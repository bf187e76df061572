#!/usr/bin/env bash
# Style check: every C++ line changed since the commit in .ci/format-base follows .clang-format (120 columns, 4-space
# indents; README "Layout"). Old lines nobody touched are not reformatted wholesale; a change formats what it writes.
# Fix a failure with: git clang-format-14 --binary clang-format-14 $(cat .ci/format-base)
set -euo pipefail
cd "$(dirname "$0")/.."
base=$(tr -d '[:space:]' < .ci/format-base)
if ! git cat-file -e "${base}^{commit}" 2>/dev/null; then
  echo "check_format: the base commit $base is not in this clone (shallow?): check skipped"
  exit 0
fi
out=$(git clang-format-14 --binary clang-format-14 --diff --extensions c,cpp,h "$base" -- app core tests 2>&1) || true
case "$out" in
  *"no modified files to format"*|*"did not modify any files"*|"") echo "check_format: changed lines are formatted"; exit 0 ;;
esac
echo "check_format: lines changed since $base do not follow .clang-format:" >&2
echo "$out" | head -200 >&2
exit 1
