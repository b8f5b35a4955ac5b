#!/usr/bin/env bash
# mpi_bcast_algos.sh - MPI_Bcast of nmad's MPI shim, with its automatic choice and with each algorithm forced
# (NMAD_BCAST_ALGO), against Open MPI's tuned broadcast with its default decision and with each algorithm forced
# (--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_bcast_algorithm K), all in one run. Issue 17, benchmark
# 7a and the judged line "MPI_Bcast at N = 8 within 1.2x of the best of Open MPI's forced algorithms at 8 B,
# 64 KiB, 1 MiB and 16 MiB".
#
# Usage: bench/mpi_bcast_algos.sh [--np "4 8"] [--sizes "8 64K 1M 16M"] [--prov shm|tcp] [--iters N]
#                                 [--repeat R] [--out DIR]
# The program is bench/mpi_bench.c --bench bcast (median over iterations of the slowest rank's time, each
# iteration after a barrier), built with nmad's mpicc and with mpicc.openmpi. Every contender runs --repeat times
# and keeps its best median (nm_bench_lib.sh best_rows on column 4, lat_median_us; until 2026-11-27 the run with
# the lowest minimum was kept, whose median could be the worse one), in the order nmad-auto, nmad forced, ompi, so that a burst
# of load on this shared machine does not decide a ratio. Prints, per (N, size), every contender's median, then
# the table: nmad auto, the best nmad forced algorithm, Open MPI's default, the best Open MPI forced algorithm, and
# the ratios auto / best-ompi-forced (judged: <= 1.2 at N = 8) and auto / best-nmad-forced (how good the model's
# choice is here). More ranks than cores are oversubscribed (not bound). Exit status: 0 if every run produced
# data, 1 otherwise, 2 on bad usage.
set -u -o pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NMAD_BUILD_DIR=${NMAD_BUILD_DIR:-$(dirname "$SCRIPT_DIR")}
NPS="4 8"
SIZES="8 64K 1M 16M"
PROV=shm
ITERS=100
REPEAT=2
OUT=./bench-bcast-algos
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
while [ $# -gt 0 ]; do
  case "$1" in
    --np) NPS=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    --prov) PROV=$2; shift 2 ;;
    --iters) ITERS=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
STATUS=0
note() { echo "# $*" >&2; }
fail() { echo "# FAILED: $*" >&2; STATUS=1; }
mkdir -p "$OUT/bin" "$OUT/logs" || exit 2
OUT=$(cd "$OUT" && pwd)
LOG=$OUT/logs
# shellcheck source=bench/nm_bench_lib.sh
. "$SCRIPT_DIR/nm_bench_lib.sh"

NMAD_MPICC=${NMAD_MPICC:-$NMAD_BUILD_DIR/nmad/mpi/mpicc}
NMAD_MPIRUN=${NMAD_MPIRUN:-$NMAD_BUILD_DIR/nmad/mpi/mpirun}
MPICC=${MPICC:-mpicc.openmpi}
MPIRUN=${MPIRUN:-mpirun.openmpi}
build() { # compiler output-name
  "$1" -O2 -I "$SCRIPT_DIR" "$SCRIPT_DIR/mpi_bench.c" "$SCRIPT_DIR/bench_common.c" -o "$OUT/bin/$2" \
    >"$LOG/build_$2.log" 2>&1 || { fail "could not build $2 with $1 (see $LOG/build_$2.log)"; exit 1; }
}
build "$NMAD_MPICC" mpi_bench_nmad
build "$MPICC" mpi_bench_ompi

NMAD_ALGOS="flat chain pipelined_chain binary split_binary binomial scatter_ring scatter_rd"
# Open MPI 4.1's coll_tuned_bcast_algorithm values (ompi_info --param coll tuned --level 9)
OMPI_ALGOS="1:basic_linear 2:chain 3:pipeline 4:split_binary_tree 5:binary_tree 6:binomial 7:knomial
            8:scatter_allgather 9:scatter_allgather_ring"
bytes() { numfmt --from=iec "$1"; }

