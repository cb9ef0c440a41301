#!/bin/sh
# An unmodified MPI program built the ways a user would (mpicc, mpicxx,
# separate compile and link, pkg-config, find_package(adi3mpi)) and run
# under mpiexec. Usage: wrappers.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() { "$build/bin/mpiexec" -n 2 --timeout 60 "$@"; }

echo "== mpicc"
"$build/bin/mpicc" -O2 -Wall -Wextra -Werror "$src/examples/mpi/ring.c" -o "$work/ring"
run "$work/ring"
"$build/bin/mpicc" -show "$src/examples/mpi/ring.c" | grep -q -- "-lmpi"

echo "== mpicxx"
"$build/bin/mpicxx" -std=c++17 -Wall -Wextra -Werror "$src/tests/mpi/cxx_header.cpp" -o "$work/cxx"
run "$work/cxx"

echo "== separate compile and link"
"$build/bin/mpicc" -O2 -c "$src/examples/mpi/pi.c" -o "$work/pi.o"
"$build/bin/mpicc" "$work/pi.o" -o "$work/pi" -lm
run "$work/pi" 100000

if command -v pkg-config >/dev/null 2>&1; then
  echo "== pkg-config"
  flags=$(PKG_CONFIG_PATH="$build/lib/pkgconfig" pkg-config --cflags --libs adi3-mpi)
  # shellcheck disable=SC2086
  cc "$src/examples/mpi/ring.c" -o "$work/ring_pc" $flags
  run "$work/ring_pc"
fi

echo "== find_package(adi3mpi)"
mkdir -p "$work/proj"
cp "$src/examples/mpi/ring.c" "$work/proj/"
cat > "$work/proj/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(user C)
find_package(adi3mpi 0.1 REQUIRED)
add_executable(ring ring.c)
target_link_libraries(ring PRIVATE MPI::MPI_C)
CMAKE
cmake -S "$work/proj" -B "$work/proj/build" -DCMAKE_PREFIX_PATH="$build" >/dev/null
cmake --build "$work/proj/build" >/dev/null
run "$work/proj/build/ring"
echo " No Errors"
