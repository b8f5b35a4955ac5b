#!/usr/bin/env bash
# mpi_bench_compare.sh - the same MPI benchmark (bench/mpi_bench.c) built with nmad's mpicc (the MPI shim) and
# with Open MPI's mpicc.openmpi, run one after the other at 2 ranks over shm and tcp (or nmad's sm), plus nmad's native
# ping-pong (nm_bench_pingpong) to measure what the shim adds. Prints ratios, writes CSVs and a PNG.
#
# Usage: bench/mpi_bench_compare.sh [options]   (see --help)
#
# What is compared (one-way latency in us, bandwidth in MB/s with 1 MB = 1e6 B; same method everywhere, see
# bench/mpi_bench.c and bench/nm_bench_pingpong.c):
#   pingpong  median one-way latency and size / median, nmad-MPI vs Open MPI vs native nmad
#             ratios: lat nmad/ompi (>1: the shim is slower), bw nmad/ompi (<1: the shim is slower),
#                     overhead = nmad-MPI lat / native nmad lat (the cost of the MPI layer)
#   msgrate   messages per second with a window of W (--window), nmad-MPI vs Open MPI (ratio >1: nmad faster)
#   bcast     MPI_Bcast at --bcast-np ranks (default 4): median over iterations of the slowest rank's time
#             (ratio nmad/ompi >1: nmad slower)
#   allreduce MPI_Allreduce (MPI_SUM of doubles) at --allreduce-np ranks (default 2), measured as bcast
#   one-job overhead  nm_bench_mpi_overhead: the MPI ping-pong and the native one alternate in blocks inside one
#             job (same processes, placement and host state); median over --blocks rounds of the per-round ratio
#             MPI / native, with its min and max. The separate-run overhead above also compares two placements
#             and two moments of a shared host; this one does not.
# Only loopback is used: shm is host-local; tcp runs nmad with FI_TCP_IFACE=lo and Open MPI with
# btl self,tcp + btl_tcp_if_include lo (shm: btl self,vader); both with pml ob1. Runs of 2 processes bind one per
# core on both sides (--bind core|none, nm_bench_lib.sh); the 4-process broadcasts are not bound (oversubscribed).
# Binaries: nmad's mpicc/mpirun and nm_bench_pingpong/nmad-run from $NMAD_BUILD_DIR (default: the parent of this
# script's directory, i.e. an in-tree build: nmad/mpi/mpicc, nmad/mpi/mpirun), else from the PATH
# (NMAD_MPICC, NMAD_MPIRUN override). Open MPI: MPICC (default mpicc.openmpi), MPIRUN (default mpirun.openmpi).
# Exit status: 0 if every requested measurement ran, 1 if some failed (the rest still runs), 2 on bad usage.

set -u -o pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NMAD_BUILD_DIR=${NMAD_BUILD_DIR:-$(dirname "$SCRIPT_DIR")}

PROVIDER=both
ITERS=1000
WARMUP=100
MAXSIZE=4M
WINDOW=64
BCAST_NP=4
ALLREDUCE_NP=2
OUT=./mpi-bench-results
RUN_TIMEOUT=600
DO_OMPI=1 DO_NATIVE=1 DO_MSGRATE=1 DO_BCAST=1 DO_ALLREDUCE=1 DO_OVERHEAD=1
REPEAT=3
BLOCKS=10

