#!/usr/bin/env bash
# Builds and runs every test: Release, then ASan+UBSan, then the threaded
# suites under TSan, then the fuzz targets for a bounded time (clang,
# ASan+UBSan; ADI3_FUZZ_SECONDS per target, default 30). Installs missing
# Debian packages first.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
./scripts/format.sh --check
jobs=$(nproc)
presets=${ADI3_TEST_PRESETS:-"release asan tsan fuzz"}
for p in $presets; do
  echo "=== adi3: preset $p ==="
  cmake --preset "$p" >/dev/null
  cmake --build --preset "$p" -j "$jobs"
  if [ "$p" = fuzz ]; then
    ./scripts/fuzz.sh
    continue
  fi
  ctest --preset "$p" -j "$jobs"
  # Speed floors relative to memcpy and a cache line between the cores
  # (bench/mpi/run.sh --help); release only: sanitizers measure themselves.
  if [ "$p" = release ] && [ -x build/release/bin/mpibench_adi3 ]; then
    echo "=== adi3: benchmark floors (quick) ==="
    bench/mpi/run.sh --quick --no-build build/release
  fi
done
