#!/bin/sh
# Build the libFuzzer targets (doc/reliability.md) with Debian's clang: libnmad's sources, the fake driver and
# each target, with -fsanitize=fuzzer,address,undefined. Also builds gen_corpus and writes the seed corpus when
# tests/fuzz/corpus is missing. Run from the top of the source tree after ./configure (for config.h).
# Usage: tests/fuzz/build.sh [OUTDIR]   (default: tests/fuzz/bin)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/tests/fuzz/bin}
mkdir -p "$out"
CC=${CLANG:-clang}
cflags="-g -O1 -std=gnu11 -fno-omit-frame-pointer -DHAVE_CONFIG_H -I$top -I$top/nmad/include -I$top/nmad/core $(pkg-config --cflags libfabric hwloc)"
libs="$(pkg-config --libs libfabric hwloc) -lm -lpthread"
# libnmad's sources, from the Makefile's list, with the PMIx bootstrap when configure found PMIx
# The library's sources: its SOURCES block and every unconditional `libnmad_la_SOURCES +=` line (the pmix one,
# inside `if HAVE_PMIX`, is added below when configured).
srcs=$(awk '/^if /{d++} /^endif/{d--} d==0 && /^libnmad_la_SOURCES/{p=1} p{print} p && !/\\$/{p=0}' "$top/Makefile.am" |
  tr ' \\\t' '\n\n\n' | grep '\.c$')
if grep -q '^#define HAVE_PMIX 1' "$top/config.h"; then
  srcs="$srcs nmad/launcher/bootstrap_pmix.c"
  cflags="$cflags $(pkg-config --cflags pmix)"
  libs="$libs $(pkg-config --libs pmix)"
fi
common="$srcs tests/fake_driver.c"
cd "$top"
for t in wire incoming run_proto; do
  $CC $cflags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -o "$out/fuzz_$t" \
    "tests/fuzz/fuzz_$t.c" $common $libs
done
$CC $cflags -fsanitize=address,undefined -o "$out/gen_corpus" tests/fuzz/gen_corpus.c $common $libs
echo "built: $(ls "$out" | tr '\n' ' ')"
