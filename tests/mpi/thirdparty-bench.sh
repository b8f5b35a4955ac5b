#!/usr/bin/env bash
# Two third-party MPI benchmarks from Debian's archive, built UNCHANGED with nmad's mpicc and run with nmad's
# mpirun, with their own correctness checks: NetPIPE's MPI module (source package netpipe, program NPmpi) and the
# HPC Challenge suite (source package hpcc: HPL, PTRANS, b_eff latency/bandwidth, RandomAccess, FFT, DGEMM,
# STREAM). Not part of `make check` (~3-4 min on 2 cores); run it by hand.
#
# Usage: tests/mpi/thirdparty-bench.sh          (from the top of a built nmad tree, or set top_builddir)
# Steps: (i) get the upstream sources, i.e. the .orig.tar.* of the Debian source packages (`apt-get source
#        --download-only netpipe hpcc`, adding a deb-src entry if there is none), unless NETPIPE_SRC / HPCC_SRC
#        name a tarball or an unpacked tree; Debian's own patches are NOT applied (the programs are the upstream
#        releases, unchanged); (ii) build NPmpi with `make mpi MPICC=<nmad mpicc>` (NetPIPE's makefile) and hpcc
#        with an HPL arch file hpl/Make.nmad written here (CC = LINKER = nmad's mpicc, BLAS through CBLAS);
#        (iii) run, each run under mpirun --timeout:
#          NPmpi, 2 ranks, on shm and on tcp (FI_TCP_IFACE=lo): a performance sweep up to NETPIPE_MAX bytes
#            (-p 0), then its integrity check (-i: every message's contents are verified), then the integrity
#            check with preposted receives from MPI_ANY_SOURCE, both directions at once (-i -a -z -2);
#          hpcc, 2 ranks (grid 1x2) and 4 ranks (grid 2x2), shm, HPL N=HPCC_N with the six HPL broadcast
#            algorithms x lookahead depths 0 and 1 (12 HPL runs), the rest of the suite sized by hpcc from N;
#        (iv) check the programs' own verdicts (NetPIPE: "Integrity check passed" for every size, no "failed",
#        exit status 0, the sweep reaches its last size; hpcc: Success=1 in its summary, every HPL and PTRANS
#        residual check passed, 0 RandomAccess errors, STREAM "Solution Validates", every section ended) and
#        print one line per run and a total.
# Exit status: 0 every run passed, 1 a build or run failed, 77 skipped (no sources and no way to get them, or no
# BLAS for hpcc and no NetPIPE), 99 setup error (nmad not built, NETPIPE_SRC / HPCC_SRC missing).
# Environment: NETPIPE_SRC, HPCC_SRC (sources, see above), THIRDPARTY_DIR (work directory, default
# ${TMPDIR:-/tmp}/nmad-thirdparty; build and run directories are recreated, downloads kept), NETPIPE_MAX (default
# 1048576), HPCC_N (default 1000), THIRDPARTY_TIMEOUT (seconds per run, default 300), HPCC_BLAS (link flags of a
# CBLAS, default: the first of -lopenblas, -lblas, "-lcblas -lblas" that links), THIRDPARTY_SKIP_TCP=1.
set -u
here=$(cd "$(dirname "$0")" && pwd -P)
src=$(cd "$here/../.." && pwd -P)
# shellcheck source=tests/mpi/debian-source.sh
. "$here/debian-source.sh"
b=$(nm_build_tree "$src")
work=${THIRDPARTY_DIR:-${TMPDIR:-/tmp}/nmad-thirdparty}
np_max=${NETPIPE_MAX:-1048576}
hpcc_n=${HPCC_N:-1000}
tmo=${THIRDPARTY_TIMEOUT:-300}

say() { echo "thirdparty-bench: $*"; }
die() { say "ERROR: $*"; exit 99; }

mpicc="$b/nmad/mpi/mpicc"
mpirun="$b/nmad/mpi/mpirun"
[ -x "$mpicc" ] && [ -x "$mpirun" ] && [ -f "$b/libnmad_mpi.la" ] ||
  die "nmad is not built in $b (run ./configure && make first, or set top_builddir)"
mkdir -p "$work/download" || die "cannot create $work"
work=$(cd "$work" && pwd -P)
dl="$work/download"
start=$(date +%s)

# Results: one line per step, "PASS|FAIL|SKIP name detail".
results="$work/results.txt"
: >"$results"
result() { printf '%-4s %-28s %s\n' "$1" "$2" "$3" | tee -a "$results"; }

