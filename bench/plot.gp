# plot.gp - latency and bandwidth vs message size for nmad, raw libfabric (fi_pingpong) and Open MPI.
#
# Usage: gnuplot -e "dir='bench-results'; out='bench-results/compare.png'" bench/plot.gp
# Reads, in dir, whichever of these CSV files exist (written by bench/nm_bench_compare.sh):
#   nmad_pingpong_{shm,tcp}.csv, ompi_pingpong_{shm,tcp}.csv   size,lat_min_us,lat_median_us,bw_MBps
#   fi_pingpong_{shm,tcp}.csv                                   size,lat_mean_us,bw_MBps
# Left panel: one-way latency (us, median for nmad/Open MPI, mean for fi_pingpong); right panel: bandwidth
# (MB/s, 1 MB = 1e6 B). Both axes logarithmic; size 0 is left out (no place for it on a log axis).

if (!exists("dir")) dir = "bench-results"
if (!exists("out")) out = dir . "/compare.png"

if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size 1400,560 enhanced font "sans,10"
} else {
  set terminal png size 1400,560
}
set output out
set datafile separator ","
set logscale xy 2
set logscale y 10
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set key top left
set xtics ("1" 1, "8" 8, "64" 64, "512" 512, "4K" 4096, "32K" 32768, "256K" 262144, "2M" 2097152, "16M" 16777216, "128M" 134217728)
set xlabel "message size (bytes; K = 1024, M = 1024^2)"

# A file counts only if it has at least one data row below its header line.
exists_file(f) = system("test -f '" . f . "' && test $(grep -c '^[0-9]' '" . f . "') -gt 0 && echo 1 || echo 0") + 0

# Series: file prefix, title, line type (color); shm solid, tcp dashed.
prefixes = "nmad_pingpong fi_pingpong ompi_pingpong"
names = "nmad raw-libfabric Open-MPI"
colors = "#1f77b4 #2ca02c #d62728"
provs = "shm tcp"

# Build "plot" commands only for the files present, then eval them.
latcmd = ""
bwcmd = ""
do for [i = 1:words(prefixes)] {
  do for [j = 1:words(provs)] {
    f = dir . "/" . word(prefixes, i) . "_" . word(provs, j) . ".csv"
    if (exists_file(f)) {
      # fi_pingpong has (size, lat, bw); the others (size, min, median, bw).
      latcol = (word(prefixes, i) eq "fi_pingpong") ? 2 : 3
      bwcol = (word(prefixes, i) eq "fi_pingpong") ? 3 : 4
      style = sprintf("with linespoints lw 2 pt %d dt %d lc rgb '%s' title '%s %s'", \
                      6 + 2 * (j - 1), j, word(colors, i), word(names, i), word(provs, j))
      latcmd = latcmd . (strlen(latcmd) > 0 ? ", " : "") . \
               sprintf("'%s' every ::1 using ($1 > 0 ? $1 : NaN):%d %s", f, latcol, style)
      bwcmd = bwcmd . (strlen(bwcmd) > 0 ? ", " : "") . \
              sprintf("'%s' every ::1 using ($1 > 0 ? $1 : NaN):($%d > 0 ? $%d : NaN) %s", f, bwcol, bwcol, style)
    }
  }
}

set multiplot layout 1,2 title "nmad vs raw libfabric vs Open MPI: ping-pong, one-way"
set title "latency"
set ylabel "one-way latency (us)"
# Without data, draw empty framed panels that say so (plotting nothing at all is an error in gnuplot).
if (strlen(latcmd) == 0) { set xrange [1:4194304]; set yrange [0.1:1000]; set label 1 "no data" at graph 0.5,0.5 center }
if (strlen(latcmd) > 0) { eval("plot " . latcmd) } else { plot 1e9 notitle }
set title "bandwidth"
set ylabel "bandwidth (MB/s, 1 MB = 1e6 B)"
set key bottom right
if (strlen(bwcmd) > 0) { eval("plot " . bwcmd) } else { plot 1e9 notitle }
unset multiplot
