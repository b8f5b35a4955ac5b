#!/bin/sh
# Run one MPI test program with nmad's mpirun:
#   tests/mpi/run.sh [--expect-rc N] [--expect-stderr TEXT] DRIVER NPROCS PROGRAM [ARGS...]
# DRIVER is an NMAD_DRIVER value (shm, tcp, ...; "auto" leaves NMAD_DRIVER unset) or "singleton" (NPROCS must be 1:
# the program runs alone, without a launcher). PROGRAM is relative to $top_builddir (default .).
# The run is stopped after $NMAD_TEST_TIMEOUT seconds (default 300). Exit status: the program's (through
# mpirun), or with --expect-rc 0 if the job exited with exactly N (and, with --expect-stderr, printed TEXT on
# stderr), 1 otherwise. MPIRUN overrides the launcher (e.g. for a check against another MPI).
expect_rc='' expect_err=''
while [ $# -gt 0 ]; do
  case $1 in
    --expect-rc) expect_rc=$2; shift 2 ;;
    --expect-stderr) expect_err=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 3 ] || { echo "usage: $0 [--expect-rc N] [--expect-stderr TEXT] DRIVER NPROCS PROGRAM [ARGS...]" >&2; exit 2; }
driver=$1 n=$2 prog=$3
shift 3
b=${top_builddir:-.}
t=${NMAD_TEST_TIMEOUT:-300}
mpirun=${MPIRUN:-$b/nmad/mpi/mpirun}

run() {
  if [ "$driver" = singleton ]; then
    [ "$n" = 1 ] || { echo "$0: singleton runs need NPROCS 1" >&2; exit 2; }
    if command -v timeout >/dev/null 2>&1; then
      timeout "$t" "$b/$prog" "$@"
    else
      "$b/$prog" "$@"
    fi
  elif [ "$driver" = auto ]; then
    "$mpirun" -n "$n" --timeout "$t" "$b/$prog" "$@"
  else
    "$mpirun" -n "$n" --timeout "$t" -x NMAD_DRIVER="$driver" "$b/$prog" "$@"
  fi
}

if [ -z "$expect_rc" ] && [ -z "$expect_err" ]; then
  run "$@"
  exit $?
fi
err=$(mktemp "${TMPDIR:-/tmp}/nmad-mpi-test.XXXXXX") || exit 1
run "$@" 2>"$err"
rc=$?
cat "$err" >&2
ok=0
if [ -n "$expect_rc" ] && [ "$rc" != "$expect_rc" ]; then
  echo "FAIL exit status $rc, expected $expect_rc" >&2
  ok=1
fi
if [ -n "$expect_err" ] && ! grep -q -- "$expect_err" "$err"; then
  echo "FAIL '$expect_err' not found on stderr" >&2
  ok=1
fi
rm -f "$err"
[ $ok = 0 ] && echo "PASS exit status $rc${expect_err:+, stderr has '$expect_err'}"
exit $ok
