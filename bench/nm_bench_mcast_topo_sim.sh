#!/usr/bin/env bash
# nm_bench_mcast_topo_sim.sh - Song, Dongarra, Moore 2009, fig. 5 and fig. 4 under nmad-sim (issue 19, benchmark
# 6a): 16-128 processes on a 64-node, 2-processes-per-node Myrinet-like cluster (doc/platforms/myrinet-64x2.xml),
# topology-ID multicast (nm_mcast_isend_seg with NM_MCAST_TREE_TOPO_ID, 8 KiB segments: "dag_mcast") vs a flat
# loop of sends (nm_bench_mcast's naive mode: "flat_mcast") vs nmad's binomial broadcast (nm_coll_bcast binomial,
# the tree of the MPI shim's MPI_Bcast: "mpi_bcast"), 512 KiB and 1 MiB, root 0 to every other process. Then the
# segment-size sweep of fig. 4 for dag_mcast. Simulated time is deterministic: one iteration per point.
#
# Usage: bench/nm_bench_mcast_topo_sim.sh [--procs "16 32 64 128"] [--sizes "512K 1M"] [--sweep-procs "16 128"]
#                                         [--segs "1K 2K 4K 8K 16K 32K 64K 128K"] [--no-sweep] [--seg 8K]
#                                         [--out DIR]
#   --seg  segment size of dag_mcast in the fig. 5 table (default 8K, the paper's; 0 = whole message)
# Prints two tables and writes CSVs in DIR (default ./bench-mcast-topo-sim). Exit status 0 when every point ran.
set -u -o pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(dirname "$SCRIPT_DIR")
PLATFORM=$TOP/doc/platforms/myrinet-64x2.xml
PROCS="16 32 64 128"
SIZES="512K 1M"
SWEEP_PROCS="16 128"
SEGS="1K 2K 4K 8K 16K 32K 64K 128K"
SWEEP=1
SEG=8K
OUT=./bench-mcast-topo-sim
while [ $# -gt 0 ]; do
  case "$1" in
    --procs) PROCS=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    --sweep-procs) SWEEP_PROCS=$2; shift 2 ;;
    --segs) SEGS=$2; shift 2 ;;
    --no-sweep) SWEEP=0; shift ;;
    --seg) SEG=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "nm_bench_mcast_topo_sim.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
NMAD_SIM=${NMAD_SIM:-$TOP/nmad-sim}
BENCH=${BENCH:-$TOP/nm_bench_mcast}
# Two ranks per node, block placement: the topology IDs say so (host digits, then the processor digit).
export NMAD_MCAST_TOPO=${NMAD_MCAST_TOPO:-2}
mkdir -p "$OUT"
status=0
run() { # N SIZE LOG ARGS...: one simulated run of nm_bench_mcast, CSV rows in LOG
  local n=$1 size=$2 log=$3
  shift 3
  timeout -k 10 900 "$NMAD_SIM" -n "$n" --platform "$PLATFORM" --ranks-per-host 2 --cfg=network/model:CM02 \
    "$BENCH" --min "$size" --max "$size" --iters 1 --warmup 0 --csv --check "$@" >"$log" 2>&1
}
get() { awk -F, -v m="$1" '$1 == m {print $5}' "$2"; }

CSV=$OUT/fig5.csv
echo "procs,size,flat_us,binomial_us,dag_topo_us,dag_over_binomial,flat_over_dag" >"$CSV"
printf '# %s, platform %s, NMAD_MCAST_TOPO=%s, dag segment %s, root 0 to every other process (Song 2009 fig. 5)\n' \
  "$(date -u +%F)" "$(basename "$PLATFORM")" "$NMAD_MCAST_TOPO" "$SEG"
printf '%6s %8s %12s %12s %12s %9s %9s\n' procs size flat_us binom_us dag_us dag/bin flat/dag
for size in $SIZES; do
  for n in $PROCS; do
    log=$OUT/fig5-$n-$size.log
    if ! run "$n" "$size" "$log" --mode all --tree topo --seg "$SEG"; then
      echo "N=$n size=$size failed; see $log" >&2
      status=1
      continue
    fi
    fl=$(get naive "$log") bn=$(get binomial "$log") dg=$(get dynamic "$log")
    line=$(awk -v n="$n" -v s="$size" -v a="$fl" -v b="$bn" -v d="$dg" \
      'BEGIN {printf "%d,%s,%s,%s,%s,%.4f,%.4f", n, s, a, b, d, d/b, a/d}')
    echo "$line" >>"$CSV"
    echo "$line" | awk -F, '{printf "%6d %8s %12.1f %12.1f %12.1f %9.3f %9.3f\n", $1, $2, $3, $4, $5, $6, $7}'
  done
done
echo "# csv: $CSV"

[ "$SWEEP" = 1 ] || exit $status
CSV=$OUT/fig4.csv
echo "procs,size,seg,dag_topo_us" >"$CSV"
printf '# segment-size sweep of dag_mcast (Song 2009 fig. 4); "whole" = one segment\n'
printf '%6s %8s %8s %12s\n' procs size seg dag_us
for size in $SIZES; do
  for n in $SWEEP_PROCS; do
    for seg in $SEGS whole; do
      log=$OUT/fig4-$n-$size-$seg.log
      segarg=$seg
      [ "$seg" = whole ] && segarg=0
      if ! run "$n" "$size" "$log" --mode dynamic --tree topo --seg "$segarg"; then
        echo "N=$n size=$size seg=$seg failed; see $log" >&2
        status=1
        continue
      fi
      dg=$(get dynamic "$log")
      echo "$n,$size,$seg,$dg" >>"$CSV"
      printf '%6d %8s %8s %12.1f\n' "$n" "$size" "$seg" "$dg"
    done
  done
done
echo "# csv: $CSV"
exit $status
