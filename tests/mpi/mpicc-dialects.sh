#!/bin/sh
# shellcheck disable=SC2086,SC2046,SC2015 # flag lists are split into words on purpose; has A && has B || fail is meant
# mpicc / mpicxx speak Open MPI's and MPICH's wrapper dialects (issue 16, deliverable 1): for each option, the
# output has the shape that tool's users parse (Open MPI: flags only, or bare directories / library names;
# MPICH: the compiler first), and the flags work: a tiny MPI program is compiled and linked by the plain
# compiler with only what each option printed, then run on 2 ranks. Also StarPU's configure idiom
# (--showme:link, else `-link_info | awk '{$1=""; print}'`). Exit status: 0 pass, 1 fail, 77 skip (no C++ compiler:
# C part only).
b=${top_builddir:-.}
t=${NMAD_TEST_TIMEOUT:-120}
mpicc=$b/nmad/mpi/mpicc
mpicxx=$b/nmad/mpi/mpicxx
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "mpicc-dialects: FAIL: $*"; fails=$((fails + 1)); }
# first WORD...: the first word;  rest WORD...: the others
first() { echo "$1"; }
rest() { shift; echo "$*"; }
# has WORDS PATTERN: some word of WORDS matches the shell pattern
has() {
  for w in $1; do
    # shellcheck disable=SC2254 # the pattern is meant to match
    case $w in $2) return 0 ;; esac
  done
  return 1
}
# run PROG: start it on 2 ranks (stopped after $t s); it prints "ok" on rank 0 when the allreduce is right
run() {
  out=$("$b/nmad/mpi/mpirun" -np 2 --timeout "$t" -x NMAD_DRIVER=shm "$1" 2>&1)
  case $out in *"ok 2"*) return 0 ;; esac
  echo "$out" | tail -5
  return 1
}

cat >"$tmp/t.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
  int rank, size, one = 1, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && sum == size)
    printf("ok %d\n", sum);
  MPI_Finalize();
  return sum == size ? 0 : 1;
}
EOF

cc=$("$mpicc" --showme:command)
command -v "$(first $cc)" >/dev/null 2>&1 || { echo "mpicc-dialects: FAIL: --showme:command '$cc' is no compiler"; exit 1; }

# ---- Open MPI's dialect: no compiler in the flag outputs, -I/-L/-l stripped from the lists
c=$("$mpicc" --showme:compile) || fail "--showme:compile exited non-zero"
l=$("$mpicc" --showme:link) || fail "--showme:link exited non-zero"
[ "$(first $c)" != "$(first $cc)" ] || fail "--showme:compile starts with the compiler: $c"
[ "$(first $l)" != "$(first $cc)" ] || fail "--showme:link starts with the compiler: $l"
has "$c" '-I*' || fail "--showme:compile has no -I: $c"
has "$c" '-l*' && fail "--showme:compile has link flags: $c"
has "$l" '-lnmad_mpi' && has "$l" '-L*' || fail "--showme:link lacks -L or -lnmad_mpi: $l"
has "$l" '-I*' && fail "--showme:link has compile flags: $l"
[ "$("$mpicc" -showme:compile)" = "$c" ] || fail "-showme:compile differs from --showme:compile"
[ "$("$mpicc" -showme:link)" = "$l" ] || fail "-showme:link differs from --showme:link"
s=$("$mpicc" --showme)
[ "$(first $s)" = "$(first $cc)" ] || fail "--showme does not start with the compiler: $s"
[ "$("$mpicc" -showme)" = "$s" ] || fail "-showme differs from --showme"
inc=$("$mpicc" --showme:incdirs)
libdirs=$("$mpicc" --showme:libdirs)
libs=$("$mpicc" --showme:libs)
for w in $inc $libdirs $libs; do
  case $w in -*) fail "--showme:incdirs/libdirs/libs print a flag: $w" ;; esac
done
found=
for d in $inc; do [ -f "$d/mpi.h" ] && found=yes; done
[ -n "$found" ] || fail "no directory of --showme:incdirs ($inc) holds mpi.h"
found=
for d in $libdirs; do ls "$d"/libnmad_mpi.* >/dev/null 2>&1 && found=yes; done
[ -n "$found" ] || fail "no directory of --showme:libdirs ($libdirs) holds libnmad_mpi"
[ "$libs" = "nmad_mpi nmad" ] || fail "--showme:libs: '$libs', expected 'nmad_mpi nmad'"
[ "$("$mpicc" -showme:libs)" = "$libs" ] || fail "-showme:libs differs from --showme:libs"
v=$("$mpicc" --showme:version)
echo "$v" | grep -Eq '^mpicc: nmad [0-9]+\.[0-9]+(\.[0-9]+)? \(Language: C\)$' || fail "--showme:version: '$v'"
"$mpicc" --showme:nonsense >/dev/null 2>&1 && fail "--showme:nonsense accepted"
# the flags work with the plain compiler: compile, then link, as a Makefile using them would
if $cc $c -c "$tmp/t.c" -o "$tmp/t.o" && $cc "$tmp/t.o" $l -o "$tmp/t_ompi"; then
  run "$tmp/t_ompi" || fail "the program built with --showme:compile/link does not run"
else
  fail "cc with --showme:compile / --showme:link could not build the program"
