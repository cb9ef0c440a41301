#!/usr/bin/env bash
# cost.sh [--impls "adi3 mpich openmpi"] [--modes "put get ..."] [--fn RE] [--create|--create-poll] [BUILD_DIR]:
# instructions per 8-byte one-sided operation on an allocate window
# (bin/rmacost_<impl>, see rmacost.c), counted by callgrind on rank 0 of 2.
# Each mode runs twice (N1 and N2 iterations); the difference over N2 - N1
# leaves out start-up and warm-up. With --fn, the count is the inclusive
# cost of the functions whose names match RE (an awk regex, whole name,
# e.g. 'P?MPI_Put'; the largest match) instead of the whole loop: the
# origin's side of an operation alone, without the time a flush spends
# waiting for an emulating target (which depends on the machine's load).
# --create: the window from MPI_Win_create, rank 1 outside the library
# (RMACOST_CREATE=1 RMACOST_IDLE=1: cross-memory attach); --create-poll:
# rank 1 polling in MPI_Barrier (rmabench's create rows; packets where
# adi3 prefers them, so the count follows the target's timing).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
impls="adi3 mpich openmpi"
modes="put get acc accd fop cas lock bare"
fn=
cenv=()
while [ $# -gt 0 ]; do
  case $1 in
    --impls) impls=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --fn) fn=$2; shift 2 ;;
    --create) cenv=(RMACOST_CREATE=1 RMACOST_IDLE=1); shift ;;
    --create-poll) cenv=(RMACOST_CREATE=1); shift ;;
    *) break ;;
  esac
done
bin=${1:-$root/build/release}/bin
command -v valgrind >/dev/null || { echo "cost.sh: valgrind not found" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/wrap" <<'W'
#!/bin/sh
r=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-0}}
[ "$r" != 0 ] && exec "$@"
exec valgrind --tool=callgrind --collect-atstart=no --toggle-collect=cost_loop \
  --callgrind-out-file="$COST_OUT" "$@" 2>/dev/null
W
chmod +x "$tmp/wrap"
total() {
  if [ -z "$fn" ]; then
    awk '/^summary:|^totals:/ { print $2; exit }' "$1"
    return
  fi
  callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null | awk -v re="^($fn)\$" '
    match($0, /:[^ :]+ \[/) {
      name = substr($0, RSTART + 1, RLENGTH - 3)
      if (name ~ re) { v = $1; gsub(",", "", v); if (v + 0 > best) best = v + 0 }
    }
    END { print best + 0 }'
}
printf '%-8s' mode
for impl in $impls; do printf '%10s' "$impl"; done
echo "   (instructions per operation${fn:+ in $fn})"
for mode in $modes; do
  printf '%-8s' "$mode"
  for impl in $impls; do
    prog=$bin/rmacost_$impl
    case $impl in
      adi3) l=("$bin/mpiexec" -n 2) ;;
      mpich) l=(mpiexec.mpich -n 2) ;;
      openmpi) l=(mpirun.openmpi --oversubscribe -n 2) ;;
    esac
    [ -x "$prog" ] || { printf '%10s' -; continue; }
    n1=1000 n2=3000 ok=yes
    for n in $n1 $n2; do
      COST_OUT=$tmp/out.$n timeout 300 "${l[@]}" env "${cenv[@]}" COST_OUT="$tmp/out.$n" "$tmp/wrap" "$prog" "$mode" "$n" \
        >/dev/null 2>&1 || ok=no
    done
    if [ $ok = yes ]; then
      printf '%10.0f' "$(echo "($(total "$tmp/out.$n2") - $(total "$tmp/out.$n1")) / ($n2 - $n1)" | bc -l)"
    else
      printf '%10s' fail
    fi
  done
  echo
done
