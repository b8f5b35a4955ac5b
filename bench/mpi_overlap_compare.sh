#!/usr/bin/env bash
# mpi_overlap_compare.sh - communication/computation overlap of non-blocking collectives (bench/mpi_overlap.c,
# built with nmad's mpicc and with Open MPI's), in one run: nmad with NMAD_PROGRESS=poll (the default), nmad with
# NMAD_PROGRESS=thread (the progress thread), and Open MPI; then what the progress thread costs on the latency
# path (bench/mpi_bench.c ping-pong, poll against thread). Prints a table with ratios, writes CSVs and a PNG.
#
# Usage: bench/mpi_overlap_compare.sh [--provider shm|tcp|both] [--np "2 4"] [--max SIZE] [--iters N]
#                                     [--out DIR] [--timeout SEC]
# Ratios: "total thread/ompi" = t_total of nmad with the thread over Open MPI's (<1: nmad finishes the operation
# plus the computation sooner); "pure thread/poll" = the operation alone with the thread over without (what the
# thread costs when nothing is computed). Overlap is the OSU definition (bench/mpi_overlap.c).
# Runs with as many processes as cores are bound one per core (nm_bench_lib.sh), more are not; the progress
# threads then share the ranks' cores (NMAD_BIND's fallback: no idle core), as an application using all cores.
# Exit status: 0 if every run succeeded, 1 if some failed (the rest still runs), 2 on bad usage.

set -u -o pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NMAD_BUILD_DIR=${NMAD_BUILD_DIR:-$(dirname "$SCRIPT_DIR")}
PROVIDER=both NPS="2 4" MAXSIZE=1M ITERS=100 OUT=./mpi-overlap-results RUN_TIMEOUT=600

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "mpi_overlap_compare: $*" >&2; exit 2; }
note() { echo "== $*" >&2; }
FAILED=0
fail() { echo "mpi_overlap_compare: FAILED: $*" >&2; FAILED=1; }

while [[ $# -gt 0 ]]; do
  case $1 in
    --provider) PROVIDER=${2:?}; shift 2 ;;
    --np) NPS=${2:?}; shift 2 ;;
    --max) MAXSIZE=${2:?}; shift 2 ;;
    --iters) ITERS=${2:?}; shift 2 ;;
    --out) OUT=${2:?}; shift 2 ;;
    --timeout) RUN_TIMEOUT=${2:?}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
case $PROVIDER in shm|tcp) PROVIDERS=$PROVIDER ;; both) PROVIDERS="shm tcp" ;; *) die "--provider: shm, tcp or both" ;; esac
mkdir -p "$OUT/bin" "$OUT/logs" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
LOG=$OUT/logs

# shellcheck source=bench/nm_bench_lib.sh
. "$SCRIPT_DIR/nm_bench_lib.sh"
NMAD_MPICC=${NMAD_MPICC:-$NMAD_BUILD_DIR/nmad/mpi/mpicc}
NMAD_MPIRUN=${NMAD_MPIRUN:-$NMAD_BUILD_DIR/nmad/mpi/mpirun}
MPICC=${MPICC:-$(command -v mpicc.openmpi || true)}
MPIRUN=${MPIRUN:-$(command -v mpirun.openmpi || true)}
[[ -x $NMAD_MPICC && -x $NMAD_MPIRUN ]] || die "nmad's mpicc/mpirun not found (build nmad or set NMAD_BUILD_DIR)"

build() { # compiler source output
  if ! "$1" -O2 -I "$SCRIPT_DIR" "$SCRIPT_DIR/$2" "$SCRIPT_DIR/bench_common.c" -o "$OUT/bin/$3" >"$LOG/build_$3.log" 2>&1; then
    fail "could not build $3 with $1; see $LOG/build_$3.log"; return 1
  fi
}
build "$NMAD_MPICC" mpi_overlap.c overlap_nmad
build "$NMAD_MPICC" mpi_bench.c bench_nmad
OMPI=0
if [[ -n $MPICC && -n $MPIRUN ]] && build "$MPICC" mpi_overlap.c overlap_ompi; then OMPI=1; else
  fail "Open MPI (mpicc.openmpi, mpirun.openmpi) not found or build failed: no Open MPI column"; fi

nmad_run() { # provider np progress binary args...
  local prov=$1 np=$2 mode=$3 bin=$4
  shift 4
  run_csv "$OUT/$CSVNAME" "nmad ($mode) $WHAT" env FI_TCP_IFACE=lo NMAD_PROGRESS="$mode" "$NMAD_MPIRUN" -n "$np" \
    --timeout "$RUN_TIMEOUT" --bind-to "$(bind_policy "$np")" -x NMAD_DRIVER="$prov" "$OUT/bin/$bin" --csv "$@"
}
ompi_run() { # provider np args...
  local prov=$1 np=$2
  shift 2
  ompi_btl "$prov"
  run_csv "$OUT/$CSVNAME" "Open MPI $WHAT" "$MPIRUN" --allow-run-as-root --oversubscribe -np "$np" \
    --bind-to "$(bind_policy "$np")" --mca pml ob1 "${OMPI_BTL[@]}" --mca oob_tcp_if_include lo \
    "$OUT/bin/overlap_ompi" --csv "$@"
}

