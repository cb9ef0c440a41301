#!/bin/bash
# kill_test.sh MPIEXEC FAULT_VICTIM [RUNS] [RANKS] [MODES]
# Fault injection: RUNS jobs of RANKS ranks (default 8 and 4), cycling over
# MODES (default "eager rndv coll greq"; also "fence lock pscw flush": RMA
# epochs; "token cfence clock io": a blocking receive, epochs on created
# windows, collective file writes; scripts/faults.sh runs them all). In each, once every rank has done
# a round, one random rank is killed with SIGKILL at a random moment (0-300
# ms later) in the middle of its traffic. Each run must:
#  - end (mpiexec exits) within 2 s of the kill, with a non-zero status;
#  - have the launcher name the killed rank and the signal (or a surviving
#    rank report the failure itself first);
#  - corrupt nothing (every byte the victims received was checked);
#  - leave nothing of the job in /dev/shm.
# With FAULT_PEERS=1 the launcher is paused (SIGSTOP) from just before the
# kill until FAULT_PEERS_MS (default 2000) after it, so it cannot stop the
# job: then every surviving rank must fail by itself with a clear error
# ("DETECTED <rank> at <ms>: <error>") within that time, and the job end is
# not timed, but the time to the last surviving rank's error is reported.
# (In lock and flush modes the native window's memory of a dead rank stays
# mapped: its flush, unlock and lock fail because they ask whether the
# target lives; lock mode locks every rank in turn, flush mode flushes all.)
# Prints one line per run and a summary (the end times and how many
# surviving ranks reported the failure themselves before being stopped).
set -u
mpiexec=$1 victim=$2 runs=${3:-8} np=${4:-4}
read -r -a modes <<<"${5:-eager rndv coll greq}"
limit=${FAULT_PEERS_MS:-2000}
failed=0
times=()
detected=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
for ((i = 0; i < runs; i++)); do
  mode=${modes[i % ${#modes[@]}]}
  : >"$out"  # now, not in the background job: the wait below must not see the last run's lines
  "$mpiexec" -n "$np" --timeout 60 "$victim" "$mode" >"$out" 2>&1 &
  launcher=$!
  for ((w = 0; w < 500 && $(grep -c '^READY' "$out") < np; w++)); do sleep 0.02; done
  if [ "$(grep -c '^READY' "$out")" -lt "$np" ]; then
    echo "run $i ($mode): FAIL: the ranks did not start"; cat "$out"; kill -9 "$launcher" 2>/dev/null
    failed=$((failed + 1)); wait "$launcher" 2>/dev/null; continue
  fi
  read -r -a pids <<<"$(pgrep -P "$launcher" | tr '\n' ' ')"
  sleep "$(printf '0.%03d' $((RANDOM % 300)))"
  target=${pids[RANDOM % ${#pids[@]}]}
  peers=${FAULT_PEERS:-0}
  [ "$peers" = 1 ] && kill -STOP "$launcher"
  t0=$(now_ms)
  kill -9 "$target"
  if [ "$peers" = 1 ]; then
    sleep "$(printf '%d.%03d' $((limit / 1000)) $((limit % 1000)))"
    kill -CONT "$launcher"
  fi
  wait "$launcher"
  status=$?
  ms=$(( $(now_ms) - t0 ))
  job=$(sed -n 's/^JOB \(.*\)$/\1/p' "$out" | head -1)
  left=$(ls /dev/shm 2>/dev/null | grep -c -- "^adi3-$job-")
  rm -f "/tmp/adi3-fault-io-$job"  # io mode's file (deleted on close, never closed here)
  why=""
  [ "$status" -ne 0 ] || why+=" exited 0;"
  [ "$status" -ne 124 ] || why+=" hit the timeout;"
  if [ "$peers" = 1 ]; then
    # Every rank but the killed one reported its own failure, in time.
    killed=$(sed -n "s/^mpiexec: rank \([0-9]*\) (pid $target).*/\1/p" "$out" | head -1)
    late=$(awk -v t0="$t0" -v lim="$limit" '/^DETECTED [0-9]+ at [0-9]+:/ { if ($4 + 0 - t0 > lim) n++ } END { print n + 0 }' "$out")
    seen=$(awk -v k="$killed" '/^DETECTED / && $2 != k { r[$2] = 1 } END { print length(r) }' "$out")
    slowest=$(awk -v t0="$t0" '/^DETECTED [0-9]+ at [0-9]+:/ { d = $4 + 0 - t0; if (d > m) m = d } END { print m + 0 }' "$out")
    [ "$seen" -eq $((np - 1)) ] || why+=" only $seen of $((np - 1)) surviving ranks failed with an error of their own;"
    [ "$late" -eq 0 ] || why+=" $late report(s) later than $limit ms;"
    ms=$slowest  # reported as the time to the last surviving rank's error
  else
    [ "$ms" -lt 2000 ] || why+=" took ${ms} ms;"
  fi
  # Peers mode: the detection time, not the launcher's pause.
  times+=("$ms")
  # The launcher names the killed rank, unless a surviving rank reported
  # the failure (and exited) first, which stops the job just as well.
  grep -q "(pid $target) killed by signal 9" "$out" || grep -q '^DETECTED' "$out" || why+=" no report of the kill;"
  ! grep -q '^CORRUPT' "$out" || why+=" corrupt data;"
  [ "$left" -eq 0 ] || why+=" $left segment(s) left in /dev/shm;"
  self=$(grep -c '^DETECTED' "$out")
  detected=$((detected + self))
  if [ -n "$why" ]; then
    echo "run $i ($mode, pid $target): FAIL:$why"
    cat "$out"
    failed=$((failed + 1))
  else
    if [ "$peers" = 1 ]; then
      echo "run $i ($mode): every surviving rank failed with its own error, the last ${ms} ms after the kill; status $status"
    else
      echo "run $i ($mode): job ended ${ms} ms after the kill, status $status, $self rank(s) reported it themselves"
    fi
  fi
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
median=$(echo "$sorted" | sed -n "$(( (${#times[@]} + 1) / 2 ))p")
p99=$(echo "$sorted" | sed -n "$(( (${#times[@]} * 99 + 99) / 100 ))p")
max=$(echo "$sorted" | tail -1)
if [ "${FAULT_PEERS:-0}" = 1 ]; then
  echo "fault injection (launcher paused): $runs runs of $np ranks (${modes[*]}), $failed failed; last surviving rank's own error after the kill: median ${median} ms, p99 ${p99} ms, max ${max} ms; $detected surviving-rank reports"
else
  echo "fault injection: $runs runs of $np ranks (${modes[*]}), $failed failed; job end after the kill: median ${median} ms, p99 ${p99} ms, max ${max} ms; $detected surviving-rank reports"
fi
[ "$failed" -eq 0 ] && echo PASS
[ "$failed" -eq 0 ]