# ---------------------------------------------------------------- (i) sources
# fetch PKG VAR: prints the path of an upstream tarball or tree on stdout; returns 1 (reason on stdout) if none.
fetch() {
  local pkg=$1 override=$2
  if [ -n "$override" ]; then
    [ -e "$override" ] || { echo "$override does not exist"; return 1; }
    (cd "$(dirname "$override")" && echo "$(pwd -P)/$(basename "$override")")
    return 0
  fi
  debian_orig "$pkg" "$dl"
}
# unpack SRC DEST: DEST becomes a pristine copy of the tree (tarball with one top directory, or a directory).
unpack() {
  rm -rf "$2" && mkdir -p "$2" || return 1
  if [ -d "$1" ]; then cp -a "$1/." "$2/"; else tar -xf "$1" -C "$2" --strip-components=1; fi
}

for v in NETPIPE_SRC HPCC_SRC; do
  [ -z "${!v:-}" ] || [ -e "${!v}" ] || die "$v=${!v} does not exist"
done
np_src=$(fetch netpipe "${NETPIPE_SRC:-}"); np_ok=$?
hp_src=$(fetch hpcc "${HPCC_SRC:-}"); hp_ok=$?
[ $np_ok = 0 ] || result SKIP netpipe "no sources: $np_src"
[ $hp_ok = 0 ] || result SKIP hpcc "no sources: $hp_src"
[ $np_ok = 0 ] || [ $hp_ok = 0 ] || { say "SKIP: no sources for either program"; exit 77; }

# ---------------------------------------------------------------- NetPIPE
# run_np NAME DRIVER OPTIONS...: one NPmpi run; checks exit status and NetPIPE's own output.
run_np() {
  local name=$1 drv=$2 log out rc n_pass n_fail last
  shift 2
  log="$npdir/$name.log"
  out="$npdir/$name.out"
  # shellcheck disable=SC2086
  (cd "$npdir" && "$mpirun" -n 2 --bind-to core --timeout "$tmo" -x NMAD_DRIVER="$drv" -x FI_TCP_IFACE=lo \
    ./NPmpi "$@" -u "$np_max" -o "$out") >"$log" 2>&1
  rc=$?
  last=$(grep -E '^ *[0-9]+: +[0-9]+ bytes' "$log" | tail -n 1 | sed 's/^ *//')
  if [ $rc != 0 ]; then
    result FAIL "$name" "exit status $rc, see $log: $(tail -n 1 "$log")"
    return
  fi
  case " $* " in
    *" -i "*)
      n_pass=$(grep -c 'Integrity check passed' "$log")
      n_fail=$(grep -c 'Integrity check failed' "$log")
      if [ "$n_fail" != 0 ] || [ "$n_pass" -lt 10 ] || [ "$n_pass" != "$(grep -cE '^ *[0-9]+: +[0-9]+ bytes' "$log")" ]; then
        result FAIL "$name" "$n_pass sizes passed the integrity check, $n_fail failed, see $log"
      else
        result PASS "$name" "$n_pass sizes, integrity check passed for each (last: $last)"
      fi ;;
    *)
      # The sweep goes up to np_max (+ perturbation): the last line must reach it.
      if [ -n "$last" ] && [ "$(echo "$last" | awk '{print $2}')" -ge "$np_max" ]; then
        result PASS "$name" "sweep complete (last: $last)"
      else
        result FAIL "$name" "sweep incomplete, see $log (last: $last)"
      fi ;;
  esac
}
if [ $np_ok = 0 ]; then
  npdir="$work/netpipe"
  say "NetPIPE sources: $np_src"
  if ! unpack "$np_src" "$npdir" || [ ! -f "$npdir/src/mpi.c" ]; then
    result FAIL netpipe-build "cannot unpack $np_src"
  elif ! (cd "$npdir" && make mpi MPICC="$mpicc") >"$npdir/build.log" 2>&1 || [ ! -x "$npdir/NPmpi" ]; then
    result FAIL netpipe-build "make mpi MPICC=$mpicc failed, see $npdir/build.log"
  else
    result PASS netpipe-build "make mpi MPICC=<nmad mpicc>"
    drivers=shm
    [ "${THIRDPARTY_SKIP_TCP:-0}" = 1 ] || drivers="shm tcp"
    for drv in $drivers; do
      run_np "NPmpi-$drv" "$drv" -p 0
      run_np "NPmpi-$drv-integrity" "$drv" -i
      # -2 without -a is not used: both ranks would MPI_Send before receiving, unsafe in MPI (NetPIPE says so).
      run_np "NPmpi-$drv-integrity-a-z-2" "$drv" -i -a -z -2
    done
  fi
