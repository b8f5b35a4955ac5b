#!/usr/bin/env bash
# The MPICH test suite (test/mpi of the MPICH sources, a third-party MPI conformance suite), built UNCHANGED with
# nmad's mpicc and run with nmad's mpiexec, for the families the MPI shim supports (doc/mpi.md, "MPICH test
# suite"). Part of `make check` (it runs after the other MPI tests; ~9 min on 2 cores).
#
# Usage: tests/mpi/mpich-testsuite.sh            (from the top of a built nmad tree, or set top_builddir)
# Steps: (i) get the MPICH sources from Debian's archive (`apt-get source --download-only mpich`, adding a
#        deb-src entry if there is none), unless MPICH_SRC names an unpacked MPICH tree or its .orig.tar.xz;
#        (ii) configure test/mpi with nmad's mpicc / mpiexec; (iii) build the curated tests (two at a time) and
#        run them with the suite's own driver (runtests) with a time limit on every run; (iv) print one line per
#        test, per-directory counts and a total.
# Which tests run: every test of the directories below, minus those of tests/mpi/mpich-exclude.txt (one line
# each: `dir/program reason`, or `dir/ reason` for a whole directory).
# Exit status: 0 every run test passed, 1 a test outside the exclusion list failed, 77 skipped (no sources and
# no way to get them: not root, no network), 99 setup error (nmad not built, configure failed).
# Environment: MPICH_SRC (sources, see above), MPICH_TESTS_DIR (work directory, default
# ${TMPDIR:-/tmp}/nmad-mpich-tests/run-<checksum of the build tree's path>; emptied first), MPITEST_TIMEOUT (seconds per run, default 60; tests that
# ask for more in their testlist keep theirs), MPICH_TESTS_TOTAL_TIMEOUT (the whole run, default 2400 s),
# MPICH_TESTS_DIRS (directories to run, default below), MPICH_TESTS_CFLAGS (the programs' CFLAGS, default -O0), NMAD_DRIVER etc. (passed to the ranks as usual),
# MPICH_TESTS_PHASE: "build" (steps i-iii up to the built programs, then exit 0 and leave a stamp in the work
# directory) or "run" (the default: all steps, but i-iii are skipped when a stamp shows that the programs were built
# for this nmad build, the same exclusions and directories). make check runs the build phase first
# (tests/mpi/mpich-build.sh) beside the other tests, compiling being insensitive to load, and the run phase after
# the other MPI tests.
set -u
here=$(cd "$(dirname "$0")" && pwd -P)
src=$(cd "$here/../.." && pwd -P)
# shellcheck source=tests/mpi/debian-source.sh
. "$here/debian-source.sh"
b=$(nm_build_tree "$src")
# make check exports nmad's top_srcdir/top_builddir; MPICH's configure reads top_srcdir from the environment
# (maintainer mode) and would look for MPICH's maint/ there.
unset top_srcdir top_builddir
exclude_file="$here/mpich-exclude.txt"
dirs=${MPICH_TESTS_DIRS:-"attr coll comm datatype errhan group info init pt2pt topo"}
# One work directory per build tree: two builds checked at once (a clean-clone CI run next to a developer's tree)
# must not empty each other's; the downloaded sources are shared.
cache=${TMPDIR:-/tmp}/nmad-mpich-tests
work=${MPICH_TESTS_DIR:-$cache/run-$(printf '%s' "$b" | cksum | cut -d' ' -f1)}
per_test=${MPITEST_TIMEOUT:-60}
total=${MPICH_TESTS_TOTAL_TIMEOUT:-2400}

say() { echo "mpich-testsuite: $*"; }
skip() { say "SKIP: $*"; exit 77; }
die() { say "ERROR: $*"; exit 99; }

mpicc="$b/nmad/mpi/mpicc"
mpiexec="$b/nmad/mpi/mpiexec"
[ -x "$mpicc" ] && [ -x "$mpiexec" ] && [ -f "$b/libnmad_mpi.la" ] ||
  die "nmad is not built in $b (run ./configure && make first, or set top_builddir)"
[ -f "$exclude_file" ] || die "missing $exclude_file"
command -v perl >/dev/null || skip "perl is needed by the suite's runtests driver"

mkdir -p "$work" || die "cannot create $work"
work=$(cd "$work" && pwd -P)
phase=${MPICH_TESTS_PHASE:-run}
case $phase in build|run) ;; *) die "MPICH_TESTS_PHASE=$phase: expected build or run" ;; esac
# The stamp: which nmad build the programs were linked against (path and libnmad_mpi's time), the exclusion list
# they were curated with and the directories; the programs are reused only when all are unchanged.
stamp="$work/built.stamp"
build_id="$b $(stat -c %Y "$b/libnmad_mpi.la") $(cksum <"$exclude_file") $dirs ${MPICH_TESTS_CFLAGS:--O0}"
reuse=no
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$build_id" ]; then
  reuse=yes