fi
# the bare lists, turned back into flags, are enough too
incf=
for d in $inc; do incf="$incf -I$d"; done
fl=
for d in $libdirs; do fl="$fl -L$d -Wl,-rpath,$d"; done
for x in $libs; do fl="$fl -l$x"; done
if $cc $incf "$tmp/t.c" $fl -o "$tmp/t_lists"; then
  run "$tmp/t_lists" || fail "the program built from --showme:incdirs/libdirs/libs does not run"
else
  fail "cc with the flags rebuilt from --showme:incdirs/libdirs/libs could not build the program"
fi

# ---- MPICH's dialect: the compiler first, then the flags
for o in -show -compile_info -compile-info -link_info -link-info; do
  out=$("$mpicc" $o) || fail "$o exited non-zero"
  [ "$(first $out)" = "$(first $cc)" ] || fail "$o does not start with the compiler: $out"
done
ci=$("$mpicc" -compile_info)
li=$("$mpicc" -link_info)
[ "$("$mpicc" -compile-info)" = "$ci" ] || fail "-compile-info differs from -compile_info"
[ "$("$mpicc" -link-info)" = "$li" ] || fail "-link-info differs from -link_info"
{
  has "$(rest $ci)" '-I*' || fail "-compile_info has no -I: $ci"
  has "$(rest $ci)" '-lnmad_mpi' && fail "-compile_info links: $ci"
  has "$(rest $li)" '-lnmad_mpi' && has "$(rest $li)" '-L*' || fail "-link_info lacks -L or -lnmad_mpi: $li"
  [ "$("$mpicc" -show-compile-info)" = "$(rest $ci)" ] || fail "-show-compile-info is not -compile_info's flags"
  has "$("$mpicc" -show-link-info)" '-lnmad_mpi' || fail "-show-link-info lacks -lnmad_mpi"
  if $(first $ci) $(rest $ci) -c "$tmp/t.c" -o "$tmp/t2.o" && $(first $li) "$tmp/t2.o" $(rest $li) -o "$tmp/t_mpich"; then
    run "$tmp/t_mpich" || fail "the program built with -compile_info/-link_info does not run"
  else
    fail "the commands of -compile_info / -link_info minus their first word could not build the program"
  fi
}

# ---- StarPU 1.4's configure: MPICC_LDFLAGS from --showme:link, else -link_info minus its first word; libtool
# then links with the plain compiler and these flags
sl=$("$mpicc" --showme:link 2>/dev/null)
[ -n "$sl" ] || sl=$("$mpicc" -link_info | awk '{$1=""; print}')
{ $cc $c -c "$tmp/t.c" -o "$tmp/t3.o" && $cc "$tmp/t3.o" $sl -o "$tmp/t_starpu" && run "$tmp/t_starpu"; } ||
  fail "StarPU's MPICC_LDFLAGS idiom does not link a working program"
sl=$("$mpicc" -link_info | awk '{$1=""; print}')
{ $cc "$tmp/t3.o" $sl -o "$tmp/t_starpu2" && run "$tmp/t_starpu2"; } ||
  fail "StarPU's MPICH branch (-link_info | awk '{\$1=\"\"; print}') does not link a working program"

# ---- mpicxx: the same options, the C++ compiler and language
if ! command -v "${NMAD_MPICXX_CXX:-c++}" >/dev/null 2>&1; then
  echo "mpicc-dialects: no C++ compiler, mpicxx not tested ($fails failure(s) in the C part)"
  [ "$fails" -eq 0 ] || exit 1
  exit 77
fi
cxx=$("$mpicxx" --showme:command)
[ "$cxx" = "${NMAD_MPICXX_CXX:-c++}" ] || fail "mpicxx --showme:command: '$cxx'"
"$mpicxx" --showme:version | grep -q '^mpicxx: nmad .*(Language: C++)$' || fail "mpicxx --showme:version"
[ "$(first $("$mpicxx" -link_info))" = "$(first $cxx)" ] || fail "mpicxx -link_info does not start with the C++ compiler"
cat >"$tmp/t.cc" <<'EOF'
#include <mpi.h>
#include <cstdio>
int main(int argc, char **argv)
{
  int size = 0, sum = 0, one = 1;
  MPI_Init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0 && sum == size)
    std::printf("ok %d\n", sum);
  MPI_Finalize();
  return sum == size ? 0 : 1;
}
EOF
if $cxx $("$mpicxx" --showme:compile) -c "$tmp/t.cc" -o "$tmp/tcc.o" && $cxx "$tmp/tcc.o" $("$mpicxx" --showme:link) -o "$tmp/t_cxx"; then
  run "$tmp/t_cxx" || fail "the C++ program built with mpicxx --showme:compile/link does not run"
else
  fail "c++ with mpicxx --showme:compile / --showme:link could not build the C++ program"
fi
ci=$("$mpicxx" -compile_info)
li=$("$mpicxx" -link_info)
if $(first $ci) $(rest $ci) -c "$tmp/t.cc" -o "$tmp/tcc2.o" && $(first $li) "$tmp/tcc2.o" $(rest $li) -o "$tmp/t_cxx2"; then
  run "$tmp/t_cxx2" || fail "the C++ program built with mpicxx -compile_info/-link_info does not run"
else
  fail "mpicxx -compile_info / -link_info could not build the C++ program"
fi

[ "$fails" -eq 0 ] || { echo "mpicc-dialects: $fails failure(s)"; exit 1; }
echo "mpicc-dialects: pass"
