#!/bin/sh
# Build the libFuzzer targets (doc/reliability.md) with Debian's clang: libnmad's sources, the fake driver and
# each target, with -fsanitize=fuzzer,address,undefined. Also builds gen_corpus and writes the seed corpus when
# tests/fuzz/corpus is missing. Run from the top of the source tree after ./configure (for config.h).
# The library's sources are compiled once (coverage-instrumented, -fsanitize=fuzzer-no-link) into objects that
# every target links: one compile per source instead of one per source and target.
# Usage: tests/fuzz/build.sh [OUTDIR]   (default: tests/fuzz/bin)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/tests/fuzz/bin}
mkdir -p "$out/obj"
CC=${CLANG:-clang}
cflags="-g -O1 -std=gnu11 -fno-omit-frame-pointer -DHAVE_CONFIG_H -I$top -I$top/nmad/include -I$top/nmad/core $(pkg-config --cflags libfabric hwloc)"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
libs="$(pkg-config --libs libfabric hwloc) -lm -lpthread"
# The library's sources: its SOURCES block and every unconditional `libnmad_la_SOURCES +=` line (the pmix one,
# inside `if HAVE_PMIX`, is added below when configured).
srcs=$(awk '/^if /{d++} /^endif/{d--} d==0 && /^libnmad_la_SOURCES/{p=1} p{print} p && !/\\$/{p=0}' "$top/Makefile.am" |
  tr ' \\\t' '\n\n\n' | grep '\.c$')
if grep -q '^#define HAVE_PMIX 1' "$top/config.h"; then
  srcs="$srcs nmad/launcher/bootstrap_pmix.c"
  cflags="$cflags $(pkg-config --cflags pmix)"
  libs="$libs $(pkg-config --libs pmix)"
fi
cd "$top"
obj() { echo "$out/obj/$(echo "$1" | tr / _ | sed 's/\.c$/.o/')"; }
objs=$(for s in $srcs tests/fake_driver.c; do obj "$s"; done)
for s in $srcs tests/fake_driver.c; do
  echo "$CC $cflags $san -fsanitize=fuzzer-no-link -c -o $(obj "$s") $s"
done | xargs -P "$(nproc)" -I{} sh -c '{}'
for o in $objs; do [ -f "$o" ] || { echo "fuzz build: $o missing"; exit 1; }; done
for t in wire incoming run_proto; do
  $CC $cflags $san -fsanitize=fuzzer -o "$out/fuzz_$t" "tests/fuzz/fuzz_$t.c" $objs $libs
done
$CC $cflags $san -o "$out/gen_corpus" tests/fuzz/gen_corpus.c $objs $libs
echo "built: $(ls "$out" | grep -v '^obj$' | tr '\n' ' ')"
