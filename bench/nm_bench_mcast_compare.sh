#!/usr/bin/env bash
# nm_bench_mcast_compare.sh - broadcast duration from rank 0 to N-1 receivers, for several N, in one run:
# nmad's dynamic broadcast (nm_mcast_isend) against nmad's static binomial and naive broadcasts (nm_coll.h) and
# Open MPI's MPI_Bcast; prints a table of medians with the ratios dynamic/binomial, dynamic/naive, dynamic/ompi,
# writes CSVs and a PNG (duration vs size, one panel per N). Denis 2020, section 5.1 is the model.
#
# Usage: bench/nm_bench_mcast_compare.sh [--nprocs "2 4 8"] [--sizes "8 1K 64K 1M 8M"] [--provider shm|tcp]
#                                        [--out DIR] ... (see --help)
#
# What is measured (bench/nm_bench_mcast.c and bench/ompi_bcast.c, same method, same statistics): rank 0 times
# each broadcast from its start to the arrival of the last zero-byte ack that every receiver sends when its
# broadcast completed (so clock offsets play no part; one small-message latency is included, the same for all);
# --warmup untimed then --iters timed iterations per size, both scaled down above 256 KiB; min and median in us.
#   nmad: NMAD_DRIVER=<provider> NMAD_STRATEGY=prio nmad-run -n N nm_bench_mcast --mode <m> --csv, one run per
#         mode (dynamic, binomial, naive), so a failing mode does not cost the others their numbers;
#   ompi: mpirun.openmpi --oversubscribe --bind-to none -np N --mca pml ob1 --mca btl self,vader (shm) or
#         --mca btl self,tcp --mca btl_tcp_if_include lo (tcp), always --mca oob_tcp_if_include lo.
# Both sweep the powers of two from the smallest to the largest of --sizes (the plot shows them all; the table
# shows the --sizes). With more processes than cores (N > 2 here), every contender is oversubscribed alike.
# Ratios: dynamic / other on the median (above 1: dynamic slower).
#
# Every run has a timeout (--timeout) and runs in its own session: whatever is left of it afterwards (or when
# this script is interrupted) is killed, by process id. Exit status: 0 if every measurement ran, 1 if some
# failed or could not run (the others still run and are reported), 2 on a bad command line.

set -u -o pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NMAD_BUILD_DIR=${NMAD_BUILD_DIR:-$(dirname "$SCRIPT_DIR")}

NPROCS_ARG="2 4 8"
SIZES_ARG="8 1K 64K 1M 8M"
PROVIDER=shm
ITERS=200
WARMUP=20
OUT=./bench-mcast-results
RUN_TIMEOUT=300
DO_NMAD=1 DO_OMPI=1
MODES="dynamic binomial naive"
REPEAT=3

usage() {
  cat <<EOF
usage: $0 [options]
  --nprocs "LIST"    numbers of processes (default "$NPROCS_ARG"); at least 2 each
  --sizes "LIST"     sizes shown in the table, K/M suffixes allowed (default "$SIZES_ARG"); the
                     benchmarks sweep the powers of two from the smallest to the largest
  --provider P       shm or tcp (loopback) (default $PROVIDER)
  --modes "LIST"     nmad modes among dynamic, binomial, naive (default "$MODES")
  --iters N          timed iterations per size (default $ITERS; scaled down above 256 KiB)
  --warmup N         warm-up iterations per size (default $WARMUP)
  --out DIR          output directory (default $OUT)
  --timeout SEC      timeout of each run (default $RUN_TIMEOUT)
  --repeat R         run every contender R times, interleaved, and keep per size its fastest run (lowest
                     median; default $REPEAT): the same draw for all on this shared, noisy machine
  --quick            --iters 50 --warmup 5 --sizes "8 1M" (a fast sanity run)
  --no-nmad, --no-ompi   skip a part
environment: NMAD_BUILD_DIR (where nmad-run and nm_bench_mcast are; default $NMAD_BUILD_DIR),
  NM_BENCH_MCAST (the nmad benchmark binary), OMPI_EXTRA_ARGS (added to mpirun.openmpi),
  MPICC, MPIRUN (override the Open MPI tools)
EOF
}

die() { echo "nm_bench_mcast_compare: $*" >&2; exit 2; }
warn() { echo "nm_bench_mcast_compare: warning: $*" >&2; }
note() { echo "== $*" >&2; }