usage() {
  cat <<EOF
usage: $0 [options]
  --provider P     sm (nmad's own shared memory, the default on one host), shm (libfabric's), tcp, ntcp (nmad's
                   own TCP), or both (shm and tcp; default $PROVIDER); Open MPI runs vader for sm and shm, its btl
                   tcp for tcp and ntcp
  --iters N        timed ping-pong iterations per size (default $ITERS; msgrate and bcast use N/5 windows /
                   iterations; scaled down above 256 KiB)
  --warmup N       warm-up iterations (default $WARMUP)
  --max SIZE       largest message (default $MAXSIZE; smallest is 8 B)
  --window W       message-rate window (default $WINDOW)
  --bcast-np N     ranks of the MPI_Bcast run (default $BCAST_NP)
  --allreduce-np N ranks of the MPI_Allreduce run (default $ALLREDUCE_NP)
  --out DIR        output directory (default $OUT)
  --timeout SEC    timeout of each run (default $RUN_TIMEOUT)
  --repeat R       run the three ping-pongs R times, interleaved, and keep per size each one's fastest run
                   (lowest median; default $REPEAT): the same draw for all on this shared, noisy machine
  --quick          --iters 200 --warmup 20 --max 1M
  --bind core|none one process per core for the 2-process runs, both MPIs (default core)
  --blocks N       rounds of the one-job overhead measurement (default $BLOCKS)
  --no-ompi, --no-native, --no-msgrate, --no-bcast, --no-allreduce, --no-overhead   skip a part
environment: NMAD_BUILD_DIR, NMAD_MPICC, NMAD_MPIRUN (nmad's tools), MPICC, MPIRUN (Open MPI's),
  OMPI_EXTRA_ARGS (added to Open MPI's mpirun)
EOF
}

die() { echo "mpi_bench_compare: $*" >&2; exit 2; }
note() { echo "== $*" >&2; }
FAILED=0
fail() { echo "mpi_bench_compare: FAILED: $*" >&2; FAILED=1; }

while [[ $# -gt 0 ]]; do
  case $1 in
    --provider) PROVIDER=${2:?}; shift 2 ;;
    --iters) ITERS=${2:?}; shift 2 ;;
    --warmup) WARMUP=${2:?}; shift 2 ;;
    --max) MAXSIZE=${2:?}; shift 2 ;;
    --window) WINDOW=${2:?}; shift 2 ;;
    --bcast-np) BCAST_NP=${2:?}; shift 2 ;;
    --allreduce-np) ALLREDUCE_NP=${2:?}; shift 2 ;;
    --out) OUT=${2:?}; shift 2 ;;
    --timeout) RUN_TIMEOUT=${2:?}; shift 2 ;;
    --repeat) REPEAT=${2:?}; shift 2 ;;
    --quick) ITERS=200 WARMUP=20 MAXSIZE=1M; shift ;;
    --bind) [[ $# -ge 2 ]] || die "--bind needs core or none"; BIND=$2; shift 2 ;;
    --no-ompi) DO_OMPI=0; shift ;;
    --no-native) DO_NATIVE=0; shift ;;
    --no-msgrate) DO_MSGRATE=0; shift ;;
    --no-bcast) DO_BCAST=0; shift ;;
    --no-allreduce) DO_ALLREDUCE=0; shift ;;
    --no-overhead) DO_OVERHEAD=0; shift ;;
    --blocks) BLOCKS=${2:?}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
done
case $PROVIDER in
  sm|shm|tcp|ntcp) PROVIDERS=$PROVIDER ;;
  both) PROVIDERS="shm tcp" ;;
  *) die "--provider: expected sm, shm, tcp, ntcp or both" ;;
esac
for v in "$ITERS" "$WARMUP" "$WINDOW" "$BCAST_NP" "$ALLREDUCE_NP" "$RUN_TIMEOUT" "$REPEAT" "$BLOCKS"; do
  [[ $v =~ ^[0-9]+$ ]] || die "not a number: '$v'"
done
[[ $BCAST_NP -ge 2 ]] || die "--bcast-np must be >= 2"
[[ $ALLREDUCE_NP -ge 2 ]] || die "--allreduce-np must be >= 2"
[[ $REPEAT -ge 1 ]] || die "--repeat must be >= 1"
[[ $BLOCKS -ge 1 ]] || die "--blocks must be >= 1"
SMALL_ITERS=$(( ITERS / 5 > 10 ? ITERS / 5 : 10 ))
SMALL_WARMUP=$(( WARMUP / 5 > 2 ? WARMUP / 5 : 2 ))

mkdir -p "$OUT/bin" "$OUT/logs" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
LOG=$OUT/logs

