#!/usr/bin/env bash
# nm_bench_rails.sh - multi-rail bandwidth (issue 15, benchmark 7(b)): the nmad ping-pong with one rail and with
# two, in one run, and the ratios two rails / best single rail.
#
# Usage: bench/nm_bench_rails.sh [--min 1M] [--max 64M] [--iters 20] [--repeat 3] [--chunk SIZE] [--no-real]
#                                [--no-sim] [--local sm|shm] [--out DIR]
#
# Real processes (2 ranks on this host, one per core, nmad-run --bind-to core): NMAD_DRIVER = L, tcp, L+tcp
# and tcp+tcp, L the local driver (--local: sm, nmad's own and the default, or shm, libfabric's), and L and tcp
# once more (the null contenders: the same configuration twice shows the machine's spread, tcp's being the
# larger), each --repeat times, by
# rounds (every contender once per round, round k starting at the k-th contender so that no configuration always
# runs right after the same one), keeping per size the run with the lowest median (bench/nm_bench_lib.sh
# best_rows), so that a burst of load on this shared machine does not decide a ratio. Reported: bandwidth = size /
# median one-way time (MB/s, 1 MB = 1e6 B), and
#   L+tcp / max(L, tcp)   and   tcp+tcp / tcp        (the issue's bar: never below 0.95)
# each also as the median over the rounds of that round's ratio, and L again / L, tcp again / tcp the same way
# (the noise floors of the two ratios).
# Simulation (nmad-sim, deterministic): nm_bench_pingpong on doc/platforms/two-nic-16.xml (two equal NICs per
# host, CM02) with NMAD_DRIVER=sim and sim+sim; ratio sim+sim / sim (the issue's bar: at least 1.8 for large
# messages).
# --chunk sets NMAD_RDV_CHUNK for every run (default: nmad's own). Every run has a timeout.
# Output: DIR/rails-*.csv, DIR/summary.txt (printed too). Exit status 0 if every run produced data.

set -u -o pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=${NMAD_BUILD_DIR:-$(dirname "$SCRIPT_DIR")}
SRC=$(dirname "$SCRIPT_DIR")
# shellcheck source=bench/nm_bench_lib.sh
. "$SCRIPT_DIR/nm_bench_lib.sh"

MIN=1M MAX=64M ITERS=20 REPEAT=3 CHUNK= REAL=1 SIM=1 OUT= L=sm
RUN_TIMEOUT=${RUN_TIMEOUT:-600}
while [[ $# -gt 0 ]]; do
  case $1 in
    --min) MIN=$2; shift 2 ;;
    --max) MAX=$2; shift 2 ;;
    --iters) ITERS=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --chunk) CHUNK=$2; shift 2 ;;
    --no-real) REAL=0; shift ;;
    --no-sim) SIM=0; shift ;;
    --local) L=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "nm_bench_rails.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
OUT=${OUT:-$(mktemp -d /tmp/nm_bench_rails.XXXXXX)}
mkdir -p "$OUT"
LOG=$OUT
STATUS=0
note() { echo "== $*" >&2; }
fail() { echo "FAILED: $*" >&2; STATUS=1; }

CHUNK_ENV=()
[[ -n $CHUNK ]] && CHUNK_ENV=(-x "NMAD_RDV_CHUNK=$CHUNK")
PP_ARGS=(--min "$MIN" --max "$MAX" --iters "$ITERS" --csv)

real_run() { # name driver repeat-index
  local name=$1 d=$2 k=$3
  run_csv "$OUT/rails-$name-$k.csv" "NMAD_DRIVER=$d ($name) run $k" \
    "$TOP/nmad-run" -n 2 --timeout "$RUN_TIMEOUT" --bind-to "$(bind_policy 2)" -x "NMAD_DRIVER=$d" \
    "${CHUNK_ENV[@]}" "$TOP/nm_bench_pingpong" "${PP_ARGS[@]}"
}

# bw column of size s in csv f (empty if absent)
bw_of() { awk -F, -v s="$2" '$1 == s { print $4 }' "$1" 2>/dev/null; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "-"; else printf "%.3f", a / b }'; }
maxof() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "") print b; else if (b == "" || a + 0 >= b + 0) print a; else print b }'; }

SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
{
  echo "# nm_bench_rails.sh $(date -u +%Y-%m-%dT%H:%MZ), $(uname -n), load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# NMAD_RDV_CHUNK=${CHUNK:-default}, sizes $MIN..$MAX, $ITERS iterations, best of $REPEAT runs per size"
} >>"$SUMMARY"

