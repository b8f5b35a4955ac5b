#!/usr/bin/env bash
# nm_bench_compare.sh - run the nmad ping-pong, raw libfabric fi_pingpong and an Open MPI ping-pong on the same
# provider, one after the other in one run, and report nmad/raw ratios with the Open MPI figures beside them;
# plus the nmad message rate over tcp with NMAD_STRATEGY=aggreg vs default. Writes CSVs, a summary and a PNG.
#
# Usage: bench/nm_bench_compare.sh [--provider shm|tcp|both] [--sizes "8 4M"] [--out DIR] ... (see --help)
#
# What is compared (all one-way, all MB = 1e6 bytes):
#   nmad   nm_bench_pingpong: per-iteration round trip / 2; median (and min) over the timed iterations after a
#          warm-up; bandwidth = size / median one-way latency.
#   ompi   bench/ompi_pingpong.c, the same program in plain MPI (same sizes, iterations, statistics).
#   raw    fi_pingpong (libfabric util/pingpong.c). Its columns, from its source:
#            pingpong() times `iterations` round trips as one interval (elapsed, in whole microseconds) and calls
#            show_perf(..., iterations, ..., xfers_per_iter = 2), which prints
#              usec/xfer = elapsed / iterations / 2              -> ONE-WAY latency (half a round trip), a MEAN
#              MB/sec    = iterations * size * 2 / elapsed_usec  -> size / one-way time, in 1e6 B/s: ONE-WAY bw
#              total     = iterations * size * 2 bytes (both directions), Mxfers/sec = 1 / usec/xfer.
#          So no factor of 2 is needed: usec/xfer is compared as is with nmad's one-way median latency and
#          MB/sec with nmad's size/median. Differences that remain: fi_pingpong reports a mean (not a median),
#          has no warm-up (its first iterations, including ofi_rxm's lazy connection set-up on the first send,
#          are averaged in) and uses fi_inject below the provider's inject size. To amortize the cold start,
#          fi_pingpong runs --fi-iter-mult (default 10) times more iterations than nmad at every size, and the
#          fastest of --fi-repeat (default 3) runs is kept, since a mean is easily spoiled by a burst of load.
#   Ratios: latency ratio = nmad / raw (above 1: nmad slower); bandwidth ratio = nmad / raw (below 1: nmad
#           slower). Message-rate ratio = aggreg / default at 8 B (above 1: aggregation helps).
#
# Binaries: nmad-run, nm_bench_pingpong and nm_bench_msgrate are taken from $NMAD_BUILD_DIR (default: the parent
# of this script's directory, i.e. the top of an in-tree build), else from the PATH. The Open MPI reference is
# compiled here from bench/ompi_pingpong.c + bench/bench_common.c with mpicc.openmpi.
# Only loopback is used: shm is host-local; tcp runs with FI_TCP_IFACE=lo (and fi_pingpong -d lo), Open MPI
# with btl_tcp_if_include=lo. Every run has a timeout; fi_pingpong servers are killed at the end even on failure.
# Exit status: 0 if every requested measurement ran, 1 if some failed or could not run (the rest still runs).

set -u -o pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NMAD_BUILD_DIR=${NMAD_BUILD_DIR:-$(dirname "$SCRIPT_DIR")}

PROVIDER=both
SIZES_ARG="8 64 512 4K 32K 256K 1M 4M"
ITERS=1000
WARMUP=100
WINDOW=64
FI_MULT=10
REPEAT=3
OUT=./bench-results
RUN_TIMEOUT=300
DO_NMAD=1 DO_FI=1 DO_OMPI=1 DO_MSGRATE=1 DO_OWN=1
MSGRATE_PROVIDER=tcp

# Must match bench/bench_common.h (BENCH_SCALE_THRESHOLD, BENCH_MIN_ITERS, BENCH_MIN_WARMUP).
SCALE_THRESHOLD=262144
MIN_ITERS=10

