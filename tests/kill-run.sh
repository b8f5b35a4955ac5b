#!/bin/sh
# kill-run.sh DRIVER: rank 2 of 3 dies mid-transfer; survivors must see errors (and print how long after the
# kill), their traffic with each other must complete, nmad-run must name the rank and return 128+9, and nothing
# the killed rank named in /dev/shm may outlive the job (libfabric's shm region: nmad-run removes it). All
# processes are bounded by nmad-run --timeout (a hang guard; no timing is asserted).
b=$top_builddir
out=$(mktemp)
stamp=$(mktemp)
trap 'rm -f "$out" "$stamp"' EXIT
"$b/nmad-run" -n 3 --timeout 120 --grace 60 -x NMAD_DRIVER="$1" -x IT_KILL_STAMP="$stamp" "$b/tests/it_kill" \
  >"$out" 2>&1
rc=$?
cat "$out"
fail=0
[ "$rc" -eq 137 ] || { echo "FAIL: nmad-run exit status $rc, expected 137 (rank killed by SIGKILL)"; fail=1; }
grep -q "nmad-run: rank 2 (pid [0-9]*) died: killed by signal 9" "$out" || { echo "FAIL: nmad-run did not report rank 2"; fail=1; }
pid=$(sed -n 's/^nmad-run: rank 2 (pid \([0-9]*\)) died.*/\1/p' "$out" | head -n 1)
if [ -n "$pid" ] && [ -d /dev/shm ]; then
  left=$(ls /dev/shm | grep -e "-$pid-" || true)
  [ -z "$left" ] || { echo "FAIL: the killed rank's files outlived the job in /dev/shm: $left"; fail=1; }
fi
[ "$(grep -c '^PASS survivor' "$out")" -eq 2 ] || { echo "FAIL: both survivors must pass"; fail=1; }
[ "$(grep -c 'traffic with the other survivor completed' "$out")" -eq 2 ] || { echo "FAIL: survivors' traffic"; fail=1; }
exit $fail
