#!/usr/bin/env bash
# nm_bench_prio_compare.sh - issue 15, benchmark 7(a): latency of an urgent 8 B message behind 64 MiB of queued
# low-priority bulk (to the same peer and to another peer) against its idle latency, with priorities on (the
# default strategy, NMAD_STRATEGY unset) and off (NMAD_STRATEGY=aggreg), over shm and tcp, in one run; plus the
# price of the default strategy for unprioritised traffic: message rate at 8 B, window 64, tcp, default vs aggreg.
#
# Usage: bench/nm_bench_prio_compare.sh [--provider sm|shm|tcp|ntcp|both] [--pieces "64M 1M 16K"] [--bulk 64M]
#                                       [--iters 20] [--warmup 2] [--mr-repeat 3] [--no-msgrate] [--out DIR]
#
# Each line of the table is one nm_bench_prio run (nmad-run -n 3): median one-way latency (round trip / 2, us) of
# the 8 B ping in each scenario and its ratio to the idle median of the same run (the judged figure: <= 3), and
# the bulk's median rate in the same-peer scenario as its sender sees it (MB/s: what priorities cost the bulk).
# --pieces: the bulk is posted as messages of this size (64M: one rendezvous; 1M: 64 rendezvous messages; 16K:
# 4,096 eager-sized messages, which fill the send queue: what a FIFO strategy makes the urgent message wait
# behind). (Over tcp, pieces under 64 KiB were once skipped for a livelock of the driver's fi_trecv EAGAIN loop;
# the core now posts refused transfers again at a later progress pass, tests/it_rdv_many.c.)
# Message rate: nm_bench_msgrate --min 8 --max 8 --window 64 over tcp, default and aggreg alternated
# --mr-repeat times; the best rate of each is kept; ratio = default / aggreg (judged: >= 0.95).
# Binaries come from $NMAD_BUILD_DIR (default: the parent of this script's directory), else from the PATH.
# Every run has a timeout. Exit status: 0 if every run produced data, 1 otherwise.
set -u -o pipefail
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NMAD_BUILD_DIR=${NMAD_BUILD_DIR:-$(dirname "$SCRIPT_DIR")}
PROVIDERS="shm tcp"
PIECES="64M 1M 16K"
BULK=64M
ITERS=20
WARMUP=2
MR_REPEAT=3
DO_MSGRATE=1
OUT=./bench-results
RUN_TIMEOUT=600

usage() {
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
}

while [[ $# -gt 0 ]]; do
  case $1 in
    --provider) case $2 in both) PROVIDERS="shm tcp" ;; sm | shm | tcp | ntcp) PROVIDERS=$2 ;; *) usage >&2; exit 2 ;; esac; shift 2 ;;
    --pieces) PIECES=$2; shift 2 ;;
    --bulk) BULK=$2; shift 2 ;;
    --iters) ITERS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --mr-repeat) MR_REPEAT=$2; shift 2 ;;
    --no-msgrate) DO_MSGRATE=0; shift ;;
    --out) OUT=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "$0: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done

find_bin() { # name -> path
  if [[ -x $NMAD_BUILD_DIR/$1 ]]; then echo "$NMAD_BUILD_DIR/$1"; else command -v "$1"; fi
}
NMAD_RUN=$(find_bin nmad-run) || { echo "$0: nmad-run not found" >&2; exit 1; }
PRIO_BIN=$(find_bin nm_bench_prio) || { echo "$0: nm_bench_prio not found" >&2; exit 1; }
MR_BIN=$(find_bin nm_bench_msgrate) || { echo "$0: nm_bench_msgrate not found" >&2; exit 1; }
mkdir -p "$OUT"
status=0
export FI_TCP_IFACE=lo

run() { # csv-out strategy provider nprocs command... ; strategy "default" = NMAD_STRATEGY unset
  local out=$1 strat=$2 prov=$3 n=$4 bind=none
  shift 4
  local envs=(env -u NMAD_STRATEGY NMAD_DRIVER="$prov")
  [[ $strat == default ]] || envs+=(NMAD_STRATEGY="$strat")
  # One process per core when they fit (the message rate's 2): unbound, the OS sometimes puts both on one core
  # and the rate drops twenty-fold for either strategy. The 3 ranks of nm_bench_prio cannot be bound on 2 cores.
  ((n <= $(nproc))) && bind=core
  if ! timeout -k 5 "$((RUN_TIMEOUT + 10))" "${envs[@]}" "$NMAD_RUN" -n "$n" --bind-to "$bind" --timeout "$RUN_TIMEOUT" "$@" --csv \
      >"$out.tmp" 2>"$out.log"; then
    echo "# FAILED: $strat $prov $* (see $out.log)"
    status=1
  fi
  grep -E '^[a-z_]+,[0-9]|^[0-9]' "$out.tmp" >"$out" || true
  rm -f "$out.tmp"
  [[ -s $out ]] || { echo "# no data: $strat $prov $*"; status=1; }
}

echo "# nm_bench_prio_compare: $(date -u +%FT%TZ), $(git -C "$SCRIPT_DIR" rev-parse --short HEAD 2>/dev/null || echo '?'), bulk $BULK, $ITERS rounds"
printf '%-5s %-6s %-8s %10s %10s %8s %10s %8s %10s\n' provider piece strategy idle_us same_us same_x other_us other_x \
  same_MBps
for prov in $PROVIDERS; do
  for piece in $PIECES; do
    for strat in default aggreg; do
      csv=$OUT/prio-$prov-$piece-$strat.csv
      run "$csv" "$strat" "$prov" 3 "$PRIO_BIN" --bulk "$BULK" --piece "$piece" --iters "$ITERS" --warmup "$WARMUP"
      [[ -s $csv ]] || continue
      awk -F, -v p="$prov" -v pc="$piece" -v s="$strat" '
        { med[$1] = $3; x[$1] = $4; rate[$1] = $5 }
        END { printf "%-5s %-6s %-8s %10.1f %10.1f %8.2f %10.1f %8.2f %10.0f\n", p, pc, s, med["idle"],
                     med["same_peer"], x["same_peer"], med["other_peer"], x["other_peer"], rate["same_peer"] }' "$csv"
    done
  done
done

if [[ $DO_MSGRATE == 1 ]]; then
  declare -A rates=([default]="" [aggreg]="")
  for ((r = 0; r < MR_REPEAT; r++)); do
    for strat in default aggreg; do
      csv=$OUT/msgrate-tcp-$strat-$r.csv
      run "$csv" "$strat" tcp 2 "$MR_BIN" --min 8 --max 8 --window 64
      rate=$(awk -F, '$1 == 8 { printf "%d", $3 }' "$csv" 2>/dev/null)
      [[ -n $rate ]] && rates[$strat]+="$rate "
    done
  done
  echo "# message rate, 8 B, window 64, tcp, bound, $MR_REPEAT alternated runs each (msgs/s): best and median"
  stats() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { printf "%d %d", v[NR], v[int((NR + 1) / 2)] }'; }
  read -r db dm <<<"$(echo "${rates[default]}" | stats)"
  read -r ab am <<<"$(echo "${rates[aggreg]}" | stats)"
  awk -v db="$db" -v dm="$dm" -v ab="$ab" -v am="$am" 'BEGIN {
    printf "default best %d median %d | aggreg best %d median %d | default/aggreg best %.3f median %.3f\n",
           db, dm, ab, am, ab ? db / ab : 0, am ? dm / am : 0 }'
fi
exit $status