need_arg() { [[ $# -ge 2 && -n "$2" ]] || die "option $1 needs a value"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --nprocs) need_arg "$@"; NPROCS_ARG=$2; shift 2 ;;
    --nprocs=*) NPROCS_ARG=${1#*=}; shift ;;
    --sizes) need_arg "$@"; SIZES_ARG=$2; shift 2 ;;
    --sizes=*) SIZES_ARG=${1#*=}; shift ;;
    --provider) need_arg "$@"; PROVIDER=$2; shift 2 ;;
    --provider=*) PROVIDER=${1#*=}; shift ;;
    --modes) need_arg "$@"; MODES=$2; shift 2 ;;
    --modes=*) MODES=${1#*=}; shift ;;
    --iters) need_arg "$@"; ITERS=$2; shift 2 ;;
    --warmup) need_arg "$@"; WARMUP=$2; shift 2 ;;
    --out) need_arg "$@"; OUT=$2; shift 2 ;;
    --out=*) OUT=${1#*=}; shift ;;
    --timeout) need_arg "$@"; RUN_TIMEOUT=$2; shift 2 ;;
    --repeat) need_arg "$@"; REPEAT=$2; shift 2 ;;
    --quick) ITERS=50; WARMUP=5; SIZES_ARG="8 1M"; shift ;;
    --no-nmad) DO_NMAD=0; shift ;;
    --no-ompi) DO_OMPI=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
done

case "$PROVIDER" in
  shm|tcp) ;;
  *) die "--provider must be shm or tcp (got '$PROVIDER')" ;;
esac
for v in ITERS WARMUP RUN_TIMEOUT REPEAT; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "bad value '${!v}' for $v: a non-negative integer is expected"
done
[[ $ITERS -ge 1 && $RUN_TIMEOUT -ge 1 && $REPEAT -ge 1 ]] || die "--iters, --timeout and --repeat must be >= 1"
NPROCS=()
for n in $NPROCS_ARG; do
  [[ $n =~ ^[0-9]+$ && $n -ge 2 ]] || die "bad number of processes '$n' in --nprocs (integers >= 2)"
  NPROCS+=("$n")
done
[[ ${#NPROCS[@]} -gt 0 ]] || die "--nprocs is empty"
for m in $MODES; do
  case "$m" in dynamic|binomial|naive) ;; *) die "bad mode '$m' in --modes (dynamic, binomial, naive)" ;; esac
done

# "4K" -> 4096, "4M" -> 4194304 (binary multiples, as in the benchmarks' --min/--max).
to_bytes() {
  local s=${1^^} n mult=1
  s=${s%B}; s=${s%I}
  case "$s" in
    *K) mult=1024; n=${s%K} ;;
    *M) mult=1048576; n=${s%M} ;;
    *G) mult=1073741824; n=${s%G} ;;
    *) n=$s ;;
  esac
  [[ $n =~ ^[0-9]+$ ]] || return 1
  echo $(( n * mult ))
}
SIZES=()
for s in $SIZES_ARG; do
  b=$(to_bytes "$s") || die "bad size '$s' in --sizes"
  SIZES+=("$b")
