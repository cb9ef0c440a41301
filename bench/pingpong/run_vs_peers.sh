#!/bin/bash
# run_vs_peers.sh [BUILD_DIR]: adi3 (shm, CMA as configured and CMA off)
# against Debian's MPICH and Open MPI on the same ping-pong, side by side.
# Each configuration runs REPEAT times; a cell is the best run (lowest
# latency, highest bandwidth), which filters out noise from other load.
#
#   REPEAT=3 MAX=4194304 bench/pingpong/run_vs_peers.sh build/release
#
# Then the oversubscribed case: 4 ranks (two pairs) on the cores there are,
# unpinned, small messages.
set -u
build=${1:-build/release}
repeat=${REPEAT:-3}
max=${MAX:-4194304}
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

# run NAME NP ARGS -- COMMAND...: appends REPEAT runs' tables to $tmp/NAME
run() {
  local name=$1; shift
  for ((i = 0; i < repeat; i++)); do "$@" | grep -v '^#' | grep -v bytes >>"$tmp/$name"; done
}
# best NAME: "bytes lat bw" per size, best of the runs
best() {
  awk '{ if (!($1 in l) || $2 < l[$1]) l[$1] = $2; if ($3 > b[$1]) b[$1] = $3; seen[$1] = 1 }
       END { for (s in seen) printf "%d %.3f %.0f\n", s, l[s], b[s] }' "$tmp/$1" | sort -n
}
have() { [ -x "$1" ]; }

names=()
label=()
pp_args=(--max "$max")
run adi3 "$mpiexec" -n 2 "$adi3" "${pp_args[@]}"; names+=(adi3); label+=("adi3")
ADI3_SHM_CMA=0 run adi3nocma "$mpiexec" -n 2 "$adi3" "${pp_args[@]}"; names+=(adi3nocma); label+=("adi3-nocma")
if have "$mpich"; then
  run mpich mpiexec.mpich -n 2 "$mpich" "${pp_args[@]}"; names+=(mpich); label+=("MPICH")
fi
if have "$ompi"; then
  run ompi mpirun.openmpi --oversubscribe -n 2 "$ompi" "${pp_args[@]}"; names+=(ompi); label+=("OpenMPI")
fi

for n in "${names[@]}"; do best "$n" >"$tmp/$n.best"; done
echo "Ping-pong between 2 processes on separate cores (best of $repeat runs)"
printf "%10s |" "bytes"
for l in "${label[@]}"; do printf " %10s" "$l"; done
printf " | latency us\n"
join_all() {  # "size v1 v2 ..." with field $1 of every .best, by size
  local f=$1 files=()
  for n in "${names[@]}"; do files+=("$tmp/$n.best"); done
  awk -v f="$f" -v k="${#files[@]}" '
    FNR == 1 { i++ }
    { v[$1, i] = $f; if (!($1 in seen)) { seen[$1] = 1; sizes[++m] = $1 } }
    END {
      for (j = 1; j <= m; j++) {
        line = sizes[j]
        for (i2 = 1; i2 <= k; i2++) line = line " " ((sizes[j], i2) in v ? v[sizes[j], i2] : "-")
        print line
      }
    }' "${files[@]}" | sort -n
}
join_all 2 | while read -r s rest; do printf "%10s |" "$s"; for v in $rest; do printf " %10s" "$v"; done; echo; done
echo
printf "%10s |" "bytes"
for l in "${label[@]}"; do printf " %10s" "$l"; done
printf " | bandwidth MB/s (window of 64)\n"
join_all 3 | while read -r s rest; do
  [ "$s" = 0 ] && continue
  printf "%10s |" "$s"; for v in $rest; do printf " %10s" "$v"; done; echo
done

echo
echo "Oversubscribed: 4 ranks (pairs 0-1, 2-3) on $(nproc) cores, unpinned, half round trip in us"
rm -f "$tmp"/o_*
small=(--max 64 --lat-only --no-pin --iters 20000)
run o_adi3 "$mpiexec" -n 4 "$adi3" "${small[@]}"; onames=(o_adi3); olabel=("adi3")
if have "$mpich"; then run o_mpich mpiexec.mpich -n 4 "$mpich" "${small[@]}"; onames+=(o_mpich); olabel+=("MPICH"); fi
if have "$ompi"; then
  run o_ompi mpirun.openmpi --oversubscribe -n 4 "$ompi" "${small[@]}"; onames+=(o_ompi); olabel+=("OpenMPI")
fi
names=("${onames[@]}")
for n in "${names[@]}"; do best "$n" >"$tmp/$n.best"; done
printf "%10s |" "bytes"
for l in "${olabel[@]}"; do printf " %10s" "$l"; done
echo
join_all 2 | while read -r s rest; do printf "%10s |" "$s"; for v in $rest; do printf " %10s" "$v"; done; echo; done