# ---------- tools ----------
find_tool() { # build-tree path, PATH name
  if [[ -x "$1" ]]; then echo "$1"; elif command -v "$2" >/dev/null 2>&1; then command -v "$2"; fi
}
NMAD_MPICC=${NMAD_MPICC:-$(find_tool "$NMAD_BUILD_DIR/nmad/mpi/mpicc" mpicc)}
NMAD_MPIRUN=${NMAD_MPIRUN:-$(find_tool "$NMAD_BUILD_DIR/nmad/mpi/mpirun" mpirun)}
NMAD_RUN=$(find_tool "$NMAD_BUILD_DIR/nmad-run" nmad-run)
NM_PINGPONG=$(find_tool "$NMAD_BUILD_DIR/nm_bench_pingpong" nm_bench_pingpong)
NM_OVERHEAD=$(find_tool "$NMAD_BUILD_DIR/nm_bench_mpi_overhead" nm_bench_mpi_overhead)
MPICC=${MPICC:-$(command -v mpicc.openmpi || true)}
MPIRUN=${MPIRUN:-$(command -v mpirun.openmpi || true)}
# The mpicc found must be nmad's (an mpicc on the PATH may be another MPI's).
if [[ -n "$NMAD_MPICC" ]] && ! "$NMAD_MPICC" -show 2>/dev/null | grep -q -- -lnmad_mpi; then
  fail "$NMAD_MPICC is not nmad's mpicc"; NMAD_MPICC=
fi

build() { # compiler output-name
  local cc=$1 bin=$OUT/bin/$2
  if ! "$cc" -O2 -I "$SCRIPT_DIR" "$SCRIPT_DIR/mpi_bench.c" "$SCRIPT_DIR/bench_common.c" -o "$bin" \
      >"$LOG/build_$2.log" 2>&1; then
    fail "could not build $2 with $cc; see $LOG/build_$2.log"; return 1
  fi
  echo "$bin"
}


# shellcheck source=bench/nm_bench_lib.sh
. "$SCRIPT_DIR/nm_bench_lib.sh"

NMAD_BIN='' OMPI_BIN=''
[[ -n "$NMAD_MPICC" && -n "$NMAD_MPIRUN" ]] && NMAD_BIN=$(build "$NMAD_MPICC" mpi_bench_nmad)
[[ -n "$NMAD_BIN" ]] || fail "nmad's mpicc/mpirun not found (build nmad, or set NMAD_BUILD_DIR / NMAD_MPICC / NMAD_MPIRUN)"
if [[ $DO_OMPI -eq 1 ]]; then
  if [[ -n "$MPICC" && -n "$MPIRUN" ]]; then
    OMPI_BIN=$(build "$MPICC" mpi_bench_ompi)
  else
    fail "mpicc.openmpi/mpirun.openmpi not found (apt-get install libopenmpi-dev openmpi-bin)"
  fi
fi

# Command lines (in CMD) of the two MPIs at NP ranks over a provider.
nmad_cmd() { # provider np
  CMD=(env FI_TCP_IFACE=lo "$NMAD_MPIRUN" -n "$2" --timeout "$RUN_TIMEOUT" --bind-to "$(bind_policy "$2")"
       -x NMAD_DRIVER="$1" "$NMAD_BIN" --csv)
}
ompi_cmd() { # provider np
  ompi_btl "$1"
  # shellcheck disable=SC2206
  CMD=("$MPIRUN" --allow-run-as-root --oversubscribe -np "$2" --bind-to "$(bind_policy "$2")" --mca pml ob1 "${OMPI_BTL[@]}"
       --mca oob_tcp_if_include lo ${OMPI_EXTRA_ARGS:-} "$OMPI_BIN" --csv)
}

PP=(--bench pingpong --min 8 --max "$MAXSIZE" --iters "$ITERS" --warmup "$WARMUP")
MR=(--bench msgrate --min 8 --max 4K --iters "$SMALL_ITERS" --warmup "$SMALL_WARMUP" --window "$WINDOW")
BC=(--bench bcast --min 8 --max "$MAXSIZE" --iters "$SMALL_ITERS" --warmup "$SMALL_WARMUP")
AR=(--bench allreduce --min 8 --max "$MAXSIZE" --iters "$SMALL_ITERS" --warmup "$SMALL_WARMUP")

# One benchmark with both MPIs, nmad's first: CSVs $OUT/{nmad,ompi}_<name>.csv.
run_both() { # provider np name description bench-args...
  local prov=$1 np=$2 name=$3 what=$4
  shift 4
  if [[ -n "$NMAD_BIN" ]]; then
    nmad_cmd "$prov" "$np"
    run_csv "$OUT/nmad_$name.csv" "nmad-MPI $what" "${CMD[@]}" "$@"
  fi
  if [[ -n "$OMPI_BIN" ]]; then
    ompi_cmd "$prov" "$np"
    run_csv "$OUT/ompi_$name.csv" "Open MPI $what" "${CMD[@]}" "$@"
  fi
}

