#!/bin/sh
# Simulated time is deterministic: two runs of the same simulation print the same durations, to the nanosecond
# (the broadcast test at 32 ranks; nmad-sim's summary line and the program's own table).
set -u
run="${srcdir:-.}/tests/sim/sim_run.sh"
a=$("$run" 32 st_model --alpha-ns 2000 --beta 1e9 --tolerance 1 2>&1) || { echo "$a"; exit 1; }
b=$("$run" 32 st_model --alpha-ns 2000 --beta 1e9 --tolerance 1 2>&1) || { echo "$b"; exit 1; }
# The summary line carries the wall time and memory, which may differ: compare everything but those.
strip() { printf '%s\n' "$1" | sed 's/ (wall .*//'; }
echo "first run:"; strip "$a"
if [ "$(strip "$a")" != "$(strip "$b")" ]; then
  echo "second run differs:"; strip "$b"; exit 1
fi
echo "second run: identical"
