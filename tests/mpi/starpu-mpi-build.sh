#!/bin/sh
# StarPU 1.4.12's MPI back end (`--enable-mpi`), UNCHANGED, configured with nmad's mpicc and NO link flags passed
# by hand, built, and its mpi/tests run through StarPU's own harness (`make -C mpi/tests check`: nmad's mpiexec,
# 4 ranks per test). What it checks (issue 16): StarPU's configure takes MPICC_LDFLAGS from `mpicc --showme:link`
# (else `mpicc -link_info` minus its first word), so the wrapper's answers alone must make libstarpumpi link.
# Not part of `make check` (about half an hour on 2 cores, see doc/starpu.md); run it by hand from the top of a
# built nmad tree.
#
# Usage: tests/mpi/starpu-mpi-build.sh
# Environment: STARPU_TARBALL (default: ../shared/thirdparty/starpu-1.4.12.tar.gz next to the nmad sources),
#   STARPU_MPICC (the mpicc to build with; default the build tree's nmad/mpi/mpicc; its directory goes first in
#   PATH so that StarPU finds the matching mpicxx and mpiexec there), STARPU_WORK (work directory, default
#   ${TMPDIR:-/tmp}/nmad-starpu-mpi; emptied first), STARPU_TOTAL_TIMEOUT (seconds for the whole run, default
#   5400), STARPU_CONFIGURE_ARGS (more arguments for StarPU's configure, split on blanks, e.g.
#   --with-mpiexec-args=--allow-run-as-root for Open MPI as root), top_builddir (the nmad build tree, default: the tree this script is in).
# Output: the configure result for MPICC_LDFLAGS, then StarPU's harness summary and one line
#   `starpu-mpi: pass P xfail X fail F skip S error E xpass Y (T s)`.
# Exit status: 0 every test passed or failed as expected, 1 a build step or a test failed, 77 skipped (no tarball,
#   or autoconf/automake/libtool missing and not installable), 99 setup error (nmad not built), 124 timeout.
set -u
here=$(cd "$(dirname "$0")" && pwd -P)
src=$(cd "$here/../.." && pwd -P)
b=$(cd "${top_builddir:-$src}" && pwd -P)
# make check's environment (if any) would make StarPU's automake look for nmad's files
unset top_srcdir top_builddir
tarball=${STARPU_TARBALL:-$src/../shared/thirdparty/starpu-1.4.12.tar.gz}
mpicc=${STARPU_MPICC:-$b/nmad/mpi/mpicc}
work=${STARPU_WORK:-${TMPDIR:-/tmp}/nmad-starpu-mpi}
total=${STARPU_TOTAL_TIMEOUT:-5400}

[ -f "$tarball" ] || { echo "starpu-mpi: SKIP: no StarPU tarball ($tarball)"; exit 77; }
[ -x "$mpicc" ] || { echo "starpu-mpi: $mpicc not found (build nmad first)"; exit 99; }
if [ -z "${STARPU_MPICC:-}" ] && [ ! -f "$b/libnmad_mpi.la" ]; then
  echo "starpu-mpi: $b/libnmad_mpi.la not built"
  exit 99
fi
if ! command -v autoreconf >/dev/null || ! command -v automake >/dev/null || ! command -v libtool >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q autoconf automake libtool-bin >/dev/null 2>&1
  fi
  if ! command -v autoreconf >/dev/null || ! command -v automake >/dev/null || ! command -v libtool >/dev/null; then
    echo "starpu-mpi: SKIP: autoconf, automake and libtool (libtool-bin) are needed"
    exit 77
  fi
fi

# No link flags by hand: nothing from the caller's environment reaches StarPU's configure either.
unset LDFLAGS LIBS CPPFLAGS CFLAGS MPICC_LDFLAGS
mpidir=$(cd "$(dirname "$mpicc")" && pwd -P)
PATH=$mpidir:$PATH
export PATH

rm -rf "$work" && mkdir -p "$work" || exit 99
start=$(date +%s)
# The steps run in their own process group under timeout(1), which stops every process (ranks included) at the
# deadline.
# shellcheck disable=SC2016,SC2086 # the inner script expands its own arguments; STARPU_CONFIGURE_ARGS is split
timeout -k 30 "$total" sh -c '
  set -e
  work=$1 tarball=$2 mpicc=$3
  shift 3
  cd "$work"
  tar xzf "$tarball"
  cd starpu-1.4.12
  echo "starpu-mpi: autogen" && ./autogen.sh >"$work/autogen.log" 2>&1
  echo "starpu-mpi: configure --enable-mpi --with-mpicc=$mpicc $*"
  # --enable-mpi-check: the release tarball has no .git, where StarPU enables the MPI tests by itself.
  # --disable-fortran: nmad has no mpifort.  The rest only keeps the build short.
  ./configure --enable-mpi --enable-mpi-check --with-mpicc="$mpicc" --disable-opencl --disable-cuda \
    --disable-build-doc --disable-build-examples --disable-fortran --disable-starpufft --disable-socl "$@" \
    >"$work/configure.log" 2>&1
  echo "starpu-mpi: MPICC_LDFLAGS = $(sed -n "s/^MPICC_LDFLAGS = //p" mpi/src/Makefile)"
  echo "starpu-mpi: make" && make -j2 >"$work/make.log" 2>&1
  echo "starpu-mpi: build mpi/tests" && make -C mpi/tests -j2 check TESTS= >"$work/make-tests.log" 2>&1
  echo "starpu-mpi: run mpi/tests (4 ranks each)"
  make -C mpi/tests check >"$work/check.log" 2>&1 || true
' starpu-mpi "$work" "$tarball" "$mpicc" ${STARPU_CONFIGURE_ARGS:-}
rc=$?
secs=$(($(date +%s) - start))
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  echo "starpu-mpi: TIMEOUT after $secs s (logs in $work)"
  exit 124
fi
if [ "$rc" -ne 0 ]; then
  last=
  for f in autogen configure make make-tests; do [ -f "$work/$f.log" ] && last=$work/$f.log; done
  echo "starpu-mpi: FAIL: a build step failed after $secs s; end of $last:"
  tail -20 "$last"
  exit 1
fi
log=$work/check.log
grep '^# [A-Z]*: ' "$log"
grep -E '^(FAIL|ERROR|XPASS): ' "$log"
count() { n=$(sed -n "s/^# $1: *//p" "$log" | tail -1); echo "${n:-0}"; }
pass=$(count PASS) xfail=$(count XFAIL) fail=$(count FAIL) skip=$(count SKIP) err=$(count ERROR) xpass=$(count XPASS)
echo "starpu-mpi: pass $pass xfail $xfail fail $fail skip $skip error $err xpass $xpass ($secs s, logs in $work)"
[ "$pass" -gt 0 ] && [ "$fail" -eq 0 ] && [ "$err" -eq 0 ] && [ "$xpass" -eq 0 ]
