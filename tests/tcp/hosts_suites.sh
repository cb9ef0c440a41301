#!/usr/bin/env bash
# Runs many MPI programs, one after another, each as one job across the two
# "hosts" that hosts_test.sh --shell set up once (HOST_A, HOST_B, ...):
#   hosts_test.sh --shell bash hosts_suites.sh LAUNCHER MPIEXEC ENTRY...
# LAUNCHER: adi3 (MPIEXEC --launcher-exec "ip netns exec") or hydra
# (mpiexec.hydra -launcher rsh through netns_rsh.sh; MPIEXEC ignored).
# ENTRY: NAME:RANKS:PROGRAM[:VAR=VALUE] with RANKS 2 (1 per host), 3 (2 + 1)
# or 4 (2 x 2). A program fails by its exit status or by printing "check
# failed" / "Found N errors"; every failure is listed, with the output of
# the failed runs, and the script fails if any did (or if none ran).
set -uo pipefail
# For programs whose checks depend on the layout (tests/mpi/comm.c).
export ADI3_TEST_HOSTS=2
launcher=$1 mpiexec=$2
shift 2
[ $# -gt 0 ] || { echo "FAIL: no programs given"; exit 1; }
: "${HOST_A:?run under hosts_test.sh --shell}"
failed=() ran=0
for entry in "$@"; do
  IFS=: read -r name n prog env <<<"$entry"
  case $n in
    2) hosts="$HOST_A:1,$HOST_B:1" ;;
    3) hosts="$HOST_A:2,$HOST_B:1" ;;
    4) hosts="$HOST_A:2,$HOST_B:2" ;;
    *) echo "FAIL: $name: $n ranks (2, 3 or 4 across two hosts)"; failed+=("$name"); continue ;;
  esac
  start=${EPOCHREALTIME/./}
  if [ "$launcher" = hydra ]; then
    out=$(env ${env:+"$env"} MPIEXEC_TIMEOUT=120 mpiexec.hydra -n "$n" -hosts "$hosts" -launcher rsh \
      -launcher-exec "$HOST_RSH" -iface "$HOST_BRIDGE" "$prog" 2>&1)
  else
    out=$(env ${env:+"$env"} "$mpiexec" -n "$n" --hosts "$hosts" --launcher-exec "ip netns exec" --timeout 120 \
      "$prog" 2>&1)
  fi
  status=$?
  end=${EPOCHREALTIME/./}
  took=$(((end - start) / 1000))ms
  ran=$((ran + 1))
  if [ $status != 0 ] || grep -Eq "check failed|Found [0-9]+ errors" <<<"$out"; then
    echo "FAIL: $name on $n ranks ($hosts) under $launcher: status $status, ${took}"
    sed 's/^/    /' <<<"$out" | tail -40
    failed+=("$name")
  else
    echo "ok: $name on $n ranks ($hosts) under $launcher, ${took}"
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAIL: ${#failed[@]} of $ran programs failed under $launcher across hosts: ${failed[*]}"
  exit 1
fi
echo "PASS: $ran programs ran across two hosts under $launcher"
