#!/usr/bin/env bash
# cost.sh [BUILD_DIR] [CASES]: what one message costs over the TCP channel
# (loopback, 2 ranks, ADI3_CHANNEL=tcp), independent of the machine's load:
# instructions counted by callgrind on rank 0 inside cost_loop (cost.c),
# and rank 0's system calls by strace. Each case runs with N1 and N2
# messages; the difference over N2 - N1 leaves out start-up and warm-up.
#   CASES: "mode:bytes ..." (default "lat:8 stream:8 stream:65536")
#   stream: per message received; lat: per round trip (one send, one receive)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
cases=${2:-lat:8 stream:8 stream:65536}
bin=$build/bin
command -v valgrind >/dev/null || { echo "cost.sh: valgrind not found" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin/mpicc" -O2 -o "$tmp/tcpcost" "$root/bench/tcp/cost.c" || exit 1
cat >"$tmp/wrap" <<'W'
#!/bin/sh
[ "${PMI_RANK:-0}" != 0 ] && exec "$@"
case $COST_TOOL in
  callgrind) exec valgrind --tool=callgrind --collect-atstart=no --toggle-collect=cost_loop \
    --callgrind-out-file="$COST_OUT" "$@" 2>/dev/null ;;
  strace) exec strace -f -c -o "$COST_OUT" "$@" ;;
esac
W
chmod +x "$tmp/wrap"
total() { awk '/^summary:|^totals:/ { print $2; exit }' "$1"; }
# "name calls" for every system call strace counted.
calls() { awk '$NF != "total" && NF >= 5 && $1 ~ /^[0-9.]+$/ { print $NF, $4 }' "$1"; }
run() {  # tool mode bytes n
  COST_TOOL=$1 COST_OUT=$tmp/$1.$4 ADI3_CHANNEL=tcp timeout 600 "$bin/mpiexec" -n 2 \
    env COST_TOOL="$1" COST_OUT="$tmp/$1.$4" "$tmp/wrap" "$tmp/tcpcost" "$2" "$3" "$4" >/dev/null 2>&1
}
printf '%-14s %14s   %s\n' case instructions "system calls of rank 0 (per message or round trip)"
for c in $cases; do
  mode=${c%%:*} bytes=${c#*:}
  n1=1024 n2=5120
  [ "$mode" = lat ] && { n1=512; n2=2560; }
  ok=yes
  for n in $n1 $n2; do run callgrind "$mode" "$bytes" $n || ok=no; done
  if [ $ok = yes ]; then
    ins=$(printf '%.0f' "$(echo "($(total "$tmp/callgrind.$n2") - $(total "$tmp/callgrind.$n1")) / ($n2 - $n1)" | bc -l)")
  else
    ins=fail
  fi
  sys=fail
  if run strace "$mode" "$bytes" $n1 && run strace "$mode" "$bytes" $n2; then
    sys=$(join -a 2 -e 0 -o 0,1.2,2.2 <(calls "$tmp/strace.$n1" | sort) <(calls "$tmp/strace.$n2" | sort) |
      awk -v d=$((n2 - n1)) '{ v = ($3 - $2) / d; if (v >= 0.05) printf "%s %.2f  ", $1, v }')
  fi
  printf '%-14s %14s   %s\n' "$mode:$bytes" "$ins" "$sys"
done