OV=(--min 8 --max "$MAXSIZE" --iters "$ITERS" --warmup 10)
for prov in $PROVIDERS; do
  for np in $NPS; do
    for op in ibcast iallreduce; do
      WHAT="$op overlap over $prov, $np ranks"
      for mode in poll thread; do
        CSVNAME=${mode}_${op}_${prov}_$np.csv nmad_run "$prov" "$np" "$mode" overlap_nmad --op "$op" "${OV[@]}"
      done
      [[ $OMPI -eq 1 ]] && CSVNAME=ompi_${op}_${prov}_$np.csv ompi_run "$prov" "$np" --op "$op" "${OV[@]}"
    done
  done
  WHAT="ping-pong over $prov (cost of the thread on latency)"
  for mode in poll thread; do
    CSVNAME=${mode}_pingpong_$prov.csv nmad_run "$prov" 2 "$mode" bench_nmad --bench pingpong --min 8 --max 64K \
      --iters 2000 --warmup 200
  done
done

# ---------- summary ----------
get() { awk -F, -v s="$2" -v c="$3" '$1 == s { print $c; exit }' "$1" 2>/dev/null; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b }'; }
SUM=$OUT/summary.txt
{
  echo "# overlap % (OSU definition) and time of operation + computation; nmad poll | nmad thread | Open MPI"
  printf '%-4s %-10s %3s %8s | %6s %6s %6s | %10s %10s %10s | %8s %8s\n' prov op np size ov_poll ov_thr ov_ompi \
    total_poll total_thr total_ompi thr/ompi thr/poll
  for prov in $PROVIDERS; do
    for np in $NPS; do
      for op in ibcast iallreduce; do
        p=$OUT/poll_${op}_${prov}_$np.csv t=$OUT/thread_${op}_${prov}_$np.csv o=$OUT/ompi_${op}_${prov}_$np.csv
        for size in $(awk -F, 'NR > 1 { print $1 }' "$p" 2>/dev/null); do
          printf '%-4s %-10s %3s %8s | %6s %6s %6s | %10s %10s %10s | %8s %8s\n' "$prov" "$op" "$np" "$size" \
            "$(get "$p" "$size" 6)" "$(get "$t" "$size" 6)" "$(get "$o" "$size" 6)" \
            "$(get "$p" "$size" 5)" "$(get "$t" "$size" 5)" "$(get "$o" "$size" 5)" \
            "$(ratio "$(get "$t" "$size" 5)" "$(get "$o" "$size" 5)")" \
            "$(ratio "$(get "$t" "$size" 3)" "$(get "$p" "$size" 3)")"
        done
      done
    done
  done
  echo "# ping-pong one-way latency, median (us): poll | thread | thread/poll"
  for prov in $PROVIDERS; do
    p=$OUT/poll_pingpong_$prov.csv t=$OUT/thread_pingpong_$prov.csv
    for size in $(awk -F, 'NR > 1 { print $1 }' "$p" 2>/dev/null); do
      printf '%-4s %8s | %8s %8s | %6s\n' "$prov" "$size" "$(get "$p" "$size" 3)" "$(get "$t" "$size" 3)" \
        "$(ratio "$(get "$t" "$size" 3)" "$(get "$p" "$size" 3)")"
    done
  done
} | tee "$SUM"

# ---------- plot: overlap % per (provider, ranks, op) ----------
if command -v gnuplot >/dev/null 2>&1; then
  n=0
  for prov in $PROVIDERS; do for np in $NPS; do n=$((n + 2)); done; done
  rows=$(((n + 1) / 2))
  {
    echo "set terminal pngcairo size 1400,$((rows * 330)) enhanced font 'sans,10'"
    echo "set output '$OUT/mpi_overlap.png'"
    echo "set datafile separator ','; set grid; set key bottom right; set logscale x 2; set yrange [0:105]"
    echo "set xtics ('8' 8, '64' 64, '512' 512, '4K' 4096, '32K' 32768, '256K' 262144, '1M' 1048576)"
    echo "set xlabel 'message size (bytes)'; set ylabel 'overlap (%)'"
    echo "set multiplot layout $rows,2 title 'overlap of non-blocking collectives: nmad poll, nmad thread, Open MPI'"
    for prov in $PROVIDERS; do
      for np in $NPS; do
        for op in ibcast iallreduce; do
          echo "set title '$op, $prov, $np ranks'"
          echo "plot '$OUT/poll_${op}_${prov}_$np.csv' using 1:6 every ::1 with linespoints lw 2 title 'nmad poll', \\"
          echo "     '$OUT/thread_${op}_${prov}_$np.csv' using 1:6 every ::1 with linespoints lw 2 title 'nmad thread', \\"
          echo "     '$OUT/ompi_${op}_${prov}_$np.csv' using 1:6 every ::1 with linespoints lw 2 title 'Open MPI'"
        done
      done
    done
    echo "unset multiplot"
  } >"$OUT/mpi_overlap.gp"
  gnuplot "$OUT/mpi_overlap.gp" 2>"$LOG/gnuplot.log" && note "plot: $OUT/mpi_overlap.png" || fail "gnuplot failed"
fi
note "summary: $SUM"
exit $FAILED