fi

# ---------------------------------------------------------------- HPC Challenge
# hpccinf P Q: hpcc's sample input (_hpccinf.txt) with one problem size HPCC_N, a PxQ grid, the six HPL
# broadcasts and lookahead depths 0 and 1.
hpccinf() {
  awk -v P="$1" -v Q="$2" -v N="$hpcc_n" '
    /# of problems sizes/   { print "1            # of problems sizes (N)"; next }
    / Ns *$/                { print N "         Ns"; next }
    /# of process grids/    { print "1            # of process grids (P x Q)"; next }
    / Ps *$/                { print P "            Ps"; next }
    / Qs *$/                { print Q "            Qs"; next }
    /# of broadcast/        { print "6            # of broadcast"; next }
    / BCASTs/               { print "0 1 2 3 4 5  BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)"; next }
    /# of lookahead depth/  { print "2            # of lookahead depth"; next }
    / DEPTHs/               { print "0 1          DEPTHs (>=0)"; next }
    { print }' "$hpdir/_hpccinf.txt"
}
# check_hpcc FILE: prints the failed checks (nothing when all passed).
check_hpcc() {
  local f=$1 s
  grep -q '^End of HPC Challenge tests' "$f" || echo "no 'End of HPC Challenge tests'"
  grep -qx 'Success=1' "$f" || echo "summary: $(grep '^Success=' "$f" || echo 'no Success= line')"
  for s in $(sed -n 's/^Begin of \(.*\) section\.$/\1/p' "$f"); do
    grep -q "^End of $s section" "$f" || echo "section $s did not end"
  done
  # HPL: 12 runs (6 broadcasts x 2 depths), each with its residual check.
  grep -q '^ *12 tests completed and passed residual checks,' "$f" || echo "HPL: not 12 passed residual checks"
  grep -q '^ *0 tests completed and failed residual checks,' "$f" || echo "HPL: failed residual checks"
  grep -q 'FAILED' "$f" && echo "FAILED lines: $(grep -c FAILED "$f")"
  grep -q '^ *0 tests completed and failed residual checks\.' "$f" || echo "PTRANS: failed residual checks"
  grep -qx 'PTRANS_residual=0' "$f" || echo "PTRANS: $(grep '^PTRANS_residual=' "$f")"
  for s in MPIRandomAccess_Errors MPIRandomAccess_LCG_Errors; do
    grep -qx "$s=0" "$f" || grep "^$s=" "$f" || echo "no $s"
  done
  grep -E '^Found [0-9]+ errors' "$f" | grep -v '^Found 0 errors' | sed 's/^/RandomAccess: /'
  grep -E '^Node\(s\) with error' "$f" | grep -vx 'Node(s) with error 0' | sed 's/^/node errors: /'
  grep -q 'Solution Validates' "$f" || echo "STREAM: no 'Solution Validates'"
  grep -q '^MPIFFT_maxErr=' "$f" || echo "no MPIFFT_maxErr"
}
if [ $hp_ok = 0 ]; then
  hpdir="$work/hpcc"
  say "hpcc sources: $hp_src"
  blas=
  if [ -n "${HPCC_BLAS:-}" ]; then
    blas=$HPCC_BLAS
  else
    printf '#include <cblas.h>\nint main(void){double a=1,b=1,c=0;cblas_dgemm(CblasRowMajor,CblasNoTrans,CblasNoTrans,1,1,1,1.0,&a,1,&b,1,0.0,&c,1);return c!=1;}\n' \
      >"$work/cblas-probe.c"
    for l in -lopenblas -lblas "-lcblas -lblas"; do
      # shellcheck disable=SC2086
      if "$mpicc" "$work/cblas-probe.c" -o "$work/cblas-probe" $l >/dev/null 2>&1; then blas=$l; break; fi
    done
  fi
  if [ -z "$blas" ]; then
    result SKIP hpcc "no CBLAS found (apt-get install libopenblas-dev, or set HPCC_BLAS)"
    hp_ok=1
  elif ! unpack "$hp_src" "$hpdir" || [ ! -f "$hpdir/_hpccinf.txt" ]; then
    result FAIL hpcc-build "cannot unpack $hp_src"
  else
    # The arch file (build configuration, not a source change): nmad's mpicc compiles and links.
    cat >"$hpdir/hpl/Make.nmad" <<EOF
