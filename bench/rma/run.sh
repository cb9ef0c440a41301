#!/usr/bin/env bash
# run.sh [--repeat N] [--target S] [--only RE] [--impls "adi3 adi3emul mpich openmpi"]
#        [--sizes LIST] [--base DIR] [--no-build] [BUILD_DIR]
# Builds rmabench with adi3's mpicc, mpicc.mpich and mpicc.openmpi (CMake
# target rmabench), runs the three alternately (2 ranks, each pinned to
# its own core by the program), N times (default 5), and prints per figure
# (adi3emul: adi3's binary with ADI3_FORCE_EMULATION=1, the emulated paths;
# adi3: its native paths where the channel has them)
# the median of each implementation, adi3's ratio to the best peer (>1:
# adi3 faster) and each one's spread ((max - min) / median, percent).
# Each operation group (put, get, acc, fop, cas) is a separate launch, so
# a peer that crashes on one group (Open MPI 4.1 does on compare_and_swap
# on allocated windows) loses only that group. --only RE picks the groups
# whose name it matches (e.g. 'fop|cas'); when it matches none of a group's
# name, that group's figures whose name it matches ('_create',
# 'bw.*alloc'). --sizes LIST: the bandwidth rows' sizes (bytes, comma-
# separated; default 1024,65536,1048576). Raw lines go to
# results/rmabench-DATE/raw.txt, the table to table.md there. --base DIR:
# also impl adi3base, the rmabench_adi3 and libraries of another build
# (e.g. a copy of DIR/bin and DIR/lib made before a change), for A/B.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
repeat=5 target=0.02 only=. impls= build=yes sizes=() base=
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --impls) impls=$2; shift 2 ;;
    --sizes) sizes=(--sizes "$2"); shift 2 ;;
    --no-build) build=no; shift ;;
    --base) base=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
bdir=${1:-$root/build/release}
bin=$bdir/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ "$build" = yes ]; then
  cmake --build "$bdir" --target rmabench mpiexec adi3_ch_shm -j2 >/dev/null ||
    { echo "run.sh: building failed (cmake --build $bdir --target rmabench)" >&2; exit 2; }
fi
if [ -z "$impls" ]; then
  impls=
  for i in adi3 mpich openmpi; do [ -x "$bin/rmabench_$i" ] && impls="$impls $i"; done
  [ -x "$bin/rmabench_adi3" ] && impls="${impls/adi3/adi3 adi3emul}"
  [ -n "$base" ] && impls="$impls adi3base"
fi
read -r -a impls <<<"$impls"
[ ${#impls[@]} -gt 0 ] || { echo "run.sh: no rmabench binaries in $bin" >&2; exit 2; }

out=$root/results/rmabench-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$out"
raw=$out/raw.txt
: >"$raw"
groups=(put get acc fop cas)
n=${#impls[@]}
for ((r = 1; r <= repeat; r++)); do
  echo "# repeat $r/$repeat" >&2
  for g in "${groups[@]}"; do
    # The group by its name, else its figures matching the pattern.
    sel=(--only "^${g}_")
    [[ $g =~ $only ]] || sel+=(--only "$only")
    for ((k = 0; k < n; k++)); do
      impl=${impls[$(((k + r) % n))]}
      case "$impl" in
        adi3) cmd=("$bin/mpiexec" -n 2) ;;
        adi3emul) cmd=(env ADI3_FORCE_EMULATION=1 "$bin/mpiexec" -n 2) ;;
        mpich) cmd=(mpiexec.mpich -n 2) ;;
        openmpi) cmd=(mpirun.openmpi --bind-to none -n 2) ;;
        adi3base) cmd=(env LD_LIBRARY_PATH="$base/lib" "$base/bin/mpiexec" -n 2) ;;
      esac
      exe=$bin/rmabench_${impl%emul}
      [ "$impl" = adi3base ] && exe=$base/bin/rmabench_adi3
      if ! o=$(timeout 300 "${cmd[@]}" "$exe" --target "$target" "${sizes[@]}" "${sel[@]}" 2>"$out/err"); then
        echo "# $impl $g repeat $r failed: $(grep -v '^\[' "$out/err" | tail -n 1)" >&2
      fi
      awk -v i="$impl" -v r="$r" 'NF == 4 && !/^#/ { print i, r, $1, $2, $3, $4 }' <<<"$o" >>"$raw"
    done
  done
done
rm -f "$out/err"

# The table: medians side by side, ratio to the best peer, spreads.
awk -v impls="${impls[*]}" '
  function med(k,   c, i, j, t, a) {
    c = cnt[k]; if (!c) return ""
    for (i = 1; i <= c; i++) a[i] = v[k, i]
    for (i = 2; i <= c; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    lo[k] = a[1]; hi[k] = a[c]
    return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
  }
  {
    key = $3 " " $4
    if (!(key in seen)) { seen[key] = 1; order[++nk] = key; unit[key] = $6 }
    k = $1 SUBSEP key; v[k, ++cnt[k]] = $5
  }
  END {
    ni = split(impls, im, " ")
    hdr = "| figure | size | unit |"; sep = "|---|---:|---|"
    for (i = 1; i <= ni; i++) { hdr = hdr " " im[i] " |"; sep = sep "---:|" }
    hdr = hdr " adi3 vs best peer | spread % (" impls ") |"; sep = sep "---:|---|"
    print hdr; print sep
    for (q = 1; q <= nk; q++) {
      key = order[q]; split(key, kk, " "); u = unit[key]; line = "| " kk[1] " | " kk[2] " | " u " |"
      best = ""; spread = ""
      for (i = 1; i <= ni; i++) {
        k = im[i] SUBSEP key; m[i] = med(k)
        line = line " " (m[i] == "" ? "-" : sprintf("%.4g", m[i])) " |"
        spread = spread (i > 1 ? " / " : "") (m[i] == "" || m[i] == 0 ? "-" : sprintf("%.0f", 100 * (hi[k] - lo[k]) / m[i]))
        if (im[i] !~ /^adi3/ && m[i] != "") {
          if (best == "" || (u == "us" && m[i] < best) || (u != "us" && m[i] > best)) best = m[i]
        }
      }
      ratio = "-"
      for (i = 1; i <= ni; i++) if (im[i] == "adi3" && m[i] != "" && best != "" && m[i] > 0)
        ratio = sprintf("%.2f", u == "us" ? best / m[i] : m[i] / best)
      print line " " ratio " | " spread " |"
    }
  }' "$raw" | tee "$out/table.md"
echo "# raw figures: $raw" >&2
