#!/usr/bin/env bash
# nm_bench_mcast_sim.sh - Denis 2020, fig. 2 under nmad-sim: the duration of an 8 MB broadcast from the root to
# 1..99 recipients of a 100-node InfiniBand QDR cluster, for nmad's naive loop of sends, static binomial tree and
# dynamic broadcast (bench/nm_bench_mcast.c, the same program as under nmad-run). Prints a table with the ratios
# the paper states (naive linear in the recipients; dynamic within a few percent of binomial), writes the CSV and
# a PNG.
#
# Usage: bench/nm_bench_mcast_sim.sh [--platform FILE] [--nodes "2 3 4 ... 100"] [--size 8M] [--fake-payload B]
#                                    [--cfg=NAME:VALUE] [--out DIR]
#   --nodes      job sizes N (recipients N-1) to simulate; default every N from 2 to 16, then every 4th to 100
#   --size       broadcast size (default 8M)
#   --fake-payload B  move only the size of transfers above B bytes (default: all bytes delivered and checked)
# A job of N ranks on the first N hosts stands for N-1 recipients in the 100-node job of the paper: the platform is
# homogeneous and the idle nodes take no part. Simulated time is deterministic: one iteration per point.
# Exit status: 0 when every point ran, 1 otherwise.
set -u -o pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(dirname "$SCRIPT_DIR")
PLATFORM=$TOP/doc/platforms/inti-ib-qdr-100.xml
NODES="$(seq -s ' ' 2 16) $(seq -s ' ' 20 4 100)"
SIZE=8M
FAKE=""
CFG=()
OUT=./bench-mcast-sim
while [ $# -gt 0 ]; do
  case "$1" in
    --platform) PLATFORM=$2; shift 2 ;;
    --nodes) NODES=$2; shift 2 ;;
    --size) SIZE=$2; shift 2 ;;
    --fake-payload) FAKE="--fake-payload $2"; shift 2 ;;
    --cfg=*) CFG+=("$1"); shift ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "nm_bench_mcast_sim.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
NMAD_SIM=${NMAD_SIM:-$TOP/nmad-sim}
BENCH=${BENCH:-$TOP/nm_bench_mcast}
mkdir -p "$OUT"
CSV=$OUT/mcast_sim.csv
echo "nodes,recipients,naive_us,binomial_us,dynamic_us,dynamic_over_binomial,naive_over_dynamic" >"$CSV"
status=0
check="--check"
[ -n "$FAKE" ] && check=""
printf '# %s, %s bytes, platform %s\n' "$(date -u +%F)" "$SIZE" "$(basename "$PLATFORM")"
printf '%6s %11s %14s %14s %14s %9s %9s\n' nodes recipients naive_us binomial_us dynamic_us dyn/bin naive/dyn
for n in $NODES; do
  log=$OUT/run-$n.log
  # shellcheck disable=SC2086
  if ! timeout -k 10 600 "$NMAD_SIM" -n "$n" --platform "$PLATFORM" $FAKE "${CFG[@]}" "$BENCH" --mode all \
       --min "$SIZE" --max "$SIZE" --iters 1 --warmup 0 --csv $check >"$log" 2>&1; then
    echo "N=$n failed; see $log" >&2
    status=1
    continue
  fi
  get() { awk -F, -v m="$1" '$1 == m {print $5}' "$log"; }
  nv=$(get naive) bn=$(get binomial) dy=$(get dynamic)
  line=$(awk -v n="$n" -v a="$nv" -v b="$bn" -v d="$dy" \
    'BEGIN {printf "%d,%d,%s,%s,%s,%.4f,%.4f", n, n-1, a, b, d, d/b, a/d}')
  echo "$line" >>"$CSV"
  echo "$line" | awk -F, '{printf "%6d %11d %14.1f %14.1f %14.1f %9.3f %9.3f\n", $1, $2, $3, $4, $5, $6, $7}'
done
if command -v gnuplot >/dev/null 2>&1; then
  gnuplot <<EOF || status=1
set terminal pngcairo size 900,600 noenhanced
set output "$OUT/mcast_sim.png"
set datafile separator ","
set key top left
set grid
set title "$SIZE broadcast, $(basename "$PLATFORM") (nmad-sim): duration vs recipients (Denis 2020, fig. 2)"
set xlabel "recipients"
set ylabel "duration (ms)"
plot "$CSV" using 2:(\$3/1000) skip 1 with linespoints title "naive", \
     "" using 2:(\$4/1000) skip 1 with linespoints title "binomial", \
     "" using 2:(\$5/1000) skip 1 with linespoints title "dynamic"
EOF
  echo "# plot: $OUT/mcast_sim.png"
fi
echo "# csv: $CSV"
exit $status