# HPL/hpcc arch file for nmad's MPI shim, written by tests/mpi/thirdparty-bench.sh.
SHELL        = /bin/sh
CD           = cd
CP           = cp
LN_S         = ln -s
MKDIR        = mkdir -p
RM           = /bin/rm -f
TOUCH        = touch
ARCH         = \$(arch)
TOPdir       = ../../..
INCdir       = \$(TOPdir)/include
BINdir       = \$(TOPdir)/bin/\$(ARCH)
LIBdir       = \$(TOPdir)/lib/\$(ARCH)
HPLlib       = \$(LIBdir)/libhpl.a
MPdir        =
MPinc        =
MPlib        =
LAdir        =
LAinc        =
LAlib        = $blas
F2CDEFS      =
HPL_INCLUDES = -I\$(INCdir) -I\$(INCdir)/\$(ARCH) \$(LAinc) \$(MPinc)
HPL_LIBS     = \$(HPLlib) \$(LAlib) \$(MPlib) -lm
HPL_OPTS     = -DHPL_CALL_CBLAS
HPL_DEFS     = \$(F2CDEFS) \$(HPL_OPTS) \$(HPL_INCLUDES)
CC           = $mpicc
CCNOOPT      = \$(HPL_DEFS)
CCFLAGS      = \$(HPL_DEFS) -O2 -g
LINKER       = $mpicc
LINKFLAGS    = \$(CCFLAGS)
ARCHIVER     = ar
ARFLAGS      = r
RANLIB       = echo
EOF
    if ! (cd "$hpdir" && make -j2 arch=nmad) >"$hpdir/build.log" 2>&1 || [ ! -x "$hpdir/hpcc" ]; then
      result FAIL hpcc-build "make arch=nmad failed, see $hpdir/build.log"
    else
      result PASS hpcc-build "make arch=nmad (CC = LINKER = nmad mpicc, BLAS: $blas)"
      for grid in "2 1 2" "4 2 2"; do
        set -- $grid
        np=$1
        rdir="$hpdir/run-np$np"
        mkdir -p "$rdir"
        hpccinf "$2" "$3" >"$rdir/hpccinf.txt"
        bind=core
        [ "$np" -gt "$(nproc)" ] && bind=none
        (cd "$rdir" && "$mpirun" -n "$np" --bind-to "$bind" --timeout "$tmo" -x NMAD_DRIVER=shm \
          -x OPENBLAS_NUM_THREADS=1 -x OMP_NUM_THREADS=1 ../hpcc) >"$rdir/run.log" 2>&1
        rc=$?
        f="$rdir/hpccoutf.txt"
        if [ $rc != 0 ]; then
          result FAIL "hpcc-np$np" "exit status $rc, see $rdir/run.log and $f"
        elif [ ! -f "$f" ]; then
          result FAIL "hpcc-np$np" "no $f"
        else
          bad=$(check_hpcc "$f")
          if [ -n "$bad" ]; then
            result FAIL "hpcc-np$np" "$(echo "$bad" | paste -sd ';' -), see $f"
          else
            result PASS "hpcc-np$np" "grid ${2}x$3, HPL N=$hpcc_n: Success=1, HPL 12/12 and PTRANS 5/5 residual checks passed, RandomAccess 0 errors, $(grep '^MPIFFT_maxErr=' "$f")"
          fi
          # The verdict lines, for the log.
          grep -E 'tests completed and|^Found [0-9]+ errors|Solution Validates|^Success=|_Errors=|_ErrorsFraction=|^MPIFFT_maxErr=|^PTRANS_residual=' \
            "$f" | sed 's/^ */    /'
        fi
      done
    fi
  fi
fi

# ---------------------------------------------------------------- summary
elapsed=$(($(date +%s) - start))
echo
say "summary (work directory: $work; ${elapsed} s)"
cat "$results"
n_fail=$(grep -c '^FAIL' "$results")
n_pass=$(grep -c '^PASS' "$results")
if [ "$n_fail" -gt 0 ]; then
  say "FAIL: $n_fail of $((n_fail + n_pass)) step(s) failed"
  exit 1
fi
if [ "$n_pass" = 0 ]; then
  say "SKIP: nothing ran"
  exit 77
fi
say "PASS ($n_pass steps$(grep -q '^SKIP' "$results" && echo ", some skipped, see above"))"
exit 0
