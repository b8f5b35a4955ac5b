#!/bin/sh
# 2 ranks started by Open MPI's mpirun: the PMIx bootstrap exchanges the addresses. Skipped (77) without
# Open MPI or without PMIx support in this build.
command -v mpirun.openmpi >/dev/null 2>&1 || { echo "SKIP: mpirun.openmpi not installed"; exit 77; }
grep -q '^#define HAVE_PMIX 1' "$top_builddir/config.h" || { echo "SKIP: built without PMIx"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
timeout -k 10 180 mpirun.openmpi --allow-run-as-root --oversubscribe -np 2 --mca oob_tcp_if_include lo \
  --mca btl_tcp_if_include lo -x NMAD_DRIVER=shm "$top_builddir/tests/it_sendrecv" --quick >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" -eq 0 ] || { echo "FAIL: mpirun exit status $rc"; exit 1; }
[ "$(grep -c 'PASS rank . all (2 ranks, bootstrap pmix)' "$out")" -eq 2 ] || { echo "FAIL: not bootstrapped by PMIx"; exit 1; }
