#!/bin/bash
# run_vs_peers.sh [BUILD_DIR]: adi3 over shm against Debian's MPICH and
# Open MPI on the same ping-pong (pingpong.cpp / pingpong_mpi.c), side by
# side. Every configuration runs REPEAT times; a cell is the best run
# (lowest latency, highest bandwidth), which filters out other load.
#
#   REPEAT=3 MAX=4194304 bench/pingpong/run_vs_peers.sh build/release
#
# On a shared machine, PRIO="chrt -f 5" runs the 2-rank benchmarks (all
# implementations alike) above other users' jobs; OPRIO does the same for
# the oversubscribed case, where only a time-sharing class makes sense
# (e.g. "chrt -r 5" or "nice -n -20"). PAUSE seconds separate the runs.
#
# Tables: latency and bandwidth between 2 pinned processes; the receive
# time of adi3 while the sender computes after its isend (overlap); and
# 4 ranks (two pairs) on the cores there are, unpinned, small messages.
set -u
build=${1:-build/release}
repeat=${REPEAT:-3}
max=${MAX:-4194304}
prio=${PRIO:-}
oprio=${OPRIO:-}
pause=${PAUSE:-1}
mpiexec=$build/bin/mpiexec
adi3=$build/bin/pingpong
mpich=$build/bin/pingpong_mpich
ompi=$build/bin/pingpong_openmpi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for f in "$mpiexec" "$adi3"; do
  [ -x "$f" ] || { echo "missing $f (build the pingpong and mpiexec targets)"; exit 1; }
done
have() { [ -x "$1" ]; }

# once NAME PREFIX COMMAND...: appends one run's table to $tmp/NAME
once() {
  local name=$1 pre=$2; shift 2
  $pre "$@" 2>/dev/null | grep -v '^#' | grep -v bytes >>"$tmp/$name"
  sleep "$pause"
}
# best NAME: "bytes lat bw" per size, best of the runs
best() {
  awk '{ if (!($1 in l) || $2 < l[$1]) l[$1] = $2; if ($3 > b[$1]) b[$1] = $3; seen[$1] = 1 }
       END { for (s in seen) printf "%d %.3f %.0f\n", s, l[s], b[s] }' "$tmp/$1" | sort -n
}
# table FIELD TITLE SKIP0: one row per size, one column per entry of names/labels
table() {
  local f=$1 title=$2 skip0=$3 files=()
  for n in "${names[@]}"; do best "$n" >"$tmp/$n.best"; files+=("$tmp/$n.best"); done
  printf "%10s |" "bytes"; for l in "${labels[@]}"; do printf " %11s" "$l"; done; printf "   %s\n" "$title"
  awk -v f="$f" -v k="${#files[@]}" -v skip0="$skip0" '
    FNR == 1 { i++ }
    { v[$1, i] = $f; if (!($1 in seen)) { seen[$1] = 1; sizes[++m] = $1 } }
    END {
      for (j = 1; j <= m; j++) {
        if (skip0 && sizes[j] == 0) continue
        line = sprintf("%10s |", sizes[j])
        for (c = 1; c <= k; c++) line = line sprintf(" %11s", ((sizes[j], c) in v) ? v[sizes[j], c] : "-")
        print line
      }
    }' "${files[@]}" | sort -n
}

# Repeats go round the configurations, so a burst of outside load hits
# several of them rather than every run of one.
args=(--max "$max")
names=(adi3 adi3cma); labels=("adi3" "adi3-CMA")
have "$mpich" && { names+=(mpich); labels+=("MPICH"); }
have "$ompi" && { names+=(ompi); labels+=("OpenMPI"); }
for ((i = 0; i < repeat; i++)); do
  once adi3 "$prio" "$mpiexec" -n 2 "$adi3" "${args[@]}"
  once adi3cma "$prio" env ADI3_SHM_CMA=2 ADI3_SHM_CMA_MIN=0 "$mpiexec" -n 2 "$adi3" "${args[@]}"
  have "$mpich" && once mpich "$prio" mpiexec.mpich -n 2 "$mpich" "${args[@]}"
  have "$ompi" && once ompi "$prio" mpirun.openmpi -n 2 "$ompi" "${args[@]}"
done
echo "== 2 processes on separate cores, best of $repeat (adi3: CMA when the sender is away;"
echo "   adi3-CMA: single copy for every rendezvous, like Open MPI's default)"
table 2 "half round trip, us" 0
echo
table 3 "MB/s, window of 64" 1

echo
echo "== adi3: receive time (us) while the sender computes 5 ms after its isend"
names=(ov_adapt ov_pipe ov_cma); labels=("adaptive" "no-CMA" "always-CMA")
ov=(--overlap 5000 --min 262144 --max 16777216)
for ((i = 0; i < repeat; i++)); do
  once ov_adapt "$prio" "$mpiexec" -n 2 "$adi3" "${ov[@]}"
  once ov_pipe "$prio" env ADI3_SHM_CMA=0 "$mpiexec" -n 2 "$adi3" "${ov[@]}"
  once ov_cma "$prio" env ADI3_SHM_CMA=2 "$mpiexec" -n 2 "$adi3" "${ov[@]}"
done
table 2 "us" 0

echo
echo "== 4 ranks (pairs 0-1, 2-3) on $(nproc) cores, unpinned, timed until both pairs finish"
small=(--max 64 --lat-only --no-pin --iters 20000)
names=(o_adi3); labels=("adi3")
have "$mpich" && { names+=(o_mpich); labels+=("MPICH"); }
have "$ompi" && { names+=(o_ompi); labels+=("OpenMPI"); }
for ((i = 0; i < repeat; i++)); do
  once o_adi3 "$oprio" "$mpiexec" -n 4 "$adi3" "${small[@]}"
  have "$mpich" && once o_mpich "$oprio" timeout 120 mpiexec.mpich -n 4 "$mpich" "${small[@]}"
  have "$ompi" && once o_ompi "$oprio" timeout 120 mpirun.openmpi --oversubscribe -n 4 "$ompi" "${small[@]}"
done
table 2 "half round trip, us" 0
