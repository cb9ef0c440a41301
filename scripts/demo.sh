#!/usr/bin/env bash
# Builds what the demo needs and runs it. Installs missing Debian packages first.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target ring_demo
./build/release/bin/ring_demo "${@:-4}"