fi
[ "$reuse" = yes ] || rm -f "$stamp"

if [ "$reuse" = no ]; then
  # ---------------------------------------------------------------- (i) the MPICH sources
  # The result: $work/mpich/test/mpi, a pristine copy (tar keeps the timestamps, so configure does not try to
  # re-run automake).
  tarball=
  if [ -n "${MPICH_SRC:-}" ]; then
    if [ -d "$MPICH_SRC/test/mpi" ]; then
      :
    elif [ -f "$MPICH_SRC" ]; then
      tarball=$MPICH_SRC
    else
      die "MPICH_SRC=$MPICH_SRC is neither an MPICH source tree nor a tarball"
    fi
  else
    dl="$cache/download"
    mkdir -p "$dl"
    tarball=$(debian_orig mpich "$dl") || skip "$tarball: set MPICH_SRC to an MPICH source tree or tarball"
  fi
  rm -rf "$work/mpich"
  mkdir -p "$work/mpich"
  if [ -n "$tarball" ]; then
    say "MPICH sources: $tarball"
    tar -xf "$tarball" -C "$work/mpich" --strip-components=1 --wildcards '*/test/mpi/*' ||
      die "cannot extract test/mpi from $tarball"
  else
    say "MPICH sources: $MPICH_SRC"
    cp -a "$MPICH_SRC/test/mpi" "$work/mpich/test/" 2>/dev/null ||
      { mkdir -p "$work/mpich/test" && cp -a "$MPICH_SRC/test/mpi" "$work/mpich/test/"; } ||
      die "cannot copy $MPICH_SRC/test/mpi"
  fi
fi
t="$work/mpich/test/mpi"
[ -x "$t/configure" ] && [ -f "$t/runtests.in" ] || die "$t does not look like MPICH's test/mpi"
version=$(sed -n 's/^m4_define(\[MPICH_VERSION_m4\],\[\(.*\)\])dnl.*/\1/p' "$t/version.m4" 2>/dev/null)
say "MPICH test suite version: ${version:-unknown}"

if [ "$reuse" = no ]; then
  # ---------------------------------------------------------------- (ii) configure with nmad's wrappers
  # Only what MPI-3.1's C bindings define (--enable-strictmpi), single-threaded (the suite's threads tests are not
  # built), no Fortran / C++ bindings, no spawn, one-sided, I/O or partitioned communication.
  # CFLAGS=-O0: ~400 conformance programs, compiled in CI beside the other tests; their speed does not matter.
  say "configuring (log: $t/configure.out)"
  (cd "$t" && ./configure MPICC="$mpicc" MPIEXEC="$mpiexec" CFLAGS="${MPICH_TESTS_CFLAGS:--O0}" \
    --disable-fortran --disable-cxx --disable-romio --disable-spawn --disable-rma --disable-part \
    --disable-ft-tests --enable-strictmpi --enable-threads=single) >"$t/configure.out" 2>&1 ||
    die "the suite's configure failed, see $t/configure.out"
  (cd "$t/util" && make -j2) >"$t/util.out" 2>&1 || die "building the suite's util library failed, see $t/util.out"
  (cd "$t/dtpools" && make -j2) >"$t/dtpools.out" 2>&1 || true # only tests listed in testlist.dtp need it
fi

# ---------------------------------------------------------------- (iii) curated lists, build, run
# Exclusions: "dir/prog" -> prog removed from dir's list; "dir/" -> dir not run.
excl_prog=$(grep -vE '^\s*(#|$)' "$exclude_file" | awk '{print $1}' | grep -v '/$')
excl_dir=$(grep -vE '^\s*(#|$)' "$exclude_file" | awk '{print $1}' | grep '/$' | sed 's:/$::')
run_dirs=
for d in $dirs; do
  if echo "$excl_dir" | grep -qx "$d"; then
    continue
  fi
  [ -f "$t/$d/testlist" ] || die "no $d/testlist in the suite"
  run_dirs="$run_dirs $d"
