#!/bin/sh
# The compiler wrappers as a user calls them: mpicc builds an unchanged MPI program (t_compat.c, written the way
# third-party suites are) outside the build system, mpicxx a C++ one; mpirun -np and mpiexec run them.
# -show must name the shim's library. Exit status: 0 pass, 1 fail, 77 skip (no C++ compiler: C part only).
b=${top_builddir:-.}
s=${top_srcdir:-.}
t=${NMAD_TEST_TIMEOUT:-300}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "wrappers: FAIL: $*"; exit 1; }

"$b/nmad/mpi/mpicc" -show | grep -q -- '-lnmad_mpi' || fail "mpicc -show does not link libnmad_mpi"
"$b/nmad/mpi/mpicc" -O2 "$s/tests/mpi/t_compat.c" -o "$tmp/t_compat" -lm || fail "mpicc could not build t_compat.c"
"$b/nmad/mpi/mpirun" -np 2 --timeout "$t" -x NMAD_DRIVER=shm "$tmp/t_compat" || fail "t_compat built by mpicc"
if ! command -v "${NMAD_MPICXX_CXX:-c++}" >/dev/null 2>&1; then
  echo "wrappers: no C++ compiler, mpicxx not tested"
  exit 77
fi
"$b/nmad/mpi/mpicxx" -show | grep -q -- '-lnmad_mpi' || fail "mpicxx -show does not link libnmad_mpi"
"$b/nmad/mpi/mpicxx" -O2 "$s/tests/mpi/t_cxx.cc" -o "$tmp/t_cxx" || fail "mpicxx could not build t_cxx.cc"
"$b/nmad/mpi/mpiexec" -n 3 --timeout "$t" "$tmp/t_cxx" || fail "t_cxx built by mpicxx"
echo "wrappers: pass"
