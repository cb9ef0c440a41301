#!/usr/bin/env bash
# Formats every C/C++ source with the tree's .clang-format; --check only
# reports files that differ (CI runs it so) and exits 1 if any does.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format: clang-format is missing (scripts/deps.sh installs it)"; exit 1; }
mapfile -t files < <(git ls-files -co --exclude-standard '*.c' '*.h' '*.cpp' '*.hpp' | grep -v '^build/')
[ ${#files[@]} -eq 0 ] && exit 0
if [ "${1:-}" = --check ]; then
  bad=0
  for f in "${files[@]}"; do
    [ -f "$f" ] || continue
    if ! clang-format --style=file "$f" | cmp -s - "$f"; then echo "format: $f differs from .clang-format (run scripts/format.sh)"; bad=1; fi
  done
  exit $bad
fi
printf '%s\0' "${files[@]}" | xargs -0 -r -n 50 clang-format --style=file -i
