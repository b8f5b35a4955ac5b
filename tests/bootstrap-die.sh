#!/bin/sh
# nmad-run reports a dead rank to the others through the bootstrap channel.
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$top_builddir/nmad-run" -n 4 --timeout 60 "$top_builddir/tests/it_bootstrap" --die 2 >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" -eq 137 ] || { echo "FAIL: exit status $rc, expected 137"; exit 1; }
[ "$(grep -c 'saw rank 2 fail' "$out")" -eq 3 ] || { echo "FAIL: every survivor must see rank 2 fail"; exit 1; }