run_nmad() { # np size csv algo-or-auto
  local env=(env FI_TCP_IFACE=lo)
  [[ $4 != auto ]] && env+=(NMAD_BCAST_ALGO="$4")
  run_csv "$3" "nmad $4 N=$1 size=$2" "${env[@]}" "$NMAD_MPIRUN" -n "$1" --timeout "$RUN_TIMEOUT" \
    --bind-to "$(bind_policy "$1")" -x NMAD_DRIVER="$PROV" "$OUT/bin/mpi_bench_nmad" \
    --csv --bench bcast --min "$2" --max "$2" --iters "$ITERS" --warmup $((ITERS / 10 + 2))
}
run_ompi() { # np size csv algo-number
  ompi_btl "$PROV"
  run_csv "$3" "ompi $4 N=$1 size=$2" "$MPIRUN" --allow-run-as-root --oversubscribe -np "$1" \
    --bind-to "$(bind_policy "$1")" --mca pml ob1 "${OMPI_BTL[@]}" --mca oob_tcp_if_include lo \
    --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_bcast_algorithm "$4" "$OUT/bin/mpi_bench_ompi" \
    --csv --bench bcast --min "$2" --max "$2" --iters "$ITERS" --warmup $((ITERS / 10 + 2))
}
median_of() { awk -F, 'NR > 1 { print $4; exit }' "$1" 2>/dev/null; } # lat_median_us

printf '%-4s %-9s %-28s %12s\n' N size contender median_us >"$OUT/all.txt"
for np in $NPS; do
  for size in $SIZES; do
    b=$(bytes "$size")
    for rep in $(seq 1 "$REPEAT"); do
      for a in auto $NMAD_ALGOS; do run_nmad "$np" "$b" "$OUT/nmad_${a}_${np}_${b}_r$rep.csv" "$a"; done
      for k in 0 $OMPI_ALGOS; do run_ompi "$np" "$b" "$OUT/ompi_${k%%:*}_${np}_${b}_r$rep.csv" "${k%%:*}"; done
    done
    for a in auto $NMAD_ALGOS; do
      BEST_COL=4 best_rows "$OUT/nmad_${a}_${np}_$b.csv" "$OUT/nmad_${a}_${np}_${b}"_r*.csv
      printf '%-4s %-9s %-28s %12s\n' "$np" "$size" "nmad $a" "$(median_of "$OUT/nmad_${a}_${np}_$b.csv")" >>"$OUT/all.txt"
    done
    for k in 0:default $OMPI_ALGOS; do
      BEST_COL=4 best_rows "$OUT/ompi_${k%%:*}_${np}_$b.csv" "$OUT/ompi_${k%%:*}_${np}_${b}"_r*.csv
      printf '%-4s %-9s %-28s %12s\n' "$np" "$size" "ompi ${k#*:}" "$(median_of "$OUT/ompi_${k%%:*}_${np}_$b.csv")" \
        >>"$OUT/all.txt"
    done
  done
done
cat "$OUT/all.txt"
echo
echo "MPI_Bcast over $PROV: medians in us (best of $REPEAT runs); ratios > 1: nmad slower"
awk '
  NR == 1 { next }
  { key = $1 " " $2; split($3 " " $4, w, " "); who = w[1]; algo = w[2]; v = $5; if (v == "") next
    if (!(key in order)) { order[key] = ++n; keys[n] = key }
    if (who == "nmad" && algo == "auto") auto[key] = v
    else if (who == "nmad" && (!(key in bn) || v < bn[key])) { bn[key] = v; bna[key] = algo }
    else if (who == "ompi" && algo == "default") od[key] = v
    else if (who == "ompi" && (!(key in bo) || v < bo[key])) { bo[key] = v; boa[key] = algo } }
  END {
    printf "%-4s %-6s %10s %10s %-16s %10s %10s %-22s %12s %12s\n", "N", "size", "nmad_auto", "nmad_best",
           "(algo)", "ompi_dflt", "ompi_best", "(algo)", "auto/ompi", "auto/nbest"
    for (i = 1; i <= n; i++) { k = keys[i]; split(k, f, " ")
      printf "%-4s %-6s %10s %10s %-16s %10s %10s %-22s %12.2f %12.2f\n", f[1], f[2], auto[k], bn[k], bna[k],
             od[k], bo[k], boa[k], (bo[k] > 0 ? auto[k] / bo[k] : 0), (bn[k] > 0 ? auto[k] / bn[k] : 0) } }
' "$OUT/all.txt" | tee "$OUT/summary.txt"
exit $STATUS