usage() {
  cat <<EOF
usage: $0 [options]
  --provider P       shm, tcp or both (default both)
  --sizes "LIST"     message sizes for the nmad/raw/Open MPI table, K/M suffixes allowed
                     (default "$SIZES_ARG"); every contender runs exactly these sizes (nmad and
                     Open MPI through their --sizes option; at most 64 sizes), e.g. a 1 KiB step
                     around the provider's inject size
  --iters N          timed iterations per size for nmad and Open MPI (default $ITERS; scaled down
                     above 256 KiB exactly like the benchmarks do)
  --warmup N         warm-up iterations (default $WARMUP)
  --fi-iter-mult M   fi_pingpong runs M times the iterations (no warm-up there; default $FI_MULT)
  --repeat R         R rounds, every contender (nmad, fi_pingpong, Open MPI) once per round; keep, per size, its
                     fastest run (default $REPEAT; the same for all, so no side gets a better draw), and report
                     the median over the rounds of each round's ratio
  --window W         message-rate window (default $WINDOW)
  --msgrate-provider P  provider of the message-rate comparison (default $MSGRATE_PROVIDER)
  --out DIR          output directory (default $OUT)
  --timeout SEC      timeout of each run (default $RUN_TIMEOUT)
  --quick            --iters 200 --warmup 20 --sizes "8 4M" (a fast sanity run)
  --bind core|none   one process per core for every contender (default core; see nm_bench_lib.sh)
  --no-nmad, --no-fi, --no-ompi, --no-msgrate   skip a part
  --no-own           nmad also runs over its own driver of each provider's kind in the same run, reported
                     beside the raw provider: sm (drivers/sm) beside shm, ntcp (drivers/tcp) beside tcp;
                     this skips that (--no-sm: the same)
environment: NMAD_BUILD_DIR (where nmad-run and the benchmarks are; default $NMAD_BUILD_DIR),
  OMPI_EXTRA_ARGS (added to mpirun.openmpi), FI_PINGPONG, MPICC, MPIRUN (override the tools)
EOF
}

die() { echo "nm_bench_compare: $*" >&2; exit 2; }
warn() { echo "nm_bench_compare: warning: $*" >&2; }
note() { echo "== $*" >&2; }

need_arg() { [[ $# -ge 2 && -n "$2" ]] || die "option $1 needs a value"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --provider) need_arg "$@"; PROVIDER=$2; shift 2 ;;
    --provider=*) PROVIDER=${1#*=}; shift ;;
    --sizes) need_arg "$@"; SIZES_ARG=$2; shift 2 ;;
    --sizes=*) SIZES_ARG=${1#*=}; shift ;;
    --iters) need_arg "$@"; ITERS=$2; shift 2 ;;
    --warmup) need_arg "$@"; WARMUP=$2; shift 2 ;;
    --fi-iter-mult) need_arg "$@"; FI_MULT=$2; shift 2 ;;
    --repeat|--fi-repeat) need_arg "$@"; REPEAT=$2; shift 2 ;;
    --window) need_arg "$@"; WINDOW=$2; shift 2 ;;
    --msgrate-provider) need_arg "$@"; MSGRATE_PROVIDER=$2; shift 2 ;;
    --out) need_arg "$@"; OUT=$2; shift 2 ;;
    --out=*) OUT=${1#*=}; shift ;;
    --timeout) need_arg "$@"; RUN_TIMEOUT=$2; shift 2 ;;
    --quick) ITERS=200; WARMUP=20; SIZES_ARG="8 4M"; shift ;;
    --bind) need_arg "$@"; BIND=$2; shift 2 ;;
    --no-nmad) DO_NMAD=0; shift ;;
    --no-fi) DO_FI=0; shift ;;
    --no-ompi) DO_OMPI=0; shift ;;
    --no-msgrate) DO_MSGRATE=0; shift ;;
    --no-own|--no-sm) DO_OWN=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
done

case "$PROVIDER" in
  both) PROVIDERS="shm tcp" ;;
  shm|tcp) PROVIDERS=$PROVIDER ;;
  *) die "--provider must be shm, tcp or both (got '$PROVIDER')" ;;
