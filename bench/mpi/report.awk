# report.awk -v dir=DIR RAW: RAW holds "impl repeat name@ranks size value
# unit" lines (run.sh). Prints one table per benchmark (medians, adi3 vs
# the best peer, spreads) and writes DIR/tables.md and, per benchmark,
# DIR/plots/NAME.dat and NAME.gp (gnuplot script for NAME.png); ends with
# the rows where adi3 trails the best peer.
function median(k, n,   i, j, t, a) {
  for (i = 1; i <= n; i++) a[i] = val[k, i]
  for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
  lo = a[1]; hi = a[n]
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function fmt(x) {
  if (x == "") return "-"
  if (x >= 1000) return sprintf("%.0f", x)
  if (x >= 10) return sprintf("%.1f", x)
  if (x >= 1) return sprintf("%.2f", x)
  return sprintf("%.3f", x)
}
function sizename(s) {
  if (s >= 1048576 && s % 1048576 == 0) return (s / 1048576) " MiB"
  if (s >= 1024 && s % 1024 == 0) return (s / 1024) " KiB"
  return s
}
BEGIN {
  nimpl = split("adi3 mpich openmpi", impl)
  label["adi3"] = "adi3"; label["mpich"] = "MPICH"; label["openmpi"] = "Open MPI"
  md = dir "/tables.md"
  printf "" > md
}
$1 == "base" { b = $3; bval[b] = bval[b] " " $5; bunit[b] = $6; next }
NF == 6 {
  k = $3; s = $4 + 0
  if (!(k in unit)) { keys[++nk] = k; unit[k] = $6 }
  if (!((k, s) in hassize)) { hassize[k, s] = 1; nsz[k]++; sz[k, nsz[k]] = s }
  present[$1] = 1
  n = ++cnt[k, s, $1]; val[k, s, $1, n] = $5
}
END {
  for (b in bval) {
    n = split(bval[b], a, " ")
    for (i = 1; i <= n; i++) val["base", b, i] = a[i]
    m = median("base" SUBSEP b, n)
    line = sprintf("baseline: %s %s %s (median of %d; %s .. %s)", b, fmt(m), bunit[b], n, fmt(lo), fmt(hi))
    print line; print "- " line > md
  }
  print ""; print "" > md
  for (ki = 1; ki <= nk; ki++) {
    k = keys[ki]; split(k, kp, "@"); name = kp[1]; ranks = kp[2]
    lower = unit[k] == "us"
    col = name ~ /^match/ ? "depth" : name ~ /^threads/ ? "threads" : "bytes"
    # sizes in numeric order
    for (i = 1; i <= nsz[k]; i++) ord[i] = sz[k, i]
    for (i = 2; i <= nsz[k]; i++) for (j = i; j > 1 && ord[j - 1] > ord[j]; j--) { t = ord[j]; ord[j] = ord[j - 1]; ord[j - 1] = t }
    title = sprintf("%s, %s ranks (%s, %s is better)", name, ranks, unit[k], lower ? "lower" : "higher")
    printf "== %s\n%9s", title, col
    printf "### %s\n\n| %s |", title, col > md
    for (c = 1; c <= nimpl; c++) if (impl[c] in present) { printf " %9s", label[impl[c]]; printf " %s |", label[impl[c]] > md }
    printf " %8s  %s\n", "vs best", "spread %"
    printf " adi3 vs best peer | spread %% (%s) |\n|---:|", "max-min / median" > md
    for (c = 1; c <= nimpl; c++) if (impl[c] in present) printf "---:|" > md
    printf "---:|---|\n" > md
    dat = dir "/plots/" name "_" ranks ".dat"
    printf "# %s", col > dat
    for (c = 1; c <= nimpl; c++) if (impl[c] in present) printf " %s", impl[c] > dat
    printf "\n" > dat
    for (i = 1; i <= nsz[k]; i++) {
      s = ord[i]; best = ""; spread = ""; ncol = 0
      sn = col == "bytes" ? sizename(s) : s
      printf "%9s", sn; printf "| %s |", sn > md
      printf "%d", s > dat
      for (c = 1; c <= nimpl; c++) {
        im = impl[c]
        if (!(im in present)) continue
        n = cnt[k, s, im]; m = ""
        if (n) {
          m = median(k SUBSEP s SUBSEP im, n)
          sp = m > 0 ? sprintf("%.0f", 100 * (hi - lo) / m) : "-"
        } else sp = "-"
        med[im] = m
        spread = spread (ncol++ ? "/" : "") sp
        if (im != "adi3" && m != "") if (best == "" || (lower ? m < best : m > best)) best = m
        printf " %9s", fmt(m); printf " %s |", fmt(m) > md
        printf " %s", (m == "" ? "?" : m) > dat
      }
      ratio = "-"
      if (best != "" && med["adi3"] != "" && med["adi3"] > 0 && best > 0)
        ratio = sprintf("%.2fx", lower ? best / med["adi3"] : med["adi3"] / best)
      printf " %8s  %s\n", ratio, spread
      if (ratio != "-") {
        rows++
        if (ratio + 0 < 1) behind = behind sprintf("\n  %s, %s ranks, %s: %s", name, ranks, sn, ratio)
      }
      printf " %s | %s |\n", ratio, spread > md
      printf "\n" > dat
    }
    print ""; print "" > md
    close(dat)
    gp = dir "/plots/" name "_" ranks ".gp"
    printf "set terminal pngcairo size 800,500\nset output '%s'\n", dir "/plots/" name "_" ranks ".png" > gp
    printf "set title '%s'\nset datafile missing '?'\nset key top left\nset grid\n", title > gp
    printf "set xlabel '%s'\nset ylabel '%s'\nset logscale y\n", col, unit[k] > gp
    if (nsz[k] > 2 && ord[1] >= 0 && col != "threads") printf "set logscale x 2\n" > gp
    printf "plot" > gp
    c2 = 0
    for (c = 1; c <= nimpl; c++) if (impl[c] in present) {
      c2++
      printf "%s '%s' using ($1 == 0 ? 0.5 : $1):%d with linespoints title '%s'", (c2 > 1 ? "," : ""), dat, c2 + 1, label[impl[c]] > gp
    }
    printf "\n" > gp
    close(gp)
  }
  # The verdict of the run: rows where adi3 trails the best peer.
  if (!rows) exit
  nb = split(behind, dummy, "\n") - 1
  line = sprintf("summary: adi3 behind the best peer on %d of %d rows", nb, rows)
  print line (nb ? ":" behind : "")
  mdlist = behind; gsub(/\n  /, "\n- ", mdlist)
  print "### Summary\n\n" line (nb ? ":\n" mdlist : "") > md
}