if [[ $REAL == 1 ]]; then
  NAMES=("$L" tcp "${L}_tcp" tcp_tcp "${L}_again" tcp_again)
  DRIVERS=("$L" tcp "$L+tcp" tcp+tcp "$L" tcp)
  n=${#NAMES[@]}
  for ((k = 1; k <= REPEAT; k++)); do
    for ((j = 0; j < n; j++)); do
      i=$(((k - 1 + j) % n))
      real_run "${NAMES[i]}" "${DRIVERS[i]}" "$k"
    done
  done
  for name in "${NAMES[@]}"; do
    best_rows "$OUT/rails-$name.csv" "$OUT"/rails-"$name"-[0-9]*.csv
  done
  # Per size, the median over the rounds of each round's ratio (the contenders of a round ran seconds apart).
  round_ratios() { # size -> "L+tcp/best tcp+tcp/tcp L-again/L tcp-again/tcp"
    local k a b c e z t r1=() r2=() r3=() r4=()
    for ((k = 1; k <= REPEAT; k++)); do
      a=$(bw_of "$OUT/rails-$L-$k.csv" "$1") b=$(bw_of "$OUT/rails-tcp-$k.csv" "$1")
      c=$(bw_of "$OUT/rails-${L}_tcp-$k.csv" "$1") e=$(bw_of "$OUT/rails-tcp_tcp-$k.csv" "$1")
      z=$(bw_of "$OUT/rails-${L}_again-$k.csv" "$1") t=$(bw_of "$OUT/rails-tcp_again-$k.csv" "$1")
      [[ -n $c ]] && r1+=("$(ratio "$c" "$(maxof "$a" "$b")")")
      [[ -n $e ]] && r2+=("$(ratio "$e" "$b")")
      [[ -n $z ]] && r3+=("$(ratio "$z" "$a")")
      [[ -n $t ]] && r4+=("$(ratio "$t" "$b")")
    done
    local m
    for m in r1 r2 r3 r4; do
      local -n arr=$m
      printf '%s ' "$(printf '%s\n' "${arr[@]}" | grep -v '^-' | median)"
    done
    echo
  }
  {
    echo
    echo "## real processes (bandwidth MB/s; best of $REPEAT rounds, and the median over the rounds of each round's ratio)"
    echo "| size | $L | tcp | $L+tcp | $L+tcp / best single | (round median) | tcp+tcp | tcp+tcp / tcp | (round median) | $L again / $L (round median) | tcp again / tcp (round median) |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    for s in $(awk -F, 'NR > 1 { print $1 }' "$OUT/rails-$L.csv" 2>/dev/null); do
      a=$(bw_of "$OUT/rails-$L.csv" "$s") b=$(bw_of "$OUT/rails-tcp.csv" "$s")
      c=$(bw_of "$OUT/rails-${L}_tcp.csv" "$s") e=$(bw_of "$OUT/rails-tcp_tcp.csv" "$s")
      read -r m1 m2 m3 m4 <<<"$(round_ratios "$s")"
      echo "| $s | $a | $b | $c | $(ratio "$c" "$(maxof "$a" "$b")") | ${m1:--} | $e | $(ratio "$e" "$b") | ${m2:--} | ${m3:--} | ${m4:--} |"
    done
  } >>"$SUMMARY"
fi

if [[ $SIM == 1 ]]; then
  for d in sim sim+sim; do
    note "nmad-sim NMAD_DRIVER=$d"
    if ! NMAD_DRIVER=$d ${CHUNK:+NMAD_RDV_CHUNK=$CHUNK} timeout -k 5 "$RUN_TIMEOUT" "$TOP/nmad-sim" -n 2 \
        --platform "$SRC/doc/platforms/two-nic-16.xml" --cfg=network/model:CM02 \
        "$TOP/.libs/nm_bench_pingpong.so" --min "$MIN" --max "$MAX" --iters 3 --csv \
        >"$OUT/sim-${d/+/_}.tmp" 2>"$OUT/sim-${d/+/_}.log"; then
      fail "nmad-sim NMAD_DRIVER=$d; see $OUT/sim-${d/+/_}.log"
    fi
    grep -E '^(size,|[0-9])' "$OUT/sim-${d/+/_}.tmp" >"$OUT/sim-${d/+/_}.csv"
  done
  {
    echo
    echo "## nmad-sim, doc/platforms/two-nic-16.xml, CM02 (bandwidth MB/s, simulated time)"
    echo "| size | sim (one NIC) | sim+sim (two NICs) | two / one |"
    echo "|---|---|---|---|"
    for s in $(awk -F, 'NR > 1 { print $1 }' "$OUT/sim-sim.csv" 2>/dev/null); do
      a=$(bw_of "$OUT/sim-sim.csv" "$s") b=$(bw_of "$OUT/sim-sim_sim.csv" "$s")
      echo "| $s | $a | $b | $(ratio "$b" "$a") |"
    done
  } >>"$SUMMARY"
fi

cat "$SUMMARY"
echo "(CSVs and logs in $OUT)" >&2
exit $STATUS