done
[[ ${#SIZES[@]} -gt 0 ]] || die "--sizes is empty"
mapfile -t SIZES < <(printf '%s\n' "${SIZES[@]}" | sort -n -u)
MIN_SIZE=${SIZES[0]}
MAX_SIZE=${SIZES[${#SIZES[@]}-1]}
(( MAX_SIZE <= 2147483647 )) || die "sizes must fit in an int (MPI counts)"

mkdir -p "$OUT/logs" "$OUT/runs" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
LOG=$OUT/logs
RUNS=$OUT/runs
FAILS=0
fail() { warn "$*"; FAILS=$((FAILS + 1)); }

# ---------- tools ----------
find_nmad_bin() { # name -> path, from the build tree first, then the PATH
  if [[ -x "$NMAD_BUILD_DIR/$1" ]]; then echo "$NMAD_BUILD_DIR/$1"; return 0; fi
  command -v "$1" 2>/dev/null
}
NMAD_RUN=$(find_nmad_bin nmad-run || true)
NM_BENCH_MCAST=${NM_BENCH_MCAST:-$(find_nmad_bin nm_bench_mcast || true)}
MPICC=${MPICC:-$(command -v mpicc.openmpi || true)}
MPIRUN=${MPIRUN:-$(command -v mpirun.openmpi || true)}

# ---------- every run in its own session, killed entirely afterwards ----------
CUR_SID=
session_pids() { # sid -> pids of the processes still in that session
  ps -eo pid=,sid= 2>/dev/null | awk -v s="$1" '$2 == s { print $1 }'
}
kill_session() { # sid: TERM everything left in it, then KILL what survives 2 s
  local sid=$1 pids
  [[ -n "$sid" ]] || return 0
  mapfile -t pids < <(session_pids "$sid")
  [[ ${#pids[@]} -gt 0 ]] || return 0
  kill -TERM "${pids[@]}" 2>/dev/null
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    mapfile -t pids < <(session_pids "$sid")
    [[ ${#pids[@]} -gt 0 ]] || return 0
    sleep 0.2
  done
  warn "killing ${#pids[@]} process(es) left over from a run: ${pids[*]}"
  kill -KILL "${pids[@]}" 2>/dev/null
  return 0
}
cleanup() {
  kill_session "$CUR_SID"
  CUR_SID=
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

# Run a command with a timeout in a new session (setsid: a background job of this non-interactive shell is not
# a process-group leader, so setsid does not fork and the job's pid is the session id); its output goes to a log.
run_logged() { # log command... -> the command's exit status
  local lg=$1 pid rc
  shift
  setsid timeout -k 5 "$((RUN_TIMEOUT + 15))" "$@" >"$lg" 2>&1 </dev/null &
  pid=$!
  CUR_SID=$pid
  wait "$pid"
  rc=$?
  kill_session "$pid"
  CUR_SID=
  return "$rc"
}

# Keep the CSV of a benchmark's output: its header line and its rows (tolerates a "[rank] " prefix).
extract_csv() { # log
  sed -E 's/^\[[0-9]+\] ?//' "$1" |
    grep -E '^(mode,nprocs,size,min_us,median_us|[a-z]+,[0-9]+,[0-9]+,[-+.0-9eE]+,[-+.0-9eE]+)$'
}

# Run a benchmark and keep its CSV rows; on failure or timeout the rows measured so far are kept.
run_to_csv() { # csv log description command...
  local csv=$1 lg=$2 what=$3 rc
  shift 3
  run_logged "$lg" "$@"
  rc=$?
  extract_csv "$lg" >"$csv"
  if [[ $rc -eq 0 && $(grep -c -v '^mode,' "$csv") -gt 0 ]]; then
    return 0
  fi
  case $rc in
    0) fail "$what printed no data; see $lg" ;;
    124|137) fail "$what timed out after ${RUN_TIMEOUT}s (--timeout); see $lg" ;;
    *) fail "$what failed (exit $rc); see $lg" ;;
  esac
  tail -n 5 "$lg" >&2
  if [[ $(grep -c -v '^mode,' "$csv") -gt 0 ]]; then
    warn "kept the $(grep -c -v '^mode,' "$csv") row(s) measured before the failure in $csv"
  else
    rm -f "$csv"
  fi
  return 1
}

# ---------- nmad ----------
run_nmad() { # nprocs mode repetition
  local n=$1 mode=$2
  local csv=$RUNS/${PROVIDER}_n${n}_${mode}_r$3.csv lg=$LOG/nmad_${PROVIDER}_n${n}_${mode}_r$3.log
  if [[ -z "$NMAD_RUN" || -z "$NM_BENCH_MCAST" ]]; then
    fail "nmad $mode (N=$n) skipped: nmad-run or nm_bench_mcast not found in $NMAD_BUILD_DIR or PATH (build with make, or set NMAD_BUILD_DIR / NM_BENCH_MCAST)"
    return
  fi
  note "nmad $mode, N=$n, NMAD_DRIVER=$PROVIDER NMAD_STRATEGY=prio, sizes $MIN_SIZE..$MAX_SIZE"
  run_to_csv "$csv" "$lg" "nmad $mode broadcast (N=$n, $PROVIDER)" \
    env NMAD_DRIVER="$PROVIDER" NMAD_STRATEGY=prio FI_TCP_IFACE=lo \
    "$NMAD_RUN" -n "$n" --timeout "$RUN_TIMEOUT" "$NM_BENCH_MCAST" --mode "$mode" --csv \
    --min "$MIN_SIZE" --max "$MAX_SIZE" --iters "$ITERS" --warmup "$WARMUP"
}

# ---------- Open MPI ----------
OMPI_BIN=
build_ompi() {
  local src=$SCRIPT_DIR/ompi_bcast.c common=$SCRIPT_DIR/bench_common.c
  if [[ -z "$MPICC" || -z "$MPIRUN" ]]; then fail "mpicc.openmpi/mpirun.openmpi not found (apt-get install libopenmpi-dev openmpi-bin)"; return 1; fi
  if [[ ! -f "$src" || ! -f "$common" ]]; then fail "bench/ompi_bcast.c not found next to the script"; return 1; fi
  mkdir -p "$OUT/bin"
  if ! run_logged "$LOG/ompi_build.log" "$MPICC" -O2 -I "$SCRIPT_DIR" "$src" "$common" -o "$OUT/bin/ompi_bcast"; then
    fail "could not compile ompi_bcast; see $LOG/ompi_build.log"; return 1
  fi
  OMPI_BIN=$OUT/bin/ompi_bcast
}
run_ompi() { # nprocs repetition
  local n=$1 csv=$RUNS/${PROVIDER}_n$1_ompi_r$2.csv lg=$LOG/ompi_${PROVIDER}_n$1_r$2.log btl
  [[ -n "$OMPI_BIN" ]] || return
  case "$PROVIDER" in
    shm) btl=(--mca btl 'self,vader') ;;
    tcp) btl=(--mca btl 'self,tcp' --mca btl_tcp_if_include lo) ;;
  esac
  note "Open MPI MPI_Bcast, N=$n, ${btl[*]}"
  # --bind-to none: nmad-run does not bind either, so every contender gets the same scheduling.
  # shellcheck disable=SC2086
  run_to_csv "$csv" "$lg" "Open MPI MPI_Bcast (N=$n, $PROVIDER)" \
    "$MPIRUN" --allow-run-as-root --oversubscribe --bind-to none -np "$n" \
    --mca pml ob1 "${btl[@]}" --mca oob_tcp_if_include lo ${OMPI_EXTRA_ARGS:-} \
    "$OMPI_BIN" --csv --min "$MIN_SIZE" --max "$MAX_SIZE" --iters "$ITERS" --warmup "$WARMUP"
}

# ---------- run everything, one after the other ----------
note "results in $OUT; provider $PROVIDER; N in ${NPROCS[*]}; nmad-run: ${NMAD_RUN:-not found};" \
  "nm_bench_mcast: ${NM_BENCH_MCAST:-not found}; mpirun: ${MPIRUN:-not found}"
[[ $DO_OMPI -eq 1 ]] && build_ompi
for n in "${NPROCS[@]}"; do
  for rep in $(seq 1 "$REPEAT"); do
    if [[ $DO_NMAD -eq 1 ]]; then
      for mode in $MODES; do run_nmad "$n" "$mode" "$rep"; done
    fi
    [[ $DO_OMPI -eq 1 ]] && run_ompi "$n" "$rep"
  done
done
cleanup

# All rows of this run in one file: mode,nprocs,size,min_us,median_us; per (mode, N, size) the repetition with
# the lowest median.
ALL_CSV=$OUT/bcast_$PROVIDER.csv
{
  echo "mode,nprocs,size,min_us,median_us"
  for f in "$RUNS/${PROVIDER}"_n*_r*.csv; do
    [[ -f "$f" ]] && grep -v '^mode,' "$f"
  done | awk -F, '{ k = $1 "," $2 "," $3 } !(k in best) || $5 + 0 < best[k] + 0 { best[k] = $5; row[k] = $0 }
                  END { for (k in row) print row[k] }' | sort -t, -k1,1 -k2,2n -k3,3n
} >"$ALL_CSV"
# The best rows again per (N, mode), for the plot.
for n in "${NPROCS[@]}"; do
  for mode in dynamic binomial naive ompi; do
    f=$RUNS/${PROVIDER}_n${n}_${mode}.csv
    { echo "mode,nprocs,size,min_us,median_us"; grep "^$mode,$n," "$ALL_CSV"; } >"$f"
  done
done

# ---------- report ----------
csv_get() { # mode nprocs size -> median or empty
  awk -F, -v m="$1" -v n="$2" -v s="$3" '$1 == m && $2 == n && $3 == s { print $5; exit }' "$ALL_CSV"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print ""; else printf "%.2f", a / b }'; }
show() { if [[ -n "$1" ]]; then printf '%s' "$1"; else printf 'n/a'; fi; }

SUMMARY_CSV=$OUT/summary.csv
SUMMARY_TXT=$OUT/summary.txt
echo "provider,nprocs,size,dynamic_us,binomial_us,naive_us,ompi_us,dynamic_over_binomial,dynamic_over_naive,dynamic_over_ompi,binomial_over_ompi" >"$SUMMARY_CSV"
{
  echo "# broadcast from rank 0 to N-1 receivers over $PROVIDER: median duration (us), start at the root to the last ack"
  echo "# nmad with NMAD_STRATEGY=prio; Open MPI MPI_Bcast (pml ob1); $ITERS timed iterations (scaled above 256 KiB) after $WARMUP warm-up"
  echo "# ratios on medians, above 1: the first is slower; $(date -u +%Y-%m-%dT%H:%MZ) $(uname -n), $(nproc) cores"
  printf '%3s %9s | %10s %10s %10s %10s | %8s %8s %8s %8s\n' \
    N size dynamic binomial naive ompi dyn/bin dyn/naive dyn/ompi bin/ompi
  for n in "${NPROCS[@]}"; do
    for size in "${SIZES[@]}"; do
      d=$(csv_get dynamic "$n" "$size")
      b=$(csv_get binomial "$n" "$size")
      v=$(csv_get naive "$n" "$size")
      o=$(csv_get ompi "$n" "$size")
      rb=$(ratio "$d" "$b")
      rv=$(ratio "$d" "$v")
      ro=$(ratio "$d" "$o")
      bo=$(ratio "$b" "$o")
      echo "$PROVIDER,$n,$size,$d,$b,$v,$o,$rb,$rv,$ro,$bo" >>"$SUMMARY_CSV"
      printf '%3s %9s | %10s %10s %10s %10s | %8s %8s %8s %8s\n' "$n" "$size" \
        "$(show "$d")" "$(show "$b")" "$(show "$v")" "$(show "$o")" \
        "$(show "$rb")" "$(show "$rv")" "$(show "$ro")" "$(show "$bo")"
    done
  done
} | tee "$SUMMARY_TXT"

# ---------- plot: duration vs size, one panel per N, one line per mode ----------
PLOT_GP=$OUT/plot_mcast.gp
PNG=$OUT/bcast_$PROVIDER.png
write_plot() {
  local i=0 n mode f cmd color pt
  cat <<EOF
# Generated by nm_bench_mcast_compare.sh; redraw with: gnuplot $PLOT_GP
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size $(( 480 * ${#NPROCS[@]} + 80 )),520 enhanced font "sans,10"
} else {
  set terminal png size $(( 480 * ${#NPROCS[@]} + 80 )),520
}
set output "$PNG"
set datafile separator ","
set logscale xy
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set key top left
set xtics ("8" 8, "64" 64, "512" 512, "4K" 4096, "32K" 32768, "256K" 262144, "2M" 2097152, "16M" 16777216)
set xlabel "message size (bytes; K = 1024)"
set ylabel "broadcast duration, median (us)"
set multiplot layout 1,${#NPROCS[@]} title "broadcast from rank 0 over $PROVIDER: nmad dynamic / binomial / naive (NMAD\\\\_STRATEGY=prio) vs Open MPI MPI\\\\_Bcast"
EOF
  for n in "${NPROCS[@]}"; do
    cmd=""
    for mode in dynamic binomial naive ompi; do
      f=$RUNS/${PROVIDER}_n${n}_${mode}.csv
      if [[ ! -f "$f" ]] || [[ $(grep -c -v '^mode,' "$f") -eq 0 ]]; then continue; fi
      case $mode in
        dynamic) color="#1f77b4"; pt=7 ;;
        binomial) color="#2ca02c"; pt=5 ;;
        naive) color="#ff7f0e"; pt=9 ;;
        ompi) color="#d62728"; pt=13 ;;
      esac
      cmd="$cmd${cmd:+, }'$f' every ::1 using (\$3 > 0 ? \$3 : NaN):5 with linespoints lw 2 pt $pt lc rgb '$color' title '$mode'"
    done
    i=$((i + 1))
    echo "set title 'N = $n processes'"
    if [[ -n "$cmd" ]]; then
      echo "plot $cmd"
    else
      echo "set label $i 'no data' at graph 0.5,0.5 center"
      echo "set xrange [8:8388608]; set yrange [1:1000]"
      echo "plot 1e9 notitle"
      echo "unset label $i; set autoscale"
    fi
  done
  echo "unset multiplot"
}
if command -v gnuplot >/dev/null 2>&1; then
  write_plot >"$PLOT_GP"
  if run_logged "$LOG/gnuplot.log" gnuplot "$PLOT_GP"; then
    note "plot: $PNG"
  else
    fail "gnuplot failed; see $LOG/gnuplot.log"
  fi
else
  warn "gnuplot missing: no PNG"
fi

note "CSV: $ALL_CSV, $SUMMARY_CSV (per run: $RUNS/)"
if [[ $FAILS -gt 0 ]]; then
  warn "$FAILS measurement(s) failed or were skipped"
  exit 1
fi
exit 0
