#!/usr/bin/env bash
# nm_bench_match_compare.sh - benchmark 7(d) of issue 15: message rate (8 B, 2 ranks) with 1, 1,000 and 100,000
# receives outstanding on other tags, for two nmad builds one after the other in one run (before: a build of the
# code before constant-time matching; after: this build), and the ratios.
#
# Usage: bench/nm_bench_match_compare.sh --before DIR [--after DIR] [--driver shm] [--runs 3] [--iters 200]
#                                        [--outstanding 1,1000,100000] [--timeout 300] [--bind core|none]
#   DIR is a build directory holding nmad-run and libnmad (the top build directory); nm_bench_match is built
#   against the "before" one from this source when it has none (it uses only the public sendrecv interface).
#   Each build runs --runs times, alternating; per count the best median rate is kept (nm_bench_lib.sh's rule:
#   one burst of load on a shared machine does not decide a ratio).
# Output: a table: outstanding, rate before, rate after, after/before, and each build's rate / its rate at the
# first count (the judged line: >= 0.5 at 100,000). Every run has a timeout; a failed run is reported and skipped.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
AFTER=$(cd "$here/.." && pwd)
BEFORE=""
DRIVER=shm
RUNS=3
ITERS=200
COUNTS=1,1000,100000
RUN_TIMEOUT=300
BIND=core # one process per core, as every comparison script here (nm_bench_lib.sh): placement is not the variable
while [[ $# -gt 0 ]]; do
  case $1 in
    --before) BEFORE=$2; shift 2 ;;
    --after) AFTER=$2; shift 2 ;;
    --driver) DRIVER=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --iters) ITERS=$2; shift 2 ;;
    --outstanding) COUNTS=$2; shift 2 ;;
    --timeout) RUN_TIMEOUT=$2; shift 2 ;;
    --bind) BIND=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "nm_bench_match_compare.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -n $BEFORE ]] || { echo "nm_bench_match_compare.sh: --before DIR is required" >&2; exit 2; }
BEFORE=$(cd "$BEFORE" && pwd) || exit 2
AFTER=$(cd "$AFTER" && pwd) || exit 2
OUT=$(mktemp -d /tmp/nm_bench_match.XXXXXX)

bench_of() { # build dir -> nm_bench_match of that build (made for the "before" build if missing)
  local d=$1
  if [[ -x $d/nm_bench_match ]]; then echo "$d/nm_bench_match"; return; fi
  local exe=$OUT/nm_bench_match.$(basename "$d")
  if [[ ! -x $exe ]]; then
    gcc -O2 -I"$d/nmad/include" -I"$here" "$here/nm_bench_match.c" "$here/bench_common.c" -o "$exe" \
      -L"$d/.libs" -lnmad -Wl,-rpath,"$d/.libs" -lm || return 1
  fi
  echo "$exe"
}

run_one() { # build-dir tag run
  local d=$1 tag=$2 r=$3 exe
  exe=$(bench_of "$d") || { echo "# $tag: cannot build nm_bench_match against $d" >&2; return; }
  env NMAD_DRIVER="$DRIVER" FI_TCP_IFACE=lo timeout -k 5 "$RUN_TIMEOUT" "$d/nmad-run" -n 2 --bind-to "$BIND" "$exe" --csv \
    --iters "$ITERS" --outstanding "$COUNTS" >"$OUT/$tag.$r.csv" 2>"$OUT/$tag.$r.log" ||
    echo "# $tag run $r failed (exit $?), see $OUT/$tag.$r.log" >&2
}

for ((r = 1; r <= RUNS; r++)); do
  run_one "$BEFORE" before "$r"
  run_one "$AFTER" after "$r"
done

best() { # tag -> "count rate" lines, best rate per count over the runs
  cat "$OUT/$1".*.csv 2>/dev/null | awk -F, '/^[0-9]/ { if (!($1 in b) || $4 > b[$1]) b[$1] = $4 }
    END { for (n in b) print n, b[n] }' | sort -n
}
best before >"$OUT/before.best"
best after >"$OUT/after.best"
echo "# nm_bench_match_compare: NMAD_DRIVER=$DRIVER, 8 B, window 64, best median rate of $RUNS runs each"
echo "# before: $BEFORE   after: $AFTER   (logs in $OUT)"
join "$OUT/before.best" "$OUT/after.best" | awk '
  NR == 1 { b0 = $2; a0 = $3
            printf "%12s %14s %14s %13s %16s %15s\n", "outstanding", "before_msg/s", "after_msg/s", "after/before",
                   "before/before@1", "after/after@1" }
  { printf "%12d %14.0f %14.0f %13.2f %16.3f %15.3f\n", $1, $2, $3, $3 / $2, $2 / b0, $3 / a0 }'