esac
case "$MSGRATE_PROVIDER" in shm|tcp) ;; *) die "--msgrate-provider must be shm or tcp" ;; esac
for v in ITERS WARMUP FI_MULT REPEAT WINDOW RUN_TIMEOUT; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "bad value '${!v}' for $v: a non-negative integer is expected"
done
[[ $ITERS -ge 1 && $FI_MULT -ge 1 && $REPEAT -ge 1 && $WINDOW -ge 1 && $RUN_TIMEOUT -ge 1 ]] || die "counts must be >= 1"

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
SIZES_CSV=$(IFS=,; echo "${SIZES[*]}")
[[ ${#SIZES[@]} -le 64 ]] || die "--sizes: at most 64 sizes (BENCH_MAX_SIZES of bench/bench_common.h)"

# Same formula as bench_scaled_count() in bench/bench_common.c.
scaled_count() { # base size floor
  local base=$1 size=$2 floor=$3 n
  if (( size <= SCALE_THRESHOLD )); then echo "$base"; return; fi
  n=$(( base * SCALE_THRESHOLD / size ))
  (( n < floor )) && n=$floor
  (( n > base )) && n=$base
  echo "$n"
}

mkdir -p "$OUT/logs" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
LOG=$OUT/logs
FAILS=0
fail() { warn "$*"; FAILS=$((FAILS + 1)); }

# ---------- tools ----------
find_nmad_bin() { # name -> path, from the build tree first, then the PATH
  if [[ -x "$NMAD_BUILD_DIR/$1" ]]; then echo "$NMAD_BUILD_DIR/$1"; return 0; fi
  command -v "$1" 2>/dev/null
}
NMAD_RUN=$(find_nmad_bin nmad-run || true)
NM_PINGPONG=$(find_nmad_bin nm_bench_pingpong || true)
NM_MSGRATE=$(find_nmad_bin nm_bench_msgrate || true)
FI_PINGPONG=${FI_PINGPONG:-$(command -v fi_pingpong || true)}
MPICC=${MPICC:-$(command -v mpicc.openmpi || true)}
MPIRUN=${MPIRUN:-$(command -v mpirun.openmpi || true)}

# ---------- cleanup of fi_pingpong servers ----------
SERVER_PIDS=()
kill_pid() { # pid: TERM, then KILL if it is still there after 2 s
  local pid=$1
  kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
  kill -TERM "$pid" 2>/dev/null
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  return 0
}
cleanup() {
  local pid
  for pid in "${SERVER_PIDS[@]}"; do kill_pid "$pid"; done
  SERVER_PIDS=()
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

# ---------- ports for fi_pingpong's control connection: unique per run ----------
NEXT_PORT=$(( 30000 + ($$ % 1500) * 20 ))
port_busy() {
  if command -v ss >/dev/null 2>&1; then
    [[ -n "$(ss -Htan "( sport = :$1 or dport = :$1 )" 2>/dev/null)" ]]
  else
    return 1
  fi
}
next_port() {
  local p
  while :; do
    p=$NEXT_PORT
    NEXT_PORT=$((NEXT_PORT + 1))
    (( NEXT_PORT > 65000 )) && NEXT_PORT=30000
    port_busy "$p" || { echo "$p"; return; }
  done
}
# Wait until a TCP port is listening (without connecting: fi_pingpong's server accepts exactly one connection).
wait_listen() { # port pid seconds
  local port=$1 pid=$2 deadline=$(( SECONDS + $3 )) hex
  hex=$(printf '%04X' "$port")
  while (( SECONDS < deadline )); do
    kill -0 "$pid" 2>/dev/null || return 1
    if command -v ss >/dev/null 2>&1; then
      [[ -n "$(ss -Hltn "sport = :$port" 2>/dev/null)" ]] && return 0
    else
      grep -q ":$hex [0-9A-F]*:[0-9A-F]* 0A" /proc/net/tcp 2>/dev/null && return 0
    fi
    sleep 0.05
  done
  return 1
}

# Keep the CSV of a benchmark's output: its header line and the numeric rows (tolerates a "[rank] " prefix).
extract_csv() { # header-prefix file
  sed -E 's/^\[[0-9]+\] ?//' "$2" | grep -E "^($1[a-zA-Z_,]*|[0-9]+(,[-+.0-9eEnaif]*)+)\$"
}

# After a failed or timed-out run, keep the rows it printed (they are valid) and drop a header-only CSV.
keep_partial() { # csv
  if [[ -f "$1" ]] && [[ $(grep -c '^[0-9]' "$1") -gt 0 ]]; then
    warn "kept the $(( $(wc -l <"$1") - 1 )) row(s) measured before the failure in $1"
  else
    rm -f "$1"
  fi
}

# Run a benchmark into a log, then keep its CSV rows. On failure or timeout the rows measured so far are kept.
run_to_csv() { # csv header-prefix log description command...
  local csv=$1 hdr=$2 lg=$3 what=$4 rc
  shift 4
  "$@" >"$lg" 2>&1
  rc=$?
  extract_csv "$hdr" "$lg" >"$csv"
  if [[ $rc -eq 0 && $(grep -c '^[0-9]' "$csv") -gt 0 ]]; then
    return 0
  fi
  case $rc in
    0) fail "$what printed no data; see $lg" ;;
    124|137) fail "$what timed out after ${RUN_TIMEOUT}s (--timeout); see $lg" ;;
    *) fail "$what failed (exit $rc); see $lg" ;;
  esac
  tail -n 5 "$lg" >&2
  keep_partial "$csv"
  return 1
}

# shellcheck source=bench/nm_bench_lib.sh
. "$SCRIPT_DIR/nm_bench_lib.sh"

# ---------- (1) nmad ping-pong ----------
run_nmad_pingpong() { # provider round: one run of every size into nmad_pingpong_<provider>.csv.r<round>
  local prov=$1 run=$2 csv=$OUT/nmad_pingpong_$1.csv lg=$LOG/nmad_pingpong_$1.log
  if [[ -z "$NMAD_RUN" || -z "$NM_PINGPONG" ]]; then
    fail "nmad ping-pong ($prov) skipped: nmad-run or nm_bench_pingpong not found in $NMAD_BUILD_DIR or PATH (build with make, or set NMAD_BUILD_DIR)"
    return
  fi
  note "nmad ping-pong, NMAD_DRIVER=$prov, sizes $MIN_SIZE..$MAX_SIZE, round $run of $REPEAT"
  run_to_csv "$csv.r$run" size,lat_min_us "$lg.r$run" "nmad ping-pong over $prov (run $run)" \
    env NMAD_DRIVER="$prov" FI_TCP_IFACE=lo timeout -k 5 "$RUN_TIMEOUT" \
    "$NMAD_RUN" -n 2 --bind-to "$(bind_policy 2)" "$NM_PINGPONG" --csv --sizes "$SIZES_CSV" --iters "$ITERS" --warmup "$WARMUP"
}

# ---------- (2) raw libfabric fi_pingpong ----------
fi_args() { # provider -> fi_pingpong options
  case "$1" in
    shm) echo "-p shm -e rdm" ;;
    tcp) echo "-p tcp;ofi_rxm -e rdm -d lo" ;;
  esac
}
# Runs in the main shell (not in $(...)) so that SERVER_PIDS is seen by the cleanup trap.
run_fi_one() { # provider size run -> sets FI_RES="lat_us bw_MBps"; returns non-zero on failure
  local prov=$1 size=$2 run=$3 port iters spid crc lg_s lg_c args
  FI_RES=
  FI_RC=
  port=$(next_port)
  iters=$(scaled_count $((ITERS * FI_MULT)) "$size" $((MIN_ITERS * FI_MULT)))
  lg_s=$LOG/fi_pingpong_${prov}_${size}_r${run}_server.log
  lg_c=$LOG/fi_pingpong_${prov}_${size}_r${run}_client.log
  read -r -a args <<<"$(fi_args "$prov")"
  # shellcheck disable=SC2046 # bind_prefix: empty or "taskset -c LIST"
  env FI_TCP_IFACE=lo timeout -k 5 "$RUN_TIMEOUT" $(bind_prefix 0) "$FI_PINGPONG" "${args[@]}" -B "$port" \
    -S "$size" -I "$iters" >"$lg_s" 2>&1 &
  spid=$!
  SERVER_PIDS+=("$spid")
  if ! wait_listen "$port" "$spid" 15; then
    kill_pid "$spid"
    echo "server did not start listening on port $port" >>"$lg_s"
    return 1
  fi
  # shellcheck disable=SC2046
  env FI_TCP_IFACE=lo timeout -k 5 "$RUN_TIMEOUT" $(bind_prefix 1) "$FI_PINGPONG" "${args[@]}" -P "$port" \
    -S "$size" -I "$iters" 127.0.0.1 >"$lg_c" 2>&1
  crc=$?
  # The server ends by itself after the client's "fin"; give it a moment, then kill it anyway.
  for _ in $(seq 1 25); do kill -0 "$spid" 2>/dev/null || break; sleep 0.2; done
  kill_pid "$spid"
  FI_RC=$crc
  [[ $crc -eq 0 ]] || return 1
  # Row: bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec
  FI_RES=$(awk '$1 != "bytes" && NF >= 8 && $7 ~ /^[0-9.]+$/ { lat = $7; bw = $6 } END { if (lat != "") print lat, bw }' "$lg_c")
  [[ -n "$FI_RES" ]]
}
run_fi() { # provider round: one run of every size into fi_pingpong_<provider>.csv.r<round>
  local prov=$1 run=$2 csv=$OUT/fi_pingpong_$1.csv.r$2 size why
  if [[ -z "$FI_PINGPONG" ]]; then fail "fi_pingpong not found (apt-get install libfabric-bin)"; return; fi
  note "raw libfabric fi_pingpong, provider $(fi_args "$prov"), round $run of $REPEAT"
  echo "size,lat_mean_us,bw_MBps" >"$csv"
  for size in "${SIZES[@]}"; do
    if run_fi_one "$prov" "$size" "$run"; then
      echo "$size,${FI_RES% *},${FI_RES#* }" >>"$csv"
    else
      case ${FI_RC:-none} in
        124|137) why="timed out after ${RUN_TIMEOUT}s (--timeout)" ;;
        none) why="server did not start" ;;
        *) why="failed (exit $FI_RC)" ;;
      esac
      fail "fi_pingpong $prov size $size (run $run) $why; see $LOG/fi_pingpong_${prov}_${size}_r${run}_*.log"
    fi
  done
  keep_partial "$csv" 2>/dev/null
}

