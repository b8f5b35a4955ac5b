#!/bin/sh
# StarPU 1.4.12's NewMadeleine back end (`--enable-nmad`), UNCHANGED, configured against this nmad build tree
# (NewMadeleine's interface: nmad/newmad, doc/newmad.md) with nmad's mpicc, built, and its mpi/tests run through
# StarPU's own harness (`make -C mpi/tests check`: nmad's mpiexec, 4 ranks per test). What it checks (issue 16,
# deliverable 2): StarPU's configure finds `nmad` with pkg-config (PKG_CHECK_MODULES([NMAD],[nmad])) and its
# mpi/src/nmad/*.c compile and link against nmad's headers and libraries alone.
# Not part of `make check` (about half an hour on 2 cores, see doc/starpu.md); run it by hand from the top of a
# built nmad tree. It reuses tests/mpi/starpu-mpi-build.sh's approach and --disable-* options.
#
# pkg-config: the script writes nmad-uninstalled.pc (the build tree's headers and .libs; pkg-config prefers the
# -uninstalled variant of a name) in the work directory and puts that directory first in PKG_CONFIG_PATH. With
# STARPU_NMAD_PC_DIR set, the nmad.pc found there is used instead (an installed nmad).
#
# Usage: tests/newmad/starpu-nmad-build.sh
# Environment: STARPU_TARBALL (default: ../shared/thirdparty/starpu-1.4.12.tar.gz next to the nmad sources),
#   STARPU_WORK (work directory, default ${TMPDIR:-/tmp}/nmad-starpu-nmad; emptied first), STARPU_TOTAL_TIMEOUT
#   (seconds for the whole run, default 5400), STARPU_CONFIGURE_ARGS (more configure arguments, split on blanks),
#   STARPU_NMAD_PC_DIR (see above), top_builddir (the nmad build tree, default: the tree this script is in),
#   STARPU_TARGET (`tests`, the default: build StarPU and run mpi/tests; `cholesky`: build only libstarpu,
#   libstarpumpi and mpi/examples' mpi_cholesky, with examples enabled, and run nothing: the build that
#   bench/starpu_cholesky_coop.sh runs).
# Output: configure's NMAD_CFLAGS / NMAD_LIBS, then StarPU's harness summary and one line
#   `starpu-nmad: pass P xfail X fail F skip S error E xpass Y (T s)`.
# Exit status: 0 every test passed or failed as expected, 1 a build step or a test failed, 77 skipped (no tarball,
#   or autoconf/automake/libtool/pkg-config missing), 99 setup error (nmad not built), 124 timeout.
set -u
here=$(cd "$(dirname "$0")" && pwd -P)
src=$(cd "$here/../.." && pwd -P)
b=$(cd "${top_builddir:-$src}" && pwd -P)
unset top_srcdir top_builddir
tarball=${STARPU_TARBALL:-$src/../shared/thirdparty/starpu-1.4.12.tar.gz}
mpicc=$b/nmad/mpi/mpicc
work=${STARPU_WORK:-${TMPDIR:-/tmp}/nmad-starpu-nmad}
total=${STARPU_TOTAL_TIMEOUT:-5400}
target=${STARPU_TARGET:-tests}
case $target in tests|cholesky) ;; *) echo "starpu-nmad: STARPU_TARGET must be tests or cholesky"; exit 99;; esac

[ -f "$tarball" ] || { echo "starpu-nmad: SKIP: no StarPU tarball ($tarball)"; exit 77; }
[ -x "$mpicc" ] && [ -f "$b/libnmad_mpi.la" ] && [ -f "$b/libnmad.la" ] || {
  echo "starpu-nmad: nmad is not built in $b"; exit 99; }
for t in autoreconf automake libtool pkg-config; do
  command -v $t >/dev/null || { echo "starpu-nmad: SKIP: $t is needed"; exit 77; }
done

