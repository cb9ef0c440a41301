#!/usr/bin/env bash
# run.sh [options] [BUILD_DIR]: builds the MPI suite for every MPI found
# (adi3's mpicc, mpicc.mpich, mpicc.openmpi), runs it alternating the
# implementations, and prints per benchmark a table of medians with the
# ratio to the best peer and the spread; writes the tables (Markdown), a
# PNG plot per benchmark and the raw figures under the results folder.
#
#   bench/mpi/run.sh                       # everything, 5 repeats (~15 min)
#   bench/mpi/run.sh --repeat 3 --only 'p2p|coll2'
#   bench/mpi/run.sh --quick               # CI gate: adi3 only, seconds
#
# Options:
#   --repeat N     runs per figure (default 5; quick: 3 per attempt)
#   --only RE      jobs whose name matches RE (see JOBS below)
#   --impls LIST   e.g. "adi3 mpich" (default: every one built)
#   --out DIR      results folder (default results/mpibench-DATE)
#   --target S     seconds per timed batch (default 0.02)
#   --no-build     use the binaries as they are
#   --quick        the CI gate (below); exit status 1 when a floor fails
#
# Ranks: 2-rank jobs run one rank per core (rank r on core r); jobs with
# more ranks than cores run unpinned, as a user would. Every figure is the
# median of the repeats; "spread" is (max - min) / median of each
# implementation's repeats, in percent. "vs best" is adi3's speed relative
# to the best peer (>1: adi3 faster), for times and rates alike.
#
# Quick mode measures, in the same run, memcpy bandwidth and the one-way
# time of a cache line between the two cores (bin/mpibench_baseline), and
# fails when adi3's figures fall below floors stated relative to them:
#   8-byte latency      <= LAT_X  x cache-line one-way time   (100)
#   1 MiB bandwidth     >= memcpy bandwidth / BW_DIV          (20),
#                          or BW_CL x 64 B per cache-line time  (2)
#                          when lower (the cores are shared)
#   8-byte message rate >= 1 / (RATE_X x cache-line time)     (200)
# The floors catch order-of-magnitude regressions (a lock convoy, a sleep
# in a fast path), not percent changes. Load only slows figures down, so
# the gate takes the best of the repeats and retries up to 3 attempts.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
repeat=5 only=. impls= out= target=0.02 build=yes quick=no
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --impls) impls=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --no-build) build=no; shift ;;
    --quick) quick=yes; shift ;;
    -h|--help) sed -n '2,37p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
bdir=${1:-$root/build/release}
bin=$bdir/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if [ "$build" = yes ]; then
  # The peers (their mpicc wrappers and headers) and gnuplot, installed
  # when missing; then a configure pass, which finds wrappers it missed.
  if [ "$quick" = no ]; then
    ADI3_WITH_PEERS=1 "$root/scripts/deps.sh" ||
      echo "# run.sh: could not install the peers; measuring what is there" >&2
    cmake "$bdir" >/dev/null || { echo "run.sh: configuring $bdir failed" >&2; exit 2; }
  fi
  targets=(mpibench mpiexec adi3_ch_shm)
  [ -d "$root/bench/rma" ] && [ "$quick" = no ] && targets+=(rmabench)
  cmake --build "$bdir" --target "${targets[@]}" -j2 >/dev/null ||
    { echo "run.sh: building the suite failed (cmake --build $bdir --target mpibench)" >&2; exit 2; }
fi
[ -x "$bin/mpibench_adi3" ] && [ -x "$bin/mpiexec" ] ||
  { echo "run.sh: no $bin/mpibench_adi3 (configure $bdir first)" >&2; exit 2; }
if [ -z "$impls" ]; then
  impls=adi3
  [ "$quick" = no ] && for i in mpich openmpi; do [ -x "$bin/mpibench_$i" ] && impls="$impls $i"; done
fi
read -r -a impls <<<"$impls"

# launcher IMPL NP PROG: sets cmd to run PROG_IMPL on NP ranks under IMPL's launcher
launcher() {
  local impl=$1 np=$2 prog=$bin/$3_$1
  case "$impl" in
    adi3) cmd=("$bin/mpiexec" -n "$np" "$prog") ;;
    mpich) cmd=(mpiexec.mpich -n "$np" "$prog") ;;
    openmpi) cmd=(mpirun.openmpi --oversubscribe -n "$np" "$prog") ;;
  esac
}

# JOBS: name, ranks, program, its arguments. bench/rma's rmabench_<impl>
# (one-sided) runs as jobs rma_put .. rma_cas when built, one launch per
# operation so a peer that crashes on one loses only that one.
jobs=(
  "p2p 2 mpibench latency bw bibw msgrate"
  "match 2 mpibench match"
  "pack 2 mpibench pack"
  "threads 2 mpibench threads"
  "msgrate4 4 mpibench msgrate"
  "busy4 4 mpibench busy"
  "busy8 8 mpibench busy"
  "coll2 2 mpibench coll"
  "coll4 4 mpibench coll"
  "coll8 8 mpibench coll"
)
if [ -x "$bin/rmabench_adi3" ]; then
  for g in put get acc fop cas; do jobs+=("rma_$g 2 rmabench --only ^${g}_"); done
fi
[ "$quick" = yes ] && jobs=("p2p 2 mpibench latency bw msgrate")