# ---------- (3) Open MPI ping-pong ----------
OMPI_BIN=
build_ompi() {
  local src=$SCRIPT_DIR/ompi_pingpong.c common=$SCRIPT_DIR/bench_common.c
  if [[ -z "$MPICC" || -z "$MPIRUN" ]]; then fail "mpicc.openmpi/mpirun.openmpi not found (apt-get install libopenmpi-dev openmpi-bin)"; return 1; fi
  if [[ ! -f "$src" || ! -f "$common" ]]; then fail "bench/ompi_pingpong.c not found next to the script"; return 1; fi
  mkdir -p "$OUT/bin"
  if ! "$MPICC" -O2 -I "$SCRIPT_DIR" "$src" "$common" -o "$OUT/bin/ompi_pingpong" >"$LOG/ompi_build.log" 2>&1; then
    fail "could not compile ompi_pingpong; see $LOG/ompi_build.log"; return 1
  fi
  OMPI_BIN=$OUT/bin/ompi_pingpong
}
run_ompi() { # provider round
  local prov=$1 run=$2 csv=$OUT/ompi_pingpong_$1.csv lg=$LOG/ompi_pingpong_$1.log btl
  [[ -n "$OMPI_BIN" ]] || return
  ompi_btl "$prov"
  btl=("${OMPI_BTL[@]}")
  note "Open MPI ping-pong, ${btl[*]}, round $run of $REPEAT"
  # Bound like nmad-run and fi_pingpong (nm_bench_lib.sh, BIND), so every contender gets the same placement.
  # shellcheck disable=SC2086
  run_to_csv "$csv.r$run" size,lat_min_us "$lg.r$run" "Open MPI ping-pong over $prov (run $run)" \
    timeout -k 5 "$RUN_TIMEOUT" "$MPIRUN" --allow-run-as-root --oversubscribe -np 2 --bind-to "$(bind_policy 2)" \
    --mca pml ob1 "${btl[@]}" --mca oob_tcp_if_include lo ${OMPI_EXTRA_ARGS:-} \
    "$OMPI_BIN" --csv --sizes "$SIZES_CSV" --iters "$ITERS" --warmup "$WARMUP"
}

