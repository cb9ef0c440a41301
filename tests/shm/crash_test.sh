#!/bin/bash
# crash_test.sh MPIEXEC SHM_CRASH MODE [LIMIT_MS]: runs a 2-rank job in
# which rank 1 dies while rank 0 waits for a large message, and checks that
#  - the job fails and ends within LIMIT_MS (default 5000; sanitized
#    builds pass more) of the death: seconds, so a loaded machine passes,
#    yet far below the job's own 30 s timeout (a hang fails),
#  - the launcher says which rank died and how,
#  - (watch) rank 0's own channel noticed: its wait failed naming the rank,
#    and a later send to it failed,
#  - /dev/shm holds nothing of the job afterwards.
set -u
mpiexec=$1 prog=$2 mode=$3 limit_ms=${4:-5000}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

if [ "$mode" = orphan ]; then
  # kill -9 of the launcher: its ranks must notice and exit by themselves.
  "$mpiexec" -n 2 --timeout 30 "$prog" orphan >"$out" 2>&1 &
  launcher=$!
  for ((i = 0; i < 100 && $(grep -c WAITING "$out") < 2; i++)); do sleep 0.05; done
  ranks=$(pgrep -P "$launcher" | tr '\n' ' ')
  [ -n "$ranks" ] || fail "no ranks started"
  kill -9 "$launcher"
  start=$(date +%s%N)
  # Exited ranks may stay zombies until their new parent (init) reaps them.
  alive() { for p in $ranks; do [ -r /proc/$p/stat ] && [ "$(cut -d' ' -f3 /proc/$p/stat)" != Z ] && return 0; done; return 1; }
  while alive; do
    (( ($(date +%s%N) - start) / 1000000 < 3 * limit_ms )) || { kill -9 $ranks; fail "ranks $ranks outlived their launcher by $((3 * limit_ms)) ms"; }
    sleep 0.02
  done
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  echo "ranks exited ${ms} ms after the launcher was killed"
  [ "$ms" -lt "$limit_ms" ] || fail "that took ${ms} ms (>= ${limit_ms} ms)"
  echo PASS
  exit 0
fi

"$mpiexec" -n 2 --timeout 30 "$prog" "$mode" >"$out" 2>&1
status=$?
end=$(date +%s%N)
cat "$out"

[ "$status" -ne 124 ] || fail "the job hit the launcher's timeout"
die_at=$(sed -n 's/^DIE_AT \([0-9]*\).*/\1/p' "$out" | head -1)
[ -n "$die_at" ] || fail "rank 1 never reached the point of death"
if [ "$mode" = watch ]; then
  # Nobody stops this job: rank 0's channel must notice by itself.
  seen=$(sed -n 's/^DETECTED_AT \([0-9]*\).*/\1/p' "$out" | head -1)
  [ -n "$seen" ] || fail "rank 0's channel did not report the dead peer"
  ms=$(( (seen - die_at) / 1000000 ))
  echo "rank 0 noticed ${ms} ms after rank 1 died"
else
  [ "$status" -ne 0 ] || fail "the job exited 0"
  ms=$(( (end - die_at) / 1000000 ))
  echo "job ended ${ms} ms after rank 1 died"
fi
[ "$ms" -lt "$limit_ms" ] || fail "that took ${ms} ms (>= ${limit_ms} ms)"

case $mode in
  abort) grep -q "rank 1 (pid [0-9]*) called abort with code 7" "$out" || fail "no report of the abort"
         grep -q "deliberate abort" "$out" || fail "the abort message was not shown" ;;
  kill9) grep -q "rank 1 (pid [0-9]*) killed by signal" "$out" || fail "no report of the kill" ;;
  watch) grep -q "DETECTED_AT [0-9]*: .*rank 1 (pid [0-9]*) exited" "$out" ||
           fail "rank 0's channel did not report the dead peer"
         grep -q "SEND_AFTER 1: " "$out" || fail "a send to the dead rank did not fail" ;;
esac

job=$(sed -n 's/^JOB 0 \(.*\)$/\1/p' "$out" | head -1)
[ -n "$job" ] || fail "no job id printed"
left=$(ls /dev/shm 2>/dev/null | grep -c -- "^adi3-$job-")
[ "$left" -eq 0 ] || fail "$left segment(s) of job $job left in /dev/shm"
echo "PASS"
