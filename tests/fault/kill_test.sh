#!/bin/bash
# kill_test.sh MPIEXEC FAULT_VICTIM [RUNS] [RANKS] [MODES]
# Fault injection: RUNS jobs of RANKS ranks (default 8 and 4), cycling over
# MODES (default "eager rndv coll greq"; also "fence lock": RMA epochs). In each, once every rank has done
# a round, one random rank is killed with SIGKILL at a random moment (0-300
# ms later) in the middle of its traffic. Each run must:
#  - end (mpiexec exits) within 2 s of the kill, with a non-zero status;
#  - have the launcher name the killed rank and the signal (or a surviving
#    rank report the failure itself first);
#  - corrupt nothing (every byte the victims received was checked);
#  - leave nothing of the job in /dev/shm.
# Prints one line per run and a summary (the end times and how many
# surviving ranks reported the failure themselves before being stopped).
set -u
mpiexec=$1 victim=$2 runs=${3:-8} np=${4:-4}
read -r -a modes <<<"${5:-eager rndv coll greq}"
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
  t0=$(now_ms)
  kill -9 "$target"
  wait "$launcher"
  status=$?
  ms=$(( $(now_ms) - t0 ))
  times+=("$ms")
  job=$(sed -n 's/^JOB \(.*\)$/\1/p' "$out" | head -1)
  left=$(ls /dev/shm 2>/dev/null | grep -c -- "^adi3-$job-")
  why=""
  [ "$status" -ne 0 ] || why+=" exited 0;"
  [ "$status" -ne 124 ] || why+=" hit the timeout;"
  [ "$ms" -lt 2000 ] || why+=" took ${ms} ms;"
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
    echo "run $i ($mode): job ended ${ms} ms after the kill, status $status, $self rank(s) reported it themselves"
  fi
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
median=$(echo "$sorted" | sed -n "$(( (${#times[@]} + 1) / 2 ))p")
max=$(echo "$sorted" | tail -1)
echo "fault injection: $runs runs of $np ranks (${modes[*]}), $failed failed; job end after the kill: median ${median} ms, max ${max} ms; $detected surviving-rank reports"
[ "$failed" -eq 0 ] && echo PASS
[ "$failed" -eq 0 ]
