#!/usr/bin/env bash
# Soak (not in CI): 8 ranks run a random mix of point-to-point, collectives,
# generalized requests and RMA (fence, PSCW, lock/unlock with flushes,
# lock_all; puts, gets, accumulates and atomics on a created and an
# allocated window) for MINUTES minutes, checking every byte; each rank
# reports its operation counts and memory high-water mark (VmHWM).
#
#   scripts/soak.sh [MINUTES] [RANKS] [SEED]     (defaults 10, 8, 12345)
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-10} np=${2:-8} seed=${3:-12345}
bin=build/release/bin
[ -x $bin/soak ] || cmake --build build/release --target soak mpiexec adi3_ch_shm
secs=$(awk "BEGIN { print $minutes * 60 }")
echo "soak: $np ranks for $minutes min (seed $seed, channel ${ADI3_CHANNEL:-shm})"
start=$(date +%s)
$bin/mpiexec -n "$np" --timeout $(( ${secs%.*} + 120 )) $bin/soak "$secs" "$seed"
echo "soak: passed in $(( $(date +%s) - start )) s"
