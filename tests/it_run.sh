#!/bin/sh
# Run a test program under nmad-run: it_run.sh DRIVER NPROCS PROGRAM [ARGS...]
# nmad-run's --timeout stops every process if the test hangs; its exit status is the test's.
driver=$1 n=$2 prog=$3
shift 3
b=${top_builddir:-.}
exec "$b/nmad-run" -n "$n" --timeout "${NMAD_TEST_TIMEOUT:-300}" -x NMAD_DRIVER="$driver" "$b/$prog" "$@"
