#!/bin/bash
# expect_run.sh [--fail] [--want REGEX]... -- COMMAND [ARGS...]
# Runs COMMAND, shows its output, and passes only if its exit status is the
# expected one (0, or with --fail any failure other than a timeout's 124)
# AND its output matches every REGEX (grep -E). ctest's PASS_REGULAR_EXPRESSION
# alone would ignore the exit status.
set -u
expect_fail=0
wants=()
while [ $# -gt 0 ]; do
  case $1 in
    --fail) expect_fail=1; shift ;;
    --want) wants+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "expect_run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$@" >"$out" 2>&1
status=$?
cat "$out"
[ $status -eq 77 ] && { echo "SKIPPED (exit status 77)"; exit 77; }  # a skipping command stays skipped
if [ $expect_fail = 1 ]; then
  [ $status -ne 0 ] || { echo "FAIL: exited 0, a failure was expected"; exit 1; }
  [ $status -ne 124 ] || { echo "FAIL: timed out (status 124)"; exit 1; }
else
  [ $status -eq 0 ] || { echo "FAIL: exit status $status"; exit 1; }
fi
for w in "${wants[@]}"; do
  grep -Eq -- "$w" "$out" || { echo "FAIL: the output does not match: $w"; exit 1; }
done
echo "PASS (exit status $status)"
