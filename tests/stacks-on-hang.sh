#!/bin/sh
# stacks-on-hang.sh SECONDS NAME COMMAND [ARGS...]: run COMMAND; if it still runs after SECONDS, print the stack of
# every thread of its descendant processes whose name contains NAME (gdb, when installed), so that a hang seen
# once in CI says where it was. COMMAND's own time limit (nmad-run --timeout) still stops it. Exit status:
# COMMAND's.
secs=$1 name=$2
shift 2
descendants() { for c in $(pgrep -P "$1"); do echo "$c"; descendants "$c"; done; }
"$@" &
pid=$!
(
  sleep "$secs"
  kill -0 "$pid" 2>/dev/null || exit 0
  echo "stacks-on-hang: '$*' still runs after $secs s; threads of its '$name' processes:"
  command -v gdb >/dev/null 2>&1 || { echo "stacks-on-hang: gdb is not installed"; exit 0; }
  for p in $(descendants "$pid"); do
    case $(cat "/proc/$p/comm" 2>/dev/null) in *"$name"*) ;; *) continue ;; esac
    echo "== pid $p"
    timeout 60 gdb -p "$p" -batch -ex 'thread apply all bt 12' 2>/dev/null | grep -E '^(Thread|#)'
  done
) &
watchdog=$!
wait "$pid"
rc=$?
pkill -P "$watchdog" 2>/dev/null
kill "$watchdog" 2>/dev/null
exit $rc