unset LDFLAGS LIBS CPPFLAGS CFLAGS MPICC_LDFLAGS NMAD_CFLAGS NMAD_LIBS
PATH=$b/nmad/mpi:$PATH
export PATH
rm -rf "$work" && mkdir -p "$work/pc" || exit 99
if [ -n "${STARPU_NMAD_PC_DIR:-}" ]; then
  PKG_CONFIG_PATH=$STARPU_NMAD_PC_DIR${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
else
  # the build tree as a package: NewMadeleine's headers (nmad/newmad/include), nmad's, and the libraries in .libs
  version=$(sed -n 's/^Version: *//p' "$b/nmad.pc")
  req=$(sed -n 's/^Requires.private: *//p' "$b/nmad.pc")
  cat >"$work/pc/nmad-uninstalled.pc" <<PC
Name: nmad
Description: nmad build tree (uninstalled)
Version: $version
Requires.private: $req
Libs: -L$b/.libs -Wl,-rpath,$b/.libs -lnmad
Libs.private: -lm -lpthread
Cflags: -I$src/nmad/newmad/include -I$src/nmad/include
PC
  PKG_CONFIG_PATH=$work/pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
fi
export PKG_CONFIG_PATH
echo "starpu-nmad: pkg-config nmad: $(pkg-config --cflags --libs nmad)"

start=$(date +%s)
# shellcheck disable=SC2016,SC2086
timeout -k 30 "$total" sh -c '
  set -e
  work=$1 tarball=$2 mpicc=$3 target=$4
  shift 4
  examples=--disable-build-examples
  [ "$target" = tests ] || examples=--enable-build-examples
  cd "$work"
  tar xzf "$tarball"
  cd starpu-1.4.12
  echo "starpu-nmad: autogen" && ./autogen.sh >"$work/autogen.log" 2>&1
  echo "starpu-nmad: configure --enable-mpi --enable-nmad --with-mpicc=$mpicc $*"
  ./configure --enable-mpi --enable-nmad --enable-mpi-check --with-mpicc="$mpicc" --disable-opencl --disable-cuda \
    --disable-build-doc "$examples" --disable-fortran --disable-starpufft --disable-socl "$@" \
    >"$work/configure.log" 2>&1
  grep -q "whether the StarPU MPI nmad library should be generated... yes" "$work/configure.log" || {
    echo "starpu-nmad: configure did not select the nmad back end"; exit 1; }
  echo "starpu-nmad: NMAD_CFLAGS = $(sed -n "s/^NMAD_CFLAGS = //p" mpi/src/Makefile)"
  echo "starpu-nmad: NMAD_LIBS = $(sed -n "s/^NMAD_LIBS = //p" mpi/src/Makefile)"
  if [ "$target" = cholesky ]; then
    echo "starpu-nmad: make libstarpu, libstarpumpi, mpi_cholesky"
    { make -C src -j2 && make -C mpi/src -j2 &&
      make -C mpi/examples -j2 matrix_decomposition/mpi_cholesky; } >"$work/make.log" 2>&1
    exit 0
  fi
  echo "starpu-nmad: make" && make -j2 >"$work/make.log" 2>&1
  echo "starpu-nmad: build mpi/tests" && make -C mpi/tests -j2 check TESTS= >"$work/make-tests.log" 2>&1
  echo "starpu-nmad: run mpi/tests (4 ranks each)"
  make -C mpi/tests check >"$work/check.log" 2>&1 || true
' starpu-nmad "$work" "$tarball" "$mpicc" "$target" ${STARPU_CONFIGURE_ARGS:-}
rc=$?
secs=$(($(date +%s) - start))
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  echo "starpu-nmad: TIMEOUT after $secs s (logs in $work)"
  exit 124
fi
if [ "$rc" -ne 0 ]; then
  last=
  for f in autogen configure make make-tests; do [ -f "$work/$f.log" ] && last=$work/$f.log; done
  echo "starpu-nmad: FAIL: a build step failed after $secs s; end of $last:"
  tail -20 "$last"
  exit 1
fi
if [ "$target" = cholesky ]; then
  echo "starpu-nmad: built $work/starpu-1.4.12/mpi/examples/matrix_decomposition/mpi_cholesky ($secs s)"
  exit 0
fi
log=$work/check.log
grep '^# [A-Z]*: ' "$log"
grep -E '^(FAIL|ERROR|XPASS): ' "$log"
count() { n=$(sed -n "s/^# $1: *//p" "$log" | tail -1); echo "${n:-0}"; }
pass=$(count PASS) xfail=$(count XFAIL) fail=$(count FAIL) skip=$(count SKIP) err=$(count ERROR) xpass=$(count XPASS)
echo "starpu-nmad: pass $pass xfail $xfail fail $fail skip $skip error $err xpass $xpass ($secs s, logs in $work)"
[ "$pass" -gt 0 ] && [ "$fail" -eq 0 ] && [ "$err" -eq 0 ] && [ "$xpass" -eq 0 ]
