#!/bin/sh
# Run every fuzz target for a bounded time (default 60 s each, two at a time) on its seed corpus (a copy: new
# inputs go to a scratch directory, the committed corpus stays as it is). Fails on any crash, leak, sanitizer
# report or timeout; prints each target's executions. Usage: tests/fuzz/run.sh [SECONDS] [BINDIR]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
bin=${2:-$top/tests/fuzz/bin}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
run() { # target
  mkdir -p "$work/$1"
  cp "$top/tests/fuzz/corpus/$1/"* "$work/$1/" 2>/dev/null
  timeout -k 10 $((secs + 60)) "$bin/fuzz_$1" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len=70000 -artifact_prefix="$work/$1-" "$work/$1" >"$work/$1.log" 2>&1
  rc=$?
  execs=$(grep -o 'Done [0-9]* runs' "$work/$1.log" | tail -1)
  echo "fuzz_$1: exit $rc, ${execs:-no summary} in ${secs} s"
  if [ $rc -ne 0 ]; then tail -40 "$work/$1.log"; return 1; fi
}
run wire & p1=$!
run run_proto & p2=$!
wait $p1 || status=1
wait $p2 || status=1
run incoming || status=1
exit $status