# ---------- (4) nmad message rate, aggreg vs default ----------
run_msgrate() { # strategy
  local strat=$1 prov=$MSGRATE_PROVIDER csv=$OUT/msgrate_${MSGRATE_PROVIDER}_$1.csv lg=$LOG/msgrate_${MSGRATE_PROVIDER}_$1.log
  if [[ -z "$NMAD_RUN" || -z "$NM_MSGRATE" ]]; then
    fail "nmad message rate ($strat) skipped: nmad-run or nm_bench_msgrate not found"; return
  fi
  note "nmad message rate, NMAD_DRIVER=$prov NMAD_STRATEGY=$strat, window $WINDOW"
  run_to_csv "$csv" size,window "$lg" "nmad message rate over $prov ($strat)" \
    env NMAD_DRIVER="$prov" NMAD_STRATEGY="$strat" FI_TCP_IFACE=lo timeout -k 5 "$RUN_TIMEOUT" \
    "$NMAD_RUN" -n 2 --bind-to "$(bind_policy 2)" "$NM_MSGRATE" --csv --window "$WINDOW"
}

# nmad's own driver of a provider's kind (reported beside that provider), or nothing.
own_driver() { case $1 in shm) echo sm ;; tcp) echo ntcp ;; esac; }

# ---------- run everything, one after the other ----------
note "results in $OUT; nmad-run: ${NMAD_RUN:-not found}; fi_pingpong: ${FI_PINGPONG:-not found}; mpirun: ${MPIRUN:-not found}"
[[ $DO_OMPI -eq 1 ]] && build_ompi
# Rounds: every contender once per round, so that each one's best of REPEAT draws from the same minutes. This host
# changes how fast its two vCPUs exchange cache lines from one minute to the next (a bare 4 KiB shared-memory
# ping-pong: 0.18 us or 0.65 us), so contenders run minutes apart compare two host states, not two libraries.
for run in $(seq 1 "$REPEAT"); do
  for prov in $PROVIDERS; do
    [[ $DO_NMAD -eq 1 ]] && run_nmad_pingpong "$prov" "$run"
    [[ $DO_NMAD -eq 1 && $DO_OWN -eq 1 && -n $(own_driver "$prov") ]] && run_nmad_pingpong "$(own_driver "$prov")" "$run"
    [[ $DO_FI -eq 1 ]] && run_fi "$prov" "$run"
    [[ $DO_OMPI -eq 1 ]] && run_ompi "$prov" "$run"
  done
