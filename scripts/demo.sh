#!/usr/bin/env bash
# Builds what the demo needs and runs it: an MPI ring, a pi calculation
# and MPI windows (a halo exchange between fences; a shared counter and a
# histogram under passive locks) as N processes over the shared-memory
# channel (our mpiexec), then the same ring idea as N thread-ranks on the
# ADI alone (in-process channel).
# Installs missing Debian packages first. Usage: scripts/demo.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
n="${1:-4}"
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target mpiexec adi3_ch_shm mpi_ring mpi_pi mpi_halo mpi_counter \
  ring_demo >/dev/null
bin=build/release/bin
echo "== mpiexec -n $n mpi_ring   (processes, shared memory)"
"$bin/mpiexec" -n "$n" --channel shm "$bin/mpi_ring"
echo "== mpiexec -n $n mpi_pi     (MPI_Reduce)"
"$bin/mpiexec" -n "$n" --channel shm "$bin/mpi_pi"
echo "== mpiexec -n $n mpi_halo   (MPI_Put between MPI_Win_fence: active target)"
"$bin/mpiexec" -n "$n" --channel shm "$bin/mpi_halo"
echo "== mpiexec -n $n mpi_counter (MPI_Fetch_and_op, get/put under MPI_Win_lock: passive target)"
"$bin/mpiexec" -n "$n" --channel shm "$bin/mpi_counter"
echo "== ring_demo $n             (thread-ranks on the ADI, in-process channel)"
"$bin/ring_demo" "$n"