note "results in $OUT; nmad mpicc: ${NMAD_MPICC:-none}, mpirun: ${NMAD_MPIRUN:-none}; Open MPI: ${MPIRUN:-none}"
for prov in $PROVIDERS; do
  for rep in $(seq 1 "$REPEAT"); do
    run_both "$prov" 2 "pingpong_${prov}_r$rep" "ping-pong over $prov (run $rep)" "${PP[@]}"
    if [[ $DO_NATIVE -eq 1 ]]; then
      if [[ -n "$NMAD_RUN" && -n "$NM_PINGPONG" ]]; then
        run_csv "$OUT/native_pingpong_${prov}_r$rep.csv" "native nmad ping-pong over $prov (run $rep)" \
          env FI_TCP_IFACE=lo NMAD_DRIVER="$prov" "$NMAD_RUN" -n 2 --timeout "$RUN_TIMEOUT" --bind-to "$(bind_policy 2)" \
          "$NM_PINGPONG" --csv \
          --min 8 --max "$MAXSIZE" --iters "$ITERS" --warmup "$WARMUP"
      else
        fail "native ping-pong skipped: nmad-run or nm_bench_pingpong not found"
      fi
    fi
  done
  for who in nmad ompi native; do
    best_rows "$OUT/${who}_pingpong_$prov.csv" "$OUT/${who}_pingpong_${prov}"_r*.csv
  done
  if [[ $DO_OVERHEAD -eq 1 ]]; then
    if [[ -n "$NM_OVERHEAD" && -n "$NMAD_MPIRUN" ]]; then
      run_csv "$OUT/overhead_$prov.csv" "MPI shim over native nmad in one job over $prov ($BLOCKS rounds)" \
        env FI_TCP_IFACE=lo "$NMAD_MPIRUN" -n 2 --timeout "$RUN_TIMEOUT" --bind-to "$(bind_policy 2)" \
        -x NMAD_DRIVER="$prov" "$NM_OVERHEAD" --csv --blocks "$BLOCKS" \
        --min 8 --max "$MAXSIZE" --iters "$ITERS" --warmup "$WARMUP"
    else
      fail "one-job overhead skipped: nm_bench_mpi_overhead or nmad's mpirun not found"
    fi
  fi
  [[ $DO_MSGRATE -eq 1 ]] && run_both "$prov" 2 "msgrate_$prov" "message rate over $prov" "${MR[@]}"
  [[ $DO_BCAST -eq 1 ]] && run_both "$prov" "$BCAST_NP" "bcast_$prov" "MPI_Bcast over $prov, $BCAST_NP ranks" "${BC[@]}"
  [[ $DO_ALLREDUCE -eq 1 ]] &&
    run_both "$prov" "$ALLREDUCE_NP" "allreduce_$prov" "MPI_Allreduce over $prov, $ALLREDUCE_NP ranks" "${AR[@]}"
done

# ---------- report ----------
csv_get() { # file size column -> value or empty
  [[ -f "$1" ]] || return 0
  awk -F, -v s="$2" -v c="$3" 'NR > 1 && $1 == s { print $c; exit }' "$1"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print ""; else printf "%.2f", a / b }'; }
show() { [[ -n "$1" ]] && printf '%s' "$1" || printf 'n/a'; }
sizes_of() { # union of the sizes in the given CSV files, sorted numerically
  cat "$@" 2>/dev/null | awk -F, '/^[0-9]/ { print $1 }' | sort -n -u
}
vs_report() { # provider kind column summary-label title: one figure per size, nmad against Open MPI
  local prov=$1 kind=$2 col=$3 label=$4 nv ov r
  echo
  echo "## $prov: $5"
  printf '%9s | %12s %12s %6s\n' size nmad ompi ratio
  for size in $(sizes_of "$OUT/nmad_${kind}_$prov.csv" "$OUT/ompi_${kind}_$prov.csv"); do
    nv=$(csv_get "$OUT/nmad_${kind}_$prov.csv" "$size" "$col")
    ov=$(csv_get "$OUT/ompi_${kind}_$prov.csv" "$size" "$col")
    r=$(ratio "$nv" "$ov")
    printf '%9s | %12s %12s %6s\n' "$size" "$(show "$nv")" "$(show "$ov")" "$(show "$r")"
    echo "$prov,$label,$size,$nv,$ov,$r,," >>"$SUMCSV"
  done
}