done
rounds_of() { local f; for f in "$1".r*; do [[ -s $f ]] && echo "$f"; done; }
for prov in $PROVIDERS sm ntcp; do
  # shellcheck disable=SC2046
  best_rows "$OUT/nmad_pingpong_$prov.csv" $(rounds_of "$OUT/nmad_pingpong_$prov.csv")
  # shellcheck disable=SC2046
  BEST_COL=2 best_rows "$OUT/fi_pingpong_$prov.csv" $(rounds_of "$OUT/fi_pingpong_$prov.csv")
  # shellcheck disable=SC2046
  best_rows "$OUT/ompi_pingpong_$prov.csv" $(rounds_of "$OUT/ompi_pingpong_$prov.csv")
done
if [[ $DO_MSGRATE -eq 1 ]]; then
  run_msgrate default
  run_msgrate aggreg
fi
cleanup

# ---------- report ----------
csv_get() { # file size column -> value or empty
  [[ -f "$1" ]] || return 0
  awk -F, -v s="$2" -v c="$3" 'NR > 1 && $1 == s { print $c; exit }' "$1"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print ""; else printf "%.2f", a / b }'; }
# The median over the rounds of one round's ratio (a's round r over b's round r), for one size: the two were run
# minutes apart at most, so this is the figure a change of host state spoils least.
round_ratio() { # a-csv a-col b-csv b-col size
  local r a b vals=()
  for r in $(seq 1 "$REPEAT"); do
    a=$(csv_get "$1.r$r" "$5" "$2")
    b=$(csv_get "$3.r$r" "$5" "$4")
    [[ -n "$a" && -n "$b" ]] && vals+=("$(ratio "$a" "$b")")
  done
  [[ ${#vals[@]} -gt 0 ]] || return 0
  printf '%s\n' "${vals[@]}" | median
}
show() { [[ -n "$1" ]] && printf '%s' "$1" || printf 'n/a'; }

SUMMARY_CSV=$OUT/summary.csv
SUMMARY_TXT=$OUT/summary.txt
echo "provider,size,nmad_lat_us,fi_lat_us,lat_ratio_nmad_over_fi,ompi_lat_us,nmad_bw_MBps,fi_bw_MBps,bw_ratio_nmad_over_fi,ompi_bw_MBps,nmad_own_lat_us,lat_ratio_own_over_fi,round_ratio_nmad_over_fi,round_ratio_own_over_fi,own_driver" >"$SUMMARY_CSV"
{
  echo "# nmad vs raw libfabric (fi_pingpong) vs Open MPI, one-way latency (us) and bandwidth (MB/s, 1 MB = 1e6 B)"
  echo "# nmad/ompi: median of $ITERS timed iterations (scaled above 256 KiB) after $WARMUP warm-up; fi: fi_pingpong's mean (x$FI_MULT iterations), each the best of $REPEAT runs"
  echo "# lat ratio = nmad/raw (>1: nmad slower); bw ratio = nmad/raw (<1: nmad slower); $(date -u +%Y-%m-%dT%H:%MZ) $(uname -n)"
  echo "# own_lat: nmad over its own driver of the provider's kind (shm rows: NMAD_DRIVER=sm; tcp rows: ntcp); own_x = own_lat / raw"
  echo "# rnd_x, rnd_own_x: median over the $REPEAT rounds of that round's lat_x, own_x (the contenders of a round ran minutes apart at most)"
  printf '%-5s %9s | %10s %10s %8s %10s | %10s %10s %8s %10s | %10s %8s | %8s %9s\n' \
    prov size nmad_lat raw_lat lat_x ompi_lat nmad_bw raw_bw bw_x ompi_bw own_lat own_x rnd_x rnd_own_x
  for prov in $PROVIDERS; do
    for size in "${SIZES[@]}"; do
      nl=$(csv_get "$OUT/nmad_pingpong_$prov.csv" "$size" 3)
      nb=$(csv_get "$OUT/nmad_pingpong_$prov.csv" "$size" 4)
      fl=$(csv_get "$OUT/fi_pingpong_$prov.csv" "$size" 2)
      fb=$(csv_get "$OUT/fi_pingpong_$prov.csv" "$size" 3)
      ol=$(csv_get "$OUT/ompi_pingpong_$prov.csv" "$size" 3)
      ob=$(csv_get "$OUT/ompi_pingpong_$prov.csv" "$size" 4)
      own=$(own_driver "$prov") sl=""
      [[ -n $own ]] && sl=$(csv_get "$OUT/nmad_pingpong_$own.csv" "$size" 3)
      lr=$(ratio "$nl" "$fl")
      br=$(ratio "$nb" "$fb")
      sr=$(ratio "$sl" "$fl")
      rr=$(round_ratio "$OUT/nmad_pingpong_$prov.csv" 3 "$OUT/fi_pingpong_$prov.csv" 2 "$size")
      rs=""
      [[ -n $own ]] && rs=$(round_ratio "$OUT/nmad_pingpong_$own.csv" 3 "$OUT/fi_pingpong_$prov.csv" 2 "$size")
      echo "$prov,$size,$nl,$fl,$lr,$ol,$nb,$fb,$br,$ob,$sl,$sr,$rr,$rs,$own" >>"$SUMMARY_CSV"
      printf '%-5s %9s | %10s %10s %8s %10s | %10s %10s %8s %10s | %10s %8s | %8s %9s\n' "$prov" "$size" \
        "$(show "$nl")" "$(show "$fl")" "$(show "$lr")" "$(show "$ol")" \
        "$(show "$nb")" "$(show "$fb")" "$(show "$br")" "$(show "$ob")" "$(show "$sl")" "$(show "$sr")" \
        "$(show "$rr")" "$(show "$rs")"
    done
  done
  if [[ $DO_MSGRATE -eq 1 ]]; then
    md=$(csv_get "$OUT/msgrate_${MSGRATE_PROVIDER}_default.csv" 8 3)
    ma=$(csv_get "$OUT/msgrate_${MSGRATE_PROVIDER}_aggreg.csv" 8 3)
    echo
    echo "# nmad message rate over $MSGRATE_PROVIDER, 8 B, window $WINDOW (msgs/s)"
    printf 'default %s  aggreg %s  aggreg/default %s\n' "$(show "$md")" "$(show "$ma")" "$(show "$(ratio "$ma" "$md")")"
  fi
} | tee "$SUMMARY_TXT"

# ---------- plot ----------
if command -v gnuplot >/dev/null 2>&1 && [[ -f "$SCRIPT_DIR/plot.gp" ]]; then
  if gnuplot -e "dir='$OUT'; out='$OUT/compare.png'" "$SCRIPT_DIR/plot.gp" >"$LOG/gnuplot.log" 2>&1; then
    note "plot: $OUT/compare.png"
  else
    fail "gnuplot failed; see $LOG/gnuplot.log"
  fi
else
  warn "gnuplot or bench/plot.gp missing: no PNG"
fi

csvs=("$OUT"/*.csv)
note "CSV: ${csvs[*]##*/}"
if [[ $FAILS -gt 0 ]]; then
  warn "$FAILS measurement(s) failed or were skipped"
  exit 1
fi
exit 0
