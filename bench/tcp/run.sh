#!/usr/bin/env bash
# TCP latency and bandwidth, adi3 beside MPICH and Open MPI, over loopback
# (one host) and over a veth pair between two network namespaces (two
# "hosts" on a bridge, tests/tcp/hosts_test.sh), in one command. Needs
# root; run it on a quiet machine (figures under load mean nothing).
#
#   bench/tcp/run.sh [--repeat N] [--out DIR] [BUILD_DIR] [GROUPS]
#       defaults: 5 repeats, build/release, groups "latency bw"
#
# Each figure is the median of N runs; the tables (bench/mpi/report.awk)
# give per path ("loopback-", "veth-") and size the median of every
# implementation, adi3 against the best peer, and each one's spread
# ((max - min) / median). The runs go round the implementations, starting
# one later each repeat, so a burst of load does not hit one of them only.
# Raw lines and tables.md are kept in DIR (default a new temporary one).
#
# adi3: our mpiexec (--launcher-exec "ip netns exec" between namespaces,
# ADI3_CHANNEL=tcp on loopback). MPICH: mpiexec.hydra (-launcher rsh
# through netns_rsh.sh, -iface the bridge; Debian's MPICH is ch4:ucx, held
# to UCX's tcp transport with UCX_TLS=tcp,self: else UCX finds both ranks
# on one machine and uses shared memory, even across namespaces; on
# loopback also MPIR_CVAR_NOLOCAL=1). Open MPI: mpirun --mca btl tcp,self
# (plm_rsh_agent netns_rsh.sh between namespaces). netns_rsh.sh gives each
# namespace its own hostname (a UTS namespace), so MPICH and Open MPI see
# two hosts. A failed run is retried once (Open MPI's orted has crashed
# in hwloc at start-up under load), and said on stderr.
set -u
repeat=5 out=
while :; do
  case "${1:-}" in
    --repeat) repeat=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) break ;;
  esac
done
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
groups=${2:-latency bw}
bin=$build/bin
hosts=$root/tests/tcp/hosts_test.sh
[ -n "$out" ] || out=$(mktemp -d /tmp/adi3-tcp-bench.XXXXXX)
mkdir -p "$out"
raw=$out/raw.txt
: >"$raw"
impls=(adi3)
[ -x "$bin/mpibench_mpich" ] && impls+=(mpich)
[ -x "$bin/mpibench_openmpi" ] && impls+=(openmpi)
[ -x "$bin/mpibench_adi3" ] || { echo "no $bin/mpibench_adi3 (cmake --build $build --target mpibench)" >&2; exit 1; }
echo "# implementations: ${impls[*]}; $repeat repeats; raw figures in $raw" >&2

# One run on one path: "impl repeat path-name@2 size value unit" lines.
# In the namespaces' case HOST_A, HOST_B, HOST_BRIDGE and HOST_RSH are set.
run_one() {
  local impl=$1 r=$2 path=$3 try o
  for try in 1 2; do
    case $path/$impl in
      loopback/adi3) o=$(ADI3_CHANNEL=tcp timeout 600 "$bin/mpiexec" -n 2 "$bin/mpibench_adi3" $groups) ;;
      loopback/mpich)
        o=$(UCX_TLS=tcp,self UCX_NET_DEVICES=lo MPIR_CVAR_NOLOCAL=1 timeout 600 mpiexec.hydra -n 2 \
          "$bin/mpibench_mpich" $groups) ;;
      loopback/openmpi)
        o=$(timeout 600 mpirun.openmpi --allow-run-as-root -n 2 --mca btl tcp,self --mca pml ob1 \
          "$bin/mpibench_openmpi" $groups) ;;
      veth/adi3)
        o=$(timeout 600 "$bin/mpiexec" -n 2 --hosts "$HOST_A:1,$HOST_B:1" --launcher-exec "ip netns exec" \
          "$bin/mpibench_adi3" $groups) ;;
      veth/mpich)
        o=$(timeout 600 mpiexec.hydra -n 2 -hosts "$HOST_A:1,$HOST_B:1" -launcher rsh -launcher-exec "$HOST_RSH" \
          -iface "$HOST_BRIDGE" -genv UCX_TLS tcp,self -genv UCX_NET_DEVICES eth0 "$bin/mpibench_mpich" $groups) ;;
      veth/openmpi)
        o=$(timeout 600 mpirun.openmpi --allow-run-as-root -n 2 -H "$HOST_A,$HOST_B" --mca plm_rsh_agent "$HOST_RSH" \
          --mca btl tcp,self --mca pml ob1 --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include "$HOST_BRIDGE,eth0" \
          "$bin/mpibench_openmpi" $groups) ;;
    esac && break
    echo "# $impl over $path, repeat $r failed (try $try of 2)" >&2
  done
  awk -v i="$impl" -v r="$r" -v p="$path" 'NF == 4 && !/^#/ { print i, r, p "-" $1 "@2", $2, $3, $4 }' <<<"$o" >>"$raw"
}

# All repeats on one path, rotating the implementations.
run_path() {
  local path=$1 r k n=${#impls[@]}
  for r in $(seq 1 "$repeat"); do
    echo "# $path: repeat $r/$repeat" >&2
    for k in $(seq 0 $((n - 1))); do
      run_one "${impls[$(((k + r) % n))]}" "$r" "$path"
    done
  done
}

run_path loopback
export -f run_one run_path
export bin groups raw repeat
export impls_list="${impls[*]}"
bash "$hosts" --shell bash -c 'impls=($impls_list); run_path veth' || echo "# the namespaces' runs failed" >&2
mkdir -p "$out/plots"
awk -v dir="$out" -f "$root/bench/mpi/report.awk" "$raw"
echo "# tables: $out/tables.md" >&2
