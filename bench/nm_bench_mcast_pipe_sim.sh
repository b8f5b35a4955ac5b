#!/usr/bin/env bash
# nm_bench_mcast_pipe_sim.sh - pipelined dynamic broadcasts under nmad-sim (issue 17, deliverable 5): the
# duration of a broadcast from rank 0 to the 99 other nodes of the 100-node InfiniBand QDR platform
# (doc/platforms/inti-ib-qdr-100.xml), for each tree kind, store-and-forward (segment 0) and pipelined with each
# segment size (bench/nm_bench_mcast.c --mode dynamic --tree T --seg S). Prints a table with, per point, the
# speedup over store-and-forward in the same tree and over the store-and-forward binomial tree (nmad's default),
# and for the chain the model's prediction (X + p - 2) segment steps, a step being one segment's hop measured as a
# lone 2-rank broadcast of one segment. Writes the CSV and a PNG (duration vs segment size, one line per tree).
#
# Usage: bench/nm_bench_mcast_pipe_sim.sh [--platform FILE] [--nodes 100] [--size 16M]
#                                         [--segs "0 16K 32K 64K 128K 256K 512K 1M 4M"]
#                                         [--trees "chain binary binomial flat"] [--check] [--out DIR]
#   --check  deliver and check every byte (slow: 3 GB of buffers at 100 ranks x 16 MiB); default: nmad-sim
#            --fake-payload 4096, which moves only the size of larger transfers (the same simulated times).
# Simulated time is deterministic: one iteration per point. Exit status: 0 when every point ran, 1 otherwise.
set -u -o pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(dirname "$SCRIPT_DIR")
PLATFORM=$TOP/doc/platforms/inti-ib-qdr-100.xml
NODES=100
SIZE=16M
SEGS="0 16K 32K 64K 128K 256K 512K 1M 4M"
TREES="chain binary binomial flat"
PAYLOAD=(--fake-payload 4096)
CHECK=""
OUT=./bench-mcast-pipe-sim
while [ $# -gt 0 ]; do
  case "$1" in
    --platform) PLATFORM=$2; shift 2 ;;
    --nodes) NODES=$2; shift 2 ;;
    --size) SIZE=$2; shift 2 ;;
    --segs) SEGS=$2; shift 2 ;;
    --trees) TREES=$2; shift 2 ;;
    --check) PAYLOAD=(); CHECK=--check; shift ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "nm_bench_mcast_pipe_sim.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
NMAD_SIM=${NMAD_SIM:-$TOP/nmad-sim}
BENCH=${BENCH:-$TOP/nm_bench_mcast}
mkdir -p "$OUT"
CSV=$OUT/mcast_pipe_sim.csv
status=0

# Duration (us) of one broadcast: run N TREE SEG SIZE
run() {
  local log=$OUT/run-$1-$2-$3-$4.log
  if ! timeout -k 10 600 "$NMAD_SIM" -n "$1" --platform "$PLATFORM" "${PAYLOAD[@]}" "$BENCH" --mode dynamic \
       --tree "$2" --seg "$3" --min "$4" --max "$4" --iters 1 --warmup 0 --csv $CHECK >"$log" 2>&1; then
    echo "N=$1 tree $2 seg $3 failed; see $log" >&2
    status=1
    echo nan
    return
  fi
  awk -F, '$1 == "dynamic" {print $5}' "$log"
}
bytes() { numfmt --from=iec "$1"; }

printf '# %s, %s bytes from rank 0 to %d ranks, platform %s%s\n' "$(date -u +%F)" "$SIZE" $((NODES - 1)) \
  "$(basename "$PLATFORM")" "${PAYLOAD[*]:+, nmad-sim ${PAYLOAD[*]}}"
base_binomial=$(run "$NODES" binomial 0 "$SIZE")
echo "tree,seg,segments,duration_us,over_same_tree_sf,over_binomial_sf,model_us" >"$CSV"
printf '%-9s %8s %8s %13s %11s %12s %12s\n' tree seg segments duration_us "sf/pipe" "binom_sf/pipe" "model_us"
for tree in $TREES; do
  sf=""
  for seg in $SEGS; do
    if [ "$tree" = binomial ] && [ "$seg" = 0 ]; then d=$base_binomial; else d=$(run "$NODES" "$tree" "$seg" "$SIZE"); fi
    [ "$seg" = 0 ] && sf=$d
    sb=$(bytes "$seg") mb=$(bytes "$SIZE")
    x=$(( sb > 0 && sb < mb ? (mb + sb - 1) / sb : 1 ))
    model=""
    if [ "$tree" = chain ] && [ "$x" -gt 1 ]; then
      # one step: a lone segment over one hop (2 ranks, the same platform)
      step=$(run 2 chain 0 "$seg")
      model=$(awk -v x="$x" -v p="$NODES" -v s="$step" 'BEGIN {printf "%.1f", (x + p - 2) * s}')
    fi
    line=$(awk -v t="$tree" -v s="$seg" -v x="$x" -v d="$d" -v f="$sf" -v b="$base_binomial" -v m="$model" \
      'BEGIN {printf "%s,%s,%d,%s,%.3f,%.3f,%s", t, s, x, d, f / d, b / d, m}')
    echo "$line" >>"$CSV"
    echo "$line" | awk -F, '{printf "%-9s %8s %8d %13.1f %11.3f %12.3f %12s\n", $1, $2, $3, $4, $5, $6, $7}'
  done
done
if command -v gnuplot >/dev/null 2>&1; then
  gnuplot <<GP || status=1
set terminal pngcairo size 900,600 noenhanced
set output "$OUT/mcast_pipe_sim.png"
set datafile separator ","
set key top left
set grid
set logscale y
set title "$SIZE dynamic broadcast to $((NODES - 1)) nodes, $(basename "$PLATFORM") (nmad-sim): duration vs segment size"
set xlabel "segment size (0 = store-and-forward)"
set ylabel "duration (ms)"
set style data linespoints
plot for [t in "$TREES"] "$CSV" using 0:(strcol(1) eq t ? \$4/1000 : 1/0):xtic(2) skip 1 title t
GP
  echo "# plot: $OUT/mcast_pipe_sim.png"
fi
echo "# csv: $CSV"
exit $status
