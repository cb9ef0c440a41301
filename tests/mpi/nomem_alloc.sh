#!/bin/bash
# nomem_alloc.sh MPIEXEC PROGRAM PRELOAD [POINTS]
# Out-of-memory sweep: runs tests/mpi/nomem_alloc.c on two ranks under the
# malloc interposer PRELOAD (tests/mpi/failalloc.c). A first run counts the
# allocations of rank 0's workload; then POINTS runs (default 24), each
# failing one allocation n spread over that range, alternately on rank 0
# and rank 1 (their counts are alike). Every run must end (no timeout) with
# status 0 or 7, the failing rank must print DONE or NOMEM (its call
# returned MPI_ERR_NO_MEM; or its peer's call reports that it refused
# an operation for want of memory), and no rank may crash, report another error
# class or see other data than was sent; an MPI_ERR_NO_MEM message must
# say "rank R: out of memory allocating <what> (...) in MPI_Xxx". Prints a
# line per run and a summary (runs that ended with MPI_ERR_NO_MEM, that
# completed, that crashed, that failed otherwise); exit status 0 when every
# run passed. NOMEM_PARTS (see nomem_alloc.c) passes through. With
# NOMEM_PARTS=handles it instead fails each of the first 8 allocations from
# the 1025th MPI_Irecv on (where the request pool, which MPI_Request handles
# name directly, grows) and wants one of them to be the pool's, every
# receive accounted for.
set -u
mpiexec=$1 prog=$2 preload=$3 points=${4:-24}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
run() {  # run FAILRANK AT
  FAILALLOC_RANK=$1 FAILALLOC_AT=$2 LD_PRELOAD=$preload "$mpiexec" -n 2 --timeout 30 "$prog" >"$out" 2>&1
}
if [ "${NOMEM_PARTS:-}" = handles ]; then
  table=0 failed=0
  for at in 1 2 3 4 5 6 7 8; do
    run 0 "$at"
    status=$?
    if [ "$status" -ne 0 ] || [ "$(grep -c '^DONE' "$out")" -ne 2 ]; then
      echo "allocation $at after handle 1024: FAIL (status $status)"
      cat "$out"
      failed=$((failed + 1))
      continue
    fi
    if grep -q '^ABSORBED 0 .*out of memory allocating a request for a receive' "$out"; then
      table=$((table + 1))
      echo "allocation $at after handle 1024: the request pool could not grow; the receive was not posted and its message was received later"
    else
      echo "allocation $at after handle 1024: $(grep -m1 '^ABSORBED' "$out" | cut -c1-120)"
    fi
  done
  echo "request-pool sweep: $table runs failed the pool's growth, $failed failed"
  [ "$failed" -eq 0 ] && [ "$table" -ge 1 ] && echo PASS
  [ "$failed" -eq 0 ] && [ "$table" -ge 1 ]
  exit
fi
run 0 999999999
status=$?
total=$(sed -n 's/^ALLOCS \([0-9]*\)$/\1/p' "$out")
if [ "$status" -ne 0 ] || [ -z "$total" ] || [ "$(grep -c '^DONE' "$out")" -ne 2 ]; then
  echo "FAIL: the counting run did not finish (status $status)"
  cat "$out"
  exit 1
fi
echo "rank 0 makes $total allocations in the workload"
failed=0 nomem=0 done_=0 crashed=0
for ((i = 0; i < points; i++)); do
  at=$(( 1 + i * (total - 1) / (points > 1 ? points - 1 : 1) ))
  r=$(( i % 2 ))
  run "$r" "$at"
  status=$?
  why=""
  [ "$status" -eq 0 ] || [ "$status" -eq 7 ] || why+=" status $status;"
  ! grep -q '^WRONG\|^CORRUPT' "$out" || why+=" $(grep -m1 '^WRONG\|^CORRUPT' "$out");"
  if grep -q 'killed by signal' "$out" || [ "$status" -ge 128 ]; then
    why+=" a rank crashed;"
    crashed=$((crashed + 1))
  fi
  bad=$(grep "^NOMEM $r " "$out" | grep -v 'MPI_T_' | grep -v "rank $r: out of memory allocating .* in MPI_" | head -1)
  [ -z "$bad" ] || why+=" the message does not say what was allocated where: $bad;"
  if grep -q "^NOMEM $r " "$out"; then
    nomem=$((nomem + 1))
    what=$(sed -n "s/^NOMEM $r line [0-9]* \([A-Za-z_]*\).*/\1/p" "$out" | head -1)
    msg="$what returned MPI_ERR_NO_MEM"
  elif grep -q "^DONE $r" "$out"; then
    done_=$((done_ + 1))
    msg="completed (the failure was absorbed)"
  elif grep -q "^PEER $((1 - r)) .*MPI_ERR_NO_MEM: rank $r .*out of memory" "$out"; then
    # The failing rank ran out while applying its peer's one-sided
    # operation and refused it; the peer's call said so and ended the job
    # before the failing rank reached its own next check.
    nomem=$((nomem + 1))
    msg="refused the peer's operation (the peer got MPI_ERR_NO_MEM)"
  else
    why+=" rank $r printed neither NOMEM nor DONE;"
  fi
  if [ -n "$why" ]; then
    echo "allocation $at of rank $r: FAIL:$why"
    cat "$out"
    failed=$((failed + 1))
  else
    echo "allocation $at of rank $r: $msg"
  fi
done
echo "out-of-memory sweep (${NOMEM_PARTS:-all parts}): $points runs over $total allocations, $nomem ended with MPI_ERR_NO_MEM, $done_ completed, $crashed crashed, $failed failed"
[ "$failed" -eq 0 ] && echo PASS
[ "$failed" -eq 0 ]
