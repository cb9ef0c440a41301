#!/usr/bin/env bash
# Fault injection by hand (CI runs a few jobs: ctest -L fault): RUNS jobs
# (default 400) of RANKS ranks (default 4) cycling over every traffic mode
# of tests/fault/victim.c (eager, rendezvous, collectives, a generalized
# request wait, RMA fence, lock, PSCW and flush epochs); in each, one rank
# is killed with SIGKILL at a random moment. tests/fault/kill_test.sh says
# what every run must show; the last line counts runs and failures.
# FAULT_PEERS=1 pauses the launcher around each kill, so each surviving rank
# must fail by itself with a clear error within FAULT_PEERS_MS (2000):
#   FAULT_PEERS=1 scripts/faults.sh 100 4 "eager rndv coll greq fence pscw lock flush"
#
#   scripts/faults.sh [RUNS] [RANKS] [MODES]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-400} np=${2:-4} modes=${3:-eager rndv coll greq fence lock pscw flush token cfence clock io}
bin=build/release/bin
cmake --build build/release --target fault_victim mpiexec adi3_ch_shm >/dev/null
ADI3_CHANNEL=${ADI3_CHANNEL:-shm} exec bash tests/fault/kill_test.sh "$bin/mpiexec" "$bin/fault_victim" "$runs" "$np" "$modes"