# run_all RAW REPEAT EXTRA...: appends "impl repeat name@ranks size value
# unit" lines to RAW. The repeats go round the jobs and, within a job,
# round the implementations (starting one later each repeat), so a burst
# of outside load hits several of them rather than every run of one.
run_all() {
  local raw=$1 reps=$2; shift 2
  local r j k n=${#impls[@]} name np prog args impl o tmo=600
  [ "$quick" = yes ] && tmo=60
  for ((r = 1; r <= reps; r++)); do
    [ "$quick" = no ] && echo "# repeat $r/$reps" >&2
    "$bin/mpibench_baseline" | awk -v r="$r" 'NF == 4 && !/^#/ { print "base", r, $1, $2, $3, $4 }' >>"$raw"
    for j in "${jobs[@]}"; do
      read -r name np prog args <<<"$j"
      [[ $name =~ $only ]] || continue
      for ((k = 0; k < n; k++)); do
        impl=${impls[$(((k + r) % n))]}
        [ -x "$bin/${prog}_$impl" ] || continue
        launcher "$impl" "$np" "$prog"
        # shellcheck disable=SC2086
        if ! o=$(timeout "$tmo" "${cmd[@]}" $args --target "$target" "$@" 2>"$raw.err"); then
          echo "# $impl $name repeat $r failed: $(tail -n 2 "$raw.err" | tr '\n' ' ')" >&2
        fi
        awk -v i="$impl" -v r="$r" -v np="$np" 'NF == 4 && !/^#/ { print i, r, $1 "@" np, $2, $3, $4 }' <<<"$o" >>"$raw"
      done
    done
  done
  rm -f "$raw.err"
}

# report RAW DIR: tables on stdout, DIR/tables.md, DIR/plots/NAME.{dat,png}
report() {
  local raw=$1 dir=$2
  mkdir -p "$dir/plots"
  awk -v dir="$dir" -f "$here/report.awk" "$raw"
  command -v gnuplot >/dev/null || { echo "# no gnuplot: no plots" >&2; return 0; }
  local d
  for d in "$dir"/plots/*.dat; do
    [ -e "$d" ] || continue
    gnuplot "${d%.dat}.gp" 2>/dev/null || echo "# gnuplot failed on $d" >&2
  done
}

# floor_check RAW: 0 when adi3's best figures clear the floors
floor_check() {
  awk -v lat_x="${LAT_X:-100}" -v bw_div="${BW_DIV:-20}" -v bw_cl="${BW_CL:-2}" -v rate_x="${RATE_X:-200}" '
    function med(k,   n, i, j, t) {
      n = cnt[k]
      for (i = 2; i <= n; i++) for (j = i; j > 1 && v[k, j - 1] > v[k, j]; j--) { t = v[k, j]; v[k, j] = v[k, j - 1]; v[k, j - 1] = t }
      return n % 2 ? v[k, (n + 1) / 2] : (v[k, n / 2] + v[k, n / 2 + 1]) / 2
    }
    $1 == "base" { k = $3; v[k, ++cnt[k]] = $5; next }
    $1 == "adi3" && $3 == "latency@2" && $4 == 8 { if (!lat || $5 < lat) lat = $5 }
    $1 == "adi3" && $3 == "bw@2" && $4 == 1048576 { if ($5 > bw) bw = $5 }
    $1 == "adi3" && $3 == "msgrate@2" && $4 == 8 { if ($5 > rate) rate = $5 }
    END {
      cl = med("cacheline"); mc = med("memcpy"); bad = 0
      if (!cl || !mc) { print "quick: no baseline figures"; exit 1 }
      printf "quick: baseline: cache line one-way %.3f us, memcpy 1 MiB %.0f MB/s\n", cl, mc
      f = lat_x * cl; ok = lat && lat <= f; bad += !ok
      printf "quick: latency 8 B   %10.3f us     floor <= %.3f us (%g x cache line)  %s\n", lat, f, lat_x, ok ? "ok" : "FAIL"
      # Streaming needs both cores: when the cache line shows they are
      # shared with other work, the floor follows it down.
      f = mc / bw_div; why = sprintf("memcpy / %g", bw_div)
      if (bw_cl * 64 / cl < f) { f = bw_cl * 64 / cl; why = sprintf("%g x 64 B per cache-line time: cores shared", bw_cl) }
      ok = bw >= f; bad += !ok
      printf "quick: bandwidth 1 MiB %8.0f MB/s   floor >= %.0f MB/s (%s)  %s\n", bw, f, why, ok ? "ok" : "FAIL"
      f = 1 / (rate_x * cl); ok = rate >= f; bad += !ok
      printf "quick: msg rate 8 B  %10.3f Mmsg/s floor >= %.3f Mmsg/s (1 / (%g x cache line))  %s\n", rate, f, rate_x, ok ? "ok" : "FAIL"
      exit bad ? 1 : 0
    }' "$1"
}

if [ "$quick" = yes ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  [ "$target" = 0.02 ] && target=0.002
  for attempt in 1 2 3; do
    : >"$tmp/raw"
    run_all "$tmp/raw" 3 --quick
    if floor_check "$tmp/raw"; then exit 0; fi
    echo "quick: attempt $attempt below a floor" >&2
  done
  echo "quick: adi3 stays below a floor in 3 attempts (raw figures follow)" >&2
  grep -v '^base' "$tmp/raw" >&2
  exit 1
fi

[ -n "$out" ] || out=$root/results/mpibench-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$out"
echo "# results in $out; implementations: ${impls[*]}; $repeat repeats" >&2
run_all "$out/raw.txt" "$repeat"
report "$out/raw.txt" "$out" | tee "$out/tables.txt"
