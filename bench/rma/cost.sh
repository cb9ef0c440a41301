#!/usr/bin/env bash
# cost.sh [--impls "adi3 mpich openmpi"] [--modes "put get ..."] [--fn RE] [--create|--create-poll]
#         [--rank 1] [--keep DIR] [BUILD_DIR]:
# instructions per 8-byte one-sided operation on an allocate window
# (bin/rmacost_<impl>, see rmacost.c), counted by callgrind on rank 0 of 2.
# Each mode runs twice (N1 and N2 iterations); the difference over N2 - N1
# leaves out start-up and warm-up. With --fn, the count is the inclusive
# cost of the functions whose names match RE (an awk regex, whole name,
# e.g. 'P?MPI_Put', 'adi3::rma::polls_now'; the largest match) instead of the whole loop: the
# origin's side of an operation alone, without the time a flush spends
# waiting for an emulating target (which depends on the machine's load).
# --create: the window from MPI_Win_create, rank 1 outside the library
# (RMACOST_CREATE=1 RMACOST_IDLE=1: cross-memory attach); --create-poll:
# rank 1 polling in MPI_Barrier (rmabench's create rows; packets where
# adi3 prefers them, so the count follows the target's timing).
# --rank 1: count the target instead (with --create-poll: the handling of
# the packets it gets while it polls in MPI_Barrier, the apply and the
# reply): the inclusive count of the function --fn matches (default
# 'adi3::Device::on_packet', a C++ name without parameters) per call, and
# its calls in the N2 run (rank 0 runs under valgrind too, uncounted, so
# that both sides' timing stays alike; how many operations go as packets
# then follows the timing, the count per packet does not). Other handlers:
# --fn 'adi3::emul::on_packet|adi3::emul::apply', ...
# --keep DIR: keep the callgrind files (DIR/<impl>.<mode>.<N>) for
# callgrind_annotate --inclusive=yes --tree=calling.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
impls="adi3 mpich openmpi"
modes="put get acc accd fop cas lock bare"
fn=
rank=0
keep=
cenv=()
while [ $# -gt 0 ]; do
  case $1 in
    --impls) impls=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --fn) fn=$2; shift 2 ;;
    --rank) rank=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --create) cenv=(RMACOST_CREATE=1 RMACOST_IDLE=1); shift ;;
    --create-poll) cenv=(RMACOST_CREATE=1); shift ;;
    *) break ;;
  esac
done
[ "$rank" = 1 ] && [ -z "$fn" ] && fn='adi3::Device::on_packet'
n1=1000 n2=3000
bin=${1:-$root/build/release}/bin
command -v valgrind >/dev/null || { echo "cost.sh: valgrind not found" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case $rank in
  0) collect="--collect-atstart=no --toggle-collect=cost_loop" ;;
  1) collect="--collect-atstart=yes" ;;
  *) echo "cost.sh: --rank takes 0 or 1" >&2; exit 2 ;;
esac
cat >"$tmp/wrap" <<W
#!/bin/sh
r=\${PMI_RANK:-\${OMPI_COMM_WORLD_RANK:-0}}
[ "\$r" = $rank ] && exec valgrind --tool=callgrind $collect \\
  --callgrind-out-file="\$COST_OUT" "\$@" 2>/dev/null
[ $rank = 0 ] && exec "\$@"
exec valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file=/dev/null "\$@" 2>/dev/null
W
chmod +x "$tmp/wrap"
# A callgrind_annotate line's function name: after "file:", without the
# " [object]" behind it and a C++ function's parameters.
name_awk='function fname(s) { sub(/^[^:]*:/, "", s); sub(/ \[[^]]*\]$/, "", s); sub(/ \([0-9,]+x\)$/, "", s);
  sub(/\(.*$/, "", s); return s }'
total() {
  if [ -z "$fn" ]; then
    awk '/^summary:|^totals:/ { print $2; exit }' "$1"
    return
  fi
  callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null | awk -v re="^($fn)\$" "$name_awk"'
    /^ *[0-9,]+ / {
      v = $1; gsub(",", "", v); line = $0; sub(/^ *[0-9,]+ +\([^)]*\) +/, "", line)
      if (fname(line) ~ re && v + 0 > best) best = v + 0
    }
    END { print best + 0 }'
}
# --rank 1: the inclusive count of the function matching fn per call of it
# (its callers' call counts summed).
per_call() {
  callgrind_annotate --inclusive=yes --tree=caller --threshold=100 "$1" 2>/dev/null |
    awk -v re="^($fn)\$" "$name_awk"'
    /^ *[0-9,]+ / {
      v = $1; gsub(",", "", v); line = $0; sub(/^ *[0-9,]+ +\([^)]*\) +/, "", line)
      if (line ~ /^< /) {
        n = 0; if (match(line, /\([0-9,]+x\)/)) { n = substr(line, RSTART + 1, RLENGTH - 3); gsub(",", "", n) }
        calls += n; next
      }
      if (line ~ /^\* /) {
        sub(/^\* +/, "", line)
        if (fname(line) ~ re && v + 0 > best) { best = v + 0; bc = calls }
      }
      next
    }
    { calls = 0 }
    END { if (bc) printf "%.0f %d\n", best / bc, bc; else print "0 0" }'
}
printf '%-8s' mode
for impl in $impls; do printf '%10s' "$impl"; done
if [ "$rank" = 1 ]; then
  echo "   (rank 1: instructions per call of $fn / its calls in the $n2-operation run)"
else
  echo "   (instructions per operation${fn:+ in $fn})"
fi
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
    ok=yes
    runs="$n1 $n2"
    [ "$rank" = 1 ] && runs=$n2
    for n in $runs; do
      COST_OUT=$tmp/out.$n timeout 300 "${l[@]}" env "${cenv[@]}" COST_OUT="$tmp/out.$n" "$tmp/wrap" "$prog" "$mode" "$n" \
        >/dev/null 2>&1 || ok=no
    done
    [ -n "$keep" ] && mkdir -p "$keep" && for n in $n1 $n2; do cp "$tmp/out.$n" "$keep/$impl.$mode.$n" 2>/dev/null; done
    if [ $ok = yes ] && [ "$rank" = 1 ]; then
      read -r per calls < <(per_call "$tmp/out.$n2")
      printf '%10s' "$per/$calls"
    elif [ $ok = yes ]; then
      printf '%10.0f' "$(echo "($(total "$tmp/out.$n2") - $(total "$tmp/out.$n1")) / ($n2 - $n1)" | bc -l)"
    else
      printf '%10s' fail
    fi
  done
  echo
done
