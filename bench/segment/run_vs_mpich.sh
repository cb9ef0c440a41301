#!/usr/bin/env bash
# Builds pack_bench (adi3, Release) and mpich_pack (Debian's MPICH), runs
# both on the same layouts and prints one table:
#   case | bytes | adi3 GB/s | MPICH GB/s | memcpy GB/s | adi3/memcpy
# Usage: bench/segment/run_vs_mpich.sh [build-dir]   (default /tmp/build-seg-bench)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${1:-/tmp/build-seg-bench}"

if ! command -v mpicc.mpich >/dev/null; then
  echo "mpicc.mpich not found: apt-get install -y mpich libmpich-dev" >&2
  exit 1
fi

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI3_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target pack_bench >/dev/null
mpicc.mpich -O3 -std=c11 -o "$build/mpich_pack" "$here/mpich_pack.c"

adi3_out="$("$build/bin/pack_bench")"
# One process, no launcher needed (singleton init).
mpich_out="$(env -u PMI_FD -u PMI_RANK -u PMI_SIZE "$build/mpich_pack")"

echo "adi3 pack_bench:";  echo "$adi3_out"
echo "MPICH MPI_Pack:";   echo "$mpich_out"
echo
awk 'NR == FNR { if (FNR > 1) mpich[$1] = $3; next }
     FNR == 1 { printf "%-20s %10s %9s %9s %9s %12s\n", "case", "bytes", "adi3", "MPICH", "memcpy", "adi3/memcpy"; next }
     { printf "%-20s %10s %9.2f %9.2f %9.2f %11.0f%%\n", $1, $2, $3, mpich[$1], $4, 100 * $3 / $4 }' \
  <(echo "$mpich_out") <(echo "$adi3_out")
echo "(GB/s of packed bytes; memcpy = the same number of bytes, contiguous)"
