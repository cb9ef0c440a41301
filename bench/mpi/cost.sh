#!/usr/bin/env bash
# cost.sh [--impls "adi3 mpich openmpi"] [BUILD_DIR]: instructions per
# hot-path operation (bin/mpicost_<impl>, see cost.c), counted by
# callgrind on rank 0 of 2, so the figures do not depend on the machine's
# load. Each mode runs twice (N1 and N2 iterations); the difference over
# N2 - N1 leaves out start-up, warm-up and the loop's first pass.
# COST_MODES="allreduce barrier" picks modes (default: all, see cost.c).
# --profile DIR keeps, per mode and implementation, the hot path's profile:
# DIR/<mode>.<impl>.txt lists each function's own instructions per
# operation (the N2 run's callgrind_annotate, divided by N2) and the
# callgrind output beside it (<mode>.<impl>.out, for kcachegrind).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
impls="adi3 mpich openmpi"
profile=
while [ $# -gt 0 ]; do
  case "$1" in
    --impls) impls=$2; shift 2 ;;
    --profile) profile=$2; shift 2 ;;
    *) break ;;
  esac
done
[ -n "$profile" ] && mkdir -p "$profile"
bin=${1:-$root/build/release}/bin
command -v valgrind >/dev/null || { echo "cost.sh: valgrind not found" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The wrapper runs rank 0 under callgrind, collecting cost_loop only.
cat >"$tmp/wrap" <<'W'
#!/bin/sh
r=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-0}}
[ "$r" != 0 ] && exec "$@"
exec valgrind --tool=callgrind --collect-atstart=no --toggle-collect=cost_loop \
  --callgrind-out-file="$COST_OUT" "$@" 2>/dev/null
W
chmod +x "$tmp/wrap"
total() { awk '/^summary:|^totals:/ { print $2; exit }' "$1"; }
# keep_profile OUT N BASE: functions by own instructions per operation.
keep_profile() {
  cp "$1" "$3.out"
  callgrind_annotate --inclusive=no --threshold=99 "$1" 2>/dev/null |
    awk -v n="$2" '/^ *[0-9,]+ .*:/ { c = $1; gsub(",", "", c); f = $0
        sub(/^ *[0-9,]+ +(\( *[0-9.]+%\) +)?/, "", f); sub(/ \[.*$/, "", f)
        printf "%10.1f  %s\n", c / n, f }' >"$3.txt"
}
printf '%-8s' mode
for impl in $impls; do printf '%10s' "$impl"; done
echo "   (instructions per operation)"
for mode in ${COST_MODES:-send unexp rate empty iprobe allreduce reduce bcast barrier}; do
  printf '%-8s' "$mode"
  for impl in $impls; do
    prog=$bin/mpicost_$impl
    case $impl in
      adi3) l=("$bin/mpiexec" -n 2) ;;
      mpich) l=(mpiexec.mpich -n 2) ;;
      openmpi) l=(mpirun.openmpi --oversubscribe -n 2) ;;
    esac
    [ -x "$prog" ] || { printf '%10s' -; continue; }
    n1=2048 n2=6144 ok=yes
    for n in $n1 $n2; do
      COST_OUT=$tmp/out.$n timeout 300 "${l[@]}" env COST_OUT="$tmp/out.$n" "$tmp/wrap" "$prog" "$mode" "$n" \
        >/dev/null 2>&1 || ok=no
    done
    if [ $ok = yes ]; then
      printf '%10.0f' "$(echo "($(total "$tmp/out.$n2") - $(total "$tmp/out.$n1")) / ($n2 - $n1)" | bc -l)"
      [ -n "$profile" ] && keep_profile "$tmp/out.$n2" "$n2" "$profile/$mode.$impl"
    else
      printf '%10s' fail
    fi
  done
  echo
done