done
if [ "$reuse" = no ]; then
  # testlist.nmad next to every testlist: the same lines minus the excluded programs (a line names a program or a
  # subdirectory, then options).
  n_excluded=0
  : >"$work/excluded.txt"
  for d in $run_dirs; do
    while IFS= read -r list; do
      ldir=${list%/testlist}
      rel=${ldir#"$t"/}
      : >"$ldir/testlist.nmad"
      while IFS= read -r line; do
        prog=$(echo "$line" | awk '{print $1}')
        case $prog in
          ''|'#'*) echo "$line" >>"$ldir/testlist.nmad"; continue ;;
        esac
        if echo "$excl_prog" | grep -qxF "$rel/$prog"; then
          echo "$rel/$prog $(echo "$line" | awk '{print $2}')" >>"$work/excluded.txt"
          n_excluded=$((n_excluded + 1))
          continue
        fi
        echo "$line" >>"$ldir/testlist.nmad"
      done <"$list"
    done < <(find "$t/$d" -name testlist)
  done

  # Build every listed program first, two at a time (runtests would build them one by one); failures show up
  # when runtests tries again and are reported as that test's failure.
  say "building the tests (log: $work/build.out)"
  : >"$work/build.out"
  for d in $run_dirs; do
    while IFS= read -r list; do
      ldir=${list%/testlist.nmad}
      progs=$(grep -vE '^\s*(#|$)' "$list" | awk '{print $1}' | sort -u | while read -r p; do
        [ -d "$ldir/$p" ] || echo "$p"; done)
      [ -n "$progs" ] || continue
      # shellcheck disable=SC2086 # one word per program
      (cd "$ldir" && make -k -j2 $progs) >>"$work/build.out" 2>&1
    done < <(find "$t/$d" -name testlist.nmad)
  done
  echo "$build_id" >"$stamp"
else
  say "reusing the programs built for this nmad build ($stamp)"
fi
if [ "$phase" = build ]; then
  say "built; the run phase reuses these programs"
  exit 0
fi
say "running:$run_dirs (per run: ${per_test} s, all: ${total} s)"
tap="$work/results.tap"
rm -f "$tap"
start=$(date +%s)
# runtests: -timelimitarg makes nmad's mpiexec kill a run that exceeds its limit; the outer timeout bounds all.
# shellcheck disable=SC2086
(cd "$t" && MPITEST_TIMEOUT=$per_test timeout --kill-after=30 "$total" ./runtests -srcdir=. -tests=testlist.nmad \
  -testdirs="$(echo $run_dirs | tr ' ' ',')" -timelimitarg="--timeout %d" -mpiexec="$mpiexec" \
  -tapfile="$tap") >"$work/runtests.out" 2>&1
rt=$?
elapsed=$(($(date +%s) - start))
[ -f "$tap" ] || die "runtests wrote no results (status $rt), see $work/runtests.out"

# ---------------------------------------------------------------- (iv) report
# TAP lines: "ok N - ./dir/prog np # time=..." / "not ok N - ..." / "... # SKIP reason".
echo
echo "per test (details of failures: $work/runtests.out):"
awk '/^(not )?ok/ {
       res = ($1 == "not") ? "FAIL" : "PASS"
       if ($0 ~ /# *SKIP/) res = "SKIP"
       sub(/^(not )?ok *[0-9]* *- *\.\//, "")
       sub(/ *# *time=.*$/, "")
       printf "%-4s %s\n", res, $0
     }' "$tap"
while read -r name np; do
  printf 'EXCL %s %s\n' "$name" "$np"
done <"$work/excluded.txt"
echo
printf '%-10s %7s %7s %7s %9s\n' directory passed failed skipped excluded
awk -v excl="$work/excluded.txt" '
  BEGIN { while ((getline l < excl) > 0) { split(l, f, "/"); x[f[1]]++; dirs[f[1]] = 1 } }
  /^(not )?ok/ {
    line = $0
    sub(/^(not )?ok *[0-9]* *- *\.\//, "", line)
    split(line, f, "/"); d = f[1]; dirs[d] = 1
    if ($0 ~ /# *SKIP/) s[d]++
    else if ($1 == "not") n[d]++
    else p[d]++
  }
  END {
    for (d in dirs) {
      printf "%-10s %7d %7d %7d %9d\n", d, p[d], n[d], s[d], x[d]
      tp += p[d]; tn += n[d]; ts += s[d]; tx += x[d]
    }
    printf "%-10s %7d %7d %7d %9d\n", "total", tp, tn, ts, tx
  }' "$tap" | sort -k1,1 | awk '$1 != "total"; $1 == "total" { t = $0 } END { print t }'
fails=$(grep -c '^not ok' "$tap")
echo
say "${elapsed} s; excluded tests and reasons: $exclude_file"
if [ "$rt" -eq 124 ] || [ "$rt" -eq 137 ]; then
  say "FAIL: the whole run exceeded ${total} s (tests after the last reported one did not run)"
  exit 1
fi
if [ "$fails" -gt 0 ]; then
  say "FAIL: $fails run(s) failed"
  exit 1
fi
say "PASS"
exit 0
