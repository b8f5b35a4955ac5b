#!/bin/sh
# mcast-kill-run.sh DRIVER: the forwarder (rank 1) of a chain broadcast dies mid-transfer; ranks 0, 2 and 3 must
# pass (the broadcast ends with its data or an error, the stream behind it goes on), nmad-run must name rank 1.
b=$top_builddir
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$b/nmad-run" -n 4 --timeout 120 --grace 60 -x NMAD_DRIVER="$1" "$b/tests/it_mcast_kill" >"$out" 2>&1
rc=$?
cat "$out"
fail=0
[ "$rc" -eq 137 ] || { echo "FAIL: nmad-run exit status $rc, expected 137 (rank killed by SIGKILL)"; fail=1; }
grep -q "nmad-run: rank 1 (pid [0-9]*) died: killed by signal 9" "$out" || { echo "FAIL: nmad-run did not report rank 1"; fail=1; }
[ "$(grep -c '^PASS survivor' "$out")" -eq 3 ] || { echo "FAIL: the three survivors must pass"; fail=1; }
exit $fail