SUMMARY=$OUT/summary.txt
SUMCSV=$OUT/summary.csv
echo "provider,bench,size,nmad,ompi,ratio_nmad_over_ompi,native,overhead_nmad_over_native" >"$SUMCSV"
{
  echo "# nmad MPI shim vs Open MPI (and native nmad), $(date -u +%Y-%m-%dT%H:%MZ) $(uname -n)"
  echo "# ping-pong: median one-way latency (us) and bandwidth (MB/s); lat ratio nmad/ompi >1 = shim slower;"
  echo "#   overhead = nmad-MPI latency / native nmad latency (what the MPI layer costs)"
  for prov in $PROVIDERS; do
    echo
    echo "## $prov: ping-pong"
    printf '%9s | %9s %9s %6s | %9s %6s | %10s %10s %6s\n' size nmad_lat ompi_lat lat_x native ovh nmad_bw ompi_bw bw_x
    for size in $(sizes_of "$OUT/nmad_pingpong_$prov.csv" "$OUT/ompi_pingpong_$prov.csv"); do
      nl=$(csv_get "$OUT/nmad_pingpong_$prov.csv" "$size" 3)
      ol=$(csv_get "$OUT/ompi_pingpong_$prov.csv" "$size" 3)
      vl=$(csv_get "$OUT/native_pingpong_$prov.csv" "$size" 3)
      nb=$(csv_get "$OUT/nmad_pingpong_$prov.csv" "$size" 4)
      ob=$(csv_get "$OUT/ompi_pingpong_$prov.csv" "$size" 4)
      lr=$(ratio "$nl" "$ol") ov=$(ratio "$nl" "$vl") br=$(ratio "$nb" "$ob")
      printf '%9s | %9s %9s %6s | %9s %6s | %10s %10s %6s\n' "$size" "$(show "$nl")" "$(show "$ol")" "$(show "$lr")" \
        "$(show "$vl")" "$(show "$ov")" "$(show "$nb")" "$(show "$ob")" "$(show "$br")"
      echo "$prov,pingpong_lat_us,$size,$nl,$ol,$lr,$vl,$ov" >>"$SUMCSV"
      echo "$prov,pingpong_bw_MBps,$size,$nb,$ob,$br,," >>"$SUMCSV"
    done
    if [[ $DO_OVERHEAD -eq 1 ]]; then
      echo
      echo "## $prov: MPI shim over native nmad in one job, $BLOCKS alternated rounds (latency us; ratio MPI/native)"
      printf '%9s | %9s %9s | %6s %6s %6s\n' size mpi native ratio min max
      for size in $(sizes_of "$OUT/overhead_$prov.csv"); do
        ml=$(csv_get "$OUT/overhead_$prov.csv" "$size" 2)
        vl=$(csv_get "$OUT/overhead_$prov.csv" "$size" 3)
        rm_=$(csv_get "$OUT/overhead_$prov.csv" "$size" 4)
        rl=$(csv_get "$OUT/overhead_$prov.csv" "$size" 5)
        rh=$(csv_get "$OUT/overhead_$prov.csv" "$size" 6)
        printf '%9s | %9s %9s | %6.3f %6.3f %6.3f\n' "$size" "$(show "$ml")" "$(show "$vl")" "$rm_" "$rl" "$rh"
        echo "$prov,overhead_one_job_lat_us,$size,$ml,,,$vl,$rm_" >>"$SUMCSV"
      done
    fi
    [[ $DO_MSGRATE -eq 1 ]] && vs_report "$prov" msgrate 3 msgrate_per_s \
      "message rate, window $WINDOW (messages/s; ratio nmad/ompi >1 = nmad faster)"
    slowest="median of the slowest rank, us; ratio nmad/ompi >1 = nmad slower"
    [[ $DO_BCAST -eq 1 ]] && vs_report "$prov" bcast 4 bcast_us "MPI_Bcast, $BCAST_NP ranks ($slowest)"
    [[ $DO_ALLREDUCE -eq 1 ]] && vs_report "$prov" allreduce 4 allreduce_us "MPI_Allreduce, $ALLREDUCE_NP ranks ($slowest)"
  done
} | tee "$SUMMARY"

