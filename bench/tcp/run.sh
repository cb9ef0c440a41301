#!/usr/bin/env bash
# TCP latency and bandwidth, adi3 beside MPICH and Open MPI, over loopback
# (one host) and over a veth pair between two network namespaces (two
# "hosts" on a bridge, tests/tcp/hosts_test.sh). Needs root; run it on a
# quiet machine (figures under load mean nothing).
#
#   bench/tcp/run.sh [BUILD_DIR] [GROUPS]     default build/release, "latency bw"
#
# adi3: our mpiexec (--launcher-exec "ip netns exec" between namespaces,
# ADI3_CHANNEL=tcp on loopback). MPICH: mpiexec.hydra (-launcher rsh
# through netns_rsh.sh, -iface the bridge; its netmod over TCP). Open MPI:
# mpirun --mca btl tcp,self (plm_rsh_agent netns_rsh.sh between namespaces).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
groups=${2:-latency bw}
bin=$build/bin
hosts=$root/tests/tcp/hosts_test.sh
echo "=== loopback, one host ==="
echo "--- adi3 (tcp)"
ADI3_CHANNEL=tcp "$bin/mpiexec" -n 2 "$bin/mpibench_adi3" $groups
if [ -x "$bin/mpibench_mpich" ]; then
  echo "--- MPICH (ch4, tcp)"
  FI_PROVIDER=tcp MPIR_CVAR_NOLOCAL=1 mpiexec.hydra -n 2 "$bin/mpibench_mpich" $groups
fi
if [ -x "$bin/mpibench_openmpi" ]; then
  echo "--- Open MPI (btl tcp)"
  mpirun.openmpi --allow-run-as-root -n 2 --mca btl tcp,self --mca pml ob1 "$bin/mpibench_openmpi" $groups
fi
echo "=== two network namespaces (veth through a bridge) ==="
bash "$hosts" --shell bash -c '
  bin='"$bin"'; groups="'"$groups"'"
  echo "--- adi3 (tcp between hosts)"
  "$bin/mpiexec" -n 2 --hosts "$HOST_A:1,$HOST_B:1" --launcher-exec "ip netns exec" "$bin/mpibench_adi3" $groups
  if [ -x "$bin/mpibench_mpich" ]; then
    echo "--- MPICH (ch4, tcp)"
    FI_PROVIDER=tcp mpiexec.hydra -n 2 -hosts "$HOST_A:1,$HOST_B:1" -launcher rsh -launcher-exec "$HOST_RSH" \
      -iface "$HOST_BRIDGE" -genv FI_PROVIDER tcp "$bin/mpibench_mpich" $groups
  fi
  if [ -x "$bin/mpibench_openmpi" ]; then
    echo "--- Open MPI (btl tcp)"
    mpirun.openmpi --allow-run-as-root -n 2 -H "$HOST_A,$HOST_B" --mca plm_rsh_agent "$HOST_RSH" \
      --mca btl tcp,self --mca pml ob1 --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include "$HOST_BRIDGE,eth0" \
      "$bin/mpibench_openmpi" $groups
  fi'
