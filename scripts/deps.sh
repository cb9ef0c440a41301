#!/usr/bin/env bash
# Installs the Debian packages adi3 needs, only those missing. Idempotent.
set -euo pipefail
pkgs=(g++ clang cmake ninja-build libboost-dev libtbb-dev libgtest-dev libgmock-dev libbenchmark-dev libibverbs-dev clang-format libpmix-dev libhwloc-dev pkg-config libssl-dev)
# The launchers the tests start our binaries under (Hydra, Open MPI's mpirun,
# single-node Slurm, network namespaces, OpenSSH's server, which
# tests/tcp/sshd_test.sh starts inside a namespace with keys of its own);
# ADI3_NO_LAUNCHERS=1 leaves them out and their tests are then not
# registered or skipped.
[ "${ADI3_NO_LAUNCHERS:-0}" = 1 ] || pkgs+=(mpich openmpi-bin slurmd slurmctld slurm-client munge iproute2 openssh-server)
# The peers' headers and gnuplot, for the side-by-side benchmarks
# (bench/mpi/run.sh asks for them).
[ "${ADI3_WITH_PEERS:-0}" = 1 ] && pkgs+=(mpich libmpich-dev openmpi-bin libopenmpi-dev gnuplot-nox)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "adi3: installing ${missing[*]}"
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