# ---------- plot ----------
PNG=$OUT/mpi_compare.png
if command -v gnuplot >/dev/null 2>&1; then
  plots_for() { # kind column -> gnuplot plot clauses for the files present
    local kind=$1 col=$2 clauses="" f title color dash
    for prov in $PROVIDERS; do
      for who in nmad ompi native; do
        f=$OUT/${who}_${kind}_$prov.csv
        [[ -f "$f" && $(grep -c '^[0-9]' "$f") -gt 0 ]] || continue
        case $who in nmad) title="nmad-MPI" color="#1f77b4" ;; ompi) title="Open MPI" color="#d62728" ;;
          native) title="native nmad" color="#2ca02c" ;; esac
        [[ $prov == shm ]] && dash=1 || dash=2
        clauses+="${clauses:+, }'$f' using 1:$col every ::1 with linespoints lw 2 dt $dash lc rgb '$color' title '$title $prov'"
      done
    done
    echo "$clauses"
  }
  overhead_plots() { # the one-job ratio MPI/native of each provider measured
    local clauses="" f dash
    for prov in $PROVIDERS; do
      f=$OUT/overhead_$prov.csv
      [[ -f "$f" && $(grep -c '^[0-9]' "$f") -gt 0 ]] || continue
      [[ $prov == shm ]] && dash=1 || dash=2
      clauses+="${clauses:+, }'$f' using 1:4:5:6 every ::1 with yerrorlines lw 2 dt $dash lc rgb '#9467bd' title 'median (min-max) $prov'"
    done
    echo "$clauses"
  }
  lat=$(plots_for pingpong 3) bw=$(plots_for pingpong 4) mr=$(plots_for msgrate 3) bc=$(plots_for bcast 4)
  ar=$(plots_for allreduce 4)
  oh=$(overhead_plots)
  # A panel whose part was skipped: an empty frame (gnuplot refuses a plot with no defined point).
  empty="set key off; set label 9 'not measured' at graph 0.5,0.5 center; plot [8:16] 1 lc rgb 'white' notitle; unset label 9; set key top left"
  {
    echo "set terminal pngcairo size 1400,1000 enhanced font 'sans,10'"
    echo "set output '$PNG'"
    echo "set datafile separator ','"
    echo "set grid; set key top left; set logscale x 2"
    echo "set xtics ('8' 8, '64' 64, '512' 512, '4K' 4096, '32K' 32768, '256K' 262144, '2M' 2097152)"
    echo "set multiplot layout 3,2 title 'nmad MPI shim vs Open MPI (solid: shm, dashed: tcp)'"
    echo "set logscale y 10; set xlabel 'message size (bytes)'"
    echo "set ylabel 'one-way latency, median (us)'; set title 'ping-pong latency'"
    [[ -n "$lat" ]] && echo "plot $lat" || echo "$empty"
    echo "set key top left; set ylabel 'bandwidth (MB/s)'; set title 'ping-pong bandwidth'"
    [[ -n "$bw" ]] && echo "plot $bw" || echo "$empty"
    echo "set ylabel 'messages/s'; set title 'message rate, window $WINDOW'"
    [[ -n "$mr" ]] && echo "plot $mr" || echo "$empty"
    echo "set ylabel 'time (us)'; set title 'MPI\\_Bcast, $BCAST_NP ranks (slowest rank, median)'"
    [[ -n "$bc" ]] && echo "plot $bc" || echo "$empty"
    echo "set ylabel 'time (us)'; set title 'MPI\\_Allreduce, $ALLREDUCE_NP ranks (slowest rank, median)'"
    [[ -n "$ar" ]] && echo "plot $ar" || echo "$empty"
    echo "unset logscale y; set ylabel 'latency ratio MPI / native'"
    echo "set title 'shim overhead in one job ($BLOCKS alternated rounds)'"
    [[ -n "$oh" ]] && echo "plot $oh, 1.05 with lines lw 2 dt 2 lc rgb '#555555' title '5%'" || echo "$empty"
    echo "unset multiplot"
  } >"$OUT/mpi_compare.gp"
  if gnuplot "$OUT/mpi_compare.gp" 2>"$LOG/gnuplot.log"; then
    note "plot: $PNG"
  else
    fail "gnuplot failed; see $LOG/gnuplot.log"
  fi
else
  note "gnuplot not found: no PNG (apt-get install gnuplot-nox)"
fi
note "summary: $SUMMARY, $SUMCSV"
exit $FAILED
