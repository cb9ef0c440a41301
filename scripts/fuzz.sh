#!/usr/bin/env bash
# Runs every libFuzzer target of build/fuzz (preset fuzz: clang, ASan+UBSan)
# for a bounded time, starting from its corpus in tests/fuzz/corpus/<name>.
# New inputs go to a temporary directory (the repo's corpus is only read);
# a crash leaves its input in build/fuzz/findings/ and fails the script.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET]     (default ADI3_FUZZ_SECONDS or 30)
#   scripts/fuzz.sh --merge                  (adds what a long run found to the corpus)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/fuzz/bin
targets=$(ls "$bin"/fuzz_* 2>/dev/null || true)
[ -n "$targets" ] || { echo "fuzz.sh: no targets in $bin (cmake --preset fuzz && cmake --build --preset fuzz)"; exit 1; }
mkdir -p build/fuzz/findings
if [ "${1:-}" = --merge ]; then
  for t in $targets; do
    name=${t##*/fuzz_}
    [ -d "build/fuzz/new/$name" ] && "$t" -merge=1 "tests/fuzz/corpus/$name" "build/fuzz/new/$name"
  done
  exit 0
fi
secs=${1:-${ADI3_FUZZ_SECONDS:-30}}
status=0
for t in $targets; do
  name=${t##*/fuzz_}
  new=build/fuzz/new/$name
  mkdir -p "$new" "tests/fuzz/corpus/$name"
  log=build/fuzz/$name.log
  echo "=== fuzz: $name for ${secs}s ==="
  # The device target reports every refused packet on stderr, and leaves
  # requests in flight at the end of an input (the device is destroyed
  # without finalize): its stderr is closed and leaks are not checked.
  opts=()
  [ "$name" = packets ] && opts=(-close_fd_mask=2 -detect_leaks=0)
  if "$t" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix=build/fuzz/findings/"$name"- "${opts[@]}" \
      "$new" "tests/fuzz/corpus/$name" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    echo "$name: $runs executions, $cov, no finding"
  else
    tail -40 "$log"
    echo "FAIL: $name found a crash or a failed check; input in build/fuzz/findings/"
    status=1
  fi
done
exit $status
